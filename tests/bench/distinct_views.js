#!/usr/bin/env node
/* distinct_views.js - case V of the benchmark (tests/bench/run.sh, issue 23):
 * what V distinct views of one board cost the gateway, for each V given.
 *
 *   node distinct_views.js --port P --key KEY --gateway-pid PID --hz HZ
 *        [--views 128,512,2048,8192] [--members 10000] [--rounds 3]
 *        [--write-rate 200] [--phase-s 3] [--subs-per-conn 64]
 *
 * Per round and size: a fresh board match:V<tag>-<V> filled with `members`
 * members (set through the gateway), then V distinct views opened as fast as
 * the server answers, 64 per connection, the connections from addresses
 * spread over 127.0.0.0/8 (127.x.y.z), a third each: top N (N spread over
 * 1..1,000 in the same way at every size, so the mean snapshot is alike),
 * pages of 10-50 rows at distinct offsets within the first 10,000 ranks
 * (beyond the top-N once 1,000 are used), and around views of distinct
 * members. Measured: the wall time from the first subscribe to the last
 * snapshot, the gateway's CPU over that time (/proc/PID/stat), the views it
 * looked at (rankcast_views_visited_total), a reference client's ping round
 * trips during the subscribes (p50, p99, max, every 10 ms from its own
 * address, in a worker thread of its own: this process's loop, busy parsing
 * thousands of snapshots, must not delay what it measures), then the gateway's CPU idle for `phase-s` s and while
 * `write-rate` writes/s go to the board for `phase-s` s, with the views it
 * looked at per write (and Redis's CPU then, with --redis-pid: around views
 * and deep pages read again after every change). Then every connection closes. Prints one JSON line
 * with, per size, each round and the median of the rounds. */
'use strict';

const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const WebSocket = require(path.join(__dirname, '..', 'e2e', 'node_modules', 'ws'));

const { arg, cpuTicks } = require('./benchlib');

/* The reference client (a worker thread): one connection from its own
 * address, a ping every 10 ms until told to stop; then it posts the round
 * trips (ms) and exits. */
if (!isMainThread) {
  const { url, localAddress } = workerData;
  const clock = () => Number(process.hrtime.bigint() / 1000n) / 1000;
  const ws = new WebSocket(url, 'rankcast.v1', { perMessageDeflate: false, localAddress });
  const rtts = [], sent = new Map();
  let pid = 0, timer = null;
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (sent.has(m.id)) { rtts.push(clock() - sent.get(m.id)); sent.delete(m.id); }
  });
  ws.once('open', () => {
    parentPort.postMessage({ open: true });
    timer = setInterval(() => {
      const id = `p${pid++}`;
      sent.set(id, clock());
      ws.send(JSON.stringify({ op: 'ping', id }));
    }, 10);
  });
  ws.once('error', (e) => { throw e; });
  parentPort.on('message', () => {
    clearInterval(timer);
    setTimeout(() => { ws.close(); parentPort.postMessage({ rtts }); }, 200); // (the last pings' answers)
  });
  return;
}

const { requestAll } = require(path.join(__dirname, '..', 'e2e', 'harness'));
const port = Number(arg('port'));
const key = arg('key');
const gwPid = Number(arg('gateway-pid'));
const hz = Number(arg('hz', 100));
const sizes = String(arg('views', '128,512,2048,8192')).split(',').map(Number);
const members = Number(arg('members', 10000));
const rounds = Number(arg('rounds', 3));
const writeRate = Number(arg('write-rate', 200));
const phaseS = Number(arg('phase-s', 3));
const perConn = Number(arg('subs-per-conn', 64));
const redisPid = Number(arg('redis-pid', 0)); // optional: Redis's CPU at the writes too
const base = `http://127.0.0.1:${port}`;
const now = () => Number(process.hrtime.bigint() / 1000n) / 1000; // ms
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function cpuMs(pid = gwPid) {
  return pid ? (cpuTicks(pid) * 1000) / hz : 0;
}

async function visited() {
  const r = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
  const text = await r.text();
  const out = {};
  for (const on of ['subscribe', 'unsubscribe', 'tick']) {
    const m = new RegExp(`^rankcast_views_visited_total\\{on="${on}"\\} (\\d+)$`, 'm').exec(text);
    out[on] = m ? Number(m[1]) : null;
  }
  return out;
}

let addr = 0;
function nextAddress() { // 127.1.0.1 .. spread over 127.0.0.0/8, never 127.0.0.1
  addr++;
  return `127.${1 + ((addr >> 16) & 0xff) % 254}.${(addr >> 8) & 0xff}.${1 + (addr & 0xff) % 254}`;
}

