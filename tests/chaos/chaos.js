/* chaos.js - one seeded chaos run (issue 25): writers, viewers and faults
 * overlap against two real gateways on a real Redis (one server, or a 3+3
 * cluster with ack_replicas = 1); everything each client sends and receives
 * goes to a JSONL history (tests/chaos/history.js), judged afterwards by
 * tests/chaos/checker.js. Usually started by tests/chaos/run.sh.
 *
 *   node tests/chaos/chaos.js --mode single|cluster --seconds S --seed N --out FILE
 *        [--quiet-every S] [--faults 0]
 *
 * The seed decides every choice (boards, members, deltas, views, which
 * fault when); timing is the machine's, so a replay makes the same choices,
 * not the same interleaving. Everything it starts (redis-servers, gateways)
 * is stopped at the end, on failure too (and by tests/e2e/harness.js's exit
 * hook if this process dies). Loopback only.
 */
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createRequire } = require('node:module');
const h = require('../e2e/harness');
const { prng, recorder } = require('./history');

const WebSocket = createRequire(path.join(h.repoRoot, 'tests', 'e2e', 'harness.js'))('ws');

function args() {
  // --faults 0: no faults (the checker's self-test, tests/chaos/selftest.test.js)
  const a = { mode: 'single', seconds: 60, seed: 1, out: 'chaos-history.jsonl', quietEvery: 30, faults: 1 };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i += 2) {
    const k = v[i].replace(/^--/, '');
    a[k === 'quiet-every' ? 'quietEvery' : k] = ['mode', 'out'].includes(k) ? v[i + 1] : Number(v[i + 1]);
  }
  return a;
}

const A = args();
const rng = prng(A.seed);
const log = recorder(A.out);
const sleep = h.sleep || ((ms) => new Promise((r) => setTimeout(r, ms)));

// Boards written: every kind the shipped config has, plus a periodic board
// on a 1-hour custom period (the test clock jumps it at each quiet point, so
// periods close during the run) and a plain board that is frozen and revealed.
// All take incr with positive deltas only, so the checker can sum them.
const SPRINT = 'chaos_sprint';
const FROZEN = 'chaos_fz';
// players has teams (its team board squads, docs/teams.md): written by
// incr like the others, its members moved between teams by the team writers
const TEAM_SRC = 'players';
const SQUADS = 'squads';
const TEAMS = ['red', 'blue', 'green', 'gold'];
const WRITE_BOARDS = ['demo', 'global', 'burst', 'arena', FROZEN, TEAM_SRC];
const ALL_BOARDS = [...WRITE_BOARDS, SPRINT];
const TEAM_WRITERS = 2;
const MEMBERS = 24;
const HOUR = 3600000;

function chaosConfig(dir, cluster) {
  const plain = {
    order: 'desc', ops: 'incr', tiebreak: 'earliest', tiebreak_resolution: '1s',
    tiebreak_horizon: '3650d', tiebreak_base: '2026-01-01T00:00:00Z',
  };
  const spec = {
    server: { test_clock: 'on' },
    [`board ${SPRINT}`]: {
      order: 'desc', ops: 'incr', period: 'custom', period_base: '2026-01-01T00:00:00Z',
      period_length: '1h', tiebreak: 'earliest', keep: '1000',
    },
    [`board ${FROZEN}`]: plain,
  };
  if (cluster) spec.redis = { ack_replicas: '1' };
  const text = h.editConfig(fs.readFileSync(path.join(h.repoRoot, 'conf', 'rankcast.conf'), 'utf8'), spec);
  const file = path.join(dir, 'chaos.conf');
  fs.writeFileSync(file, text);
  state.tbits = tieBits(text);
  return file;
}

// The tie-break width T of each board the run writes, from the config it
// runs with (docs/score-layout.md: points = floor(composite / 2^T)), so the
// checker can read the final points from the raw sorted sets in Redis.
function tieBits(text) {
  const ms = (d) => {
    const m = /^(\d+)(ms|s|m|h|d)$/.exec(d);
    return Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 }[m[2]];
  };
  const periodMs = { hour: 3600000, day: 86400000, week: 7 * 86400000, month: 31 * 86400000, year: 366 * 86400000 };
  const out = {};
  let cur = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    const sec = /^\[board ([^\]]+)\]$/.exec(line);
    if (sec) { cur = ALL_BOARDS.includes(sec[1]) ? (out[sec[1]] = {}) : null; continue; }
    if (/^\[/.test(line)) { cur = null; continue; }
    const kv = /^([a-z_]+)\s*=\s*(.*)$/.exec(line);
    if (cur && kv) cur[kv[1]] = kv[2];
  }
  const bits = {};
  for (const [b, c] of Object.entries(out)) {
    const tb = c.tiebreak || 'earliest';
    if (tb === 'none') bits[b] = 0;
    else if (tb === 'arrival') bits[b] = Number(c.tiebreak_bits);
    else {
      const horizon = c.tiebreak_horizon ? ms(c.tiebreak_horizon)
        : c.period === 'custom' ? ms(c.period_length) : periodMs[c.period];
      bits[b] = Math.ceil(Math.log2(horizon / ms(c.tiebreak_resolution || '1ms')));
    }
  }
  return bits;
}

