/* webhook.test.js - the webhook on period close ([webhook], docs/webhooks.md):
 * a real HTTP receiver on loopback checks every POST's HMAC-SHA256 signature
 * with node's crypto; a period of a custom 1-hour board is closed by moving
 * the gateway's test clock past its end. Covered: a receiver that fails the
 * first two attempts (500, then a reset connection) gets exactly one accepted
 * delivery with the top rows and profiles; a hanging receiver costs timeouts
 * and retries, shows in /metrics, and the gateway keeps answering; a stop
 * while a POST hangs exits at once and hands the delivery to the other
 * gateway, and one killed mid-retry leaves its lock to expire before the
 * other delivers; two gateways closing the same period deliver it once, on
 * one Redis and on a Redis Cluster (3 primaries; profiles in their own slots); a
 * board of a periodic template (archived from its index) is delivered too. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const SECRET = 'hook-secret-0123456789abcdef';
const HANG_S = 5; // the hanging receiver test's webhook timeout: each attempt hangs this long (5 s: some 10 round trips must fit inside the first)

const BOARD = `[board hook]
order = desc
period = custom
period_base = 2026-01-01T00:00:00Z
period_length = 1h
keep = 2
tiebreak = earliest
`;

/* A receiver on 127.0.0.1: `behave(n, req)` decides what attempt n (1-based)
 * gets: a status code, 'reset' (the connection is destroyed) or 'hang' (no
 * answer, ever). Every request is recorded with its raw body. */
async function startReceiver(t, behave) {
  const got = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const rec = { headers: req.headers, raw, at: Date.now() };
      got.push(rec);
      const what = behave(got.length, req);
      rec.answer = what;
      if (what === 'reset') req.socket.destroy();
      else if (what !== 'hang') res.writeHead(what, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.defer(t, () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, got };
}

function signatureOk(rec, secret = SECRET) {
  const want = 'sha256=' + crypto.createHmac('sha256', secret).update(rec.raw).digest('hex');
  const have = String(rec.headers['x-rankcast-signature'] || '');
  return have.length === want.length && crypto.timingSafeEqual(Buffer.from(have), Buffer.from(want));
}

function metrics(text) {
  const m = new Map();
  for (const line of text.split('\n')) {
    const x = /^(rankcast_webhook\w*) (\d+)$/.exec(line);
    if (x) m.set(x[1], Number(x[2]));
  }
  return m;
}

async function hookMetrics(gw) {
  return metrics((await h.http(gw.base, 'GET', '/metrics')).text);
}

async function setClock(gw, iso) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse(iso) });
  assert.equal(r.status, 200, r.text);
}

/* Five members in period 0 of `hook`, two with profiles. */
async function fillPeriod(gw) {
  await setClock(gw, '2026-01-01T00:30:00Z');
  for (const [member, delta] of [['user:a', 30], ['user:b', 50], ['user:c', 40], ['user:d', 10], ['user:e', 70]]) {
    const r = await h.http(gw.base, 'POST', '/api/v1/boards/hook/scores', { member, op: 'incr', delta });
    assert.equal(r.status, 200, r.text);
  }
  for (const [member, name] of [['user:b', 'Bea'], ['user:e', 'Eve']]) {
    const r = await h.http(gw.base, 'PUT', `/api/v1/members/${member}/profile`, { name });
    assert.ok(r.status === 200 || r.status === 204, r.text);
  }
}

const closePeriod = (gw) => setClock(gw, '2026-01-01T01:00:00.500Z');

