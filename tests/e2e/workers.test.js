/* workers.test.js - a worker group ([server] workers, --workers): two
 * processes on one port behind a supervisor. Connections are spread over
 * both and one /metrics scrape counts them all; a write reaches viewers on
 * either worker; a worker killed outright is restarted (and logged) and its
 * clients reconnect and resume their feeds with since, without a gap;
 * SIGTERM to the supervisor stops every worker and exits 0; bad counts are
 * refused with the bounds; a worker that cannot start fails the group. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const WebSocket = require('ws');
const h = require('./harness');
const Rankcast = require('../../web/rankcast.js');

const skip = h.toolMissing(h.gatewayMissing());

/* /metrics, parsed: totals (unlabelled series) and, per worker index, its
 * labelled series and pid. */
async function metrics(gw) {
  const r = await h.http(gw.base, 'GET', '/metrics');
  assert.equal(r.status, 200, r.text);
  const total = {};
  const worker = {};
  for (const line of r.text.split('\n')) {
    let m = /^(rankcast_[a-z_]+) (\d+(?:\.\d+)?)$/.exec(line);
    if (m) { total[m[1]] = Number(m[2]); continue; }
    m = /^rankcast_worker_up\{worker="(\d+)",pid="(\d+)"\} (\d)$/.exec(line);
    if (m) { (worker[m[1]] = worker[m[1]] || {}).pid = Number(m[2]); worker[m[1]].up = Number(m[3]); continue; }
    m = /^rankcast_worker_([a-z_]+)\{worker="(\d+)"\} (\d+)$/.exec(line);
    if (m) (worker[m[2]] = worker[m[2]] || {})[m[1]] = Number(m[3]);
  }
  return { total, worker, text: r.text };
}

/* A write through the REST API; retried when the connection itself fails
 * (one queued on a worker that is being killed is reset by the kernel). */
async function write(gw, member, delta) {
  for (let i = 0; ; i++) {
    try {
      const r = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member, op: 'incr', delta });
      assert.equal(r.body && r.body.op, 'ack', r.text);
      return r.body;
    } catch (e) {
      if (i >= 20 || e instanceof assert.AssertionError) throw e;
      await new Promise((res) => setTimeout(res, 50));
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code !== 'ESRCH';
  }
}

/* n rankcast.js clients with a feed of demo each, all ready. */
async function feedClients(t, gw, n) {
  const clients = [];
  for (let i = 0; i < n; i++) {
    const rc = new Rankcast.Client({ url: gw.wsUrl, WebSocket, minDelay: 50, maxDelay: 400 });
    const resets = [];
    const feed = rc.subscribe({ board: 'demo', view: { feed: true }, keep: 1000 },
      { onChange: (v, changes, info) => { if (info.reset) resets.push(v.seq); } });
    clients.push({ rc, feed, resets });
  }
  h.defer(t, () => { for (const c of clients) c.rc.close(); });
  await h.waitFor(() => clients.every((c) => c.feed.ready), 30000, `${n} feeds ready`);
  return clients;
}

test('two workers share the port: connections split over both, /metrics counts them all, writes reach every viewer',
  { skip, timeout: 120000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port, args: ['--workers', '2'] });
    await gw.waitForLine(/workers: supervisor \(pid \d+\) starting 2 workers/, 5000);
    // both workers up (each publishes its slot from its tick)
    await h.waitFor(async () => {
      const m = await metrics(gw);
      return m.worker[0] && m.worker[1] && m.worker[0].up === 1 && m.worker[1].up === 1;
    }, 10000, 'both workers in /metrics');

    const n = 200;
    const clients = await feedClients(t, gw, n);
    const start = clients[0].feed.lastSeq;
    // One scrape, from whichever worker answers, sees every connection.
    let m;
    await h.waitFor(async () => {
      m = await metrics(gw);
      // the other worker's slot may be a tick old: wait for both figures
      return m.total.rankcast_connections === n &&
        m.worker[0].connections + m.worker[1].connections === n &&
        m.worker[0].subscriptions + m.worker[1].subscriptions === n;
    }, 10000, `${n} connections and subscriptions in one scrape`);
    const c0 = m.worker[0].connections, c1 = m.worker[1].connections;
    assert.ok(c0 > 0 && c1 > 0, `both workers hold connections: ${c0} and ${c1}`);
    assert.equal(m.total.rankcast_workers, 2);
    assert.equal(m.total.rankcast_redis_up, 1);
    t.diagnostic(`connections per worker: ${c0} / ${c1}`);

    // Writes (each through whichever worker takes the request) reach all
    // viewers, on both workers.
    for (let i = 1; i <= 5; i++) await write(gw, `user:${i}`, i);
    await h.waitFor(() => clients.every((c) => c.feed.lastSeq === start + 5), 10000, 'every viewer to see 5 events');
    for (const c of clients) assert.deepEqual(c.feed.events.map((e) => e.seq), [1, 2, 3, 4, 5].map((k) => start + k));
    await h.waitFor(async () => {
      const mm = await metrics(gw);
      return mm.worker[0].deltas_sent_total > 0 && mm.worker[1].deltas_sent_total > 0 &&
        mm.total.rankcast_deltas_sent_total === mm.worker[0].deltas_sent_total + mm.worker[1].deltas_sent_total;
    }, 5000, 'deltas sent by both workers, summed');

    // Viewer counts: each worker counts its own viewers under its own
    // gateway id; the board's count is the group's.
    await h.waitFor(async () => {
      const st = await h.http(gw.base, 'GET', '/api/v1/boards/demo/stats');
      return st.status === 200 && st.body.viewers === n;
    }, 15000, `the board's viewer count to reach ${n}`);
    const ids = await redis.cli('HKEYS', 'rc:{demo|}:viewers');
    assert.equal(ids.split('\n').filter(Boolean).length, 2, `one viewers field per worker: ${ids}`);

    // /healthz answers from any worker
    for (let i = 0; i < 10; i++) assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });

