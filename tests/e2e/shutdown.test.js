/* shutdown.test.js - SIGTERM is a clean stop: every WebSocket client gets a
 * close frame with 1001 (going away), the process exits 0 and logs a line
 * saying it "stopped", and the Redis it used is left running and exactly as
 * it was (the gateway owns none of that data's lifetime). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

/* Resolves p, or rejects after ms naming what did not happen. */
function within(p, ms, what) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); }),
  ]);
}

test('SIGTERM: every WebSocket client gets 1001, exit code 0, "stopped" logged, Redis untouched',
  { skip, timeout: 30000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    // Some data of every kind the gateway writes: scores, seq, log, req keys, a profile.
    for (let i = 1; i <= 5; i++) {
      const r = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores',
        { op: 'incr', member: `user:${i}`, delta: i * 10, req: `seed-${i}` });
      assert.equal(r.status, 200, r.text);
    }
    const p = await h.http(gw.base, 'PUT', '/api/v1/members/user:1/profile', { name: 'One' });
    assert.equal(p.status, 200, p.text);

    // Clients in different states: a window viewer, a feed viewer (no
    // subprotocol), an idle one without credentials, and a writer.
    const top = await h.connectWs(t, gw.wsUrl);
    assert.equal((await top.request({ op: 'subscribe', board: 'demo', view: { top: 3 } })).op, 'snapshot');
    const feed = await h.connectWs(t, gw.wsUrl, { protocol: null });
    assert.equal((await feed.request({ op: 'subscribe', board: 'demo', view: { feed: true } })).op, 'snapshot');
    const idle = await h.connectWs(t, gw.wsUrl, { token: null });
    const writer = await h.connectWs(t, gw.wsUrl);
    assert.equal((await writer.request({ op: 'incr', board: 'demo', member: 'user:5', delta: 1 })).op, 'ack');
    const clients = [top, feed, idle, writer];

    const before = await redis.fingerprint();
    const began = Date.now();
    gw.kill('SIGTERM');
    const exit = await within(gw.exited, 5000, 'the gateway to exit after SIGTERM');
    const took = Date.now() - began;

    assert.deepEqual(exit, { code: 0, signal: null }, `exit: ${JSON.stringify(exit)}\n${gw.stderr.join('\n')}`);
    for (const [i, c] of clients.entries()) {
      const closed = await within(c.closed, 2000, `client ${i} to see the close`);
      assert.equal(closed.code, 1001, `client ${i} closed with ${closed.code} (${closed.reason})`);
    }
    assert.ok(gw.stderr.some((l) => /stopped/.test(l)), `no "stopped" line in:\n${gw.stderr.join('\n')}`);
    assert.ok(!gw.stderr.some((l) => /libuv handle still open/.test(l)), gw.stderr.join('\n'));
    t.diagnostic(`exited ${took} ms after SIGTERM`);

    // Redis: still up, same data.
    assert.equal(await redis.cli('PING'), 'PONG');
    assert.equal(await redis.fingerprint(), before);
    assert.equal(await redis.cli('ZCARD', 'rc:{demo|}:z'), '5');
    assert.equal(await redis.cli('GET', 'rc:{demo|}:seq'), '6');
    assert.equal(await redis.cli('HGET', 'rc:profile:user:1', 'name'), 'One');
    // The port is free again: nothing is left listening.
    await assert.rejects(h.http(gw.base, 'GET', '/healthz', null, { timeoutMs: 1000 }));
  });

test('SIGTERM while Redis is down still exits 0 and closes clients with 1001', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  assert.equal((await c.request({ op: 'subscribe', board: 'demo', view: { top: 3 } })).op, 'snapshot');
  await redis.stop();
  await h.waitFor(async () => (await h.http(gw.base, 'GET', '/healthz')).status === 503, 5000, '/healthz 503');
  gw.kill('SIGTERM');
  const exit = await within(gw.exited, 5000, 'the gateway to exit after SIGTERM');
  assert.deepEqual(exit, { code: 0, signal: null }, gw.stderr.join('\n'));
  assert.equal((await within(c.closed, 2000, 'the close')).code, 1001);
  assert.ok(gw.stderr.some((l) => /stopped/.test(l)), gw.stderr.join('\n'));
});

test('SIGINT is the same clean stop', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const before = await redis.fingerprint();
  gw.kill('SIGINT');
  const exit = await within(gw.exited, 5000, 'the gateway to exit after SIGINT');
  assert.deepEqual(exit, { code: 0, signal: null }, gw.stderr.join('\n'));
  assert.equal((await within(c.closed, 2000, 'the close')).code, 1001);
  assert.equal(await redis.fingerprint(), before);
});
