/* hostile_conns.test.js - budgets for connections that never upgrade
 * ([limits] header_timeout, body_timeout, max_conns_per_ip, max_conns):
 *  - a request body trickled one byte every 500 ms is cut off after
 *    body_timeout in total (counted from the end of the headers, not per
 *    byte); a slow body that makes it in time is served;
 *  - headers trickled byte by byte, or nothing at all, are cut off after
 *    header_timeout in total, also for the next request on a keep-alive
 *    connection;
 *  - raw TCP connections that send nothing count against max_conns_per_ip
 *    from accept: past the limit 127.0.0.1 is not served (closed at once, or
 *    a 503 to its first request for a small slack), 127.0.0.2 still is, and a
 *    freed slot can be used again;
 *  - with a low max_conns, the excess from many addresses is closed at once
 *    while the connections already in keep being served;
 *  - max_conns = auto: the gateway raises its soft fd limit to the hard one
 *    and takes the limit minus a 256 reserve (started with a soft limit of
 *    1024 it still holds 1,500 connections); an explicit max_conns above
 *    that refuses to start.
 * The flood version (2,000 of them against a live viewer) is
 * hostile_flood.test.js. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

/* A raw TCP connection from localAddress that records what came back and
 * when the server closed it. */
function rawConn(port, localAddress = '127.0.0.1') {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    const c = { sock, data: '', closedAt: null, openedAt: null, failed: null };
    c.closed = new Promise((r) => sock.on('close', () => { if (c.closedAt === null) c.closedAt = Date.now(); r(); }));
    sock.on('data', (d) => { c.data += d.toString('latin1'); });
    sock.on('error', (e) => { c.failed = e.code || e.message; });
    sock.once('connect', () => { c.openedAt = Date.now(); resolve(c); });
    sock.once('error', () => resolve(c));
  });
}

const statusOf = (text) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] || 0);
const isOpen = (c) => c.closedAt === null && !c.failed;

/* Opens n silent connections, `par` at a time. */
async function openMany(port, localAddress, n, par = 50) {
  const out = [];
  for (let i = 0; i < n; i += par) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(par, n - i) }, () => rawConn(port, localAddress)))));
  }
  return out;
}

/* The gateway's own count of open sockets (rankcast_sockets), asked from
 * 127.0.0.2 (that request is one of them); null if /metrics has no such line. */
async function socketsOpen(gw) {
  const r = await h.http(gw.base, 'GET', '/metrics', null, { localAddress: '127.0.0.2', timeoutMs: 3000 });
  const m = /^rankcast_sockets (\d+)$/m.exec(r.text);
  return m ? Number(m[1]) : null;
}

/* Waits until the gateway has accepted at least n sockets (rankcast_sockets
 * counts the /metrics request too), or 1 s when it has no such metric. */
async function acceptedAtLeast(gw, n) {
  if ((await socketsOpen(gw)) === null) { await h.sleep(1000); return; }
  await h.waitFor(async () => (await socketsOpen(gw)) >= n + 1, 10000, `the gateway to accept ${n} sockets`);
}

/* Sends `chunks` one per `everyMs` until the server closes or untilMs pass. */
async function trickle(c, chunks, everyMs, untilMs) {
  const end = Date.now() + untilMs;
  let i = 0;
  while (isOpen(c) && Date.now() < end) {
    if (i < chunks.length) c.sock.write(chunks[i++]);
    await Promise.race([c.closed, h.sleep(everyMs)]);
  }
}

