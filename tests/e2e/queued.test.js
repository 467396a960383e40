/* queued.test.js - write_mode = queued (docs/queued.md) through real
 * gateways on a real Redis: the shipped `burst` board.
 *  - a burst of 3,000 writes from 4 connections is acked queued (score,
 *    rank and seq null, an entry id) and applied exactly once: final scores
 *    equal the sums, seq equals the number of writes, a viewer's top view
 *    and rank requests show the applied board; a retried req is answered
 *    duplicate with the first entry's id;
 *  - a gateway SIGKILLed while entries are pending on it (delivered, not
 *    acknowledged): the other gateway claims them after claim_after and
 *    applies them, nothing twice;
 *  - a full queue (queue_max 20) answers rate_limited and queues nothing;
 *    while its consumer is stopped /healthz is 503 once the oldest entry is
 *    older than queue_lag_max, and /metrics shows length and age; every
 *    acked write is applied once the consumer runs again, and /healthz
 *    recovers;
 *  - an entry the write script refuses when applied (an incr leaving the
 *    range) is dropped, counted in rankcast_queue_dropped_total and logged,
 *    and the entries after it are applied;
 *  - on a Redis Cluster the stream lives in the board's slot and the burst
 *    is applied there;
 *  - bad config is refused at start with file:line.
 * No timing targets here: every wait is for a condition. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const skip = h.toolMissing(h.gatewayMissing());
const BOARD = 'burst';
const STREAM = 'rc:{burst|}:in';
const OPEN_LIMITS = { conn_write_rate: 1000000, conn_write_burst: 10000000, key_write_rate: 1000000,
  key_write_burst: 10000000, max_pending: 100000 };

let seed = 0x1234abcd;
function rnd(n) {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed % n;
}

// n writes spread over the clients, all in flight at once (each client
// pipelines its share); resolves to [{ w, ack }] in send order per client.
async function burst(clients, n, members, prefix, round = '') {
  const sums = new Map();
  const sent = [];
  for (let i = 0; i < n; i++) {
    const member = `${prefix}${rnd(members)}`;
    const delta = 1 + rnd(9);
    sums.set(member, (sums.get(member) || 0) + delta);
    const w = { op: 'incr', board: BOARD, member, delta, req: `${prefix}${round}-r${i}` };
    sent.push({ w, p: clients[i % clients.length].request(w, 60000) });
  }
  const out = [];
  for (const s of sent) out.push({ w: s.w, ack: await s.p });
  return { out, sums };
}

async function boardRows(gw) {
  const res = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}?top=1000`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

function sameSums(body, sums) {
  const got = new Map(body.rows.map((r) => [r.member, r.score]));
  if (got.size !== sums.size) return false;
  for (const [m, s] of sums) if (got.get(m) !== s) return false;
  return true;
}

async function metric(gw, name) {
  const res = await fetch(gw.base + '/metrics', { headers: { Authorization: `Bearer ${h.ADMIN_KEY}` } });
  const text = await res.text();
  const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => '\\' + c)} ([0-9.e+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

test('a burst of 3,000 writes from 4 connections: acked queued, applied exactly once, duplicates answered', { skip, timeout: 180000 }, async (t) => {
  const config = h.configWith(t, { limits: OPEN_LIMITS });
  const { redis, gw } = await h.startStack(t, { config });
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await viewer.request({ op: 'subscribe', board: BOARD, view: { top: 10 } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  let rows = snap.rows;
  let broken = null;
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub !== snap.sub) return;
    if (m.op === 'snapshot') rows = m.rows;
    else if (m.op === 'delta') {
      const next = applyDelta(rows, m, 1, 10);
      if (!next) broken = `delta did not apply: ${JSON.stringify(m)}`;
      else rows = next;
    }
  });

  const clients = [];
  for (let i = 0; i < 4; i++) clients.push(await h.connectWs(t, gw.wsUrl));
  const { out, sums } = await burst(clients, 3000, 60, 'b');
  const entries = new Set();
  for (const { w, ack } of out) {
    assert.equal(ack.op, 'ack', JSON.stringify({ w, ack }));
    assert.equal(ack.queued, true, JSON.stringify(ack));
    assert.equal(ack.duplicate, false, JSON.stringify(ack));
    assert.equal(ack.board, BOARD);
    assert.equal(ack.member, w.member);
    assert.equal(ack.score, null);
    assert.equal(ack.rank, null);
    assert.equal(ack.seq, null);
    assert.match(ack.entry, /^\d+-\d+$/);
    entries.add(ack.entry);
  }
  assert.equal(entries.size, 3000, 'every write has its own entry');

  // retried reqs: answered duplicate with the first entry, queued or applied
  for (const i of [0, 1, 2, 1500, 2999]) {
    const again = await clients[3].request(out[i].w, 10000);
    assert.equal(again.op, 'ack', JSON.stringify(again));
    assert.equal(again.queued, true);
    assert.equal(again.duplicate, true, JSON.stringify(again));
    assert.equal(again.entry, out[i].ack.entry);
    assert.equal(again.member, out[i].w.member);
  }

  await h.waitFor(async () => sameSums(await boardRows(gw), sums), 60000, 'every queued write to be applied');
  const body = await boardRows(gw);
  assert.equal(body.seq, 3000, 'one change per write: none applied twice, none lost');
  // applied entries leave the stream once acknowledged (just after the board shows them)
  await h.waitFor(async () => (await redis.cli('XLEN', STREAM)) === '0', 10000, 'the stream to empty');
  assert.match(await redis.cli('XPENDING', STREAM, 'rankcast'), /^0\n/);

  // a retry after it was applied is still a duplicate, and changes nothing
  const late = await clients[0].request(out[10].w, 10000);
  assert.equal(late.duplicate, true, JSON.stringify(late));
  await h.sleep(300);
  assert.equal((await boardRows(gw)).seq, 3000);

  // rank and the viewer see the applied board
  const top = body.rows.slice(0, 10);
  const rank = await clients[0].request({ op: 'rank', board: BOARD, member: top[0].member });
  assert.equal(rank.score, top[0].score, JSON.stringify(rank));
  assert.equal(rank.rank, 1);
  const shape = (rs) => rs.map((r) => `${r.member}=${r.score}`).join(' ');
  await h.waitFor(() => broken || shape(rows) === shape(top), 20000, 'the viewer to show the applied board');
  assert.equal(broken, null, broken);

  assert.equal(await metric(gw, 'rankcast_queued_writes_total'), 3000);
  assert.equal(await metric(gw, 'rankcast_queue_applied_total'), 3000);
  assert.equal(await metric(gw, 'rankcast_queue_length{board="burst"}'), 0);
  const health = await h.http(gw.base, 'GET', '/healthz');
  assert.equal(health.status, 200);
  assert.equal(health.body.queues[0].board, BOARD);
});

// While `running` (a burst) is unsettled: SIGSTOPs gw, and if, stopped, it
// has entries pending in the group (read, not acknowledged) returns how
// many; else resumes it and looks again. 0 when the burst ended first.
async function stopWithPending(gw, redis, consumer, running) {
  let settled = false;
  running.then(() => { settled = true; }, () => { settled = true; });
  while (!settled) {
    process.kill(gw.pid, 'SIGSTOP');
    const out = await redis.cli('XPENDING', STREAM, 'rankcast', '-', '+', '10000', consumer);
    const n = out ? out.split('\n').length / 4 : 0;
    if (n > 0) return n;
    process.kill(gw.pid, 'SIGCONT');
    await h.sleep(1 + rnd(5));
  }
  return 0;
}

test('a gateway killed with entries pending: the other claims them after claim_after, nothing applied twice', { skip, timeout: 180000 }, async (t) => {
  const config = h.configWith(t, { limits: OPEN_LIMITS, 'board burst': { claim_after: '1s' } });
  const redis = await h.startRedis(t);
  const a = await h.startGateway(t, { redisPort: redis.port, config });
  const consumerLine = await a.waitForLine(/queue: board burst: queued writes .* consumer ([0-9a-f]+)/);
  const consumerA = /consumer ([0-9a-f]+)/.exec(consumerLine)[1];
  // a takes the consumer lock with the first write
  const wa = await h.connectWs(t, a.wsUrl);
  const first = await wa.request({ op: 'incr', board: BOARD, member: 'k0', delta: 1, req: 'first' });
  assert.equal(first.queued, true);
  await a.waitForLine(/this gateway now applies its queue/, 10000);
  const b = await h.startGateway(t, { redisPort: redis.port, config });
  const clients = [];
  for (let i = 0; i < 4; i++) clients.push(await h.connectWs(t, b.wsUrl));

  // bursts until a is caught, stopped, with entries pending on it
  const sums = new Map([['k0', 1]]);
  let held = 0, writes = 1;
  for (let round = 0; round < 20 && !held; round++) {
    const run = burst(clients, 2000, 40, 'k', round);
    held = await stopWithPending(a, redis, consumerA, run);
    if (held) {
      a.kill('SIGKILL');
      await a.exited;
    }
    const { out, sums: more } = await run;
    for (const { ack } of out) assert.equal(ack.queued, true, JSON.stringify(ack));
    for (const [m, v] of more) sums.set(m, (sums.get(m) || 0) + v);
    writes += out.length;
  }
  assert.ok(held > 0, 'a was caught with entries pending');

  await b.waitForLine(/this gateway now applies its queue/, 20000);
  await h.waitFor(async () => sameSums(await boardRows(b), sums), 90000, 'b to apply every write, a\'s pending ones too');
  const body = await boardRows(b);
  assert.equal(body.seq, writes, 'one change per write: nothing applied twice');
  assert.ok(await metric(b, 'rankcast_queue_claimed_total') >= 1, `b claimed a's ${held} pending entries`);
  await h.waitFor(async () => /^0\n/.test(await redis.cli('XPENDING', STREAM, 'rankcast')), 10000,
    'nothing left pending');
  assert.equal(await redis.cli('XLEN', STREAM), '0');
});

test('a full queue answers rate_limited, queues nothing, and loses nothing acked; /healthz fails while it lags', { skip, timeout: 120000 }, async (t) => {
  const config = h.configWith(t, { limits: OPEN_LIMITS,
    'board burst': { queue_max: 20, claim_after: '10m', queue_lag_max: '500ms' } });
  const redis = await h.startRedis(t);
  const a = await h.startGateway(t, { redisPort: redis.port, config });
  const wa = await h.connectWs(t, a.wsUrl);
  assert.equal((await wa.request({ op: 'incr', board: BOARD, member: 'f0', delta: 1 })).queued, true);
  await a.waitForLine(/this gateway now applies its queue/, 10000);
  await h.waitFor(async () => (await boardRows(a)).seq === 1, 10000, 'the first write applied');
  const b = await h.startGateway(t, { redisPort: redis.port, config });
  process.kill(a.pid, 'SIGSTOP'); // the consumer holds the lock and applies nothing
  t.after(() => { try { process.kill(a.pid, 'SIGCONT'); } catch (e) { /* gone */ } });

  const ws = await h.connectWs(t, b.wsUrl);
  const sums = new Map([['f0', 1]]);
  let acked = 0;
  let limited = 0;
  for (let i = 0; i < 30; i++) {
    const w = { op: 'incr', board: BOARD, member: `f${i % 5}`, delta: i + 1, req: `full-${i}` };
    const r = await ws.request(w, 10000);
    if (r.op === 'ack') {
      assert.equal(r.queued, true);
      acked++;
      sums.set(w.member, (sums.get(w.member) || 0) + w.delta);
    } else {
      assert.equal(r.code, 'rate_limited', JSON.stringify(r));
      assert.match(r.message, /queue is full/);
      limited++;
    }
  }
  assert.equal(acked, 20);
  assert.equal(limited, 10);
  assert.equal(await redis.cli('XLEN', STREAM), '20', 'nothing queued past queue_max');
  const rest = await h.http(b.base, 'POST', `/api/v1/boards/${BOARD}/scores`, { op: 'incr', member: 'x', delta: 1 });
  assert.equal(rest.status, 429, JSON.stringify(rest.body));
  // a full queue's retried req is still a duplicate, not rate_limited
  const dup = await ws.request({ op: 'incr', board: BOARD, member: 'f0', delta: 1, req: 'full-0' });
  assert.equal(dup.duplicate, true, JSON.stringify(dup));

  // nothing is applied: the oldest entry ages past queue_lag_max (500 ms)
  let health;
  await h.waitFor(async () => (health = await h.http(b.base, 'GET', '/healthz')).status === 503, 10000,
    '/healthz to fail on the lagging queue');
  assert.equal(health.body.ok, false);
  assert.match(health.body.why, /write queue of board burst lags/);
  const q = health.body.queues.find((x) => x.board === BOARD);
  assert.equal(q.length, 20);
  assert.equal(q.lagging, true);
  assert.ok(q.oldest_age_ms > 500, JSON.stringify(q));
  assert.equal(await metric(b, 'rankcast_queue_length{board="burst"}'), 20);
  assert.ok(await metric(b, 'rankcast_queue_oldest_age_seconds{board="burst"}') > 0.5);

  process.kill(a.pid, 'SIGCONT');
  await h.waitFor(async () => sameSums(await boardRows(b), sums), 30000, 'every acked write applied');
  assert.equal((await boardRows(b)).seq, 21);
  await h.waitFor(async () => (await h.http(b.base, 'GET', '/healthz')).status === 200, 10000,
    '/healthz to recover once the queue drained');
});

