/* compression.test.js - permessage-deflate (RFC 7692) end to end: a real
 * redis-server, the real gateway, real WebSocket clients (the `ws` package,
 * and a hand-built client over a raw socket that sees every frame's RSV1
 * bit).
 *
 * - a `ws` client offering permessage-deflate gets it ([server] compression =
 *   on is the default) and reads exactly the snapshots and deltas a client
 *   without it reads for the same writes;
 * - many viewers of one view: every one of them ends with the true window,
 *   and the gateway compressed each message once, not once per viewer;
 * - frames on the wire: every message carries RSV1 and inflates to JSON
 *   (read through one inflate context, as a client with context takeover
 *   reads); big ones compressed, small ones in stored blocks (6 bytes more);
 *   compressed client messages (the `ws` client's and hand-built ones, also
 *   in fragments) are answered;
 * - a compressed message that inflates past max_frame (a "zip bomb") is
 *   refused with 1009 like any oversized message, and the gateway keeps
 *   serving; RSV1 where RFC 7692 forbids it is a protocol error (1002);
 * - compression = off negotiates nothing.
 */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const h = require('./harness');
const { frame, handshake, serverFrames, waiters } = require('./wsraw');
const { applyDelta } = require('../../web/rankcast.js');

const skip = h.toolMissing(h.gatewayMissing());
const BOARD = 'demo';
const ZKEY = 'rc:{demo|}:z';
const TB_SCALE = 2 ** 29; // demo's tie-break layout (see fanout.test.js)
const TOP = 100;

const member = (i) => `user:${i}`;

/* ---- a raw client that sees RSV1 --------------------------------------------- */

const TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/* The payload of one client frame compressed as permessage-deflate: a raw
 * DEFLATE stream to a sync flush, its 00 00 ff ff removed. */
function deflateMessage(text) {
  const z = zlib.deflateRawSync(Buffer.from(text), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  assert.deepEqual(z.subarray(z.length - 4), TAIL);
  return z.subarray(0, z.length - 4);
}

/* A masked client frame: byte 0 as given (FIN, RSV, opcode), any length. */
const clientFrame = (b0, payload) => frame(b0 & 0x0f, payload, { fin: !!(b0 & 0x80), rsv: b0 & 0x70 });

/* Handshake offering permessage-deflate (unless offer is null), then frames
 * parsed as they come: {rsv1, opcode, payload, text (inflated when RSV1),
 * msg (JSON), code (close)}. One inflate context for the whole connection,
 * as a client with context takeover keeps it. */
async function rawWs(port, offer = 'permessage-deflate; client_max_window_bits') {
  const { sock, head, rest } = await handshake(port, {
    headers: offer ? { 'Sec-WebSocket-Extensions': offer } : {},
  });
  const m = /\r\nsec-websocket-extensions:\s*([^\r]*)/i.exec(head);
  const inflater = zlib.createInflateRaw();
  const c = waiters({
    sock,
    closed: new Promise((r) => sock.on('close', r)),
    extensions: m ? m[1] : '',
    send(b) { sock.write(b); },
    sendText(text, compressed) {
      sock.write(compressed ? clientFrame(0xc1, deflateMessage(text)) : clientFrame(0x81, text));
    },
  }, { onClose: false });
  // Inflating is asynchronous in node's stream API; frames are handled in
  // order through one promise chain.
  let chain = Promise.resolve();
  const inflate = (payload) => new Promise((res, rej) => {
    const out = [];
    const onData = (d) => out.push(d);
    inflater.on('data', onData);
    inflater.write(Buffer.concat([payload, TAIL]), (err) => {
      if (err) return rej(err);
      inflater.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        inflater.removeListener('data', onData);
        res(Buffer.concat(out));
      });
    });
  });
  const push = serverFrames((f) => {
    chain = chain.then(async () => {
      if (f.opcode === 1) {
        f.text = (f.rsv1 ? await inflate(f.payload) : f.payload).toString('utf8');
        f.msg = JSON.parse(f.text);
      }
      c.deliver(f);
    }).catch((e) => { f.error = e; c.deliver(f); });
  });
  sock.on('data', push);
  push(rest);
  return c;
}

/* ---- the helpers of the views ------------------------------------------------- */

/* What Redis holds for the top TOP: [{member, score}]. */
async function truth(redis) {
  const out = (await redis.cli('ZRANGE', ZKEY, '0', String(TOP - 1), 'REV', 'WITHSCORES')).split('\n');
  const rows = [];
  for (let i = 0; i + 1 < out.length; i += 2)
    rows.push({ member: out[i], score: Math.floor(Number(out[i + 1]) / TB_SCALE) });
  return rows;
}

const strip = (rows) => rows.map((r) => ({ member: r.member, score: r.score }));

