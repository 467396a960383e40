#!/usr/bin/env node
/* report.js - the benchmark runner's helper (tests/bench/run.sh calls it).
 *
 *   node report.js monitor-args FILE MEMBER REPLACEMENT
 *     FILE holds one line of Redis MONITOR output; prints its command's
 *     arguments, NUL-terminated, with MEMBER replaced by REPLACEMENT inside
 *     each argument (so redis-benchmark can vary the member).
 *
 *   node report.js floor-args FILE TICK_MS
 *     FILE is a K case's rankcast-bench JSON; prints "CONNS TICK_RATE PAYLOAD"
 *     for send_floor: its viewers, the deltas each viewer got per second
 *     (1000 / TICK_MS when none were counted) and their average size in bytes.
 *
 *   node report.js m-floor-args FILE PHASE
 *     FILE is case M's JSON, PHASE lists or top10; the same for its largest
 *     size's phase (its viewers, deltas per viewer per s, mean delta size).
 *
 *   node report.js report DIR --cases A,B,... (--smoke | --out FILE)
 *     Reads DIR/meta.env, DIR/<case>.json (rankcast-bench's JSON lines, and
 *     send_floor's for K: DIR/K<n>-floor.json) and
 *     DIR/C-ceiling*.csv, DIR/L-*-ceiling*.csv (redis-benchmark --csv),
 *     prints the table, and:
 *     --out FILE   writes the report there; the part of an existing FILE from
 *                  the "analysis" marker on (hand-written) is kept;
 *     --smoke      checks that the tool and the gateway work (not their
 *                  speed) and exits 1 when they do not.
 *     Case L fails (exit 1, after the report is written) when any write was
 *     answered anything but an ack, on one Redis or on the cluster.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ANALYSIS_MARK = '<!-- analysis: hand-written below this line; tests/bench/run.sh keeps it -->';

/* ---- monitor-args ---------------------------------------------------------------------- */

// Splits MONITOR's "arg" "arg" ... (sdscatrepr quoting) into strings.
function monitorArgs(line) {
  const start = line.indexOf('] ');
  if (start < 0) throw new Error('not a MONITOR line');
  const s = line.slice(start + 2).trim();
  const args = [];
  let i = 0;
  while (i < s.length) {
    while (s[i] === ' ') i++;
    if (i >= s.length) break;
    if (s[i] !== '"') throw new Error(`unexpected ${s[i]} at ${i}`);
    i++;
    let cur = '';
    while (i < s.length && s[i] !== '"') {
      if (s[i] === '\\') {
        const c = s[i + 1];
        const simple = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '"': '"', '\\': '\\' };
        if (c === 'x') {
          cur += String.fromCharCode(parseInt(s.slice(i + 2, i + 4), 16));
          i += 4;
        } else {
          cur += simple[c] !== undefined ? simple[c] : c;
          i += 2;
        }
      } else {
        cur += s[i++];
      }
    }
    i++;
    args.push(cur);
  }
  return args;
}

/* ---- report ------------------------------------------------------------------------------- */

function readMeta(dir) {
  const meta = {};
  const text = fs.readFileSync(path.join(dir, 'meta.env'), 'utf8');
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) meta[line.slice(0, i)] = line.slice(i + 1);
  }
  return meta;
}

function readJson(dir, name) {
  try {
    const text = fs.readFileSync(path.join(dir, `${name}.json`), 'utf8').trim();
    return text ? JSON.parse(text.split('\n').pop()) : null;
  } catch (e) {
    return null;
  }
}

function ceilingRps(dir, file = 'C-ceiling.csv') {
  try {
    // Only an EVALSHA line counts: redis-benchmark's default tests (PING,
    // SET, ...) would otherwise pass for the ceiling.
    const lines = fs.readFileSync(path.join(dir, file), 'utf8').trim().split('\n');
    const hits = lines.map((l) => /^"(EVALSHA[^"]*)","([0-9.]+)"/i.exec(l)).filter(Boolean);
    return hits.length === 1 ? Number(hits[0][2]) : null;
  } catch (e) {
    return null;
  }
}

const fmt = (x, d = 1) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : Number(x).toFixed(d));
const int = (x) => (x === null || x === undefined ? 'n/a' : Math.round(x).toLocaleString('en-US'));
const lat = (j) => j && j.latency_ms.n
  ? `p50 ${fmt(j.latency_ms.p50)} / p90 ${fmt(j.latency_ms.p90)} / p99 ${fmt(j.latency_ms.p99)} / p99.9 ${fmt(j.latency_ms.p999)} / max ${fmt(j.latency_ms.max)} ms`
  : 'no samples';
// The gateway's own share of the ack time (rankcast_script_rtt_seconds over
// the run, rankcast-bench's "gateway_rtt"): the bucket bound under which a
// fraction q of the writes' round trips fell, as "≤ X ms" (or "> X ms").
const gwRtt = (j, q) => {
  const g = j && j.gateway_rtt;
  if (!g || !g.ok || !g.cum.length) return 'n/a';
  const total = g.cum[g.cum.length - 1];
  if (!total) return 'n/a';
  for (let i = 0; i < g.cum.length; i++)
    if (g.cum[i] >= q * total) return g.le_ms[i] < 0 ? `> ${g.le_ms[i - 1]} ms` : `≤ ${g.le_ms[i]} ms`;
  return 'n/a';
};
const errorsOf = (j) => j.writes.errors + j.writes.lost + j.closes + j.connect.sub_errors + j.connect.connect_errors;

