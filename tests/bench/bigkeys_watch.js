// bigkeys_watch.js - one command against Redis while a second connection
// sends PING every millisecond: how long the command took and how long the
// PINGs around it waited (tests/bench/bigkeys.sh, issue 10 "Big keys").
//
//   node bigkeys_watch.js PORT BEFORE_MS AFTER_MS WORD [WORD ...]
//
// Pings for BEFORE_MS, sends the command (its words as given) on its own
// connection, keeps pinging until AFTER_MS after the command's reply, then
// prints one tab-separated line:
//   command_ms  pings_in_window  p50_ms  p99_ms  max_ms  pings_total  reply
// The window is every PING whose wait overlaps [command sent, reply + 200 ms]:
// what another client of the same Redis felt while the command ran and right
// after (a lazy free runs on after the reply, in a background thread).
// A PING is sent only when the previous one has answered, so a stall shows
// as one long wait, not as a queue of them. No dependencies: raw RESP on net.
'use strict';
const net = require('net');

const [port, beforeMs, afterMs] = process.argv.slice(2, 5).map(Number);
const words = process.argv.slice(5);
if (!port || !(beforeMs >= 0) || !(afterMs >= 0) || words.length === 0) {
  console.error('usage: node bigkeys_watch.js PORT BEFORE_MS AFTER_MS WORD [WORD ...]');
  process.exit(2);
}
const now = () => Number(process.hrtime.bigint()) / 1e6;

function encode(ws) {
  let s = `*${ws.length}\r\n`;
  for (const w of ws) s += `$${Buffer.byteLength(w)}\r\n${w}\r\n`;
  return s;
}

// The end offset of one complete RESP2 reply at buf[off..], or -1.
function replyEnd(buf, off) {
  const nl = buf.indexOf('\r\n', off);
  if (nl < 0) return -1;
  const type = String.fromCharCode(buf[off]);
  const head = buf.toString('latin1', off + 1, nl);
  if (type === '+' || type === '-' || type === ':') return nl + 2;
  if (type === '$') {
    const n = Number(head);
    if (n < 0) return nl + 2;
    return buf.length >= nl + 2 + n + 2 ? nl + 2 + n + 2 : -1;
  }
  if (type === '*') {
    let p = nl + 2;
    for (let i = 0, n = Number(head); i < n; i++) {
      p = replyEnd(buf, p);
      if (p < 0) return -1;
    }
    return p;
  }
  throw new Error('bigkeys_watch: unexpected reply byte ' + type);
}

function connect() {
  return new Promise((resolve, reject) => {
    const s = net.createConnection({ host: '127.0.0.1', port }, () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

// Sends ws on s and resolves with the raw reply once it is complete.
function call(s, ws) {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onError = (e) => { s.off('data', onData); reject(e); };
    const onData = (d) => {
      buf = Buffer.concat([buf, d]);
      const end = replyEnd(buf, 0);
      if (end >= 0) {
        s.off('data', onData);
        s.off('error', onError);
        resolve(buf.subarray(0, end).toString('latin1'));
      }
    };
    s.on('data', onData);
    s.once('error', onError);
    s.write(encode(ws));
  });
}

function pct(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const pinger = await connect();
  const worker = await connect();
  const pings = []; // [sent, answered]
  let stop = false;
  const pingLoop = (async () => {
    let next = now();
    while (!stop) {
      const t0 = now();
      const r = await call(pinger, ['PING']);
      if (!r.startsWith('+PONG')) throw new Error('bigkeys_watch: PING answered ' + r);
      pings.push([t0, now()]);
      next += 1;
      const wait = next - now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
      else next = now();
    }
  })();
  await new Promise((res) => setTimeout(res, beforeMs));
  const c0 = now();
  const reply = await call(worker, words);
  const c1 = now();
  await new Promise((res) => setTimeout(res, afterMs));
  stop = true;
  await pingLoop;
  const lo = c0, hi = c1 + 200;
  const win = pings.filter(([a, b]) => b >= lo && a <= hi).map(([a, b]) => b - a).sort((x, y) => x - y);
  const f = (x) => x.toFixed(2);
  const short = reply.replace(/\r\n/g, ' ').slice(0, 60);
  console.log([f(c1 - c0), win.length, f(pct(win, 50)), f(pct(win, 99)), f(win.length ? win[win.length - 1] : 0),
    pings.length, short].join('\t'));
  pinger.end();
  worker.end();
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