/* A viewer of the top TOP: the window rebuilt by the rule, and every message
 * for its subscription without the sub id (which is per connection). */
class Viewer {
  constructor(conn) { this.conn = conn; this.rows = null; this.log = []; this.broken = null; this.seq = 0; }

  async start() {
    const snap = await this.conn.request({ op: 'subscribe', board: BOARD, view: { top: TOP } }, 5000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    this.sub = snap.sub;
    this.rows = snap.rows;
    this.seq = snap.seq;
    this.conn.ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.sub !== this.sub) return;
      const { sub, ...rest } = m; // eslint-disable-line no-unused-vars
      this.log.push(rest);
      this.seq = m.seq;
      if (m.op === 'snapshot') this.rows = m.rows;
      else if (m.op === 'delta') {
        const next = applyDelta(this.rows, m, 1, TOP);
        if (!next) this.broken = `delta did not apply: ${JSON.stringify(m)}`;
        else this.rows = next;
      }
    });
  }
}

async function metric(gw, name) {
  const res = await h.http(gw.base, 'GET', '/metrics');
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(res.text);
  assert.ok(m, `metric ${name} missing`);
  return Number(m[1]);
}

/* Writes n incr on members spread over the board, through the REST API (one
 * write in flight at a time, so ticks see a few each), then one that changes
 * the top row: a write outside the top 100 sends no delta, so only a last
 * write that surely shows guarantees a delta with the last seq. Returns the
 * last seq. */
async function writeSome(gw, n, spread = 150) {
  let seq = 0;
  for (let i = 0; i <= n; i++) {
    const w = i < n ? { member: member((i * 37) % spread), op: 'incr', delta: 1 + ((i * 13) % 97) }
      : { member: member(0), op: 'incr', delta: 1000000 };
    const res = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/scores`, w);
    assert.equal(res.status, 200, res.text);
    seq = Math.max(seq, res.body.seq);
  }
  return seq;
}

async function seed(gw, n = 150) {
  for (let i = 0; i < n; i++) {
    const res = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/scores`,
      { member: member(i), op: 'incr', delta: 1000 + i * 7 });
    assert.equal(res.status, 200, res.text);
  }
}

/* ---- the tests ---------------------------------------------------------------- */

test('a ws client offering permessage-deflate gets it and reads the same messages as one without it',
  { skip, timeout: 120000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    await seed(gw);
    const zc = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: true });
    const pc = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: false });
    assert.match(zc.ws.extensions, /^permessage-deflate/, `negotiated: '${zc.ws.extensions}'`);
    assert.equal(pc.ws.extensions, '');
    const zv = new Viewer(zc);
    const pv = new Viewer(pc);
    await zv.start();
    await pv.start();
    assert.deepEqual(strip(zv.rows), strip(pv.rows), 'the same snapshot');
    const last = await writeSome(gw, 300);
    await h.waitFor(() => zv.seq >= last && pv.seq >= last, 20000, 'both viewers to reach the last seq');
    assert.equal(zv.broken, null);
    assert.equal(pv.broken, null);
    assert.deepEqual(zv.log, pv.log, 'the same deltas, in the same order');
    assert.deepEqual(strip(zv.rows), await truth(redis));
    assert.ok(await metric(gw, 'rankcast_deflate_compressed_total') > 0, 'something went out compressed');
    assert.equal(await metric(gw, 'rankcast_deflate_connections_total'), 1);
    // A write over the compressed connection is answered like any other.
    const ack = await zc.request({ op: 'incr', board: BOARD, member: member(3), delta: 5 });
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
  });

test('many compressing viewers of one view: true windows, one compression per message',
  { skip, timeout: 180000 }, async (t) => {
    const VIEWERS = 60;
    const { redis, gw } = await h.startStack(t);
    await seed(gw);
    const viewers = [];
    for (let i = 0; i < VIEWERS; i++) {
      const c = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: true });
      assert.match(c.ws.extensions, /^permessage-deflate/);
      const v = new Viewer(c);
      await v.start();
      viewers.push(v);
    }
    const runs0 = await metric(gw, 'rankcast_deflate_runs_total');
    const comp0 = await metric(gw, 'rankcast_deflate_compressed_total');
    const last = await writeSome(gw, 200);
    await h.waitFor(() => viewers.every((v) => v.seq >= last), 60000, 'every viewer to reach the last seq')
      .catch((e) => {
        const behind = viewers.filter((v) => v.seq < last).map((v) => `${v.seq} (${v.log.length} messages)`);
        throw new Error(`${e.message}: last seq ${last}, ${behind.length} viewers behind at ${behind.slice(0, 5).join(', ')}`);
      });
    const want = await truth(redis);
    // A delta that only tells a new viewer count reached those who had
    // joined by then: the rest of the log is the same for all.
    const countOnly = (m) => m.op === 'delta' && m.viewers !== undefined && m.rows.length === 0 &&
      m.removed.length === 0;
    const shared = (v) => v.log.filter((m) => !countOnly(m));
    for (const v of viewers) {
      assert.equal(v.broken, null);
      assert.deepEqual(strip(v.rows), want);
      assert.deepEqual(shared(v), shared(viewers[0]), 'every viewer got the same messages');
    }
    const runs = (await metric(gw, 'rankcast_deflate_runs_total')) - runs0;
    const comp = (await metric(gw, 'rankcast_deflate_compressed_total')) - comp0;
    const deltas = viewers[0].log.filter((m) => m.op === 'delta').length;
    assert.ok(deltas > 0);
    // Each delta went compressed to all VIEWERS, compressed once: a handful
    // of other messages (the writes' answers, /metrics is HTTP) add runs.
    assert.ok(comp >= deltas * VIEWERS * 0.5, `compressed sends ${comp} for ${deltas} deltas x ${VIEWERS}`);
    assert.ok(runs * 20 <= comp, `compressions ${runs} vs compressed sends ${comp}: not shared`);
  });

