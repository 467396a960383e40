/* stuck_readers.test.js - 1,000 connections that subscribe and then never
 * read again, while writes flow: the gateway's memory stays under the bound
 * docs/gateway.md gives, a reading viewer's delivery latency is measured with
 * and without them (and reported), and the stuck connections are closed by
 * the idle timeout (they never answer a ping). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const h = require('./harness');

const STUCK = 1000;
const QUEUE = 64 * 1024;

function openRaw(url, localAddress) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'rankcast.v1', { localAddress });
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  });
}

/* Write-to-screen latency as a reading viewer of top 100 sees it: each write
 * sets a unique score; the clock stops when a delta row shows that score. */
async function measure(c, writer, sub, rounds) {
  const lat = [];
  let waiting = null;
  const onMsg = (data) => {
    const m = JSON.parse(data.toString());
    if (waiting && m.sub === sub && m.op === 'delta' && m.rows.some((r) => r.member === waiting.member && r.score === waiting.score)) {
      lat.push(Date.now() - waiting.t0);
      waiting.done();
    }
  };
  c.ws.on('message', onMsg);
  for (let i = 0; i < rounds; i++) {
    const member = `user:${i % 50}`;
    const score = 1000000 + Math.floor(Math.random() * 1000000);
    await new Promise((resolve) => {
      waiting = { member, score, t0: Date.now(), done: resolve };
      writer.send({ op: 'set', board: 'demo', member, value: score });
    });
    waiting = null;
  }
  c.ws.off('message', onMsg);
  lat.sort((a, b) => a - b);
  return { p50: lat[Math.floor(lat.length * 0.5)], p99: lat[Math.floor(lat.length * 0.99)], max: lat.at(-1) };
}

test('1,000 stuck readers: bounded memory, other viewers unaffected, closed by the idle timeout', { timeout: 120000 }, async (t) => {
  const config = h.configWith(t, { limits: { queue_bytes: '64k', idle_timeout: '6s', max_conns: 5000 } });
  const { gw } = await h.startStack(t, { config });
  for (let i = 0; i < 300; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, k) => h.http(gw.base, 'POST', '/api/v1/boards/demo/scores',
      { member: `user:${i + k}`, op: 'set', value: (i + k) * 10 })));
  }
  const viewer = await h.connectWs(t, gw.wsUrl);
  const sub = (await viewer.request({ op: 'subscribe', board: 'demo', view: { top: 100 } })).sub;
  const writer = await h.connectWs(t, gw.wsUrl);
  const before = await measure(viewer, writer, sub, 100);
  const rssBase = h.vmRssKb(gw.pid);

  // 1,000 connections over 4 source addresses, each watching top 100, then stuck.
  const stuck = [];
  for (let i = 0; i < STUCK; i++) {
    const ws = await openRaw(gw.wsUrl, `127.0.0.${2 + (i % 4)}`);
    ws.send(JSON.stringify({ op: 'subscribe', id: 1, board: 'demo', view: { top: 100 } }));
    stuck.push(ws);
  }
  t.after(() => stuck.forEach((ws) => ws.terminate()));
  await h.sleep(500);
  for (const ws of stuck) ws._socket.pause();

  // Writes flow: every stuck connection's socket and queue fill up.
  let rssMax = h.vmRssKb(gw.pid);
  for (let round = 0; round < 40; round++) {
    await Promise.all(Array.from({ length: 25 }, () => writer.request({ op: 'incr', board: 'demo',
      member: `user:${Math.floor(Math.random() * 300)}`, delta: Math.floor(Math.random() * 500) })));
    rssMax = Math.max(rssMax, h.vmRssKb(gw.pid));
  }
  const during = await measure(viewer, writer, sub, 100);
  rssMax = Math.max(rssMax, h.vmRssKb(gw.pid));
  const perConn = Math.round(((rssMax - rssBase) * 1024) / STUCK);
  t.diagnostic(`latency without stuck readers p50 ${before.p50} ms p99 ${before.p99} ms max ${before.max} ms; ` +
    `with ${STUCK}: p50 ${during.p50} ms p99 ${during.p99} ms max ${during.max} ms`);
  t.diagnostic(`gateway RSS ${rssBase} kB -> max ${rssMax} kB: ${perConn} bytes per stuck connection (queue_bytes ${QUEUE})`);
  // The bound docs/gateway.md gives: per stuck connection at most queue_bytes of
  // view traffic plus one snapshot plus lws' own state (~16 KiB here).
  assert.ok(perConn < QUEUE + 16 * 1024 + 16 * 1024, `${perConn} bytes per stuck connection`);
  assert.ok(during.p99 < 1000, `p99 ${during.p99} ms with stuck readers`);

  // They never answer pings: the idle timeout closes them.
  await h.waitFor(async () => {
    const m = (await h.http(gw.base, 'GET', '/metrics')).text;
    return Number(/^rankcast_connections (\d+)$/m.exec(m)[1]) <= 2;
  }, 20000, 'the stuck connections to be closed');
  assert.equal((await viewer.request({ op: 'ping' })).op, 'pong');
});
