/* history_sharded.test.js - a sharded board at past moments (PROTOCOL v1.2,
 * docs/history.md "Sharded boards"), through the real gateway on a real
 * redis-server and on the 3+3 cluster: seeded incr writes and removals over
 * 40 members of the shipped `global` (8 shards), each at a time the test
 * clock (`[server] test_clock = on`) spaces out, several in one second (ties
 * by time across shards); the feed gives each change's time. Then `get` of
 * around views (WebSocket and REST `?around=&at=`) at times before, on and
 * between the changes, `history` (and its REST route) of several members,
 * and member lists (`?members=&at=`), are compared with a brute-force replay of the recorded changes
 * in the merged order (core/rc_shard.h). A moment a shard's log no longer
 * holds is out_of_range with oldest_seq and oldest_time, a time that can
 * be read. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { setClock, playGlobal: play, stateAt, aroundOf } = require('./shard_tool');

const skip = h.toolMissing(h.gatewayMissing());

const rowsOf = (rows) => rows.map((r) => ({ rank: r.rank, member: r.member, score: r.score }));

/* The times to look at: before, on and between changes, the first ones and
 * a spread of the rest. */
function momentsOf(changes, count) {
  const out = [changes[0].at - 1];
  const stride = Math.max(1, Math.floor(changes.length / count));
  for (let i = 0; i < changes.length; i += stride) {
    out.push(changes[i].at);
    out.push(changes[i].at - 1);
    if (i + 1 < changes.length) out.push(Math.floor((changes[i].at + changes[i + 1].at) / 2));
  }
  out.push(changes[changes.length - 1].at);
  return out;
}

async function checkArounds(gw, ws, changes, moments, members) {
  let n = 0;
  for (const ms of moments) {
    const want = stateAt(changes, ms);
    for (const [k, member] of members.entries()) {
      const radius = [0, 1, 3, 6][k % 4];
      const snap = await ws.request({ op: 'get', board: 'global', view: { around: member, radius }, at: { time: ms } }, 15000);
      assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
      assert.equal(snap.at_seq, want.seq, `the sum of the shards' seqs at ${ms}`);
      assert.equal(snap.total, want.rows.length, `total at ${ms}`);
      assert.deepEqual(rowsOf(snap.rows), aroundOf(want.rows, member, radius), `around ${member} r${radius} at ${ms}`);
      n++;
    }
    const member = members[n % members.length];
    const rest = await h.http(gw.base, 'GET', `/api/v1/boards/global?around=${member}&radius=2&at=${ms}`);
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(rowsOf(rest.body.rows), aroundOf(want.rows, member, 2), `REST around ${member} at ${ms}`);
  }
  return n;
}

async function checkHistory(gw, ws, changes, members) {
  const from = changes[0].at - 700;
  const to = changes[changes.length - 1].at;
  const step = Math.max(1, Math.ceil((to - from) / 999));
  for (const member of members) {
    const hist = await ws.request({ op: 'history', board: 'global', member, from, to, step }, 30000);
    assert.equal(hist.op, 'history', JSON.stringify(hist).slice(0, 300));
    assert.equal(hist.points.length, Math.floor((to - from) / step) + 1);
    for (const p of hist.points) {
      const want = stateAt(changes, p.at);
      const row = want.rows.find((r) => r.member === member);
      assert.deepEqual({ seq: p.seq, score: p.score, rank: p.rank },
        { seq: want.seq, score: row ? row.score : null, rank: row ? row.rank : null }, `${member} at ${p.at}`);
    }
    const rest = await h.http(gw.base, 'GET', `/api/v1/boards/global/members/${member}/history?from=${from}&to=${to}&step=${step}`);
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(rest.body.points, hist.points, 'REST history equals the WebSocket one');
  }
}

/* A member list at each moment: the listed members on the board in rank
 * order with their board-wide rank, the others absent in the order asked. */
async function checkLists(gw, ws, changes, moments, lists) {
  for (const ms of moments) {
    const want = stateAt(changes, ms);
    for (const list of lists) {
      const rows = want.rows.filter((r) => list.includes(r.member));
      const absent = list.filter((m) => !rows.some((r) => r.member === m));
      const snap = await ws.request({ op: 'get', board: 'global', view: { members: list }, at: { time: ms } }, 15000);
      assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
      assert.deepEqual({ seq: snap.at_seq, total: snap.total, rows: rowsOf(snap.rows), absent: snap.absent },
        { seq: want.seq, total: want.rows.length, rows, absent }, `list ${list} at ${ms}`);
    }
    const list = lists[0];
    const rest = await h.http(gw.base, 'GET', `/api/v1/boards/global?members=${list.join(',')}&at=${ms}`);
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(rowsOf(rest.body.rows), want.rows.filter((r) => list.includes(r.member)), `REST list at ${ms}`);
  }
}

