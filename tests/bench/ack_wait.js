#!/usr/bin/env node
/* ack_wait.js - writes with [redis] ack_replicas = 1 on a 3-primary +
 * 3-replica cluster (docs/cluster.md, "Acks with replicas"): the rate of
 * acked writes and their latency, first with every replica up, then with the
 * three replicas killed (every WAIT runs to ack_timeout).
 *
 *   RANKCAST_BIN=build/gateway/rankcast node tests/bench/ack_wait.js [--secs S] [--conns C] [--inflight F] [--ack-timeout 1s]
 *
 * C WebSocket writers, each with F incr writes in flight (1,000 members, a
 * req each), for S seconds per phase. Prints one JSON line per phase: acks/s,
 * errors (any answer but an ack), ack latency p50/p99/max in ms, the acks'
 * replicas counts, WAIT calls Redis counted and "redis down" lines the
 * gateway logged. Everything on 127.0.0.1 (real redis-server, real gateway). */
'use strict';

const path = require('node:path');
const h = require(path.join(__dirname, '..', 'e2e', 'harness'));

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
}
const secs = Number(arg('secs', 10));
const conns = Number(arg('conns', 4));
const inflight = Number(arg('inflight', 16));
const ackTimeout = arg('ack-timeout', '1s');

async function waits(cluster) {
  let sum = 0;
  for (const port of await cluster.primaries()) {
    const m = /cmdstat_wait:calls=(\d+)/.exec(await cluster.cli(port, 'INFO', 'commandstats'));
    sum += m ? Number(m[1]) : 0;
  }
  return sum;
}

async function phase(name, cluster, gw, ws) {
  const lat = [];
  let errors = 0;
  const replicas = {};
  let seq = 0;
  const w0 = await waits(cluster);
  const down0 = gw.stderr.filter((l) => /redis down/.test(l)).length;
  const t0 = Date.now();
  const end = t0 + secs * 1000;
  await Promise.all(ws.flatMap((conn, c) => Array.from({ length: inflight }, async () => {
    while (Date.now() < end) {
      const i = seq++;
      const s = process.hrtime.bigint();
      let a;
      try {
        a = await conn.request({ op: 'incr', board: 'demo', member: `m${i % 1000}`, delta: 1, req: `${name}-${c}-${i}` }, 30000);
      } catch (e) {
        a = { op: 'error', message: String(e) };
      }
      if (a.op !== 'ack') { errors++; continue; }
      lat.push(Number(process.hrtime.bigint() - s) / 1e6);
      replicas[a.replicas] = (replicas[a.replicas] || 0) + 1;
    }
  })));
  const ms = Date.now() - t0;
  lat.sort((x, y) => x - y);
  const q = (p) => (lat.length ? Math.round(lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] * 10) / 10 : null);
  console.log(JSON.stringify({
    phase: name, secs: ms / 1000, conns, inflight, ack_timeout: ackTimeout, acks: lat.length,
    acks_per_s: Math.round(lat.length / (ms / 1000)), errors, p50_ms: q(0.5), p99_ms: q(0.99), max_ms: q(1),
    replicas, wait_calls: (await waits(cluster)) - w0,
    redis_down: gw.stderr.filter((l) => /redis down/.test(l)).length - down0,
  }));
}

async function main() {
  const afters = [];
  const t = { after: (fn) => afters.push(fn) };
  try {
    const cluster = await h.startCluster(t);
    await cluster.waitOk(60000);
    const open = { conn_write_rate: 1000000, conn_write_burst: 10000000, key_write_rate: 1000000,
      key_write_burst: 10000000, max_pending: 100000 };
    const config = h.configWith(t, { redis: { ack_replicas: 1, ack_timeout: ackTimeout }, limits: open });
    const gw = await h.startGateway(t, { redis: cluster.seeds, config });
    const ws = [];
    for (let i = 0; i < conns; i++) ws.push(await h.connectWs(t, gw.wsUrl));
    await phase('replicas-up', cluster, gw, ws);
    for (const p of await cluster.primaries())
      for (const r of await cluster.replicaOf(p)) await cluster.kill(r, 'SIGKILL');
    await h.sleep(500);
    await phase('replicas-killed', cluster, gw, ws);
  } finally {
    for (const fn of afters) await fn(); // first registered first, as node:test does
  }
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
