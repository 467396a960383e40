#!/usr/bin/env node
/* member_lists.js - bench case M (tests/bench/run.sh, issue 26): what
 * member-list views (PROTOCOL v1.2) cost the gateway and Redis, for each
 * count of list viewers given, against a top-10 view in the same run.
 *
 *   node member_lists.js --port P --key KEY --gateway-pid PID --hz HZ
 *        [--redis-port RP] [--viewers 100,5000] [--members 10000] [--list 50]
 *        [--write-rate 2000] [--phase-s 5] [--procs 4] [--probes 200]
 *        [--quiet-ms 2500] [--template match]
 *
 * Per size N: a fresh board T:M<pid>-<N> (T: --template, `match` unless
 * given: a declared template, such as a sharded one) filled with `members` members
 * (m0..m9, "the leaders", far above the rest, so they make its top 10), then
 * N viewers, each on its own connection with its own list of `list`
 * distinct members drawn at random (a distinct view each), from addresses
 * spread over 127.0.0.0/8 (max_conns_per_ip applies), the connections held
 * by `procs` child processes (this process writes and measures: 5,000
 * sockets and their deltas would not fit one Node loop, nor its fds next to
 * the gateway's). Then `write-rate` incr writes/s for `phase-s` s on one
 * writer connection: 19 of 20 on a random member, 1 of 20 on a leader (so
 * a top 10 moves every tick, as in case A). Measured over the writes:
 *   - Redis calls for list views per second, from the gateway's own counter
 *     rankcast_view_reads_total{view="members"} (one gw_read, one EVALSHA,
 *     per list read; the board has no profiles); for a check, Redis's INFO
 *     commandstats: EVALSHA calls beyond the writes Redis ran on the board
 *     (the growth of its seq) (list reads, and any other read script, such
 *     as the viewer-count pass, together: commandstats cannot tell scripts
 *     apart);
 *   - list deltas delivered, the gateway's CPU (/proc/PID/stat) per list
 *     delta, and the views it looked at per write
 *     (rankcast_views_visited_total{on="event"});
 *   - write-to-screen: from sending a write to a probe viewer's delta
 *     showing the member at that score or past it, for every (write, probe)
 *     pair where the probe lists the member; `probes` viewers spread over the
 *     N are probes (they parse every message; the rest only count them).
 * Then the same N connections drop their lists and subscribe to the board's
 * top 10 (one shared view), and the same writes run again: top-10 deltas,
 * the gateway's CPU per top-10 delta (the same-run reference for a list
 * delta's), write-to-screen of the leaders' writes on the probes.
 * Every write must be acked, and no viewer may be closed: else it exits 1.
 * Prints one JSON line. */
'use strict';

const path = require('node:path');
const { fork, execFileSync } = require('node:child_process');
const WebSocket = require(path.join(__dirname, '..', 'e2e', 'node_modules', 'ws'));

const { arg, cpuTicks } = require('./benchlib');

const now = () => Number(process.hrtime.bigint() / 1000n) / 1000; // ms, CLOCK_MONOTONIC: the same in every process
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const LEADERS = 10;

/* Address number k (1..) as a 127.x.y.z address, never 127.0.0.1; the
 * children take 1..N, this process's own connections 16,000,000 on. */
function address(k) {
  return `127.${1 + ((k >> 16) & 0xff) % 254}.${(k >> 8) & 0xff}.${1 + (k & 0xff) % 254}`;
}

