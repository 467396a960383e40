/* cluster_replay.test.js - replays and moment reads across a failover on
 * the 3+3 cluster (docs/history.md, "Replays across a failover and a
 * restart"): replays (window views and feeds) in progress when the board's
 * primary fails over (CLUSTER FAILOVER on its replica), and when it is
 * killed (SIGKILL) and its replica promoted, with writes going on (sent
 * again with the same req while unavailable; ack_replicas = 1, so an acked
 * write survives the kill): every replay shows each moment exactly and goes
 * live with no gap and no repeat; a `get` at_seq after the failure equals
 * the same read before it. (The restart and lost-changes cases, on one
 * Redis: replay_restart.test.js.) */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const rt = require('./replay_tool');

const skip = h.toolMissing(h.gatewayMissing());
const TOP = 10;
const FROM = 5;
const ACK = { ack_replicas: 1, ack_timeout: '500ms' };
const moments = (ws, last) => rt.moments(ws, last, TOP);

/* Replays in progress through fail(): 3 window replays and 2 feed replays of
 * demo from FROM at half speed (so that they are still replaying when the
 * cluster is whole again), the writer running through the failure. */
async function replaysThrough(t, gw, fail) {
  const ws = await h.connectWs(t, gw.wsUrl);
  const events = await rt.referenceFeed(t, gw, 'demo');
  const w = rt.writer(gw, ws, 'demo', { top: TOP, pause: 20 });
  for (let i = 0; i < 150; i++) { await w.write(); await h.sleep(30); } // ~5 s of board time: 10 s of replay
  const before = await moments(ws, w.last);
  w.run();
  t.after(() => w.stop().catch(() => {})); // (a failed check leaves no writer behind)
  const win = await rt.replays(t, gw, 3, 'demo', { top: TOP }, { from: { seq: FROM }, speed: 0.5 });
  const feeds = await rt.replays(t, gw, 2, 'demo', { feed: true }, { from: { seq: FROM }, speed: 0.5 });
  const all = [...win.got, ...feeds.got];
  await h.waitFor(() => all.every((msgs) => msgs.length > 0), 30000, 'the replays to start');
  assert.ok(!all.some(rt.isLive), 'the replays are in progress at the failure');
  const failed = await fail();
  const liveAtFailure = all.filter(rt.isLive).length;
  const brief = (msgs) => msgs.map((m) => `${m.op}:${m.at_seq ?? m.seq}@${m.at_time ?? m.at ?? ''}`).join(' ');
  assert.ok(liveAtFailure < all.length, `replays go on after the cluster is whole again: ${brief(all[0])} | ${brief(all[3])} (writer at ${w.last}, failed ${JSON.stringify(failed)})`);
  const more = w.last + 20; // (the writer goes on through the failure and after it)
  await h.waitFor(() => w.last >= more, 90000, 'writes after the failure');
  await w.stop();
  await h.waitFor(() => all.every(rt.isLive), 120000, 'every replay to go live');
  await h.waitFor(() => events.has(w.last) &&
    win.got.every((msgs) => JSON.stringify(rt.liveRows(msgs, TOP)) === JSON.stringify(w.states.get(w.last))) &&
    feeds.got.every((msgs) => msgs.some((m) => m.op === 'event' && m.seq === w.last)), 30000, 'every replay, live, to reach the last change');
  win.got.forEach((msgs, i) => rt.checkWindow(msgs, w.states, FROM, TOP, w.last, `window replay ${i}`));
  feeds.got.forEach((msgs, i) => rt.checkFeed(msgs, events, FROM, w.last, `feed replay ${i}`));
  const after = await moments(ws, [...before.keys()].pop());
  assert.deepEqual(after, before, 'get at_seq after the failure equals the same read before it');
  for (const [s, m] of before) assert.deepEqual(rt.rowsOf(m.rows), w.states.get(s), `get at ${s}`);
  return { w, all, failed, liveAtFailure };
}

test('replays in progress when the board\'s primary fails over (CLUSTER FAILOVER) go on exactly and go live; get at_seq is unchanged',
  { skip, timeout: 300000 }, async (t) => {
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
    const config = h.configWith(t, { redis: ACK });
    const gw = await h.startGateway(t, { redis: cluster.seeds, config });
    const r = await replaysThrough(t, gw, async () => {
      const primary = await cluster.owner('rc:{demo|}:z');
      const [replica] = await cluster.replicaOf(primary);
      await cluster.failover(replica);
      assert.equal(await cluster.owner('rc:{demo|}:z'), replica, 'the replica is the primary now');
      return { primary, replica };
    });
    t.diagnostic(`failed over ${r.failed.primary} -> ${r.failed.replica}; ${r.liveAtFailure} of ${r.all.length} replays live when it ended; last seq ${r.w.last}`);
  });

test('replays in progress when the board\'s primary is killed and its replica promoted go on exactly and go live; get at_seq is unchanged',
  { skip, timeout: 300000 }, async (t) => {
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
    const config = h.configWith(t, { redis: ACK });
    const gw = await h.startGateway(t, { redis: cluster.seeds, config });
    const r = await replaysThrough(t, gw, async () => {
      const primary = await cluster.owner('rc:{demo|}:z');
      const [replica] = await cluster.replicaOf(primary);
      await cluster.kill(primary, 'SIGKILL');
      await h.waitFor(async () => (await cluster.owner('rc:{demo|}:z')) === replica, 60000, 'the replica to be promoted');
      await cluster.waitOk();
      return { primary, replica };
    });
    t.diagnostic(`killed ${r.failed.primary}, ${r.failed.replica} promoted; ${r.liveAtFailure} of ${r.all.length} replays live then; last seq ${r.w.last}`);
  });

