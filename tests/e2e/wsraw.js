/* wsraw.js - a WebSocket client on a raw TCP socket, speaking the framing
 * by hand (RFC 6455), for tests that send what no library would: fragments
 * that never end, floods of empty continuation frames, pings and pongs,
 * unmasked or compressed frames, bytes before the 101, a reader that stops.
 *
 *   const { rawWs, frame } = require('./wsraw');
 *   const c = await rawWs(port, { localAddress?, path?, early?, tls? })   after the 101
 *                                    (tls: options for tls.connect, e.g. { ca }: wss)
 *   c.send(buf)                      writes bytes as they are
 *   c.frames                         server frames so far: { fin, rsv1, rsv23, opcode, masked, payload, code? }
 *   c.closeFrame                     the server's close frame once it came (or null)
 *   await c.next(pred, ms = 5000)    the first frame (so far or to come) pred accepts;
 *                                    rejects after ms, or when the socket closes first
 *   await c.closed                   the socket closed
 *   frame(opcode, payload, { fin = true, masked = true, rsv = 0 })   one client frame
 *                                    (rsv: the RSV bits of byte 0, e.g. 0x40 for RSV1)
 *   frames(n, opcode, payload, opts) n of them in one Buffer (one mask key,
 *                                    built once: cheap enough to flood with)
 *
 * The pieces, for clients that handle frames their own way (compression.test.js
 * inflates, hostile_boards.test.js stops reading):
 *   await handshake(port, { localAddress?, path?, headers?, token?, early?, pause? })
 *                                    -> { sock, head, rest } once the 101 came
 *   serverFrames(onFrame)            -> push(bytes): calls onFrame(f) per whole frame
 *   waiters(c, { onClose = true })   gives c a frame list, c.deliver(f) and c.next()
 */
'use strict';

const crypto = require('node:crypto');
const net = require('node:net');
const tlsLib = require('node:tls');
const { ADMIN_KEY } = require('./harness');

function frame(opcode, payload = '', { fin = true, masked = true, rsv = 0 } = {}) {
  const p = Buffer.from(payload);
  const m = masked ? 0x80 : 0;
  let hdr = [(fin ? 0x80 : 0) | (rsv & 0x70) | opcode];
  if (p.length < 126) hdr.push(m | p.length);
  else if (p.length < 65536) hdr.push(m | 126, p.length >> 8, p.length & 0xff);
  else {
    const b = Buffer.alloc(10);
    b[0] = hdr[0];
    b[1] = m | 127;
    b.writeBigUInt64BE(BigInt(p.length), 2);
    hdr = b;
  }
  if (!masked) return Buffer.concat([Buffer.from(hdr), p]);
  const mask = crypto.randomBytes(4);
  return Buffer.concat([Buffer.from(hdr), mask, Buffer.from(p.map((b, i) => b ^ mask[i % 4]))]);
}

function frames(n, opcode, payload = '', opts = {}) {
  const one = frame(opcode, payload, opts);
  return Buffer.concat(Array(n).fill(one));
}

/* Connects and upgrades. headers: extra request header lines ({ name: value });
 * token: the bearer sent (null: none; the admin key by default); early: bytes
 * written with the handshake, before the 101; pause: stop reading after the
 * 101 (a reader that never reads). Resolves { sock, head, rest } with the
 * response head and the bytes read past it; rejects a refused handshake. */
