/* replay_sharded.test.js - replays (`subscribe` with `replay`, PROTOCOL v1.2)
 * of a sharded board (the shipped `global`, 8 shards; docs/history.md,
 * "Replay" and "Sharded boards") through the real gateway on a real
 * redis-server: seeded writes and removals an hour ago, spaced by the test
 * clock (`[server] test_clock = on`, several a second: ties by time across
 * shards), then three connections replay the same view by time at once while
 * a writer goes on writing. Every replayed moment equals the brute-force
 * state at its time (core/rc_shard.h's merged order, shard_tool.js), the
 * moments move forward, `live` N names the last one shown, and the live
 * view after it starts at N and reaches the writer's last change: no gap,
 * no repeat. The three share reads (rankcast_replay_reads_shared_total).
 * Around views (from before the first change: seq 0, no time) and member
 * lists (from between two changes) were bad_request before; a top view is
 * the path they follow; around and list again on the 3+3 cluster (the
 * shards on three primaries). Last, a replay slower than the writes, on shards
 * whose logs hold 4 changes each, skips ahead to oldest_time when its pace
 * falls behind them and still goes live exact. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const rt = require('./replay_tool');
const sh = require('./shard_tool');
const { applyDelta, applyMembers } = require('../../web/rankcast.js');

const skip = h.toolMissing(h.gatewayMissing());
const N = 3;
const SPEED = 8;

/* What a view shows of the board's rows `rows` (the model's): rows, and
 * absent for a member list. */
function shownOf(view, rows) {
  if (view.around) return { rows: sh.aroundOf(rows, view.around, view.radius) };
  if (view.members) return sh.listOf(rows, view.members);
  return { rows: rows.slice(0, view.top) };
}

function shownIn(view, m) {
  return view.members ? { rows: rt.rowsOf(m.rows), absent: m.absent } : { rows: rt.rowsOf(m.rows) };
}

/* The view's rows (and absent) after the live messages of msgs, or null
 * before live: snapshots replace them, deltas apply (an around view's are
 * snapshots only). */
function liveShown(view, msgs) {
  const li = msgs.findIndex((m) => m.op === 'live');
  if (li < 0) return null;
  let cur = null;
  for (const m of msgs.slice(li + 1)) {
    if (m.op === 'snapshot') cur = { rows: m.rows, absent: m.absent };
    else if (m.op === 'delta' && cur && view.members) cur = applyMembers(cur.rows, cur.absent, m);
    else if (m.op === 'delta' && cur && view.top && m.rows) cur = { rows: applyDelta(cur.rows, m, 1, view.top) };
  }
  return cur && (view.members ? { rows: rt.rowsOf(cur.rows), absent: cur.absent } : { rows: rt.rowsOf(cur.rows) });
}

/* One connection's messages: the replay exact at every moment, live at the
 * last one, the live part from there to the writer's last change. */
