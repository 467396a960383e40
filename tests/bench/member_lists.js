#!/usr/bin/env node
/* member_lists.js - what member-list views (PROTOCOL v1.2, issue 26) cost the
 * gateway and Redis, for each count of list viewers given.
 *
 *   node member_lists.js --port P --key KEY --gateway-pid PID --hz HZ
 *        [--viewers 100,5000] [--members 10000] [--list 50]
 *        [--write-rate 2000] [--phase-s 5] [--subs-per-conn 50] [--template match]
 *
 * Per size N: a fresh board T:M<pid>-<N> (T: --template, a declared
 * template such as a sharded one) filled with `members` members,
 * then N viewers, each with its own list of `list` distinct members drawn at
 * random (a distinct view each), from addresses spread over 127.0.0.0/8
 * (max_conns_per_ip applies), `subs-per-conn` lists per connection; one
 * top-10 viewer and one reference list viewer on their own connections.
 * Then `write-rate` incr writes/s to random members for `phase-s` s.
 * Measured over the writes: Redis reads made for list views per second
 * (rankcast_view_reads_total{view="members"}), list deltas delivered and
 * top-10 deltas delivered, the gateway's CPU (/proc/PID/stat) per delivered
 * list delta, and write-to-screen: from sending a write of a member on the
 * reference list to the reference viewer's delta showing its new score
 * (p50, p99). Prints one JSON line. */
'use strict';

const path = require('node:path');
const WebSocket = require(path.join(__dirname, '..', 'e2e', 'node_modules', 'ws'));

const { arg, cpuTicks } = require('./benchlib');
const { requestAll } = require(path.join(__dirname, '..', 'e2e', 'harness'));
const port = Number(arg('port'));
const key = arg('key');
const gwPid = Number(arg('gateway-pid'));
const hz = Number(arg('hz', 100));
const sizes = String(arg('viewers', '100,5000')).split(',').map(Number);
const members = Number(arg('members', 10000));
const listLen = Number(arg('list', 50));
const writeRate = Number(arg('write-rate', 2000));
const phaseS = Number(arg('phase-s', 5));
const perConn = Number(arg('subs-per-conn', 50));
const template = String(arg('template', 'match'));
const base = `http://127.0.0.1:${port}`;
const now = () => Number(process.hrtime.bigint() / 1000n) / 1000; // ms
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = () => (gwPid ? (cpuTicks(gwPid) * 1000) / hz : 0);

async function metric(re) {
  const r = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
  const m = re.exec(await r.text());
  return m ? Number(m[1]) : 0;
}
const listReads = () => metric(/^rankcast_view_reads_total\{view="members"\} (\d+)$/m);

let addr = 0;
function nextAddress() { // spread over 127.0.0.0/8, never 127.0.0.1
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

const exchange = (ws, reqs) =>
  requestAll(ws, reqs.map((r, i) => Object.assign({ id: `x${i}` }, r)), 120000, { cork: true });

async function fill(board) {
  const ws = await connect();
  for (let i = 0; i < members; i += 500) {
    const reqs = [];
    for (let k = i; k < i + 500 && k < members; k++) reqs.push({ op: 'set', board, member: `m${k}`, value: 1000 + (k % 997) });
    const bad = (await exchange(ws, reqs)).find((m) => m.op !== 'ack');
    if (bad) throw new Error(`fill: ${JSON.stringify(bad)}`);
  }
  ws.close();
}

function randomList() {
  const s = new Set();
  while (s.size < listLen) s.add(`m${Math.floor(Math.random() * members)}`);
  return [...s];
}

const pct = (a, p) => {
  if (!a.length) return null;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

async function one(N) {
  const board = `${template}:M${process.pid}-${N}`;
  await fill(board);
  const conns = [];
  for (let i = 0; i < Math.ceil(N / perConn); i++) conns.push(await connect());
  let listDeltas = 0, topDeltas = 0, counting = false;
  const replies = await Promise.all(conns.map((ws, k) => {
    const reqs = [];
    for (let i = k * perConn; i < Math.min(N, (k + 1) * perConn); i++) reqs.push({ op: 'subscribe', board, view: { members: randomList() } });
    return exchange(ws, reqs);
  }));
  const bad = replies.flat().find((m) => m.op !== 'snapshot');
  if (bad) throw new Error(`subscribe: ${JSON.stringify(bad)}`);
  for (const ws of conns) ws.on('message', (d) => { if (counting && d.toString().startsWith('{"op":"delta"')) listDeltas++; });
  const top = await connect();
  const topSnap = (await exchange(top, [{ op: 'subscribe', board, view: { top: 10 } }]))[0];
  top.on('message', (d) => { if (counting && JSON.parse(d.toString()).op === 'delta') topDeltas++; });
  // the reference list: write-to-screen of its members' writes
  const ref = await connect();
  const refList = randomList();
  const refSnap = (await exchange(ref, [{ op: 'subscribe', board, view: { members: refList } }]))[0];
  const waiting = new Map(); // member -> [score, sent ms]
  const lat = [];
  ref.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.sub !== refSnap.sub || !m.rows) return;
    for (const r of m.rows) {
      const w = waiting.get(r.member);
      if (w && r.score >= w[0]) { lat.push(now() - w[1]); waiting.delete(r.member); }
    }
  });
  const scores = new Map();
  await sleep(2500); // the viewer-count pass
  const w = await connect();
  w.on('message', () => {});
  counting = true;
  const reads0 = await listReads();
  const c0 = cpuMs();
  const t0 = now();
  let writes = 0;
  while (now() - t0 < phaseS * 1000) {
    const target = Math.floor(((now() - t0) / 1000) * writeRate);
    for (; writes < target; writes++) {
      const onRef = writes % 20 === 0;
      const m = onRef ? refList[writes % listLen] : `m${Math.floor(Math.random() * members)}`;
      if (onRef) {
        const s = (scores.get(m) || 0) + 1;
        scores.set(m, s);
        if (!waiting.has(m)) waiting.set(m, [0, now()]); // any later score shows it
      }
      w.send(JSON.stringify({ op: 'incr', board, member: m, delta: 1 + (writes % 7) }));
    }
    await sleep(2);
  }
  const secs = (now() - t0) / 1000;
  const cpu = cpuMs() - c0;
  const reads = (await listReads()) - reads0;
  await sleep(300);
  counting = false;
  for (const ws of [...conns, top, ref, w]) ws.close();
  await sleep(500);
  void topSnap;
  return {
    viewers: N, writes, seconds: secs,
    list_reads_per_s: reads / secs,
    list_deltas: listDeltas, top10_deltas: topDeltas,
    gateway_cpu_ms: cpu, gateway_cpu_us_per_list_delta: listDeltas ? (cpu * 1000) / listDeltas : null,
    write_to_screen_p50_ms: pct(lat, 0.5), write_to_screen_p99_ms: pct(lat, 0.99), write_to_screen_n: lat.length,
  };
}

async function main() {
  const out = { label: 'M', members, list: listLen, write_rate: writeRate, phase_s: phaseS, sizes: [] };
  for (const N of sizes) {
    const res = await one(N);
    process.stderr.write(`member_lists: ${JSON.stringify(res)}\n`);
    out.sizes.push(res);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`member_lists: ${e.stack || e}\n`);
  process.exit(1);
});