function evaluate(dir, cases, smoke) {
  const meta = readMeta(dir);
  const tick = Number(meta.tick_ms || 50);
  const rows = [];    // the table: case, target, measured, result
  const details = []; // per-case numbers
  const broken = [];  // smoke: the tool or gateway does not work

  const detail = (name, j) => {
    if (!j) return;
    details.push({
      name,
      latency: lat(j),
      ack: j.ack_ms.n ? `p50 ${fmt(j.ack_ms.p50)} / p99 ${fmt(j.ack_ms.p99)} ms${j.gateway_rtt && j.gateway_rtt.ok ? ` (in the gateway: p99 ${gwRtt(j, 0.99)})` : ''}` : '',
      writes: `${int(j.writes.acked)} acked of ${int(j.writes.sent)} sent (${int(j.writes.acked_per_s)}/s), ${j.writes.errors} errors`,
      deliveries: j.deliveries.write_deliveries
        ? `${int(j.deliveries.messages_per_s)} deltas/s (${fmt(j.deliveries.messages_per_s / (j.viewers || 1))} per viewer per s), ${int(j.deliveries.write_deliveries)} of ${int(j.deliveries.expected)} (write, viewer) pairs seen, ${j.deliveries.resyncs} resyncs, ${j.deliveries.viewers_behind} viewers behind at the end`
        : '',
      gateway: j.gateway ? `${fmt(j.gateway.cpu_s, 2)} CPU s (${fmt(j.gateway.cpu_per_s * 100, 0)} % of a core${j.deliveries.messages ? `, ${fmt((j.gateway.cpu_s * 1e6) / j.deliveries.messages, 1)} µs per delta delivered` : `, ${fmt((j.gateway.cpu_s * 1e6) / (j.writes.acked || 1), 1)} µs per write`}), peak RSS ${int(j.gateway.peak_rss_kb / 1024)} MiB` : '',
      bench: `${fmt(j.bench_cpu_s, 2)} CPU s; its own loop stalled up to ${fmt(j.bench_tick_gap_ms.max)} ms (p99 ${fmt(j.bench_tick_gap_ms.p99)})`,
      load: meta[`load_${name}`] || '',
    });
  };
  const floorDetail = (name, f) => {
    if (!f) return;
    details.push({
      name,
      latency: '', ack: '', writes: '',
      deliveries: `send_floor: ${int(f.frames_per_s)} frames/s of ${int(f.frame_bytes)} bytes (${int(f.payload_bytes)} of payload) to ${int(f.conns)} loopback sockets (${fmt(f.tick_rate)} per socket per s) for ${fmt(f.duration_s)} s, ${int(f.frames)} frames; ${int(f.eagain)} sends refused (EAGAIN), ${int(f.short_sends)} short, ${int(f.late_ticks)} late ticks; ${f.bytes_read === f.bytes_sent ? 'every byte read back' : `${int(f.bytes_read)} of ${int(f.bytes_sent)} bytes read back`}${f.fatal ? `; ${f.fatal}` : ''}`,
      gateway: '-',
      bench: `sender ${fmt(f.sender.cpu_s, 3)} CPU s = ${fmt(f.sender.us_per_frame, 2)} µs per frame (user ${fmt(f.sender.user_s, 3)} / system ${fmt(f.sender.sys_s, 3)} s); reader ${fmt(f.reader.cpu_s, 3)} CPU s = ${fmt(f.reader.us_per_frame, 2)} µs per frame`,
      load: meta[`load_${name}`] || '',
    });
  };
  const need = (name, j, checks) => {
    if (!j) { broken.push(`${name}: no result from rankcast-bench (see its log)`); return; }
    if (j.fatal) broken.push(`${name}: ${j.fatal}`);
    for (const [ok, what] of checks) if (!ok) broken.push(`${name}: ${what}`);
  };

  if (cases.includes('A')) {
    const j = readJson(dir, 'A');
    const target = `p99 write-to-screen ≤ tick + 20 ms = ${tick + 20} ms`;
    if (j) {
      const pass = j.latency_ms.n > 0 && j.latency_ms.p99 <= tick + 20;
      rows.push([`A. ${int(j.viewers)} viewers of one top-10, ${int(j.rate)} writes/s`, target,
        `${lat(j)}; ${int(j.connect.subscribed)} subscribed, ${int(j.writes.acked_per_s)} writes/s acked, ${int(j.deliveries.messages_per_s)} deltas/s delivered (${fmt(j.deliveries.messages_per_s / (j.viewers || 1))} per viewer per s), ${j.deliveries.resyncs} resyncs`,
        pass ? 'pass' : 'miss']);
    } else rows.push(['A. fan-out to one top-10', target, 'did not run', 'error']);
    detail('A', j);
    need('A', j, j ? [[j.connect.subscribed === j.viewers, 'not every viewer subscribed'],
      [j.writes.sent > 0 && j.writes.acked === j.writes.sent, 'writes unanswered'],
      [j.latency_ms.n > 0, 'no deliveries measured'], [j.deliveries.viewers_behind === 0, 'viewers missed writes'],
      [j.deliveries.unmatched === 0, 'deliveries without a write'], [j.closes === 0, 'connections closed']] : []);
  }
  if (cases.includes('B')) {
    const j = readJson(dir, 'B');
    const target = `p99 ≤ ${tick + 20} ms, no errors`;
    if (j) {
      const errs = errorsOf(j);
      const pass = j.latency_ms.n > 0 && j.latency_ms.p99 <= tick + 20 && errs === 0;
      rows.push([`B. ${int(j.viewers)} viewers over ${j.boards} boards, ${int(j.rate)} writes/s`, target,
        `${lat(j)}; ${errs} errors (${j.writes.errors} error replies, ${j.closes} closes), ${int(j.writes.acked_per_s)} writes/s acked, ${int(j.deliveries.messages_per_s)} deltas/s delivered (${fmt(j.deliveries.messages_per_s / (j.viewers || 1))} per viewer per s)`,
        pass ? 'pass' : 'miss']);
    } else rows.push(['B. 100 boards', target, 'did not run', 'error']);
    detail('B', j);
    need('B', j, j ? [[j.connect.subscribed === j.viewers, 'not every viewer subscribed'],
      [j.writes.sent > 0 && j.writes.acked === j.writes.sent, 'writes unanswered'],
      [j.latency_ms.n > 0, 'no deliveries measured'], [j.deliveries.viewers_behind === 0, 'viewers missed writes'],
      [errorsOf(j) === 0, 'errors']] : []);
  }
  if (cases.includes('C')) {
    // rounds r = 1..n: ceiling r (gateway stopped), then case C r (the gateway)
    const rounds = [];
    for (let r = 1; fs.existsSync(path.join(dir, `C${r}.json`)) || fs.existsSync(path.join(dir, `C-ceiling${r}.csv`)); r++) {
      const j = readJson(dir, `C${r}`);
      const ceil = ceilingRps(dir, `C-ceiling${r}.csv`);
      rounds.push({ r, j, ceil, ratio: j && ceil ? j.writes.acked_per_s / ceil : null });
      detail(`C${r}`, j);
    }
    const ok = rounds.filter((x) => x.ratio !== null).sort((x, y) => x.ratio - y.ratio);
    const mid = ok.length ? ok[Math.floor((ok.length - 1) / 2)] : null;
    const piped = ceilingRps(dir, 'C-ceiling-pipelined.csv');
    const j16 = readJson(dir, 'C16');
    const target = '≥ 70 % of the same-run EVALSHA ceiling';
    if (mid) {
      const j = mid.j;
      let more = '';
      if (rounds.length > 1) more += ` (median of ${rounds.length} back-to-back rounds: ${rounds.map((x) => `${int(x.j ? x.j.writes.acked_per_s : null)} / ${int(x.ceil)} = ${fmt(x.ratio * 100)} %`).join('; ')})`;
      if (piped) more += `. For context, Redis pipelined (-c 1 -P ${j.writers}, how the gateway itself talks to Redis): ${int(piped)} EVALSHA/s`;
      if (j16) more += `; with 16 writes in flight per connection the gateway acked ${int(j16.writes.acked_per_s)}/s${piped ? ` (${fmt((j16.writes.acked_per_s / piped) * 100)} % of pipelined Redis)` : ''}`;
      rows.push([`C. write throughput, no viewers, ${j.writers} writer connections, 1 write in flight each`, target,
        `${int(j.writes.acked_per_s)} writes/s vs ${int(mid.ceil)} EVALSHA/s (redis-benchmark -c ${j.writers}, 1 in flight each) = ${fmt(mid.ratio * 100)} %; ack p50 ${fmt(j.ack_ms.p50)} / p99 ${fmt(j.ack_ms.p99)} ms${more}`,
        mid.ratio >= 0.7 ? 'pass' : 'miss']);
    } else rows.push(['C. write throughput', target, rounds.length ? 'no ceiling or no result' : 'did not run', 'error']);
    detail('C16', j16);
    for (const x of rounds) {
      need(`C${x.r}`, x.j, x.j ? [[x.j.writes.acked > 0, 'no write acked'], [x.j.writes.errors === 0, 'error replies']] : []);
      if (!x.ceil) broken.push(`C: redis-benchmark round ${x.r} gave no ceiling`);
    }
    if (!rounds.length) broken.push('C: did not run');
  }
  if (cases.includes('D')) {
    const procs = [];
    for (let i = 0; fs.existsSync(path.join(dir, `D${i}.json`)); i++) procs.push(readJson(dir, `D${i}`));
    const want = procs.reduce((s, j) => s + (j ? j.viewers : 0), 0);
    const held = procs.reduce((s, j) => s + (j ? j.held : 0), 0);
    const before = Number(meta.D_rss_before_kb), after = Number(meta.D_rss_held_kb);
    const perConn = held ? (after - before) / held : null;
    const target = 'all held; ≤ 10 KiB of gateway RSS per connection';
    rows.push([`D. ${int(want)} idle subscribed connections (${procs.length} bench processes)`, target,
      `${int(held)} held at the end (gateway counted ${int(Number(meta.D_gateway_connections))}); gateway RSS ${int(before / 1024)} → ${int(after / 1024)} MiB = ${fmt(perConn, 2)} KiB per connection`,
      procs.length && held === want && perConn !== null && perConn <= 10 ? 'pass' : 'miss']);
    details.push({ name: 'D', latency: '', ack: '', writes: '',
      deliveries: procs.map((j, i) => (j ? `D${i}: ${j.held} held, connected in ${fmt(j.connect.seconds)} s, ${j.connect.connect_errors} connect errors, ${j.closes} closes` : `D${i}: no result`)).join('; '),
      gateway: `RSS before ${int(before)} KiB, with the connections ${int(after)} KiB`, bench: '', load: meta.load_D || '' });
    if (!procs.length || procs.some((j) => !j)) broken.push('D: an idle bench gave no result');
    else if (held !== want) broken.push(`D: ${held} of ${want} connections held`);
  }
  if (cases.includes('E')) {
    const j = readJson(dir, 'E');
    const target = "every viewer's window equals Redis within 1 s after the burst";
    if (j && j.verify) {
      const v = j.verify;
      const pass = v.within_1s === j.viewers && v.equal_at_end === j.viewers && !v.error;
      rows.push([`E. burst: ${int(j.writes.sent)} writes in ${fmt(j.writes.seconds, 2)} s to one board, ${int(j.viewers)} viewers`, target,
        `${int(v.within_1s)} of ${int(j.viewers)} equal within 1 s (last at ${fmt(v.max_converge_ms)} ms after the last write was sent), ${int(v.equal_at_end)} equal at the end${v.error ? `; ${v.error}` : ''}`,
        pass ? 'pass' : 'miss']);
    } else rows.push(['E. burst', target, 'did not run', 'error']);
    detail('E', j);
    need('E', j, j ? [[j.verify && j.verify.equal_at_end === j.viewers, 'windows differ from Redis'],
      [j.writes.acked === j.writes.sent, 'writes unanswered'],
      // (a write issued but never sent kept --verify from ever reading Redis's window)
      [j.writes.issued === j.writes.sent, `${j.writes.issued - j.writes.sent} writes issued were never sent`],
      [!j.writes.reissued, `a writer closed: ${j.writes.reissued} of its writes went to the others`]] : []);
  }
  if (cases.includes('F')) {
    const j = readJson(dir, 'F');
    const target = 'first delivery at once: p50 ≤ 5 ms and p99 ≤ 20 ms write-to-screen';
    if (j) {
      const pass = j.latency_ms.n > 0 && j.latency_ms.p50 <= 5 && j.latency_ms.p99 <= 20;
      rows.push([`F. first delivery: ${int(j.viewers)} viewers of one top-10, ${int(j.rate)} writes/s (each on a quiet board)`, target,
        `${lat(j)}; ${int(j.writes.acked)} writes acked, ${int(j.deliveries.write_deliveries)} of ${int(j.deliveries.expected)} (write, viewer) pairs seen`,
        pass ? 'pass' : 'miss']);
    } else rows.push(['F. first delivery', target, 'did not run', 'error']);
    detail('F', j);
    need('F', j, j ? [[j.connect.subscribed === j.viewers, 'not every viewer subscribed'],
      [j.writes.sent > 0 && j.writes.acked === j.writes.sent, 'writes unanswered'],
      [j.latency_ms.n > 0, 'no deliveries measured'], [j.deliveries.viewers_behind === 0, 'viewers missed writes'],
      [j.closes === 0, 'connections closed']] : []);
  }
  if (cases.includes('Q')) {
    const j = readJson(dir, 'Q');
    const target = 'ack p99 ≤ 20 ms while the fan-out runs';
    if (j) {
      const pass = j.ack_ms.n > 0 && j.ack_ms.p99 <= 20;
      rows.push([`Q. acks under load: ${int(j.viewers)} viewers of one top-10, ${int(j.rate)} writes/s`, target,
        `ack p50 ${fmt(j.ack_ms.p50)} / p99 ${fmt(j.ack_ms.p99)} / max ${fmt(j.ack_ms.max)} ms (of which in the gateway, from handling the request to its script's reply: p50 ${gwRtt(j, 0.5)}, p99 ${gwRtt(j, 0.99)}); ${int(j.writes.acked_per_s)} writes/s acked; write-to-screen ${lat(j)}; ${int(j.deliveries.messages_per_s)} deltas/s delivered, ${j.deliveries.resyncs} resyncs`,
        pass ? 'pass' : 'miss']);
    } else rows.push(['Q. acks under load', target, 'did not run', 'error']);
    detail('Q', j);
    need('Q', j, j ? [[j.connect.subscribed === j.viewers, 'not every viewer subscribed'],
      [j.writes.sent > 0 && j.writes.acked === j.writes.sent, 'writes unanswered'],
      [j.ack_ms.n > 0, 'no acks measured'], [j.closes === 0, 'connections closed']] : []);
  }
  // K: case A's write rate at growing viewer counts (where p99 crosses the target)
  const knee = [];
  if (cases.includes('K')) {
    const names = fs.readdirSync(dir).filter((f) => /^K[0-9]+\.json$/.test(f)).map((f) => f.slice(0, -5))
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
    for (const name of names) {
      const j = readJson(dir, name);
      if (!j) continue;
      detail(name, j);
      // the floor: send_floor with this run's connections, deltas per viewer per s and delta size
      const f = readJson(dir, `${name}-floor`);
      floorDetail(`${name}-floor`, f);
      const gwUs = j.gateway && j.deliveries.messages ? (j.gateway.cpu_s * 1e6) / j.deliveries.messages : null;
      const floorUs = f && !f.fatal && f.frames ? f.sender.us_per_frame : null;
      knee.push([int(j.viewers), int(j.writes.acked_per_s), fmt(j.latency_ms.p50), fmt(j.latency_ms.p99), fmt(j.latency_ms.max),
        int(j.deliveries.messages_per_s), j.gateway ? `${fmt(j.gateway.cpu_per_s * 100, 0)} %` : 'n/a',
        fmt(gwUs, 1), fmt(floorUs, 1), gwUs !== null && floorUs ? `${fmt(gwUs / floorUs, 1)}×` : 'n/a',
        `${fmt((j.bench_cpu_s / (j.measured_s || 1)) * 100, 0)} %`, j.latency_ms.p99 <= tick + 20 ? 'pass' : 'miss']);
      if (!f) broken.push(`${name}-floor: no result from send_floor (see its log)`);
      else {
        if (f.fatal) broken.push(`${name}-floor: ${f.fatal}`);
        if (!(f.frames > 0)) broken.push(`${name}-floor: no frames sent`);
        if (f.bytes_read !== f.bytes_sent) broken.push(`${name}-floor: ${f.bytes_read} bytes read of ${f.bytes_sent} sent`);
        if (f.conns !== j.viewers) broken.push(`${name}-floor: ${f.conns} connections, the case had ${j.viewers} viewers`);
      }
    }
  }
  // L: case C's writers over many boards, one Redis and a 3-primary cluster
  const many = { rounds: [], failed: [] };
  if (cases.includes('L')) {
    const has = (f) => fs.existsSync(path.join(dir, f));
    // "H:P boards writes cpu_s" lines from run.sh, per set-up and round
    const nodesOf = (name) => Object.keys(meta).filter((k) => k.startsWith(`${name}_node`)).sort().map((k) => {
      const [node, boards, writes, cpu] = meta[k].split(' ');
      return { node, boards: Number(boards), writes: Number(writes), cpu: Number(cpu) };
    });
    const ceilNodes = (r) => [0, 1, 2].map((i) => {
      const [node, c, n] = (meta[`L-cluster-ceiling${r}_${i}`] || '? ? ?').split(' ');
      return { node, c: Number(c), n: Number(n), rps: ceilingRps(dir, `L-cluster-ceiling${r}-${i}.csv`) };
    });
    for (let r = 1; has(`L-one${r}.json`) || has(`L-cluster${r}.json`) || has(`L-one-ceiling${r}.csv`); r++) {
      const one = readJson(dir, `L-one${r}`), clu = readJson(dir, `L-cluster${r}`);
      const oneCeil = ceilingRps(dir, `L-one-ceiling${r}.csv`);
      const cn = ceilNodes(r);
      const cluCeil = cn.every((x) => x.rps) ? cn.reduce((s, x) => s + x.rps, 0) : null;
      const wall = Number(meta[`L-cluster-ceiling${r}_wall_ms`]);
      const cluWall = cn.every((x) => x.n) && wall ? cn.reduce((s, x) => s + x.n, 0) / (wall / 1000) : null;
      const round = { r, one, clu, oneCeil, cn, cluCeil, cluWall, oneNodes: nodesOf(`L-one${r}`), cluNodes: nodesOf(`L-cluster${r}`),
        metrics: meta[`L-cluster${r}_metrics`] || '' };
      many.rounds.push(round);
      detail(`L-one${r}`, one);
      detail(`L-cluster${r}`, clu);
      for (const [name, j, nodes] of [[`L-one${r}`, one, round.oneNodes], [`L-cluster${r}`, clu, round.cluNodes]]) {
        const landed = nodes.reduce((s, x) => s + x.writes, 0);
        const checks = j ? [[j.writes.sent > 0 && j.writes.acked === j.writes.sent, `${j.writes.acked} of ${j.writes.sent} writes acked`],
          [j.writes.errors === 0, `${j.writes.errors} writes answered with an error (${codes(j)})`],
          [j.writes.lost + j.writes.unknown_replies === 0, `${j.writes.lost} writes lost, ${j.writes.unknown_replies} unknown replies`],
          [j.closes + j.connect.connect_errors === 0, `${j.closes} closes, ${j.connect.connect_errors} connect errors`],
          [j.connect.writers_open === j.writers, `${j.connect.writers_open} of ${j.writers} writers open at the end`],
          [nodes.length > 0 && landed === j.writes.acked, `Redis holds ${landed} writes on the case's boards, ${j.writes.acked} acked`]] : [];
        const before = broken.length;
        need(name, j, checks);
        if (broken.length > before) many.failed.push(...broken.slice(before));
      }
      if (!oneCeil) broken.push(`L: redis-benchmark on one Redis, round ${r}, gave no ceiling`);
      if (!cluCeil) broken.push(`L: redis-benchmark on a cluster primary, round ${r}, gave no ceiling`);
    }
    if (!many.rounds.length) broken.push('L: did not run');
    if (meta.L_cluster_mode !== 'cluster') broken.push('L: the gateway was not seen in cluster mode');
    // the median round of each set-up, by writes acked per second
    const mid = (key) => {
      const ok = many.rounds.filter((x) => x[key]).sort((x, y) => x[key].writes.acked_per_s - y[key].writes.acked_per_s);
      return ok.length ? ok[Math.floor((ok.length - 1) / 2)] : null;
    };
    const mo = mid('one'), mc = mid('clu');
    const boards = Number(meta.L_boards), writers = Number(meta.L_writers);
    const target = 'every write acked on both set-ups, none answered otherwise (the throughput figures are for comparison: no speed target)';
    if (mo && mc) {
      const side = (j, ceil) => `${int(j.writes.acked_per_s)} writes/s, ack p50 ${fmt(j.ack_ms.p50)} / p99 ${fmt(j.ack_ms.p99)} ms, ${ceil ? `${fmt((j.writes.acked_per_s / ceil) * 100)} % of ` : ''}`;
      const errs = many.rounds.reduce((s, x) => s + [x.one, x.clu].reduce((t, j) => t + (j ? j.writes.errors + j.writes.lost + j.writes.unknown_replies : 0), 0), 0);
      rows.push([`L. write throughput over ${boards} boards, no viewers, ${writers} writer connections, 1 write in flight each: one Redis vs a 3-primary Redis Cluster`, target,
        `one Redis: ${side(mo.one, mo.oneCeil)}${int(mo.oneCeil)} EVALSHA/s (redis-benchmark -c ${writers}); cluster: ${side(mc.clu, mc.cluCeil)}${int(mc.cluCeil)} EVALSHA/s (sum of the three primaries run at once, ${mc.cn.map((x) => int(x.rps)).join(' + ')}); cluster / one Redis = ${fmt((mc.clu.writes.acked_per_s / mo.one.writes.acked_per_s) * 100)} %; ${errs} writes answered otherwise${many.rounds.length > 1 ? ` (per set-up the median of ${many.rounds.length} rounds${many.rounds.length % 2 ? '' : ', the slower middle one'}, by writes/s; every round under "Writes over many boards")` : ''}`,
        many.failed.length ? 'fail' : 'pass']);
    } else rows.push(['L. write throughput over many boards, one Redis vs a cluster', target, many.rounds.length ? 'no result' : 'did not run', 'error']);
  }
  // Z: compression, the same load without and with permessage-deflate
  const zip = [];
  if (cases.includes('Z')) {
    const per = {};
    for (const name of ['Z-plain', 'Z-deflate']) {
      const j = readJson(dir, name);
      detail(name, j);
      need(name, j, j ? [[j.connect.subscribed === j.viewers, 'not every viewer subscribed'],
        [j.writes.sent > 0 && j.writes.acked === j.writes.sent, 'writes unanswered'],
        [j.deliveries.messages > 0, 'no deltas delivered'], [j.deliveries.viewers_behind === 0, 'viewers missed writes'],
        [j.wire && j.wire.ok, 'no /metrics counters'],
        [!j.wire || (name === 'Z-deflate' ? j.wire.deflate_viewers === j.viewers && j.wire.deflate_compressed > 0
          : j.wire.deflate_messages === 0), name === 'Z-deflate' ? 'not every viewer negotiated permessage-deflate, or nothing went out compressed'
          : 'something went out through permessage-deflate']] : []);
      if (!j || !j.wire || !j.wire.ok || !j.deliveries.messages) continue;
      const d = j.deliveries.messages;
      const viewerBytes = j.wire.bytes_sent - j.wire.writer_reply_bytes;
      per[name] = {
        j,
        wireB: viewerBytes / d,
        jsonB: j.deliveries.message_bytes / d,
        cpuUs: j.gateway ? (j.gateway.cpu_s * 1e6) / d : null,
        runsPerDelta: j.wire.deflate_runs && j.wire.deltas_queued ? j.wire.deflate_runs / (j.wire.deltas_queued / j.viewers) : null,
      };
      zip.push([name === 'Z-plain' ? 'not offered' : 'permessage-deflate', int(j.viewers), int(d),
        fmt(per[name].jsonB, 0), fmt(per[name].wireB, 0), fmt((per[name].wireB / per[name].jsonB) * 100, 0) + ' %',
        fmt(per[name].cpuUs, 2), j.gateway ? `${fmt(j.gateway.cpu_per_s * 100, 0)} %` : 'n/a',
        name === 'Z-plain' ? '-' : `${int(j.wire.deflate_runs)} (${fmt(per[name].runsPerDelta, 2)} per delta per view)`,
        `${fmt(j.latency_ms.p50)} / ${fmt(j.latency_ms.p99)}`]);
    }
    const p = per['Z-plain'], z = per['Z-deflate'];
    const target = 'fewer bytes per delivered delta; CPU per delivery reported';
    if (p && z) {
      rows.push([`Z. compression: ${int(z.j.viewers)} viewers of one top-100, ${int(z.j.rate)} writes/s`, target,
        `${fmt(p.wireB, 0)} → ${fmt(z.wireB, 0)} payload bytes per delivered delta (${fmt((z.wireB / p.wireB) * 100, 0)} %); gateway CPU ${fmt(p.cpuUs, 2)} → ${fmt(z.cpuUs, 2)} µs per delivery; ${fmt(z.runsPerDelta, 2)} compressions per delta per view`,
        z.wireB < p.wireB ? 'pass' : 'miss']);
    } else rows.push(['Z. compression', target, 'did not run', 'error']);
  }
  if (cases.includes('U')) {
    // U: a burst to the queued board `burst` against the same burst to `demo` (direct)
    const j = readJson(dir, 'U');
    const target = 'every write acked queued and applied once (no speed target: accepted vs applied rate and the lag are reported)';
    if (j && j.queued && j.direct) {
      const q = j.queued, d = j.direct;
      const ok = q.acked === q.sent && q.queued === q.sent && q.applied === q.acked && d.applied === d.acked;
      rows.push([`U. queued writes: a burst of ${int(q.sent)} writes to \`burst\` (write_mode = queued), ${j.conns} writer connections, up to ${j.inflight} in flight each`, target,
        `accepted ${int(q.acked_per_s)} writes/s (all ${int(q.sent)} acked in ${fmt(q.seconds, 2)} s), applied ${int(q.applied_per_s)} writes/s (all applied ${fmt(q.applied_seconds, 2)} s after the first write, ${int(q.drain_after_last_ack_ms)} ms after the last ack); lag: queue up to ${int(q.max_queue_length)} entries, oldest unapplied entry up to ${int(q.max_oldest_age_ms)} ms old (/metrics every 50 ms); the same burst to \`demo\` (direct): ${int(d.acked_per_s)} writes/s acked and applied`,
        ok ? 'pass' : 'miss']);
    } else rows.push(['U. queued writes', target, 'did not run', 'error']);
    if (!j) broken.push('U: no result from queued_burst.js (see its log)');
    else if (j.queued.acked !== j.queued.sent || j.queued.applied !== j.queued.acked) {
      broken.push(`U: ${j.queued.acked} of ${j.queued.sent} acked, ${j.queued.applied} applied`);
    }
  }
  const workers = cases.includes('W') ? workersCase(dir, meta, detail, need, broken) : null;
  if (workers) rows.push(workers.row);
  const sharded = cases.includes('S') ? shardedCase(dir, meta, detail, need, broken) : null;
  if (sharded) rows.push(sharded.row);
  const distinct = cases.includes('V') ? distinctViewsCase(dir, broken) : null;
  if (distinct) rows.push(distinct.row);
  const lists = cases.includes('M') ? memberListsCase(dir, meta, broken) : null;
  if (lists) rows.push(lists.row);
  const history = cases.includes('H') ? historyCase(dir, meta, broken) : null;
  if (history) rows.push(history.row);
  return { meta, rows, details, broken, tick, knee, many, zip, workers, sharded, distinct, lists, history };
}

