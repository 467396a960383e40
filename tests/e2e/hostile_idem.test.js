/* hostile_idem.test.js - a write key cannot fill Redis with idempotency
 * records (issue 23).
 *
 * The hostile-clients review found about 1 KB of Redis per unique `req`,
 * kept for idempotency_window, two strings per queued write, with no bound
 * per key: 152,503 queued writes in 8 s added 151 MB, held after the queue
 * drained. Now a write makes one small record (lua/write.lua, "Idempotency
 * records"), shared by a queued write's enqueue and its application, and a
 * writer (API key by name, token by sub) holding [limits]
 * idempotency_max_per_key records is answered rate_limited, with nothing
 * written, while other writers go on. Counted through Redis (KEYS, MEMORY
 * USAGE), never by timing. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const CAP = 40;
const KEY_A = 'idem-writer-a-secret-000111';
const KEY_B = 'idem-writer-b-secret-000222';
const JWT_SECRET = 'idem-e2e-jwt-secret-0123456789abcdef0123';

function token(sub) {
  const b64u = (x) => Buffer.from(x).toString('base64url');
  const input = `${b64u(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64u(JSON.stringify({
    sub, scope: 'write', exp: Math.floor(Date.now() / 1000) + 3600,
  }))}`;
  return `${input}.${b64u(crypto.createHmac('sha256', JWT_SECRET).update(input).digest())}`;
}

async function idemStack(t, cap = CAP) {
  const config = h.configWith(t, {
    limits: { idempotency_max_per_key: cap },
    auth: { jwt_secret: JWT_SECRET },
    extra: `[key idem-a]\nsecret = ${KEY_A}\nscopes = read, write\nboards = *\n` +
      `[key idem-b]\nsecret = ${KEY_B}\nscopes = read, write\nboards = *\n`,
  });
  return h.startStack(t, { config });
}

async function writer(t, gw, credential) {
  const c = await h.connectWs(null, gw.wsUrl, { token: credential });
  h.defer(t, () => c.close());
  return c;
}

/* The idempotency records in Redis: their count and MEMORY USAGE in total. */
async function records(redis) {
  const keys = (await redis.cli('--scan', '--pattern', 'rc:*req:*')).split('\n').filter(Boolean);
  let bytes = 0;
  for (const k of keys) bytes += Number(await redis.cli('MEMORY', 'USAGE', k));
  return { n: keys.length, bytes };
}

function assertCapped(reply, what) {
  assert.equal(reply.op, 'error', `${what}: expected rate_limited, got ${JSON.stringify(reply)}`);
  assert.equal(reply.code, 'rate_limited', `${what}: ${JSON.stringify(reply)}`);
  assert.match(reply.message, /idempotency_max_per_key/, what);
  assert.match(reply.message, /nothing was written/, what);
}

test('a key past its idempotency cap is answered rate_limited while another key still writes',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, gw } = await idemStack(t);
    const a = await writer(t, gw, KEY_A);
    const b = await writer(t, gw, KEY_B);
    for (let i = 0; i < CAP; i++) {
      const r = await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 1, req: `a-${i}` });
      assert.equal(r.op, 'ack', JSON.stringify(r));
    }
    // the cap: refused, and nothing written (no record, no points)
    for (let i = CAP; i < CAP + 20; i++)
      assertCapped(await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 1, req: `a-${i}` }), `write ${i}`);
    assert.equal((await a.request({ op: 'rank', board: 'demo', member: 'user:a' })).score, CAP);
    assert.equal(await redis.cli('EXISTS', `rc:{demo|}:req:a-${CAP}`), '0');
    // another key writes on; so does key a without a req (it keeps no record)
    const rb = await b.request({ op: 'incr', board: 'demo', member: 'user:b', delta: 1, req: 'b-1' });
    assert.equal(rb.op, 'ack', JSON.stringify(rb));
    const plain = await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 1 });
    assert.equal(plain.op, 'ack', JSON.stringify(plain));
    // REST answers the same cap with 429
    const rest = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores',
      { member: 'user:a', op: 'incr', delta: 1, req: 'a-rest' }, { token: KEY_A });
    assert.equal(rest.status, 429, rest.text);
    assert.match(rest.body.message, /idempotency_max_per_key/);
    // Redis holds the key's CAP records and b's one: memory bounded by the cap
    const rec = await records(redis);
    assert.equal(rec.n, CAP + 1);
  });

