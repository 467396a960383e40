/* idem_memory.test.js - Redis memory per idempotency record (docs/security.md,
 * "Idempotency records"): for a direct and a queued board, with short and
 * with the longest req and member, N pipelined incrs with distinct reqs
 * through one WebSocket, then INFO memory used_memory before and after (the
 * queue drained) divided by N, and MEMORY USAGE of one record. Prints one
 * line per case; asserts nothing (a measurement, not part of the e2e run).
 *
 *   N=20000 CI=true RANKCAST_BIN=build/gateway/rankcast \
 *     bash tests/e2e/run.sh tests/bench/idem_memory.test.js
 *
 * BASE_CONF=FILE measures a gateway built from another tree with its own
 * shipped config (an older one refuses keys it does not know). */
'use strict';
const test = require('node:test');
const h = require('../e2e/harness');
const KEY = 'idem-measure-secret-0001112';
const N = Number(process.env.N || 20000);
async function used(redis) {
  const m = /used_memory:(\d+)/.exec(await redis.cli('INFO', 'memory'));
  return Number(m[1]);
}
async function run(c, board, member, reqOf) {
  for (let i = 0; i < N; i += 64) {
    const batch = [];
    for (let j = i; j < Math.min(N, i + 64); j++)
      batch.push(c.request({ op: 'incr', board, member, delta: 1, req: reqOf(j) }));
    const rs = await Promise.all(batch);
    for (const r of rs) if (r.op !== 'ack') throw new Error(JSON.stringify(r));
  }
}
test('Redis memory per idempotency record', { timeout: 600000 }, async (t) => {
  const config = h.configWith(t, {
    limits: { conn_write_rate: 1000000, conn_write_burst: 10000000 },
    extra: `[key m]\nsecret = ${KEY}\nscopes = read, write\nboards = *\n`,
  }, process.env.BASE_CONF || undefined);
  const { redis, gw } = await h.startStack(t, { config });
  const c = await h.connectWs(null, gw.wsUrl, { token: KEY });
  const pad = (s, n) => (s + 'x'.repeat(n)).slice(0, n);
  const cases = [
    ['demo', 'user:1', (j) => `r-${j}`, 'direct, short req and member'],
    ['burst', 'user:1', (j) => `q-${j}`, 'queued, short req and member'],
    ['demo', pad('m:', 128), (j) => pad(`R${j}-`, 64), 'direct, 64-char req, 128-char member'],
    ['burst', pad('m:', 128), (j) => pad(`Q${j}-`, 64), 'queued, 64-char req, 128-char member'],
  ];
  for (const [board, member, reqOf, what] of cases) {
    // warm the board (its keys exist before the baseline)
    await c.request({ op: 'incr', board, member, delta: 1 });
    await h.waitFor(async () => (await redis.cli('XLEN', `rc:{${board}|}:in`)) === '0', 60000);
    const before = await used(redis);
    const keys0 = Number(await redis.cli('DBSIZE'));
    await run(c, board, member, reqOf);
    await h.waitFor(async () => (await redis.cli('XLEN', `rc:{${board}|}:in`)) === '0', 120000, 'drain');
    const after = await used(redis);
    const keys1 = Number(await redis.cli('DBSIZE'));
    const sample = `rc:{${board}|}:req:${reqOf(5)}`;
    const qsample = `rc:{${board}|}:qreq:${reqOf(5)}`;
    console.log(`${what}: ${N} writes, +${keys1 - keys0} keys, used_memory +${after - before} B = ${((after - before) / N).toFixed(1)} B/write; MEMORY USAGE ${sample.slice(0, 40)}... = ${await redis.cli('MEMORY', 'USAGE', sample)}, qreq ${await redis.cli('MEMORY', 'USAGE', qsample)}`);
    await redis.cli('FLUSHALL');
  }
  await c.close();
});
