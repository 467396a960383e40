/* hostile_http.test.js - strict HTTP/1.1 framing and paths (issue 23,
 * "Lenient HTTP"). A request a proxy in front could read differently from
 * the gateway is refused with 400 and the project's JSON error body before
 * any route sees it (docs/security.md, "Strict HTTP"):
 *  - Content-Length that is not one plain decimal number ("+37", "3a", two
 *    headers, even equal ones); before: the first header won, "+37" was 37;
 *  - Transfer-Encoding (no route takes a chunked body), alone or with
 *    Content-Length; before: CL+TE used CL;
 *  - a path segment holding %2F, or one that is exactly "." or ".." once
 *    decoded; before: POST /api/v1/boards/laps%2F..%2Fmatch:1/scores wrote
 *    to match:1 (libwebsockets decodes and folds the path), past any proxy
 *    rule on the raw path. Names like "a..b" stay valid;
 *  - Upgrade other than websocket; before: "Upgrade: h2c" was answered 101
 *    and the connection dropped.
 * Every request goes over a raw socket: Node's http client normalises
 * these. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { rawExchange, statusOf } = require('./rawhttp');

const skip = h.toolMissing(h.gatewayMissing());

/* Writes data on a fresh socket; resolves with the status, headers and body
 * of the one answer once the server closes (or ms pass). */
async function exchange(port, data, ms = 3000) {
  const { buf, why } = await rawExchange(port, data, { ms });
  const text = buf.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end >= 0 ? text.slice(0, end) : text;
  const bodyText = end >= 0 ? text.slice(end + 4) : '';
  let body = null;
  try { body = JSON.parse(bodyText); } catch { /* not JSON */ }
  return { status: statusOf(text), head, bodyText, body, why };
}