function handshake(port, { localAddress = '127.0.0.1', path = '/ws', headers = {}, token = ADMIN_KEY,
  early = Buffer.alloc(0), pause = false, tls = null } = {}) {
  return new Promise((resolve, reject) => {
    const sock = tls ? tlsLib.connect({ port, host: '127.0.0.1', localAddress, ...tls })
      : net.connect({ port, host: '127.0.0.1', localAddress });
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const onData = (d) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      if (pause) sock.pause();
      const head = buf.subarray(0, end).toString('latin1');
      if (!/^HTTP\/1\.1 101/.test(head)) {
        sock.destroy();
        reject(new Error(`handshake refused: ${head.split('\r\n')[0]}`));
        return;
      }
      upgraded = true;
      resolve({ sock, head, rest: buf.subarray(end + 4) });
    };
    sock.on('data', onData);
    sock.on('error', (e) => { if (!upgraded) reject(e); });
    sock.on('close', () => { if (!upgraded) reject(new Error('closed before the 101')); });
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    sock.on(tls ? 'secureConnect' : 'connect', () => sock.write(Buffer.concat([Buffer.from(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
      `Sec-WebSocket-Protocol: rankcast.v1\r\n${extra}` +
      (token ? `Authorization: Bearer ${token}\r\n` : '') + '\r\n', 'latin1'), early])));
  });
}

/* A parser of server frames (never masked by a server; the bit is reported
 * as read): push(bytes) as they come, onFrame(f) once per whole frame. */
function serverFrames(onFrame) {
  let buf = Buffer.alloc(0);
  return (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      if (buf.length < 2) break;
      let len = buf[1] & 0x7f;
      let at = 2;
      if (len === 126) { if (buf.length < 4) break; len = buf.readUInt16BE(2); at = 4; }
      else if (len === 127) { if (buf.length < 10) break; len = Number(buf.readBigUInt64BE(2)); at = 10; }
      if (buf.length < at + len) break;
      const f = {
        fin: !!(buf[0] & 0x80), rsv1: !!(buf[0] & 0x40), rsv23: buf[0] & 0x30, opcode: buf[0] & 0x0f,
        masked: !!(buf[1] & 0x80), payload: Buffer.from(buf.subarray(at, at + len)),
      };
      if (f.opcode === 8) f.code = len >= 2 ? f.payload.readUInt16BE(0) : null;
      buf = buf.subarray(at + len);
      onFrame(f);
    }
  };
}

/* Gives c (with c.closed) a frame list, deliver(f) to add one, and
 * next(pred, ms): the first frame pred accepts, rejected after ms or, when
 * onClose, once the socket closed without one. */
function waiters(c, { onClose = true } = {}) {
  c.frames = [];
  c.waiters = [];
  c.deliver = (f) => {
    c.frames.push(f);
    for (const w of c.waiters.slice()) {
      if (w.pred(f)) { c.waiters.splice(c.waiters.indexOf(w), 1); w.res(f); }
    }
  };
  c.next = (pred, ms = 5000) => {
    const hit = c.frames.find(pred);
    if (hit) return Promise.resolve(hit);
    return new Promise((res, rej) => {
      const w = { pred, res };
      const got = () => JSON.stringify(c.frames.map((f) => f.opcode));
      const timer = setTimeout(() => {
        c.waiters.splice(c.waiters.indexOf(w), 1);
        rej(new Error(`no such frame within ${ms} ms; got ${got()}`));
      }, ms);
      w.res = (f) => { clearTimeout(timer); res(f); };
      c.waiters.push(w);
      if (onClose) {
        c.closed.then(() => {
          if (c.waiters.includes(w)) {
            c.waiters.splice(c.waiters.indexOf(w), 1);
            clearTimeout(timer);
            rej(new Error(`closed without such a frame; got ${got()}`));
          }
        });
      }
    });
  };
  return c;
}

async function rawWs(port, { localAddress = '127.0.0.1', path = '/ws', early, tls } = {}) {
  const { sock, rest } = await handshake(port, { localAddress, path, early, tls });
  const c = waiters({
    sock,
    closeFrame: null,
    closed: new Promise((r) => sock.on('close', r)),
    send(b) { if (!sock.destroyed) sock.write(b); },
  });
  const push = serverFrames((f) => {
    if (f.opcode === 8 && !c.closeFrame) c.closeFrame = f;
    c.deliver(f);
  });
  sock.on('data', push);
  push(rest);
  return c;
}

module.exports = { frame, frames, handshake, rawWs, serverFrames, waiters };