test('on a Redis Cluster the queue lives in the board\'s slot and is applied there', { skip, timeout: 180000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
  const config = h.configWith(t, { limits: OPEN_LIMITS });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config });
  const clients = [];
  for (let i = 0; i < 2; i++) clients.push(await h.connectWs(t, gw.wsUrl));
  const { out, sums } = await burst(clients, 600, 30, 'c');
  for (const { ack } of out) assert.equal(ack.queued, true, JSON.stringify(ack));
  await h.waitFor(async () => sameSums(await boardRows(gw), sums), 60000, 'the burst applied on the cluster');
  assert.equal((await boardRows(gw)).seq, 600);
  const owner = await cluster.owner(STREAM);
  assert.equal(owner, await cluster.owner('rc:{burst|}:z'), 'the stream shares the board\'s slot');
  assert.equal(await cluster.cli(owner, 'XLEN', STREAM), '0');
});

test('a queued write the write script refuses when applied is dropped, counted and logged; the queue goes on', { skip, timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t, { config: h.configWith(t, { limits: OPEN_LIMITS }) });
  const admin = { headers: { Authorization: `Bearer ${h.ADMIN_KEY}` } };
  const counter = async (name) => {
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec((await h.http(gw.base, 'GET', '/metrics', null, admin)).text);
    return m ? Number(m[1]) : null;
  };
  const ws = await h.connectWs(t, gw.wsUrl);
  // burst's points range is +-(2^24 - 1) (tiebreak over 3650 days at 1 s):
  // each incr is in range when queued, the second leaves it when applied.
  const big = 10000000;
  for (let i = 0; i < 2; i++) {
    const r = await ws.request({ op: 'incr', board: BOARD, member: 'over', delta: big, req: `over-${i}` }, 10000);
    assert.equal(r.queued, true, JSON.stringify(r));
  }
  assert.equal((await ws.request({ op: 'incr', board: BOARD, member: 'after', delta: 3, req: 'after-0' }, 10000)).queued, true);
  await h.waitFor(async () => (await counter('rankcast_queue_dropped_total')) === 1 &&
    (await counter('rankcast_queue_applied_total')) === 2, 20000, 'one entry dropped, two applied');
  await gw.waitForLine(/queue: board burst: entry \S+ not applied: out_of_range/, 5000);
  const body = await boardRows(gw);
  assert.deepEqual(body.rows.map((r) => [r.member, r.score]).sort(), [['after', 3], ['over', big]]);
  assert.equal(body.seq, 2, 'the dropped entry wrote nothing');
});

