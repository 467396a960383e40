/* out_of_band.test.js - changes made behind the gateway's back (redis-cli on
 * the board's sorted set) reach viewers through keyspace notifications. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const ZKEY = 'rc:{demo|}:z';
const SCALE = 2 ** 29; // demo's tie-break bits: points * 2^29 (+ slot)

/* Subscribes to demo's top 10 and keeps the window current. */
async function topTen(t, gw) {
  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  assert.equal(snap.op, 'snapshot');
  const v = { rows: snap.rows, c };
  c.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub !== snap.sub) return;
    if (m.op === 'snapshot') v.rows = m.rows;
    if (m.op === 'delta') v.rows = applyDelta(v.rows, m, 1, 10);
  });
  return v;
}

const names = (rows) => rows.map((r) => `${r.member}=${r.score}`).join(' ');

test('keyspace notifications are on and the gateway says so', async (t) => {
  const { redis, gw } = await h.startStack(t);
  const flags = await redis.cli('CONFIG', 'GET', 'notify-keyspace-events');
  assert.match(flags.split('\n')[1], /K/);
  assert.match(flags.split('\n')[1], /z/);
  const health = await h.http(gw.base, 'GET', '/healthz');
  assert.equal(health.body.keyspace_events, true);
});

test('an out-of-band ZADD, ZINCRBY, ZREM and DEL reach a top-10 viewer', async (t) => {
  const { redis, gw } = await h.startStack(t);
  await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:a', op: 'incr', delta: 10 });
  const v = await topTen(t, gw);
  assert.equal(names(v.rows), 'user:a=10');

  await redis.cli('ZADD', ZKEY, String(500 * SCALE), 'user:cli');
  await h.waitFor(() => names(v.rows) === 'user:cli=500 user:a=10', 10000, 'the ZADD to show');

  await redis.cli('ZINCRBY', ZKEY, String(1000 * SCALE), 'user:a');
  await h.waitFor(() => names(v.rows) === 'user:a=1010 user:cli=500', 10000, 'the ZINCRBY to show');

  await redis.cli('ZREM', ZKEY, 'user:a');
  await h.waitFor(() => names(v.rows) === 'user:cli=500', 10000, 'the ZREM to show');

  await redis.cli('DEL', ZKEY);
  await h.waitFor(() => v.rows.length === 0, 10000, 'the DEL to empty the view');
});

test('a board renamed onto the key shows as a whole new window', async (t) => {
  const { redis, gw } = await h.startStack(t);
  const v = await topTen(t, gw);
  await redis.cli('ZADD', 'scratch', String(7 * SCALE), 'user:x', String(9 * SCALE), 'user:y');
  await redis.cli('RENAME', 'scratch', ZKEY);
  await h.waitFor(() => names(v.rows) === 'user:y=9 user:x=7', 10000, 'the RENAME to show');
});
