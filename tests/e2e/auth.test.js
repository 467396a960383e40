/* auth.test.js - API keys (PROTOCOL.md "Credentials", conf/rankcast.conf
 * [auth] and [key NAME]): the key by ?token= or Authorization header on the
 * WebSocket handshake, Bearer on REST; scopes and board patterns decide
 * writes (no key or a bad key: unauthorized / 401; a key without the scope or
 * the board: forbidden / 403); reads are open unless [auth] reads = key, but a
 * bad token is unauthorized even on an open read. A refused request writes
 * nothing, and no secret ever shows in a reply or in the log. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

const KEYS = {
  reader: 'reader-secret-e2e-aaaa1111',
  writer: 'writer-secret-e2e-bbbb2222',
  matches: 'matches-secret-e2e-cccc3333',
  adminonly: 'adminonly-secret-e2e-dddd4444',
  fromenv: 'fromenv-secret-e2e-eeee5555',
};
const BAD = 'not-a-key-e2e-ffff66667777';
const ENV_VAR = 'RANKCAST_E2E_KEY_FROMENV';

const KEY_SECTIONS = {
  'key reader': { secret: KEYS.reader, scopes: 'read' },
  'key writer': { secret: KEYS.writer, scopes: 'write' },
  'key matches': { secret: KEYS.matches, scopes: 'read, write', boards: 'match:*' },
  'key adminonly': { secret: KEYS.adminonly, scopes: 'admin' },
  'key fromenv': { secret_env: ENV_VAR, scopes: 'read, write', boards: 'demo' },
};

async function authStack(t, auth = {}) {
  const config = h.configWith(t, Object.assign({ auth }, KEY_SECTIONS));
  return h.startStack(t, { config, env: { [ENV_VAR]: KEYS.fromenv } });
}

const incr = (board, member, delta = 1) => ({ op: 'incr', board, member, delta });
const post = (gw, board, body, token) => h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, body, { token });
const zscore = (redis, board, member) => redis.cli('ZSCORE', `rc:{${board}|}:z`, member);

/* An error reply with this code whose message gives no secret away. */
function assertError(reply, code) {
  assert.equal(reply.op, 'error', `expected ${code}, got ${JSON.stringify(reply)}`);
  assert.equal(reply.code, code, JSON.stringify(reply));
  for (const s of [...Object.values(KEYS), h.ADMIN_KEY, BAD])
    assert.ok(!String(reply.message).includes(s), `a secret in the message: ${reply.message}`);
}

function assertStatus(res, status, code) {
  assert.equal(res.status, status, res.text);
  if (code) assertError(res.body || {}, code);
}

function assertNoSecretsLogged(gw) {
  const log = gw.stderr.concat(gw.stdout).join('\n');
  for (const s of [...Object.values(KEYS), h.ADMIN_KEY])
    assert.ok(!log.includes(s), 'a secret was logged');
}