test('a receiver failing twice gets exactly one accepted, signed delivery with the top rows and profiles',
  { skip }, async (t) => {
    const rx = await startReceiver(t, (n) => (n === 1 ? 500 : n === 2 ? 'reset' : 200));
    const config = h.configWith(t, {
      server: { test_clock: 'on' }, extra: BOARD,
      webhook: { url: rx.url, secret: SECRET, top: 3, timeout: '5s', retries: 4, backoff_base: '200ms', backoff_cap: '1s' },
    });
    const { redis, gw } = await h.startStack(t, { config });
    await fillPeriod(gw);
    await closePeriod(gw);
    await gw.waitForLine(/webhook hook 0: delivered \(HTTP 200, attempt 3\)/, 20000);
    await h.sleep(1500); // nothing more comes
    assert.deepEqual(rx.got.map((r) => r.answer), [500, 'reset', 200]);
    for (const r of rx.got) {
      assert.ok(signatureOk(r), `bad signature ${r.headers['x-rankcast-signature']}`);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.match(r.headers['x-rankcast-delivery'], /^[0-9a-f]{32}$/);
      assert.equal(r.headers['x-rankcast-delivery'], rx.got[0].headers['x-rankcast-delivery']);
    }
    assert.deepEqual(rx.got.map((r) => r.headers['x-rankcast-attempt']), ['1', '2', '3']);
    assert.ok(!signatureOk(rx.got[2], SECRET + 'x'), 'a wrong secret must not verify');
    const body = JSON.parse(rx.got[2].raw.toString('utf8'));
    assert.deepEqual(body, {
      board: 'hook', period: '0', total: 5,
      rows: [
        { rank: 1, member: 'user:e', score: 70, name: 'Eve' },
        { rank: 2, member: 'user:b', score: 50, name: 'Bea' },
        { rank: 3, member: 'user:c', score: 40 },
      ],
    });
    // The backoff waited between attempts (200 ms, then 400 ms).
    assert.ok(rx.got[1].at - rx.got[0].at >= 150, `retry 1 after ${rx.got[1].at - rx.got[0].at} ms`);
    assert.ok(rx.got[2].at - rx.got[1].at >= 300, `retry 2 after ${rx.got[2].at - rx.got[1].at} ms`);
    const m = await hookMetrics(gw);
    assert.equal(m.get('rankcast_webhooks_sent_total'), 1);
    assert.equal(m.get('rankcast_webhook_failures_total'), 2);
    assert.equal(m.get('rankcast_webhooks_gave_up_total'), 0);
    assert.equal(m.get('rankcast_webhooks_in_flight'), 0);
    assert.equal(await redis.cli('GET', 'rc:{hook|0}:hooked'), 'sent');
    assert.equal(await redis.cli('EXISTS', 'rc:{hook|0}:hooking'), '0');
    const ttl = Number(await redis.cli('PTTL', 'rc:{hook|0}:hooked'));
    assert.ok(ttl > 0, `the marker expires (PTTL ${ttl})`);
  });

test('a hanging receiver times out, is retried, counted in /metrics and given up on; the gateway keeps answering',
  { skip }, async (t) => {
    const rx = await startReceiver(t, () => 'hang');
    const config = h.configWith(t, {
      server: { test_clock: 'on' }, extra: BOARD,
      webhook: { url: rx.url, secret: SECRET, timeout: `${HANG_S}s`, retries: 1, backoff_base: '100ms', backoff_cap: '200ms' },
    });
    const { redis, gw } = await h.startStack(t, { config });
    await fillPeriod(gw);
    await closePeriod(gw);
    await h.waitFor(() => rx.got.length >= 1, 15000, 'the first POST');
    // While the POST hangs, the gateway answers WebSocket and REST: all of
    // it before the first attempt's timeout (a loop held by the POST would
    // answer only after it), with no tighter bound (a loaded machine).
    assert.equal((await hookMetrics(gw)).get('rankcast_webhooks_in_flight'), 1);
    const c = await h.connectWs(t, gw.wsUrl);
    for (let i = 0; i < 5; i++) {
      assert.equal((await c.request({ op: 'ping' }, HANG_S * 1000)).op, 'pong');
      const r = await h.http(gw.base, 'GET', '/api/v1/boards/hook?top=3&period=0', null, { timeoutMs: HANG_S * 1000 });
      assert.equal(r.status, 200, r.text);
    }
    const answeredIn = Date.now() - rx.got[0].at;
    assert.ok(answeredIn < HANG_S * 1000, `5 pings and reads took until ${answeredIn} ms into the POST's ${HANG_S} s hang`);
    await gw.waitForLine(/webhook hook 0: attempt 2 failed \(.*\); giving up/, 4 * HANG_S * 1000);
    assert.equal(rx.got.length, 2);
    for (const r of rx.got) assert.ok(signatureOk(r));
    const m = await hookMetrics(gw);
    assert.equal(m.get('rankcast_webhook_failures_total'), 2);
    assert.equal(m.get('rankcast_webhooks_gave_up_total'), 1);
    assert.equal(m.get('rankcast_webhooks_sent_total'), 0);
    assert.equal(m.get('rankcast_webhooks_in_flight'), 0);
    assert.ok(gw.stderr.some((l) => /attempt 1 failed \(.*timed out.*\); retrying in 100 ms/.test(l)),
      gw.stderr.filter((l) => /webhook/.test(l)).join('\n'));
    // Given up is final: marked, so no gateway tries again.
    assert.equal(await redis.cli('GET', 'rc:{hook|0}:hooked'), 'gave-up');
    await h.sleep(1000);
    assert.equal(rx.got.length, 2);
  });