function checkConfig(file) {
  return new Promise((resolve) => {
    execFile(h.gatewayBin(), ['--config', file, '--listen', '127.0.0.1:1', '--redis', '127.0.0.1:1'],
      { timeout: 10000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout + stderr }));
  });
}

test('bad queue config is refused at start with file:line', { skip, timeout: 60000 }, async (t) => {
  const cases = [
    [{ 'board burst': { write_mode: 'sideways' } }, /rankcast\.conf:\d+: write_mode must be direct or queued/],
    [{ 'board hot': { write_mode: 'queued' } }, /rankcast\.conf:\d+: write_mode = queued cannot be combined with decay/],
    [{ 'board daily': { write_mode: 'queued' } }, /rankcast\.conf:\d+: write_mode = queued cannot be combined with period/],
    [{ 'board match:*': { write_mode: 'queued' } }, /rankcast\.conf:\d+: write_mode = queued applies only to a board with an exact name/],
    [{ 'board demo': { queue_max: 10 } }, /rankcast\.conf:\d+: queue_max applies only to write_mode = queued/],
    [{ 'board burst': { queue_max: 0 } }, /rankcast\.conf:\d+: queue_max must be an integer from 1/],
  ];
  for (const [spec, re] of cases) {
    const file = h.configWith(t, spec);
    const res = await checkConfig(file);
    assert.notEqual(res.code, 0, JSON.stringify(spec));
    assert.match(res.out, re, JSON.stringify(spec));
  }
});