test('a worker killed with SIGKILL is restarted and logged; its clients reconnect and resume their feeds without a gap',
  { skip, timeout: 120000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port, args: ['--workers', '2'] });
    await h.waitFor(async () => {
      const m = await metrics(gw);
      return m.worker[0] && m.worker[1] && m.worker[0].up === 1 && m.worker[1].up === 1;
    }, 10000, 'both workers in /metrics');
    const clients = await feedClients(t, gw, 60);
    let m;
    await h.waitFor(async () => {
      m = await metrics(gw);
      return m.worker[0].connections + m.worker[1].connections === 60;
    }, 10000, 'all connections counted');
    // the worker with more clients, so the kill surely cuts some
    const victim = m.worker[1].connections >= m.worker[0].connections ? 1 : 0;
    const pid = m.worker[victim].pid;
    const cut = m.worker[victim].connections;
    assert.ok(cut > 0, `worker ${victim} holds clients`);
    const start = clients[0].feed.lastSeq;
    for (let i = 1; i <= 3; i++) await write(gw, `user:${i}`, i);
    await h.waitFor(() => clients.every((c) => c.feed.lastSeq === start + 3), 10000, 'the first 3 events');

    // what the group has counted so far, which a restart must not take back
    const before = (await metrics(gw)).total;
    process.kill(pid, 'SIGKILL');
    await gw.waitForLine(new RegExp(`workers: worker ${victim} \\(pid ${pid}\\) killed by signal 9`), 5000);
    // Writes go on while the worker is away: the other worker takes them.
    for (let i = 4; i <= 8; i++) await write(gw, `user:${i}`, i);
    const restarted = await gw.waitForLine(new RegExp(`workers: worker ${victim} started \\(pid \\d+\\), a restart`), 10000);
    const newPid = Number(/pid (\d+)/.exec(restarted)[1]);
    assert.notEqual(newPid, pid);
    assert.ok(!alive(pid), 'the killed worker is gone');
    for (let i = 9; i <= 10; i++) await write(gw, `user:${i}`, i);

    // Every client, cut or not, holds every event once, in order, and none
    // started over.
    await h.waitFor(() => clients.every((c) => c.rc.state === 'open' && c.feed.lastSeq === start + 10), 20000,
      'every feed to reach the 10th event');
    const want = Array.from({ length: 10 }, (_, k) => start + 1 + k);
    for (const c of clients) {
      assert.deepEqual(c.feed.events.map((e) => e.seq), want);
      assert.deepEqual(c.resets, []);
    }
    await h.waitFor(async () => {
      const mm = await metrics(gw);
      return mm.worker[victim].pid === newPid && mm.worker[victim].up === 1 &&
        mm.worker[victim].restarts_total === 1 && mm.total.rankcast_connections === 60;
    }, 10000, 'the restarted worker in /metrics, every client back');
    const scrape = await metrics(gw);
    const after = scrape.total;
    // the dead worker's counters stay in the group's totals
    const retired = after.rankcast_connections_total -
      scrape.worker[0].connections_total - scrape.worker[1].connections_total;
    assert.ok(retired >= cut, `${retired} connections counted by the dead worker kept in the total (it held ${cut})`);
    for (const k of ['rankcast_connections_total', 'rankcast_deltas_sent_total', 'rankcast_snapshots_sent_total',
      'rankcast_bytes_sent_total']) {
      assert.ok(after[k] >= before[k], `${k}: ${before[k]} before the kill, ${after[k]} after the restart`);
    }
    assert.equal(after.rankcast_connections, 60);
    t.diagnostic(`worker ${victim} (pid ${pid}) held ${cut} of 60 clients; restarted as pid ${newPid}`);
  });

test('SIGTERM to the supervisor stops every worker (clients get 1001), exits 0 and leaves no worker behind',
  { skip, timeout: 60000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port, args: ['--workers', '2'] });
    let m;
    await h.waitFor(async () => {
      m = await metrics(gw);
      return m.worker[0] && m.worker[1] && m.worker[0].up === 1 && m.worker[1].up === 1;
    }, 10000, 'both workers in /metrics');
    const pids = [m.worker[0].pid, m.worker[1].pid];
    assert.ok(pids.every(alive));
    const conns = [];
    for (let i = 0; i < 20; i++) conns.push(await h.connectWs(t, gw.wsUrl));
    const closes = conns.map((c) => c.closed);
    const res = await gw.stop();
    assert.deepEqual(res, { code: 0, signal: null });
    for (const c of await Promise.all(closes)) assert.equal(c.code, 1001);
    assert.ok(gw.stderr.some((l) => /workers: every worker has stopped; supervisor exits 0/.test(l)));
    for (const pid of pids) assert.ok(!alive(pid), `worker pid ${pid} is gone`);
  });