function checkReplay(view, msgs, changes, from, who) {
  const first = msgs[0];
  assert.equal(first.op, 'snapshot', `${who}: ${JSON.stringify(first)}`);
  assert.equal(first.replay, true, who);
  assert.equal(first.at_seq, sh.stateAt(changes, from).seq, `${who}: the first moment is the board at replay.from`);
  const li = msgs.findIndex((m) => m.op === 'live');
  assert.ok(li > 0, `${who}: went live`);
  let prev = -1;
  for (const m of msgs.slice(0, li)) {
    assert.equal(m.op, 'snapshot', `${who}: ${JSON.stringify(m)}`);
    assert.equal(m.sub, first.sub, `${who}: one sub`);
    assert.equal(m.replay, true, who);
    assert.ok(m.at_seq > prev, `${who}: moments move forward: ${m.at_seq} after ${prev}`);
    // the moment's time is its latest change's (of any shard), and the
    // board at that time is the one at its seq (a sharded seq: the sum of
    // the shards', one a change here)
    if (m.at_seq === 0) {
      assert.ok(m.at_time === undefined || m.at_time === null, `${who}: seq 0 has no time`);
    } else {
      assert.equal(Number(m.at_time), changes[m.at_seq - 1].at, `${who}: the time of moment ${m.at_seq}`);
      assert.equal(sh.stateAt(changes, Number(m.at_time)).seq, m.at_seq, who);
    }
    const rows = sh.stateOf(changes, m.at_seq);
    assert.equal(m.total, rows.length, `${who}: total at ${m.at_seq}`);
    assert.deepEqual(shownIn(view, m), shownOf(view, rows), `${who}: replayed moment ${m.at_seq}`);
    prev = m.at_seq;
  }
  const live = msgs[li];
  assert.equal(live.sub, first.sub, who);
  assert.equal(live.reset, undefined, `${who}: ${JSON.stringify(live)}`);
  assert.equal(live.seq, prev, `${who}: live at the last moment shown`);
  const after = msgs.slice(li + 1).filter((m) => m.sub === first.sub);
  assert.equal(after[0].op, 'snapshot', `${who}: ${JSON.stringify(after[0])}`);
  assert.equal(after[0].replay, undefined, who);
  // the live view stands at live's seq or past it: its rows are the board's
  // there (a window no change reached since keeps its older label)
  assert.deepEqual(shownIn(view, after[0]), shownOf(view, sh.stateOf(changes, Math.max(after[0].seq, live.seq))),
    `${who}: the live snapshot after live ${live.seq}`);
  let seq = after[0].seq;
  for (const m of after.slice(1)) {
    if (m.op !== 'snapshot' && m.op !== 'delta') continue;
    assert.ok(m.seq >= seq, `${who}: live never goes back: ${m.seq} after ${seq}`);
    seq = m.seq;
  }
  assert.deepEqual(liveShown(view, msgs), shownOf(view, changes[changes.length - 1].rows),
    `${who}: live reaches the last change ${changes.length}`);
  return live.seq;
}

/* 60 changes an hour ago, then N replays of view from `fromOf(changes)` at
 * SPEED while the writer goes on (the clock runs on from the last change),
 * and 10 more changes after they are all live. */
async function replayGlobal(t, view, fromOf, seed, { cluster = false } = {}) {
  const config = h.configWith(t, { server: { test_clock: 'on' } });
  let gw;
  if (cluster) {
    const c = await h.startCluster(t, { primaries: 3, replicas: 1 });
    gw = await h.startGateway(t, { redis: c.seeds, config });
  } else {
    ({ gw } = await h.startStack(t, { config }));
  }
  const ws = await h.connectWs(t, gw.wsUrl);
  const { changes, writer } = await sh.playGlobal(t, gw, ws, 60, seed);
  const from = fromOf(changes);
  const shared0 = await rt.metric(gw, 'rankcast_replay_reads_shared_total');
  let stopped = false;
  const running = (async () => {
    while (!stopped) { await writer.write(null); await h.sleep(40); }
  })();
  const { got } = await rt.replays(t, gw, N, 'global', view, { from: { time: from }, speed: SPEED });
  try {
    await h.waitFor(() => got.every((msgs) => msgs.length > 0), 30000, 'the replays to start');
    const refused = got.map((msgs) => msgs[0]).find((m) => m.op === 'error');
    assert.equal(refused, undefined, `the replay is served: ${JSON.stringify(refused)}`);
    await h.waitFor(() => got.every(rt.isLive), 60000, 'every replay to go live');
    const n0 = changes.length;
    await h.waitFor(() => changes.length >= n0 + 10, 30000, 'writes after live');
  } finally {
    stopped = true;
    await running;
  }
  const want = JSON.stringify(shownOf(view, changes[changes.length - 1].rows));
  await h.waitFor(() => got.every((msgs) => JSON.stringify(liveShown(view, msgs)) === want), 30000,
    'every replay, live, to reach the last change');
  const lives = got.map((msgs, i) => checkReplay(view, msgs, changes, from, `replay ${i}`));
  const frames = got.map((msgs) => msgs.findIndex((m) => m.op === 'live'));
  const shared = (await rt.metric(gw, 'rankcast_replay_reads_shared_total')) - shared0;
  t.diagnostic(`${changes.length} changes; replays live at ${lives.join(', ')} after ${frames.join(', ')} moments; ${shared} reads shared`);
  assert.ok(frames.every((k) => k >= 3), `each replay showed several moments: ${frames}`);
  assert.ok(shared > 0, 'the replays of one view shared reads');
}

