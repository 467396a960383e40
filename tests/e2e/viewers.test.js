/* viewers.test.js - viewer counts across gateways: snapshots carry
 * "viewers" (open subscriptions to the board, any view, any period, on every
 * gateway sharing the Redis), deltas carry it when it changed (a count that
 * changed alone comes as a delta without rows), GET /api/v1/boards/{b}/stats
 * answers {board, viewers, total, seq}, and a gateway that dies drops out of
 * the count once its share expires. One real redis-server, two gateways.
 * The gateways pass counts through Redis every 500 ms ([server]
 * viewers_every, 2 s as shipped): the same passes, 4 times as often. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const KEY = 'rc:{demo|}:viewers';
const EVERY_MS = 500;
const TTL_MS = (EVERY_MS * 5) / 2; // a gateway's share expires this long after its last pass
const fastCounts = (t) => h.configWith(t, { server: { viewers_every: `${EVERY_MS}ms` } });

async function stats(gw, board = 'demo', query = '') {
  const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}/stats${query}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

// Waits (generously: counts travel through Redis every EVERY_MS) until every
// gateway's /stats says n viewers of board.
async function statsReach(gws, n, board = 'demo', ms = 20000) {
  await h.waitFor(async () => {
    for (const gw of gws)
      if ((await stats(gw, board)).viewers !== n) return false;
    return true;
  }, ms, `${board}: ${n} viewers on every gateway`);
}

async function subscribe(c, board, view, extra = {}) {
  const snap = await c.request({ op: 'subscribe', board, view, ...extra }, 10000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  return snap;
}

async function twoGateways(t) {
  const redis = await h.startRedis(t);
  const config = fastCounts(t);
  const a = await h.startGateway(t, { redisPort: redis.port, config });
  const b = await h.startGateway(t, { redisPort: redis.port, config });
  return { redis, a, b, config };
}

test('viewers on two gateways are counted in snapshots, deltas and /stats, and go when they leave',
  { skip, timeout: 120000 }, async (t) => {
    const { redis, a, b } = await twoGateways(t);
    const writer = await h.connectWs(t, a.wsUrl);
    const w = await writer.request({ op: 'incr', board: 'demo', member: 'ann', delta: 5 }, 10000);
    assert.equal(w.op, 'ack', JSON.stringify(w));

    const va = await h.connectWs(t, a.wsUrl, { token: null });
    const first = await subscribe(va, 'demo', { top: 10 });
    assert.equal(first.viewers, 1, 'a snapshot counts its own viewer at once');
    const feed = await subscribe(va, 'demo', { feed: true });
    assert.equal(feed.viewers, 2, 'a feed snapshot carries the count too');

    const vb = await h.connectWs(t, b.wsUrl, { token: null });
    await subscribe(vb, 'demo', { top: 5 });
    await statsReach([a, b], 3);

    // The count changed alone: the top-10 viewer on A is told with a delta without rows.
    const told = await va.next((m) => m.op === 'delta' && m.sub === first.sub && m.viewers === 3, 15000);
    assert.deepEqual(told.rows, []);
    assert.deepEqual(told.removed, []);
    assert.equal(told.seq, first.seq);
    assert.equal(told.total, first.total);

    // A later snapshot on B sees A's viewers.
    const vb2 = await h.connectWs(t, b.wsUrl, { token: null });
    const late = await subscribe(vb2, 'demo', { offset: 0, limit: 3 });
    assert.equal(late.viewers, 4);
    await statsReach([a, b], 4);
    await va.next((m) => m.op === 'delta' && m.sub === first.sub && m.viewers === 4, 15000);

    // A delta for a write carries no "viewers" while the count stays.
    const w2 = await writer.request({ op: 'incr', board: 'demo', member: 'bob', delta: 9 }, 10000);
    assert.equal(w2.op, 'ack');
    const d = await va.next((m) => m.op === 'delta' && m.sub === first.sub && m.seq === w2.seq, 10000);
    assert.equal(d.viewers, undefined, JSON.stringify(d));
    assert.equal(d.rows[0].member, 'bob');

    const st = await stats(a);
    assert.deepEqual(st, { board: 'demo', viewers: 4, total: 2, seq: w2.seq });

    // Unsubscribe and close both count down, on both gateways.
    const un = await vb2.request({ op: 'unsubscribe', sub: late.sub }, 10000);
    assert.equal(un.op, 'unsubscribed', JSON.stringify(un));
    await statsReach([a, b], 3);
    await va.next((m) => m.op === 'delta' && m.sub === first.sub && m.viewers === 3, 15000);
    await vb.close();
    await statsReach([a, b], 2);

    // A write right after a local change: its delta carries the new count,
    // unless a count-only delta told it first; either way, before the rows.
    const va2 = await h.connectWs(t, a.wsUrl, { token: null });
    await subscribe(va2, 'demo', { around: 'ann', radius: 1 });
    const w3 = await writer.request({ op: 'incr', board: 'demo', member: 'cid', delta: 1 }, 10000);
    assert.equal(w3.op, 'ack');
    const upto = await va.next((m) => m.op === 'delta' && m.sub === first.sub && m.seq === w3.seq, 10000);
    const told3 = va.messages.filter((m) => m.op === 'delta' && m.sub === first.sub && m.viewers === 3);
    assert.ok(upto.viewers === 3 || (told3.length && va.messages.indexOf(told3[0]) < va.messages.indexOf(upto)),
      JSON.stringify(va.messages.slice(-4)));
    // around views get the count-only delta too (it changes nothing in their window)
    const vb3 = await h.connectWs(t, b.wsUrl, { token: null });
    await subscribe(vb3, 'demo', { top: 1 });
    const aroundTold = await va2.next((m) => m.op === 'delta' && m.viewers === 4, 15000);
    assert.deepEqual([aroundTold.rows, aroundTold.removed], [[], []]);
    await vb3.close();
    await va2.close();
    await statsReach([a, b], 2);
    await va.next((m) => m.op === 'delta' && m.sub === first.sub && m.viewers === 2, 15000);

    // One hash per board, one field per gateway with viewers, expiring by itself.
    const fields = (await redis.cli('HKEYS', KEY)).split('\n').filter(Boolean);
    assert.ok(fields.length >= 1 && fields.length <= 2, fields.join(','));
    const pttl = Number(await redis.cli('PTTL', KEY));
    assert.ok(pttl > 0 && pttl <= TTL_MS, `PTTL ${pttl}`);
  });

test('a gateway killed with SIGKILL drops out of the count within seconds; one stopped takes its share out',
  { skip, timeout: 120000 }, async (t) => {
    const { redis, a, b, config } = await twoGateways(t);
    const va = await h.connectWs(t, a.wsUrl, { token: null });
    const top = await subscribe(va, 'demo', { top: 10 });
    const vb = [];
    for (let i = 0; i < 3; i++) {
      const c = await h.connectWs(t, b.wsUrl, { token: null });
      await subscribe(c, 'demo', { top: 10 });
      vb.push(c);
    }
    await statsReach([a, b], 4);
    await va.next((m) => m.op === 'delta' && m.sub === top.sub && m.viewers === 4, 15000);

    b.kill('SIGKILL');
    await b.exited;
    const killedAt = Date.now();
    await statsReach([a], 1, 'demo', 20000);
    const took = Date.now() - killedAt;
    assert.ok(took < 12000, `the dead gateway's viewers went after ${took} ms`);
    t.diagnostic(`a SIGKILLed gateway's viewers left the count after ${took} ms`);
    await va.next((m) => m.op === 'delta' && m.sub === top.sub && m.viewers === 1, 15000);

    // A third gateway with viewers, stopped with SIGTERM: its field leaves the
    // hash on the way out (well before it would expire).
    const c = await h.startGateway(t, { redisPort: redis.port, config });
    const vc = await h.connectWs(t, c.wsUrl, { token: null });
    await subscribe(vc, 'demo', { top: 3 });
    await statsReach([a, c], 2);
    await h.waitFor(async () => (await redis.cli('HLEN', KEY)) === '2', 10000, 'both gateways in the hash');
    const res = await c.stop();
    assert.equal(res.code, 0);
    await h.waitFor(async () => (await redis.cli('HLEN', KEY)) === '1', 10000, 'the stopped gateway\'s field gone');
    assert.equal((await stats(a)).viewers, 1);
  });

test('a periodic board counts viewers of every period; /stats names the period and 404s an unknown board',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, a } = await (async () => {
      const r = await h.startRedis(t);
      return { redis: r, a: await h.startGateway(t, { redisPort: r.port }) };
    })();
    const c = await h.connectWs(t, a.wsUrl, { token: null });
    const cur = await subscribe(c, 'daily', { top: 10 });
    assert.equal(cur.viewers, 1);
    const prev = await subscribe(c, 'daily', { top: 10 }, { period: 'previous' });
    assert.equal(prev.viewers, 2);
    const st = await stats(a, 'daily');
    assert.equal(st.board, 'daily');
    assert.equal(st.period, cur.period);
    assert.equal(st.viewers, 2);
    assert.equal(st.total, 0);
    const other = await stats(a, 'daily', `?period=${prev.period}`);
    assert.equal(other.period, prev.period);
    assert.equal(other.viewers, 2);
    assert.equal(await redis.cli('EXISTS', 'rc:{daily|}:viewers'), '1');

    const none = await h.http(a.base, 'GET', '/api/v1/boards/nosuch/stats');
    assert.equal(none.status, 404);
    assert.equal(none.body.code, 'unknown_board');
    const idle = await stats(a, 'laps');
    assert.deepEqual(idle, { board: 'laps', viewers: 0, total: 0, seq: 0 });
  });

test('on a Redis Cluster the count lives in the board\'s slot and sums two gateways', { skip, timeout: 120000 },
  async (t) => {
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
    const config = fastCounts(t);
    const a = await h.startGateway(t, { redis: cluster.seeds, config });
    const b = await h.startGateway(t, { redis: cluster.seeds, config });
    const boards = ['match:71', 'match:72', 'match:73'];
    for (const board of boards) {
      const ca = await h.connectWs(t, a.wsUrl, { token: null });
      await subscribe(ca, board, { top: 5 });
      const cb = await h.connectWs(t, b.wsUrl, { token: null });
      await subscribe(cb, board, { top: 5 });
      await subscribe(cb, board, { feed: true });
    }
    for (const board of boards) {
      await statsReach([a, b], 3, board);
      const key = `rc:{${board}|}:viewers`;
      assert.equal(await cluster.cli(await cluster.owner(key), 'HLEN', key), '2');
    }
  });
