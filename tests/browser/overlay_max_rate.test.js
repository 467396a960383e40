// The overlay passes &max_rate= through to its subscribe: an OBS overlay
// opened with ?overlay=1&board=demo&top=10&max_rate=2 subscribes with
// "max_rate": 2 (and shows the live board); a value the server refuses
// (max_rate=0) is shown as the server's bad_request, not changed or dropped.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');

const chromium = require('./chromium.js');

const { requireE2e } = chromium;
const h = requireE2e('./harness.js');

async function launch(t) {
  return chromium.launch(t);
}

/* The subscribe frames a page sends, parsed. */
function subscribesOf(page) {
  const sent = [];
  page.on('websocket', (ws) => ws.on('framesent', (f) => {
    try {
      const m = JSON.parse(f.payload);
      if (m.op === 'subscribe') sent.push(m);
    } catch (e) { /* not JSON: not ours */ }
  }));
  return sent;
}

test('overlay: &max_rate= goes into the subscribe; a refused value shows the server\'s error',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 90000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const res = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:obs', op: 'incr', delta: 42 });
    assert.equal(res.status, 200, res.text);
    const key = encodeURIComponent(h.ADMIN_KEY);
    const context = await launch(t);

    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const sent = subscribesOf(page);
    await page.goto(`${gw.base}/?overlay=1&board=demo&top=10&max_rate=2&token=${key}`);
    await page.waitForSelector('#table tbody tr[data-member="user:obs"]', { timeout: 10000 });
    assert.equal(sent.length >= 1, true);
    assert.equal(sent[0].max_rate, 2, JSON.stringify(sent[0]));
    const more = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:obs2', op: 'incr', delta: 99 });
    assert.equal(more.status, 200, more.text);
    await page.waitForSelector('#table tbody tr[data-member="user:obs2"]', { timeout: 10000 });
    assert.deepEqual(errors, []);

    const plain = await context.newPage();
    const plainSent = subscribesOf(plain);
    await plain.goto(`${gw.base}/?overlay=1&board=demo&top=10&token=${key}`);
    await plain.waitForSelector('#table tbody tr[data-member="user:obs"]', { timeout: 10000 });
    assert.equal('max_rate' in plainSent[0], false, JSON.stringify(plainSent[0]));

    const bad = await context.newPage();
    const badSent = subscribesOf(bad);
    await bad.goto(`${gw.base}/?overlay=1&board=demo&top=10&max_rate=0&token=${key}`);
    try {
      await bad.waitForFunction(() => /bad_request: .*max_rate/.test(document.getElementById('empty').textContent),
        null, { timeout: 10000 });
    } catch (e) {
      const shown = await bad.evaluate(() => document.getElementById('empty').textContent);
      throw new Error(`the overlay shows "${shown}", not the bad_request; sent ${JSON.stringify(badSent)}`);
    }
    assert.equal(await bad.isVisible('#empty'), true, 'the overlay hides the error');
    assert.equal(badSent[0].max_rate, 0);
  });