test('on the wire: big messages go compressed, small ones in stored blocks; compressed client messages are answered',
  { skip, timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    await seed(gw);
    const c = await rawWs(gw.port);
    h.defer(t, () => c.sock.destroy());
    assert.match(c.extensions, /^permessage-deflate/, `answer: ${c.extensions}`);
    // a compressed subscribe: the snapshot of the top 100 comes compressed
    c.sendText(JSON.stringify({ op: 'subscribe', id: 1, board: BOARD, view: { top: TOP } }), true);
    const snap = await c.next((f) => f.msg && f.msg.id === 1);
    assert.equal(snap.msg.op, 'snapshot', snap.text);
    assert.equal(snap.rsv1, true, 'a snapshot of 100 rows goes compressed');
    assert.ok(snap.payload.length * 3 < snap.text.length, `compressed ${snap.payload.length} of ${snap.text.length}`);
    assert.equal(snap.rsv23, 0);
    // a small reply goes in stored blocks: RSV1, the text plus 6 bytes
    c.sendText(JSON.stringify({ op: 'ping', id: 2 }), true);
    const pong = await c.next((f) => f.msg && f.msg.id === 2);
    assert.equal(pong.msg.op, 'pong');
    assert.equal(pong.rsv1, true);
    assert.equal(pong.payload.length, Buffer.byteLength(pong.text) + 6, 'a pong is under the threshold: stored');
    assert.ok(pong.payload.includes(Buffer.from(pong.text)), 'stored as is');
    // plain and compressed client messages mix freely
    c.sendText(JSON.stringify({ op: 'ping', id: 3 }), false);
    assert.equal((await c.next((f) => f.msg && f.msg.id === 3)).msg.op, 'pong');
    // a compressed message in three fragments: RSV1 on the first only
    const z = deflateMessage(JSON.stringify({ op: 'incr', id: 4, board: BOARD, member: member(1), delta: 2 }));
    const a = Math.floor(z.length / 3);
    c.send(Buffer.concat([clientFrame(0x41, z.subarray(0, a)), clientFrame(0x00, z.subarray(a, 2 * a)),
      clientFrame(0x80, z.subarray(2 * a))]));
    const ack = await c.next((f) => f.msg && f.msg.id === 4);
    assert.equal(ack.msg.op, 'ack', ack.text);
    // and a delta reaches it, readable
    await writeSome(gw, 5);
    const d = await c.next((f) => f.msg && f.msg.op === 'delta');
    assert.equal(d.error, undefined);
  });

test('compressed client messages that inflate to many KiB are answered, also back to back in one write',
  { skip, timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const c = await rawWs(gw.port);
    h.defer(t, () => c.sock.destroy());
    const sizes = [3000, 5000, 20000, 60000];
    // one at a time, on an otherwise idle gateway (lws alone would stall
    // past about 3 KiB until some other socket event)
    for (const [i, n] of sizes.entries()) {
      c.sendText(JSON.stringify({ op: 'ping', id: 10 + i, pad: 'x'.repeat(n) }), true);
      const pong = await c.next((f) => f.msg && f.msg.id === 10 + i, 10000);
      assert.equal(pong.msg.op, 'pong', `${n} bytes`);
    }
    // back to back in one write, each answered, in order
    const frames = [];
    for (let i = 0; i < 12; i++)
      frames.push(clientFrame(0xc1, deflateMessage(JSON.stringify({ op: 'ping', id: 100 + i, pad: 'y'.repeat(4000 * (i % 4)) }))));
    c.send(Buffer.concat(frames));
    for (let i = 0; i < 12; i++) await c.next((f) => f.msg && f.msg.id === 100 + i, 10000);
    const ids = c.frames.filter((f) => f.msg && f.msg.id >= 100).map((f) => f.msg.id);
    assert.deepEqual(ids, Array.from({ length: 12 }, (_, i) => 100 + i));
    // a compressed binary message is inflated to its end and refused like any binary frame
    c.send(clientFrame(0xc2, deflateMessage('z'.repeat(6000))));
    const err = await c.next((f) => f.msg && f.msg.op === 'error', 10000);
    assert.equal(err.msg.code, 'bad_request', err.text);
    c.sendText(JSON.stringify({ op: 'ping', id: 200 }), true);
    await c.next((f) => f.msg && f.msg.id === 200, 10000);
  });

