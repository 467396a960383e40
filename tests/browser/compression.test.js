// permessage-deflate with a real browser: Chromium offers the extension on
// every WebSocket, the gateway (compression = on, as shipped) accepts it,
// and the page reads compressed messages (a top-100 snapshot and its deltas)
// and small ones sent in stored blocks (a pong), and its own messages
// (which Chromium compresses) are answered. The gateway's counters show the
// connection negotiated it and that messages went out compressed.
//
// Skips when the gateway binary has not been built; anything else that goes
// wrong (no Chromium, no extension, a message never arrives) fails.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');

const chromium = require('./chromium.js');

const { requireE2e } = chromium;
const h = requireE2e('./harness.js');

const skip = h.toolMissing(h.gatewayMissing());

async function metric(gw, name) {
  const res = await h.http(gw.base, 'GET', '/metrics');
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(res.text);
  assert.ok(m, `metric ${name} missing`);
  return Number(m[1]);
}

test('Chromium negotiates permessage-deflate and reads compressed and stored messages',
  { skip, timeout: 120000 }, async (t) => {
    const { gw } = await h.startStack(t);
    for (let i = 0; i < 120; i++) {
      const res = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores',
        { member: `user:${i}`, op: 'incr', delta: 1000 + i * 7 });
      assert.equal(res.status, 200, res.text);
    }
    const context = await chromium.launch(t);
    const page = await context.newPage();
    await page.goto(`${gw.base}/`);
    // The page opens its own socket and keeps what it reads.
    const ext = await page.evaluate(() => new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://${location.host}/ws`, 'rankcast.v1');
      window.got = [];
      ws.onmessage = (e) => window.got.push(JSON.parse(e.data));
      ws.onerror = () => reject(new Error('WebSocket error'));
      ws.onopen = () => {
        window.ws = ws;
        ws.send(JSON.stringify({ op: 'subscribe', id: 1, board: 'demo', view: { top: 100 } }));
        ws.send(JSON.stringify({ op: 'ping', id: 2 }));
        resolve(ws.extensions);
      };
    }));
    assert.match(ext, /^permessage-deflate/, `negotiated: '${ext}'`);
    const got = () => page.evaluate(() => window.got);
    // the pong can come before the snapshot (which waits for a Redis read): wait for both
    await h.waitFor(async () => { const g = await got(); return g.some((m) => m.id === 2) && g.some((m) => m.id === 1); },
      10000, 'the pong and the snapshot');
    const snap = (await got()).find((m) => m.id === 1);
    assert.equal(snap && snap.op, 'snapshot', JSON.stringify(snap));
    assert.equal(snap.rows.length, 100);
    const res = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:5', op: 'incr', delta: 5000 });
    assert.equal(res.status, 200, res.text);
    await h.waitFor(async () => (await got()).some((m) => m.op === 'delta' && m.rows.some((r) => r.member === 'user:5' && r.rank === 1)),
      10000, 'the delta showing user:5 first');
    // the dashboard page's own socket and ours
    assert.ok(await metric(gw, 'rankcast_deflate_connections_total') >= 1);
    assert.ok(await metric(gw, 'rankcast_deflate_compressed_total') >= 2, 'the snapshot and the delta went compressed');
    assert.ok(await metric(gw, 'rankcast_deflate_messages_total') >= 3, 'and the pong through the extension too');
    await page.evaluate(() => window.ws.close());
  });
