/* shard_tool.js - what the tests of sharded boards share: which shard holds
 * a member (core/rc_shard.c, rc_shard_of: FNV-1a, 32 bits, of the member's
 * bytes, modulo S), `rankcast ...args` run to its end (export, import), and
 * a writer of the shipped `global` (8 shards) that keeps a brute-force model
 * of it after every change (history_sharded.test.js, replay_sharded.test.js). */
'use strict';

const assert = require('node:assert/strict');
const h = require('./harness');

function shardOf(member, shards) {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(member, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return hash % shards;
}

/* Runs `rankcast ...args` with input (or nothing) on stdin: { code, stdout, stderr }. */
function runTool(args, input) {
  return new Promise((resolve, reject) => {
    const child = h.spawnTracked(h.gatewayBin(), args, { cwd: h.repoRoot, stdio: ['pipe', 'pipe', 'pipe'] }, []);
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      child.untrack();
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
    child.stdin.on('error', () => {}); // a tool that exits before reading it all
    child.stdin.end(input);
  });
}

const GLOBAL_SHARDS = 8;

function rng(seed) {
  let s = seed >>> 0;
  return (n) => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s % n;
  };
}

/* The merged order of `global` (desc, earliest by the second): points, the
 * second they were reached, the lower shard, then Redis's order of equal
 * scores in one shard (member name descending). */
function globalStandings(map) {
  return [...map].map(([member, v]) => ({ member, score: v.pts, sec: v.sec, shard: shardOf(member, GLOBAL_SHARDS) }))
    .sort((a, b) => b.score - a.score || a.sec - b.sec || a.shard - b.shard ||
      (a.member < b.member ? 1 : a.member > b.member ? -1 : 0))
    .map((r, i) => ({ rank: i + 1, member: r.member, score: r.score }));
}

async function setClock(gw, ms) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: ms });
  assert.equal(r.status, 200, r.text);
}

/* The only writer of `global` on gw ([server] test_clock = on), over ws:
 * write(clockMs) sets the gateway's clock to clockMs first (null: leaves it
 * running), then makes one seeded change (incr of a small delta over 40
 * members, now and then a removal) and waits for its event on a feed of
 * its own, which gives the change's time. `changes` holds each change in
 * order with its time and the board after it (seq k: changes[k - 1]). */
async function globalWriter(t, gw, ws, seed) {
  const feed = [];
  const conn = await h.connectWs(t, gw.wsUrl);
  const snap = await conn.request({ op: 'subscribe', board: 'global', view: { feed: true } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  conn.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.sub === snap.sub && m.op === 'event') feed.push(m);
  });
  const rnd = rng(seed);
  const P = new Map();
  const w = {
    changes: [],
    lastAt: 0,
    async write(clockMs) {
      if (clockMs != null) await setClock(gw, Math.max(clockMs, w.lastAt + 1));
      const m = `g${rnd(40)}`;
      let reply;
      const d = [1, 2, 3, 2, -1][rnd(5)];
      if (P.has(m) && rnd(12) === 0) {
        reply = await ws.request({ op: 'remove', board: 'global', member: m }, 10000);
        assert.equal(reply.op, 'removed', JSON.stringify(reply));
      } else {
        reply = await ws.request({ op: 'incr', board: 'global', member: m, delta: d }, 10000);
        assert.equal(reply.op, 'ack', JSON.stringify(reply));
      }
      await h.waitFor(() => feed.length === w.changes.length + 1, 10000, `the event of change ${w.changes.length}`);
      const ev = feed[feed.length - 1];
      assert.equal(ev.member, m, JSON.stringify(ev));
      const at = Number(ev.at);
      assert.ok(at > w.lastAt, `change times go on: ${at} after ${w.lastAt}`);
      w.lastAt = at;
      if (reply.op === 'removed') P.delete(m);
      else P.set(m, { pts: (P.has(m) ? P.get(m).pts : 0) + d, sec: Math.floor(at / 1000) });
      w.changes.push({ at, member: m, rows: globalStandings(P) });
      return w.changes.length;
    },
  };
  return w;
}

/* Writes n changes on `global` an hour ago, the clock moved on 300 ms
 * before each one (several a second: ties by time across shards); returns
 * the changes (globalWriter's) and the first one's clock. The clock then
 * runs on from the last change. */
async function playGlobal(t, gw, ws, n, seed) {
  const w = await globalWriter(t, gw, ws, seed);
  const base = Math.floor((Date.now() - 3600e3) / 1000) * 1000;
  for (let i = 0; i < n; i++) await w.write(base + 300 * i);
  return { changes: w.changes, base, writer: w };
}

/* The state at time ms: after the last change at or before it. */
function stateAt(changes, ms) {
  let k = -1;
  for (let i = 0; i < changes.length; i++) if (changes[i].at <= ms) k = i;
  return { seq: k + 1, rows: k < 0 ? [] : changes[k].rows };
}

/* The state at seq (0: empty). */
function stateOf(changes, seq) {
  return seq === 0 ? [] : changes[seq - 1].rows;
}

function aroundOf(rows, member, radius) {
  const i = rows.findIndex((r) => r.member === member);
  if (i < 0) return [];
  return rows.slice(Math.max(0, i - radius), i + radius + 1);
}

/* A member list of rows: the listed members on the board in rank order,
 * the others absent in the order asked. */
function listOf(rows, list) {
  const on = rows.filter((r) => list.includes(r.member));
  return { rows: on, absent: list.filter((m) => !on.some((r) => r.member === m)) };
}

module.exports = { shardOf, runTool, globalStandings, setClock, globalWriter, playGlobal, stateAt, stateOf, aroundOf, listOf };