/* V: distinct views of one board (issue 23, tests/bench/distinct_views.js):
 * the medians of the rounds per size; subscribe time and CPU must grow
 * linearly (at most 2.2x per doubling of the views), the reference client's
 * ping p99 during the largest burst at most 50 ms, and every subscribe must
 * look at its own view only (the counter, exactly). Returns { row, failed }:
 * a full run exits 1 when failed lists anything (a smoke run checks only
 * that the tool and the gateway work). */
const V_GROWTH = 2.2, V_PING_P99_MS = 50;
function distinctViewsCase(dir, broken) {
  const failed = [];
  const row = distinctViewsRow(dir, broken, failed);
  return { row, failed };
}

function distinctViewsRow(dir, broken, failed) {
  const j = readJson(dir, 'V');
  const target = `subscribe time and CPU ≤ ${V_GROWTH}x per doubling of the views; reference ping p99 ≤ ${V_PING_P99_MS} ms at the largest`;
  if (!j || !j.sizes || !j.sizes.length) {
    broken.push('V: no result from distinct_views.js (see its log)');
    failed.push('V: did not run');
    return ['V. distinct views', target, 'did not run', 'error'];
  }
  const parts = j.sizes.map((s, i) => {
    const m = s.median;
    let growth = '';
    if (i > 0) {
      const p = j.sizes[i - 1].median;
      const steps = Math.log2(s.views / j.sizes[i - 1].views);
      const per = (a, b) => Math.pow(a / b, 1 / steps); // growth per doubling
      const t = per(m.subscribe_ms, p.subscribe_ms), c = per(m.subscribe_cpu_ms, Math.max(p.subscribe_cpu_ms, 10));
      growth = ` (${fmt(t, 2)}x time, ${fmt(c, 2)}x CPU per doubling)`;
      if (t > V_GROWTH) failed.push(`V: subscribe time grew ${fmt(t, 2)}x per doubling from ${s.views / 2 ** steps} to ${s.views} views`);
      if (c > V_GROWTH) failed.push(`V: subscribe CPU grew ${fmt(c, 2)}x per doubling from ${s.views / 2 ** steps} to ${s.views} views`);
    }
    for (const r of s.runs) {
      if (r.snapshots !== s.views) broken.push(`V: ${r.snapshots} snapshots for ${s.views} views (round ${r.round})`);
      if (r.visited_subscribe !== null && r.visited_subscribe !== s.views)
        broken.push(`V: subscribes looked at ${r.visited_subscribe} views for ${s.views} subscribes (round ${r.round})`);
    }
    return `${int(s.views)} views: subscribe ${int(m.subscribe_ms)} ms, CPU ${int(m.subscribe_cpu_ms)} ms${growth}, ` +
      `${int(m.visited_subscribe)} views looked at by subscribes, ref ping p99 ${fmt(m.ref_ping_p99_ms, 0)} ms; ` +
      `idle ${fmt(m.idle_cpu_pct, 1)} % CPU, ${int(j.write_rate)} writes/s ${fmt(m.write_cpu_pct, 1)} % CPU ` +
      `(Redis ${fmt(m.redis_write_cpu_pct, 1)} %) ` +
      `(${fmt(m.visited_tick_per_write, 1)} views looked at per write)`;
  });
  const last = j.sizes[j.sizes.length - 1].median;
  if (!(last.ref_ping_p99_ms <= V_PING_P99_MS))
    failed.push(`V: reference ping p99 ${fmt(last.ref_ping_p99_ms, 0)} ms during the ${j.sizes[j.sizes.length - 1].views}-view burst`);
  const ok = !failed.length;
  return [`V. distinct views: ${j.sizes.map((s) => int(s.views)).join(' / ')} distinct views (top N, pages, around) of one ${int(j.members)}-member board, median of ${j.rounds}`,
    target, parts.join('; '), ok ? 'pass' : 'miss'];
}

