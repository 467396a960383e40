/* replay_restart.test.js - replays across a gateway restart and when the
 * board goes back (docs/history.md, "Replays across a failover and a
 * restart", "When the board goes back"), on one Redis:
 * - a gateway killed (SIGKILL) while replays run and another started: the
 *   same range replayed again shows the same moments, and `get` at_seq
 *   equals the reads before;
 * - changes lost under running replays (staged: the board's keys put back
 *   to an older copy, then other writes at the same seqs): each replay ends
 *   with `live` marked `reset`, never going on silently.
 * (The 3+3 cluster failover and kill: cluster_replay.test.js.) */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const rt = require('./replay_tool');

const skip = h.toolMissing(h.gatewayMissing());
const TOP = 10;
const FROM = 5;
const moments = (ws, last) => rt.moments(ws, last, TOP);

test('a gateway killed while replays run, another started: the same range replays the same moments, and get at_seq is unchanged',
  { skip, timeout: 180000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw1 = await h.startGateway(t, { redisPort: redis.port });
    const ws1 = await h.connectWs(t, gw1.wsUrl);
    const w = rt.writer(gw1, ws1, 'demo', { top: TOP, pause: 20 });
    for (let i = 0; i < 80; i++) { await w.write(); await h.sleep(30); } // ~2.6 s of board time
    const before = await moments(ws1, w.last);
    // replays running when the gateway dies
    const doomed = await rt.replays(t, gw1, 3, 'demo', { top: TOP }, { from: { seq: FROM }, speed: 1 });
    await h.waitFor(() => doomed.got.every((msgs) => msgs.length > 1), 30000, 'the replays to show some moments');
    assert.ok(!doomed.got.some(rt.isLive), 'the replays are in progress at the kill');
    gw1.kill('SIGKILL');
    await gw1.exited;
    for (const msgs of doomed.got) {
      for (const m of msgs) assert.deepEqual(rt.rowsOf(m.rows), w.states.get(m.at_seq), `before the kill, at ${m.at_seq}`);
    }
    const gw2 = await h.startGateway(t, { redisPort: redis.port });
    const ws2 = await h.connectWs(t, gw2.wsUrl);
    const after = await moments(ws2, w.last);
    assert.deepEqual(after, before, 'get at_seq from the new gateway equals the reads before');
    const w2 = rt.writer(gw2, ws2, 'demo', { top: TOP, pause: 20, prefix: 'x' });
    w2.states.clear();
    for (const [s, rows] of w.states) w2.states.set(s, rows);
    w2.last = w.last;
    w2.run();
    const again = await rt.replays(t, gw2, 3, 'demo', { top: TOP }, { from: { seq: FROM }, speed: 4 });
    await h.waitFor(() => again.got.every(rt.isLive), 60000, 'the replays on the new gateway to go live');
    await w2.stop();
    await h.waitFor(() => again.got.every((msgs) => JSON.stringify(rt.liveRows(msgs, TOP)) === JSON.stringify(w2.states.get(w2.last))),
      30000, 'every replay, live, to reach the last change');
    again.got.forEach((msgs, i) => rt.checkWindow(msgs, w2.states, FROM, TOP, w2.last, `replay ${i} after the restart`));
  });

/* The board going back under running replays: the changes after seq K lost
 * (what a promoted replica that had not yet received them shows after a
 * SIGKILL of its primary, with writes not acked to a replica), then other
 * changes written at the same seqs. Staged on one Redis: the board's keys
 * are copied at K and put back after the replays have shown moments past
 * K. A replay cannot go on exactly from a moment the board no longer
 * holds: it must end with `live` marked `reset` (the board's present, below
 * what it showed) and go on live from the board as it is, never show a
 * moment of the new changes as if it followed the lost ones. */
const SAVE = "for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('COPY', k, 'bak:' .. k, 'REPLACE') end return 1";
const BACK = "for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end " +
  "for _,b in ipairs(redis.call('KEYS', 'bak:' .. ARGV[1])) do redis.call('COPY', b, string.sub(b, 5), 'REPLACE') end return 1";

test('replays running when the board goes back (changes lost, as after a failover that lost unreplicated writes) end with live marked reset, never a silent repeat',
  { skip, timeout: 180000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port });
    const ws = await h.connectWs(t, gw.wsUrl);
    const w = rt.writer(gw, ws, 'demo', { top: TOP, pause: 20 });
    for (let i = 0; i < 40; i++) { await w.write(); await h.sleep(30); }
    const K = w.last;
    await redis.cli('EVAL', SAVE, '0', 'rc:{demo|}*');
    for (let i = 0; i < 40; i++) { await w.write(); await h.sleep(30); }
    const win = await rt.replays(t, gw, 2, 'demo', { top: TOP }, { from: { seq: K - 10 }, speed: 1 });
    const feeds = await rt.replays(t, gw, 2, 'demo', { feed: true }, { from: { seq: K - 10 }, speed: 1 });
    const all = [...win.got, ...feeds.got];
    const shownPast = (msgs) => msgs.some((m) => (m.op === 'snapshot' ? m.at_seq : m.seq) > K + 3);
    await h.waitFor(() => all.every(shownPast), 30000, 'every replay to show moments past K');
    assert.ok(!all.some(rt.isLive), 'the replays are in progress');
    await redis.cli('EVAL', BACK, '0', 'rc:{demo|}*');
    // other changes at the lost seqs (another writer, other members)
    const w2 = rt.writer(gw, ws, 'demo', { top: TOP, pause: 20, prefix: 'n' });
    for (let i = 0; i < 10; i++) { await w2.write(); await h.sleep(30); }
    assert.equal(w2.last, K + 10, 'the board went back to K');
    await h.waitFor(() => all.every(rt.isLive), 60000, 'every replay to end');
    for (const [i, msgs] of all.entries()) {
      const li = msgs.findIndex((m) => m.op === 'live');
      const live = msgs[li];
      const lastShown = Math.max(...msgs.slice(0, li).map((m) => (m.op === 'snapshot' ? m.at_seq : m.seq)));
      assert.ok(lastShown > K, `replay ${i} showed moments past K`);
      // every moment shown is the original history's (none of the new changes under an old seq)
      for (const m of msgs.slice(0, li)) {
        if (m.op === 'snapshot' && m.rows.length) assert.deepEqual(rt.rowsOf(m.rows), w.states.get(m.at_seq), `replay ${i} at ${m.at_seq}`);
        if (m.op === 'event') assert.ok(!m.member.startsWith('n'), `replay ${i}: event ${m.seq} of the lost history`);
      }
      const brief = msgs.map((m) => `${m.op}:${m.at_seq ?? m.seq}${m.reset ? 'R' : ''}`).join(' ');
      assert.equal(live.reset, true, `replay ${i}: ${JSON.stringify(live)} after showing ${lastShown}: ${brief} (K ${K})`);
      assert.ok(live.seq >= K && live.seq <= w2.last, `replay ${i}: live at the board's present then (${live.seq})`);
    }
    // and live from there: the windows reach the board as it is now
    await h.waitFor(() => win.got.every((msgs) => JSON.stringify(rt.liveRows(msgs, TOP)) === JSON.stringify(w2.states.get(w2.last))),
      30000, 'the window replays, live, to reach the last change');
    assert.equal(await rt.metric(gw, 'rankcast_replay_resets_total'), all.length);
  });
