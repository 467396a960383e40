/* hostile_tls.test.js - the budgets hold with TLS on (tls_cert), and new
 * connections cost a handshake budget (docs/security.md, "Frames" and
 * "Handshakes"; issue 23):
 *  - over wss://, a flood of empty continuation frames after an unfinished
 *    message, a ping flood and a pong flood are each closed with 1008 past
 *    the read budgets and counted, and an unmasked frame is answered 1002,
 *    as on plain TCP (hostile_frames.test.js, hostile_input.test.js);
 *  - a storm of new connections from one address (HTTP, WebSocket
 *    upgrades, TLS) is cut to ip_handshake_rate / ip_handshake_burst: the
 *    rest are closed at accept, before any TLS handshake, and counted in
 *    rankcast_handshakes_refused_total; a client on another loopback
 *    address connects, upgrades and is answered throughout.
 * Before this change the TLS floods were never closed (the frame guard read
 * ciphertext: no frame was counted) and every connection of a storm was
 * served (ip_handshake_rate was an unknown key). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const https = require('node:https');
const net = require('node:net');
const tls = require('node:tls');
const h = require('./harness');
const { frame, frames, rawWs } = require('./wsraw');
const { httpsGet, startTls } = require('./tlsgw');

const skip = h.toolMissing(h.gatewayMissing());

const OP_CONT = 0x0;
const OP_TEXT = 0x1;
const OP_PING = 0x9;
const OP_PONG = 0xa;

function metric(text, name) {
  const esc = name.replace(/[{}"=]/g, (ch) => '\\' + ch);
  const m = new RegExp('^' + esc + ' (\\d+)$', 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/* Writes batch until the server's close frame comes, the socket closes or
 * ms pass (as in hostile_frames.test.js: draining between batches, so the
 * close frame is read before the reset that follows it). */
async function flood(c, batch, ms) {
  const until = Date.now() + ms;
  c.sock.on('error', () => {});
  while (!c.closeFrame && !c.sock.destroyed && Date.now() < until) {
    const more = c.sock.write(batch);
    if (!more) await Promise.race([new Promise((r) => c.sock.once('drain', r)), c.closed, h.sleep(200)]);
    await h.sleep(20);
  }
}

async function expectClosed1008(c, what) {
  assert.ok(c.closeFrame, `${what}: no close frame from the server`);
  assert.equal(c.closeFrame.code, 1008, `${what}: close code ${c.closeFrame.code}`);
  await Promise.race([c.closed, h.sleep(5000)]);
  assert.ok(c.sock.destroyed || c.sock.readableEnded, `${what}: the connection is closed`);
}

test('over TLS, continuation, ping and pong floods are closed with 1008 past the read budgets',
  { skip, timeout: 120000 }, async (t) => {
    const gw = await startTls(t);
    // a served message first: the guard lets honest traffic through
    const ok = await rawWs(gw.port, { tls: { ca: gw.ca } });
    h.defer(t, () => ok.sock.destroy());
    ok.send(frame(OP_TEXT, JSON.stringify({ op: 'ping', id: 'tls' })));
    await ok.next((f) => f.opcode === OP_TEXT && /"tls"/.test(f.payload.toString()), 5000);

    const cont = await rawWs(gw.port, { tls: { ca: gw.ca } });
    h.defer(t, () => cont.sock.destroy());
    cont.send(frame(OP_TEXT, '{"op":', { fin: false }));
    await flood(cont, frames(10000, OP_CONT, '', { fin: false }), 20000);
    await expectClosed1008(cont, 'continuation flood over TLS');

    for (const [name, op] of [['ping', OP_PING], ['pong', OP_PONG]]) {
      const c = await rawWs(gw.port, { tls: { ca: gw.ca } });
      h.defer(t, () => c.sock.destroy());
      await flood(c, frames(2000, op, 'x'), 20000);
      await expectClosed1008(c, `${name} flood over TLS`);
    }
    // RFC 6455 rules too: an unmasked client frame is answered with 1002
    const bad = await rawWs(gw.port, { tls: { ca: gw.ca } });
    h.defer(t, () => bad.sock.destroy());
    bad.send(frame(OP_TEXT, JSON.stringify({ op: 'ping' }), { masked: false }));
    await bad.next((f) => f.opcode === 8, 5000);
    assert.equal(bad.closeFrame.code, 1002, 'unmasked frame over TLS');
    const m = await gw.metrics();
    for (const kind of ['continuation', 'ping', 'pong']) {
      assert.ok(metric(m, `rankcast_frames_refused_total{kind="${kind}"}`) > 0, `refused ${kind} frames counted`);
    }
    assert.ok(metric(m, 'rankcast_ws_closes_total{reason="frame_budget"}') >= 3, 'the closes are counted');
    // the honest connection is still served
    ok.send(frame(OP_TEXT, JSON.stringify({ op: 'ping', id: 'after' })));
    await ok.next((f) => f.opcode === OP_TEXT && /"after"/.test(f.payload.toString()), 5000);
    ok.sock.destroy();
    await gw.stop();
  });

/* Opens n connections from localAddress at once; each resolves 'served'
 * when probe(sock) saw an answer, else 'refused'. */
function storm(n, open) {
  return Promise.all(Array.from({ length: n }, () => open()));
}

function plainGet(port, localAddress) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    let got = '';
    sock.on('connect', () => sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    sock.on('data', (d) => { got += d; });
    sock.on('error', () => {});
    sock.on('close', () => resolve(/^HTTP\/1\.1 200/.test(got) ? 'served' : 'refused'));
    sock.setTimeout(10000, () => sock.destroy());
  });
}

