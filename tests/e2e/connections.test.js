/* connections.test.js - who may connect and for how long: connections per
 * source address, allowed WebSocket origins, the idle timeout with ping/pong,
 * and TLS (wss:// and https://) from a certificate and key in config. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const https = require('node:https');
const { execFileSync } = require('node:child_process');
const WebSocket = require('ws');
const h = require('./harness');

/* Opens a raw ws client; resolves {ws} when open or {status} when refused. */
function open(url, opts = {}) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, 'rankcast.v1', opts);
    ws.on('open', () => resolve({ ws }));
    ws.on('unexpected-response', (req, res) => { resolve({ status: res.statusCode }); req.destroy(); });
    ws.on('error', (e) => resolve({ error: e.message }));
  });
}

// Every socket counts (from accept), so the test's own address is one the
// harness never uses for its HTTP checks.
test('max_conns_per_ip: a third connection from 127.0.0.3 is refused, 127.0.0.2 still gets in', async (t) => {
  const { gw } = await h.startStack(t, { config: h.configWith(t, { limits: { max_conns_per_ip: 2 } }) });
  const from = { localAddress: '127.0.0.3' };
  const a = await open(gw.wsUrl, from);
  const b = await open(gw.wsUrl, from);
  assert.ok(a.ws && b.ws);
  const c = await open(gw.wsUrl, from);
  assert.equal(c.status, 503);
  const other = await open(gw.wsUrl, { localAddress: '127.0.0.2' });
  assert.ok(other.ws, JSON.stringify(other));
  a.ws.close();
  await h.waitFor(async () => {
    const d = await open(gw.wsUrl, from);
    if (d.ws) d.ws.close();
    return !!d.ws;
  }, 2000, 'a freed slot for 127.0.0.3');
  b.ws.close();
  other.ws.close();
});

test('allowed_origins: a listed Origin and no Origin connect, another Origin is refused', async (t) => {
  const { gw } = await h.startStack(t, {
    config: h.configWith(t, { server: { allowed_origins: 'https://scores.example, http://127.0.0.1:8080' } }),
  });
  const good = await open(gw.wsUrl, { origin: 'https://scores.example' });
  assert.ok(good.ws);
  const none = await open(gw.wsUrl);
  assert.ok(none.ws);
  const bad = await open(gw.wsUrl, { origin: 'https://evil.example' });
  assert.equal(bad.status, 403);
  good.ws.close();
  none.ws.close();
});

test('idle_timeout: a client that answers pings stays, one that does not is closed', { timeout: 30000 }, async (t) => {
  const { gw } = await h.startStack(t, { config: h.configWith(t, { limits: { idle_timeout: '2s' } }) });
  const alive = await h.connectWs(t, gw.wsUrl); // ws answers pings by itself
  const dead = await h.connectWs(t, gw.wsUrl);
  let pings = 0;
  alive.ws.on('ping', () => pings++);
  dead.ws._socket.pause(); // reads nothing: no pongs
  // The gateway hangs up on it (a paused socket cannot see that until it reads).
  await h.waitFor(async () => /^rankcast_connections 1$/m.test((await h.http(gw.base, 'GET', '/metrics')).text),
    8000, 'the silent client to be closed by the gateway');
  dead.ws._socket.resume();
  await dead.closed;
  assert.ok(pings >= 1, 'the live client was never pinged');
  assert.equal((await alive.request({ op: 'ping' })).op, 'pong');
});

test('TLS: wss:// and https:// with a certificate from config', { timeout: 30000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-tls-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const config = h.configWith(t, { server: { tls_cert: cert, tls_key: key } });
  const redis = await h.startRedis(t);
  // The harness probes /healthz over plain http, so start it and wait ourselves.
  const port = await h.freePort();
  const child = h.spawnTracked(h.gatewayBin(), ['--config', config, '--listen', `127.0.0.1:${port}`, '--redis',
    `127.0.0.1:${redis.port}`, '--state', dir], { cwd: h.repoRoot, env: { ...process.env, RANKCAST_ADMIN_KEY: h.ADMIN_KEY },
    stdio: ['ignore', 'ignore', 'pipe'] }, []);
  const stderr = [];
  h.eachLine(child.stderr, (l) => stderr.push(l));
  t.after(() => child.kill('SIGKILL'));
  const ca = fs.readFileSync(cert);
  const get = () => new Promise((resolve) => {
    https.get({ host: '127.0.0.1', port, path: '/healthz', ca }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', () => resolve(null));
  });
  await h.waitFor(async () => (await get())?.status === 200, 10000, 'https /healthz');
  const ws = new WebSocket(`wss://127.0.0.1:${port}/ws?token=${h.ADMIN_KEY}`, 'rankcast.v1', { ca });
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  const reply = new Promise((resolve) => ws.on('message', (d) => resolve(JSON.parse(d.toString()))));
  ws.send(JSON.stringify({ op: 'incr', id: 1, board: 'demo', member: 'user:tls', delta: 5 }));
  const ack = await reply;
  assert.equal(ack.op, 'ack');
  assert.equal(ack.score, 5);
  ws.close();
  // Plain http on the TLS port is not served.
  const plain = await h.http(`http://127.0.0.1:${port}`, 'GET', '/healthz').catch(() => null);
  assert.ok(!plain || plain.status !== 200);
  // Like every gateway a test starts: a clean stop (exit 0, no sanitizer report).
  const res = await h.terminate(child, 20000);
  child.untrack();
  assert.deepEqual(h.exitProblems(res, stderr), [], stderr.slice(-20).join('\n'));
});