const LISTS = [['g3', 'g0', 'nobody', 'g21', 'g9', 'g1', 'g30', 'g17'], Array.from({ length: 40 }, (_, i) => `g${39 - i}`), ['g5']];

const MEMBERS = ['g0', 'g1', 'g7', 'g13', 'g22', 'g39', 'nobody'];

test('sharded board: around views, history and member lists at times before, on and between changes equal a brute-force replay', { skip, timeout: 300000 }, async (t) => {
  const config = h.configWith(t, { server: { test_clock: 'on' } });
  const { gw } = await h.startStack(t, { config });
  const ws = await h.connectWs(t, gw.wsUrl);
  const { changes } = await play(t, gw, ws, 160, 20261127);
  // the replay's model is the board's: the present read equals its last state
  const now = await h.http(gw.base, 'GET', '/api/v1/boards/global?top=100');
  assert.deepEqual(rowsOf(now.body.rows), changes[changes.length - 1].rows, 'the brute-force model');
  const n = await checkArounds(gw, ws, changes, momentsOf(changes, 30), MEMBERS);
  assert.ok(n > 300, `${n} around reads`);
  await checkHistory(gw, ws, changes, MEMBERS);
  await checkLists(gw, ws, changes, momentsOf(changes, 20), LISTS);
  // at_seq still names no single state of a sharded board
  const bad = await ws.request({ op: 'get', board: 'global', view: { around: 'g1', radius: 2 }, at: { seq: 3 } }, 10000);
  assert.equal(bad.code, 'bad_request', JSON.stringify(bad));
});

test('sharded board on the 3+3 cluster: around views, history and member lists equal a brute-force replay', { skip, timeout: 300000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const config = h.configWith(t, { server: { test_clock: 'on' } });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config });
  const ws = await h.connectWs(t, gw.wsUrl);
  const { changes } = await play(t, gw, ws, 90, 7);
  await checkArounds(gw, ws, changes, momentsOf(changes, 15), MEMBERS.slice(0, 4));
  await checkHistory(gw, ws, changes, ['g0', 'g7']);
  await checkLists(gw, ws, changes, momentsOf(changes, 8), LISTS.slice(0, 2));
});

