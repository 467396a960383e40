/* replay_share.test.js - many replays of one board at once share their
 * reads (docs/history.md, "Replays of one board share their reads"),
 * through the real gateway on one real Redis, with writes going on:
 * - 20 connections replay the same range of a window view at once: the
 *   Redis reads made for replays (rankcast_replay_redis_reads_total) stay
 *   about what one replay of that range makes, not 20 times it; every
 *   replay is exact at every moment it shows and goes live with no gap and
 *   no repeat;
 * - the same with 20 feed replays: every event once, in order, across the
 *   switch to live, and about one replay's log reads;
 * - replays that share reads each pay their own from their connection's
 *   read budget (a step costs what a lone replay's read costs). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const rt = require('./replay_tool');

const skip = h.toolMissing(h.gatewayMissing());
const N = 20;
const TOP = 10;

/* One replay alone on gateway `alone`, and N at once on gateway `gw`, of
 * the same range, while the writer runs (two gateways on one Redis: the N
 * cannot take what the lone one read). Returns the Redis reads each
 * gateway made for them; check() checks every connection's messages. */
async function loneAndMany(t, alone, gw, w, view, replay, check) {
  const reads = async (g) => rt.metric(g, 'rankcast_replay_redis_reads_total');
  const a0 = await reads(alone);
  const b0 = await reads(gw);
  assert.equal(typeof b0, 'number', 'rankcast_replay_redis_reads_total is exported');
  const lone = await rt.replays(t, alone, 1, 'demo', view, replay);
  const many = await rt.replays(t, gw, N, 'demo', view, replay);
  await h.waitFor(() => rt.isLive(lone.got[0]), 60000, 'the lone replay to go live');
  await h.waitFor(() => many.got.every(rt.isLive), 60000, `the ${N} replays to go live`);
  const reads1 = (await reads(alone)) - a0;
  const readsN = (await reads(gw)) - b0;
  await w.stop();
  await check([...lone.got, ...many.got]);
  return { reads1, readsN };
}

test(`${N} replays of one window range at once share their reads: about one replay's reads, each exact and live with no gap or repeat`,
  { skip, timeout: 180000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const alone = await h.startGateway(t, { redisPort: redis.port });
    const ws = await h.connectWs(t, gw.wsUrl);
    const w = rt.writer(gw, ws, 'demo', { top: TOP, pause: 25 });
    for (let i = 0; i < 80; i++) { await w.write(); await h.sleep(25); }
    w.run(); // writes go on during the replays, until they are checked
    const { reads1, readsN } = await loneAndMany(t, alone, gw, w, { top: TOP }, { from: { seq: 5 }, speed: 2 }, async (all) => {
      await h.waitFor(() => all.every((msgs) => JSON.stringify(rt.liveRows(msgs, TOP)) === JSON.stringify(w.states.get(w.last))),
        30000, 'every replay, live, to reach the last change');
      all.forEach((msgs, i) => rt.checkWindow(msgs, w.states, 5, TOP, w.last, `replay ${i}`));
    });
    const shared = await rt.metric(gw, 'rankcast_replay_reads_shared_total');
    t.diagnostic(`Redis reads for replays: one replay ${reads1}, ${N} at once ${readsN}; shared ${shared}`);
    assert.ok(reads1 >= 5, `the lone replay read several moments (${reads1})`);
    // unshared, the N would make about N x reads1
    assert.ok(readsN <= 3 * reads1 + 5, `${N} replays made ${readsN} Redis reads, one alone ${reads1}`);
    assert.ok(shared > 0, 'reads were shared');
  });

test(`${N} feed replays of one range at once share their log reads: every event once across the switch to live`,
  { skip, timeout: 180000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const alone = await h.startGateway(t, { redisPort: redis.port });
    const ws = await h.connectWs(t, gw.wsUrl);
    const events = await rt.referenceFeed(t, gw, 'demo');
    const w = rt.writer(gw, ws, 'demo', { top: 1, pause: 25 });
    for (let i = 0; i < 80; i++) { await w.write(); await h.sleep(25); }
    w.run();
    const { reads1, readsN } = await loneAndMany(t, alone, gw, w, { feed: true }, { from: { seq: 5 }, speed: 2 }, async (all) => {
      await h.waitFor(() => events.has(w.last) && all.every((msgs) => msgs.some((m) => m.op === 'event' && m.seq === w.last)),
        30000, 'every replay, live, to reach the last change');
      all.forEach((msgs, i) => rt.checkFeed(msgs, events, 5, w.last, `feed replay ${i}`));
    });
    t.diagnostic(`Redis reads for feed replays: one replay ${reads1}, ${N} at once ${readsN}`);
    assert.ok(readsN <= 3 * reads1 + 5, `${N} feed replays made ${readsN} Redis reads, one alone ${reads1}`);
  });

test('replays that share their reads still each pay theirs from their connection\'s read budget', { skip, timeout: 180000 }, async (t) => {
  const RATE = 3;
  const BURST = 4;
  const config = h.configWith(t, { limits: { conn_read_rate: RATE, conn_read_burst: BURST } });
  const { gw } = await h.startStack(t, { config });
  const ws = await h.connectWs(t, gw.wsUrl);
  const w = rt.writer(gw, ws, 'demo', { top: TOP, pause: 25 });
  for (let i = 0; i < 60; i++) { await w.write(); await h.sleep(25); }
  const t0 = Date.now();
  const many = await rt.replays(t, gw, 5, 'demo', { top: TOP }, { from: { seq: 5 }, speed: 2 });
  const liveAt = many.got.map(() => 0);
  await h.waitFor(() => {
    many.got.forEach((msgs, i) => { if (!liveAt[i] && rt.isLive(msgs)) liveAt[i] = Date.now(); });
    return liveAt.every((x) => x > 0);
  }, 90000, 'the replays to go live');
  await h.waitFor(() => many.got.every((msgs) => JSON.stringify(rt.liveRows(msgs, TOP)) === JSON.stringify(w.states.get(w.last))),
    30000, 'every replay, live, to reach the last change');
  many.got.forEach((msgs, i) => rt.checkWindow(msgs, w.states, 5, TOP, w.last, `replay ${i}`));
  const shared = await rt.metric(gw, 'rankcast_replay_reads_shared_total');
  const waited = await rt.metric(gw, 'rankcast_replay_reads_waited_total');
  assert.ok(shared > 0, 'the replays shared reads');
  assert.ok(waited > 0, 'replays waited for their connections\' tokens');
  // each step a replay shows was paid from its own connection's bucket:
  // no more steps than the burst and the refill over its time allow
  // (were shared steps free, each would step every tick)
  for (const [i, msgs] of many.got.entries()) {
    const steps = msgs.slice(0, msgs.findIndex((m) => m.op === 'live')).length;
    const allowed = BURST + RATE * (liveAt[i] - t0) / 1000 + 2;
    assert.ok(steps <= allowed, `replay ${i}: ${steps} steps in ${liveAt[i] - t0} ms, at most ${allowed.toFixed(1)} paid for`);
  }
  t.diagnostic(`5 replays on ${RATE}/s budgets: steps ${many.got.map((m) => m.findIndex((x) => x.op === 'live')).join(',')}, shared ${shared}, waited ${waited}`);
});