test('body_timeout: a body trickled at one byte per 500 ms is cut off after body_timeout in total',
  { skip, timeout: 60000 }, async (t) => {
    const config = h.configWith(t, { limits: { body_timeout: '2s', header_timeout: '10s' } });
    const { redis, gw } = await h.startStack(t, { config });
    const fp = await redis.fingerprint();
    const c = await rawConn(gw.port);
    h.defer(t, () => c.sock.destroy());
    const headersAt = Date.now();
    c.sock.write(`POST /api/v1/boards/demo/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.ADMIN_KEY}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n');
    // One byte every 500 ms: a per-byte timeout of 2 s would never fire.
    await trickle(c, Array.from({ length: 100 }, () => ' '), 500, 20000);
    assert.ok(!isOpen(c), 'the connection is still open after 20 s of trickling');
    const took = c.closedAt - headersAt;
    t.diagnostic(`closed ${took} ms after the headers; answer: ${JSON.stringify(c.data.slice(0, 60))}`);
    assert.ok(took >= 1500, `closed after ${took} ms, before body_timeout`);
    assert.ok(took < 6000, `closed after ${took} ms: body_timeout is 2 s in total`);
    assert.notEqual(statusOf(c.data), 200, 'the late body was not served');
    assert.equal(await redis.fingerprint(), fp, 'nothing written');
    assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });

test('body_timeout: a slow body that completes within the budget is served',
  { skip, timeout: 30000 }, async (t) => {
    const config = h.configWith(t, { limits: { body_timeout: '3s' } });
    const { gw } = await h.startStack(t, { config });
    const body = JSON.stringify({ member: 'user:slow', op: 'incr', delta: 5 });
    const c = await rawConn(gw.port);
    h.defer(t, () => c.sock.destroy());
    c.sock.write(`POST /api/v1/boards/demo/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.ADMIN_KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    const parts = [body.slice(0, 10), body.slice(10, 20), body.slice(20, 30), body.slice(30)];
    await trickle(c, parts, 300, 1200); // four chunks over ~1 s
    await h.waitFor(() => /\r\n\r\n\{.*\}/s.test(c.data) || !isOpen(c), 5000, 'an answer');
    assert.equal(statusOf(c.data), 200, c.data);
    assert.match(c.data, /"score":5/);
  });

test('header_timeout: headers trickled byte by byte, or none at all, are cut off after header_timeout in total',
  { skip, timeout: 60000 }, async (t) => {
    const config = h.configWith(t, { limits: { header_timeout: '2s' } });
    const { gw } = await h.startStack(t, { config });
    const slow = await rawConn(gw.port);
    const silent = await rawConn(gw.port);
    h.defer(t, () => { slow.sock.destroy(); silent.sock.destroy(); });
    const t0 = Date.now();
    const header = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200);
    await Promise.all([
      trickle(slow, header.split(''), 500, 20000),
      Promise.race([silent.closed, h.sleep(20000)]),
    ]);
    for (const [c, what] of [[slow, 'trickled headers'], [silent, 'a silent connection']]) {
      assert.ok(!isOpen(c), `${what}: still open after 20 s`);
      const took = c.closedAt - t0;
      t.diagnostic(`${what}: closed after ${took} ms`);
      assert.ok(took >= 1500 && took < 6000, `${what}: closed after ${took} ms (header_timeout 2 s)`);
      assert.notEqual(statusOf(c.data), 200);
    }
    assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });

// No keep-alive (docs/security.md): after its answer a connection is closed,
// so nothing can sit on it waiting for a next request.
test('after its answer an HTTP connection is closed: no idle keep-alive to hold',
  { skip, timeout: 60000 }, async (t) => {
    const config = h.configWith(t, { limits: { header_timeout: '2s' } });
    const { gw } = await h.startStack(t, { config });
    const c = await rawConn(gw.port);
    h.defer(t, () => c.sock.destroy());
    c.sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await h.waitFor(() => !isOpen(c), 3000, 'the connection to be closed after its answer');
    assert.equal(statusOf(c.data), 200, 'the request is served');
    assert.match(c.data, /connection: close/i);
  });

