/* cluster_ops.test.js - what works on one Redis works on a cluster: the same
 * story run twice, on one redis-server and on a real 3-primary + 3-replica
 * cluster (started by the harness).
 *
 * The story: writes to a periodic board (daily), a viewer of its top 10, a
 * member removed and blocked (the block reaches the board's list for later
 * periods and the next day's list, each in its own slot), a profile joined
 * into reads, a write reversed by its req, ranks and pages over REST, the
 * audit stream, scripts flushed on the board's node (NOSCRIPT: loaded again
 * there), the next day refusing the blocked member until it is
 * unblocked, the finished day archived, a hot board rebuilt from its
 * buckets, and a reset. On a cluster no script may touch two slots: Redis
 * refuses such a call (CROSSSLOT), so any key outside the board's tag would
 * fail the story there. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

async function setClock(gw, iso) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse(iso) });
  assert.equal(r.status, 200, r.text);
}

/* A command on the node that holds key (the one server, or the slot's primary). */
function redisOn(stack) {
  if (stack.redis) return (key, ...args) => stack.redis.cli(...args);
  return async (key, ...args) => stack.cluster.cli(await stack.cluster.owner(key), ...args);
}

async function start(t, mode) {
  const config = h.configWith(t, {
    server: { test_clock: 'on' },
    'board hot': { rebuild_every: '200ms', result_ttl: '2s' },
  });
  if (mode === 'single') {
    const redis = await h.startRedis(t);
    return { redis, gw: await h.startGateway(t, { redisPort: redis.port, config }) };
  }
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  return { cluster, gw: await h.startGateway(t, { redis: cluster.seeds, config }) };
}

const write = (gw, board, body) => h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, body);