test('API keys: token by query and header, REST bearer, scopes and board patterns', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await authStack(t);

  await t.test('WS: the key as ?token= and as Authorization: Bearer both authorize a write', async () => {
    const byQuery = await h.connectWs(t, gw.wsUrl, { token: KEYS.writer });
    const a = await byQuery.request(incr('demo', 'user:q', 5));
    assert.equal(a.op, 'ack', JSON.stringify(a));
    assert.equal(a.score, 5);
    const byHeader = await h.connectWs(t, gw.wsUrl, { token: KEYS.writer, tokenIn: 'header' });
    const b = await byHeader.request(incr('demo', 'user:hdr', 6));
    assert.equal(b.op, 'ack', JSON.stringify(b));
    assert.equal(await zscore(redis, 'demo', 'user:q') !== '', true);
    assert.equal(await zscore(redis, 'demo', 'user:hdr') !== '', true);
  });

  await t.test('WS: no key may read and ping, but not write', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: null });
    assert.equal((await c.request({ op: 'subscribe', board: 'demo', view: { top: 5 } })).op, 'snapshot');
    assert.equal((await c.request({ op: 'rank', board: 'demo', member: 'user:q' })).op, 'rank');
    const fp = await redis.fingerprint();
    assertError(await c.request(incr('demo', 'user:anon')), 'unauthorized');
    assertError(await c.request({ op: 'set', board: 'demo', member: 'user:anon', value: 3 }), 'unauthorized');
    assertError(await c.request({ op: 'best', board: 'laps', member: 'user:anon', value: 3 }), 'unauthorized');
    assertError(await c.request({ op: 'submit', board: 'clears', member: 'user:anon', fields: { clears: 1 } }), 'unauthorized');
    assert.equal(await redis.fingerprint(), fp);
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
  });

  for (const tokenIn of ['query', 'header']) {
    await t.test(`WS: a bad token (${tokenIn}) is let in, then unauthorized even for open reads; ping works`, async () => {
      const c = await h.connectWs(t, gw.wsUrl, { token: BAD, tokenIn }); // the handshake is not refused
      const fp = await redis.fingerprint();
      assertError(await c.request({ op: 'subscribe', board: 'demo', view: { top: 5 } }), 'unauthorized');
      assertError(await c.request({ op: 'rank', board: 'demo', member: 'user:q' }), 'unauthorized');
      assertError(await c.request(incr('demo', 'user:bad')), 'unauthorized');
      assert.equal((await c.request({ op: 'ping' })).op, 'pong');
      assert.equal(c.isClosed, false);
      assert.equal(await redis.fingerprint(), fp);
    });
  }

  await t.test('REST: Bearer key on writes and profiles; reads open; a bad key refused everywhere', async () => {
    assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:rest', delta: 2 }, KEYS.writer), 200);
    const fp = await redis.fingerprint();
    assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:rest-no', delta: 2 }, null), 401, 'unauthorized');
    assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:rest-bad', delta: 2 }, BAD), 401, 'unauthorized');
    assertStatus(await h.http(gw.base, 'PUT', '/api/v1/members/user:rest/profile', { name: 'R' }, { token: null }),
      401, 'unauthorized');
    assertStatus(await h.http(gw.base, 'PUT', '/api/v1/members/user:rest/profile', { name: 'R' }, { token: BAD }),
      401, 'unauthorized');
    assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=3', null, { token: BAD }), 401, 'unauthorized');
    assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/demo/members/user:rest', null, { token: BAD }),
      401, 'unauthorized');
    assert.equal(await redis.fingerprint(), fp);

    const open = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=3', null, { token: null });
    assertStatus(open, 200);
    assert.equal(open.body.op, 'snapshot');
    assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/demo/members/user:rest', null, { token: null }), 200);
    assertStatus(await h.http(gw.base, 'PUT', '/api/v1/members/user:rest/profile', { name: 'R' }, { token: KEYS.writer }), 200);
    assert.equal(await redis.cli('HGET', 'rc:profile:user:rest', 'name'), 'R');
  });

  await t.test('a read-only key reads, and is forbidden to write (WS and REST)', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: KEYS.reader });
    assert.equal((await c.request({ op: 'subscribe', board: 'demo', view: { top: 3 } })).op, 'snapshot');
    assert.equal((await c.request({ op: 'rank', board: 'demo', member: 'user:q' })).op, 'rank');
    const fp = await redis.fingerprint();
    assertError(await c.request(incr('demo', 'user:ro')), 'forbidden');
    assertError(await c.request(incr('match:7', 'user:ro')), 'forbidden');
    assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:ro', delta: 1 }, KEYS.reader), 403, 'forbidden');
    assertStatus(await h.http(gw.base, 'PUT', '/api/v1/members/user:ro/profile', { name: 'X' }, { token: KEYS.reader }),
      403, 'forbidden');
    assert.equal(await redis.fingerprint(), fp);
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
  });

  await t.test('a key limited to match:* writes match:7 and match:1842, not demo or laps', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: KEYS.matches });
    assert.equal((await c.request(incr('match:7', 'user:m', 3))).op, 'ack');
    assert.equal((await c.request(incr('match:1842', 'user:m', 3))).op, 'ack');
    assertStatus(await post(gw, 'match:7', { op: 'incr', member: 'user:m', delta: 1 }, KEYS.matches), 200);
    const fp = await redis.fingerprint();
    assertError(await c.request(incr('demo', 'user:m')), 'forbidden');
    assertError(await c.request({ op: 'best', board: 'laps', member: 'user:m', value: 10 }), 'forbidden');
    assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:m', delta: 1 }, KEYS.matches), 403, 'forbidden');
    assert.equal(await redis.fingerprint(), fp);
    assert.equal(await zscore(redis, 'demo', 'user:m'), '');
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
  });

  await t.test('a write-only key writes every board; an admin-only key does not imply write', async () => {
    const w = await h.connectWs(t, gw.wsUrl, { token: KEYS.writer });
    assert.equal((await w.request({ op: 'best', board: 'laps', member: 'user:w', value: 61000 })).op, 'ack');
    assert.equal((await w.request({ op: 'submit', board: 'clears', member: 'user:w',
      fields: { clears: 2, revives: 0, first_clear_ms: 500 } })).op, 'ack');
    const a = await h.connectWs(t, gw.wsUrl, { token: KEYS.adminonly });
    const fp = await redis.fingerprint();
    assertError(await a.request(incr('demo', 'user:adm')), 'forbidden');
    assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:adm', delta: 1 }, KEYS.adminonly), 403, 'forbidden');
    assert.equal(await redis.fingerprint(), fp);
  });

  await t.test('a key whose secret comes from secret_env works, for its board only', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: KEYS.fromenv, tokenIn: 'header' });
    assert.equal((await c.request(incr('demo', 'user:env', 4))).op, 'ack');
    assertError(await c.request(incr('match:7', 'user:env')), 'forbidden');
    assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:env', delta: 1 }, KEYS.fromenv), 200);
  });

  await t.test('RANKCAST_ADMIN_KEY writes every board', async () => {
    const c = await h.connectWs(t, gw.wsUrl); // the harness's default: the admin key
    for (const msg of [incr('demo', 'user:adm2'), incr('match:99', 'user:adm2'),
      { op: 'best', board: 'laps', member: 'user:adm2', value: 59000 },
      { op: 'submit', board: 'clears', member: 'user:adm2', fields: { clears: 1, revives: 0, first_clear_ms: 9 } }]) {
      const r = await c.request(msg);
      assert.equal(r.op, 'ack', `${JSON.stringify(msg)} -> ${JSON.stringify(r)}`);
    }
    assertStatus(await h.http(gw.base, 'PUT', '/api/v1/members/user:adm2/profile', { name: 'A' }), 200);
  });

  assertNoSecretsLogged(gw);
});

