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
 * tests/fanout/test_fanout.c.
 *
 * Quiet is per board (core/rc_edge.h: nothing went out for that board for a
 * tick), so the sparse writes go to three boards of their own, a third of a
 * tick apart, and the burst to a fourth, all after one quiet tick: the same
 * phases and the same checks as one board written in turn, without waiting
 * out a quiet tick before each. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const TICK_MS = 5000;
const SPARSE = ['match:edge0', 'match:edge1', 'match:edge2'];
const BURST = 'demo';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('a write to a quiet board reaches its viewer at once; the writes after it coalesce into the next tick',
  { timeout: 120000 }, async (t) => {
    const config = h.configWith(t, { server: { tick: `${TICK_MS}ms` } });
    const { gw } = await h.startStack(t, { config });
    const writer = await h.connectWs(t, gw.wsUrl);
    let score = 1000;
    const write = async (board, member) => {
      const sent = Date.now();
      const r = await writer.request({ op: 'incr', board, member, delta: ++score }, 10000);
      assert.equal(r.op, 'ack', JSON.stringify(r));
      return { sent, seq: r.seq };
    };

    // One viewer per board, each of its deltas recorded and applied.
    const watch = async (board) => {
      await write(board, 'seed');
      const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
      const snap = await viewer.request({ op: 'subscribe', board, view: { top: 10 } }, 10000);
      assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
      let rows = snap.rows;
      const deltas = []; // { at, seq, n }
      viewer.ws.on('message', (data) => {
        const m = JSON.parse(data.toString());
        if (m.sub !== snap.sub || m.op !== 'delta') return;
        deltas.push({ at: Date.now(), seq: m.seq, n: m.rows.length });
        rows = applyDelta(rows, m, 1, 10);
        assert.ok(rows, `a delta of ${board} that does not apply: ${JSON.stringify(m)}`);
      });
      return { board, deltas };
    };
    const views = [];
    for (const b of [...SPARSE, BURST]) views.push(await watch(b));
    const seen = (v, seq) => h.waitFor(() => v.deltas.some((d) => d.seq >= seq), 3 * TICK_MS + 5000,
      `the delta of ${v.board} seq ${seq}`);

    // Every board quiet for more than a tick.
    await sleep(TICK_MS + 200);
    const t0 = Date.now();

    // Sparse writes, a third of a tick apart: each lands on a quiet board.
    const sparse = (v, i) => (async () => {
      await sleep(t0 + Math.round((TICK_MS / 3) * i) - Date.now());
      const w = await write(v.board, `sparse${i}`);
      await h.waitFor(() => v.deltas.some((d) => d.seq >= w.seq), TICK_MS / 2,
        `the delta of sparse write ${i} to ${v.board} (seq ${w.seq}) before half a tick`);
      return v.deltas.find((d) => d.seq >= w.seq).at - w.sent;
    })();

    // A burst: the first goes at once, the rest wait for the tick after the
    // one that ends this period, and go as one delta.
    const burst = async (v) => {
      const before = v.deltas.length;
      const first = await write(v.board, 'burst0');
      await seen(v, first.seq);
      const lead = v.deltas.find((d) => d.seq >= first.seq);
      let last = first;
      for (let i = 1; i <= 3; i++) last = await write(v.board, `burst${i}`);
      await seen(v, last.seq);
      return { before, first, lead, last };
    };

    const [waits, b] = await Promise.all([
      Promise.all(views.slice(0, SPARSE.length).map(sparse)),
      burst(views[SPARSE.length]),
    ]);
    t.diagnostic(`write-to-delta of sparse writes (ms): ${waits.join(', ')} (tick ${TICK_MS} ms)`);

    const bv = views[SPARSE.length];
    const after = bv.deltas.slice(b.before);
    t.diagnostic(`burst deltas: ${after.map((d) => `seq ${d.seq} (${d.n} rows) at +${d.at - b.first.sent} ms`).join('; ')}`);
    assert.equal(after.length, 2, 'the leading delta and one coalesced delta');
    assert.equal(after[0], b.lead);
    assert.equal(after[1].seq, b.last.seq);
    assert.equal(after[1].n, 3, 'the three writes after the first in one delta');
    assert.ok(after[1].at - b.lead.at >= TICK_MS * 0.5, `the coalesced delta came ${after[1].at - b.lead.at} ms after the first`);

    // Never two deltas of a view much less than a tick apart.
    for (const v of views) {
      for (let i = 1; i < v.deltas.length; i++)
        assert.ok(v.deltas[i].at - v.deltas[i - 1].at >= TICK_MS * 0.5, `${v.board}: deltas ${v.deltas[i].at - v.deltas[i - 1].at} ms apart`);
    }
  });