/* A TLS connect: 'served' once the TLS handshake completed, 'refused' when
 * the connection closed before it (no server hello: nothing spent). */
function tlsConnect(port, ca, localAddress) {
  return new Promise((resolve) => {
    const sock = tls.connect({ port, host: '127.0.0.1', localAddress, ca });
    let done = false;
    const end = (v) => { if (!done) { done = true; resolve(v); } sock.destroy(); };
    sock.on('secureConnect', () => end('served'));
    sock.on('error', () => end('refused'));
    sock.on('close', () => end('refused'));
    sock.setTimeout(10000, () => end('refused'));
  });
}

function count(results, v) {
  return results.filter((r) => r === v).length;
}

test('a storm of new connections from one address is cut to ip_handshake_rate; another address is unaffected',
  { skip, timeout: 90000 }, async (t) => {
    const limits = { ip_handshake_rate: 1, ip_handshake_burst: 10 };
    const config = h.configWith(t, { limits });
    const { gw } = await h.startStack(t, { config });
    // the harness's readiness probes came from 127.0.0.1: wait for its bucket to refill
    await h.sleep(1500);
    const t0 = Date.now();
    const first = await storm(60, () => plainGet(gw.port, '127.0.0.1'));
    const wsTries = await storm(20, () => rawWs(gw.port).then((c) => { c.sock.destroy(); return 'served'; },
      () => 'refused'));
    const secs = (Date.now() - t0) / 1000;
    const served = count(first, 'served') + count(wsTries, 'served');
    const refused = count(first, 'refused') + count(wsTries, 'refused');
    // at most the burst and what the rate refilled meanwhile (+2 for rounding)
    assert.ok(served <= 10 + Math.ceil(secs) + 2, `served ${served} of 80 in ${secs} s`);
    assert.ok(served >= 1, 'the burst is served');
    // another address: an HTTP request and a WebSocket, answered
    const other = await h.http(gw.base, 'GET', '/healthz', null, { localAddress: '127.0.0.2' });
    assert.equal(other.status, 200);
    const ws = await rawWs(gw.port, { localAddress: '127.0.0.2' });
    h.defer(t, () => ws.sock.destroy());
    ws.send(frame(OP_TEXT, JSON.stringify({ op: 'ping', id: 'other' })));
    await ws.next((f) => f.opcode === OP_TEXT && /"other"/.test(f.payload.toString()), 5000);
    const m = (await h.http(gw.base, 'GET', '/metrics', null, { localAddress: '127.0.0.2' })).text;
    assert.ok(metric(m, 'rankcast_handshakes_refused_total') >= refused, `refusals counted (${refused})`);
  });

test('with TLS, a connection storm is closed at accept, before the TLS handshake; another address is unaffected',
  { skip, timeout: 90000 }, async (t) => {
    const gw = await startTls(t, { ip_handshake_rate: 1, ip_handshake_burst: 10 });
    const t0 = Date.now();
    const results = await storm(60, () => tlsConnect(gw.port, gw.ca, '127.0.0.1'));
    const secs = (Date.now() - t0) / 1000;
    const served = count(results, 'served');
    assert.ok(served <= 10 + Math.ceil(secs) + 2, `TLS handshakes completed: ${served} of 60 in ${secs} s`);
    assert.ok(served >= 1, 'the burst is served');
    const other = await httpsGet(gw.port, '/healthz', gw.ca, '127.0.0.2');
    assert.equal(other?.status, 200);
    const ws = await rawWs(gw.port, { localAddress: '127.0.0.2', tls: { ca: gw.ca } });
    ws.send(frame(OP_TEXT, JSON.stringify({ op: 'ping', id: 'other' })));
    await ws.next((f) => f.opcode === OP_TEXT && /"other"/.test(f.payload.toString()), 5000);
    ws.sock.destroy();
    const m = await gw.metrics();
    assert.ok(metric(m, 'rankcast_handshakes_refused_total') >= 60 - served, 'refusals counted');
    await gw.stop();
  });

/* A request over https with its path sent as it is (node does not fold
 * "..", nor decode %2F): { status, body }. */
function httpsRequest(port, ca, method, urlPath, body) {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: urlPath, method, ca, agent: false,
      localAddress: '127.0.0.2', headers: { Authorization: `Bearer ${h.ADMIN_KEY}`, 'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body || '') } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    req.end(body || '');
  });
}

test('over TLS, the raw-path rules hold: %2F and ".." segments are refused before routing, nothing written',
  { skip, timeout: 60000 }, async (t) => {
    const gw = await startTls(t);
    const write = JSON.stringify({ member: 'user:x', op: 'incr', delta: 5 });
    for (const p of ['/api/v1/boards/laps%2F..%2Fmatch:1/scores', '/api/v1/boards/laps/%2e%2E/match:1/scores']) {
      const r = await httpsRequest(gw.port, gw.ca, 'POST', p, write);
      assert.equal(r.status, 400, `${p}: ${r.status} ${r.body}`);
      assert.match(r.body, /%2F|segment/);
    }
    const board = await httpsRequest(gw.port, gw.ca, 'GET', '/api/v1/boards/match:1?top=3');
    assert.equal(board.status, 200, board.body);
    assert.deepEqual(JSON.parse(board.body).rows || [], [], 'nothing was written to match:1');
    await gw.stop();
  });