test('a gateway stopped while its POST hangs exits at once; the other gateway delivers it, once', { skip }, async (t) => {
  let hang = true;
  const rx = await startReceiver(t, () => (hang ? 'hang' : 200));
  const config = h.configWith(t, {
    server: { test_clock: 'on' }, extra: BOARD,
    webhook: { url: rx.url, secret_env: 'RC_TEST_HOOK_SECRET', timeout: '60s', retries: 1 },
  });
  const env = { RC_TEST_HOOK_SECRET: SECRET };
  const redis = await h.startRedis(t);
  const gws = [await h.startGateway(t, { redisPort: redis.port, config, env }),
    await h.startGateway(t, { redisPort: redis.port, config, env })];
  await fillPeriod(gws[0]);
  await setClock(gws[1], '2026-01-01T00:30:00Z');
  await Promise.all(gws.map(closePeriod));
  await h.waitFor(() => rx.got.length >= 1, 15000, 'the first POST');
  await h.sleep(500);
  assert.equal(rx.got.length, 1, 'one gateway sends; the other watches');
  const inFlight = [];
  for (const g of gws) inFlight.push((await hookMetrics(g)).get('rankcast_webhooks_in_flight'));
  assert.deepEqual([...inFlight].sort(), [0, 1]);
  const sender = gws[inFlight.indexOf(1)];
  const other = gws[inFlight.indexOf(0)];
  hang = false;
  const t0 = Date.now();
  await sender.stop();
  // the POST's timeout is 60 s: a stop that waited for it would take that long
  assert.ok(Date.now() - t0 < 10000, `the stop took ${Date.now() - t0} ms with a webhook hanging`);
  await sender.checkExit();
  assert.ok(sender.stderr.some((l) => /webhook: 1 deliveries not done at shutdown/.test(l)));
  await other.waitForLine(/webhook hook 0: delivered \(HTTP 200, attempt 1\)/, 15000);
  await h.sleep(1000);
  assert.equal(rx.got.length, 2);
  assert.equal(rx.got.filter((r) => r.answer === 200).length, 1);
  assert.equal(rx.got[1].headers['x-rankcast-delivery'], rx.got[0].headers['x-rankcast-delivery']);
  assert.ok(signatureOk(rx.got[1]));
  assert.equal(rx.got[1].raw.toString(), rx.got[0].raw.toString(), 'the same body from either gateway');
});

test('two gateways closing the same period deliver it once', { skip }, async (t) => {
  // Slow answers widen the window in which both could send.
  const rx = await startReceiver(t, () => 200);
  const config = h.configWith(t, {
    server: { test_clock: 'on' }, extra: BOARD,
    webhook: { url: rx.url, secret: SECRET, top: 10 },
  });
  const redis = await h.startRedis(t);
  const gws = [await h.startGateway(t, { redisPort: redis.port, config }),
    await h.startGateway(t, { redisPort: redis.port, config })];
  await fillPeriod(gws[0]);
  await setClock(gws[1], '2026-01-01T00:30:00Z');
  await Promise.all(gws.map(closePeriod));
  await h.waitFor(() => rx.got.length >= 1, 15000, 'the delivery');
  // Both gateways see the period archived; give the second every chance.
  await h.waitFor(async () => (await redis.cli('GET', 'rc:{hook|0}:hooked')) === 'sent', 5000, 'the marker');
  await h.sleep(4000);
  assert.equal(rx.got.length, 1, `deliveries: ${rx.got.length}`);
  assert.ok(signatureOk(rx.got[0]));
  assert.equal(JSON.parse(rx.got[0].raw).rows.length, 5);
  const sent = [];
  for (const g of gws) sent.push((await hookMetrics(g)).get('rankcast_webhooks_sent_total'));
  assert.deepEqual(sent.sort(), [0, 1]);
  const lines = gws.flatMap((g) => g.stderr).filter((l) => /webhook hook 0: delivered/.test(l));
  assert.equal(lines.length, 1);
});

test('on a Redis Cluster: two gateways, a receiver failing once: one signed delivery with the profiles (each key in its own slot)',
  { skip, timeout: 120000 }, async (t) => {
    const rx = await startReceiver(t, (n) => (n === 1 ? 500 : 200));
    const config = h.configWith(t, {
      server: { test_clock: 'on' }, extra: BOARD,
      webhook: { url: rx.url, secret: SECRET, top: 3, retries: 4, backoff_base: '200ms', backoff_cap: '1s' },
    });
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
    const gws = [await h.startGateway(t, { redis: cluster.seeds, config }),
      await h.startGateway(t, { redis: cluster.seeds, config })];
    await fillPeriod(gws[0]);
    await setClock(gws[1], '2026-01-01T00:30:00Z');
    await Promise.all(gws.map(closePeriod));
    await h.waitFor(() => rx.got.some((r) => r.answer === 200), 30000, 'the accepted delivery');
    const owner = await cluster.owner('rc:{hook|0}:hooked');
    await h.waitFor(async () => (await cluster.cli(owner, 'GET', 'rc:{hook|0}:hooked')) === 'sent', 10000, 'the marker');
    await h.sleep(3000); // give the other gateway every chance to send again
    assert.deepEqual(rx.got.map((r) => r.answer), [500, 200]);
    for (const r of rx.got) assert.ok(signatureOk(r), `bad signature ${r.headers['x-rankcast-signature']}`);
    assert.equal(rx.got[1].headers['x-rankcast-delivery'], rx.got[0].headers['x-rankcast-delivery']);
    assert.deepEqual(JSON.parse(rx.got[1].raw.toString('utf8')), {
      board: 'hook', period: '0', total: 5,
      rows: [
        { rank: 1, member: 'user:e', score: 70, name: 'Eve' },
        { rank: 2, member: 'user:b', score: 50, name: 'Bea' },
        { rank: 3, member: 'user:c', score: 40 },
      ],
    });
    const sent = [];
    for (const g of gws) sent.push((await hookMetrics(g)).get('rankcast_webhooks_sent_total'));
    assert.deepEqual(sent.sort(), [0, 1]);
  });

