#!/usr/bin/env node
/* delta_allocs.js - heap allocations per view per tick (BENCHMARKS.md,
 * "Allocations per view per tick"): what the fan-out spends on one window
 * view's delta, counted by tests/bench/alloc_count.c preloaded into the
 * gateway.
 *
 *   cc -shared -fPIC -O2 -o /tmp/alloc_count.so tests/bench/alloc_count.c
 *   RC_ALLOC_SHIM=/tmp/alloc_count.so RANKCAST_BIN=build/gateway/rankcast \
 *     node tests/bench/delta_allocs.js [--writes W] [--views 1,41]
 *
 * For each view count V: a real redis-server and gateway, a board of 100
 * members, V viewers each on its own connection and view (top 10, top 11,
 * ...: V distinct views of the mirror), 20 warm-up writes, then W writes
 * one after another, each waiting until every viewer has the delta it made
 * (one write per tick). Each write sets a member from below every window
 * to the top score, so every view sends a delta whose new row comes from
 * outside its window (prev_rank from the board's events) and whose last row
 * is removed. The gateway's malloc + calloc + realloc calls during the W
 * writes, divided by W, is its cost per tick with V views; the difference
 * between two view counts, divided by the difference in views, is the cost
 * of one view per tick (encoding and queueing its message included; the
 * write itself, the ack and the mirror are the same for every V and cancel
 * out). Prints one JSON line. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('../e2e/harness');

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
}
const WRITES = Number(arg('writes', 200));
const VIEWS = String(arg('views', '1,41')).split(',').map(Number);
const SHIM = process.env.RC_ALLOC_SHIM;
const WARMUP = 20;
const MEMBERS = 100;

const count = (file) => Number(fs.readFileSync(file).readBigUInt64LE(0));

async function perTick(t, nviews) {
  const file = path.join(os.tmpdir(), `rc-allocs-${process.pid}-${nviews}`);
  fs.writeFileSync(file, Buffer.alloc(8));
  h.defer(t, () => fs.rmSync(file, { force: true }));
  const { gw } = await h.startStack(t, { env: { LD_PRELOAD: SHIM, RC_ALLOC_COUNT_FILE: file } });
  const board = 'match:allocs';
  const c = await h.connectWs(t, gw.wsUrl);
  let top = 1000;
  let next = 0;
  const set = async (member, value) => {
    const ack = await c.request({ op: 'set', board, member, value, req: `a${next++}` }, 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    return ack;
  };
  for (let i = 0; i < MEMBERS; i++) await set(`m${i}`, i + 1); // m99 on top, m0 last
  const viewers = [];
  for (let k = 0; k < nviews; k++) {
    const conn = await h.connectWs(t, gw.wsUrl);
    const snap = await conn.request({ op: 'subscribe', board, view: { top: 10 + k } }, 10000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    const v = { seq: snap.seq, deltas: 0, snapshots: 0 };
    conn.ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.sub !== snap.sub) return;
      if (m.op === 'delta') v.deltas++;
      else if (m.op === 'snapshot') v.snapshots++;
      if (typeof m.seq === 'number') v.seq = m.seq;
    });
    viewers.push(v);
  }
  // m0, m1, ... (the bottom of the board, below every window) each jump to the top
  const jump = async (i) => {
    const ack = await set(`m${i % MEMBERS}`, ++top);
    await h.waitFor(() => viewers.every((v) => v.seq >= ack.seq), 15000, `every viewer at seq ${ack.seq}`);
  };
  let i = 0;
  for (; i < WARMUP; i++) await jump(i);
  const deltas0 = viewers.reduce((s, v) => s + v.deltas, 0);
  const before = count(file);
  for (; i < WARMUP + WRITES; i++) await jump(i);
  const allocs = count(file) - before;
  const deltas = viewers.reduce((s, v) => s + v.deltas, 0) - deltas0;
  const snapshots = viewers.reduce((s, v) => s + v.snapshots, 0);
  assert.equal(deltas, WRITES * nviews, 'every write reached every view as a delta');
  assert.equal(snapshots, 0, 'no view fell back to a snapshot');
  return allocs / WRITES;
}

test('heap allocations per view per tick', { timeout: 600000 }, async (t) => {
  assert.ok(SHIM && fs.existsSync(SHIM), 'RC_ALLOC_SHIM names the built alloc_count.so');
  const perV = {};
  for (const v of VIEWS) {
    await t.test(`${v} views`, async (tt) => {
      perV[v] = await perTick(tt, v);
    });
  }
  const [a, b] = VIEWS;
  const out = { writes: WRITES, per_tick: perV, per_view_per_tick: (perV[b] - perV[a]) / (b - a) };
  console.log(JSON.stringify(out));
});
