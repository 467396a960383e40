// Self-tests of harness.js: the parts that need no gateway (ports, the private
// Redis, redis-cli, VmRSS, start failures, the WebSocket helper's matching),
// so a broken harness shows up here rather than as a confusing e2e failure.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { WebSocketServer } = require('ws');
const h = require('./harness');

test('freePort hands out distinct loopback ports, never 6379', async () => {
  const ports = [];
  for (let i = 0; i < 20; i++) ports.push(await h.freePort());
  assert.equal(new Set(ports).size, ports.length);
  assert.ok(!ports.includes(6379));
});

test('a private redis-server starts, answers redis-cli, and is gone after stop', async (t) => {
  const redis = await h.startRedis(t);
  assert.notEqual(redis.port, 6379);
  assert.equal(await redis.cli('PING'), 'PONG');
  await redis.cli('ZADD', 'k', '5', 'user:1');
  assert.equal(await redis.cli('ZSCORE', 'k', 'user:1'), '5');
  assert.equal(await redis.cli('CONFIG', 'GET', 'save'), 'save\n');
  assert.ok(h.vmRssKb(redis.pid) > 0);
  await redis.stop();
  assert.equal(fs.existsSync(redis.dir), false);
  assert.throws(() => process.kill(redis.pid, 0));
});

test('Redis can be restarted on the same port (outage simulation)', async (t) => {
  const first = await h.startRedis(t);
  await first.stop();
  const again = await h.startRedis(t, { port: first.port });
  assert.equal(await again.cli('PING'), 'PONG');
});

test('gatewayMissing names the path when the binary is absent', () => {
  const saved = process.env.RANKCAST_BIN;
  process.env.RANKCAST_BIN = '/nonexistent/rankcast';
  try {
    assert.match(h.gatewayMissing(), /\/nonexistent\/rankcast/);
  } finally {
    if (saved === undefined) delete process.env.RANKCAST_BIN;
    else process.env.RANKCAST_BIN = saved;
  }
});

test('a gateway that exits during start fails fast with its stderr and arguments', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-fake-bin-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'exits');
  fs.writeFileSync(bin, '#!/bin/sh\necho "cannot start: $*" >&2\nexit 3\n', { mode: 0o755 });
  const began = Date.now();
  await assert.rejects(
    h.startGateway(t, { bin, redisPort: 1 }),
    (err) => /exited during start/.test(err.message) && /"code":3/.test(err.message) &&
      /cannot start: --config .*rankcast\.conf --listen 127\.0\.0\.1:\d+ --redis 127\.0\.0\.1:1 --state /.test(err.message),
  );
  assert.ok(Date.now() - began < 5000);
});

test('cleanups registered with defer run last-in first-out', async (t) => {
  const order = [];
  await t.test('a test that registers two', async (t) => {
    h.defer(t, () => order.push('first registered'));
    h.defer(t, async () => order.push('second registered'));
  });
  assert.deepEqual(order, ['second registered', 'first registered']);
});

test('the WebSocket helper matches by predicate or subset, keeps the rest, pairs replies by id', async (t) => {
  // An echo peer: this tests the helper's bookkeeping, not the gateway.
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  h.defer(t, () => new Promise((r) => wss.close(r)));
  await new Promise((r) => wss.once('listening', r));
  let protocol = null;
  wss.on('connection', (sock, req) => {
    protocol = req.headers['sec-websocket-protocol'];
    sock.on('message', (data) => {
      const m = JSON.parse(data);
      sock.send(JSON.stringify({ op: 'first', n: 1 }));
      sock.send(JSON.stringify(Object.assign({}, m, { op: 'echo' })));
    });
  });
  const c = await h.connectWs(t, `ws://127.0.0.1:${wss.address().port}/ws`);
  assert.equal(protocol, 'rankcast.v1');
  const reply = await c.request({ op: 'ping' });
  assert.equal(reply.op, 'echo');
  assert.equal(typeof reply.id, 'number');
  // The unmatched message is still there for a later next().
  assert.deepEqual(await c.next({ op: 'first' }), { op: 'first', n: 1 });
  await assert.rejects(c.next((m) => m.op === 'never', 100), /no message matching/);
  await c.close();
  await assert.rejects(c.next({ op: 'x' }, 1000), /before the socket closed/);
});

test('editConfig replaces keys in place, deletes, adds after the last key, appends sections', () => {
  const base = [
    '# [limits] in a comment is not a section',
    '[server]',
    'listen = 127.0.0.1:8080   # a comment',
    '',
    '[limits]',
    '# max_conns: the doc comment stays',
    'max_conns = 20000',
    'queue_bytes = 256k',
    '',
    '# the boards',
    '[board demo]',
    'order = desc',
    '',
  ].join('\n');
  const out = h.editConfig(base, {
    limits: { max_conns: 3, queue_bytes: null, conn_write_rate: 5 },
    'board demo': { log_cap: 10 },
    auth: { reads: 'key' },
    extra: '[key w]\nsecret = s\n',
  });
  assert.equal(out, [
    '# [limits] in a comment is not a section',
    '[server]',
    'listen = 127.0.0.1:8080   # a comment',
    '',
    '[limits]',
    '# max_conns: the doc comment stays',
    'max_conns = 3',
    'conn_write_rate = 5',
    '',
    '# the boards',
    '[board demo]',
    'order = desc',
    'log_cap = 10',
    '',
    '[auth]',
    'reads = key',
    '',
    '[key w]',
    'secret = s',
    '',
  ].join('\n'));
});

test('configWith writes a valid edited copy of the shipped config and removes it when the test ends', async (t) => {
  let file;
  await t.test('a test that uses one', async (t) => {
    file = h.configWith(t, { limits: { max_conns: 3 } });
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^max_conns = 3$/m);
    assert.doesNotMatch(text, /^max_conns = 20000$/m);
    assert.equal(text.match(/^\[limits\]$/mg).length, 1);
    if (!h.gatewayMissing()) {
      const { execFileSync } = require('node:child_process');
      execFileSync(h.gatewayBin(), ['--check-config', file], { stdio: 'pipe' });
    }
  });
  assert.equal(fs.existsSync(file), false);
});

test('redis.fingerprint sees every write and ignores insertion order', async (t) => {
  const redis = await h.startRedis(t);
  const empty = await redis.fingerprint();
  assert.equal(empty, '{}');
  await redis.cli('HSET', 'h', 'b', '2', 'a', '1');
  await redis.cli('ZADD', 'z', '1', 'm');
  const one = await redis.fingerprint();
  await redis.cli('DEL', 'h');
  await redis.cli('HSET', 'h', 'a', '1', 'b', '2');
  assert.equal(await redis.fingerprint(), one);
  await redis.cli('ZADD', 'z', '2', 'm');
  assert.notEqual(await redis.fingerprint(), one);
});

