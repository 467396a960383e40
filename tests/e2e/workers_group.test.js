/* workers_group.test.js - what a worker group ([server] workers = 2) holds
 * for the whole group, not per worker (docs/gateway.md, "Workers"):
 * max_conns_per_ip and an explicit max_conns count every worker's sockets
 * (the kernel spreads one address's connections over both workers, yet no
 * more than the limit get in, and a closed one frees a place on either),
 * and the test clock moves every worker's clock, whichever worker took the
 * request. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

/* A WebSocket from `localAddress`: { ws } when it opened, { status } when
 * refused over HTTP, { error } when the socket was closed. */
function open(url, localAddress) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { localAddress });
    ws.on('open', () => resolve({ ws }));
    ws.on('unexpected-response', (req, res) => { resolve({ status: res.statusCode }); req.destroy(); });
    ws.on('error', (e) => resolve({ error: e.message }));
  });
}

/* Per-worker connections from one /metrics scrape. */
async function perWorker(gw) {
  const r = await h.http(gw.base, 'GET', '/metrics');
  const out = {};
  for (const m of r.text.matchAll(/^rankcast_worker_connections\{worker="(\d+)"\} (\d+)$/gm)) out[m[1]] = Number(m[2]);
  return out;
}

async function startGroup(t, spec) {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, spec), args: ['--workers', '2'] });
  await h.waitFor(async () => {
    const w = await perWorker(gw);
    return w[0] !== undefined && w[1] !== undefined;
  }, 10000, 'both workers in /metrics');
  return gw;
}

/* Opens `tries` connections from addr one after another, keeping those that
 * get in; returns them and how many were refused. */
async function fill(gw, addr, tries) {
  const open_ = [];
  let refused = 0;
  for (let i = 0; i < tries; i++) {
    const r = await open(gw.wsUrl, addr);
    if (r.ws) open_.push(r.ws);
    else refused++;
  }
  return { open: open_, refused };
}

test('max_conns_per_ip holds across the group: 4 of 20 connections from one address get in, spread over both workers',
  { skip, timeout: 60000 }, async (t) => {
    const gw = await startGroup(t, { limits: { max_conns_per_ip: 4 } });
    const got = await fill(gw, '127.0.0.3', 20);
    h.defer(t, () => { for (const ws of got.open) ws.terminate(); });
    // Per worker, the kernel's spread of 20 would let in up to 8.
    assert.equal(got.open.length, 4, `${got.open.length} got in`);
    assert.equal(got.refused, 16);
    // another address is not affected
    const other = await open(gw.wsUrl, '127.0.0.2');
    assert.ok(other.ws, JSON.stringify(other));
    other.ws.close();
    // A closed one frees its place for the group: the next gets in on
    // whichever worker the kernel picks.
    got.open.shift().close();
    await h.waitFor(async () => {
      const r = await open(gw.wsUrl, '127.0.0.3');
      if (r.ws) got.open.push(r.ws);
      return !!r.ws;
    }, 3000, 'a freed place for 127.0.0.3');
    const again = await fill(gw, '127.0.0.3', 6);
    assert.equal(again.open.length, 0, 'still 4 at most');
  });

test('an explicit max_conns holds across the group: 6 in all, whatever the workers hold each',
  { skip, timeout: 60000 }, async (t) => {
    const gw = await startGroup(t, { limits: { max_conns: 6, max_conns_per_ip: 1000 } });
    // the harness's own HTTP checks are closed once answered
    const got = await fill(gw, '127.0.0.4', 20);
    h.defer(t, () => { for (const ws of got.open) ws.terminate(); });
    assert.equal(got.open.length, 6, `${got.open.length} got in`);
    const w = await perWorker(gw).catch(() => ({})); // the scrape itself may be refused now
    t.diagnostic(`connections per worker: ${JSON.stringify(w)}`);
  });

test('the test clock is the group\'s: one request shifts every worker\'s clock', { skip, timeout: 60000 }, async (t) => {
  const gw = await startGroup(t, { server: { test_clock: 'on' } });
  const when = Date.parse('2031-03-04T12:00:00.000Z'); // 20:00 at +08:00 (board daily)
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: when });
  assert.equal(r.status, 200, r.text);
  // Viewers on both workers see the shifted day.
  const clients = [];
  h.defer(t, () => { for (const c of clients) c.ws.close(); });
  for (let i = 0; i < 40; i++) {
    const c = await h.connectWs(t, gw.wsUrl);
    clients.push(c);
    const snap = await c.request({ op: 'subscribe', board: 'daily', view: { top: 1 } });
    assert.equal(snap.period, '2031-03-04', `connection ${i}: ${JSON.stringify(snap)}`);
    if (i >= 7) {
      const w = await perWorker(gw);
      if (w[0] > 0 && w[1] > 0) break;
    }
  }
  await h.waitFor(async () => {
    const w = await perWorker(gw);
    return w[0] > 0 && w[1] > 0;
  }, 5000, 'viewers on both workers');
  // A second shift through whichever worker: both move again.
  const r2 = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: when + 86400000 });
  assert.equal(r2.status, 200, r2.text);
  for (let i = 0; i < 10; i++) {
    const c = await h.connectWs(t, gw.wsUrl);
    clients.push(c);
    const snap = await c.request({ op: 'subscribe', board: 'daily', view: { top: 1 } });
    assert.equal(snap.period, '2031-03-05');
  }
});
