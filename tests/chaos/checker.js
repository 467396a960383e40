/* checker.js - judges a chaos history offline (tests/chaos/history.js has the
 * format; tests/chaos/chaos.js writes it).
 *
 *   node tests/chaos/checker.js HISTORY.jsonl
 *
 * Prints `chaos: N writes acked, N faults, N checks, N violations`; on a
 * violation also the seed and the lines of the history around it, and exits 1.
 * What it checks (issue 25):
 *   writes   every acked write is in the final state exactly once: per board,
 *            period and member, the sum of the acked increments is the final
 *            score. Not required: writes acked before a Redis lost its data
 *            (an epoch), acked while it was down, acked with replicas < 1 on a
 *            cluster, or never acked; those may count 0 or 1 times (bounds).
 *   feeds    every feed is gapless per epoch (each event the next seq), or its
 *            snapshot says reset; an epoch never changes without reset; on a
 *            feed seen from seq 0 each event's score is the member's previous
 *            score plus its delta and prev_rank is null exactly for a member's
 *            first event (and never above rank on these incr-only desc boards).
 *   windows  snapshots plus deltas by the PROTOCOL rule; a delta row of a member
 *            already in the window carries prev_rank = its position there; at
 *            each quiet point every open view equals the true window.
 *   lists    member lists and rosters (docs/teams.md): snapshot rows + absent,
 *            deltas by the rule (removed join absent, rows leave it), a delta
 *            row's prev_rank = its rank in the list, null when it arrives; at
 *            each quiet point (`teamtruth`) every open list equals the truth
 *            computed from the board's rows and the membership hash (each
 *            listed member's board-wide rank, score and team, absent right),
 *            every roster is the team's members by rank, every team's score
 *            on the team board is the sum of its members' points, the
 *            membership counts are right, and every acked team move is the
 *            member's team at the end (the last acked one, or a later one
 *            never acked) - applied once, never undone.
 *   gateways exit 0 (or the run's own SIGKILL), no sanitizer report.
 * The final state is the boards' sorted sets as read from Redis itself at
 * the end (`redisfinal` lines), and gateway 1's REST read of every board
 * (`final`) must agree with it; an older history without `redisfinal`
 * lines is judged by the REST read.
 */
'use strict';

const { readHistory } = require('./history');

function rowKey(r, places) {
  // rows of a board with teams carry the member's team (docs/teams.md)
  const o = [r.rank, r.member, r.score, r.team || null];
  if (places) o.push(r.place, !!r.tied);
  return JSON.stringify(o);
}

// Whether a feed that held epoch `from` (at sharded cursor `fromCur`) may
// now say epoch `to` (cursor `toCur`) without a reset: the same epoch, or a
// history beginning where there was none; on a sharded board (docs/sharded.md)
// the epoch is a digest of the shards' epochs, so it also changes when a
// shard without a history begins one, and its cursor (EPOCH8:SEQ per shard)
// tells that apart from a shard whose history started over.
function sameHistory(from, to, fromCur, toCur) {
  if (!from || !to || from === to) return true;
  if (!fromCur || !toCur) return false;
  const a = fromCur.split('.');
  const b = toCur.split('.');
  return a.length === b.length && a.every((x, k) => {
    const e = x.split(':')[0];
    return e === '' || e === b[k].split(':')[0];
  });
}