/* M: member lists (issue 26, tests/bench/member_lists.js): Redis calls
 * for list views per second must not grow with the lists (at most 1.5 x the
 * smallest size's + 5/s at every size); per size the lists' and the top-10's
 * deltas, gateway CPU per delta of each, write-to-screen, and at the largest
 * size send_floor's CPU per frame for each (DIR/M-lists-floor.json,
 * DIR/M-top-floor.json: same-run floors). Returns { row, section, table }. */
function memberListsCase(dir, meta, broken) {
  const j = readJson(dir, 'M');
  const target = 'Redis calls/s for list views do not grow with the count of lists (≤ 1.5x the smallest + 5/s)';
  if (!j || !j.sizes || !j.sizes.length) {
    broken.push('M: no result from member_lists.js (see its log)');
    return { row: ['M. member lists', target, 'did not run', 'error'], section: '', table: '' };
  }
  const floors = { lists: readJson(dir, 'M-lists-floor'), top: readJson(dir, 'M-top-floor') };
  const floorUs = (f) => (f && !f.fatal && f.frames ? f.sender.us_per_frame : null);
  for (const [k, f] of Object.entries(floors)) {
    if (!f) { broken.push(`M-${k}-floor: no result from send_floor (see its log)`); continue; }
    if (f.fatal) broken.push(`M-${k}-floor: ${f.fatal}`);
    if (f.bytes_read !== f.bytes_sent) broken.push(`M-${k}-floor: ${f.bytes_read} bytes read of ${f.bytes_sent} sent`);
  }
  const base = j.sizes[0].list_reads_per_s;
  let ok = true;
  const last = j.sizes.length - 1;
  const parts = j.sizes.map((s, i) => {
    if (s.list_reads_per_s > base * 1.5 + 5) ok = false;
    if (!s.lists.deltas) broken.push(`M: no list deltas at ${s.viewers} lists`);
    if (!s.top10.deltas) broken.push(`M: no top-10 deltas at ${s.viewers} viewers`);
    if (s.connections !== s.viewers) broken.push(`M: ${s.connections} connections for ${s.viewers} viewers`);
    const fl = i === last && floorUs(floors.lists) ? ` (send() floor ${fmt(floorUs(floors.lists), 1)} µs)` : '';
    return `${int(s.viewers)} lists: ${fmt(s.list_reads_per_s, 1)} Redis calls/s for lists (gateway counter; EVALSHA beyond the writes ` +
      `${fmt(s.lists.evalsha_beyond_writes_per_s, 1)}/s), ${int(s.lists.deltas_per_s)} list deltas/s, gateway CPU ` +
      `${fmt(s.lists.gateway_cpu_us_per_delta, 1)} µs per list delta vs ${fmt(s.top10.gateway_cpu_us_per_delta, 1)} µs per top-10 delta ` +
      `(${fmt(s.cpu_per_delta_lists_vs_top10, 1)}x)${fl}, write-to-screen p50 ${fmt(s.lists.write_to_screen_p50_ms, 0)} / ` +
      `p99 ${fmt(s.lists.write_to_screen_p99_ms, 0)} ms (top-10 p99 ${fmt(s.top10.write_to_screen_p99_ms, 0)} ms)`;
  });
  const row = [`M. member lists: ${j.sizes.map((s) => int(s.viewers)).join(' / ')} viewers with distinct ${int(j.list)}-member lists of one ${int(j.members)}-member board at ${int(j.write_rate)} writes/s`,
    target, parts.join('; '), ok ? 'pass' : 'miss'];
  const pct = (x) => (x === null || x === undefined ? 'n/a' : `${fmt(x * 100, 0)} %`);
  const rows = [];
  j.sizes.forEach((s, i) => {
    for (const [name, p, f] of [['lists', s.lists, floors.lists], ['top 10', s.top10, floors.top]]) {
      const fu = i === last ? floorUs(f) : null;
      rows.push([int(s.viewers), name, `${int(p.writes)} (${int(p.writes / p.seconds)}/s)`, fmt(p.list_reads / p.seconds, 1),
        fmt(p.evalsha_beyond_writes_per_s, 1), fmt(p.views_visited_per_write, 0), int(p.deltas_per_s), int(p.delta_bytes_avg),
        pct(p.gateway_cpu_share), fmt(p.gateway_cpu_us_per_delta, 1), fmt(fu, 1),
        fu && p.gateway_cpu_us_per_delta ? `${fmt(p.gateway_cpu_us_per_delta / fu, 1)}×` : 'n/a',
        `${fmt(p.write_to_screen_p50_ms, 0)} / ${fmt(p.write_to_screen_p99_ms, 0)} / ${fmt(p.write_to_screen_max_ms, 0)} (${int(p.write_to_screen_n)}${p.write_to_screen_unseen ? `, ${int(p.write_to_screen_unseen)} unseen` : ''})`,
        int(p.resyncs), pct(p.clients_cpu_share), p.load.join(' ')]);
    }
  });
  const tbl = table(rows, ['viewers', 'view', 'writes', 'Redis calls/s for lists (gateway)', 'EVALSHA/s beyond the writes (Redis)',
    'views looked at per write', 'deltas/s delivered', 'bytes per delta', 'gateway CPU', 'gateway CPU µs per delta', 'floor µs per send',
    'gateway / floor', 'write-to-screen p50 / p99 / max ms (pairs)', 'resyncs', 'clients CPU', 'load avg']);
  const section = `
### Member lists (M)

\`tests/bench/member_lists.js\` (${j.procs} client processes): per size a fresh board of ${int(j.members)} members, that many viewers
each on its own connection (from addresses spread over 127.0.0.0/8) with its own list of ${int(j.list)} random members, then
${int(j.write_rate)} \`incr\` writes/s for ${fmt(j.phase_s, 0)} s on one writer connection (1 in 20 on one of the ten leaders, the
board's top 10, the rest on random members); then the same connections drop their lists for the board's top 10 and
the same writes run again. "Redis calls/s for lists" is the gateway's \`rankcast_view_reads_total{view="members"}\`
(one EVALSHA per list read); "EVALSHA/s beyond the writes" is Redis's INFO commandstats over the phase minus the writes
Redis ran on the board (its seq's growth): every read script (list reads, the viewer-count pass) and nothing else. Gateway CPU per delta is all of its CPU in the phase
(the writes' included) over the deltas delivered. Write-to-screen: from sending a write to a probe viewer's delta
showing the member at that score or past it, for every (write, probe) pair whose list holds the member (top 10: the
leaders' writes). At the largest size \`send_floor\` sends frames of each phase's mean delta size at its rate per
viewer to as many loopback sockets ("floor µs per send", as in K). Load average: ${meta.load_M || '?'} at the start.

${tbl}
`;
  return { row, section, table: tbl };
}

