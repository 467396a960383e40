// The dashboard in a real browser against a real gateway and Redis: a score
// written through REST shows up in the live table (how long it took is
// reported; the deadline is generous, for a loaded machine), and the overlay
// mode renders chrome-free on a transparent page. Screenshots go to
// tests/artifacts/ (dashboard.png, overlay.png) for a person to look at.
//
// Skips when the gateway binary has not been built; anything else that goes
// wrong (no Chromium, gateway fails to start, row never shows) fails.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

// playwright-core is installed with the e2e tests' package (tests/e2e).
const chromium = require('./chromium.js');

const { requireE2e } = chromium;
const h = requireE2e('./harness.js');

const ARTIFACTS = path.join(h.repoRoot, 'tests', 'artifacts');

async function launch(t) {
  return chromium.launch(t);
}

// Collects what the page reports as broken, so a script error fails the test
// instead of showing up only as a missing row.
function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  return errors;
}

const rowOf = (member) => `#table tbody tr[data-member="${member}"]`;

test('dashboard: a REST write appears in the live table; overlay renders',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 90000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const context = await launch(t);
    fs.mkdirSync(ARTIFACTS, { recursive: true });

    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(gw.base + '/?board=demo&top=10');
    await page.waitForFunction(() => document.getElementById('conn').dataset.state === 'open', null, { timeout: 5000 });
    // The first snapshot has arrived once the stats line shows the board's seq.
    await page.waitForFunction(() => /seq \d+/.test(document.getElementById('stats').textContent), null, { timeout: 5000 });
    assert.equal(await page.inputValue('#board'), 'demo');
    assert.equal(await page.inputValue('#top'), '10');

    const res = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores',
      { member: 'user:browser', op: 'incr', delta: 123 });
    assert.ok(res.status >= 200 && res.status < 300, `write answered ${res.status}: ${res.text}`);
    assert.equal(res.body.op, 'ack');
    assert.equal(res.body.score, 123);

    const writtenAt = Date.now();
    await page.waitForSelector(rowOf('user:browser'), { timeout: 10000 });
    t.diagnostic(`the row appeared ${Date.now() - writtenAt} ms after the write was acknowledged`);
    const cells = await page.$$eval(`${rowOf('user:browser')} td`, (tds) => tds.map((td) => td.textContent));
    assert.equal(cells[0].replace(/(?:[↑↓]\d+|NEW)$/, ''), String(res.body.rank));
    assert.match(cells[1], /user:browser/);
    assert.equal(cells[2], '123');
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });

    const overlay = await context.newPage();
    const overlayErrors = watchErrors(overlay);
    await overlay.goto(gw.base + '/?overlay=1&board=demo&top=10');
    await overlay.waitForSelector(rowOf('user:browser'), { timeout: 5000 });
    for (const chrome of ['.bar', '.picker', '.console']) assert.equal(await overlay.isHidden(chrome), true, chrome);
    const background = await overlay.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, 'rgba(0, 0, 0, 0)');
    await overlay.screenshot({ path: path.join(ARTIFACTS, 'overlay.png'), omitBackground: true });

    assert.deepEqual(errors, []);
    assert.deepEqual(overlayErrors, []);
  });