test('max_conns_per_ip: silent TCP connections count from accept; the 51st from 127.0.0.1 is not served, 127.0.0.2 is',
  { skip, timeout: 60000 }, async (t) => {
    const config = h.configWith(t, { limits: { max_conns_per_ip: 50, header_timeout: '60s', max_conns: 5000 } });
    const { gw } = await h.startStack(t, { config });
    const held = await openMany(gw.port, '127.0.0.1', 50);
    h.defer(t, () => held.forEach((c) => c.sock.destroy()));
    assert.equal(held.filter(isOpen).length, 50, 'the 50 connect');
    await acceptedAtLeast(gw, 50);

    // The 51st: closed at once, or (a small slack) answered 503; never served.
    const c51 = await rawConn(gw.port, '127.0.0.1');
    h.defer(t, () => c51.sock.destroy());
    if (isOpen(c51)) c51.sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await Promise.race([c51.closed, h.waitFor(() => statusOf(c51.data), 5000).catch(() => null)]);
    const st51 = statusOf(c51.data);
    t.diagnostic(`51st connection: ${isOpen(c51) ? 'open' : 'closed'}, answer ${st51 || 'none'}`);
    assert.ok(st51 === 503 || (st51 === 0 && !isOpen(c51)), `the 51st was served: ${JSON.stringify(c51.data.slice(0, 80))}`);
    await h.http(gw.base, 'GET', '/healthz', null, { localAddress: '127.0.0.1', timeoutMs: 3000 }).then(
      (r) => assert.notEqual(r.status, 200, 'an HTTP request from 127.0.0.1 is not served'),
      () => { /* closed: fine */ });

    // 40 more silent ones: past a small slack they are closed at once.
    const excess = await openMany(gw.port, '127.0.0.1', 40);
    h.defer(t, () => excess.forEach((c) => c.sock.destroy()));
    await h.waitFor(() => excess.filter(isOpen).length <= 20, 5000, 'the excess to be closed').catch(() => null);
    const stillOpen = excess.filter(isOpen).length;
    t.diagnostic(`of 40 excess silent connections ${40 - stillOpen} were closed at once, ${stillOpen} left open`);
    assert.ok(stillOpen <= 20, `${stillOpen} of 40 excess connections left open`);
    // The first 50 were not disturbed.
    assert.equal(held.filter(isOpen).length, 50, 'the 50 admitted connections are still open');

    // Another address is not affected: HTTP and WebSocket from 127.0.0.2.
    assert.equal((await h.http(gw.base, 'GET', '/healthz', null, { localAddress: '127.0.0.2' })).status, 200);
    const ws = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.2' });
    assert.equal((await ws.request({ op: 'ping' })).op, 'pong');

    // Freeing slots lets 127.0.0.1 in again.
    for (const c of held.slice(0, 10)) c.sock.destroy();
    for (const c of excess) c.sock.destroy();
    c51.sock.destroy();
    await h.waitFor(async () => {
      const r = await h.http(gw.base, 'GET', '/healthz', null, { localAddress: '127.0.0.1', timeoutMs: 2000 }).catch(() => null);
      return r && r.status === 200;
    }, 10000, '127.0.0.1 to be served again once slots are free');
  });

test('max_conns: the excess from many addresses is closed at once and the gateway keeps serving',
  { skip, timeout: 60000 }, async (t) => {
    const MAX = 100;
    const config = h.configWith(t, { limits: { max_conns: MAX, header_timeout: '60s' } });
    const { gw } = await h.startStack(t, { config });
    // Already in before the flood: a viewer and a writer.
    const viewer = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.2' });
    const sub = (await viewer.request({ op: 'subscribe', board: 'demo', view: { top: 10 } })).sub;
    const writer = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.2' });

    // Fill up to max_conns from ten addresses (97 silent sockets, the two
    // WebSockets and the /metrics request that checks they are in), then 100
    // more from ten other addresses.
    const fill = [];
    for (let a = 10; a < 20; a++) fill.push(...(await openMany(gw.port, `127.0.0.${a}`, a < 17 ? 10 : 9)));
    h.defer(t, () => fill.forEach((c) => c.sock.destroy()));
    assert.equal(fill.length, MAX - 3);
    await acceptedAtLeast(gw, MAX - 1);
    const excess = [];
    for (let a = 20; a < 30; a++) excess.push(...(await openMany(gw.port, `127.0.0.${a}`, 10)));
    h.defer(t, () => excess.forEach((c) => c.sock.destroy()));
    await h.waitFor(() => excess.filter(isOpen).length <= 30, 5000, 'the excess to be closed').catch(() => null);
    const stillOpen = excess.filter(isOpen).length;
    t.diagnostic(`max_conns ${MAX}: ${fill.filter(isOpen).length} filling sockets open; of 100 excess ` +
      `${100 - stillOpen} closed at once, ${stillOpen} left open`);
    assert.ok(stillOpen <= 30, `${stillOpen} of 100 connections over max_conns left open`);

    // The connections already in are served: a write is acked and seen.
    const ack = await writer.request({ op: 'set', board: 'demo', member: 'user:during', value: 777 }, 5000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    await viewer.next((m) => m.sub === sub && (m.op === 'delta' || m.op === 'snapshot') &&
      (m.rows || []).some((r) => r.member === 'user:during'), 5000);
    assert.equal((await viewer.request({ op: 'ping' })).op, 'pong');

    // Once the flood goes away, newcomers get in again.
    for (const c of fill.concat(excess)) c.sock.destroy();
    await h.waitFor(async () => {
      const r = await h.http(gw.base, 'GET', '/healthz', null, { localAddress: '127.0.0.40', timeoutMs: 2000 }).catch(() => null);
      return r && r.status === 200;
    }, 10000, 'a new connection to be served after the flood');
  });

/* A script that runs the shell commands `ulimit` (fd limits), then execs
 * the gateway (same pid); removed when t ends. */
function limitWrapper(t, ulimit) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-ulimit-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const wrapper = path.join(dir, 'rankcast-ulimit');
  fs.writeFileSync(wrapper, `#!/bin/sh\n${ulimit} || exit 99\nexec "${h.gatewayBin()}" "$@"\n`, { mode: 0o755 });
  return wrapper;
}