function connect(port, key, k) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(key)}`, 'rankcast.v1',
      { perMessageDeflate: false, localAddress: address(k) });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/* ---- a child: holds its share of the viewers ------------------------------------------------ */

function child() {
  const conns = []; // { ws, sub, probe, list: Set|null, pend: Map member -> [[score, sentAt]...], seen: Map member -> [score, at] }
  let counting = false, deltas = 0, snapshots = 0, errors = 0, closed = 0, lat = [], bytes = 0;
  let cpu0 = null, watch = null; // watch: member -> probes that show it
  const reply = (m) => process.send(m);

  function resolveRow(c, member, score, at) {
    const prev = c.seen.get(member);
    if (!prev || score > prev[0]) c.seen.set(member, [score, at]);
    const p = c.pend.get(member);
    if (!p) return;
    while (p.length && p[0][0] <= score) lat.push(at - p.shift()[1]);
    if (!p.length) c.pend.delete(member);
  }
  function onMessage(c, d) {
    if (d[7] === 100 /* d: {"op":"delta" */) {
      if (counting) { deltas++; bytes += d.length; }
      if (!c.probe) return;
      const at = now();
      const m = JSON.parse(d.toString());
      if (m.rows) for (const r of m.rows) resolveRow(c, r.member, r.score, at);
    } else if (d[7] === 115 /* s: a snapshot past the first is a resync */) {
      if (c.sub && counting) snapshots++;
    } else if (d[7] === 101 /* e */) {
      errors++;
    }
  }
  async function subscribeAll(viewOf) {
    let bad = null;
    await Promise.all(conns.map((c, i) => new Promise((resolve) => {
      const id = `s${i}`;
      const on = (d) => {
        const m = JSON.parse(d.toString());
        if (m.id !== id) return;
        c.ws.off('message', on);
        if (m.op !== 'snapshot') bad = bad || m;
        else {
          c.sub = m.sub;
          if (c.probe) for (const r of m.rows) resolveRow(c, r.member, r.score, now());
        }
        resolve();
      };
      c.ws.on('message', on);
      c.ws.send(JSON.stringify({ op: 'subscribe', id, board: c.board, view: viewOf(c) }));
    })));
    if (bad) throw new Error(`subscribe: ${JSON.stringify(bad)}`);
  }
  function rewatch(listOf) {
    watch = new Map();
    for (const c of conns) {
      if (!c.probe) continue;
      c.pend = new Map();
      c.seen = new Map();
      for (const m of listOf(c)) {
        if (!watch.has(m)) watch.set(m, []);
        watch.get(m).push(c);
      }
    }
  }
  const handlers = {
    async connect(o) {
      const { port, key, board, first, n, listLen, members, probeEvery } = o;
      for (let i = 0; i < n; i += 100) { // 100 handshakes at a time
        const batch = [];
        for (let k = i; k < Math.min(n, i + 100); k++) batch.push(connect(port, key, first + k));
        for (const ws of await Promise.all(batch)) {
          const s = new Set();
          while (s.size < listLen) s.add(`m${Math.floor(Math.random() * members)}`);
          const c = { ws, board, sub: null, probe: (first + conns.length) % probeEvery === 0, list: [...s], pend: new Map(), seen: new Map() };
          ws.on('close', () => { closed++; });
          conns.push(c);
        }
      }
      rewatch((c) => c.list);
      await subscribeAll((c) => ({ members: c.list }));
      for (const c of conns) c.ws.on('message', (d) => onMessage(c, d));
      return { conns: conns.length, probes: conns.filter((c) => c.probe).length };
    },
    async top() { // every connection: its list out, the board's top 10 in
      await Promise.all(conns.map((c, i) => new Promise((resolve, reject) => {
        const id = `u${i}`;
        const on = (d) => {
          const m = JSON.parse(d.toString());
          if (m.id !== id) return;
          c.ws.off('message', on);
          if (m.op !== 'unsubscribed') reject(new Error(`unsubscribe: ${JSON.stringify(m)}`));
          else resolve();
        };
        c.ws.on('message', on);
        c.ws.send(JSON.stringify({ op: 'unsubscribe', id, sub: c.sub }));
      })));
      for (const c of conns) c.sub = null;
      const leaders = Array.from({ length: LEADERS }, (_, k) => `m${k}`);
      rewatch(() => leaders);
      await subscribeAll(() => ({ top: 10 }));
      return {};
    },
    start() {
      deltas = 0; snapshots = 0; errors = 0; bytes = 0; lat = [];
      cpu0 = process.cpuUsage();
      counting = true;
      return {};
    },
    stop() {
      counting = false;
      const u = process.cpuUsage(cpu0);
      return { deltas, snapshots, errors, bytes, cpu_ms: (u.user + u.system) / 1000 };
    },
    writes(o) { // [member, score it makes, sent at] of writes just sent
      for (const [m, score, at] of o.w) {
        const cs = watch && watch.get(m);
        if (!cs) continue;
        for (const c of cs) {
          const seen = c.seen.get(m);
          if (seen && seen[0] >= score) { lat.push(Math.max(0, seen[1] - at)); continue; } // (its delta came before this note)
          if (!c.pend.has(m)) c.pend.set(m, []);
          c.pend.get(m).push([score, at]);
        }
      }
      return null;
    },
    latency() { // after the settle: what the probes saw, and what they never did
      let unseen = 0;
      for (const c of conns) if (c.probe) for (const p of c.pend.values()) unseen += p.length;
      const out = { lat, unseen, errors, closed };
      lat = [];
      return out;
    },
    async close() { // this size is over: every connection closes (the next size opens its own)
      for (const c of conns) c.ws.removeAllListeners('close');
      await Promise.all(conns.map((c) => new Promise((resolve) => {
        if (c.ws.readyState === WebSocket.CLOSED) return resolve();
        c.ws.once('close', resolve);
        c.ws.close();
        setTimeout(() => { c.ws.terminate(); resolve(); }, 2000);
      })));
      conns.length = 0;
      closed = 0;
      watch = null;
      return {};
    },
  };
  process.on('message', async (m) => {
    try {
      const r = await handlers[m.cmd](m);
      if (r) reply(Object.assign({ seq: m.seq }, r));
    } catch (e) {
      reply({ seq: m.seq, error: String(e.stack || e) });
    }
  });
}

/* ---- the parent: fills, writes, measures ---------------------------------------------------- */

async function main() {
  const port = Number(arg('port'));
  const key = arg('key');
  const gwPid = Number(arg('gateway-pid'));
  const hz = Number(arg('hz', 100));
  const redisPort = Number(arg('redis-port', 0));
  const sizes = String(arg('viewers', '100,5000')).split(',').map(Number);
  const members = Number(arg('members', 10000));
  const listLen = Number(arg('list', 50));
  const writeRate = Number(arg('write-rate', 2000));
  const phaseS = Number(arg('phase-s', 5));
  const nprocs = Number(arg('procs', 4));
  const nprobes = Number(arg('probes', 200));
  const quietMs = Number(arg('quiet-ms', 2500)); // a viewer-count pass (2 s) goes by before measuring
  const settleMs = Number(arg('settle-ms', 2000)); // after the writes, for the probes' last deltas
  const template = String(arg('template', 'match')); // a declared template (e.g. a sharded one)
  const base = `http://127.0.0.1:${port}`;
  const cpuMs = () => (gwPid ? (cpuTicks(gwPid) * 1000) / hz : 0);
  let own = 16000000; // this process's addresses
  const { requestAll } = require(path.join(__dirname, '..', 'e2e', 'harness'));
  const exchange = (ws, reqs) => requestAll(ws, reqs.map((r, i) => Object.assign({ id: `x${i}` }, r)), 120000, { cork: true });

  async function metrics() {
    const r = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
    const t = await r.text();
    const get = (re) => { const m = re.exec(t); return m ? Number(m[1]) : 0; };
    return {
      list_reads: get(/^rankcast_view_reads_total\{view="members"\} (\d+)$/m),
      visited: get(/^rankcast_views_visited_total\{on="event"\} (\d+)$/m),
      deltas_sent: get(/^rankcast_deltas_sent_total (\d+)$/m),
    };
  }
  /* Redis's own count of calls per command, and the writes it ran on the
   * board (its seq: one per write), read back to back. */
  function redisCounts(board) {
    if (!redisPort) return null;
    const cli = (...a) => execFileSync('redis-cli', ['-p', String(redisPort), ...a], { encoding: 'utf8' });
    const seq = Number(cli('GET', `rc:{${board}|}:seq`).trim()) || 0;
    const calls = {};
    for (const m of cli('INFO', 'commandstats').matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1]] = Number(m[2]);
    return { seq, calls };
  }

  // the children, and a request/answer channel to each
  const kids = [];
  for (let i = 0; i < nprocs; i++) {
    const p = fork(__filename, ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const k = { p, seq: 0, wait: new Map() };
    p.on('message', (m) => {
      const w = k.wait.get(m.seq);
      if (!w) return;
      k.wait.delete(m.seq);
      if (m.error) w.reject(new Error(`child ${i}: ${m.error}`)); else w.resolve(m);
    });
    p.on('exit', (code) => {
      for (const w of k.wait.values()) w.reject(new Error(`child ${i} exited ${code}`));
      k.wait.clear();
    });
    kids.push(k);
  }
  const ask = (k, cmd, o = {}) => new Promise((resolve, reject) => {
    const seq = ++k.seq;
    const timer = setTimeout(() => { k.wait.delete(seq); reject(new Error(`child: no answer to ${cmd} in 300 s`)); }, 300000);
    k.wait.set(seq, { resolve: (m) => { clearTimeout(timer); resolve(m); }, reject: (e) => { clearTimeout(timer); reject(e); } });
    k.p.send(Object.assign({ cmd, seq }, o));
  });
  const all = (cmd, o) => Promise.all(kids.map((k) => ask(k, cmd, o)));
  const tell = (cmd, o) => { for (const k of kids) k.p.send(Object.assign({ cmd, seq: 0 }, o)); };
  const cpuKids = () => kids.reduce((s, k) => s + (cpuTicks(k.p.pid) * 1000) / hz, 0);

  async function fill(board, score) {
    const ws = await connect(port, key, own++);
    for (let i = 0; i < members; i += 500) {
      const reqs = [];
      for (let k = i; k < i + 500 && k < members; k++) {
        score.set(`m${k}`, k < LEADERS ? 1000000 + k : 1000 + (k % 997));
        reqs.push({ op: 'set', board, member: `m${k}`, value: score.get(`m${k}`) });
      }
      const bad = (await exchange(ws, reqs)).find((m) => m.op !== 'ack');
      if (bad) throw new Error(`fill: ${JSON.stringify(bad)}`);
    }
    ws.close();
  }

  /* One phase of writes: returns what it measured. */
  async function phase(board, score, writer, acks) {
    await sleep(quietMs);
    const m0 = await metrics();
    const cs0 = redisCounts(board);
    const acked0 = acks.ok;
    await all('start');
    const c0 = cpuMs(), k0 = cpuKids(), me0 = process.cpuUsage();
    const t0 = now();
    let writes = 0, batch = [];
    while (now() - t0 < phaseS * 1000) {
      const target = Math.floor(((now() - t0) / 1000) * writeRate);
      const at = now();
      writer.ws._socket.cork();
      for (; writes < target; writes++) {
        const m = writes % 20 === 0 ? `m${(writes / 20) % LEADERS}` : `m${LEADERS + Math.floor(Math.random() * (members - LEADERS))}`;
        const delta = 1 + (writes % 7);
        const s = score.get(m) + delta;
        score.set(m, s);
        batch.push([m, s, at]);
        writer.ws.send(`{"op":"incr","board":"${board}","member":"${m}","delta":${delta}}`);
      }
      writer.ws._socket.uncork();
      if (batch.length) { tell('writes', { w: batch }); batch = []; }
      await sleep(2);
    }
    const secs = (now() - t0) / 1000;
    const cpu = cpuMs() - c0, kidsCpu = cpuKids() - k0, meU = process.cpuUsage(me0);
    const m1 = await metrics();
    const cs1 = redisCounts(board);
    const seen = await all('stop');
    const acked = acks.ok - acked0;
    // the last writes' deltas: wait for the acks, then a settle
    for (let i = 0; i < 500 && acks.ok < acks.sent; i++) await sleep(10);
    await sleep(settleMs);
    const lats = await all('latency');
    const lat = lats.flatMap((l) => l.lat).sort((a, b) => a - b);
    const sum = (f) => seen.reduce((s, x) => s + x[f], 0);
    const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : null);
    let evalsha = null, ran = null; // EVALSHA calls, and the writes Redis ran, in the phase
    if (cs0 && cs1) {
      evalsha = (cs1.calls.evalsha || 0) - (cs0.calls.evalsha || 0);
      ran = cs1.seq - cs0.seq;
    }
    const deltas = sum('deltas');
    return {
      writes, acked_in_phase: acked, seconds: secs,
      list_reads: m1.list_reads - m0.list_reads,
      evalsha_calls: evalsha, writes_redis_ran: ran,
      evalsha_beyond_writes_per_s: evalsha === null ? null : (evalsha - ran) / secs,
      views_visited_per_write: writes ? (m1.visited - m0.visited) / writes : null,
      deltas, deltas_per_s: deltas / secs, delta_bytes_avg: deltas ? sum('bytes') / deltas : null,
      resyncs: sum('snapshots'), gateway_deltas_sent: m1.deltas_sent - m0.deltas_sent,
      gateway_cpu_ms: cpu, gateway_cpu_share: cpu / (secs * 1000),
      gateway_cpu_us_per_delta: deltas ? (cpu * 1000) / deltas : null,
      clients_cpu_share: kidsCpu / (secs * 1000),
      writer_cpu_share: (meU.user + meU.system) / 1000 / (secs * 1000),
      write_to_screen_p50_ms: pct(0.5), write_to_screen_p99_ms: pct(0.99), write_to_screen_max_ms: lat.length ? lat[lat.length - 1] : null,
      write_to_screen_n: lat.length, write_to_screen_unseen: lats.reduce((s, l) => s + l.unseen, 0),
      errors: lats.reduce((s, l) => s + l.errors, 0), closed: lats.reduce((s, l) => s + l.closed, 0),
      load: require('node:os').loadavg().map((x) => Math.round(x * 100) / 100),
    };
  }

  const tStart = now();
  const log = (what) => process.stderr.write(`member_lists: ${((now() - tStart) / 1000).toFixed(2)} s: ${what}\n`);
  async function one(N) {
    const board = `${template}:M${process.pid}-${N}`;
    const score = new Map();
    log(`${N} viewers: filling ${board}`);
    await fill(board, score);
    log(`${N} viewers: connecting and subscribing`);
    const t0 = now();
    const share = Math.ceil(N / kids.length);
    const probeEvery = Math.max(1, Math.floor(N / nprobes));
    const got = await Promise.all(kids.map((k, i) => ask(k, 'connect', {
      port, key, board, first: 1 + i * share, n: Math.max(0, Math.min(share, N - i * share)), listLen, members, probeEvery,
    })));
    const subscribeS = (now() - t0) / 1000;
    const writer = { ws: await connect(port, key, own++) };
    const acks = { ok: 0, bad: 0, sent: 0, first: null };
    writer.ws.on('message', (d) => {
      if (d[7] === 97 /* a: ack */) acks.ok++;
      else { acks.bad++; if (!acks.first) acks.first = d.toString().slice(0, 300); }
    });
    const origSend = writer.ws.send.bind(writer.ws);
    writer.ws.send = (s) => { acks.sent++; origSend(s); };
    log(`${N} viewers: writes to the lists`);
    const lists = await phase(board, score, writer, acks);
    log(`${N} viewers: to the top 10`);
    const topT0 = now();
    await all('top');
    const switchS = (now() - topT0) / 1000;
    log(`${N} viewers: writes to the top 10`);
    const top = await phase(board, score, writer, acks);
    for (let i = 0; i < 500 && acks.ok + acks.bad < acks.sent; i++) await sleep(10);
    log(`${N} viewers: closing`);
    writer.ws.close();
    await all('close');
    log(`${N} viewers: closed`);
    if (acks.bad || acks.ok !== acks.sent) throw new Error(`writes: ${acks.ok} acked of ${acks.sent} (${acks.bad} answered otherwise; first: ${acks.first})`);
    for (const [name, p] of [['lists', lists], ['top-10', top]]) {
      if (p.closed) throw new Error(`${name}: ${p.closed} viewer connections closed during the phase`);
      if (p.errors) throw new Error(`${name}: ${p.errors} error messages to viewers`);
    }
    return {
      viewers: N, connections: got.reduce((s, g) => s + g.conns, 0), probes: got.reduce((s, g) => s + g.probes, 0),
      subscribe_s: subscribeS, switch_s: switchS, lists, top10: top,
      list_reads_per_s: lists.list_reads / lists.seconds,
      cpu_per_delta_lists_vs_top10: lists.gateway_cpu_us_per_delta && top.gateway_cpu_us_per_delta
        ? lists.gateway_cpu_us_per_delta / top.gateway_cpu_us_per_delta : null,
    };
  }

  const out = { label: 'M', members, list: listLen, write_rate: writeRate, phase_s: phaseS, procs: nprocs, sizes: [] };
  try {
    for (const N of sizes) {
      const res = await one(N);
      process.stderr.write(`member_lists: ${JSON.stringify(res)}\n`);
      out.sizes.push(res);
    }
  } finally {
    for (const k of kids) k.p.kill();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

if (process.argv.includes('--child')) {
  child();
} else {
  main().then(() => process.exit(0), (e) => {
    process.stderr.write(`member_lists: ${e.stack || e}\n`);
    process.exit(1);
  });
}
