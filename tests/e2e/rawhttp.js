/* rawhttp.js - one HTTP exchange on a raw TCP socket, for tests that send
 * what no HTTP client would (smuggling, pipelining, slow or bad requests)
 * and read exactly what came back.
 *
 *   const { rawExchange, statusOf } = require('./rawhttp');
 *   const { buf, why } = await rawExchange(port, data, { ms, localAddress, done, noDelay })
 *       writes data on a fresh socket; collects bytes until done(buf) is true
 *       (why 'complete'), the server closes ('closed'), the socket fails
 *       ('error') or ms pass ('timeout'; 3000 by default)
 *   statusOf(text)   the status code of the first response line, or 0
 */
'use strict';

const net = require('node:net');

function rawExchange(port, data, { ms = 3000, localAddress = '127.0.0.1', done = () => false, noDelay = false } = {}) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    let buf = Buffer.alloc(0);
    let over = false;
    const finish = (why) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ buf, why });
    };
    const timer = setTimeout(() => finish('timeout'), ms);
    if (noDelay) sock.setNoDelay(true);
    sock.on('connect', () => sock.write(data));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (done(buf)) finish('complete');
    });
    sock.on('error', () => finish('error'));
    sock.on('close', () => finish('closed'));
  });
}

const statusOf = (text) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] || 0);

module.exports = { rawExchange, statusOf };