test('an around view of a sharded board replays from before its first change: each moment the brute-force state, then live with no gap or repeat while writes go on',
  { skip, timeout: 300000 }, async (t) => {
    await replayGlobal(t, { around: 'g7', radius: 3 }, (changes) => changes[0].at - 1, 20261127);
  });

test('a member list of a sharded board replays from between two changes: each moment the brute-force list, then live with no gap or repeat while writes go on',
  { skip, timeout: 300000 }, async (t) => {
    const list = ['g3', 'g0', 'nobody', 'g21', 'g9', 'g1', 'g30', 'g17', 'g7'];
    await replayGlobal(t, { members: list }, (changes) => Math.floor((changes[4].at + changes[5].at) / 2), 7);
  });

test('a top view of a sharded board replays the same way (the path the around and list replays follow)',
  { skip, timeout: 300000 }, async (t) => {
    await replayGlobal(t, { top: 10 }, (changes) => changes[0].at - 1, 3);
  });

test('on the 3+3 cluster: an around view and a member list of a sharded board replay exact and go live with no gap or repeat while writes go on',
  { skip, timeout: 300000 }, async (t) => {
    await replayGlobal(t, { around: 'g1', radius: 2 }, (changes) => changes[2].at + 100, 99, { cluster: true });
    await replayGlobal(t, { members: ['g1', 'g2', 'g3', 'nobody', 'g33'] }, (changes) => changes[0].at, 5, { cluster: true });
  });

test('a replay of a sharded board that falls behind what its shards hold paces on from oldest_time, exact, and goes live',
  { skip, timeout: 300000 }, async (t) => {
    // each shard's log holds its last 4 changes: a replay at a quarter of
    // the writes' pace soon asks for a time some shard no longer holds
    const config = h.configWith(t, { server: { test_clock: 'on' }, 'board global': { log_cap: 4 } });
    const { gw } = await h.startStack(t, { config });
    const ws = await h.connectWs(t, gw.wsUrl);
    const writer = await sh.globalWriter(t, gw, ws, 11);
    for (let i = 0; i < 10; i++) await writer.write(null);
    const changes = writer.changes;
    // two changes back (held: a shard's log holds its last 4), the writes
    // going on at once, faster than the replay's pace
    const from = changes[7].at;
    const view = { around: 'g7', radius: 2 };
    const { got } = await rt.replays(t, gw, 1, 'global', view, { from: { time: from }, speed: 0.25 });
    const n0 = changes.length;
    while (changes.length < n0 + 150) { await writer.write(null); await h.sleep(10); }
    assert.equal(got[0][0].op, 'snapshot', JSON.stringify(got[0][0]));
    const brief = () => got[0].map((m) => `${m.op} ${m.at_seq ?? m.seq}`).join(', ');
    assert.ok(!rt.isLive(got[0]), `still replaying when the writes stop: ${brief()}`);
    await h.waitFor(() => rt.isLive(got[0]), 120000, 'the replay to go live');
    const want = JSON.stringify(shownOf(view, changes[changes.length - 1].rows));
    await h.waitFor(() => JSON.stringify(liveShown(view, got[0])) === want, 30000, 'live, the last change');
    const live = checkReplay(view, got[0], changes, from, 'replay');
    const seqs = got[0].slice(0, got[0].findIndex((m) => m.op === 'live')).map((m) => m.at_seq);
    t.diagnostic(`moments shown ${seqs.join(' ')}; live at ${live} of ${changes.length}`);
  });
