/* redis_backlog.test.js - a gateway whose loop turns are long (thousands
 * of views to tick: bench case M at 5,000 member lists, issue 26) keeps up
 * with what Redis sends it. A loop turn used to read one buffer (16 KB)
 * per Redis connection: at 2,000 writes/s and a tick of 150 ms the write
 * connection's replies fell behind by more each turn, the watchdog PING's
 * answer sat unread behind them for 3 s, and the gateway took Redis for
 * dead ("redis down: PING unanswered") and answered the writes in flight
 * `unavailable`. The test holds each tick 150 ms (RANKCAST_TEST_SLOW_TICK_MS,
 * test_clock only) and sends 12,000 writes over 24 connections, 500 in
 * flight each: every write is acked and Redis is never taken for dead. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

test('long loop turns: the write connection\'s replies are read as fast as they come, Redis is not taken for dead', { timeout: 180000 }, async (t) => {
  const config = h.configWith(t, {
    server: { test_clock: 'on' },
    limits: { conn_write_rate: '100000', conn_write_burst: '100000', max_pending: '2000' },
  });
  const { gw } = await h.startStack(t, { config, env: { RANKCAST_TEST_SLOW_TICK_MS: '150' } });
  await gw.waitForLine(/test fault: each tick holds the loop 150 ms/, 10000);
  const board = 'match:2627';
  const conns = await Promise.all(Array.from({ length: 24 }, () => h.connectWs(t, gw.wsUrl)));
  const viewer = await h.connectWs(t, gw.wsUrl); // (a view, so that ticks have a board to look at)
  const snap = await viewer.request({ op: 'subscribe', board, view: { top: 10 } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  const replies = (await Promise.all(conns.map((c, k) => h.requestAll(c.ws, Array.from({ length: 500 }, (_, i) =>
    ({ id: `w${k}-${i}`, op: 'incr', board, member: `m${(k * 500 + i) % 3000}`, delta: 1 })), 120000, { cork: true })))).flat();
  const bad = replies.filter((m) => m.op !== 'ack');
  assert.equal(bad.length, 0, `${bad.length} of ${replies.length} writes not acked; first: ${JSON.stringify(bad[0])}`);
  const down = gw.stderr.filter((l) => /redis down/.test(l));
  assert.deepEqual(down, [], 'Redis taken for dead');
});
