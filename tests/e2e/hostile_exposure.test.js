/* hostile_exposure.test.js - what an anonymous client learns (issue 23,
 * "Exposure"):
 *  - /metrics and the detailed /healthz (Redis node addresses, last_error,
 *    queue consumers) need the admin scope unless [server] metrics_public =
 *    on; the bare /healthz status (200/503 with {"ok":..}) stays open
 *    (PROTOCOL.md v1.2, "Metrics and health"). Before: both open to anyone.
 *  - an error never carries Redis' reply text: a board key of the wrong
 *    type (set from outside with redis-cli) makes the write script fail,
 *    and the WebSocket and REST errors say so in a stable message while the
 *    log has Redis' text. Before: the error repeated "WRONGTYPE ... script:
 *    <sha>, on @user_script:<line>". */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

/* What Redis says in an error reply, in any of its forms. */
const REDIS_TEXT = /WRONGTYPE|user_script|script: [0-9a-f]|\bERR |[0-9a-f]{40}/;

test('anonymous clients get the bare /healthz status and no /metrics; the admin key gets both in full',
  { skip, timeout: 30000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const anon = await h.http(gw.base, 'GET', '/healthz', null, { token: null });
    assert.equal(anon.status, 200);
    assert.deepEqual(anon.body, { ok: true }, `anonymous /healthz: ${anon.text}`);
    assert.ok(!anon.text.includes(String(redis.port)), 'no Redis address in the anonymous /healthz');

    const admin = await h.http(gw.base, 'GET', '/healthz');
    assert.equal(admin.status, 200);
    assert.equal(admin.body.ok, true);
    assert.equal(admin.body.redis, 'up');
    assert.ok(admin.body.nodes.some((n) => n.node.endsWith(`:${redis.port}`)), `admin /healthz: ${admin.text}`);

    const m = await h.http(gw.base, 'GET', '/metrics', null, { token: null });
    assert.equal(m.status, 401, `anonymous /metrics: ${m.status} ${m.text.slice(0, 200)}`);
    assert.equal(m.body.code, 'unauthorized');
    assert.ok(!/rankcast_/.test(m.text), 'no metric in the refusal');

    const full = await h.http(gw.base, 'GET', '/metrics');
    assert.equal(full.status, 200);
    assert.match(full.text, /^rankcast_connections \d+$/m);
  });

test('a key without the admin scope gets the bare /healthz and 403 on /metrics', { skip, timeout: 30000 }, async (t) => {
  const config = h.configWith(t, { 'key reader': { secret: 'exposure-reader-secret-0123456789', scopes: 'read' } });
  const { gw } = await h.startStack(t, { config });
  const token = 'exposure-reader-secret-0123456789';
  const hz = await h.http(gw.base, 'GET', '/healthz', null, { token });
  assert.deepEqual(hz.body, { ok: true }, hz.text);
  const m = await h.http(gw.base, 'GET', '/metrics', null, { token });
  assert.equal(m.status, 403, m.text.slice(0, 200));
  assert.equal(m.body.code, 'forbidden');
});

test('with Redis down the anonymous /healthz is 503 {"ok":false}, without why or addresses', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  await redis.stop();
  await h.waitFor(async () => (await h.http(gw.base, 'GET', '/healthz', null, { token: null })).status === 503,
    10000, '/healthz 503');
  const anon = await h.http(gw.base, 'GET', '/healthz', null, { token: null });
  assert.deepEqual(anon.body, { ok: false }, anon.text);
  const admin = await h.http(gw.base, 'GET', '/healthz');
  assert.equal(admin.status, 503);
  assert.equal(typeof admin.body.why, 'string', admin.text);
});

test('[server] metrics_public = on opens /metrics and the detailed /healthz to anyone', { skip, timeout: 30000 }, async (t) => {
  const config = h.configWith(t, { server: { metrics_public: 'on' } });
  const { redis, gw } = await h.startStack(t, { config });
  const m = await h.http(gw.base, 'GET', '/metrics', null, { token: null });
  assert.equal(m.status, 200);
  assert.match(m.text, /^rankcast_connections \d+$/m);
  const hz = await h.http(gw.base, 'GET', '/healthz', null, { token: null });
  assert.ok(hz.body.nodes.some((n) => n.node.endsWith(`:${redis.port}`)), hz.text);
});

test('an error reply of Redis reaches neither the WebSocket nor the REST client; the log has it',
  { skip, timeout: 30000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    // The board's sorted set made a string from outside: the write script's
    // ZADD/ZSCORE on it fails with WRONGTYPE.
    await redis.cli('SET', 'rc:{demo|}:z', 'not-a-zset');

    const c = await h.connectWs(t, gw.wsUrl);
    const ws = await c.request({ op: 'incr', board: 'demo', member: 'user:wt', delta: 1 });
    assert.equal(ws.op, 'error', JSON.stringify(ws));
    assert.equal(ws.code, 'internal');
    assert.doesNotMatch(ws.message, REDIS_TEXT, `WebSocket error: ${ws.message}`);
    assert.match(ws.message, /Redis refused the operation/);

    const rest = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:wt', op: 'set', value: 5 });
    assert.equal(rest.status, 500, rest.text);
    assert.equal(rest.body.code, 'internal');
    assert.doesNotMatch(rest.text, REDIS_TEXT, `REST error: ${rest.text}`);

    // Reads of that board: whatever they answer, no Redis text either.
    const snap = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=3');
    assert.doesNotMatch(snap.text, REDIS_TEXT, `REST read: ${snap.text}`);
    const sub = await c.request({ op: 'subscribe', board: 'demo', view: { top: 3 } }, 5000);
    assert.doesNotMatch(JSON.stringify(sub), REDIS_TEXT, `WebSocket subscribe: ${JSON.stringify(sub)}`);
    const rank = await c.request({ op: 'rank', board: 'demo', member: 'user:wt' }, 5000);
    assert.doesNotMatch(JSON.stringify(rank), REDIS_TEXT, `WebSocket rank: ${JSON.stringify(rank)}`);
    t.diagnostic(`read answers: ${snap.status} ${snap.text.slice(0, 120)} | ${JSON.stringify(sub).slice(0, 120)} | ${JSON.stringify(rank).slice(0, 120)}`);

    // Redis' own text is in the gateway's log.
    const line = await gw.waitForLine(/WRONGTYPE/, 5000);
    assert.match(line, /write script/);
  });
