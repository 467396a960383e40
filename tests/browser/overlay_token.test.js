// The dashboard hands an OBS overlay its own read-only token: with
// [auth] reads = key, the dashboard (opened with a key that writes) gets a
// token from `rankcast token --scope read --board demo` pasted into its
// "Overlay token" field; the overlay link then carries that token, not the
// page's key, and the overlay opened from it shows the live board.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');

const chromium = require('./chromium.js');

const { requireE2e } = chromium;
const h = requireE2e('./harness.js');

const SECRET = 'browser-jwt-secret-0123456789abcdef0123';

async function launch(t) {
  return chromium.launch(t);
}

test('dashboard: the overlay link carries a pasted read-only token, and the overlay reads with it',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 90000 }, async (t) => {
    const config = h.configWith(t, { auth: { reads: 'key', jwt_secret: SECRET } });
    const { gw } = await h.startStack(t, { config });
    const res = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:obs', op: 'incr', delta: 42 });
    assert.equal(res.status, 200, res.text);
    const made = spawnSync(h.gatewayBin(), ['token', '--scope', 'read', '--board', 'demo', '--ttl', '1d'],
      { cwd: h.repoRoot, env: { ...process.env, RANKCAST_JWT_SECRET: SECRET }, encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const jwt = made.stdout.trim();

    const context = await launch(t);
    const page = await context.newPage();
    await page.goto(`${gw.base}/?board=demo&top=10&token=${encodeURIComponent(h.ADMIN_KEY)}`);
    await page.waitForSelector('#table tbody tr[data-member="user:obs"]', { timeout: 10000 });
    await page.fill('#overlay-token', jwt);
    const href = await page.getAttribute('#overlay-link', 'href');
    const q = new URLSearchParams(href.replace(/^\?/, ''));
    assert.equal(q.get('token'), jwt);
    assert.equal(q.get('overlay'), '1');
    assert.equal(q.get('board'), 'demo');
    assert.ok(!href.includes(encodeURIComponent(h.ADMIN_KEY)), 'the page\'s own key leaked into the overlay link');

    const overlay = await context.newPage();
    const errors = [];
    overlay.on('pageerror', (e) => errors.push(e.message));
    await overlay.goto(gw.base + '/' + href);
    await overlay.waitForSelector('#table tbody tr[data-member="user:obs"]', { timeout: 10000 });
    const more = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:obs2', op: 'incr', delta: 99 });
    assert.equal(more.status, 200, more.text);
    await overlay.waitForSelector('#table tbody tr[data-member="user:obs2"]', { timeout: 10000 });
    assert.deepEqual(errors, []);
  });
