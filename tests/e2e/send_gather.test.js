/* send_gather.test.js - the plain send path's gathered writes (docs/gateway.md,
 * "The send path"): a connection without permessage-deflate that has several
 * messages waiting gets them in one write, and every frame arrives whole, in
 * order, as the same messages one write each would carry; with
 * permessage-deflate the same load goes one frame per write. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

async function counters(gw) {
  const text = (await h.http(gw.base, 'GET', '/metrics')).text;
  const get = (name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)[1]);
  return { writes: get('rankcast_frame_writes_total'), gathered: get('rankcast_frames_gathered_total') };
}

/* One connection with five views of demo; 40 writes, each changing every
 * view's rows, so each tick queues up to five deltas at once. Returns the
 * per-view sequences seen and the counters. */
async function fiveViews(t, perMessageDeflate) {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl, { perMessageDeflate });
  const seen = {};
  const subs = [];
  for (const n of [10, 9, 8, 7, 6]) {
    const snap = await c.request({ op: 'subscribe', board: 'demo', view: { top: n } });
    assert.equal(snap.op, 'snapshot');
    subs.push(snap.sub);
    seen[snap.sub] = [snap.seq];
  }
  c.ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.op === 'delta') seen[m.sub].push(m.seq);
  });
  const before = await counters(gw);
  for (let i = 1; i <= 40; i++) {
    // delta i + 100 moves the member to the top, so every view changes
    await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: `u${i}`, op: 'incr', delta: 100 + i });
  }
  await h.waitFor(() => subs.every((s) => seen[s][seen[s].length - 1] === seen[s][0] + 40), 5000,
    'every view to reach the last write');
  const after = await counters(gw);
  return { seen, subs, writes: after.writes - before.writes, gathered: after.gathered - before.gathered };
}

test('several deltas waiting for one plain connection go out in one write, whole and in order', { skip },
  async (t) => {
    const r = await fiveViews(t, false);
    for (const s of r.subs) {
      const q = r.seen[s];
      for (let i = 1; i < q.length; i++) assert.ok(q[i] > q[i - 1], `${s}: seqs in order ${q.join(',')}`);
    }
    const deltas = r.subs.reduce((n, s) => n + r.seen[s].length - 1, 0);
    assert.ok(r.gathered >= 2, `frames gathered: ${r.gathered}`);
    assert.ok(r.writes < deltas, `${r.writes} writes for ${deltas} deltas (and the writes' acks)`);
    t.diagnostic(`${deltas} deltas, ${r.writes} writes, ${r.gathered} frames gathered`);
  });

test('with permessage-deflate the same deltas go one frame per write', { skip }, async (t) => {
  const r = await fiveViews(t, true);
  assert.equal(r.gathered, 0);
  const deltas = r.subs.reduce((n, s) => n + r.seen[s].length - 1, 0);
  assert.ok(r.writes >= deltas, `${r.writes} writes for ${deltas} deltas`);
});
