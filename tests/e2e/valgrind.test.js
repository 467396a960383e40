/* valgrind.test.js - a start, serve, stop cycle of the gateway under
 * valgrind's memcheck: no invalid access, nothing definitely or indirectly
 * lost. Skipped in the sanitizer pass (RC_SANITIZE), which cannot run under
 * valgrind and checks the same things its own way. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const h = require('./harness');

function valgrindMissing() {
  if (process.env.RC_SANITIZE) return 'sanitizer build: valgrind does not apply';
  try { execFileSync('valgrind', ['--version']); } catch { return h.toolMissing('valgrind is not installed'); }
  return h.toolMissing(h.gatewayMissing());
}

test('start, serve and stop under valgrind: no errors, no leaks', { skip: valgrindMissing() || false, timeout: 180000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-vg-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'valgrind.log');
  const wrapper = path.join(dir, 'rankcast-vg');
  fs.writeFileSync(wrapper, `#!/bin/sh\nexec valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect ` +
    `--show-leak-kinds=definite,indirect --error-exitcode=99 --log-file=${log} ${h.gatewayBin()} "$@"\n`);
  fs.chmodSync(wrapper, 0o755);
  const { redis, gw } = await h.startStack(t, { bin: wrapper, timeoutMs: 60000 });

  // Serve a little of everything: views of each kind, writes, a profile, a
  // slow path (around), an error, REST reads, then clients still connected at stop.
  const c = await h.connectWs(t, gw.wsUrl);
  for (const view of [{ top: 5 }, { offset: 2, limit: 3 }, { around: 'user:1', radius: 1 }, { feed: true }])
    assert.equal((await c.request({ op: 'subscribe', board: 'demo', view }, 20000)).op, 'snapshot');
  for (let i = 0; i < 20; i++)
    assert.equal((await c.request({ op: 'incr', board: 'demo', member: `user:${i % 4}`, delta: i }, 20000)).op, 'ack');
  await h.http(gw.base, 'PUT', '/api/v1/members/user:1/profile', { name: 'One' }, { timeoutMs: 20000 });
  await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=3', undefined, { timeoutMs: 20000 });
  await c.request({ op: 'incr', board: 'nope', member: 'x', delta: 1 }, 20000);
  await c.next({ op: 'delta' }, 20000);

  const exit = await gw.stop();
  const report = fs.readFileSync(log, 'utf8');
  assert.equal(exit.code, 0, `valgrind reported:\n${report}`);
  assert.equal(report.trim(), '', report);
  assert.equal(await redis.cli('PING'), 'PONG');
});