/* H: standings at a moment at any depth (issue 27, tests/bench/hist_depth.js):
 * the write path with history = full against a capped log, and `get` at 10
 * moments of the period. Target: a read costs about the same at any depth
 * (the slowest moment's p50 within 3x the present's, per view). Returns
 * { row, section, table }. */
function historyCase(dir, meta, broken) {
  const j = readJson(dir, 'H');
  const target = 'a read at any depth costs about the same: per view, the deepest moment\'s p50 ≤ 3x the present\'s';
  if (!j || !j.full || !j.capped || !j.reads) {
    broken.push('H: no result from hist_depth.js (see its log)');
    return { row: ['H. standings at a moment', target, 'did not run', 'error'], section: '', table: '' };
  }
  if (j.full.not_acked || j.capped.not_acked) broken.push(`H: writes not acked (${j.full.not_acked} full, ${j.capped.not_acked} capped)`);
  const errs = j.reads.filter((r) => r.error);
  for (const r of errs) broken.push(`H: get at seq ${r.seq} (${r.view}): ${r.error}`);
  const views = [...new Set(j.reads.map((r) => r.view))];
  let ok = !errs.length;
  const worst = views.map((v) => {
    const rs = j.reads.filter((r) => r.view === v && r.p50_ms !== null);
    const present = rs.find((r) => r.back === 0), deepest = rs.reduce((a, r) => (!a || r.back > a.back ? r : a), null);
    if (!present || !deepest || deepest.p50_ms > 3 * Math.max(present.p50_ms, 1)) ok = false;
    return `${v}: ${fmt(present && present.p50_ms, 1)} ms at the present, ${fmt(deepest && deepest.p50_ms, 0)} ms ${int(deepest && deepest.back)} changes back`;
  });
  const w = (b) => `${int(b.writes_per_s)} writes/s, ${fmt(b.redis_cpu_us_per_write, 1)} µs Redis CPU (${fmt(b.script_us_per_write, 1)} µs script) per write`;
  const row = [`H. standings at a moment: a ${int(j.members)}-member board, ${int(j.changes)} changes with history = full, \`get\` at 10 moments`,
    target, `${worst.join('; ')}; writes: full ${w(j.full)}, capped ${w(j.capped)}; log ${fmt(j.full.log_bytes / 1048576, 1)} MiB (${fmt(j.full.log_bytes_per_change, 0)} B a change)`,
    ok ? 'pass' : 'miss'];
  const tbl = table(j.reads.map((r) => [int(r.seq), int(r.back), r.undone === undefined ? 'n/a' : int(r.undone), r.view,
    r.error ? r.error : `${fmt(r.p50_ms, 1)} / ${fmt(r.p99_ms, 1)}`, int(r.reads), fmt(r.redis_cpu_ms_per_read, 1), fmt(r.script_ms_per_read, 1)]),
  ['at seq', 'changes back', 'changes undone', 'view', 'p50 / p99 ms', 'reads', 'Redis CPU ms per read', 'script ms per read']);
  const cu = j.full.with_catchup;
  const ck = j.checkpoints ? `${cu ? `With the checkpoint job's catch-up after the last write (${fmt(cu.seconds, 1)} s): ${fmt(cu.redis_cpu_us_per_write, 1)} µs
of Redis CPU per write on histfull.
` : ''}Checkpoints of histfull after the build: ${int(j.checkpoints.count)}, ${fmt(j.checkpoints.bytes / 1048576, 1)} MiB
(${fmt(j.checkpoints.bytes_per_change, 0)} B a change), at most ${int(j.checkpoints.max_gap)} changes apart ("changes undone": from the
nearest checkpoint at or after the seq, else the present).
` : '';
  const wtbl = table([['history = full', j.full], ['capped (log_cap 1000)', j.capped]].map(([n, b]) => [n, int(b.writes), fmt(b.seconds, 1),
    int(b.writes_per_s), fmt(b.redis_cpu_us_per_write, 1), fmt(b.script_us_per_write, 1), int(b.log_entries), `${fmt(b.log_bytes / 1048576, 1)} MiB`]),
  ['board', 'writes', 's', 'writes/s acked', 'Redis CPU µs per write', 'script µs per write', 'log entries', 'log memory']);
  const section = `
### Standings at a moment (H)

\`tests/bench/hist_depth.js\`: ${int(j.members)} members set, then random \`incr\`s, ${int(j.changes)} changes in all, through the gateway
(${j.conns} connections, ${j.batch} writes in flight each), first to \`histcap\` (capped log), then the same writes to \`histfull\`
(\`history = full\`); then \`get\` at 10 seqs of histfull from ${int(j.members)} (the fill done) to the present, each view
${j.reps} times one at a time (once when a read takes over 2 s). Redis CPU per read is the redis-server process's CPU
over the reads; "script" is INFO commandstats' evalsha time. Load average: ${j.load_start} at the start, ${j.load_reads} at the reads, ${j.load_end} at the end.

${wtbl}

${ck}
${tbl}
`;
  return { row, section, table: `${wtbl}\n\n${tbl}` };
}

/* W: the same load on one gateway process (W1) and on --workers 2 (W2).
 * Returns { row, section } for evaluate and markdown. */
function workersCase(dir, meta, detail, need, broken) {
  const j1 = readJson(dir, 'W1'), j2 = readJson(dir, 'W2');
  detail('W1', j1);
  detail('W2', j2);
  const checks = (j) => (j ? [[j.connect.subscribed === j.viewers, 'not every viewer subscribed'],
    [j.writes.sent > 0 && j.writes.acked === j.writes.sent, 'writes unanswered'],
    [j.deliveries.messages > 0, 'no deltas delivered'], [j.deliveries.viewers_behind === 0, 'viewers missed writes'],
    [j.gateway && j.gateway.ok, 'no gateway CPU figures']] : []);
  need('W1', j1, checks(j1));
  need('W2', j2, checks(j2));
  const acc = String(meta.W2_accepts || '').split(' ').map(Number).filter((x) => Number.isFinite(x));
  if (acc.length !== 2 || !(acc[0] > 0 && acc[1] > 0)) broken.push(`W2: connections per worker ${meta.W2_accepts || 'not read'}: both workers must take some`);
  const us = (j) => (j && j.gateway && j.deliveries.messages ? (j.gateway.cpu_s * 1e6) / j.deliveries.messages : null);
  const u1 = us(j1), u2 = us(j2);
  const sum = acc.length === 2 ? acc[0] + acc[1] : 0;
  const skew = sum ? Math.max(...acc.map((a) => Math.abs(a - sum / 2) / (sum / 2))) : null;
  const target = 'connections split within ±10 %; gateway CPU per delta (summed over the processes) within ±15 % of one process';
  const what = j1 ? `W. workers: ${int(j1.viewers)} viewers of one top-10, ${int(j1.rate)} writes/s, one process vs --workers 2` : 'W. workers';
  const row = j1 && j2 && u1 && u2
    ? [what, target, `one process ${fmt(u1, 2)} µs per delta (p99 ${fmt(j1.latency_ms.p99)} ms, ${fmt(j1.gateway.cpu_per_s * 100, 0)} % of a core); two workers ${fmt(u2, 2)} µs per delta summed (p99 ${fmt(j2.latency_ms.p99)} ms, ${fmt(j2.gateway.cpu_per_s * 100, 0)} % of a core in all) = ${fmt((u2 / u1) * 100, 0)} %; connections accepted per worker ${acc.join(' / ')} (${fmt(skew * 100, 1)} % off an even split)`,
      skew !== null && skew <= 0.1 && Math.abs(u2 / u1 - 1) <= 0.15 ? 'pass' : 'miss']
    : [what, target, 'did not run', 'error'];
  const table1 = [j1, j2].filter(Boolean).map((j, i) => [i ? `--workers 2 (${meta.W2_processes || '?'})` : 'one process', int(j.viewers),
    i ? acc.join(' / ') : int(j.viewers + j.writers), int(j.deliveries.messages_per_s), fmt(us(j), 2),
    j.gateway ? `${fmt(j.gateway.cpu_per_s * 100, 0)} %` : 'n/a', `${fmt(j.latency_ms.p50)} / ${fmt(j.latency_ms.p99)}`]);
  const section = `
### Workers (W)

The same load (${int(Number(meta.W_viewers))} viewers of one top-10, case A's write rate, 4 writers) on one gateway
process and on a group of two workers (\`RANKCAST_WORKERS=2\`: a supervisor and two worker processes on one port,
\`SO_REUSEPORT\`). Gateway CPU is the supervisor's pid plus its live children (the workers), over the measurement.
"Connections per worker" is each worker's \`rankcast_worker_connections_total\` over the run (viewers and writers).
This machine's cores are shared with the load tool and Redis, so two workers cannot show more throughput here;
the case checks the split and that CPU per delivery does not grow (docs/gateway.md, "Workers").

${table(table1, ['gateway', 'viewers', 'connections per worker', 'deltas/s delivered', 'gateway CPU µs per delta', 'gateway CPU', 'latency p50 / p99 ms'])}
`;
  return { row, section };
}