// Every board's sorted set as Redis holds it at the end, read from Redis
// itself (every primary of a cluster), not through a gateway: one
// `redisfinal` line per key rc:{B|P}:z (or a shard's rc:{B#i|P}:z), raw
// composites; the checker decodes them with the meta line's tbits.
async function readRedisFinal() {
  const nodes = state.cluster
    ? (await state.cluster.primaries()).map((port) => (...a) => state.cluster.cli(port, ...a))
    : [state.redis.cli];
  for (const cli of nodes) {
    const keys = (await cli('KEYS', 'rc:{*}:z')).split('\n').filter(Boolean);
    for (const key of keys) {
      const m = /^rc:\{([^|#}]+)(?:#\d+)?\|([^}]*)\}:z$/.exec(key);
      if (!m || !ALL_BOARDS.includes(m[1])) continue;
      const flat = (await cli('ZRANGE', key, 0, -1, 'WITHSCORES')).split('\n').filter((x) => x !== '');
      const rows = [];
      for (let i = 0; i + 1 < flat.length; i += 2) rows.push([flat[i], Number(flat[i + 1])]);
      log.write({ k: 'redisfinal', key, board: m[1], period: m[2] || null, rows });
    }
  }
}

/* ---- clients ---------------------------------------------------------------- */

let clientSeq = 0;
// One WebSocket connection, recorded. name: the client's stable name
// (w3, v5); each connection gets its own id c = name#k.
function connect(name, gwInfo) {
  const c = `${name}#${++clientSeq}`;
  return new Promise((resolve) => {
    const ws = new WebSocket(`${gwInfo.url}?token=${h.ADMIN_KEY}`, 'rankcast.v1', { perMessageDeflate: false });
    const conn = {
      c, ws, open: false, pending: new Map(), onMsg: null, nextId: 1,
      send(m) {
        if (!conn.open) return false;
        log.write({ k: 'send', c, m });
        ws.send(JSON.stringify(m));
        return true;
      },
      request(m, ms) {
        if (m.id === undefined) m.id = `${c}:${conn.nextId++}`;
        return new Promise((res) => {
          const timer = setTimeout(() => { conn.pending.delete(m.id); res({ op: 'timeout' }); }, ms);
          conn.pending.set(m.id, (r) => { clearTimeout(timer); res(r); });
          if (!conn.send(m)) { clearTimeout(timer); conn.pending.delete(m.id); res({ op: 'closed' }); }
        });
      },
      close() { try { ws.terminate(); } catch (e) { /* gone */ } },
    };
    const openTimer = setTimeout(() => conn.close(), 3000);
    ws.on('open', () => {
      clearTimeout(openTimer);
      conn.open = true;
      log.write({ k: 'open', c, gw: gwInfo.idx });
      resolve(conn);
    });
    ws.on('message', (data) => {
      let m;
      try { m = JSON.parse(data.toString()); } catch (e) { m = { raw: data.toString() }; }
      log.write({ k: 'recv', c, m });
      // news for a view (not a bare viewer count): the quiet point waits for these to stop
      if (m.op === 'event' || m.op === 'snapshot' || (m.op === 'delta' && ((m.rows && m.rows.length) || (m.removed && m.removed.length)))) {
        state.lastNews = Date.now();
      }
      if (m.id !== undefined && conn.pending.has(m.id)) {
        const f = conn.pending.get(m.id);
        conn.pending.delete(m.id);
        f(m);
      }
      if (conn.onMsg) conn.onMsg(m);
    });
    const closed = () => {
      clearTimeout(openTimer);
      if (conn.closedOnce) return;
      conn.closedOnce = true;
      const wasOpen = conn.open;
      conn.open = false;
      log.write({ k: 'close', c });
      for (const f of conn.pending.values()) f({ op: 'closed' });
      conn.pending.clear();
      if (conn.onClose) conn.onClose();
      if (!wasOpen) resolve(null);
    };
    ws.on('close', closed);
    ws.on('error', closed);
  });
}

/* ---- the system under test ----------------------------------------------------- */

const state = {
  gws: [],          // { idx, gw, url, port, stateDir, workers, stopped, down }
  redis: null,      // single mode: the redis-server
  cluster: null,    // cluster mode
  clockOffset: 0,
  tmp: fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-chaos-')),
  config: null,
  stop: false,      // the run is over: writers finish what they hold
  paused: false,    // a quiet point: writers hold, faults hold
  faultsRunning: 0,
  faultCount: 0,
};

function redisAddr() {
  return state.cluster ? { redis: state.cluster.seeds } : { redisPort: state.redis.port };
}

async function startGw(idx, port) {
  const info = state.gws[idx] || { idx, stateDir: fs.mkdtempSync(path.join(state.tmp, `state${idx}-`)) };
  info.workers = idx === 1 ? 2 : 1;
  const gw = await h.startGateway(null, Object.assign({
    port, config: state.config, stateDir: info.stateDir, timeoutMs: 30000,
    args: info.workers > 1 ? ['--workers', '2'] : [],
  }, redisAddr()));
  Object.assign(info, { gw, port: gw.port, url: gw.wsUrl, base: gw.base, down: false, stopped: false });
  state.gws[idx] = info;
  if (state.clockOffset) await setClock(info);
  return info;
}

async function setClock(info) {
  for (let i = 0; i < 50; i++) {
    try {
      const r = await h.http(info.base, 'POST', '/api/v1/debug/clock', { offset_ms: state.clockOffset }, { timeoutMs: 2000 });
      if (r.status === 200) return;
    } catch (e) { /* not up yet */ }
    await sleep(100);
  }
  throw new Error(`could not set the test clock of gateway ${info.idx}`);
}

function liveGws() {
  return state.gws.filter((g) => g && !g.down && !g.stopped);
}

async function healthy(info) {
  try {
    const r = await h.http(info.base, 'GET', '/healthz', undefined, { timeoutMs: 2000 });
    return r.status === 200;
  } catch (e) { return false; }
}

async function waitHealthy(ms = 60000) {
  await h.waitFor(async () => {
    for (const g of state.gws) if (g.down || g.stopped || !(await healthy(g))) return false;
    return true;
  }, ms, 'every gateway healthy');
}

/* ---- writers ----------------------------------------------------------------- */

const writers = [];

// One write, retried with the same req until acked, refused for good, or the
// run's end deadline passes. Returns nothing: the history says what happened.
async function doWrite(w, m) {
  const deadline = () => state.stop && Date.now() > state.stopAt + 20000;
  for (;;) {
    if (deadline()) return;
    if (!w.conn || !w.conn.open) {
      const live = w.pin !== undefined ? [state.gws[w.pin]] : liveGws();
      const g = live.length ? w.r.pick(live) : null;
      w.conn = g && !g.down && !g.stopped ? await connect(w.name, g) : null;
      if (!w.conn) { await sleep(200); continue; }
    }
    const reply = await w.conn.request(Object.assign({}, m), 5000);
    if (reply.op === 'ack' || reply.op === 'teamed') return;
    if (reply.op === 'timeout') { w.conn.close(); w.conn = null; continue; }
    if (reply.op === 'closed') { w.conn = null; await sleep(100); continue; }
    if (reply.op === 'error' && ['unavailable', 'rate_limited', 'internal'].includes(reply.code)) {
      await sleep(100);
      continue;
    }
    return; // refused for good (bad_request, out_of_range, ...): nothing written
  }
}

async function writer(i) {
  const w = { name: `w${i}`, r: rng.fork(100 + i), conn: null, idle: true, n: 0 };
  // w0 writes the periodic board, always through gateway 1 (never SIGKILLed, so
  // its test clock is never lost and each write lands in the period of its time)
  if (i === 0) w.pin = 1;
  writers.push(w);
  let burst = 0;
  while (!state.stop) {
    if (state.paused) { w.idle = true; await sleep(50); continue; }
    w.idle = false;
    const board = i === 0 ? SPRINT : w.r.pick(WRITE_BOARDS);
    const m = { op: 'incr', board, member: `u${w.r.int(0, MEMBERS - 1)}`, delta: w.r.int(1, 9), req: `${w.name}-${w.n++}` };
    await doWrite(w, m);
    w.idle = true;
    if (burst > 0) burst--;
    else {
      if (w.r.chance(0.01)) burst = w.r.int(10, 40);
      await sleep(w.r.int(20, 150));
    }
  }
  w.idle = true;
  if (w.conn) w.conn.close();
}

// A team writer moves its own members (tw0 the even ones, tw1 the odd: one
// writer per member, so each member's moves are in order) between teams,
// and now and then off any team; retried by req like every write. Its
// `teamed` answer promises the membership is in Redis (the same write path,
// ack_replicas waited for, but the answer carries no replica count).
async function teamWriter(i) {
  const w = { name: `tw${i}`, r: rng.fork(150 + i), conn: null, idle: true, n: 0 };
  writers.push(w);
  while (!state.stop) {
    if (state.paused) { w.idle = true; await sleep(50); continue; }
    w.idle = false;
    const member = `u${w.r.int(0, MEMBERS / TEAM_WRITERS - 1) * TEAM_WRITERS + i}`;
    const team = w.r.chance(0.15) ? null : w.r.pick(TEAMS);
    await doWrite(w, { op: 'team', board: TEAM_SRC, member, team, req: `${w.name}-${w.n++}` });
    w.idle = true;
    await sleep(w.r.int(200, 1200));
  }
  w.idle = true;
  if (w.conn) w.conn.close();
}

/* ---- viewers ----------------------------------------------------------------- */

const viewers = [];

function viewSpecs(r) {
  const board = r.pick(ALL_BOARDS);
  const kinds = [
    { board, view: { top: 10 } },
    { board, view: { offset: 5, limit: 8 } },
    { board, view: { around: `u${r.int(0, MEMBERS - 1)}`, radius: 3 } },
    { board, view: { feed: true } },
    { board, view: { top: 10 }, places: 'shared' },
    { board, view: { top: 10 }, max_rate: 5 },
  ];
  const n = r.int(2, 4);
  // every viewer holds a feed too (feeds around failovers are where
  // losses were seen), on a board of its own choice
  const out = [{ board: r.pick(ALL_BOARDS), view: { feed: true } }];
  for (let k = 0; k < n; k++) out.push(Object.assign({}, r.pick(kinds), { board: r.pick(ALL_BOARDS) }));
  // member lists on the team board's source (some names never written:
  // they stay in absent), a roster, the team board itself
  if (r.chance(0.7)) {
    const names = new Set();
    const len = r.int(2, 6);
    while (names.size < len) names.add(r.chance(0.15) ? `nobody${r.int(0, 3)}` : `u${r.int(0, MEMBERS - 1)}`);
    out.push({ board: TEAM_SRC, view: { members: [...names] }, list: true });
  }
  if (r.chance(0.6)) out.push({ board: TEAM_SRC, view: { team: r.pick(TEAMS) }, list: true });
  if (r.chance(0.4)) out.push({ board: SQUADS, view: r.chance(0.5) ? { top: 10 } : { feed: true } });
  return out;
}

// A slow reader (kind 'slow') stops reading its socket for 0.2..1.5 s now
// and then; a stuck one ('stuck') stops for 4..15 s (its gateway may drop
// what it queued and resync it with a snapshot, docs/gateway.md "Slow
// readers"). Both read again at a quiet point, so their views are judged
// like anyone's; meanwhile the others must not notice them.
async function readSlowly(v, conn, kind) {
  const sock = conn.ws._socket;
  const r = v.r;
  while (conn.open && !state.stop) {
    await sleep(kind === 'slow' ? r.int(200, 1500) : r.int(1000, 4000));
    if (!conn.open || state.paused || state.stop) continue;
    const ms = kind === 'slow' ? r.int(200, 1500) : r.int(4000, 15000);
    log.write({ k: 'reader', c: conn.c, phase: 'pause', kind, ms });
    sock.pause();
    const until = Date.now() + ms;
    while (conn.open && !state.paused && !state.stop && Date.now() < until) await sleep(50);
    sock.resume();
    log.write({ k: 'reader', c: conn.c, phase: 'resume', kind });
  }
}

async function viewer(i, kind) {
  const v = { name: `v${i}`, r: rng.fork(200 + i), specs: null, conn: null, cursors: new Map() };
  v.specs = viewSpecs(v.r);
  viewers.push(v);
  while (!state.stop) {
    const live = liveGws();
    if (!live.length) { await sleep(200); continue; }
    const conn = await connect(v.name, v.r.pick(live));
    if (!conn) { await sleep(v.r.int(100, 600)); continue; }
    v.conn = conn;
    const bySub = new Map();
    const byId = new Map();
    conn.onMsg = (m) => {
      // mapped here, not after the reply resolves: events may follow in the same read
      if (m.op === 'snapshot' && m.id !== undefined && byId.has(m.id)) {
        const { s, since } = byId.get(m.id);
        bySub.set(m.sub, s);
        // a resumed feed keeps its cursor until the replayed events move it
        if (v.specs[s].view.feed && (!since || m.reset)) v.cursors.set(s, { seq: m.seq, epoch: m.epoch || '' });
        if (v.specs[s].list) v.cursors.set(s, { seq: m.seq, epoch: m.epoch || '' });
        return;
      }
      const idx = bySub.get(m.sub);
      if (idx === undefined) return;
      const cur = v.cursors.get(idx);
      if (m.op === 'event') v.cursors.set(idx, { seq: m.seq, epoch: m.epoch || (cur && cur.epoch) || '' });
      else if (m.op === 'snapshot' && m.id === undefined) v.cursors.set(idx, { seq: m.seq, epoch: m.epoch || '' });
      else if (m.op === 'delta' && v.specs[idx].list && typeof m.seq === 'number') v.cursors.set(idx, { seq: m.seq, epoch: m.epoch || (cur && cur.epoch) || '' });
    };
    let gone = false;
    const closedP = new Promise((res) => { conn.onClose = () => { gone = true; res(); }; });
    for (let s = 0; s < v.specs.length; s++) {
      const spec = v.specs[s];
      const sub = { op: 'subscribe', board: spec.board, view: spec.view };
      if (spec.places) sub.places = spec.places;
      if (spec.max_rate) sub.max_rate = spec.max_rate;
      const cur = v.cursors.get(s);
      // a member list resumes with since too (answered with a snapshot)
      if ((spec.view.feed || spec.list) && cur && cur.epoch) sub.since = { seq: cur.seq, epoch: cur.epoch };
      sub.id = `${conn.c}:s${s}`;
      byId.set(sub.id, { s, since: sub.since });
      const snap = await conn.request(sub, 5000);
      // a view picked twice is refused (bad_request): the others still count
      if (snap.op === 'error' && snap.code === 'bad_request') continue;
      if (snap.op !== 'snapshot') break;
    }
    if (kind) readSlowly(v, conn, kind);
    // stay a while, then drop the connection on purpose now and then (resume)
    const stay = v.r.int(3000, 20000);
    await Promise.race([closedP, sleep(stay)]);
    if (!gone && !state.stop && !state.paused) { conn.close(); await closedP; }
    else if (!gone && (state.stop || state.paused)) {
      // keep it across the quiet point: the check needs settled views
      while (!gone && (state.paused) && !state.stop) await Promise.race([closedP, sleep(100)]);
      if (!gone && !state.stop) { conn.close(); await closedP; }
    }
    if (state.stop) break;
    await sleep(v.r.int(50, 800));
  }
  if (v.conn) v.conn.close();
}

/* ---- faults ------------------------------------------------------------------ */

const busy = new Set();

function faultKinds() {
  return state.cluster
    ? ['gw-kill', 'gw-stop', 'primary-kill', 'failover', 'node-pause', 'slot-move', 'storm']
    : ['gw-kill', 'gw-stop', 'redis-flush', 'storm'];
}

// A connection storm: 100..300 WebSockets opened at once on one gateway,
// each subscribing to a view of a random board, dropped 0.2..3 s later (half
// closed, half cut). Not recorded (they are load, not viewers): the
// recorded clients around them must not notice.
async function storm(r) {
  const live = liveGws();
  if (!live.length || busy.has('storm')) return false;
  busy.add('storm'); // (a quiet point waits for it to end)
  try { return await stormOn(r.pick(live), r); } finally { busy.delete('storm'); }
}

async function stormOn(g, r) {
  const n = r.int(100, 300);
  const mark = (phase, extra) => log.write(Object.assign({ k: 'fault', kind: 'storm', phase, target: g.idx }, extra || {}));
  mark('start', { n });
  let opened = 0;
  const one = (k) => new Promise((resolve) => {
    const ws = new WebSocket(`${g.url}?token=${h.ADMIN_KEY}`, 'rankcast.v1', { perMessageDeflate: false });
    const board = r.pick(ALL_BOARDS);
    const stay = r.int(200, 3000);
    const cut = r.chance(0.5);
    let timer = setTimeout(() => ws.terminate(), stay + 5000);
    ws.on('open', () => {
      opened++;
      ws.send(JSON.stringify({ op: 'subscribe', board, view: k % 3 ? { top: 10 } : { feed: true }, id: k }));
      clearTimeout(timer);
      timer = setTimeout(() => (cut ? ws.terminate() : ws.close()), stay);
    });
    ws.on('error', () => {});
    ws.on('close', () => { clearTimeout(timer); resolve(); });
  });
  await Promise.all(Array.from({ length: n }, (_, k) => one(k)));
  mark('end', { n, opened });
  return true;
}

// One board's slot moved to another primary under writes, as redis-cli
// --cluster reshard does it: IMPORTING/MIGRATING, the keys one at a time
// (writes meet a half-moved slot: ASK, TRYAGAIN), then the slot's new owner
// told to every primary.
async function slotMove(cl, r, mark) {
  const tag = r.pick(['demo', 'burst', 'arena', FROZEN, ...Array.from({ length: 8 }, (_, k) => `global#${k}`)]);
  const prims = await cl.primaries();
  const slot = Number(await cl.cli(prims[0], 'CLUSTER', 'KEYSLOT', `rc:{${tag}|}:z`));
  const from = await cl.owner(`rc:{${tag}|}:z`);
  const others = prims.filter((p) => p !== from);
  if (!from || !others.length) return false;
  const to = r.pick(others);
  const idOf = async (port) => (await cl.cli(port, 'CLUSTER', 'MYID')).trim();
  const fromId = await idOf(from);
  const toId = await idOf(to);
  mark('start', from, { slot, to, tag });
  await cl.cli(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
  await cl.cli(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
  let moved = 0;
  for (;;) {
    const keys = (await cl.cli(from, 'CLUSTER', 'GETKEYSINSLOT', slot, 1)).split('\n').filter(Boolean);
    if (keys.length === 0) break;
    await cl.cli(from, 'MIGRATE', '127.0.0.1', to, keys[0], 0, 5000);
    moved++;
    await sleep(r.int(5, 40));
  }
  for (const p of await cl.primaries()) await cl.cli(p, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
  await cl.waitOk(60000);
  await replicasInSync(cl);
  mark('end', from, { slot, to, tag, moved });
  return true;
}

async function runFault(kind, r) {
  const mark = (phase, target, extra) => log.write(Object.assign({ k: 'fault', kind, phase, target }, extra || {}));
  if (kind === 'gw-kill') {
    // only gateway 0 (one process; a SIGKILLed master would leave its workers)
    const g = state.gws[0];
    if (busy.has('gw0')) return false;
    busy.add('gw0');
    try {
      mark('start', 0);
      g.down = true;
      g.gw.kill('SIGKILL');
      await g.gw.exited;
      g.gw.stop();
      await sleep(r.int(300, 3000));
      await startGw(0, g.port);
      mark('end', 0);
    } finally { busy.delete('gw0'); }
    return true;
  }
  if (kind === 'storm') return storm(r);
  if (kind === 'gw-stop') {
    const idx = r.int(0, 1);
    if (busy.has(`gw${idx}`)) return false;
    busy.add(`gw${idx}`);
    const g = state.gws[idx];
    try {
      mark('start', idx);
      g.stopped = true;
      process.kill(g.gw.pid, 'SIGSTOP');
      await sleep(r.int(1000, 4000));
      process.kill(g.gw.pid, 'SIGCONT');
      g.stopped = false;
      mark('end', idx);
    } finally { busy.delete(`gw${idx}`); }
    return true;
  }
  if (busy.has('redis')) return false;
  busy.add('redis');
  try {
    if (kind === 'redis-flush') {
      mark('start', state.redis.port);
      log.write({ k: 'epoch', phase: 'down' });
      const old = state.redis;
      process.kill(old.pid, 'SIGKILL');
      await old.exited;
      await old.stop();
      await sleep(r.int(200, 2000));
      state.redis = await h.startRedis(null, { port: old.port });
      log.write({ k: 'epoch', phase: 'up' });
      mark('end', old.port);
      return true;
    }
    const cl = state.cluster;
    await replicasInSync(cl);
    // (awaited here: the finally below frees the Redis for the next fault)
    if (kind === 'slot-move') return await slotMove(cl, r, mark);
    if (kind === 'failover') {
      const prim = r.pick(await cl.primaries());
      const reps = await cl.replicaOf(prim);
      if (!reps.length) return false;
      mark('start', reps[0]);
      await cl.failover(reps[0]);
      await replicasInSync(cl);
      mark('end', reps[0]);
      return true;
    }
    if (kind === 'primary-kill' || kind === 'node-pause') {
      const prims = [];
      for (const p of await cl.primaries()) if ((await cl.replicaOf(p)).length) prims.push(p);
      if (!prims.length) return false;
      const port = r.pick(prims);
      const node = cl.nodes.find((n) => n.port === port);
      mark('start', port);
      if (kind === 'node-pause') {
        process.kill(node.redis.pid, 'SIGSTOP');
        await sleep(r.int(5000, 7000)); // node timeout 2 s: its replica takes over
        process.kill(node.redis.pid, 'SIGCONT');
      } else {
        const reps = await cl.replicaOf(port);
        await cl.kill(port, 'SIGKILL');
        // its replica promoted before it comes back: right after the kill the
        // others still say ok (nobody has timed it out yet), and a node back
        // empty under its old id would still own its slots (a data loss of
        // the fault's making, not the gateway's)
        await h.waitFor(async () => {
          for (const r2 of reps) {
            try { if (/role:master/.test(await cl.cli(r2, 'INFO', 'replication'))) return true; } catch (e) { /* busy */ }
          }
          return false;
        }, 30000, `a replica of ${port} promoted`);
        await cl.waitOk(60000);
        // back on its port with its nodes.conf: it rejoins as a replica
        node.redis = await h.startRedis(null, {
          port, dir: node.redis.dir,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000',
            '--cluster-require-full-coverage', 'yes'],
        });
        node.dead = false;
      }
      await cl.waitOk(60000);
      await replicasInSync(cl);
      mark('end', port);
      return true;
    }
  } finally { busy.delete('redis'); }
  return false;
}

// Every live replica's link to its primary is up: a replica still syncing
// after a pause or a restart would not be promoted if its primary died now
// (its data counts as too old), leaving slots without a primary for good;
// the run's faults wait for this before the next cluster fault, so they
// overlap with gateway faults and writes, not into an outage Redis Cluster
// itself does not heal.
async function replicasInSync(cl, ms = 60000) {
  await h.waitFor(async () => {
    for (const n of cl.nodes.filter((x) => !x.dead)) {
      try {
        const info = await cl.cli(n.port, 'INFO', 'replication');
        if (/role:slave/.test(info) && !/master_link_status:up/.test(info)) return false;
      } catch (e) { return false; }
    }
    return true;
  }, ms, 'every replica in sync');
}

async function faults() {
  const r = rng.fork(300);
  const running = new Set();
  while (!state.stop && A.faults) {
    await sleep(r.int(1500, 5000));
    if (state.stop) break;
    if (state.paused || running.size >= 2) continue;
    const kind = r.pick(faultKinds());
    const p = runFault(kind, r.fork(state.faultCount * 7 + running.size)).then((did) => {
      if (did) state.faultCount++;
    }, (e) => {
      log.write({ k: 'fault', kind, phase: 'error', error: String(e.message || e).slice(0, 500) });
      state.faultErrors = (state.faultErrors || 0) + 1;
    }).finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all([...running]);
  state.faultsDone = true;
}

/* ---- quiet points ------------------------------------------------------------- */

function restQuery(spec, period) {
  const q = [];
  const v = spec.view;
  if (v.top) q.push(`top=${v.top}`);
  else if (v.limit) q.push(`offset=${v.offset}`, `limit=${v.limit}`);
  else if (v.around) q.push(`around=${v.around}`, `radius=${v.radius}`);
  if (spec.places) q.push(`places=${spec.places}`);
  if (period) q.push(`period=${encodeURIComponent(period)}`);
  return `/api/v1/boards/${spec.board}?${q.join('&')}`;
}

// Waits (conditions, not a fixed time, so a loaded machine only makes it
// longer) until the queued board has applied its queue (its stream is
// empty, read from Redis itself: docs/queued.md, XLEN is the number of
// unapplied entries; then its seq stays put over 3 reads) and no recorded
// viewer has had news for 1.5 s (the slowest view is max_rate 5; a stuck
// reader drains what it held once it reads). (The seq alone is not enough:
// a consumer whose gateway was killed holds the queue's lock until it
// expires, and the seq stays put meanwhile with entries still queued; run
// 3 judged a view 1 ms before the queue's writes reached it.)
async function settle() {
  const key = 'rc:{burst|}:in';
  const cli = state.cluster ? (...a) => state.cluster.owner(key).then((p) => state.cluster.cli(p, ...a)) : state.redis.cli;
  await h.waitFor(async () => {
    try { return Number(await cli('XLEN', key)) === 0; } catch (e) { return false; }
  }, 120000, 'the queued board\'s stream to be empty');
  let last = null;
  let same = 0;
  await h.waitFor(async () => {
    try {
      const r = await h.http(state.gws[1].base, 'GET', '/api/v1/boards/burst/stats', undefined, { timeoutMs: 5000 });
      same = r.status === 200 && r.body.seq === last ? same + 1 : 0;
      last = r.body && r.body.seq;
    } catch (e) { same = 0; }
    await sleep(300);
    return same >= 3;
  }, 120000, 'the queued board to apply its queue');
  await sleep(500);
  await h.waitFor(() => Date.now() - (state.lastNews || 0) >= 1500, 120000, 'the views to settle');
}

let quietN = 0;
async function quietPoint() {
  state.paused = true;
  await h.waitFor(() => state.faultsRunningZero(), 120000, 'faults to end');
  await h.waitFor(() => writers.every((w) => w.idle), 60000, 'writers to go idle');
  await waitHealthy();
  if (state.cluster) await state.cluster.waitOk(60000);
  await settle();
  const n = ++quietN;
  log.write({ k: 'quiet', n });
  const g = state.gws[1];
  const seen = new Set();
  for (const v of viewers) {
    for (const spec of v.specs) {
      if (spec.view.feed || spec.list) continue;
      const period = spec.board === SPRINT ? state.sprintPeriod : undefined;
      const q = restQuery(spec, period);
      if (seen.has(q)) continue;
      seen.add(q);
      const res = await h.http(g.base, 'GET', q, undefined, { timeoutMs: 5000 });
      log.write({ k: 'truth', board: spec.board, view: spec.view, places: spec.places || null, period: period || null, snap: res.body });
    }
  }
  await teamTruth(g);
  // every feed must have caught up with its board (a lost last event shows here)
  for (const board of [...ALL_BOARDS, SQUADS]) {
    const period = board === SPRINT ? state.sprintPeriod : undefined;
    const q = `/api/v1/boards/${board}?top=1${period ? `&period=${encodeURIComponent(period)}` : ''}`;
    const res = await h.http(g.base, 'GET', q, undefined, { timeoutMs: 5000 });
    const b = res.body || {};
    log.write({ k: 'feedtruth', board, period: period || null, seq: b.seq, epoch: b.epoch, frozen: b.frozen });
  }
  for (const gi of state.gws) {
    try { log.write({ k: 'rss', gw: gi.idx, kb: rssOf(gi.gw.pid) }); } catch (e) { /* gone */ }
  }
}

// The team board's truth at a quiet point: every member of players (rows
// with their teams, read through gateway 1), the membership hash read from
// Redis itself, and every team on squads; the checker computes each member
// list, roster and team sum from these.
async function teamTruth(g) {
  const key = `rc:{${TEAM_SRC}|}:tm`;
  const cli = state.cluster ? (...a) => state.cluster.owner(key).then((p) => state.cluster.cli(p, ...a)) : state.redis.cli;
  const flat = (await cli('HGETALL', key)).split('\n');
  const tm = {};
  for (let i = 0; i + 1 < flat.length; i += 2) tm[flat[i]] = flat[i + 1];
  const players = await h.http(g.base, 'GET', `/api/v1/boards/${TEAM_SRC}?top=1000`, undefined, { timeoutMs: 5000 });
  const squads = await h.http(g.base, 'GET', `/api/v1/boards/${SQUADS}?top=1000`, undefined, { timeoutMs: 5000 });
  log.write({ k: 'teamtruth', board: TEAM_SRC, teams: SQUADS, tm, players: players.body, squads: squads.body });
}

// Each jump puts both gateways' test clocks in the middle of the next
// period (the sprint board's 1-hour periods begin on the hour), so real time
// passing between two quiet points, or while the run drains, never crosses a
// period boundary by itself: a period changes only at a jump, which the
// history records. (A jump by a plain hour once left a 60-minute run's
// clock a minute before a boundary, real time crossed it, and the writes of
// the next 30 s went to a period the history had not recorded.)
/* The largest RSS (kB) of a gateway's processes: the process itself and,
 * with --workers, each worker (its children). */
function rssOf(pid) {
  let kb = h.vmRssKb(pid);
  let kids = [];
  try { kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter((x) => x); } catch (e) { /* none */ }
  for (const k of kids) {
    try { kb = Math.max(kb, h.vmRssKb(Number(k))); } catch (e) { /* gone */ }
  }
  return kb;
}

// The RSS bound every gateway process must stay within (the checker judges
// it): a 2-core run's gateway stays near 20 MB; ASan's shadow memory and
// quarantine take far more (RC_SANITIZE=1).
const RSS_BOUND_KB = process.env.RC_SANITIZE ? 1024 * 1024 : 128 * 1024;

async function advanceClock() {
  const shown = Date.now() + state.clockOffset;
  state.clockOffset = Math.floor(shown / HOUR) * HOUR + HOUR + HOUR / 2 - Date.now();
  for (const g of state.gws) await setClock(g);
  await recordSprintPeriod();
  await sleep(300); // a few ticks: every view of the old period has rolled over
}

async function recordSprintPeriod() {
  const res = await h.http(state.gws[1].base, 'GET', `/api/v1/boards/${SPRINT}?top=1`);
  state.sprintPeriod = res.body.period;
  state.sprintPeriods.push(res.body.period);
  log.write({ k: 'period', board: SPRINT, period: res.body.period });
}

/* ---- the run ------------------------------------------------------------------ */

async function main() {
  state.faultsRunningZero = () => busy.size === 0;
  state.sprintPeriods = [];
  if (A.mode === 'cluster') state.cluster = await h.startCluster(null, { primaries: 3, replicas: 1, nodeTimeoutMs: 2000 });
  else state.redis = await h.startRedis(null);
  state.config = chaosConfig(state.tmp, !!state.cluster);
  log.write({ k: 'meta', seed: A.seed, mode: A.mode, seconds: A.seconds, boards: ALL_BOARDS, incrBoards: ALL_BOARDS, tbits: state.tbits, rssBoundKb: RSS_BOUND_KB });
  await startGw(0);
  await startGw(1);
  await advanceClock(); // (to the middle of a period: see advanceClock)
  const admin = await connect('admin', state.gws[1]);

  const tasks = [];
  for (let i = 0; i < 5; i++) tasks.push(writer(i));
  for (let i = 0; i < TEAM_WRITERS; i++) tasks.push(teamWriter(i));
  for (let i = 0; i < 8; i++) tasks.push(viewer(i));
  tasks.push(viewer(8, 'slow'), viewer(9, 'stuck'));
  await sleep(2000);
  // the frozen board: frozen early, revealed step by step at each quiet point
  await admin.request({ op: 'freeze', board: FROZEN }, 5000);
  const faultTask = faults();

  const endAt = Date.now() + A.seconds * 1000;
  let nextQuiet = Date.now() + A.quietEvery * 1000;
  const fr = rng.fork(400);
  while (Date.now() < endAt) {
    await sleep(200);
    if (Date.now() >= nextQuiet && endAt - Date.now() > 5000) {
      await quietPoint();
      let conn = admin.open ? admin : null;
      if (!conn) conn = await connect('admin', state.gws[1]);
      if (conn) await conn.request({ op: 'reveal', board: FROZEN, steps: fr.int(1, 20) }, 5000);
      await advanceClock();
      state.paused = false;
      nextQuiet = Date.now() + A.quietEvery * 1000;
    }
  }
  // the end: no more faults, writers finish what they hold, every queue drains
  state.stop = true;
  state.stopAt = Date.now();
  await faultTask;
  await waitHealthy();
  if (state.cluster) await state.cluster.waitOk(60000);
  state.stop = false;
  state.paused = true; // viewers stay connected, writers are told to finish
  await Promise.race([h.waitFor(() => writers.every((w) => w.idle), 60000, 'writers'), sleep(60000)]);
  const fin = await connect('admin', state.gws[1]);
  await fin.request({ op: 'reveal', board: FROZEN, steps: 'all' }, 5000);
  let last = '';
  let stable = 0;
  for (let i = 0; i < 150 && stable < 5; i++) {
    const r = await h.http(state.gws[1].base, 'GET', '/api/v1/boards/burst/stats');
    const key = JSON.stringify(r.body);
    stable = key === last ? stable + 1 : 0;
    last = key;
    await sleep(400);
  }
  state.paused = false;
  await quietPoint();
  for (const board of ALL_BOARDS) {
    const periods = board === SPRINT ? state.sprintPeriods : [null];
    for (const period of periods) {
      const q = `/api/v1/boards/${board}?top=1000${period ? `&period=${encodeURIComponent(period)}` : ''}`;
      const res = await h.http(state.gws[1].base, 'GET', q, undefined, { timeoutMs: 10000 });
      log.write({ k: 'final', board, period, status: res.status, rows: res.body && res.body.rows, total: res.body && res.body.total });
    }
  }
  await readRedisFinal();
  state.stop = true;
  state.paused = false;
  await Promise.race([Promise.all(tasks), sleep(20000)]);
  fin.close();
  admin.close();
}

async function cleanup() {
  const probs = [];
  for (const g of state.gws) {
    if (!g) continue;
    try { process.kill(g.gw.pid, 'SIGCONT'); } catch (e) { /* gone */ }
    const res = await g.gw.stop();
    try { await g.gw.checkExit(); } catch (e) { probs.push(e.message.split('\n')[0]); }
    log.write({ k: 'gwexit', gw: g.idx, res, problems: probs });
  }
  if (state.cluster) {
    for (const n of state.cluster.nodes) {
      try { process.kill(n.redis.pid, 'SIGCONT'); } catch (e) { /* gone */ }
      await n.redis.stop();
      if (n.redis.dir) fs.rmSync(n.redis.dir, { recursive: true, force: true });
    }
  }
  if (state.redis) await state.redis.stop();
  fs.rmSync(state.tmp, { recursive: true, force: true });
}

main().then(async () => {
  await cleanup();
  log.write({ k: 'end', faults: state.faultCount, faultErrors: state.faultErrors || 0 });
  log.close();
  process.exit(0);
}, async (e) => {
  console.error(`chaos: the run itself failed (seed ${A.seed}): ${e.stack || e}`);
  try { log.write({ k: 'aborted', error: String(e.stack || e) }); await cleanup(); } catch (e2) { /* best effort */ }
  process.exit(2);
});
