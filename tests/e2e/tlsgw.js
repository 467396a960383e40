/* tlsgw.js - a gateway with TLS on (tls_cert), for the tests that need
 * one (hostile_tls.test.js, hostile_frames.test.js):
 *
 *   const gw = await startTls(t, limits = {})   started and answering https /healthz
 *   gw.port, gw.ca (the certificate, to trust), gw.stderr
 *   await gw.metrics()                          /metrics text (admin key, from 127.0.0.3)
 *   await gw.stop()                             SIGTERM: a clean exit is asserted
 *   await httpsGet(port, path, ca, localAddress) -> { status, body } | null
 */
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const https = require('node:https');
const { execFileSync } = require('node:child_process');
const h = require('./harness');

/* A self-signed certificate for 127.0.0.1 in a fresh directory. */
function certificate(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-tls-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { dir, cert, key, ca: fs.readFileSync(cert) };
}

/* GET over https from localAddress: { status, body } or null when the
 * connection failed. */
function httpsGet(port, urlPath, ca, localAddress) {
  return new Promise((resolve) => {
    https.get({ host: '127.0.0.1', port, path: urlPath, ca, localAddress, agent: false,
      headers: { Authorization: `Bearer ${h.ADMIN_KEY}` } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', () => resolve(null));
  });
}

/* A gateway with TLS on and the given [limits]; the harness probes over
 * plain http, so this starts it and waits itself (from 127.0.0.3, whose
 * handshake budget no test uses). */
async function startTls(t, limits = {}) {
  const c = certificate(t);
  const config = h.configWith(t, { server: { tls_cert: c.cert, tls_key: c.key }, limits });
  const redis = await h.startRedis(t);
  const port = await h.freePort();
  const child = h.spawnTracked(h.gatewayBin(), ['--config', config, '--listen', `127.0.0.1:${port}`, '--redis',
    `127.0.0.1:${redis.port}`, '--state', c.dir], { cwd: h.repoRoot, env: { ...process.env, RANKCAST_ADMIN_KEY: h.ADMIN_KEY },
    stdio: ['ignore', 'ignore', 'pipe'] }, []);
  const stderr = [];
  h.eachLine(child.stderr, (l) => stderr.push(l));
  t.after(() => child.kill('SIGKILL'));
  await h.waitFor(async () => (await httpsGet(port, '/healthz', c.ca, '127.0.0.3'))?.status === 200, 15000,
    'https /healthz');
  return {
    port, ca: c.ca, child, stderr,
    async metrics() {
      const r = await httpsGet(port, '/metrics', c.ca, '127.0.0.3');
      assert.equal(r?.status, 200);
      return r.body;
    },
    async stop() {
      const res = await h.terminate(child, 20000);
      child.untrack();
      assert.deepEqual(h.exitProblems(res, stderr), [], stderr.slice(-20).join('\n'));
    },
  };
}

module.exports = { certificate, httpsGet, startTls };
