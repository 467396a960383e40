/* hostile_misc.test.js - the smaller hostile-client findings:
 *  - log lines about abusive clients are rate-limited: 5,000 bad requests
 *    add a bounded number of stderr lines, and one says how many were
 *    suppressed;
 *  - the static file server does not follow symlinks out of web_root (404);
 *  - RFC 6455: a ping with a 126-byte payload (control frames carry at most
 *    125) and an unmasked client frame are protocol errors, answered with a
 *    close frame with code 1002. lws 4.1 does not enforce either: the
 *    gateway checks the frames it reads below lws (gateway/gw_wsguard.c). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');
const { rawExchange, statusOf } = require('./rawhttp');
const { frame, rawWs } = require('./wsraw');

const skip = h.toolMissing(h.gatewayMissing());

/* One raw exchange from a fresh socket: writes data, resolves with what came
 * back once the server closes or ms pass. */
async function raw(port, data, ms = 2000, localAddress = '127.0.0.1') {
  // One complete response with a Content-Length is enough.
  const done = (buf) => {
    const s = buf.toString('latin1');
    const end = s.indexOf('\r\n\r\n');
    const m = /\r\ncontent-length:\s*(\d+)/i.exec(s);
    return end >= 0 && m && s.length >= end + 4 + Number(m[1]);
  };
  const { buf, why } = await rawExchange(port, data, { ms, localAddress, done });
  return { text: buf.toString('latin1'), why };
}

/* Sends data on a fresh socket and hangs up at the first byte back, or when
 * the server closes, or after ms. Resolves 'answered', 'closed' or 'timeout'. */
async function fire(port, data, ms = 3000) {
  const { why } = await rawExchange(port, data, { ms, done: () => true });
  return { complete: 'answered', error: 'closed' }[why] || why;
}

/* ---- log throttling --------------------------------------------------------- */

test('5,000 bad requests add a bounded number of log lines, one of them counting the suppressed ones',
  { skip, timeout: 90000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const before = gw.stderr.length;
    // Headers bigger than the gateway takes (16 KiB): lws complains about each one.
    const bad = 'GET / HTTP/1.1\r\nHost: x\r\nX-Junk: ' + 'j'.repeat(20000) + '\r\n\r\n';
    const N = 5000;
    const PAR = 50;
    let sent = 0;
    let answered = 0;
    const t0 = Date.now();
    await Promise.all(Array.from({ length: PAR }, async () => {
      while (sent < N) {
        sent++;
        if ((await fire(gw.port, bad)) !== 'timeout') answered++;
      }
    }));
    const floodS = (Date.now() - t0) / 1000;
    // Lines of the background jobs (a fresh gateway archives the empty past
    // periods of the shipped daily and weekly boards as it starts) are not
    // the clients' doing.
    const jobLine = (l) => /\binfo archived |\barchive: /.test(l);
    const during = gw.stderr.slice(before).filter((l) => !jobLine(l)).length;
    t.diagnostic(`${N} requests with 20 kB headers in ${floodS.toFixed(1)} s: ${answered} answered or closed by the ` +
      `gateway, ${during} stderr lines during the flood`);
    // What the flood's tail had suppressed comes out by itself once the
    // bucket has a token again (base/gw_log.c, flushed at the fan-out tick),
    // with no further bad request: wait for a report printed after the flood.
    const floodEnd = gw.stderr.length;
    const deadline = Date.now() + 15000;
    while (!gw.stderr.slice(floodEnd).some((l) => /suppressed/i.test(l))) {
      assert.ok(Date.now() < deadline, 'no "suppressed" report within 15 s of the flood\'s end');
      await h.sleep(50);
    }
    t.diagnostic(`report after the flood: ${gw.stderr.slice(floodEnd).find((l) => /suppressed/i.test(l))}`);
    const added = gw.stderr.slice(before).filter((l) => !jobLine(l));
    const suppressed = added.map((l) => /suppressed\D*(\d+)/i.exec(l)).filter(Boolean).reduce((a, m) => a + Number(m[1]), 0);
    t.diagnostic(`stderr lines added in all: ${added.length}; they report ${suppressed} suppressed lines`);
    // A throttle of a burst plus a few lines a second: bounded by time, and
    // far below one line per bad request. The bucket (base/gw_log.c) lets 20
    // lines through, then 5 a second, and each may bring the "suppressed"
    // line before it: at most 2 x (20 + 5 T) lines in T seconds (the old
    // bound, 40 + 6 T, failed a loaded CI run at 83 lines in 6.6 s: when
    // nearly every line let through follows suppressed ones, each is two).
    const sample = [...new Set(added.map((l) => l.replace(/^\S+ \S+ /, "").slice(0, 90)))].slice(0, 12);
    assert.ok(during <= 2 * (20 + 5 * (floodS + 1)), `${during} log lines in ${floodS.toFixed(1)} s for ${N} bad requests; kinds: ${sample.join(" | ")}`);
    assert.ok(during < N / 10, `${during} log lines for ${N} bad requests`);
    // What was dropped is counted (each bad request is worth at least one line).
    assert.ok(suppressed >= N / 2, `the reports count ${suppressed} suppressed lines for ${N} bad requests`);
    // Still serving.
    assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });

/* ---- symlinks out of web_root ------------------------------------------------- */

