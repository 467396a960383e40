#!/usr/bin/env node
/* queued_burst.js - case Q of the benchmark (tests/bench/run.sh): a burst of
 * writes to the queued board `burst` (write_mode = queued), as fast as the
 * writers can send them, against the same burst to the direct board `demo`.
 *
 *   node queued_burst.js --port P --key KEY [--writes N] [--conns C] [--inflight F]
 *
 * For each board: C WebSocket writers, each with up to F writes in flight,
 * send N incr writes (1,000 members, a req each) as fast as acks come back.
 * Measured from the first write sent: the accepted rate (acks per second
 * until the last ack) and, for the queued board, the applied rate (writes
 * per second until the board's seq shows every write applied, polled every
 * 20 ms over REST) and the lag while the queue drains (/metrics every 50 ms:
 * rankcast_queue_length and rankcast_queue_oldest_age_seconds, their
 * maxima). Prints one JSON line. Everything on 127.0.0.1. */
'use strict';

const path = require('node:path');
const WebSocket = require(path.join(__dirname, '..', 'e2e', 'node_modules', 'ws'));

const { arg } = require('./benchlib');
const port = Number(arg('port'));
const key = arg('key');
const writes = Number(arg('writes', 20000));
const conns = Number(arg('conns', 4));
const inflight = Number(arg('inflight', 256));
const base = `http://127.0.0.1:${port}`;
const now = () => Number(process.hrtime.bigint() / 1000n) / 1000; // ms

function connect() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(key)}`, 'rankcast.v1',
      { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function seqOf(board) {
  const res = await fetch(`${base}/api/v1/boards/${board}?top=1`);
  const body = await res.json();
  return body.seq || 0;
}

async function queueMetrics(board) {
  // /metrics needs the admin scope (PROTOCOL.md v1.2, "Metrics and health")
  const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).text();
  const len = new RegExp(`^rankcast_queue_length\\{board="${board}"\\} ([0-9.]+)$`, 'm').exec(text);
  const age = new RegExp(`^rankcast_queue_oldest_age_seconds\\{board="${board}"\\} ([0-9.]+)$`, 'm').exec(text);
  return { length: len ? Number(len[1]) : null, age_s: age ? Number(age[1]) : null };
}

// The burst on one board: resolves when every write is answered.
async function burst(board, tag) {
  const sockets = [];
  for (let i = 0; i < conns; i++) sockets.push(await connect());
  let next = 0, answered = 0, acked = 0, queued = 0, errors = 0, limited = 0, lastAck = 0;
  const t0 = now();
  await new Promise((resolve) => {
    for (const ws of sockets) {
      let open = 0;
      const pump = () => {
        while (open < inflight && next < writes) {
          const i = next++;
          open++;
          ws.send(JSON.stringify({ op: 'incr', id: i, board, member: `m${i % 1000}`, delta: 1, req: `${tag}-${i}` }));
        }
      };
      ws.on('message', (data) => {
        const m = JSON.parse(data.toString());
        if (m.id === undefined) return;
        open--;
        answered++;
        if (m.op === 'ack') {
          acked++;
          if (m.queued) queued++;
          lastAck = now();
        } else if (m.code === 'rate_limited') limited++;
        else errors++;
        if (answered === writes) resolve();
        else pump();
      });
      pump();
    }
  });
  for (const ws of sockets) ws.close();
  const seconds = (lastAck - t0) / 1000;
  return { t0, writes: { sent: writes, acked, queued, errors, rate_limited: limited, seconds,
    acked_per_s: seconds > 0 ? acked / seconds : null } };
}

async function main() {
  const out = { label: 'Q', conns, inflight };
  // direct: the same burst through the write script before each ack
  const d0 = await seqOf('demo');
  const direct = await burst('demo', 'qd');
  out.direct = Object.assign(direct.writes, { applied: (await seqOf('demo')) - d0 });

  const s0 = await seqOf('burst');
  let maxLen = 0, maxAge = 0, samples = 0, polling = true;
  const poller = (async () => {
    while (polling) {
      const m = await queueMetrics('burst');
      if (m.length !== null) maxLen = Math.max(maxLen, m.length);
      if (m.age_s !== null) maxAge = Math.max(maxAge, m.age_s);
      samples++;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const q = await burst('burst', 'qq');
  let applied = 0, tApplied = null;
  const deadline = now() + 120000;
  while (now() < deadline) {
    applied = (await seqOf('burst')) - s0;
    if (applied >= q.writes.acked) { tApplied = now(); break; }
    await new Promise((r) => setTimeout(r, 20));
  }
  polling = false;
  await poller;
  const appliedSeconds = tApplied ? (tApplied - q.t0) / 1000 : null;
  out.queued = Object.assign(q.writes, {
    applied,
    applied_seconds: appliedSeconds,
    applied_per_s: appliedSeconds ? applied / appliedSeconds : null,
    drain_after_last_ack_ms: tApplied ? tApplied - (q.t0 + q.writes.seconds * 1000) : null,
    max_queue_length: maxLen,
    max_oldest_age_ms: maxAge * 1000,
    metric_samples: samples,
  });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`queued_burst: ${e.stack || e}\n`);
  process.exit(2);
});
