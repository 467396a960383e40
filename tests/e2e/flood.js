/* flood.js - the connection flood of hostile_flood.test.js, shared with the
 * benchmark that reports the latency it costs (tests/bench/floods.js).
 *
 *   const a = flood.attacker(port, addr, stats, { target, reopenPerTick })
 *     From source address addr, keeps up to `target` connections to
 *     127.0.0.1:port open that never upgrade (half silent, a quarter with
 *     headers trickled one byte a second, a quarter with a body trickled one
 *     byte a second), opening at most `reopenPerTick` every 100 ms and
 *     reopening what the gateway closes. stats ({ opened, closedByServer,
 *     maxLife: {} }) counts them and keeps the longest life, per kind, of a
 *     connection the gateway ended.
 *     a.live (the open ones), a.oldestOpenMs(), a.stop()
 */
'use strict';

const net = require('node:net');

function attacker(port, addr, stats, { target, reopenPerTick }) {
  const live = new Set();
  let n = 0;
  let stopped = false;
  const HEAD = 'POST /api/v1/boards/demo/scores HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
  function open() {
    const kind = ['silent', 'silent', 'headers', 'body'][n++ % 4];
    const sock = net.connect({ port, host: '127.0.0.1', localAddress: addr });
    const c = { sock, kind, at: Date.now(), pos: 0 };
    live.add(c);
    stats.opened++;
    sock.on('error', () => {});
    sock.on('connect', () => {
      c.at = Date.now();
      if (kind === 'body') sock.write(HEAD + 'Content-Length: 60000\r\n\r\n');
      if (kind === 'headers') sock.write('GET /healthz HTTP/1.1\r\n');
    });
    sock.on('close', () => {
      live.delete(c);
      if (!stopped) {
        stats.closedByServer++;
        const life = Date.now() - c.at;
        stats.maxLife[kind] = Math.max(stats.maxLife[kind] || 0, life);
      }
    });
  }
  const refill = setInterval(() => {
    for (let i = 0; i < reopenPerTick && live.size < target; i++) open();
  }, 100);
  const drip = setInterval(() => {
    for (const c of live) {
      if (c.kind === 'headers' && !c.sock.connecting) c.sock.write('X'); // one header byte, never ending
      if (c.kind === 'body' && !c.sock.connecting) c.sock.write(' ');
    }
  }, 1000);
  return {
    live,
    oldestOpenMs() {
      let max = 0;
      const now = Date.now();
      for (const c of live) if (!c.sock.connecting) max = Math.max(max, now - c.at);
      return max;
    },
    stop() {
      stopped = true;
      clearInterval(refill);
      clearInterval(drip);
      for (const c of live) c.sock.destroy();
      live.clear();
    },
  };
}

module.exports = { attacker };