test('the static file server does not follow symlinks out of web_root',
  { skip, timeout: 30000 }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-webroot-'));
    h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
    const root = path.join(dir, 'web');
    fs.cpSync(path.join(h.repoRoot, 'web'), root, { recursive: true });
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'TOP-SECRET-OUTSIDE-WEB-ROOT\n');
    fs.symlinkSync('/etc/passwd', path.join(root, 'passwd.txt'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret.txt'));
    fs.symlinkSync('../outside/secret.txt', path.join(root, 'relative.txt'));
    fs.symlinkSync(outside, path.join(root, 'outdir'));
    fs.symlinkSync('/etc', path.join(root, 'etc'));
    // A symlink that stays inside web_root is fine either way; not asserted.
    const config = h.configWith(t, { server: { web_root: root } });
    const { gw } = await h.startStack(t, { config });

    const index = await h.http(gw.base, 'GET', '/index.html', null, { token: null });
    assert.equal(index.status, 200, 'a real file under web_root is served');

    for (const p of ['/passwd.txt', '/secret.txt', '/relative.txt', '/outdir/secret.txt', '/etc/passwd', '/etc/hostname']) {
      const r = await raw(gw.port, `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`, 3000);
      const st = statusOf(r.text);
      assert.ok(!/TOP-SECRET|root:x:0:0/.test(r.text), `${p} leaked a file from outside web_root`);
      assert.equal(st, 404, `${p}: ${JSON.stringify(r.text.slice(0, 200))}`);
    }
    // Plain traversal, unnormalised on the wire.
    for (const p of ['/../outside/secret.txt', '/%2e%2e/outside/secret.txt', '/..%2foutside%2fsecret.txt']) {
      const r = await raw(gw.port, `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`, 3000);
      assert.ok(!/TOP-SECRET/.test(r.text), `${p} leaked a file from outside web_root`);
      assert.notEqual(statusOf(r.text), 200, `${p}: ${JSON.stringify(r.text.slice(0, 200))}`);
    }
  });

/* ---- RFC 6455 protocol errors ------------------------------------------------- */

async function expectClose1002(c, what) {
  const close = await c.next((f) => f.opcode === 8, 3000).catch((e) => e);
  if (close instanceof Error) assert.fail(`${what}: no close frame (${close.message})`);
  assert.equal(close.code, 1002, `${what}: close code ${close.code}`);
  await Promise.race([c.closed, h.sleep(3000)]);
  assert.ok(c.sock.destroyed || c.sock.readableEnded, `${what}: the connection is closed after the close frame`);
}

test('a ping with a 126-byte payload is a protocol error: close frame 1002',
  { skip, timeout: 30000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const c = await rawWs(gw.port);
    h.defer(t, () => c.sock.destroy());
    // A good ping first: answered with a pong carrying the same payload.
    c.send(frame(0x9, 'hello'));
    const pong = await c.next((f) => f.opcode === 0xa, 3000);
    assert.equal(pong.payload.toString(), 'hello');
    c.send(frame(0x9, Buffer.alloc(126, 0x61)));
    await expectClose1002(c, '126-byte ping');
    // The gateway is fine.
    assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });

test('an unmasked client frame is a protocol error: close frame 1002',
  { skip, timeout: 30000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const c = await rawWs(gw.port);
    h.defer(t, () => c.sock.destroy());
    c.send(frame(0x1, JSON.stringify({ op: 'ping', id: 'masked' })));
    const ok = await c.next((f) => f.opcode === 1 && /"masked"/.test(f.payload.toString()), 3000);
    assert.match(ok.payload.toString(), /"pong"/);
    c.send(frame(0x1, JSON.stringify({ op: 'ping', id: 'unmasked' }), { masked: false }));
    await expectClose1002(c, 'unmasked text frame');
    assert.ok(!c.frames.some((f) => f.opcode === 1 && /"unmasked"/.test(f.payload.toString())),
      'the unmasked request was not served');
    assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  });

/* The frame checker starts only where it knows a frame starts: a client that
 * sends part of a frame with its handshake, before the 101 (RFC 6455 forbids
 * it, browsers never do it), is not closed by a checker starting mid-frame.
 * Whether that first message is served intact is lws' business: lws 4.1
 * garbles it when over about 100 bytes of it came with the handshake ("not
 * valid UTF-8"), with or without the checker; only the connection staying
 * open and usable is asserted. */
test('a frame split across the handshake never closes the connection as a protocol error',
  { skip, timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const first = frame(0x1, JSON.stringify({ op: 'ping', id: 'early', pad: 'x'.repeat(200) }));
    for (const cut of [1, 2, 3, 4, 6, 9, 100, 200, first.length - 1]) {
      const c = await rawWs(gw.port, { early: first.slice(0, cut) });
      h.defer(t, () => c.sock.destroy());
      await h.sleep(50);
      c.send(first.slice(cut));
      await c.next((f) => f.opcode === 1, 3000); // a pong, or lws' garbled message refused
      c.send(frame(0x1, JSON.stringify({ op: 'ping', id: 'after' })));
      const b = await c.next((f) => f.opcode === 1 && /"after"/.test(f.payload.toString()), 3000)
        .catch((e) => { throw new Error(`cut at ${cut}: ${e.message}`); });
      assert.match(b.payload.toString(), /"pong"/, `cut at ${cut}`);
      assert.ok(!c.frames.some((f) => f.opcode === 8), `cut at ${cut}: a close frame`);
      c.sock.destroy();
    }
  });

/* Found by the socket fuzzer (tests/fuzz/sockfuzz.sh): an empty text frame
 * made the gateway copy from a NULL buffer (UBSan aborts the sanitized
 * build there). It is a message like any other: not JSON, so bad_request. */
test('an empty text message is a bad_request and the connection carries on', { skip }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl, { token: null });
  c.sendRaw('');
  const err = await c.next({ op: 'error' });
  assert.equal(err.code, 'bad_request', JSON.stringify(err));
  assert.equal((await c.request({ op: 'ping' })).op, 'pong');
});