/* S: the sharded board `global` against `demo` (unsharded), writes and REST
 * reads, on one Redis and on a 3-primary cluster. Returns { row, section,
 * tables, failed } for evaluate, markdown and report; failed lists what
 * fails the case (a write not acked or not held by Redis, a wrong read). */
function shardedCase(dir, meta, detail, need, broken) {
  const SETUPS = [['one', 'one Redis'], ['cluster', '3-primary cluster']];
  const BOARDS = ['global', 'demo'];
  const failed = [];
  const check = (name, j, checks) => {
    const before = broken.length;
    need(name, j, checks);
    if (broken.length > before) failed.push(...broken.slice(before));
  };
  // "H:P seq-keys writes cpu_s" lines from run.sh, per run
  const nodesOf = (name) => Object.keys(meta).filter((k) => k.startsWith(`${name}_node`)).sort().map((k) => {
    const [node, keys, writes, cpu] = meta[k].split(' ');
    return { node, keys: Number(keys), writes: Number(writes), cpu: Number(cpu) };
  });
  const mean = (xs) => (xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : null);
  const writeRows = [], summary = [], readRows = [];
  const rate = {}; // rate[setup][board]: mean writes/s acked over the rounds
  const reads = {}; // reads[setup]: read_cost.js's JSON
  for (const [setup, what] of SETUPS) {
    rate[setup] = {};
    const per = { global: [], demo: [] };
    for (let r = 1; BOARDS.some((b) => fs.existsSync(path.join(dir, `S-${setup}-${b}${r}.json`))); r++) {
      for (const b of BOARDS) {
        const name = `S-${setup}-${b}${r}`;
        const j = readJson(dir, name), nodes = nodesOf(name);
        detail(name, j);
        const landed = nodes.reduce((a, x) => a + x.writes, 0);
        check(name, j, j ? [[j.writes.sent > 0 && j.writes.acked === j.writes.sent, `${j.writes.acked} of ${j.writes.sent} writes acked`],
          [j.writes.errors === 0, `${j.writes.errors} writes answered with an error (${codes(j)})`],
          [j.writes.lost + j.writes.unknown_replies === 0, `${j.writes.lost} writes lost, ${j.writes.unknown_replies} unknown replies`],
          [j.closes + j.connect.connect_errors === 0, `${j.closes} closes, ${j.connect.connect_errors} connect errors`],
          [nodes.length > 0 && landed === j.writes.acked, `Redis holds ${landed} writes on ${b}, ${j.writes.acked} acked`]] : []);
        if (!j) continue;
        per[b].push(j.writes.acked_per_s);
        const cpu = nodes.reduce((a, x) => a + x.cpu, 0);
        writeRows.push([what, r, b, int(j.writes.acked_per_s), `${fmt(j.ack_ms.p50)} / ${fmt(j.ack_ms.p99)}`,
          j.gateway ? `${fmt(j.gateway.cpu_per_s * 100, 0)} %` : 'n/a',
          nodes.map((n) => `${fmt((n.cpu / (j.measured_s || 1)) * 100, 0)} %`).join(' / ') || 'n/a',
          j.writes.acked ? fmt((cpu * 1e6) / j.writes.acked, 1) : 'n/a',
          nodes.map((n) => `${n.keys} / ${int(n.writes)}`).join('; '),
          j.writes.errors + j.writes.lost + j.writes.unknown_replies ? `${j.writes.errors + j.writes.lost + j.writes.unknown_replies} (${codes(j)})` : '0']);
      }
    }
    for (const b of BOARDS) rate[setup][b] = mean(per[b]);
    if (rate[setup].global !== null || rate[setup].demo !== null) {
      summary.push([what, int(rate[setup].global), int(rate[setup].demo),
        rate[setup].global && rate[setup].demo ? `${fmt((rate[setup].global / rate[setup].demo) * 100)} %` : 'n/a']);
    }
    for (const b of BOARDS) {
      const name = `S-${setup}-fill-${b}`, j = readJson(dir, name);
      if (!fs.existsSync(path.join(dir, `${name}.json`))) continue;
      detail(name, j);
      check(name, j, j ? [[j.writes.acked === Number(meta.S_members) && j.writes.sent === j.writes.acked,
        `the fill acked ${j.writes.acked} of ${j.writes.sent} writes, ${meta.S_members} wanted`]] : []);
    }
    const rj = readJson(dir, `S-${setup}-read`);
    if (!fs.existsSync(path.join(dir, `S-${setup}-read.json`))) continue;
    reads[setup] = rj;
    if (!rj) { failed.push(`S-${setup}-read: no result from read_cost.js (see its log)`); continue; }
    for (const x of rj.results) if (x.errors) failed.push(`S-${setup}-read: ${x.board} ${x.query}: ${x.errors} wrong answers (${x.first_error})`);
    const queries = [...new Set(rj.results.map((x) => x.query))];
    for (const q of queries) {
      const g = rj.results.find((x) => x.query === q && x.board === 'global');
      const d = rj.results.find((x) => x.query === q && x.board === 'demo');
      const lt = (x) => (x ? `${fmt(x.latency_ms.p50, 2)} / ${fmt(x.latency_ms.p99, 2)}` : 'n/a');
      readRows.push([what, `${q} (\`?${g ? g.qs : d.qs}\`)`, lt(g), lt(d),
        g && d ? `${fmt(g.latency_ms.p50 / d.latency_ms.p50, 1)}×` : 'n/a',
        `${g ? fmt(g.redis_cpu_s_per_1000, 2) : 'n/a'} / ${d ? fmt(d.redis_cpu_s_per_1000, 2) : 'n/a'}`,
        `${g ? fmt(g.gateway_cpu_s_per_1000, 2) : 'n/a'} / ${d ? fmt(d.gateway_cpu_s_per_1000, 2) : 'n/a'}`,
        `${g ? int(g.reads_per_s) : 'n/a'} / ${d ? int(d.reads_per_s) : 'n/a'}`,
        [g, d].reduce((a, x) => a + (x ? x.errors : 0), 0)]);
    }
  }
  if (!writeRows.length && !readRows.length) failed.push('S: did not run');
  if (meta.S_cluster_mode !== 'cluster') failed.push('S: the gateway was not seen in cluster mode');
  for (const f of failed) if (!broken.includes(f)) broken.push(f);

  const shards = meta.S_global_shards || '?';
  const ratio = (setup) => (rate[setup] && rate[setup].global && rate[setup].demo
    ? `${int(rate[setup].global)} / ${int(rate[setup].demo)} = ${fmt((rate[setup].global / rate[setup].demo) * 100)} %` : 'n/a');
  const gain = (b) => (rate.one[b] && rate.cluster[b] ? `${fmt(rate.cluster[b] / rate.one[b], 2)}×` : 'n/a');
  const p50s = (setup) => {
    const rj = reads[setup];
    if (!rj) return 'n/a';
    const at = (q, b) => rj.results.find((x) => x.query.startsWith(q) && x.board === b);
    return ['top 10', 'page 100', '100 rows'].map((q) => {
      const g = at(q, 'global'), d = at(q, 'demo');
      return `${q} ${g ? fmt(g.latency_ms.p50, 2) : 'n/a'} / ${d ? fmt(d.latency_ms.p50, 2) : 'n/a'} ms`;
    }).join(', ');
  };
  const row = [`S. sharded boards (issue 10): \`global\` (${shards} shards) vs \`demo\` (unsharded); writes from ${meta.S_writers} connections, ${meta.S_inflight} in flight each, incr on 10,000 members; REST reads of ${int(Number(meta.S_members))}-member boards`,
    'every write acked and held by Redis, every read the right window (no speed target: the ratios are reported)',
    `writes/s global / demo: one Redis ${ratio('one')}; cluster ${ratio('cluster')}; cluster / one Redis: global ${gain('global')}, demo ${gain('demo')}. Read p50 global / demo: one Redis ${p50s('one')}; cluster ${p50s('cluster')}`,
    failed.length ? 'fail' : 'pass'];

  const H_WRITES = ['set-up', 'round', 'board', 'writes/s acked', 'ack p50 / p99 ms', 'gateway CPU', 'Redis CPU (per server)', 'Redis CPU µs per write (all servers)', 'seq keys / writes held, per server', 'writes not acked'];
  const H_SUMMARY = ['set-up', 'global writes/s', 'demo writes/s', 'global / demo'];
  const H_READS = ['set-up', 'read', 'global p50 / p99 ms', 'demo p50 / p99 ms', 'global / demo (p50)', 'Redis CPU s per 1,000 reads, global / demo', 'gateway CPU s per 1,000 reads, global / demo', 'reads/s (one at a time), global / demo', 'wrong answers'];
  const tables = { writes: table(writeRows, H_WRITES), summary: table(summary, H_SUMMARY), reads: table(readRows, H_READS) };
  const section = `
### Sharded boards (S)

\`global\` (\`shards = ${shards}\`, docs/sharded.md) against \`demo\` (the same board unsharded: desc, incr/set/best,
earliest tie-break), first with the gateway on one redis-server, then on the 3-primary cluster of case L.
Writes: ${meta.S_writers} writer connections, ${meta.S_inflight} writes in flight each, \`incr\` on 10,000 members as fast as
acks come back, for each board in turn (${meta.S_rounds === '1' ? 'one round, global first' : `${meta.S_rounds} rounds, global first in odd rounds and demo first in even ones; the summary is the mean of the rounds`}). An ack of a sharded write carries the member's global rank, read right after the write (the script's
rank in its shard, then one ZCOUNT and one GET of the seq on each other shard, pipelined). Redis CPU is per server over the run; "writes held" is the sum of the board's
\`seq\` keys on that server (one per shard on \`global\`), which must equal the acks.

${tables.writes}

${tables.summary}

Reads: both boards reset and filled with ${int(Number(meta.S_members))} members (\`set\`, distinct values) through the gateway,
then \`tests/bench/read_cost.js\`: ${int(Number(meta.S_reads))} REST reads per board and query, one at a time, each on a new
connection (the gateway closes every HTTP answer's), timed from the request to the answer's last byte; every answer
is checked (total, row count, ranks). A sharded page reads each shard's first offset + limit (+1) rows and merges
them. CPU seconds come from /proc in ticks of 1/${meta.S_hz || 100} s, so over ${int(Number(meta.S_reads))} reads a figure per 1,000 reads moves in steps of
${fmt(1000 / (Number(meta.S_hz || 100) * Number(meta.S_reads || 1000)), 3)} s; Redis CPU is the sum over the servers (three on the cluster).

${tables.reads}
`;
  return { row, section, tables, failed };
}