function check(lines) {
  const meta = lines.find((l) => l.k === 'meta') || {};
  const violations = [];
  let checks = 0;
  const bad = (what, ctx) => violations.push(Object.assign({ what }, ctx));

  /* ---- index the history ---- */
  const epochs = [];        // { down, up }
  const periods = [];       // { t, board, period }
  const finals = new Map(); // board|period -> final line (read through gateway 1's REST API)
  const redisFinals = [];   // the sorted sets read from Redis itself
  const openConns = new Map(); // c -> open
  let faults = 0;
  const writes = new Map(); // req -> write
  const byId = new Map();   // request id -> { kind, ... }
  const subs = new Map();   // c|sub -> view state
  const truths = [];
  const teamMoves = new Map(); // member -> [team write]
  let lastTeamTruth = null;
  const tfig = { moves: 0, lists: 0, rosters: 0, sums: 0, quiet: 0 };

  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    l.i = i;
    if (l.k === 'epoch') {
      if (l.phase === 'down') epochs.push({ down: l.t, up: Infinity });
      else if (epochs.length) epochs[epochs.length - 1].up = l.t;
    } else if (l.k === 'period') periods.push(l);
    else if (l.k === 'fault' && l.phase === 'end') faults++;
    else if (l.k === 'final') finals.set(`${l.board}|${l.period || ''}`, l);
    else if (l.k === 'redisfinal') redisFinals.push(l);
    else if (l.k === 'open') openConns.set(l.c, true);
    else if (l.k === 'close') openConns.set(l.c, false);
    else if (l.k === 'gwexit') {
      for (const p of l.problems || []) bad(`gateway ${l.gw} did not end cleanly: ${p}`, { at: i });
    } else if (l.k === 'aborted') bad(`the run itself failed: ${l.error}`, { at: i });
    else if (l.k === 'send') {
      const m = l.m;
      if (['incr', 'set', 'best', 'submit'].includes(m.op) && m.req !== undefined) {
        let w = writes.get(m.req);
        if (!w) {
          w = { req: m.req, board: m.board, member: m.member, delta: m.delta, sends: [], acks: [], errors: [], lines: [] };
          writes.set(m.req, w);
        }
        w.sends.push(l.t);
        w.lines.push(i);
        byId.set(m.id, { kind: 'write', w });
      } else if (m.op === 'team' && m.req !== undefined) {
        let w = writes.get(m.req);
        if (!w) {
          w = { req: m.req, team: true, board: m.board, member: m.member, to: m.team, sends: [], acks: [], errors: [], lines: [] };
          writes.set(m.req, w);
          if (!teamMoves.has(m.member)) teamMoves.set(m.member, []);
          teamMoves.get(m.member).push(w);
        }
        w.sends.push(l.t);
        w.lines.push(i);
        byId.set(m.id, { kind: 'write', w });
      } else if (m.op === 'subscribe') {
        byId.set(m.id, { kind: 'sub', c: l.c, m, at: i });
      }
    } else if (l.k === 'recv') {
      const m = l.m;
      const req = m.id !== undefined ? byId.get(m.id) : undefined;
      if (req && req.kind === 'write') {
        req.w.lines.push(i);
        if (m.op === 'ack' || m.op === 'teamed') {
          if (req.w.team && !req.w.acks.length) tfig.moves++;
          req.w.acks.push({ t: l.t, m });
          if (req.w.team && (m.team === undefined ? null : m.team) !== (req.w.to === undefined ? null : req.w.to)) {
            bad(`team move of ${req.w.member} to ${req.w.to} answered team ${m.team}`, { at: i, lines: req.w.lines });
          }
        }
        else req.w.errors.push({ t: l.t, m });
        continue;
      }
      if (req && req.kind === 'sub' && m.op === 'snapshot') {
        const s = {
          c: l.c, sub: m.sub, spec: req.m, lines: [req.at, i], feed: !!req.m.view.feed,
          around: !!req.m.view.around, list: !!(req.m.view.members || req.m.view.team !== undefined),
        };
        subs.set(`${l.c}|${m.sub}`, s);
        onSnapshot(s, m, true, i);
        continue;
      }
      if (m.sub === undefined) continue;
      const s = subs.get(`${l.c}|${m.sub}`);
      if (!s) continue;
      s.lines.push(i);
      if (m.op === 'snapshot') onSnapshot(s, m, false, i);
      else if (m.op === 'event') onEvent(s, m, i);
      else if (m.op === 'delta') onDelta(s, m, i);
    } else if (l.k === 'truth') truths.push(l);
    else if (l.k === 'quiet') {
      // compare at the next truth lines (they follow the quiet line)
    }
    if (l.k === 'truth') compareTruth(l, i);
    if (l.k === 'feedtruth') compareFeeds(l, i);
    if (l.k === 'teamtruth') { compareTeams(l, i); lastTeamTruth = l; tfig.quiet++; }
  }

  /* ---- feeds ---- */
  function onSnapshot(s, m, isReply, i) {
    if (s.feed) {
      const since = isReply ? s.spec.since : undefined;
      if (since && !m.reset) {
        if (m.epoch && since.epoch && m.epoch !== since.epoch) {
          bad(`feed resumed in epoch ${since.epoch} got epoch ${m.epoch} without reset`, { c: s.c, sub: s.sub, at: i, lines: s.lines });
        }
        if (m.seq < since.seq) bad(`feed resumed at seq ${since.seq} got a snapshot at seq ${m.seq} without reset`, { c: s.c, at: i, lines: s.lines });
        s.expect = since.seq + 1;
        s.epoch = since.epoch;
        s.fromZero = false;
      } else if (!isReply && !m.reset && m.period === s.period && s.expect !== undefined) {
        // a pushed snapshot of the same period and history (after a
        // re-subscribe) carries no events: the feed's next event is still
        // the one after the last it delivered, so it moves no cursor, and a
        // gap it stands for shows at the next event or at the quiet point
        if (!sameHistory(s.epoch, m.epoch, s.cursor, m.cursor)) {
          bad(`feed's epoch changed from ${s.epoch} to ${m.epoch} without reset`, { c: s.c, at: i, lines: s.lines });
        }
        if (m.epoch) s.epoch = m.epoch;
      } else {
        s.expect = m.seq + 1;
        s.epoch = m.epoch || '';
        s.fromZero = m.seq === 0;
        s.scores = new Map();
      }
      if (m.cursor !== undefined) s.cursor = m.cursor;
      s.period = m.period;
      checks++;
      return;
    }
    s.rows = (m.rows || []).map((r) => Object.assign({}, r));
    if (s.list) s.absent = new Set(m.absent || []);
    s.period = m.period;
    s.live = true;
  }

  /* ---- member lists and rosters ---- */
  function onListDelta(s, m, i) {
    checks++;
    const ctx = { c: s.c, sub: s.sub, at: i, lines: s.lines };
    for (const r of m.rows || []) {
      const had = s.rows.find((x) => x.member === r.member);
      const want = had ? had.rank : null;
      if ((r.prev_rank === undefined ? null : r.prev_rank) !== want) {
        bad(`list on ${s.spec.board} ${JSON.stringify(s.spec.view)}: delta row ${r.member} has prev_rank ${r.prev_rank}, the list had it at ${want}`, ctx);
      }
    }
    const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
    s.rows = s.rows.filter((x) => !gone.has(x.member));
    for (const x of m.removed || []) s.absent.add(x);
    for (const r of m.rows || []) { s.rows.push(Object.assign({}, r)); s.absent.delete(r.member); }
    s.rows.sort((a, b) => a.rank - b.rank);
  }

  // The truth of every member list and roster, and of the team board, from
  // the quiet point's full read of the source board and its membership hash.
  function compareTeams(l, i) {
    const rows = (l.players && l.players.rows) || [];
    if (!l.players || !Array.isArray(l.players.rows) || !l.squads || !Array.isArray(l.squads.rows)) {
      bad(`no true team board state at the quiet point: ${JSON.stringify(l.players).slice(0, 200)}`, { at: i });
      return;
    }
    const tm = {};
    const counts = {};
    for (const [k, v] of Object.entries(l.tm || {})) {
      if (k === '#') continue; // the membership's version (lua/write.lua, op team)
      if (k.startsWith('#')) counts[k.slice(1)] = Number(v);
      else tm[k] = v;
    }
    const on = new Map(rows.map((r) => [r.member, r]));
    // the source's rows carry the team the hash has
    for (const r of rows) {
      checks++;
      if ((r.team || null) !== (tm[r.member] || null)) bad(`${l.board}: row ${r.member} says team ${r.team}, the membership says ${tm[r.member]}`, { at: i });
    }
    // member counts
    const members = {};
    for (const [mem, t] of Object.entries(tm)) (members[t] || (members[t] = [])).push(mem);
    for (const t of new Set([...Object.keys(members), ...Object.keys(counts)])) {
      checks++;
      const n = (members[t] || []).length;
      if ((counts[t] || 0) !== n) bad(`team ${t}: the membership counts ${counts[t] || 0} members, ${n} have it`, { at: i });
    }
    // the team board: each team's score is the sum of its members' points
    const onT = new Map(l.squads.rows.map((r) => [r.member, r.score]));
    for (const t of new Set([...Object.keys(members), ...onT.keys()])) {
      checks++;
      const mine = (members[t] || []).filter((mem) => on.has(mem));
      const sum = mine.reduce((a, mem) => a + on.get(mem).score, 0);
      tfig.sums++;
      if (!onT.has(t)) {
        if (mine.length) bad(`${l.teams}: team ${t} is missing, its members ${mine.join(',')} have ${sum} points`, { at: i });
      } else if (!members[t]) bad(`${l.teams}: team ${t} is on the board with ${onT.get(t)}, it has no members`, { at: i });
      else if (onT.get(t) !== sum) bad(`${l.teams}: team ${t} has ${onT.get(t)}, its members' points sum to ${sum}`, { at: i });
    }
    // every open list and roster
    for (const s of subs.values()) {
      if (!s.list || !s.rows || !openConns.get(s.c) || s.spec.board !== l.board) continue;
      checks++;
      const v = s.spec.view;
      if (v.members) tfig.lists++; else tfig.rosters++;
      const listed = v.members ? v.members : Object.keys(tm).filter((mem) => tm[mem] === v.team);
      const want = listed.filter((mem) => on.has(mem)).map((mem) => on.get(mem)).sort((a, b) => a.rank - b.rank)
        .map((r) => rowKey(r, false)).join(' ');
      const wantAbsent = listed.filter((mem) => !on.has(mem)).sort().join(',');
      const got = s.rows.map((r) => rowKey(r, false)).join(' ');
      const gotAbsent = [...s.absent].sort().join(',');
      if (got !== want || gotAbsent !== wantAbsent) {
        bad(`${v.members ? 'member list' : `roster of ${v.team}`} on ${l.board} differs from the truth at a quiet point:\n  list:  ${got} absent [${gotAbsent}]\n  truth: ${want} absent [${wantAbsent}]`,
          { c: s.c, sub: s.sub, at: i, lines: s.lines });
      }
    }
  }

  function onEvent(s, m, i) {
    checks++;
    const ctx = { c: s.c, sub: s.sub, at: i, lines: s.lines };
    if (!sameHistory(s.epoch, m.epoch, s.cursor, m.cursor)) bad(`feed on ${s.spec.board}: epoch changed from ${s.epoch} to ${m.epoch} without reset (seq ${m.seq})`, ctx);
    if (m.cursor !== undefined) s.cursor = m.cursor;
    if (m.seq !== s.expect) bad(`feed on ${s.spec.board}: expected seq ${s.expect}, got ${m.seq} (no reset)`, ctx);
    s.expect = m.seq + 1;
    if (m.epoch) s.epoch = m.epoch;
    if (s.spec.board === 'squads') return; // a move takes points from a team: only the seqs are judged
    if (m.prev_rank !== null && m.prev_rank !== undefined && m.delta > 0 && m.rank > m.prev_rank) {
      bad(`feed on ${s.spec.board}: ${m.member} +${m.delta} went down from ${m.prev_rank} to ${m.rank}`, ctx);
    }
    if (s.fromZero) {
      const prev = s.scores.get(m.member);
      if (prev === undefined && m.prev_rank !== null) bad(`feed on ${s.spec.board}: first event of ${m.member} has prev_rank ${m.prev_rank}, expected null`, ctx);
      if (prev !== undefined && (m.prev_rank === null || m.prev_rank === undefined)) bad(`feed on ${s.spec.board}: ${m.member} was on the board but its event has prev_rank null`, ctx);
      if (m.score !== (prev || 0) + m.delta) bad(`feed on ${s.spec.board}: ${m.member} score ${m.score} is not ${prev || 0} + ${m.delta}`, ctx);
      s.scores.set(m.member, m.score);
    }
  }

  /* ---- windows ---- */
  function onDelta(s, m, i) {
    if (s.feed || !s.rows) return;
    if (s.list) { onListDelta(s, m, i); return; }
    checks++;
    const ctx = { c: s.c, sub: s.sub, at: i, lines: s.lines };
    if (s.around) {
      // around views are sent as snapshots; a delta there only carries counts
      if ((m.rows || []).length || (m.removed || []).length) bad(`around view on ${s.spec.board} got a delta with rows`, ctx);
      return;
    }
    const v = s.spec.view;
    const first = v.top ? 1 : v.offset + 1;
    const len = v.top || v.limit;
    // prev_rank: where the member stood in the state this view last delivered
    for (const r of m.rows || []) {
      const j = s.rows.findIndex((x) => x.member === r.member);
      if (j >= 0 && r.prev_rank !== first + j) {
        bad(`delta on ${s.spec.board}: ${r.member} was at rank ${first + j} in the view, delta says prev_rank ${r.prev_rank}`, ctx);
      }
    }
    const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
    const rows = s.rows.filter((x) => !gone.has(x.member));
    for (const r of [...(m.rows || [])].sort((a, b) => a.rank - b.rank)) {
      const at = r.rank - first;
      if (at < 0 || at > rows.length) continue; // outside the window: dropped by the cut
      rows.splice(at, 0, Object.assign({}, r));
    }
    rows.length = Math.min(rows.length, len);
    // ranks follow from positions after the rule
    rows.forEach((r, k) => { r.rank = first + k; });
    s.rows = rows;
  }

  function sameSpec(s, l) {
    return !s.feed && s.spec.board === l.board && JSON.stringify(s.spec.view) === JSON.stringify(l.view)
      && (s.spec.places || null) === (l.places || null);
  }

  function compareTruth(l, i) {
    if (!l.snap || !Array.isArray(l.snap.rows)) {
      bad(`no true window for ${l.board} ${JSON.stringify(l.view)} at the quiet point: ${JSON.stringify(l.snap)}`, { at: i });
      return;
    }
    const places = !!l.places;
    const want = l.snap.rows.map((r) => rowKey(r, places)).join('\n');
    for (const s of subs.values()) {
      if (!s.rows || !openConns.get(s.c) || !sameSpec(s, l)) continue;
      checks++;
      const ctx = { c: s.c, sub: s.sub, at: i, lines: s.lines };
      if (l.period && s.period !== l.period) {
        bad(`view of ${l.board} is on period ${s.period} at a quiet point, the current one is ${l.period}`, ctx);
        continue;
      }
      const got = s.rows.map((r) => rowKey(r, places)).join('\n');
      if (got !== want) {
        bad(`view of ${l.board} ${JSON.stringify(l.view)}${places ? ' shared places' : ''} differs from the truth at a quiet point:\n  view:  ${got.split('\n').join(' ')}\n  truth: ${want.split('\n').join(' ')}`, ctx);
      }
    }
  }

  function compareFeeds(l, i) {
    if (typeof l.seq !== 'number') {
      bad(`no true seq for ${l.board} at the quiet point`, { at: i });
      return;
    }
    for (const s of subs.values()) {
      if (!s.feed || !openConns.get(s.c) || s.spec.board !== l.board || s.expect === undefined) continue;
      if (l.period && s.period !== l.period) continue; // compared as windows are (a stuck period shows there)
      checks++;
      if (s.expect - 1 !== l.seq) {
        bad(`feed on ${l.board} delivered up to seq ${s.expect - 1} at a quiet point, the board is at seq ${l.seq}` +
          (s.expect - 1 < l.seq ? ' (an event never arrived)' : ''), { c: s.c, sub: s.sub, at: i, lines: s.lines });
      }
    }
  }

  /* ---- writes ---- */
  const cluster = meta.mode === 'cluster';
  const sums = new Map(); // board|period|member -> { lo, hi, reqs }
  let acked = 0;
  for (const w of writes.values()) {
    if (w.team) continue; // judged below (team moves)
    const periodOf = (t) => {
      let p = '';
      for (const x of periods) if (x.board === w.board && x.t <= t) p = x.period;
      return p;
    };
    let applied; // 'yes' | 'maybe' | 'no'
    const firstAck = w.acks[0];
    if (!firstAck) {
      const final = w.errors[w.errors.length - 1];
      const refused = final && !['unavailable', 'rate_limited', 'internal'].includes(final.m.code) && w.errors.length === w.sends.length;
      applied = refused ? 'no' : 'maybe';
    } else {
      acked++;
      const ta = firstAck.t;
      const replicas = Math.max(...w.acks.map((a) => (a.m.replicas === undefined ? 99 : a.m.replicas)));
      // the end of the write's period (periodic boards): its final standings
      // are archived then, and a finished period reads from the archive once
      // its keys are gone, so a later data loss may not lose it
      const closed = periods.find((x) => x.board === w.board && x.t > ta);
      const lost = epochs.filter((e) => e.down > ta);
      if (lost.length && closed && lost.every((e) => e.down > closed.t)) applied = 'maybe';
      else if (lost.length) applied = 'no';          // acked, then its Redis lost the data
      else if (epochs.some((e) => e.down <= ta && ta <= e.up)) applied = 'maybe';
      else if (cluster && replicas < 1) applied = 'maybe';
      else applied = 'yes';
      // and a write sent before a data loss but acked after it: once, in the new history
    }
    const t = firstAck ? firstAck.t : w.sends[w.sends.length - 1];
    const key = `${w.board}|${periodOf(t)}|${w.member}`;
    let e = sums.get(key);
    if (!e) { e = { lo: 0, hi: 0, reqs: [] }; sums.set(key, e); }
    if (applied === 'yes') { e.lo += w.delta; e.hi += w.delta; }
    else if (applied === 'maybe') e.hi += w.delta;
    e.reqs.push(w);
  }
  // The final points: from Redis itself when the history has them (each
  // board's sorted set, a sharded board's shards summed, points =
  // floor(composite / 2^T), docs/score-layout.md); the gateway's final read
  // must then agree with Redis on every member.
  const restScores = new Map();
  for (const f of finals.values()) {
    if (f.status !== 200 || !Array.isArray(f.rows)) {
      bad(`final read of ${f.board} ${f.period || ''} failed: ${f.status}`, { at: f.i });
      continue;
    }
    for (const r of f.rows) restScores.set(`${f.board}|${f.period || ''}|${r.member}`, r.score);
    if (f.total !== undefined && f.total > f.rows.length) bad(`final read of ${f.board} has ${f.total} members, read ${f.rows.length}`, { at: f.i });
  }
  let finalScores = restScores;
  if (redisFinals.length) {
    finalScores = new Map();
    const tbits = meta.tbits || {};
    for (const f of redisFinals) {
      if (tbits[f.board] === undefined) { bad(`no tie-break width for ${f.board} in the meta line`, { at: f.i }); continue; }
      const unit = 2 ** tbits[f.board];
      for (const [member, composite] of f.rows) {
        const key = `${f.board}|${f.period || ''}|${member}`;
        finalScores.set(key, (finalScores.get(key) || 0) + Math.floor(composite / unit));
      }
    }
    // a finished period whose keys a later data loss took from Redis is
    // read from the gateway's archive (docs/periods.md): there the REST read
    // is the final state
    const inRedis = new Set(redisFinals.map((f) => `${f.board}|${f.period || ''}|`));
    for (const f of finals.values()) {
      const bp = `${f.board}|${f.period || ''}|`;
      if (!f.period || inRedis.has(bp) || !Array.isArray(f.rows)) continue;
      for (const r of f.rows) finalScores.set(bp + r.member, r.score);
    }
    const read = new Set([...finals.values()].map((f) => `${f.board}|${f.period || ''}|`));
    for (const [key, score] of finalScores) {
      if (!read.has(key.slice(0, key.lastIndexOf('|') + 1))) continue; // a period the gateway was not asked for
      checks++;
      if (restScores.get(key) !== score) bad(`${key}: the gateway's final read says ${restScores.get(key)}, Redis holds ${score}`, {});
    }
    for (const key of restScores.keys()) {
      if (!finalScores.has(key)) { checks++; bad(`${key}: the gateway's final read has it, Redis does not`, {}); }
    }
  }
  if (finals.size || redisFinals.length) {
    for (const [key, e] of sums) {
      checks++;
      const got = finalScores.get(key) || 0;
      if (got < e.lo || got > e.hi) {
        const lines = e.reqs.flatMap((w) => w.lines);
        bad(`${key}: final score ${got}, acked writes say ${e.lo === e.hi ? e.lo : `${e.lo}..${e.hi}`}` +
          (got < e.lo ? ' (an acked write is missing)' : ' (a write applied more than once or never acked)'),
        { at: lines[lines.length - 1], lines, reqs: e.reqs.map((w) => w.req) });
      }
    }
    for (const key of finalScores.keys()) {
      if (!sums.has(key)) { checks++; bad(`${key}: on the board at the end, but nobody wrote it`, {}); }
    }
  } else if (!lines.some((l) => l.k === 'aborted')) {
    bad('the history has no final state', {});
  }

  // team moves: each member's team at the end (the last quiet point's
  // membership, read from Redis) is its last acked move, or a move sent after
  // it that was never acked; a Redis that lost its data after the ack
  // (an epoch) excuses it
  if (lastTeamTruth) {
    const tmEnd = lastTeamTruth.tm || {};
    for (const [member, ws] of teamMoves) {
      const acked = ws.filter((w) => w.acks.length).sort((a, b) => a.acks[0].t - b.acks[0].t);
      const last = acked[acked.length - 1];
      if (!last) continue;
      if (last.acks[0].t > lastTeamTruth.t) continue;
      if (epochs.some((e) => e.down > last.acks[0].t || (e.down <= last.acks[0].t && last.acks[0].t <= e.up))) continue;
      checks++;
      const ok = new Set([last.to === undefined ? null : last.to]);
      for (const w of ws) if (!w.acks.length && w.sends[0] > last.sends[0]) ok.add(w.to === undefined ? null : w.to);
      const got = tmEnd[member] || null;
      if (!ok.has(got)) {
        bad(`${member}: on team ${got} at the end, its last acked team move (${last.req}) says ${last.to}`, { at: last.lines[last.lines.length - 1], lines: last.lines });
      }
    }
  }

  // figures: faults by kind, the longest write (first try to ack) begun
  // during each kind of fault or within 5 s after it, the largest RSS seen
  const spans = [];
  const open = new Map();
  for (const l of lines) {
    if (l.k !== 'fault') continue;
    const key = `${l.kind}|${l.target}`;
    if (l.phase === 'start') open.set(key, l.t);
    else if (l.phase === 'end' && open.has(key)) { spans.push({ kind: l.kind, from: open.get(key), to: l.t }); open.delete(key); }
  }
  const byKind = {};
  for (const sp of spans) {
    const k = byKind[sp.kind] || (byKind[sp.kind] = { n: 0, longestMs: 0 });
    k.n++;
    for (const w of writes.values()) {
      if (w.team || !w.acks.length || w.sends[0] < sp.from || w.sends[0] > sp.to + 5000) continue;
      k.longestMs = Math.max(k.longestMs, w.acks[0].t - w.sends[0]);
    }
  }
  const rssLines = lines.filter((l) => l.k === 'rss');
  const rss = rssLines.map((l) => l.kb);
  // the stated bound (the run's meta line; 128 MB for a history without one)
  const rssBound = meta.rssBoundKb || 128 * 1024;
  for (const l of rssLines) {
    checks++;
    if (l.kb > rssBound) bad(`gateway ${l.gw}: RSS ${l.kb} kB, over the run's bound of ${rssBound} kB`, { at: l.i });
  }
  // RSS over time: per gateway, the largest sample of each 5-minute span
  // (samples are taken at quiet points), for docs/reliability.md
  const rssOverTime = {};
  for (const l of rssLines) {
    const row = rssOverTime[l.gw] || (rssOverTime[l.gw] = []);
    const slot = Math.floor(l.t / 300000);
    row[slot] = Math.max(row[slot] || 0, l.kb);
  }
  const figures = { byKind, maxRssKb: rss.length ? Math.max(...rss) : null, rssOverTime, teams: tfig };
  return { meta, acked, faults, checks, violations, truths: truths.length, figures };
}

