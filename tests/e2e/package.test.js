/* package.test.js - the .deb, installed for real: `cpack -G DEB` from the
 * build the other tests use, `dpkg -i` (CI runs as root on a fresh Debian 12),
 * then the installed files checked as a service would use them: the unit
 * passes `systemd-analyze verify` (systemd cannot run here: no PID 1 systemd),
 * the installed config passes --check-config, and the unit's own ExecStart
 * (plus --listen, --redis to a private redis-server, --state), run as the
 * user rankcast the package made, serves /healthz,
 * a write to the example board, a WebSocket snapshot and the dashboard page
 * from /usr/share/rankcast/web (run from /, as systemd does, so the clone's
 * web/ is out of reach). The package is purged at the end, even on failure.
 * Outside CI it skips unless run as root with dpkg and cpack at hand. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const UNIT = '/usr/lib/systemd/system/rankcast.service';
const CONF = '/etc/rankcast/rankcast.conf';
const buildDir = path.resolve(path.dirname(h.gatewayBin()), '..');

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}
function whyNot() {
  if (h.gatewayMissing()) return h.gatewayMissing();
  if (process.getuid() !== 0) return 'dpkg -i needs root (CI runs as root)';
  for (const cmd of ['dpkg', 'cpack', 'dpkg-shlibdeps', 'systemd-analyze'])
    if (!has(cmd)) return `${cmd} not found (bash .ci/install-deps installs it)`;
  if (!fs.existsSync(path.join(buildDir, 'CPackConfig.cmake'))) return `no CPackConfig.cmake in ${buildDir}`;
  return null;
}
const skip = h.toolMissing(whyNot());

function sh(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, Object.assign({ encoding: 'utf8', timeout: 300000 }, opts));
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${res.status}${res.signal ? ' ' + res.signal : ''}\n${res.stdout}\n${res.stderr}`);
  }
  return res.stdout;
}
const installed = () => spawnSync('dpkg-query', ['-W', '-f=${Status}', 'rankcast'], { encoding: 'utf8' })
  .stdout.includes('installed');

test('the .deb installs a service that serves from its installed files, and purges clean', { skip, timeout: 600000 }, async (t) => {
  assert.ok(!installed(), 'a rankcast package is already installed here: this test installs and purges its own, remove that one first');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-deb-'));
  h.defer(t, () => fs.rmSync(out, { recursive: true, force: true }));

  // the same build dir as the gateway under test: cpack's install step finds it built
  sh('cpack', ['--config', path.join(buildDir, 'CPackConfig.cmake'), '-G', 'DEB', '-B', out], { cwd: buildDir });
  const deb = fs.readdirSync(out).filter((f) => f.endsWith('.deb')).map((f) => path.join(out, f));
  assert.equal(deb.length, 1, `one .deb in ${out}: ${deb}`);

  // Depends from dpkg-shlibdeps (the linked libraries with versions), plus
  // lws's run-time libuv plugin; redis-server only recommended
  const field = (f) => sh('dpkg-deb', ['-f', deb[0], f]).trim();
  const depends = field('Depends');
  for (const lib of ['libc6 (>=', 'libwebsockets17', 'libhiredis0.14', 'libuv1', 'libwebsockets-evlib-uv'])
    assert.ok(depends.includes(lib), `Depends has ${lib}: ${depends}`);
  assert.equal(field('Recommends'), 'redis-server');
  assert.equal(field('Version'), sh(h.gatewayBin(), ['--version']).split('\n')[0].replace('rankcast ', ''));

  // purge registered before the install, so a failure anywhere below still removes it
  h.defer(t, () => {
    const res = spawnSync('dpkg', ['--purge', 'rankcast'], { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`dpkg --purge rankcast: ${res.stderr}`);
    assert.ok(!installed(), 'purged');
    for (const f of ['/usr/bin/rankcast', UNIT, CONF, '/var/lib/rankcast'])
      assert.ok(!fs.existsSync(f), `${f} is gone after purge`);
  });
  sh('dpkg', ['-i', deb[0]]);

  // postinst: the user and its state directory; the config is a conffile
  assert.match(sh('getent', ['passwd', 'rankcast']), /^rankcast:x:\d+:\d+:.*:\/var\/lib\/rankcast:\/usr\/sbin\/nologin/);
  assert.equal(sh('stat', ['-c', '%U %G %a', '/var/lib/rankcast']).trim(), 'rankcast rankcast 750');
  assert.match(sh('dpkg-query', ['-W', '-f=${Conffiles}', 'rankcast']), /\/etc\/rankcast\/rankcast\.conf [0-9a-f]{32}/);
  for (const f of ['/usr/bin/rankcast', '/usr/share/rankcast/web/index.html', '/usr/share/man/man1/rankcast.1'])
    assert.ok(fs.existsSync(f), `${f} is installed`);
  // the monitoring files, as in the clone (README "Run it in production")
  for (const [f, src] of [['/usr/share/rankcast/grafana/rankcast.json', 'conf/grafana/rankcast.json'],
    ['/usr/share/rankcast/prometheus/rankcast-alerts.yml', 'conf/prometheus/rankcast-alerts.yml']])
    assert.equal(fs.readFileSync(f, 'utf8'), fs.readFileSync(path.join(h.repoRoot, src), 'utf8'), `${f} is installed`);

  // the unit: verified by systemd's own checker (the man page it names
  // included), with the hardening the issue asks for
  sh('systemd-analyze', ['verify', UNIT]);
  const unit = fs.readFileSync(UNIT, 'utf8');
  for (const line of ['User=rankcast', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes',
    'PrivateTmp=yes', 'StateDirectory=rankcast', 'LimitNOFILE=1048576', 'Restart=on-failure'])
    assert.ok(unit.split('\n').includes(line), `the unit has ${line}`);
  assert.ok(!/^ExecReload=/m.test(unit), 'no ExecReload: the gateway has no reload');

  assert.match(sh('/usr/bin/rankcast', ['--check-config', CONF]), /ok, 1 boards/);

  // the unit's ExecStart, as systemd runs it (from /), plus the test's addresses
  const exec = /^ExecStart=(.*)$/m.exec(unit)[1].split(/\s+/);
  assert.deepEqual(exec, ['/usr/bin/rankcast', '--config', CONF]);
  // as the unit's User=rankcast: the installed files must be readable by it
  const uid = Number(sh('id', ['-u', 'rankcast']));
  const gid = Number(sh('id', ['-g', 'rankcast']));
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-deb-state-'));
  h.defer(t, () => fs.rmSync(state, { recursive: true, force: true }));
  fs.chownSync(state, uid, gid);
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { bin: exec[0], config: exec[2], cwd: '/', uid, gid, stateDir: state, redisPort: redis.port });
  assert.match(fs.readFileSync(`/proc/${gw.pid}/status`, 'utf8'), new RegExp(`\nUid:\t${uid}\t`), 'runs as rankcast');
  await gw.waitForLine(/dashboard pages from \/usr\/share\/rankcast\/web$/, 5000);

  const health = await h.http(gw.base, 'GET', '/healthz');
  assert.equal(health.status, 200, health.text);

  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await viewer.request({ op: 'subscribe', board: 'scores', view: { top: 10 } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  // a write over REST with RANKCAST_ADMIN_KEY (the harness sets it), seen by the viewer
  const w = await h.http(gw.base, 'POST', '/api/v1/boards/scores/scores', { member: 'player:1', op: 'incr', delta: 42 });
  assert.equal(w.status, 200, w.text);
  await viewer.next((m) => m.op === 'delta' && JSON.stringify(m).includes('player:1'), 5000);
  assert.equal(await redis.cli('ZCARD', 'rc:{scores|}:z'), '1');

  // the dashboard, from share/ (the process runs in /, the clone is not in reach)
  const page = await h.http(gw.base, 'GET', '/', undefined, { token: null });
  assert.equal(page.status, 200);
  assert.equal(page.text, fs.readFileSync('/usr/share/rankcast/web/index.html', 'utf8'));
  const js = await h.http(gw.base, 'GET', '/rankcast.js', undefined, { token: null });
  assert.equal(js.status, 200);
});