test('duplicates and refused writes give their place back: a retried req inside the window counts once',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, gw } = await idemStack(t);
    const a = await writer(t, gw, KEY_A);
    for (let i = 0; i < CAP - 1; i++) {
      const r = await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 1, req: `a-${i}` });
      assert.equal(r.op, 'ack', JSON.stringify(r));
      // every retry is answered duplicate and costs no place
      const again = await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 1, req: `a-${i}` });
      assert.equal(again.duplicate, true, JSON.stringify(again));
    }
    // out of range: refused by the script, no record, no place
    const oor = await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 16777215, req: 'oor' });
    assert.equal(oor.op, 'error', JSON.stringify(oor));
    const last = await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 1, req: 'a-last' });
    assert.equal(last.op, 'ack', JSON.stringify(last));
    assertCapped(await a.request({ op: 'incr', board: 'demo', member: 'user:a', delta: 1, req: 'a-over' }), 'past cap');
    assert.equal((await a.request({ op: 'rank', board: 'demo', member: 'user:a' })).score, CAP);
    assert.equal((await records(redis)).n, CAP);
  });

test('tokens are capped per sub: one sub past its cap, another sub still writes',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, gw } = await idemStack(t);
    const one = await writer(t, gw, token('overlay-1'));
    const two = await writer(t, gw, token('overlay-2'));
    for (let i = 0; i < CAP; i++) {
      const r = await one.request({ op: 'incr', board: 'demo', member: 'user:t', delta: 1, req: `t1-${i}` });
      assert.equal(r.op, 'ack', JSON.stringify(r));
    }
    assertCapped(await one.request({ op: 'incr', board: 'demo', member: 'user:t', delta: 1, req: 't1-over' }), 'sub 1');
    // a fresh connection with a new token of the same sub is the same writer
    const oneAgain = await writer(t, gw, token('overlay-1'));
    assertCapped(await oneAgain.request({ op: 'incr', board: 'demo', member: 'user:t', delta: 1, req: 't1-x' }), 'sub 1 again');
    const r2 = await two.request({ op: 'incr', board: 'demo', member: 'user:t', delta: 1, req: 't2-0' });
    assert.equal(r2.op, 'ack', JSON.stringify(r2));
    assert.equal((await records(redis)).n, CAP + 1);
  });

test('a queued write keeps one small record, from its ack to after it is applied',
  { skip, timeout: 60000 }, async (t) => {
    const N = 30;
    const { redis, gw } = await idemStack(t, 100000);
    const a = await writer(t, gw, KEY_A);
    for (let i = 0; i < N; i++) {
      const r = await a.request({ op: 'incr', board: 'burst', member: `user:${i}`, delta: 1, req: `q-${i}` });
      assert.equal(r.queued, true, JSON.stringify(r));
    }
    // wait until the consumer applied every entry (the board's seq counts them)
    await h.waitFor(async () => (await redis.cli('GET', 'rc:{burst|}:seq')) === String(N), 20000, 'queue applied');
    await h.waitFor(async () => (await redis.cli('XLEN', 'rc:{burst|}:in')) === '0', 20000, 'queue drained');
    const rec = await records(redis);
    assert.equal(rec.n, N, 'one record per queued write');
    // MEMORY USAGE per record (key, value, dict entry): 104 bytes for these on Redis 7.0
    assert.ok(rec.bytes / rec.n <= 128, `bytes per record ${rec.bytes / rec.n}`);
    // a retry after it was applied is still answered with its entry
    const again = await a.request({ op: 'incr', board: 'burst', member: 'user:0', delta: 1, req: 'q-0' });
    assert.equal(again.duplicate, true, JSON.stringify(again));
    assert.match(again.entry, /^\d+-\d+$/);
    // the shared record still lets an admin reverse the applied write by its req
    const rev = await h.http(gw.base, 'POST', '/api/v1/boards/burst/reverse', { req: 'q-1' }, { token: h.ADMIN_KEY });
    assert.equal(rev.status, 200, rev.text);
    assert.equal(rev.body.member, 'user:1');
    assert.equal(rev.body.score, 0);
  });

