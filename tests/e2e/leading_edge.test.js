/* leading_edge.test.js - the leading edge of the coalescing tick (issue 13;
 * docs/gateway.md, "The send path"), with a real redis-server and the real
 * gateway. The tick is set to 5 s so that what the edge changes is far
 * bigger than any delay a loaded machine adds: a write to a quiet board
 * reaches its viewer without waiting for the tick (each of several sparse
 * writes, at different phases of the tick, is awaited as a condition with a
 * generous deadline of half a tick, where waiting for the tick would take
 * 2.5 s on average; the times are reported), and the writes that follow it
 * within the tick period reach the viewer as one delta, no sooner than half
 * a tick after the first. The
 * mechanism itself is proven without timing in tests/unit/test_edge.c and
 * tests/fanout/test_fanout.c. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const BOARD = 'demo';
const TICK_MS = 5000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('a write to a quiet board reaches its viewer at once; the writes after it coalesce into the next tick',
  { timeout: 120000 }, async (t) => {
    const config = h.configWith(t, { server: { tick: `${TICK_MS}ms` } });
    const { gw } = await h.startStack(t, { config });
    const writer = await h.connectWs(t, gw.wsUrl);
    let score = 1000;
    const write = async (member) => {
      const sent = Date.now();
      const r = await writer.request({ op: 'incr', board: BOARD, member, delta: ++score }, 10000);
      assert.equal(r.op, 'ack', JSON.stringify(r));
      return { sent, seq: r.seq };
    };
    await write('seed');

    const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
    const snap = await viewer.request({ op: 'subscribe', board: BOARD, view: { top: 10 } }, 10000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    let rows = snap.rows;
    const deltas = []; // { at, seq, rows }
    viewer.ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.sub !== snap.sub || m.op !== 'delta') return;
      deltas.push({ at: Date.now(), seq: m.seq, n: m.rows.length });
      rows = applyDelta(rows, m, 1, 10);
      assert.ok(rows, `a delta that does not apply: ${JSON.stringify(m)}`);
    });
    const seen = (seq) => h.waitFor(() => deltas.some((d) => d.seq >= seq), 3 * TICK_MS + 5000, `the delta of seq ${seq}`);

    // Sparse writes: each lands on a board quiet for more than a tick.
    await sleep(TICK_MS + 200);
    const waits = [];
    for (let i = 0; i < 3; i++) {
      const w = await write(`sparse${i}`);
      await h.waitFor(() => deltas.some((d) => d.seq >= w.seq), TICK_MS / 2,
        `the delta of sparse write ${i} (seq ${w.seq}) before half a tick (earlier ones: ${waits.join(', ')} ms)`);
      waits.push(deltas.find((d) => d.seq >= w.seq).at - w.sent);
      await sleep(TICK_MS + 200 + 1667 * i); // quiet again, at another phase of the tick
    }
    t.diagnostic(`write-to-delta of sparse writes (ms): ${waits.join(', ')} (tick ${TICK_MS} ms)`);

    // A burst: the first goes at once, the rest wait for the tick after the
    // one that ends this period, and go as one delta.
    const before = deltas.length;
    const first = await write('burst0');
    await seen(first.seq);
    const lead = deltas.find((d) => d.seq >= first.seq);
    let last = first;
    for (let i = 1; i <= 3; i++) last = await write(`burst${i}`);
    await seen(last.seq);
    const after = deltas.slice(before);
    t.diagnostic(`burst deltas: ${after.map((d) => `seq ${d.seq} (${d.n} rows) at +${d.at - first.sent} ms`).join('; ')}`);
    assert.equal(after.length, 2, 'the leading delta and one coalesced delta');
    assert.equal(after[1].seq, last.seq);
    assert.equal(after[1].n, 3, 'the three writes after the first in one delta');
    assert.ok(after[1].at - lead.at >= TICK_MS * 0.5, `the coalesced delta came ${after[1].at - lead.at} ms after the first`);

    // Never two deltas of the view much less than a tick apart.
    for (let i = 1; i < deltas.length; i++)
      assert.ok(deltas[i].at - deltas[i - 1].at >= TICK_MS * 0.5, `deltas ${deltas[i].at - deltas[i - 1].at} ms apart`);
  });