function connect() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(key)}`, 'rankcast.v1',
      { perMessageDeflate: false, localAddress: nextAddress() });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/* Sends reqs (each given an id) in one TCP write and resolves the replies
 * once all came. */
const exchange = (ws, reqs) =>
  requestAll(ws, reqs.map((r, i) => Object.assign({ id: `x${i}` }, r)), 120000, { cork: true });

async function fill(board) {
  const ws = await connect();
  for (let i = 0; i < members; i += 500) {
    const reqs = [];
    for (let k = i; k < i + 500 && k < members; k++)
      reqs.push({ op: 'set', board, member: `m${k}`, value: members * 10 - 10 * k });
    const replies = await exchange(ws, reqs);
    const bad = replies.find((m) => m.op !== 'ack');
    if (bad) throw new Error(`fill: ${JSON.stringify(bad)}`);
  }
  ws.close();
}

function viewOf(i) { // the i-th distinct view (see the banner)
  const j = Math.floor(i / 3);
  // N spread over 1..1,000 at every size (379 is prime to 1,000: distinct for j < 1,000)
  if (i % 3 === 0) return j < 1000 ? { top: 1 + ((j * 379) % 1000) } : { offset: 5000 + j, limit: 10 + (j % 41) };
  if (i % 3 === 1) return { offset: j + 1, limit: 10 + (j % 41) };
  return { around: `m${j % members}`, radius: 5 };
}

const pct = (a, p) => {
  if (!a.length) return null;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const median = (a) => pct(a.filter((x) => x !== null), 0.5);

async function one(V, round) {
  const board = `match:V${process.pid}r${round}-${V}`;
  await fill(board);
  const conns = [];
  for (let i = 0; i < Math.ceil(V / perConn); i++) conns.push(await connect());
  // the reference client: a ping every 10 ms, from its own address and thread
  const ref = new Worker(__filename, {
    workerData: { url: `ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(key)}`, localAddress: nextAddress() },
  });
  const refMsg = () => new Promise((resolve, reject) => { ref.once('message', resolve); ref.once('error', reject); });
  await refMsg(); // open
  const v0 = await visited();
  const c0 = cpuMs();
  const t0 = now();
  const replies = await Promise.all(conns.map((ws, k) => {
    const reqs = [];
    for (let i = k * perConn; i < Math.min(V, (k + 1) * perConn); i++)
      reqs.push({ op: 'subscribe', board, view: viewOf(i) });
    return exchange(ws, reqs);
  }));
  const subscribeMs = now() - t0;
  const subscribeCpuMs = cpuMs() - c0;
  const refDone = refMsg();
  ref.postMessage('stop');
  const { rtts } = await refDone;
  await ref.terminate();
  const v1 = await visited();
  const all = replies.flat();
  const snapshots = all.filter((m) => m.op === 'snapshot').length;
  const subs = new Set(all.map((m) => m.sub)).size;
  // idle, then writes at writeRate
  await sleep(2500); // the viewer-count pass tells the new count once
  let c = cpuMs();
  await sleep(phaseS * 1000);
  const idleCpuPct = ((cpuMs() - c) / (phaseS * 1000)) * 100;
  const w = await connect();
  let writes = 0;
  const v2 = await visited();
  c = cpuMs();
  const r0 = cpuMs(redisPid);
  const tw = now();
  while (now() - tw < phaseS * 1000) {
    const target = Math.floor(((now() - tw) / 1000) * writeRate);
    for (; writes < target; writes++)
      w.send(JSON.stringify({ op: 'incr', board, member: `m${Math.floor(Math.random() * members)}`, delta: 3 }));
    await sleep(5);
  }
  const writeCpuPct = ((cpuMs() - c) / (now() - tw)) * 100;
  const redisWriteCpuPct = redisPid ? ((cpuMs(redisPid) - r0) / (now() - tw)) * 100 : null;
  await sleep(200);
  const v3 = await visited();
  for (const ws of [...conns, w]) ws.close();
  await sleep(500);
  return {
    views: V, round, snapshots, distinct_subs: subs,
    subscribe_ms: subscribeMs, subscribe_cpu_ms: subscribeCpuMs,
    visited_subscribe: v1.subscribe !== null ? v1.subscribe - v0.subscribe : null,
    visited_tick_during_subscribe: v1.tick !== null ? v1.tick - v0.tick : null,
    ref_ping_p50_ms: pct(rtts, 0.5), ref_ping_p99_ms: pct(rtts, 0.99), ref_ping_max_ms: pct(rtts, 1), ref_pings: rtts.length,
    idle_cpu_pct: idleCpuPct, writes, write_cpu_pct: writeCpuPct, redis_write_cpu_pct: redisWriteCpuPct,
    visited_tick_per_write: v3.tick !== null && writes ? (v3.tick - v2.tick) / writes : null,
  };
}

async function main() {
  const out = { label: 'V', members, rounds, write_rate: writeRate, phase_s: phaseS, sizes: [] };
  for (const V of sizes) {
    const runs = [];
    for (let r = 0; r < rounds; r++) {
      const res = await one(V, r);
      process.stderr.write(`distinct_views: ${JSON.stringify(res)}\n`);
      runs.push(res);
    }
    const med = {};
    for (const k of Object.keys(runs[0])) if (typeof runs[0][k] === 'number') med[k] = median(runs.map((x) => x[k]));
    out.sizes.push({ views: V, median: med, runs });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

if (isMainThread) main().catch((e) => {
  process.stderr.write(`distinct_views: ${e.stack || e}\n`);
  process.exit(2);
});