test('--check-config warns when the cap is below what key_write_rate allows, and not when it is auto',
  { skip, timeout: 30000 }, async (t) => {
    const { spawnSync } = require('node:child_process');
    const check = (limits) => spawnSync(h.gatewayBin(), ['--check-config', h.configWith(t, { limits })],
      { cwd: h.repoRoot, encoding: 'utf8' });
    const auto = check({});
    assert.equal(auto.status, 0, auto.stderr);
    assert.doesNotMatch(auto.stderr, /idempotency_max_per_key/);
    const low = check({ key_write_rate: 100, key_write_burst: 50, idempotency_max_per_key: 1000 });
    assert.equal(low.status, 0, low.stderr);
    assert.match(low.stderr, /warning: \[limits\] idempotency_max_per_key 1000 is below the 67550 records/);
    const bad = check({ idempotency_max_per_key: 0 });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /idempotency_max_per_key must be auto or an integer from 1 to 4000000000/);
  });

/* At its cap a writer that lost an ack must still learn whether the write
 * happened: the gateway cannot tell a retry from a new req without asking
 * Redis, so it sends the write in "no new record" mode (lua/write.lua and
 * lua/enqueue.lua): a req with a record is answered duplicate as ever, one
 * without is refused rate_limited and the script writes nothing. Direct,
 * queued and sharded boards alike (one cap per writer over all of them). */
test('at the cap a retried req is answered duplicate with its original result, a new req rate_limited with nothing written',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, gw } = await idemStack(t);
    const a = await writer(t, gw, KEY_A);
    const acks = new Map();
    const write = async (board, req, member, delta) => {
      const r = await a.request({ op: 'incr', board, member, delta, req });
      assert.equal(r.op, 'ack', JSON.stringify(r));
      acks.set(req, r);
    };
    // the cap filled over a direct, a queued and a sharded board
    for (let i = 0; i < CAP - 10; i++) await write('demo', `d-${i}`, `user:${i}`, i + 1);
    for (let i = 0; i < 5; i++) await write('burst', `q-${i}`, `user:${i}`, i + 1);
    for (let i = 0; i < 5; i++) await write('global', `g-${i}`, `user:${i}`, i + 1);
    assertCapped(await a.request({ op: 'incr', board: 'demo', member: 'user:x', delta: 1, req: 'd-new' }), 'at the cap');
    // the queued writes applied (their records now the applied ones)
    await h.waitFor(async () => (await redis.cli('GET', 'rc:{burst|}:seq')) === '5', 20000, 'queue applied');
    await h.waitFor(async () => (await redis.cli('XLEN', 'rc:{burst|}:in')) === '0', 20000, 'queue drained');
    const before = { rec: await records(redis), seq: await redis.cli('GET', 'rc:{demo|}:seq'),
      log: await redis.cli('LLEN', 'rc:{demo|}:log') };

    // retries of applied writes: duplicate, for the original write's member and score
    for (const req of ['d-0', 'd-7', `d-${CAP - 11}`, 'g-0', 'g-3']) {
      const board = req[0] === 'd' ? 'demo' : 'global';
      const first = acks.get(req);
      const again = await a.request({ op: 'incr', board, member: first.member, delta: 99, req });
      assert.equal(again.op, 'ack', `${req}: ${JSON.stringify(again)}`);
      assert.equal(again.duplicate, true, `${req}: ${JSON.stringify(again)}`);
      assert.equal(again.member, first.member, req);
      assert.equal(again.score, first.score, req);
    }
    // a queued write's retry: duplicate with its entry
    for (let i = 0; i < 5; i++) {
      const again = await a.request({ op: 'incr', board: 'burst', member: `user:${i}`, delta: 99, req: `q-${i}` });
      assert.equal(again.duplicate, true, `q-${i}: ${JSON.stringify(again)}`);
      assert.equal(again.entry, acks.get(`q-${i}`).entry, `q-${i}`);
    }
    // new reqs on every kind of board: refused, and Redis holds nothing of them
    for (const board of ['demo', 'burst', 'global']) {
      assertCapped(await a.request({ op: 'incr', board, member: 'user:new', delta: 1, req: `${board}-new` }), board);
      assert.equal((await a.request({ op: 'rank', board, member: 'user:new' })).score ?? null, null, board);
    }
    assert.equal(await redis.cli('XLEN', 'rc:{burst|}:in'), '0');
    assert.equal(await redis.cli('GET', 'rc:{burst|}:seq'), '5');
    assert.equal((await redis.cli('--scan', '--pattern', 'rc:*req:*-new')).trim(), '');
    assert.deepEqual(await records(redis), before.rec);
    assert.equal(await redis.cli('GET', 'rc:{demo|}:seq'), before.seq);
    assert.equal(await redis.cli('LLEN', 'rc:{demo|}:log'), before.log);
  });