test('without RANKCAST_ADMIN_KEY in the environment its secret is just a bad token', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await h.startStack(t, { env: { RANKCAST_ADMIN_KEY: null } });
  const c = await h.connectWs(t, gw.wsUrl); // still sends h.ADMIN_KEY
  assertError(await c.request(incr('demo', 'user:x')), 'unauthorized');
  assertError(await c.request({ op: 'subscribe', board: 'demo', view: { top: 3 } }), 'unauthorized');
  assertStatus(await post(gw, 'demo', { op: 'incr', member: 'user:x', delta: 1 }), 401, 'unauthorized');
  assert.equal(await zscore(redis, 'demo', 'user:x'), '');
  // And with no key at all, the shipped config still serves open reads.
  const anon = await h.connectWs(t, gw.wsUrl, { token: null });
  assert.equal((await anon.request({ op: 'subscribe', board: 'demo', view: { top: 3 } })).op, 'snapshot');
  assertError(await anon.request(incr('demo', 'user:x')), 'unauthorized');
});

test('[auth] reads = key: reads need a key with the read scope for the board', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await authStack(t, { reads: 'key' });
  const seed = await post(gw, 'match:7', { op: 'incr', member: 'user:1', delta: 10 });
  assertStatus(seed, 200);

  // No key: unauthorized for every read, WS and REST; ping is not a read.
  const anon = await h.connectWs(t, gw.wsUrl, { token: null });
  assertError(await anon.request({ op: 'subscribe', board: 'demo', view: { top: 5 } }), 'unauthorized');
  assertError(await anon.request({ op: 'subscribe', board: 'demo', view: { feed: true } }), 'unauthorized');
  assertError(await anon.request({ op: 'rank', board: 'demo', member: 'user:1' }), 'unauthorized');
  assert.equal((await anon.request({ op: 'ping' })).op, 'pong');
  assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=5', null, { token: null }), 401, 'unauthorized');
  assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/demo/members/user:1', null, { token: null }), 401, 'unauthorized');
  // A bad key: unauthorized too.
  assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=5', null, { token: BAD }), 401, 'unauthorized');

  // The read scope: reads on every board.
  const reader = await h.connectWs(t, gw.wsUrl, { token: KEYS.reader });
  assert.equal((await reader.request({ op: 'subscribe', board: 'demo', view: { top: 5 } })).op, 'snapshot');
  assert.equal((await reader.request({ op: 'rank', board: 'match:7', member: 'user:1' })).rank, 1);
  assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/match:7?top=5', null, { token: KEYS.reader }), 200);

  // A key without the read scope, or without the board: forbidden.
  const writer = await h.connectWs(t, gw.wsUrl, { token: KEYS.writer });
  assertError(await writer.request({ op: 'subscribe', board: 'demo', view: { top: 5 } }), 'forbidden');
  assertStatus(await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=5', null, { token: KEYS.writer }), 403, 'forbidden');
  assert.equal((await writer.request(incr('demo', 'user:w'))).op, 'ack', 'the write scope still writes');
  const matches = await h.connectWs(t, gw.wsUrl, { token: KEYS.matches });
  assert.equal((await matches.request({ op: 'subscribe', board: 'match:7', view: { top: 5 } })).op, 'snapshot');
  assertError(await matches.request({ op: 'subscribe', board: 'demo', view: { top: 5 } }), 'forbidden');

  // Health checks stay open (load balancers carry no key).
  assertStatus(await h.http(gw.base, 'GET', '/healthz', null, { token: null }), 200);
  assert.equal(await zscore(redis, 'demo', 'user:w') !== '', true);
  assertNoSecretsLogged(gw);
});