// The lines around a violation: the client's (or write's) own lines near it,
// plus the faults and epochs of the 3 s before it.
function around(lines, v, max = 40) {
  if (v.at === undefined) return [];
  const t = lines[v.at].t;
  const own = (v.lines || [v.at]).filter((i) => i <= v.at && lines[i].t >= t - 3000);
  const ctx = lines.filter((l) => (l.k === 'fault' || l.k === 'epoch' || l.k === 'quiet') && l.t >= t - 3000 && l.t <= t);
  const pick = [...new Set([...own.slice(-max), ...ctx.map((l) => l.i), v.at])].sort((a, b) => a - b);
  return pick.map((i) => JSON.stringify(Object.assign({}, lines[i], { i: undefined })));
}

function report(lines, res, out = console) {
  const n = res.violations.length;
  out.log(`chaos: ${res.acked} writes acked, ${res.faults} faults, ${res.checks} checks, ${n} violations`);
  if (res.figures) {
    const kinds = Object.entries(res.figures.byKind)
      .map(([k, v]) => `${k} ${v.n} (longest write ${(v.longestMs / 1000).toFixed(1)} s)`).join(', ');
    out.log(`  faults: ${kinds || 'none'}; largest gateway RSS ${res.figures.maxRssKb} kB (bound ${res.meta.rssBoundKb || 128 * 1024} kB)`);
    const rot = res.figures.rssOverTime || {};
    for (const [gw, row] of Object.entries(rot))
      out.log(`  gateway ${gw} RSS, largest per 5 min (kB): ${Array.from(row, (v) => (v === undefined ? '-' : v)).join(' ')}`);
    const tf = res.figures.teams;
    if (tf && tf.quiet) out.log(`  teams: ${tf.moves} team moves acked; at ${tf.quiet} quiet points ${tf.lists} member lists, ${tf.rosters} rosters, ${tf.sums} team sums judged`);
  }
  const kinds = new Map();
  for (const v of res.violations) {
    const kind = v.what.replace(/[0-9]+/g, 'N').replace(/\|[^:]*:/, ':').split('\n')[0].slice(0, 90);
    kinds.set(kind, (kinds.get(kind) || 0) + 1);
  }
  for (const [kind, n2] of kinds) out.log(`  ${n2} x ${kind}`);
  for (const v of res.violations.slice(0, 10)) {
    out.log(`\nviolation (seed ${res.meta.seed}, mode ${res.meta.mode}): ${v.what}`);
    for (const l of around(lines, v)) out.log('  ' + l);
  }
  if (n > 10) out.log(`\n... and ${n - 10} more`);
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) { console.error('usage: node tests/chaos/checker.js HISTORY.jsonl'); process.exit(2); }
  const lines = readHistory(file);
  const res = check(lines);
  report(lines, res);
  process.exit(res.violations.length ? 1 : 0);
}

module.exports = { check, report, around };
