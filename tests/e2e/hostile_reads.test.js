/* hostile_reads.test.js - read budgets ([limits] conn_read_rate/burst,
 * ip_read_rate/burst, max_pending). Every request that is not a write or an
 * admin operation is a read (subscribe, unsubscribe, rank, ping, REST GET);
 * an empty bucket answers rate_limited (HTTP 429) and does nothing. Every
 * request still gets exactly one reply.
 *
 * Buckets refill while a test runs, so counts are asserted as ranges:
 * at least the burst, at most the burst plus what the elapsed time refilled
 * (plus one). The flood version is hostile_read_flood.test.js. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const BIG = { conn_read_rate: 1000000, conn_read_burst: 10000000, ip_read_rate: 1000000, ip_read_burst: 10000000 };

const burst = h.burst;

const limited = (r) => r.op === 'error' && r.code === 'rate_limited';
const count = (replies, pred) => replies.filter(pred).length;

test('conn_read_burst: a burst of reads on one connection past the burst is answered rate_limited; writes are not reads',
  { skip, timeout: 30000 }, async (t) => {
    const RATE = 1;
    const BURST = 5;
    const config = h.configWith(t, { limits: Object.assign({}, BIG, { conn_read_rate: RATE, conn_read_burst: BURST }) });
    const { gw } = await h.startStack(t, { config });
    const c = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.5' });
    // Every kind of read, 24 in all.
    const kinds = [
      { op: 'ping' },
      { op: 'rank', board: 'demo', member: 'user:1' },
      { op: 'subscribe', board: 'demo', view: { top: 1 } },
      { op: 'unsubscribe', sub: 'no-such-sub' },
    ];
    const reqs = Array.from({ length: 24 }, (_, i) => kinds[i % 4]);
    const t0 = Date.now();
    const replies = await burst(c, reqs, 'r');
    const elapsed = (Date.now() - t0) / 1000;
    const served = count(replies, (r) => !limited(r));
    const refused = count(replies, limited);
    t.diagnostic(`24 reads in one write: ${served} served, ${refused} rate_limited in ${elapsed.toFixed(2)} s ` +
      `(burst ${BURST}, rate ${RATE}/s)`);
    assert.ok(served >= BURST, `${served} served: the burst of ${BURST} must be`);
    assert.ok(served <= BURST + Math.ceil(elapsed * RATE) + 1, `${served} served: more than burst + refill`);
    assert.equal(served + refused, 24);
    // Each kind was refused at least once (they are all reads).
    for (const k of kinds)
      assert.ok(replies.some((r, i) => reqs[i] === k && limited(r)), `${k.op} is not counted as a read`);
    // The connection is still fine and a write is not a read.
    const ack = await c.request({ op: 'incr', board: 'demo', member: 'user:w', delta: 1 });
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    // The bucket refills: a read is served again within a few seconds.
    await h.waitFor(async () => (await c.request({ op: 'ping' })).op === 'pong', 5000, 'the bucket to refill');
    // Another connection from the same address has its own bucket.
    const d = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.5' });
    const other = await burst(d, Array.from({ length: BURST }, () => ({ op: 'ping' })), 'd');
    assert.equal(count(other, (r) => r.op === 'pong'), BURST, JSON.stringify(other));
  });

test('ip_read_burst: one bucket per address, shared by its WebSocket connections and REST, not by 127.0.0.7',
  { skip, timeout: 30000 }, async (t) => {
    const RATE = 1;
    const BURST = 10;
    const config = h.configWith(t, { limits: Object.assign({}, BIG, { ip_read_rate: RATE, ip_read_burst: BURST }) });
    const { gw } = await h.startStack(t, { config });
    const A = '127.0.0.6';
    const a = await h.connectWs(t, gw.wsUrl, { localAddress: A });
    const b = await h.connectWs(t, gw.wsUrl, { localAddress: A });
    const rank = { op: 'rank', board: 'demo', member: 'user:1' };
    const t0 = Date.now();
    const ra = await burst(a, Array.from({ length: 8 }, () => rank), 'a');
    const rb = await burst(b, Array.from({ length: 8 }, () => rank), 'b');
    const rest = [];
    for (let i = 0; i < 4; i++)
      rest.push(await h.http(gw.base, 'GET', '/api/v1/boards/demo/members/user:1', null, { localAddress: A }));
    const elapsed = (Date.now() - t0) / 1000;
    const served = count(ra, (r) => r.op === 'rank') + count(rb, (r) => r.op === 'rank') +
      rest.filter((r) => r.status === 200).length;
    const refused = count(ra, limited) + count(rb, limited) + rest.filter((r) => r.status === 429).length;
    t.diagnostic(`20 reads from ${A} (8 + 8 WebSocket, 4 REST): ${served} served, ${refused} rate_limited ` +
      `in ${elapsed.toFixed(2)} s (ip burst ${BURST}, rate ${RATE}/s)`);
    assert.equal(served + refused, 20, 'every read is served or rate_limited');
    assert.ok(served >= BURST && served <= BURST + Math.ceil(elapsed * RATE) + 1, `${served} served`);
    const r429 = rest.find((r) => r.status === 429);
    assert.ok(r429, `REST shares the bucket: ${rest.map((r) => r.status)}`);
    assert.equal(r429.body.code, 'rate_limited', r429.text);
    assert.ok(count(rb, limited) > 0, 'the second connection shares the bucket');

    // Another address is not affected.
    const other = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.7' });
    const ro = await burst(other, Array.from({ length: 8 }, () => rank), 'o');
    assert.equal(count(ro, (r) => r.op === 'rank'), 8, JSON.stringify(ro.filter(limited)));
    assert.equal((await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=3', null, { localAddress: '127.0.0.7' })).status, 200);
  });

test('max_pending: of 200 rank requests in one write at most max_pending wait for Redis, the rest are rate_limited at once',
  { skip, timeout: 30000 }, async (t) => {
    const MAX = 8;
    const config = h.configWith(t, { limits: Object.assign({}, BIG, { max_pending: MAX }) });
    const { gw } = await h.startStack(t, { config });
    const c = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.8', perMessageDeflate: false });
    const N = 200;
    const replies = await burst(c, Array.from({ length: N }, (_, i) => ({ op: 'rank', board: 'demo', member: `user:${i}` })), 'p');
    const served = count(replies, (r) => r.op === 'rank');
    const refused = count(replies, limited);
    t.diagnostic(`${N} rank requests in one write, max_pending ${MAX}: ${served} served, ${refused} rate_limited`);
    assert.equal(served + refused, N, JSON.stringify(replies.find((r) => r.op !== 'rank' && !limited(r))));
    assert.ok(served >= MAX, `${served} served`);
    assert.ok(refused >= N / 2, `${refused} refused: the pending requests were not capped`);
    // Nothing is left pending: the connection answers at once.
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
  });

test('max_pending counts writes too: refused writes write nothing',
  { skip, timeout: 30000 }, async (t) => {
    const MAX = 8;
    const config = h.configWith(t, { limits: Object.assign({}, BIG, { max_pending: MAX }) });
    const { gw } = await h.startStack(t, { config });
    const c = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.9', perMessageDeflate: false });
    const N = 100;
    const replies = await burst(c, Array.from({ length: N }, () => ({ op: 'incr', board: 'demo', member: 'user:p', delta: 1 })), 'w');
    const acked = count(replies, (r) => r.op === 'ack');
    const refused = count(replies, limited);
    t.diagnostic(`${N} writes in one write, max_pending ${MAX}: ${acked} acked, ${refused} rate_limited`);
    assert.equal(acked + refused, N, JSON.stringify(replies.find((r) => r.op !== 'ack' && !limited(r))));
    assert.ok(acked >= MAX && refused >= N / 2, `${acked} acked, ${refused} refused`);
    // The score counts exactly the acknowledged writes.
    const rank = await c.request({ op: 'rank', board: 'demo', member: 'user:p' });
    assert.equal(rank.score, acked, JSON.stringify(rank));
  });