/* "Max open files" soft and hard limits of a process. */
function nofile(pid) {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'));
  const n = (v) => (v === 'unlimited' ? Infinity : Number(v));
  return { soft: n(m[1]), hard: n(m[2]) };
}

test('max_conns = auto: started with a soft fd limit of 1024, the gateway raises it and holds 1,500 connections',
  { skip, timeout: 60000 }, async (t) => {
    const { hard } = nofile('self');
    // (in CI a hard limit too low to raise into fails: toolMissing)
    const why = h.toolMissing(hard < 2500 ? `needs a hard fd limit of at least 2500 (here ${hard})` : null);
    if (why) return t.skip(why);
    // A wrapper that sets a finite hard limit (4096, or the one we have) and
    // a soft limit of 1024, then execs the gateway (same pid).
    const wrapper = limitWrapper(t, `ulimit -S -n 1024 && ulimit -H -n ${Math.min(hard, 4096)}`);
    const config = h.configWith(t, { limits: { max_conns: 'auto', header_timeout: '60s', max_conns_per_ip: 1000 } });
    const { gw } = await h.startStack(t, { config, bin: wrapper });
    const lim = nofile(gw.pid);
    t.diagnostic(`gateway fd limits after start: soft ${lim.soft}, hard ${lim.hard}`);
    assert.equal(lim.soft, lim.hard, 'the soft limit was raised to the hard one');

    const N = 1500; // more than 1024 - 256: only possible with the raised limit
    const conns = [];
    for (let a = 0; a < 3; a++) conns.push(...(await openMany(gw.port, `127.0.0.${50 + a}`, N / 3)));
    h.defer(t, () => conns.forEach((c) => c.sock.destroy()));
    await acceptedAtLeast(gw, N);
    // None of them was turned away, and the gateway still serves.
    assert.equal(conns.filter(isOpen).length, N, `${N - conns.filter(isOpen).length} of ${N} connections were closed`);
    const ws = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.2' });
    assert.equal((await ws.request({ op: 'ping' })).op, 'pong');
  });

test('an explicit max_conns above the fd limit minus the reserve refuses to start, naming max_conns',
  { skip, timeout: 30000 }, async (t) => {
    // The gateway runs with a known finite limit (4096, or a lower one we
    // have), whatever this machine's is: no need to skip on a huge one.
    const limit = Math.min(nofile('self').hard, 4096);
    const bin = limitWrapper(t, `ulimit -n ${limit}`);
    const config = h.configWith(t, { limits: { max_conns: limit - 256 + 1 } });
    await assert.rejects(h.startStack(t, { config, bin }), (e) => {
      assert.match(e.message, /exited during start/, e.message);
      assert.match(e.message, /max_conns/, e.message);
      return true;
    });
    // One below the line starts.
    const ok = h.configWith(t, { limits: { max_conns: limit - 256 } });
    const { gw } = await h.startStack(t, { config: ok, bin });
    assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });
