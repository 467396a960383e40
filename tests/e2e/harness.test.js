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
