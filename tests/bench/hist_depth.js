#!/usr/bin/env node
/* hist_depth.js - bench case H (issue 27): what a `get` at a moment costs at
 * any depth of a long period, and what `history = full` costs the writes.
 *
 *   node hist_depth.js --port P --key KEY --redis-port RP --redis-pid RPID
 *        --hz HZ [--members 100000] [--changes 1000000] [--reps 5]
 *        [--conns 4] [--batch 500] [--full histfull] [--capped histcap]
 *        [--read-timeout-s 120] [--ckpt-every N|auto (0: checkpoints off)]
 *
 * Build: the same writes go to board `full` (history = full) and to board
 * `capped` (the same board with the default capped log), one after the
 * other, through the gateway over WebSocket, `conns` connections with
 * `batch` writes in flight each (corked): first a `set` of every member
 * m0..m<members-1> (the first `members` changes), then random `incr`s
 * until the board has seen `changes` changes. Per board: writes/s acked,
 * the Redis process's CPU (/proc/RPID/stat) and the write script's own
 * time (INFO commandstats, evalsha usec) per write, and the change log's
 * memory (MEMORY USAGE ... SAMPLES 0).
 *
 * Reads on `full`: 10 moments spread over the period after the fill
 * (seq members .. changes, evenly; the last is the present), each with
 * three views: top 10, a page at rank members/2 (10 rows), and an around
 * view (radius 5) of a member in the middle of the fill. Each read is
 * sent alone (one in flight), `reps` times; a read slower than 2 s is done
 * once (its depth is the point, not its spread). Per moment and view:
 * latency p50 / p99 (of the reps), Redis CPU per read (the process's CPU
 * over the reps, and commandstats evalsha usec), and the answer's at_seq
 * (checked) or the error. The moments run from the present back; after
 * an error reply (a deep read holds Redis past the gateway's health PING, so
 * the gateway calls Redis down and answers `unavailable`) the next read
 * waits until a present read is answered again. Prints one JSON line.
 *
 * Checkpoints (docs/history.md, "Checkpoints"): the gateway's job copies
 * histfull's set every history_checkpoint_every changes while the writes go
 * on, so the full board's write figures include the copies. After the build
 * the tool waits for the job to settle (no copy under way), then reports the
 * checkpoints (how many, their memory by MEMORY USAGE) and, per read, the
 * changes it undoes: from the nearest checkpoint at or after its seq, else
 * from the present (a read redoes from the checkpoint before it when that
 * is nearer: "changes undone" is the nearer distance). With checkpoints
 * every N changes the 9 past moments are each moved N / 2 changes back,
 * halfway between two: the most a read undoes or redoes. */
'use strict';

const path = require('node:path');
const { execFileSync } = require('node:child_process');
const WebSocket = require(path.join(__dirname, '..', 'e2e', 'node_modules', 'ws'));

const { arg, cpuTicks } = require('./benchlib');
const { requestAll } = require(path.join(__dirname, '..', 'e2e', 'harness'));
const port = Number(arg('port'));
const key = arg('key');
const redisPort = Number(arg('redis-port'));
const redisPid = Number(arg('redis-pid'));
const hz = Number(arg('hz', 100));
const members = Number(arg('members', 100000));
const changes = Number(arg('changes', 1000000));
const reps = Number(arg('reps', 5));
const nconns = Number(arg('conns', 4));
const batch = Number(arg('batch', 500));
const fullBoard = arg('full', 'histfull');
const cappedBoard = arg('capped', 'histcap');
const readTimeoutMs = Number(arg('read-timeout-s', 120)) * 1000;
const now = () => Number(process.hrtime.bigint() / 1000n) / 1000; // ms
const redisCpuMs = () => (cpuTicks(redisPid) * 1000) / hz;

function rcli(...a) {
  return execFileSync('redis-cli', ['-p', String(redisPort), ...a], { encoding: 'utf8', maxBuffer: 1 << 24 }).trim();
}
// the Redis-side time of every EVALSHA so far (the scripts' own time), in µs
function evalshaUsec() {
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(rcli('info', 'commandstats'));
  return m ? { calls: Number(m[1]), usec: Number(m[2]) } : { calls: 0, usec: 0 };
}

function connect() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(key)}`, 'rankcast.v1',
      { perMessageDeflate: false, maxPayload: 1 << 30 });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

let ids = 0;
const exchange = (ws, reqs, ms) =>
  requestAll(ws, reqs.map((r) => Object.assign({ id: `h${ids++}` }, r)), ms, { cork: true });

// The i-th change of the build (0-based): the same sequence on both boards.
function change(board, i, rnd) {
  if (i < members) return { op: 'set', board, member: `m${i}`, value: 1000 + (i % 997) };
  return { op: 'incr', board, member: `m${Math.floor(rnd() * members)}`, delta: 1 + (i % 7) };
}
function rng(seed) { // mulberry32: the same incrs on both boards
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function build(board, settle = null) {
  const conns = [];
  for (let i = 0; i < nconns; i++) conns.push(await connect());
  const rnd = rng(27);
  let next = 0;
  let notAcked = 0;
  const c0 = redisCpuMs(), e0 = evalshaUsec(), t0 = now();
  // Writes are cut into batches in order; each connection takes the next
  // batch when its last one is acked, so changes land nearly in order (the
  // seq order is whatever Redis runs them in: the reads check at_seq only).
  await Promise.all(conns.map(async (ws) => {
    while (next < changes) {
      const reqs = [];
      for (; reqs.length < batch && next < changes; next++) reqs.push(change(board, next, rnd));
      const replies = await exchange(ws, reqs, 300000);
      notAcked += replies.filter((m) => m.op !== 'ack').length;
      if (notAcked && notAcked === replies.length) throw new Error(`build ${board}: ${JSON.stringify(replies[0])}`);
    }
  }));
  const ms = now() - t0, cpu = redisCpuMs() - c0, e1 = evalshaUsec();
  for (const ws of conns) ws.close();
  // the checkpoint job's catch-up after the last write counts too
  let settled = null;
  if (settle) {
    const s0 = now();
    await settle();
    settled = { seconds: (now() - s0) / 1000, redis_cpu_us_per_write: ((redisCpuMs() - c0) * 1000) / changes };
  }
  const logBytes = Number(rcli('memory', 'usage', `rc:{${board}|}:log`, 'samples', '0')) || 0;
  const logLen = Number(rcli('llen', `rc:{${board}|}:log`)) || 0;
  return {
    board, writes: changes, not_acked: notAcked, seconds: ms / 1000, writes_per_s: (changes * 1000) / ms,
    redis_cpu_us_per_write: (cpu * 1000) / changes,
    script_us_per_write: (e1.usec - e0.usec) / Math.max(1, e1.calls - e0.calls),
    log_entries: logLen, log_bytes: logBytes, log_bytes_per_change: logLen ? logBytes / logLen : null,
    with_catchup: settled,
  };
}

const pct = (a, p) => {
  if (!a.length) return null;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

// Waits (up to 120 s) until a present read of the board is answered again:
// the gateway has Redis back after calling it down.
async function redisBack(ws) {
  const t0 = now();
  while (now() - t0 < 120000) {
    try {
      const [m] = await exchange(ws, [{ op: 'get', board: fullBoard, view: { top: 1 } }], 10000);
      if (m.op === 'snapshot') return;
    } catch (e) { /* not yet */ }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the gateway did not get Redis back within 120 s');
}

// histfull's checkpoints: seqs ascending, and their memory
function checkpoints(board) {
  const seqs = rcli('zrange', `rc:{${board}|}:ck`, '0', '-1').split('\n').filter((x) => x).map((m) => Number(m.split(':')[0]));
  let bytes = 0;
  for (const c of seqs) bytes += Number(rcli('memory', 'usage', `rc:{${board}|}:ck:${c}`, 'samples', '0')) || 0;
  return { count: seqs.length, bytes, seqs };
}
// no copy under way, and none due (the job has caught up with the writes);
// every "auto" (an interval the gateway sizes by the board, core/rc_conf.c
// rc_conf_checkpoint_every_at): no copy under way and the newest checkpoint
// the same for 3 s
async function ckptSettled(board, present, every) {
  const t0 = now();
  const newest = () => Number((rcli('zrange', `rc:{${board}|}:ck`, '-1', '-1').split(':')[0]) || 0);
  let last = -1, since = now();
  const busy = () => {
    if (rcli('exists', `rc:{${board}|}:ckb`) === '1') return true;
    if (every !== 'auto') return present - newest() >= every;
    const n = newest();
    if (n !== last) { last = n; since = now(); }
    return now() - since < 3000;
  };
  while (now() - t0 < 300000 && busy()) {
    await new Promise((r) => setTimeout(r, 500));
  }
}

// the interval the checkpoints were made at: their most common gap
function gapOf(seqs) {
  const count = new Map();
  for (let i = 1; i < seqs.length; i++) count.set(seqs[i] - seqs[i - 1], (count.get(seqs[i] - seqs[i - 1]) || 0) + 1);
  let best = 0, n = 0;
  for (const [g, k] of count) if (k > n) { best = g; n = k; }
  return best;
}

// `history` of the middle member over the whole period (1,000 points, in
// segments from the checkpoints: docs/history.md): time and Redis CPU
async function historyRead(present) {
  const ws = await connect();
  const first = JSON.parse(rcli('lindex', `rc:{${fullBoard}|}:log`, '0'));
  const lastAt = JSON.parse(rcli('lindex', `rc:{${fullBoard}|}:log`, '-1')).at;
  const from = first.at, step = Math.max(1, Math.ceil((lastAt - from) / 999));
  const c0 = redisCpuMs(), e0 = evalshaUsec(), t0 = now();
  const [m] = await exchange(ws, [{ op: 'history', board: fullBoard, member: `m${Math.floor(members / 2)}`, from,
    to: from + 999 * step, step }], readTimeoutMs * 10);
  const res = { ms: now() - t0, redis_cpu_ms: redisCpuMs() - c0, script_ms: (evalshaUsec().usec - e0.usec) / 1000,
    calls: evalshaUsec().calls - e0.calls, points: (m.points || []).length, first_seq: m.points ? m.points[0].seq : null,
    last_seq: m.points ? m.points[m.points.length - 1].seq : null, present,
    error: m.op === 'history' ? null : `${m.op}: ${m.code || ''} ${m.message || ''}` };
  ws.close();
  return res;
}

async function reads(present, cks = [], every = 0) {
  const ws = await connect();
  const out = [];
  const middle = `m${Math.floor(members / 2)}`;
  const pageAt = Math.max(0, Math.floor(members / 2) - 1); // rank members/2 is offset members/2 - 1
  const views = [['top 10', { top: 10 }], [`page at rank ${Math.floor(members / 2)}`, { offset: pageAt, limit: 10 }],
    ['around, radius 5', { around: middle, radius: 5 }]];
  // from the present back: a read deep enough to hold Redis past the
  // gateway's health PING (3 s) makes it call Redis down for everyone, so
  // the shallow figures come first and each read waits for Redis to be back
  for (let k = 9; k >= 0; k--) {
    // with checkpoints every N changes, each moment but the present lies
    // halfway between two: the most a read undoes or redoes (an even
    // spread would land on checkpoints)
    const even = members + Math.floor(((present - members) * k) / 9);
    const seq = k < 9 && every > 1 ? even - Math.floor(every / 2) : even;
    for (const [name, view] of views) {
      const lat = [];
      let cpu = 0, script = 0, err = null, atSeq = null, rows = null;
      for (let r = 0; r < reps; r++) {
        const c0 = redisCpuMs(), e0 = evalshaUsec(), t0 = now();
        let m;
        try {
          [m] = await exchange(ws, [{ op: 'get', board: fullBoard, view, at: { seq } }], readTimeoutMs);
        } catch (e) {
          err = String(e.message || e);
          break;
        }
        const ms = now() - t0;
        const e1 = evalshaUsec();
        cpu += redisCpuMs() - c0;
        script += e1.usec - e0.usec;
        if (m.op !== 'snapshot') {
          err = `${m.op}: ${m.code || ''} ${m.message || ''}`.trim();
          err += ` after ${Math.round(ms)} ms`;
          await redisBack(ws);
          break;
        }
        if (m.at_seq !== seq) { err = `at_seq ${m.at_seq}, asked ${seq}`; break; }
        atSeq = m.at_seq;
        rows = (m.rows || []).length;
        lat.push(ms);
        if (ms > 2000) break; // one read at this depth says it
      }
      const n = lat.length;
      const res = {
        seq, back: present - seq, undone: Math.min((cks.find((c) => c >= seq) ?? present) - seq,
          seq - (cks.filter((c) => c <= seq).pop() ?? -Infinity)), view: name, reads: n, rows, at_seq: atSeq, error: err,
        p50_ms: pct(lat, 0.5), p99_ms: pct(lat, 0.99),
        redis_cpu_ms_per_read: n ? cpu / n : null, script_ms_per_read: n ? script / 1000 / n : null,
      };
      process.stderr.write(`hist_depth: ${JSON.stringify(res)}\n`);
      out.push(res);
    }
  }
  ws.close();
  return out;
}

async function main() {
  if (members >= changes) throw new Error('--changes must exceed --members');
  const load = () => require('node:fs').readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const out = { label: 'H', members, changes, reps, conns: nconns, batch, load_start: load() };
  // capped first: the full board's log then does not share Redis with a
  // half-built one, and its reads follow its build
  out.capped = await build(cappedBoard);
  process.stderr.write(`hist_depth: ${JSON.stringify(out.capped)}\n`);
  const everyArg = arg('ckpt-every', 0);
  let every = everyArg === 'auto' ? 'auto' : Number(everyArg);
  const ckOn = every === 'auto' || every > 0;
  out.full = await build(fullBoard, ckOn ? async () => {
    const present = Number(rcli('get', `rc:{${fullBoard}|}:seq`)) || changes;
    await ckptSettled(fullBoard, present, every);
  } : null);
  process.stderr.write(`hist_depth: ${JSON.stringify(out.full)}\n`);
  const present = Number(rcli('get', `rc:{${fullBoard}|}:seq`)) || changes;
  out.present_seq = present;
  if (ckOn) await ckptSettled(fullBoard, present, every);
  const ck = checkpoints(fullBoard);
  if (every === 'auto') every = gapOf(ck.seqs);
  out.ckpt_every = every;
  out.checkpoints = { count: ck.count, bytes: ck.bytes, bytes_per_change: ck.bytes / present,
    max_gap: ck.seqs.reduce((a, c, i) => Math.max(a, c - (i ? ck.seqs[i - 1] : 0)), present - (ck.seqs[ck.seqs.length - 1] || 0)) };
  process.stderr.write(`hist_depth: checkpoints ${JSON.stringify(out.checkpoints)}\n`);
  out.load_reads = load();
  out.reads = await reads(present, ck.seqs, every);
  out.history = await historyRead(present);
  process.stderr.write(`hist_depth: history ${JSON.stringify(out.history)}\n`);
  out.load_end = load();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`hist_depth: ${e.stack || e}\n`);
  process.exit(1);
});