const codes = (j) => Object.entries(j.writes.error_codes || {}).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';

const KNEE_HEADER = ['viewers', 'writes/s acked', 'p50 ms', 'p99 ms', 'max ms', 'deltas/s delivered', 'gateway CPU',
  'gateway CPU µs per delta (writes included)', 'floor µs per send', 'gateway / floor', 'rankcast-bench CPU'];
const kneeTable = (ev) => table(ev.knee, [...KNEE_HEADER, `p99 ≤ ${ev.tick + 20} ms`]);

function table(rows, header) {
  const esc = (s) => String(s).replace(/\|/g, '\\|');
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

// Case L's own section: both set-ups per round, then the cluster per node.
function manySection(ev) {
  const m = ev.meta;
  const rows = [], nodes = [];
  const nodeList = (xs) => xs.map((x) => `${x.node}: ${x.boards} boards, ${int(x.writes)} writes, ${fmt(x.cpu, 2)} CPU s`).join('; ');
  for (const x of ev.many.rounds) {
    for (const [what, j, ceil, ns] of [['one Redis', x.one, x.oneCeil, x.oneNodes], ['3-primary cluster', x.clu, x.cluCeil, x.cluNodes]]) {
      if (!j) { rows.push([x.r, what, 'no result', '', '', '', '', '', '']); continue; }
      const errs = j.writes.errors + j.writes.lost + j.writes.unknown_replies;
      rows.push([x.r, what, int(j.writes.acked_per_s), `${fmt(j.ack_ms.p50)} / ${fmt(j.ack_ms.p99)}`, int(ceil),
        ceil ? `${fmt((j.writes.acked_per_s / ceil) * 100)} %` : 'n/a',
        j.gateway ? `${fmt(j.gateway.cpu_per_s * 100, 0)} %` : 'n/a',
        ns.map((n) => `${fmt((n.cpu / (j.measured_s || 1)) * 100, 0)} %`).join(' / ') || 'n/a',
        errs ? `${errs} (${codes(j)})` : '0']);
    }
    nodes.push([x.r, x.cn.map((n) => `${n.node} -c ${n.c}: ${int(n.rps)}/s`).join('; '), int(x.cluCeil), int(x.cluWall),
      nodeList(x.cluNodes), x.metrics || 'n/a']);
  }
  return `### Writes over many boards: one Redis and a 3-primary cluster (L)

Case C's writers (${m.L_writers} connections, one write in flight each, \`incr\` on 10,000 members) spread round
robin over ${m.L_boards} boards of the \`match:*\` template, first with the gateway on one redis-server, then on a
private Redis Cluster of three primaries (no replicas) on the same machine. The gateway is one process on one
core either way; Redis CPU is per server (three on the cluster).

${table(rows, ['round', 'set-up', 'writes/s acked', 'ack p50 / p99 ms', 'same-run ceiling, EVALSHA/s', 'of the ceiling', 'gateway CPU', 'Redis CPU (per server)', 'writes not acked'])}

The cluster per primary: the ceiling (one captured EVALSHA per primary, on a board it owns, redis-benchmark on
all three at once with \`-c\` and \`-n\` split three ways), their sum, the three together over the wall clock
(every request / the time from the first start to the last finish), and where the gateway's writes landed
(boards the primary owns, the sum of their \`seq\`, its CPU seconds during the run), with the gateway's
cluster counters after the run.

${table(nodes, ['round', 'ceiling per primary', 'sum', 'over the wall clock', 'the gateway\'s writes per primary', 'gateway redirects, retries, failures'])}
`;
}

function markdown(ev, keep) {
  const m = ev.meta;
  const ceilCmd = m.script_sha_matches ? `The EVALSHA's SHA matches SCRIPT LOAD of lua/write.lua: ${m.script_sha_matches}.` : '';
  return `# Benchmarks

<!-- Generated by \`bash tests/bench/run.sh\`: everything above the analysis marker is rewritten by each full run. -->

Measured ${m.date} on commit ${m.commit}, ${m.build_type} build. Command: \`bash tests/bench/run.sh\`.

## Machine

${table([
    ['CPU', `${m.nproc} cores, ${m.cpu}`],
    ['memory', `${int(Number(m.mem_kb) / 1024)} MiB`],
    ['kernel / OS', `${m.kernel} / ${m.os}`],
    ['redis-server', m.redis], ['libwebsockets', m.lws], ['libuv', m.libuv], ['hiredis', m.hiredis], ['gcc', m.gcc],
    ['gateway config', `conf/rankcast.conf with raised write and read rate limits, max_pending 100000, max_conns 25000, max_conns_per_ip 1000000, idle_timeout 1d; tick ${m.tick_ms} ms, queue_bytes ${m.queue_bytes}`],
  ], ['', ''])}

Everything (Redis, the gateway, the load tool, redis-benchmark) shares these
${m.nproc} cores; other work on the machine shows in the load averages below.

## Results

${table(ev.rows, ['case', 'target on this machine', 'measured', 'result'])}

${ev.knee.length ? `### The fan-out knee (K)

Case A's load (one top-10 view, ${int(Number(m.A_rate || 2000))} writes/s paced, 4 writers) at growing viewer counts. With a
${m.tick_ms} ms tick every viewer gets about ${Math.round(1000 / Number(m.tick_ms))} deltas a second whatever the write rate, so
the viewer count is what loads the gateway.

${kneeTable(ev)}

"Floor µs per send" is \`send_floor\`'s CPU per frame: the same frames (the run's average delta size) sent with plain
\`send()\` to as many loopback sockets at the rate the run delivered, no WebSocket library, JSON or event loop
(see "Method"); "gateway / floor" is the gateway's CPU per delta over it.
` : ''}${ev.many.rounds.length ? `${ev.knee.length ? '\n' : ''}${manySection(ev)}` : ''}${ev.zip.length ? `
### Compression (Z)

The same load twice on one gateway (\`[server] compression = on\`, as shipped): ${int(Number(m.Z_viewers))} viewers of one
top-100, writes paced (\`set\`: each write moves a member to the top), 4 writers; first viewers that do not offer
permessage-deflate, then viewers that do (as browsers do). "Bytes" are WebSocket payload bytes the gateway wrote
to the viewers (its \`rankcast_bytes_sent_total\` over the measurement minus the writers' acks; frame headers
not counted) per delta a viewer received; "JSON bytes" the same deltas uncompressed, as the viewer read them.
"Compressions" is \`rankcast_deflate_runs_total\`: one per delta per view, shared by its viewers.

${table(ev.zip, ['viewers offer', 'viewers', 'deltas delivered', 'JSON bytes per delta', 'bytes per delta on the wire', 'wire / JSON', 'gateway CPU µs per delivery', 'gateway CPU', 'compressions', 'latency p50 / p99 ms'])}
` : ''}${ev.workers ? ev.workers.section : ''}${ev.sharded ? ev.sharded.section : ''}${ev.lists ? ev.lists.section : ''}${ev.history ? ev.history.section : ''}
### Details

${table(ev.details.map((d) => [d.name, d.latency || '-', d.ack || '-', d.writes || '-', d.deliveries || '-', d.gateway || '-', d.bench || '-', d.load || '-']),
    ['case', 'write-to-screen latency', 'send-to-ack', 'writes', 'deliveries', 'gateway', 'rankcast-bench', 'load avg at start'])}

## Method

- **Load tool**: \`rankcast-bench\` (\`tests/bench/rankcast_bench.c\`), libwebsockets clients
  on libuv. Viewer connections take their source address round robin from
  127.0.0.2..127.0.0.250, so neither one address's ephemeral ports nor \`max_conns_per_ip\`
  limit them. Writers are WebSocket connections with the admin key, on a thread (and loop) of
  their own, so reading thousands of viewers never holds the writes back.
- **What "write-to-screen" means**: every accepted write gets the board's next \`seq\`, and a
  delta with \`seq\` S shows the board as of S. For each viewer, every write with a seq in
  (its previous seq, S] counts as delivered when that delta arrives; the latency is that
  moment minus the moment the write was handed to the socket (\`CLOCK_MONOTONIC\`, same
  process). Writes are \`set\` with a value one higher than the previous write to that board
  (members cycle over 1,000), so every write moves the top of the board and shows in a
  top-10: no write waits for a later one to become visible. Writes are paced by a 1 ms timer
  (A, B, E) or sent as fast as acks return with one in flight per connection (C).
  Percentiles come from a log-linear histogram (within 1.6 %); the tick is ${m.tick_ms} ms, so
  a write waits up to one tick before it can go out at all.
- **Ceiling (C)**: one write through the gateway is captured with \`MONITOR\`, so the
  redis-benchmark command is the gateway's own \`EVALSHA\` (same keys and ARGV) with the member
  replaced by \`u:__rand_int__\` (10,000 members, like the bench's \`incr\`), run with the same
  concurrency (\`-c\` = writer connections, one request in flight each) while the gateway is
  stopped. Ceiling and gateway run in back-to-back rounds (3 in the full run) so both sides of
  each ratio see the same machine; the median ratio counts. ${ceilCmd}
${ev.many.rounds.length ? `- **Many boards, one Redis and a cluster (L)**: the cluster is three \`redis-server --cluster-enabled yes\`
  on free loopback ports, formed with \`redis-cli --cluster create ... --cluster-replicas 0\`, the gateway
  given the three as its seed list (it reported \`mode: cluster\`). The ceilings are captured like C's:
  on one Redis the gateway's EVALSHA for one match board with \`redis-benchmark -c ${m.L_writers}\`; on the
  cluster one EVALSHA per primary, each captured on that primary with \`MONITOR\` while the gateway
  wrote to one board after another until every primary had seen one (so each line has the keys of a board
  that primary owns), run on the three primaries at the same time, the sum reported. Not
  \`redis-benchmark --cluster\`: it does not route a command by its key arguments (it spreads its clients
  over the primaries; those on a primary that does not own the board's slot get \`MOVED\`, on which it
  stops; checked in this run: ${m.L_rb_cluster_probe || 'not checked'}). The EVALSHAs' SHA matches SCRIPT LOAD
  of lua/write.lua: ${m.L_script_sha_matches || 'not checked'}. Writes Redis holds are checked against the acks: the sum of
  the case's boards' \`seq\` per server before and after each run. Any write answered anything but
  an ack (an error such as \`unavailable\`, a lost or unknown reply) fails the case.
` : ''}- **Idle connections (D)**: a fresh gateway; RSS from \`/proc/PID/status\` before the
  connections and 2 s after every bench process reported all its viewers subscribed; several
  bench processes, since the open-file limit is 20,000 per process.
- **First delivery (F)**: one writer, writes paced at 5 a second with \`--jitter\` (each write at a
  random moment in the first half of its 200 ms period, so the writes meet the gateway's tick at every
  phase; evenly paced writes would meet it at one fixed phase and measure that phase). Every write finds
  its board quiet for more than a tick, so this is the leading edge's case: the target is the round
  trip, not the tick.
- **Acks under load (Q)**: case K's largest load (one top-10, 2,000 writes/s from 4 writers) at
  5,000 viewers; what counts is the writers' send-to-ack time. The gateway's own part of it, from
  handling the request to its script's reply (after which the ack is written at once), comes from its
  \`rankcast_script_rtt_seconds\` histogram read at the start and the end of the run (bucket bounds:
  "≤ X ms"); the rest is the two sockets and the load tool's own loop (its stalls are in the details).
- **Burst (E)**: each viewer keeps its window as docs/protocol.md says a client must; once every
  write is acked, the bench reads the true top-10 (\`ZRANGE ... REV WITHSCORES\`, \`ZCARD\`) from
  Redis and records when each viewer's window (members, scores, total) became equal to it,
  measured from the moment the last write was sent.
${ev.knee.length ? `- **Floor (K)**: after each K run, \`send_floor\` (\`tests/bench/send_floor.c\`) opens as many loopback
  TCP connection pairs as the run had viewers (a listener on 127.0.0.1, the client sides, the accepted server
  sides; \`TCP_NODELAY\` on the server sides as libwebsockets sets it) and for ${m.K_floor_dur || 'a few'} s, at the run's deltas per
  viewer per second (in ticks: one frame to every connection per tick, as the gateway's tick does), writes
  one server-to-client WebSocket text frame (\`0x81\`, the length, no mask; the payload a delta-shaped JSON of
  the run's average delta size) to each server side with one non-blocking \`send()\`, while a reader thread
  drains the client sides (epoll, \`recv\`); a frame the socket does not take whole is finished on a later
  tick, and every byte sent must be read back. Its "µs per send" is the sender thread's CPU
  (\`CLOCK_THREAD_CPUTIME_ID\`) over the frames. On loopback the receiving side's TCP work runs inside the
  sender's \`send()\`, so the floor is the kernel's cost of one frame sent and received; the gateway's
  figure has its writes, JSON, coalescing and libwebsockets on top (the reader's own \`recv\` side is in
  neither: rankcast-bench and the reader thread are not counted).
` : ''}${ev.zip.length ? `- **Compression (Z)**: \`rankcast-bench --deflate\` has its viewers offer permessage-deflate
  (libwebsockets' client, inflating a whole message per step); the writers never do. At the start and the end of
  the measurement the bench reads the gateway's \`/metrics\` (\`rankcast_bytes_sent_total\`,
  \`rankcast_deflate_*\`); the bytes the writers received (their acks, uncompressed) are subtracted, which
  leaves the payload bytes written to viewers (deltas; resyncs would count too, there were none). Both runs
  share one gateway, so CPU per delivery includes the same write handling either way.
` : ''}- Gateway CPU seconds: \`/proc/PID/stat\` utime + stime over the case; peak RSS: \`VmHWM\`, reset
  per case through \`/proc/PID/clear_refs\`.

${keep || `${ANALYSIS_MARK}\n\n## Analysis\n\n(none yet)\n`}`;
}