function runGateway(args, env = {}) {
  return new Promise((resolve) => {
    execFile(h.gatewayBin(), args, { cwd: h.repoRoot, env: Object.assign({}, process.env, env), timeout: 20000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stderr }));
  });
}

test('--workers 0, 65 and x, RANKCAST_WORKERS=x and [server] workers = 0 are refused with the bounds',
  { skip, timeout: 60000 }, async (t) => {
    const conf = ['--config', 'conf/rankcast.conf', '--listen', `127.0.0.1:${await h.freePort()}`];
    for (const v of ['0', '65', 'x']) {
      const r = await runGateway([...conf, '--workers', v]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /--workers: .*\(1\.\.64\)/);
    }
    const env = await runGateway(conf, { RANKCAST_WORKERS: 'x' });
    assert.equal(env.code, 1, env.stderr);
    assert.match(env.stderr, /RANKCAST_WORKERS: 'x' is not a number of worker processes \(1\.\.64\)/);
    const file = h.configWith(t, { server: { workers: 0 } });
    const bad = await runGateway(['--config', file, '--listen', `127.0.0.1:${await h.freePort()}`]);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /workers must be an integer from 1 to 64/);
    const check = await runGateway(['--check-config', file]);
    assert.equal(check.code, 1, check.stderr);
  });

test('a worker that cannot start (port held by a process that does not share it) fails the group: exit 1, no restart loop',
  { skip, timeout: 60000 }, async (t) => {
    const redis = await h.startRedis(t);
    const port = await h.freePort();
    const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-workers-'));
    h.defer(t, () => fs.rmSync(state, { recursive: true, force: true }));
    const holder = net.createServer();
    await new Promise((res) => holder.listen(port, '127.0.0.1', res));
    h.defer(t, () => new Promise((res) => holder.close(res)));
    const r = await runGateway(['--config', 'conf/rankcast.conf', '--listen', `127.0.0.1:${port}`,
      '--redis', `127.0.0.1:${redis.port}`, '--state', state,
      '--workers', '2'], { RANKCAST_ADMIN_KEY: h.ADMIN_KEY });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /could not start \(exit 78/);
    assert.match(r.stderr, /supervisor exits 1/);
    assert.doesNotMatch(r.stderr, /a restart/);
  });

test('TLS with two workers: https and wss on the shared port, both workers serve', { skip, timeout: 60000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-wtls-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  require('node:child_process').execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key,
    '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const config = h.configWith(t, { server: { tls_cert: cert, tls_key: key } });
  const redis = await h.startRedis(t);
  const port = await h.freePort();
  const child = h.spawnTracked(h.gatewayBin(), ['--config', config, '--listen', `127.0.0.1:${port}`, '--redis',
    `127.0.0.1:${redis.port}`, '--state', dir, '--workers', '2'],
  { cwd: h.repoRoot, env: { ...process.env, RANKCAST_ADMIN_KEY: h.ADMIN_KEY }, stdio: ['ignore', 'ignore', 'pipe'] }, []);
  const stderr = [];
  h.eachLine(child.stderr, (l) => stderr.push(l));
  h.defer(t, () => child.kill('SIGKILL'));
  const ca = fs.readFileSync(cert);
  const get = (p) => new Promise((resolve) => {
    require('node:https').get({ host: '127.0.0.1', port, path: p, ca, agent: false,
      headers: { Authorization: `Bearer ${h.ADMIN_KEY}` } }, (res) => { // (/metrics needs the admin scope)
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', () => resolve(null));
  });
  await h.waitFor(async () => {
    const m = await get('/metrics');
    return m && m.status === 200 && (m.body.match(/^rankcast_worker_up\{.*\} 1$/gm) || []).length === 2;
  }, 10000, 'both workers up over https');
  const socks = [];
  for (let i = 0; i < 20; i++) {
    const ws = new WebSocket(`wss://127.0.0.1:${port}/ws?token=${h.ADMIN_KEY}`, 'rankcast.v1', { ca });
    await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
    socks.push(ws);
  }
  await h.waitFor(async () => {
    const m = await get('/metrics');
    const per = [...m.body.matchAll(/^rankcast_worker_connections\{worker="\d"\} (\d+)$/gm)].map((x) => Number(x[1]));
    return per.length === 2 && per[0] + per[1] === 20 && per[0] > 0 && per[1] > 0;
  }, 10000, '20 wss connections over both workers');
  for (const ws of socks) ws.close();
  const res = await h.terminate(child, 20000);
  child.untrack();
  assert.deepEqual(h.exitProblems(res, stderr), [], stderr.slice(-20).join('\n'));
});