test('a gateway killed mid-retry leaves its lock to expire; the other gateway then delivers it', { skip }, async (t) => {
  let fail = true;
  const rx = await startReceiver(t, () => (fail ? 503 : 200));
  // lock_ttl 6s, not the default 30s: the same expiry and takeover, 24 s
  // sooner (the live sender renews it every 2 s, far inside the 6)
  const config = h.configWith(t, {
    server: { test_clock: 'on' }, extra: BOARD,
    webhook: { url: rx.url, secret: SECRET, retries: 20, backoff_base: '500ms', backoff_cap: '1s', lock_ttl: '6s' },
  });
  const redis = await h.startRedis(t);
  const gws = [await h.startGateway(t, { redisPort: redis.port, config }),
    await h.startGateway(t, { redisPort: redis.port, config })];
  await fillPeriod(gws[0]);
  await setClock(gws[1], '2026-01-01T00:30:00Z');
  await Promise.all(gws.map(closePeriod));
  await h.waitFor(() => rx.got.length >= 2, 15000, 'two failed attempts');
  const failures = [];
  for (const g of gws) failures.push((await hookMetrics(g)).get('rankcast_webhook_failures_total'));
  const sender = gws[failures.findIndex((n) => n > 0)];
  const other = gws[failures.findIndex((n) => n === 0)];
  assert.ok(sender && other, `failures per gateway: ${failures}`);
  sender.kill('SIGKILL');
  await sender.exited;
  fail = false;
  // The killed gateway's lock is left, with lock_ttl's expiry (renewed
  // within the last 2 s); it must expire first: the other gateway, watching,
  // takes over.
  const pttl = Number(await redis.cli('PTTL', 'rc:{hook|0}:hooking'));
  assert.ok(pttl > 0 && pttl <= 6000, `the lock's PTTL after the kill: ${pttl}`);
  await other.waitForLine(/webhook hook 0: delivered \(HTTP 200, attempt 1\)/, 60000);
  await h.sleep(1000);
  assert.equal(rx.got.filter((r) => r.answer === 200).length, 1);
  assert.ok(rx.got.every((r) => signatureOk(r)));
  assert.equal(new Set(rx.got.map((r) => r.headers['x-rankcast-delivery'])).size, 1);
  assert.equal(await redis.cli('GET', 'rc:{hook|0}:hooked'), 'sent');
});

test('a board of a periodic template (round:*) is archived from its index and its period is delivered too',
  { skip }, async (t) => {
    const rx = await startReceiver(t, () => 200);
    const config = h.configWith(t, {
      server: { test_clock: 'on' },
      extra: BOARD.replace('[board hook]', '[board round:*]'),
      webhook: { url: rx.url, secret: SECRET, top: 2, timeout: '5s', retries: 2, backoff_base: '200ms', backoff_cap: '1s' },
    });
    const { redis, gw } = await h.startStack(t, { config });
    await setClock(gw, '2026-01-01T00:30:00Z');
    for (const [member, delta] of [['user:a', 5], ['user:b', 9], ['user:c', 7]]) {
      const r = await h.http(gw.base, 'POST', '/api/v1/boards/round:7/scores', { member, op: 'incr', delta });
      assert.equal(r.status, 200, r.text);
    }
    await closePeriod(gw);
    await gw.waitForLine(/webhook round:7 0: delivered \(HTTP 200, attempt 1\)/, 30000);
    await h.sleep(1000); // nothing more comes
    assert.equal(rx.got.length, 1);
    assert.ok(signatureOk(rx.got[0]));
    assert.deepEqual(JSON.parse(rx.got[0].raw.toString('utf8')), {
      board: 'round:7', period: '0', total: 3,
      rows: [{ rank: 1, member: 'user:b', score: 9 }, { rank: 2, member: 'user:c', score: 7 }],
    });
    assert.equal(await redis.cli('GET', 'rc:{round:7|0}:hooked'), 'sent');
  });
