/* wsraw.js - a WebSocket client on a raw TCP socket, speaking the framing
 * by hand (RFC 6455), for tests that send what no library would: fragments
 * that never end, floods of empty continuation frames, pings and pongs.
 *
 *   const { rawWs, frame } = require('./wsraw');
 *   const c = await rawWs(port, { localAddress?, path? })   after the 101
 *   c.send(buf)                      writes bytes as they are
 *   c.frames                         server frames so far: { opcode, payload, code? }
 *   c.closeFrame                     the server's close frame once it came (or null)
 *   await c.closed                   the socket closed
 *   frame(opcode, payload, { fin = true, masked = true })   one client frame
 *   frames(n, opcode, payload, opts) n of them in one Buffer (one mask key,
 *                                    built once: cheap enough to flood with)
 */
'use strict';

const crypto = require('node:crypto');
const net = require('node:net');
const { ADMIN_KEY } = require('./harness');

function frame(opcode, payload = '', { fin = true, masked = true } = {}) {
  const p = Buffer.from(payload);
  const m = masked ? 0x80 : 0;
  const hdr = [(fin ? 0x80 : 0) | opcode];
  if (p.length < 126) hdr.push(m | p.length);
  else if (p.length < 65536) hdr.push(m | 126, p.length >> 8, p.length & 0xff);
  else throw new Error('too long for this helper');
  if (!masked) return Buffer.concat([Buffer.from(hdr), p]);
  const mask = crypto.randomBytes(4);
  return Buffer.concat([Buffer.from(hdr), mask, Buffer.from(p.map((b, i) => b ^ mask[i % 4]))]);
}

function frames(n, opcode, payload = '', opts = {}) {
  const one = frame(opcode, payload, opts);
  return Buffer.concat(Array(n).fill(one));
}

function rawWs(port, { localAddress = '127.0.0.1', path = '/ws' } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const c = {
      sock,
      frames: [],
      closeFrame: null,
      closed: new Promise((r) => sock.on('close', r)),
      send(b) { if (!sock.destroyed) sock.write(b); },
    };
    sock.on('error', (e) => { if (!upgraded) reject(e); });
    sock.on('connect', () => sock.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
      `Sec-WebSocket-Protocol: rankcast.v1\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n\r\n`));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.slice(0, end).toString('latin1');
        if (!/^HTTP\/1\.1 101/.test(head)) {
          sock.destroy();
          reject(new Error(`handshake refused: ${head.split('\r\n')[0]}`));
          return;
        }
        upgraded = true;
        buf = buf.slice(end + 4);
        resolve(c);
      }
      for (;;) { // server frames are never masked
        if (buf.length < 2) break;
        let len = buf[1] & 0x7f;
        let at = 2;
        if (len === 126) { if (buf.length < 4) break; len = buf.readUInt16BE(2); at = 4; }
        else if (len === 127) { if (buf.length < 10) break; len = Number(buf.readBigUInt64BE(2)); at = 10; }
        if (buf.length < at + len) break;
        const f = { opcode: buf[0] & 0x0f, payload: buf.slice(at, at + len) };
        if (f.opcode === 8) {
          f.code = len >= 2 ? f.payload.readUInt16BE(0) : null;
          if (!c.closeFrame) c.closeFrame = f;
        }
        buf = buf.slice(at + len);
        c.frames.push(f);
      }
    });
  });
}

module.exports = { frame, frames, rawWs };