test('sharded board: a time a shard\'s log no longer holds is out_of_range for around, history and member lists, with an oldest_time that can be read', { skip, timeout: 120000 }, async (t) => {
  const config = h.configWith(t, { server: { test_clock: 'on' }, 'board global': { log_cap: 4 }, 'board demo': { log_cap: 4 } });
  const { gw } = await h.startStack(t, { config });
  const ws = await h.connectWs(t, gw.wsUrl);
  const { changes } = await play(t, gw, ws, 60, 3);
  const early = changes[2].at;
  let oldestTime = null;
  for (const req of [{ op: 'get', board: 'global', view: { around: 'g1', radius: 2 }, at: { time: early } },
    { op: 'history', board: 'global', member: 'g1', from: early, to: changes[59].at, step: 1000 },
    { op: 'get', board: 'global', view: { members: ['g1', 'g2'] }, at: { time: early } }]) {
    const e = await ws.request(req, 10000);
    assert.equal(e.code, 'out_of_range', JSON.stringify(e));
    assert.ok(e.oldest_seq > 0, JSON.stringify(e));
    // oldest_time: the earliest time every shard still holds (a seq names no moment here)
    assert.ok(Number.isInteger(e.oldest_time) && e.oldest_time > early, JSON.stringify(e));
    if (oldestTime !== null) assert.equal(e.oldest_time, oldestTime);
    oldestTime = e.oldest_time;
  }
  // the client can use it: that time is served and equals the replay, a ms before it is not
  for (const view of [{ top: 50 }, { around: 'g1', radius: 3 }]) {
    const at = await ws.request({ op: 'get', board: 'global', view, at: { time: oldestTime } }, 10000);
    assert.equal(at.op, 'snapshot', JSON.stringify(at));
    const want = stateAt(changes, oldestTime);
    assert.equal(at.at_seq, want.seq);
    assert.deepEqual(rowsOf(at.rows), view.top ? want.rows : aroundOf(want.rows, 'g1', 3));
    const before = await ws.request({ op: 'get', board: 'global', view, at: { time: oldestTime - 1 } }, 10000);
    assert.equal(before.code, 'out_of_range', JSON.stringify(before));
  }
  // an unsharded board names the time of its oldest_seq too
  for (let i = 0; i < 10; i++) await ws.request({ op: 'incr', board: 'demo', member: `d${i % 3}`, delta: 1 }, 10000);
  const gone = await ws.request({ op: 'get', board: 'demo', view: { top: 3 }, at: { time: 1 } }, 10000);
  assert.equal(gone.code, 'out_of_range', JSON.stringify(gone));
  // (changes in the same ms as the oldest one held show with it: at_seq may be later)
  const then = await ws.request({ op: 'get', board: 'demo', view: { top: 3 }, at: { time: gone.oldest_time } }, 10000);
  assert.equal(then.op, 'snapshot', JSON.stringify(then));
  assert.ok(then.at_seq >= gone.oldest_seq && then.at_time === gone.oldest_time, JSON.stringify(then));
  const sooner = await ws.request({ op: 'get', board: 'demo', view: { top: 3 }, at: { time: gone.oldest_time - 1 } }, 10000);
  assert.equal(sooner.code, 'out_of_range', JSON.stringify(sooner));
  // the last change of every shard is still held: the present time is served
  const last = changes[59].at;
  const ok = await ws.request({ op: 'get', board: 'global', view: { around: 'g1', radius: 2 }, at: { time: last } }, 10000);
  assert.equal(ok.op, 'snapshot', JSON.stringify(ok));
  assert.deepEqual(rowsOf(ok.rows), aroundOf(changes[59].rows, 'g1', 2));
});

test('a sharded periodic board: a finished period whose keys live is read at a moment, around and history included', { skip, timeout: 120000 }, async (t) => {
  // (before the shards' present seqs were summed into the read's head, a
  // sharded read showed seq 0 and every moment of a finished period was
  // answered "period is over")
  const config = h.configWith(t, { server: { test_clock: 'on' }, 'board daily': { shards: 4 } });
  const { gw } = await h.startStack(t, { config });
  const ws = await h.connectWs(t, gw.wsUrl);
  const day = Date.parse('2026-11-20T04:00:00Z'); // 12:00 on 2026-11-20 at +08:00
  const times = [];
  for (let i = 0; i < 12; i++) {
    await setClock(gw, day + i * 1000);
    const ack = await ws.request({ op: 'incr', board: 'daily', member: `d${i % 5}`, delta: 1 + (i % 3) }, 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    times.push(day + i * 1000);
  }
  const pts = new Map();
  for (let i = 0; i < 12; i++) pts.set(`d${i % 5}`, (pts.get(`d${i % 5}`) || 0) + 1 + (i % 3));
  await setClock(gw, day + 86400e3); // the next day: 2026-11-20 is over, its keys kept
  const at = times[11] + 500;
  const top = await ws.request({ op: 'get', board: 'daily', period: '2026-11-20', view: { top: 10 }, at: { time: at } }, 10000);
  assert.equal(top.op, 'snapshot', JSON.stringify(top));
  assert.equal(top.at_seq, 12);
  assert.equal(top.total, 5);
  const around = await ws.request({ op: 'get', board: 'daily', period: '2026-11-20', view: { around: 'd2', radius: 1 }, at: { time: at } }, 10000);
  assert.equal(around.op, 'snapshot', JSON.stringify(around));
  const i = top.rows.findIndex((r) => r.member === 'd2');
  assert.deepEqual(around.rows, top.rows.slice(Math.max(0, i - 1), i + 2));
  const hist = await ws.request({ op: 'history', board: 'daily', period: '2026-11-20', member: 'd2', from: at - 13000, to: at, step: 1000 }, 10000);
  assert.equal(hist.op, 'history', JSON.stringify(hist));
  assert.deepEqual(hist.points[0], { at: at - 13000, seq: 0, score: null, rank: null });
  assert.equal(hist.points[hist.points.length - 1].seq, 12);
  assert.equal(hist.points[hist.points.length - 1].score, pts.get('d2'));
  assert.equal(hist.points[hist.points.length - 1].rank, top.rows[i].rank);
});