test('connectWs and http send the admin key by default, a given token, or none', async (t) => {
  assert.ok(h.ADMIN_KEY.length >= 16);
  const { WebSocketServer } = require('ws');
  const httpMod = require('node:http');
  const seen = [];
  const server = httpMod.createServer((req, res) => {
    seen.push({ url: req.url, auth: req.headers.authorization });
    res.end('{}');
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (sock, req) => seen.push({ url: req.url, auth: req.headers.authorization }));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  h.defer(t, () => new Promise((r) => { wss.close(); server.close(r); }));
  const base = `http://127.0.0.1:${server.address().port}`;
  const url = base.replace('http', 'ws') + '/ws';
  const enc = encodeURIComponent;
  await h.connectWs(t, url);
  await h.connectWs(t, url, { token: null });
  await h.connectWs(t, url, { token: 'k-1' });
  await h.connectWs(t, url, { token: 'k-2', tokenIn: 'header' });
  await h.http(base, 'GET', '/a');
  await h.http(base, 'GET', '/b', null, { token: null });
  await h.http(base, 'GET', '/c', null, { token: 'k-3' });
  await h.http(base, 'GET', '/d', null, { headers: { authorization: 'Basic x' } });
  await h.waitFor(() => seen.length === 8, 2000, 'eight requests');
  const got = seen.map((s) => `${s.url} ${s.auth || '-'}`).sort();
  assert.deepEqual(got, [
    '/a Bearer ' + h.ADMIN_KEY,
    '/b -',
    '/c Bearer k-3',
    '/d Basic x',
    '/ws -',
    '/ws Bearer k-2',
    `/ws?token=${enc(h.ADMIN_KEY)} -`,
    '/ws?token=k-1 -',
  ].sort());
});

test('startGateway passes RANKCAST_ADMIN_KEY unless env overrides or removes it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-fake-bin-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'env');
  fs.writeFileSync(bin, '#!/bin/sh\necho "key=[${RANKCAST_ADMIN_KEY-unset}]" >&2\nexit 3\n', { mode: 0o755 });
  const keyLine = async (env) => {
    const err = await h.startGateway(t, { bin, redisPort: 1, env }).catch((e) => e);
    return /key=\[([^\]]*)\]/.exec(err.message)[1];
  };
  assert.equal(await keyLine(undefined), h.ADMIN_KEY);
  assert.equal(await keyLine({ RANKCAST_ADMIN_KEY: 'other-secret-0123456' }), 'other-secret-0123456');
  assert.equal(await keyLine({ RANKCAST_ADMIN_KEY: null }), 'unset');
});

test('exitProblems: only exit 0, or the test\'s own SIGKILL, with no sanitizer report, is clean', () => {
  assert.deepEqual(h.exitProblems({ code: 0, signal: null }, ['rankcast: bye']), []);
  assert.equal(h.exitProblems({ code: 1, signal: null }, []).length, 1);
  assert.equal(h.exitProblems({ code: null, signal: 'SIGSEGV' }, []).length, 1);
  assert.equal(h.exitProblems({ code: null, signal: 'SIGKILL' }, []).length, 1);
  assert.deepEqual(h.exitProblems({ code: null, signal: 'SIGKILL' }, [], { killedOnPurpose: true }), []);
  assert.equal(h.exitProblems({ code: 0, signal: null }, [], { crashed: true }).length, 1);
  for (const line of [
    'gateway/net/gw_conn.c:12:3: runtime error: signed integer overflow',
    '==123==ERROR: AddressSanitizer: heap-use-after-free on address 0x1',
    '==123==ERROR: LeakSanitizer: detected memory leaks',
    'SUMMARY: AddressSanitizer: 64 byte(s) leaked in 1 allocation(s).',
  ]) {
    assert.equal(h.exitProblems({ code: 0, signal: null }, ['ok', line]).length, 1, line);
  }
});

test('a gateway that crashes mid-test fails the test when it ends', async (t) => {
  // A stand-in binary that answers /healthz, then dies of SIGSEGV on its own.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-fake-bin-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'crashes.js');
  fs.writeFileSync(bin, `#!${process.execPath}
const listen = process.argv[process.argv.indexOf('--listen') + 1].split(':');
require('node:http').createServer((q, r) => {
  r.end('ok');
  setTimeout(() => process.kill(process.pid, 'SIGSEGV'), 200); // after start is seen
}).listen(Number(listen[1]), listen[0]);
process.on('SIGTERM', () => process.exit(0));
`, { mode: 0o755 });
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(null, { bin, redisPort: redis.port });
  const res = await gw.exited;
  assert.equal(res.signal, 'SIGSEGV');
  await gw.stop();
  await assert.rejects(gw.checkExit(), /exited mid-test/);
});

test('toolMissing skips outside CI and fails in CI', () => {
  const saved = process.env.CI;
  try {
    delete process.env.CI;
    assert.equal(h.toolMissing(null), false);
    assert.equal(h.toolMissing('no sqlite3'), 'no sqlite3');
    process.env.CI = 'true';
    assert.equal(h.toolMissing(null), false);
    assert.throws(() => h.toolMissing('no sqlite3'), /CI=true.*no sqlite3/);
  } finally {
    if (saved === undefined) delete process.env.CI;
    else process.env.CI = saved;
  }
});
