/* selftest.test.js - the chaos checker catches what it claims against a
 * really broken gateway (issue 25), not just doctored histories
 * (checker.test.js): a short chaos run (single Redis, no faults) against a
 * gateway with one of its test-only faults in force (gateway/base/gw_fault.h,
 * honoured only with [server] test_clock = on, which the chaos config sets),
 * then the checker over the history must report a violation of that kind:
 *
 *   RANKCAST_TEST_ACK_EARLY=K        every Kth write acked before (and
 *                                    without) its script's reply
 *                                    -> "an acked write is missing"
 *   RANKCAST_TEST_DROP_DELTA_ROW=K   every Kth delta loses its first row
 *                                    -> a view differs from the truth (or a
 *                                       wrong prev_rank against the view)
 *   RANKCAST_TEST_DROP_EVENTS + RANKCAST_TEST_NO_GAP_FILL
 *                                    change events lost, feeds forward past
 *                                    the gap -> "expected seq N, got M"
 *
 * Each run is 12 s of writes plus start and drain (about 30 s on a 2-core
 * machine, mostly waiting: start, quiet points, drain). The three runs are
 * independent processes with their own Redis and gateways, so they start
 * together when the first test needs one (runs()) and each test judges its
 * own: about 40 s for the three instead of 96 one after another. The clean
 * run's 0 violations is the chaos stage's job (tests/chaos/run.sh in
 * .ci/run). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('../e2e/harness');
const { readHistory } = require('./history');
const { check } = require('./checker');

const skip = h.toolMissing(h.gatewayMissing());
const SEED = 20261127;

// A chaos run with env added to the gateways' environment; its verdict.
function brokenRun(name, env) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rankcast-selftest-${name}-`));
  const out = path.join(dir, 'history.jsonl');
  const args = [path.join(__dirname, 'chaos.js'), '--mode', 'single', '--seconds', '12', '--seed', String(SEED),
    '--quiet-every', '6', '--faults', '0', '--out', out];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env: Object.assign({}, process.env, env), timeout: 240000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`the chaos run with ${JSON.stringify(env)} failed: ${err.message}\n${stderr}`));
      const res = check(readHistory(out));
      fs.rmSync(dir, { recursive: true, force: true });
      resolve(res);
    });
  });
}

const FEED_BOARDS = ['demo', 'global', 'burst', 'arena', 'chaos_sprint'];
const BROKEN = {
  ack: { RANKCAST_TEST_ACK_EARLY: '20' },
  delta: { RANKCAST_TEST_DROP_DELTA_ROW: '5' },
  feed: {
    RANKCAST_TEST_DROP_EVENTS: FEED_BOARDS.flatMap((b) => [`${b}:15`, `${b}:40`, `${b}:70`]).join(','),
    RANKCAST_TEST_NO_GAP_FILL: '1',
  },
};

// The three broken runs, started together once (by the first test that asks).
let started = null;
function runs() {
  if (!started) {
    started = {};
    for (const [name, env] of Object.entries(BROKEN)) {
      started[name] = brokenRun(name, env);
      started[name].catch(() => {}); // judged by its own test; not an unhandled rejection meanwhile
    }
  }
  return started;
}

const whats = (res) => res.violations.map((v) => v.what.split('\n')[0]);

function assertCaught(t, res, re, what) {
  const kinds = [...new Set(whats(res).map((w) => w.replace(/[0-9]+/g, 'N')))];
  t.diagnostic(`${res.acked} writes acked, ${res.checks} checks, ${res.violations.length} violations: ${kinds.join(' | ')}`);
  assert.ok(res.acked > 50, `the run made writes (${res.acked} acked)`);
  assert.ok(whats(res).some((w) => re.test(w)), `${what}: the checker did not report it; it said: ${kinds.join(' | ') || 'nothing'}`);
}

test('an ack sent before the script\'s reply is caught: acked writes missing', { skip, timeout: 300000 }, async (t) => {
  const res = await runs().ack;
  assertCaught(t, res, /final score \d+, acked writes say .*\(an acked write is missing\)/, 'early acks');
});

test('a dropped delta row is caught: a view differs from the truth', { skip, timeout: 300000 }, async (t) => {
  const res = await runs().delta;
  assertCaught(t, res, /differs from the truth at a quiet point|was at rank \d+ in the view, delta says prev_rank/, 'dropped delta rows');
});

test('a lost feed event forwarded past its gap is caught: a skipped seq', { skip, timeout: 300000 }, async (t) => {
  const res = await runs().feed;
  assertCaught(t, res, /feed on \S+: expected seq \d+, got \d+ \(no reset\)|delivered up to seq \d+ at a quiet point/, 'lost feed events');
});