for (const mode of ['single', 'cluster']) {
  test(`${mode}: periodic boards, admin actions and blocklists, profiles, audit, archive, hot boards, reset`,
    { skip, timeout: 180000 }, async (t) => {
      const stack = await start(t, mode);
      const { gw } = stack;
      const on = redisOn(stack);
      if (mode === 'cluster') {
        const health = (await h.http(gw.base, 'GET', '/healthz')).body;
        assert.equal(health.ok, true, JSON.stringify(health));
      }

      // 2026-11-22 at +08:00 (the shipped `daily` board) runs until 16:00 UTC
      await setClock(gw, '2026-11-22T12:00:00.000Z');
      const day = '2026-11-22';
      for (const [member, delta, req] of [['alice', 30, 'd-a'], ['bob', 50, 'd-b'], ['cheat', 70, 'd-c'], ['carol', 20, 'd-k']]) {
        const r = await write(gw, 'daily', { member, op: 'incr', delta, req });
        assert.equal(r.status, 200, r.text);
      }
      // scripts flushed on the board's node: the next write reloads them there
      await on(`rc:{daily|${day}}:z`, 'SCRIPT', 'FLUSH');
      const afterFlush = await write(gw, 'daily', { member: 'alice', op: 'incr', delta: 0, req: 'd-flush' });
      assert.equal(afterFlush.status, 200, afterFlush.text);
      assert.equal(afterFlush.body.score, 30);

      const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
      const snap = await viewer.request({ op: 'subscribe', board: 'daily', view: { top: 10 } });
      assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
      assert.deepEqual(snap.rows.map((r) => r.member), ['cheat', 'bob', 'alice', 'carol']);

      // remove + block: the viewer loses the member, its writes are refused
      const removed = await h.http(gw.base, 'DELETE', '/api/v1/boards/daily/members/cheat?block=1');
      assert.equal(removed.status, 200, removed.text);
      assert.equal(removed.body.op, 'removed');
      assert.equal(removed.body.blocked, true);
      await viewer.next((m) => m.op === 'delta' && m.sub === snap.sub && (m.removed || []).includes('cheat'), 5000);
      const refused = await write(gw, 'daily', { member: 'cheat', op: 'incr', delta: 1 });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.code, 'forbidden');
      // the block is in the day's list, the board's list and the next day's
      assert.equal(await on(`rc:{daily|${day}}:blocked`, 'SISMEMBER', `rc:{daily|${day}}:blocked`, 'cheat'), '1');
      assert.equal(await on('rc:{daily|}:blocked', 'SISMEMBER', 'rc:{daily|}:blocked', 'cheat'), '1');
      assert.equal(await on('rc:{daily|2026-11-23}:blocked', 'SISMEMBER', 'rc:{daily|2026-11-23}:blocked', 'cheat'), '1');
      assert.ok(Number(await on('rc:{daily|2026-11-23}:blocked', 'PTTL', 'rc:{daily|2026-11-23}:blocked')) > 0,
        'the next day\'s list expires with that day');

      // a profile joins into reads; a write is reversed by its req
      const prof = await h.http(gw.base, 'PUT', '/api/v1/members/bob/profile', { name: 'Bob B.' });
      assert.equal(prof.status, 200, prof.text);
      const rev = await h.http(gw.base, 'POST', '/api/v1/boards/daily/reverse', { req: 'd-k' });
      assert.equal(rev.status, 200, rev.text);
      assert.equal(rev.body.member, 'carol');
      assert.equal(rev.body.score, 0);
      const top = (await h.http(gw.base, 'GET', '/api/v1/boards/daily?top=10')).body;
      assert.deepEqual(top.rows.map((r) => [r.member, r.score]), [['bob', 50], ['alice', 30], ['carol', 0]]);
      assert.ok(JSON.stringify(top.rows[0]).includes('Bob B.'), JSON.stringify(top.rows[0]));
      const page = (await h.http(gw.base, 'GET', '/api/v1/boards/daily?offset=1&limit=1')).body;
      assert.deepEqual(page.rows.map((r) => [r.rank, r.member]), [[2, 'alice']]);
      const rank = (await h.http(gw.base, 'GET', '/api/v1/boards/daily/members/alice')).body;
      assert.equal(rank.rank, 2, JSON.stringify(rank));
      const around = await viewer.request({ op: 'subscribe', board: 'daily', view: { around: 'alice', radius: 1 } });
      assert.deepEqual(around.rows.map((r) => r.member), ['bob', 'alice', 'carol']);

      // the viewer's window is the truth
      await h.waitFor(() => {
        const last = viewer.messages.filter((m) => m.sub === snap.sub && m.op === 'delta').pop();
        return last && last.total === 3;
      }, 5000, 'the viewer at 3 members');

      // the audit stream has every action, with who and what
      const audit = await on('rc:audit', 'XRANGE', 'rc:audit', '-', '+');
      for (const word of ['remove', 'reverse']) assert.ok(audit.includes(word), `audit has ${word}: ${audit}`);

      // the next day: the block holds there too, until it is lifted
      await setClock(gw, '2026-11-22T16:00:01.000Z');
      const next = await write(gw, 'daily', { member: 'cheat', op: 'incr', delta: 5 });
      assert.equal(next.status, 403, next.text);
      assert.equal((await write(gw, 'daily', { member: 'dave', op: 'incr', delta: 5 })).status, 200);
      const unblocked = await h.http(gw.base, 'DELETE', '/api/v1/boards/daily/blocked/cheat');
      assert.equal(unblocked.status, 200, unblocked.text);
      assert.equal(unblocked.body.op, 'unblocked');
      const back = await write(gw, 'daily', { member: 'cheat', op: 'incr', delta: 5 });
      assert.equal(back.status, 200, back.text);
      assert.equal(back.body.score, 5);
      assert.equal(await on('rc:{daily|}:blocked', 'SISMEMBER', 'rc:{daily|}:blocked', 'cheat'), '0');

      // a block named for a past period (two days back) holds today too, and so does its lifting
      const admin = await h.connectWs(t, gw.wsUrl);
      const pastBlock = await admin.request({ op: 'remove', board: 'daily', member: 'eve', block: true, period: '2026-11-21' });
      assert.equal(pastBlock.op, 'removed', JSON.stringify(pastBlock));
      const eve = await write(gw, 'daily', { member: 'eve', op: 'incr', delta: 1 });
      assert.equal(eve.status, 403, eve.text);
      const pastUnblock = await admin.request({ op: 'unblock', board: 'daily', member: 'eve', period: '2026-11-21' });
      assert.equal(pastUnblock.op, 'unblocked', JSON.stringify(pastUnblock));
      assert.equal((await write(gw, 'daily', { member: 'eve', op: 'incr', delta: 1 })).status, 200);

      // the finished day is archived, once, with what Redis held
      await gw.waitForLine(new RegExp(`archived daily ${day}: 3 rows$`), 15000);
      const archived = (await h.http(gw.base, 'GET', `/api/v1/boards/daily?top=10&period=${day}`)).body;
      assert.deepEqual(archived.rows.map((r) => r.member), ['bob', 'alice', 'carol']);

      // a hot board: the write lands in a bucket, the rebuild brings it to viewers
      assert.equal((await write(gw, 'hot', { member: 'streamer', op: 'incr', delta: 9 })).status, 200);
      await h.waitFor(async () => {
        const hot = (await h.http(gw.base, 'GET', '/api/v1/boards/hot?top=5')).body;
        return hot.rows && hot.rows.some((r) => r.member === 'streamer');
      }, 15000, 'the hot board rebuilt with the write');

      // reset: the board is empty, the viewer of the new day sees it
      const today = await viewer.request({ op: 'subscribe', board: 'daily', view: { top: 10 } });
      assert.equal(today.total, 3); // dave, cheat, eve
      const reset = await h.http(gw.base, 'POST', '/api/v1/boards/daily/reset', {});
      assert.equal(reset.status, 200, reset.text);
      assert.equal(reset.body.op, 'board_reset');
      await viewer.next((m) => m.sub === today.sub && (m.op === 'delta' || m.op === 'snapshot') && m.total === 0, 5000);
      assert.equal((await h.http(gw.base, 'GET', '/api/v1/boards/daily?top=10')).body.total, 0);
    });
}
