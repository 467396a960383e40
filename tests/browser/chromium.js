/* chromium.js - the one way the browser tests start Chromium: Debian's
 * /usr/bin/chromium through playwright-core (never `npx playwright
 * install`), headless, in a fresh profile directory removed when the test
 * ends (after the browser closes). */
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createRequire } = require('node:module');

const requireE2e = createRequire(path.join(__dirname, '..', 'e2e', 'package.json'));
const h = requireE2e('./harness.js');

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'];

/* A persistent context for test t; opts.viewport (default 1360x820). */
async function launch(t, opts = {}) {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`);
  const { chromium } = requireE2e('playwright-core');
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-chromium-'));
  h.defer(t, () => fs.rmSync(userDataDir, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: opts.viewport === undefined ? { width: 1360, height: 820 } : opts.viewport,
  });
  h.defer(t, () => context.close()); // runs before the profile dir goes (defers run last first)
  return context;
}

module.exports = { launch, CHROMIUM, CHROMIUM_ARGS, requireE2e, h };
