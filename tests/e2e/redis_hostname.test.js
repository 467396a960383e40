/* redis_hostname.test.js - `--redis HOST:PORT` with a host name (as under
 * Docker or Kubernetes: `--redis redis:6379`): the gateway looks the name up
 * without blocking its loop, before every connection attempt, and serves
 * writes through it. Here the name is `localhost`, against a real
 * redis-server on a free port. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

test('--redis localhost:PORT: the name is looked up, writes are served, and again after Redis restarts', { timeout: 60000 }, async (t) => {
  let redis = await h.startRedis(t);
  const port = redis.port;
  // The harness passes --redis 127.0.0.1:PORT first; the last --redis wins.
  const gw = await h.startGateway(t, { redisPort: port, args: ['--redis', `localhost:${port}`] });
  await gw.waitForLine(new RegExp(`redis up localhost:${port} \\(`), 10000);

  const c = await h.connectWs(t, gw.wsUrl);
  const r = await c.request({ op: 'incr', board: 'demo', member: 'user:host', delta: 5 });
  assert.equal(r.op, 'ack', JSON.stringify(r));
  assert.notEqual(await redis.cli('ZSCORE', 'rc:{demo|}:z', 'user:host'), '');

  // A restart: the gateway reconnects through a new lookup of the name.
  await redis.stop();
  redis = await h.startRedis(t, { port });
  await h.waitFor(() => gw.stderr.filter((l) => l.includes(`redis up localhost:${port} (`)).length >= 2, 20000,
    'the gateway up again through localhost');
  let ack = null;
  await h.waitFor(async () => {
    const again = await c.request({ op: 'incr', board: 'demo', member: 'user:again', delta: 1 });
    if (again.op === 'ack') ack = again;
    return ack !== null;
  }, 20000, 'a write acknowledged after the restart');
  assert.notEqual(await redis.cli('ZSCORE', 'rc:{demo|}:z', 'user:again'), '');
});
