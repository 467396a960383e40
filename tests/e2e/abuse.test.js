/* abuse.test.js - 10,000 subscribes on one connection: the first
 * max_subs_per_conn get snapshots, every other one a too_large error (or,
 * past conn_read_burst, rate_limited), the connection stays usable and Redis
 * gains nothing from it. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

test('10,000 subscribes on one connection: capped, answered, harmless', { timeout: 240000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const before = await redis.fingerprint();
  // Uncompressed: with permessage-deflate the ws client inflates 10,000
  // replies one by one through its async zlib queue, which takes longer than
  // the reply timeout (the client's cost, not the gateway's: it sits idle).
  const c = await h.connectWs(t, gw.wsUrl, { token: null, perMessageDeflate: false });
  const N = 10000;
  // A deadline, not a speed bound: under a loaded CI (load 14) the replies
  // came at a few hundred a second and the 30 s it had were not enough.
  const replies = await Promise.all(Array.from({ length: N }, (_, i) =>
    c.request({ op: 'subscribe', board: 'demo', view: { offset: i, limit: 1 } }, 180000)));
  const ok = replies.filter((r) => r.op === 'snapshot').length;
  const capped = replies.filter((r) => r.op === 'error' && r.code === 'too_large').length;
  const limited = replies.filter((r) => r.op === 'error' && r.code === 'rate_limited').length;
  assert.equal(ok, 64); // the shipped max_subs_per_conn
  assert.equal(capped + limited, N - 64);
  // the shipped conn_read_burst (400) admits at most 400 + refill of them
  assert.ok(limited > 0 && ok + capped < 2000, `${capped} too_large, ${limited} rate_limited`);
  await h.waitFor(async () => (await c.request({ op: 'ping' })).op === 'pong', 10000, 'the read bucket to refill');
  const m = (await h.http(gw.base, 'GET', '/metrics')).text;
  assert.match(m, /^rankcast_subscriptions\{view="page"\} 64$/m);
  assert.equal(await redis.fingerprint(), before);
});