test('a compressed message that inflates past max_frame is refused with 1009; the gateway keeps serving',
  { skip, timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    // The ws client compresses what it sends (threshold 0): 8 MB of one
    // letter in a frame of a few KiB, inflating to 128 times max_frame.
    const bomb = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: { threshold: 0 } });
    assert.match(bomb.ws.extensions, /^permessage-deflate/);
    bomb.sendRaw(JSON.stringify({ op: 'ping', id: 1, pad: 'a'.repeat(8 << 20) }));
    const closed = await Promise.race([bomb.closed, h.sleep(15000).then(() => null)]);
    assert.ok(closed, 'closed within 15 s');
    assert.equal(closed.code, 1009);
    // by hand too: a raw client's bomb gets the close frame 1009
    const c = await rawWs(gw.port);
    h.defer(t, () => c.sock.destroy());
    c.send(clientFrame(0xc1, deflateMessage(JSON.stringify({ op: 'ping', id: 1, pad: 'b'.repeat(4 << 20) }))));
    const close = await c.next((f) => f.opcode === 8, 10000);
    assert.equal(close.code, 1009);
    // one just under the limit is fine
    const ok = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: { threshold: 0 } });
    const pong = await ok.request({ op: 'ping', pad: 'c'.repeat(60000) }, 5000);
    assert.equal(pong.op, 'pong');
    const res = await h.http(gw.base, 'GET', '/healthz');
    assert.equal(res.status, 200);
  });

test('RSV1 where RFC 7692 forbids it, or without the extension, is a protocol error (1002)',
  { skip, timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const cases = [
      ['RSV1 on a continuation frame', 'permessage-deflate',
        Buffer.concat([clientFrame(0x01, '{"op":'), clientFrame(0xc0, deflateMessage('"ping"}'))])],
      ['RSV1 on a ping', 'permessage-deflate', clientFrame(0xc9, 'x')],
      ['RSV2 on a text frame', 'permessage-deflate', clientFrame(0xa1, '{}')],
      ['RSV1 without the extension', null, clientFrame(0xc1, deflateMessage('{"op":"ping"}'))],
    ];
    for (const [what, offer, bytes] of cases) {
      const c = await rawWs(gw.port, offer);
      h.defer(t, () => c.sock.destroy());
      assert.equal(c.extensions, offer ? 'permessage-deflate' : '', what);
      c.send(bytes);
      const close = await c.next((f) => f.opcode === 8, 5000).catch((e) => e);
      assert.ok(!(close instanceof Error), `${what}: ${close.message}`);
      assert.equal(close.code, 1002, `${what}: close code ${close.code}`);
    }
  });

test('compression = off negotiates nothing and sends plain frames',
  { skip, timeout: 60000 }, async (t) => {
    const config = h.configWith(t, { server: { compression: 'off' } });
    const { gw } = await h.startStack(t, { config });
    await seed(gw, 120);
    const zc = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: true });
    assert.equal(zc.ws.extensions, '');
    const c = await rawWs(gw.port);
    h.defer(t, () => c.sock.destroy());
    assert.equal(c.extensions, '');
    c.sendText(JSON.stringify({ op: 'subscribe', id: 1, board: BOARD, view: { top: TOP } }), false);
    const snap = await c.next((f) => f.msg && f.msg.id === 1);
    assert.equal(snap.msg.op, 'snapshot');
    assert.equal(snap.rsv1, false);
    assert.equal(await metric(gw, 'rankcast_deflate_connections_total'), 0);
  });

test('--check-config validates compression', { skip, timeout: 30000 }, async (t) => {
  const { spawnSync } = require('node:child_process');
  const good = h.configWith(t, { server: { compression: 'off' } });
  assert.equal(spawnSync(h.gatewayBin(), ['--check-config', good]).status, 0);
  const bad = h.configWith(t, { server: { compression: 'maybe' } });
  const r = spawnSync(h.gatewayBin(), ['--check-config', bad], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stdout + r.stderr, /compression/);
});