function report(argv) {
  const dir = argv[0];
  let cases = 'A,B,C,D,E', out = null, smoke = false;
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === '--cases') cases = argv[++i];
    else if (argv[i] === '--out') out = argv[++i];
    else if (argv[i] === '--smoke') smoke = true;
  }
  const ev = evaluate(dir, cases.split(','), smoke);
  console.log('');
  for (const r of ev.rows) console.log(`  ${r[3].padEnd(5)} ${r[0]}\n        target:   ${r[1]}\n        measured: ${r[2]}`);
  console.log('');
  if (ev.knee.length) console.log(`  K, the fan-out knee, with the send() floor:\n\n${kneeTable(ev)}\n`);
  if (ev.sharded) {
    console.log(`  S, sharded boards, writes:\n\n${ev.sharded.tables.writes}\n\n${ev.sharded.tables.summary}\n`);
    console.log(`  S, sharded boards, REST reads:\n\n${ev.sharded.tables.reads}\n`);
  }
  if (ev.lists && ev.lists.table) console.log(`  M, member lists:\n\n${ev.lists.table}\n`);
  if (ev.history && ev.history.table) console.log(`  H, standings at a moment:\n\n${ev.history.table}\n`);
  if (out) {
    let keep = '';
    if (fs.existsSync(out)) {
      const old = fs.readFileSync(out, 'utf8');
      const i = old.indexOf(ANALYSIS_MARK);
      if (i >= 0) keep = old.slice(i);
    }
    fs.writeFileSync(out, markdown(ev, keep));
    console.log(`report written to ${out}`);
  }
  if (!smoke && ev.sharded && ev.sharded.failed.length) {
    console.error(`S: FAILED\n  ${ev.sharded.failed.join('\n  ')}`);
    process.exit(1);
  }
  if (!smoke && ev.many.failed.length) {
    console.error(`L: FAILED\n  ${ev.many.failed.join('\n  ')}`);
    process.exit(1);
  }
  if (!smoke && ev.distinct && (ev.distinct.failed.length || ev.broken.some((b) => b.startsWith('V:')))) {
    console.error(`V: FAILED\n  ${[...ev.distinct.failed, ...ev.broken.filter((b) => b.startsWith('V:'))].join('\n  ')}`);
    process.exit(1);
  }
  if (!smoke && ev.lists && (ev.lists.row[3] !== 'pass' || ev.broken.some((b) => b.startsWith('M')))) {
    console.error(`M: FAILED\n  ${[ev.lists.row[3] !== 'pass' ? 'M: Redis calls for list views grew with the lists' : null, ...ev.broken.filter((b) => b.startsWith('M'))].filter(Boolean).join('\n  ')}`);
    process.exit(1);
  }
  if (smoke) {
    if (ev.broken.length) {
      console.error(`smoke: BROKEN\n  ${ev.broken.join('\n  ')}`);
      process.exit(1);
    }
    console.log('smoke: the load tool and the gateway work (speed is not checked)');
  }
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === 'monitor-args') {
  const [file, member, repl] = rest;
  const line = fs.readFileSync(file, 'utf8').split('\n').find((l) => l.includes('"EVALSHA"'));
  const args = monitorArgs(line).map((a) => a.split(member).join(repl));
  process.stdout.write(args.map((a) => a + '\0').join(''));
} else if (cmd === 'floor-args') {
  const [file, tickMs] = rest;
  const j = JSON.parse(fs.readFileSync(file, 'utf8').trim().split('\n').pop());
  const d = j.deliveries;
  let rate = d.messages && j.viewers ? d.messages_per_s / j.viewers : 0;
  if (!(rate > 0)) rate = 1000 / Number(tickMs || 50); // none counted: the tick's rate
  const payload = d.messages && d.message_bytes ? Math.max(1, Math.round(d.message_bytes / d.messages)) : 160;
  console.log(`${j.viewers} ${rate.toFixed(3)} ${payload}`);
} else if (cmd === 'm-floor-args') {
  // case M's largest size, one phase (lists | top10): "CONNS TICK_RATE PAYLOAD" for send_floor
  const [file, phase] = rest;
  const j = JSON.parse(fs.readFileSync(file, 'utf8').trim().split('\n').pop());
  const s = j.sizes[j.sizes.length - 1], p = s[phase];
  const rate = p.deltas_per_s > 0 ? p.deltas_per_s / s.connections : 20;
  console.log(`${s.connections} ${rate.toFixed(3)} ${Math.max(1, Math.round(p.delta_bytes_avg || 160))}`);
} else if (cmd === 'report') {
  report(rest);
} else {
  console.error('usage: report.js monitor-args FILE MEMBER REPLACEMENT | floor-args FILE TICK_MS | m-floor-args FILE lists|top10 | report DIR [--cases A,B] [--smoke] [--out FILE]');
  process.exit(2);
}
