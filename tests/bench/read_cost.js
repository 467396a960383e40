#!/usr/bin/env node
/* read_cost.js - the read half of case S of the benchmark (tests/bench/run.sh):
 * what one REST read of a sharded board costs against an unsharded one.
 *
 *   node read_cost.js --port P --boards A,B --reads N --members M
 *                     [--redis-pids PID,PID,...] [--gateway-pid PID] [--hz H] [--label L]
 *
 * For each board and each query (top=10; offset=990&limit=10, page 100 of
 * 10-row pages; offset=0&limit=100): 5 warm-up reads, then N reads one after
 * another (the next sent when the last answer is read), each a fresh HTTP
 * connection (the gateway closes every HTTP answer's connection), timed from
 * the request to the last byte of the answer. Every answer must be 200 with
 * the expected rows (total = M, ranks from offset + 1): a wrong one counts
 * as an error. CPU seconds of the Redis processes (their sum: one server or
 * every cluster primary) and of the gateway come from /proc/PID/stat (utime +
 * stime, in 1/H s) before and after each series. The boards must already
 * hold M members. Prints one JSON line. Everything on 127.0.0.1. */
'use strict';

const http = require('node:http');

const { arg, cpuTicks } = require('./benchlib');
const port = Number(arg('port'));
const boards = String(arg('boards', 'global,demo')).split(',');
const reads = Number(arg('reads', 1000));
const members = Number(arg('members', 10000));
const redisPids = String(arg('redis-pids', '')).split(',').filter(Boolean).map(Number);
const gwPid = Number(arg('gateway-pid', 0));
const hz = Number(arg('hz', 100));
const label = arg('label', 'S-read');
const WARMUP = 5;

const QUERIES = [
  { name: 'top 10', qs: 'top=10', offset: 0, rows: 10 },
  { name: 'page 100 of 10 rows', qs: 'offset=990&limit=10', offset: 990, rows: 10 },
  { name: '100 rows', qs: 'offset=0&limit=100', offset: 0, rows: 100 },
];

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

const sumTicks = (pids) => pids.reduce((s, p) => s + cpuTicks(p), 0);

// One GET on a fresh connection: resolves { status, body, ms }.
function get(pathname) {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString(), ms: nowMs() - t0 }));
      res.on('error', reject);
    });
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

// Why an answer is not the expected window, or null.
function wrong(r, q) {
  if (r.status !== 200) return `HTTP ${r.status}: ${r.body.slice(0, 200)}`;
  let j;
  try { j = JSON.parse(r.body); } catch (e) { return 'not JSON'; }
  if (j.op !== 'snapshot' || !Array.isArray(j.rows)) return `not a snapshot: ${r.body.slice(0, 200)}`;
  if (j.total !== members) return `total ${j.total}, expected ${members}`;
  if (j.rows.length !== q.rows) return `${j.rows.length} rows, expected ${q.rows}`;
  for (let i = 0; i < j.rows.length; i++) {
    if (j.rows[i].rank !== q.offset + i + 1) return `row ${i} has rank ${j.rows[i].rank}, expected ${q.offset + i + 1}`;
  }
  return null;
}

const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : null);

async function series(board, q) {
  const pathname = `/api/v1/boards/${encodeURIComponent(board)}?${q.qs}`;
  let errors = 0, firstError = null;
  const check = (r) => {
    const why = wrong(r, q);
    if (why) { errors++; if (!firstError) firstError = why; }
  };
  for (let i = 0; i < WARMUP; i++) check(await get(pathname));
  const lat = [];
  const r0 = sumTicks(redisPids), g0 = gwPid ? cpuTicks(gwPid) : 0, t0 = nowMs();
  for (let i = 0; i < reads; i++) {
    const r = await get(pathname);
    lat.push(r.ms);
    check(r);
  }
  const wall = (nowMs() - t0) / 1000;
  const redisS = (sumTicks(redisPids) - r0) / hz, gwS = gwPid ? (cpuTicks(gwPid) - g0) / hz : null;
  lat.sort((a, b) => a - b);
  return {
    board, query: q.name, qs: q.qs, reads, seconds: wall, reads_per_s: reads / wall,
    latency_ms: { p50: pct(lat, 0.5), p90: pct(lat, 0.9), p99: pct(lat, 0.99), max: lat[lat.length - 1],
      mean: lat.reduce((s, x) => s + x, 0) / lat.length },
    redis_cpu_s: redisPids.length ? redisS : null,
    redis_cpu_s_per_1000: redisPids.length ? (redisS * 1000) / reads : null,
    gateway_cpu_s_per_1000: gwS === null ? null : (gwS * 1000) / reads,
    errors, first_error: firstError,
  };
}

async function main() {
  const out = { label, reads, members, warmup: WARMUP, hz, redis_processes: redisPids.length, results: [] };
  for (const q of QUERIES) for (const b of boards) out.results.push(await series(b, q));
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`read_cost: ${e.stack || e}\n`);
  process.exit(2);
});