const request = (method, path, headers, body = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${h.ADMIN_KEY}\r\n` +
  headers.map((l) => l + '\r\n').join('') + '\r\n' + body;

/* The answer is the project's 400: JSON, code bad_request, connection closed. */
function assertRefused(r, what, re) {
  assert.equal(r.status, 400, `${what}: status ${r.status}, answer ${JSON.stringify(r.head + '\n\n' + r.bodyText).slice(0, 300)}`);
  assert.match(r.head, /\r\ncontent-type: application\/json/i, `${what}: JSON body`);
  assert.ok(r.body, `${what}: JSON body: ${r.bodyText}`);
  assert.equal(r.body.op, 'error', `${what}: ${r.bodyText}`);
  assert.equal(r.body.code, 'bad_request', `${what}: ${r.bodyText}`);
  if (re) assert.match(r.body.message, re, `${what}: ${r.bodyText}`);
  assert.notEqual(r.why, 'timeout', `${what}: the connection is closed after the answer`);
}

const WRITE = JSON.stringify({ member: 'user:smuggled', op: 'set', value: 7 });

test('Content-Length: "+37", non-digits, two different values and two equal ones are refused; nothing is written',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const before = await redis.fingerprint();
    const len = Buffer.byteLength(WRITE);
    const post = (hdrs) => exchange(gw.port, request('POST', '/api/v1/boards/demo/scores',
      ['Content-Type: application/json', ...hdrs], WRITE));
    assertRefused(await post([`Content-Length: +${len}`]), 'Content-Length: +N', /Content-Length/);
    assertRefused(await post([`Content-Length: ${len}a`]), 'Content-Length: Na', /Content-Length/);
    assertRefused(await post([`Content-Length: 0x${len.toString(16)}`]), 'Content-Length: 0xN', /Content-Length/);
    assertRefused(await post([`Content-Length: ${len}`, `Content-Length: ${len + 3}`]), 'two Content-Lengths',
      /Content-Length/);
    assertRefused(await post([`Content-Length: ${len}`, `Content-Length: ${len}`]), 'two equal Content-Lengths',
      /Content-Length/);
    assertRefused(await post([`Content-Length: ${len}, ${len}`]), 'a Content-Length list', /Content-Length/);
    assertRefused(await post(['Content-Length:']), 'an empty Content-Length', /Content-Length/);
    assert.equal(await redis.fingerprint(), before, 'nothing written');
    // The plain form still works.
    const ok = await post([`Content-Length: ${len}`]);
    assert.equal(ok.status, 200, ok.bodyText);
    assert.equal(ok.body.op, 'ack');
  });

test('Transfer-Encoding, alone (a chunked body) or with Content-Length, is refused; nothing is written',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const before = await redis.fingerprint();
    const len = Buffer.byteLength(WRITE);
    const chunked = `${len.toString(16)}\r\n${WRITE}\r\n0\r\n\r\n`;
    assertRefused(await exchange(gw.port, request('POST', '/api/v1/boards/demo/scores',
      ['Content-Type: application/json', 'Transfer-Encoding: chunked'], chunked)), 'chunked body', /Transfer-Encoding/);
    assertRefused(await exchange(gw.port, request('POST', '/api/v1/boards/demo/scores',
      ['Content-Type: application/json', `Content-Length: ${len}`, 'Transfer-Encoding: chunked'], WRITE)),
      'CL + TE', /Transfer-Encoding/);
    assertRefused(await exchange(gw.port, request('GET', '/healthz', ['Transfer-Encoding: chunked'], '0\r\n\r\n')),
      'TE on a GET', /Transfer-Encoding/);
    assertRefused(await exchange(gw.port, request('POST', '/api/v1/boards/demo/scores',
      [`Content-Length: ${len}`, 'Transfer-Encoding:'], WRITE)), 'an empty Transfer-Encoding', /Transfer-Encoding/);
    assert.equal(await redis.fingerprint(), before, 'nothing written');
  });

test('%2F inside a segment and segments that are "." or ".." are refused before routing; "a..b" stays a name',
  { skip, timeout: 60000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const len = Buffer.byteLength(WRITE);
    const post = (path) => exchange(gw.port, request('POST', path,
      ['Content-Type: application/json', `Content-Length: ${len}`], WRITE));
    const before = await redis.fingerprint();
    // The request: libwebsockets decodes and folds it to match:1.
    assertRefused(await post('/api/v1/boards/laps%2F..%2Fmatch:1/scores'), '%2F..%2F', /%2F|segment/);
    assertRefused(await post('/api/v1/boards/laps%2fmatch:1/scores'), 'lower-case %2f', /%2F|segment/);
    assertRefused(await post('/api/v1/boards/laps/../match:1/scores'), 'a ".." segment', /segment/);
    assertRefused(await post('/api/v1/boards/./match:1/scores'), 'a "." segment', /segment/);
    assertRefused(await post('/api/v1/boards/laps/%2e%2E/match:1/scores'), 'an encoded ".." segment', /segment/);
    assertRefused(await post('/api/v1/boards/laps/.%2e/match:1/scores'), 'a half-encoded ".." segment', /segment/);
    assertRefused(await post('/api/v1/boards/match:1/scores/..'), 'a ".." at the end', /segment/);
    assertRefused(await exchange(gw.port, request('GET', '/api/v1/boards/demo/..?top=3', [])), 'a ".." before the query',
      /segment/);
    // Behind a clean request on the same connection: never routed either.
    const first = request('GET', '/api/v1/boards/demo?top=1', []);
    for (let i = 0; i < 5; i++) {
      await exchange(gw.port, first + request('POST', '/api/v1/boards/laps%2F..%2Fmatch:1/scores',
        ['Content-Type: application/json', `Content-Length: ${len}`], WRITE));
    }
    assert.equal(await redis.fingerprint(), before, 'nothing written, to match:1 or anywhere');
    assert.equal(await redis.cli('EXISTS', 'rc:{match:1|}:z'), '0');

    // Dots inside a name, and in the query, are fine.
    const dots = await post('/api/v1/boards/match:a..b/scores');
    assert.equal(dots.status, 200, dots.bodyText);
    assert.equal(dots.body.board, 'match:a..b');
    const three = await post('/api/v1/boards/match:.../scores');
    assert.equal(three.status, 200, three.bodyText);
    const q = await exchange(gw.port, request('GET', '/api/v1/boards/demo?top=3&x=a%2Fb/../.', []));
    assert.notEqual(q.status, 400, `a %2F or ".." in the query is not a path segment: ${q.bodyText}`);
  });

test('Upgrade other than websocket is refused (h2c with a JSON 400), never 101; the WebSocket upgrade still works',
  { skip, timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const h2c = await exchange(gw.port, request('GET', '/healthz',
      ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA']));
    assertRefused(h2c, 'Upgrade: h2c', /Upgrade/);
    const other = await exchange(gw.port, request('GET', '/healthz', ['Connection: Upgrade', 'Upgrade: foo/1']));
    t.diagnostic(`Upgrade: foo/1 answered ${other.status} (libwebsockets' own answer)`);
    assert.ok(other.status >= 400 && other.status < 500, `Upgrade: foo/1 answered ${other.status}: ${other.head}`);
    assert.notEqual(other.why, 'timeout');
    // The WebSocket handshake passes the same rules: lws would fold this path to /ws and upgrade.
    const ws = ['Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='];
    assertRefused(await exchange(gw.port, request('GET', '/x/../ws', ws)), 'a WebSocket handshake on /x/../ws', /segment/);
    assertRefused(await exchange(gw.port, request('GET', '/ws', [...ws, 'Content-Length: +0'])),
      'a WebSocket handshake with Content-Length: +0', /Content-Length/);
    const c = await h.connectWs(t, gw.wsUrl);
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
    assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });
