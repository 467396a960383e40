// Unit tests of web/rankcast.js: the window rule of PROTOCOL.md ("Applying a
// delta to a window"), snapshots, change lists and feed sequencing. Pure
// logic, no gateway and no socket: the View class is driven by hand.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const Rankcast = require('../../web/rankcast.js');

const { applyDelta, changesBetween, feedStep, windowOf, View } = Rankcast;

const row = (rank, member, score) => ({ rank, member, score });
const members = (list) => list.map((r) => r.member);
const strip = (list) => list.map((r) => ({ rank: r.rank, member: r.member, score: r.score }));

/* ---- the reference model: a board and its true windows ---------------- */

// Deterministic PRNG so a failing property run can be replayed from its seed.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Ranks a board { member: score } by score desc, earliest first on ties
// (insertion stamp), like the demo board.
function ranked(board) {
  return Object.entries(board)
    .sort((a, b) => b[1].score - a[1].score || a[1].at - b[1].at)
    .map(([member, e], i) => row(i + 1, member, e.score));
}

function trueWindow(board, first, length) {
  return ranked(board).slice(first - 1, first - 1 + length);
}

// A delta the way a server may build one: `minimal` leaves out members that
// keep their order and score (their rank may shift), otherwise every row whose
// rank or score changed is sent. `trim` leaves members that fall off the end
// out of `removed` when the cut to the window's length drops them anyway.
// Every variant must turn old into new by the rule.
function serverDelta(oldWin, newWin, length, minimal, trim) {
  let keep;
  if (minimal) {
    keep = lcsKept(oldWin, newWin);
  } else {
    const old = new Map(oldWin.map((r) => [r.member, r]));
    keep = new Set(newWin.filter((r) => {
      const o = old.get(r.member);
      return o && o.rank === r.rank && o.score === r.score;
    }).map((r) => r.member));
  }
  const inNew = new Set(members(newWin));
  // Past the last kept member, leavers end up behind every insert: the cut
  // removes them, but only when the new window fills the whole length.
  let lastKept = -1;
  oldWin.forEach((r, i) => { if (keep.has(r.member)) lastKept = i; });
  const cutDrops = trim && newWin.length === length;
  const removed = oldWin
    .filter((r, i) => !inNew.has(r.member) && !(cutDrops && i > lastKept))
    .map((r) => r.member);
  return { op: 'delta', rows: newWin.filter((r) => !keep.has(r.member)), removed };
}

// Members of the longest common subsequence of the two windows (same member,
// same score): those can stay put while the rest is reinserted around them.
function lcsKept(a, b) {
  const eq = (x, y) => x.member === y.member && x.score === y.score;
  const n = a.length, m = b.length;
  const L = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      L[i][j] = eq(a[i], b[j]) ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const kept = new Set();
  for (let i = 0, j = 0; i < n && j < m;) {
    if (eq(a[i], b[j])) { kept.add(a[i].member); i++; j++; } else if (L[i + 1][j] >= L[i][j + 1]) i++; else j++;
  }
  return kept;
}

// One random write (or removal) to the model board.
function randomWrite(board, rand, clock) {
  const names = Object.keys(board);
  const pick = () => 'user:' + Math.floor(rand() * 40);
  const r = rand();
  const m = pick();
  if (r < 0.1 && names.length) { delete board[names[Math.floor(rand() * names.length)]]; return; }
  const e = board[m] || { score: 0, at: clock.t };
  if (r < 0.6) e.score += Math.floor(rand() * 200) - 60;       // incr, sometimes negative
  else if (r < 0.8) e.score = Math.floor(rand() * 1000);       // set
  else e.score = Math.max(e.score, Math.floor(rand() * 1000)); // best
  e.at = clock.t++; // the tie-break slot moves with every write
  board[m] = e;
}

/* ---- windowOf ---------------------------------------------------------- */

test('windowOf: top N starts at rank 1, a page at offset + 1', () => {
  assert.deepEqual(windowOf({ top: 10 }), { first: 1, length: 10 });
  assert.deepEqual(windowOf({ offset: 20, limit: 5 }), { first: 21, length: 5 });
  assert.equal(windowOf({ around: 'user:1', radius: 3 }), null);
  assert.equal(windowOf({ feed: true }), null);
});

/* ---- applyDelta on top N ------------------------------------------------ */

const top5 = [row(1, 'a', 50), row(2, 'b', 40), row(3, 'c', 30), row(4, 'd', 20), row(5, 'e', 10)];

test('top N: a member moving up is one row; the others shift down', () => {
  const out = applyDelta(top5, { rows: [row(2, 'd', 45)], removed: [] }, 1, 5);
  assert.deepEqual(strip(out), [row(1, 'a', 50), row(2, 'd', 45), row(3, 'b', 40), row(4, 'c', 30), row(5, 'e', 10)]);
});

test('top N: a newcomer pushes the last row out by the cut, without naming it', () => {
  const out = applyDelta(top5, { rows: [row(1, 'z', 99)], removed: [] }, 1, 5);
  assert.deepEqual(members(out), ['z', 'a', 'b', 'c', 'd']);
  assert.deepEqual(out.map((r) => r.rank), [1, 2, 3, 4, 5]);
});

test('top N: a removed member leaves, the row entering at the bottom fills in', () => {
  const out = applyDelta(top5, { rows: [row(5, 'f', 5)], removed: ['b'] }, 1, 5);
  assert.deepEqual(strip(out), [row(1, 'a', 50), row(2, 'c', 30), row(3, 'd', 20), row(4, 'e', 10), row(5, 'f', 5)]);
});

test('top N: a score change in place keeps the rank and updates the row', () => {
  const out = applyDelta(top5, { rows: [row(3, 'c', 33)] }, 1, 5);
  assert.deepEqual(strip(out)[2], row(3, 'c', 33));
  assert.equal(out.length, 5);
});

test('top N: a window shorter than N grows (board with few members)', () => {
  const out = applyDelta([row(1, 'a', 5)], { rows: [row(2, 'b', 3)], removed: [] }, 1, 10);
  assert.deepEqual(members(out), ['a', 'b']);
});

test('rows are applied in ascending rank even when sent out of order', () => {
  const out = applyDelta(top5, { rows: [row(4, 'y', 25), row(1, 'x', 60)], removed: [] }, 1, 5);
  assert.deepEqual(members(out), ['x', 'a', 'b', 'y', 'c']);
});

test('the old list is never mutated (callers diff old against new)', () => {
  const copy = JSON.parse(JSON.stringify(top5));
  applyDelta(top5, { rows: [row(1, 'e', 60)], removed: ['c'] }, 1, 5);
  assert.deepEqual(top5, copy);
});

test('a delta that cannot belong to the list yields null (resubscribe)', () => {
  // Rank 9 would land past the end of a 5-row list.
  assert.equal(applyDelta(top5, { rows: [row(9, 'x', 1)] }, 1, 10), null);
  // Rank above the window's first rank.
  assert.equal(applyDelta(top5, { rows: [row(10, 'x', 1)] }, 11, 5), null);
  // The same member twice, the same rank twice.
  assert.equal(applyDelta(top5, { rows: [row(1, 'x', 9), row(2, 'x', 8)] }, 1, 5), null);
  assert.equal(applyDelta(top5, { rows: [row(1, 'x', 9), row(1, 'y', 9)] }, 1, 5), null);
});

/* ---- applyDelta on a page ------------------------------------------------ */

test('page: rows insert at rank - (offset + 1)', () => {
  const page = [row(11, 'k', 90), row(12, 'l', 80), row(13, 'm', 70)];
  const out = applyDelta(page, { rows: [row(12, 'x', 85)], removed: [] }, 11, 3);
  assert.deepEqual(strip(out), [row(11, 'k', 90), row(12, 'x', 85), row(13, 'l', 80)]);
});

test('page: someone above the page climbs past it, everything shifts down by one', () => {
  // A member ranked above the page changed nothing in it except pushing one
  // row in from above: the server sends that row at the page's first rank.
  const page = [row(11, 'k', 90), row(12, 'l', 80), row(13, 'm', 70)];
  const out = applyDelta(page, { rows: [row(11, 'j', 95)], removed: [] }, 11, 3);
  assert.deepEqual(strip(out), [row(11, 'j', 95), row(12, 'k', 90), row(13, 'l', 80)]);
});

/* ---- changesBetween ------------------------------------------------------- */

test('changes: newcomer, mover, shifted rows and leavers are told apart', () => {
  const after = applyDelta(top5, { rows: [row(1, 'e', 60)], removed: ['c'] }, 1, 5);
  const ch = new Map(changesBetween(top5, after).map((c) => [c.member, c]));
  assert.deepEqual(ch.get('e'), { member: 'e', from: 5, to: 1, changed: true });
  assert.deepEqual(ch.get('a'), { member: 'a', from: 1, to: 2, changed: false });
  assert.deepEqual(ch.get('c'), { member: 'c', from: 3, to: null, changed: false });
  assert.equal(ch.has('d'), false); // d stays at rank 4 with the same score
});

/* ---- property test: random boards, random deltas ------------------------- */

test('property: deltas (minimal, full, trimmed, coalesced) keep windows equal to the recomputed window', () => {
  const seed = Number(process.env.RANKCAST_SEED || 20260101);
  const rand = prng(seed);
  for (let trial = 0; trial < 300; trial++) {
    const board = {};
    const clock = { t: 0 };
    const n = 1 + Math.floor(rand() * 30);
    for (let i = 0; i < n; i++) randomWrite(board, rand, clock);
    const isPage = rand() < 0.5;
    const first = isPage ? 1 + Math.floor(rand() * 10) : 1;
    const length = 1 + Math.floor(rand() * 12);
    let held = trueWindow(board, first, length);
    for (let step = 0; step < 25; step++) {
      // Several writes may be coalesced into one delta.
      const writes = 1 + Math.floor(rand() * 3);
      for (let w = 0; w < writes; w++) randomWrite(board, rand, clock);
      const want = trueWindow(board, first, length);
      const delta = serverDelta(held, want, length, rand() < 0.7, rand() < 0.5);
      const got = applyDelta(held, delta, first, length);
      assert.ok(got, `seed ${seed} trial ${trial} step ${step}: delta rejected`);
      assert.deepEqual(strip(got), want, `seed ${seed} trial ${trial} step ${step}`);
      held = got;
    }
  }
});

/* ---- View: snapshots, deltas, change callbacks --------------------------- */

function recordingView(spec) {
  const calls = [];
  const v = new View(spec, {
    onChange: (view, changes, info) => calls.push({ kind: info.kind, changes, reset: info.reset }),
    onEvent: (view, e) => calls.push({ kind: 'onEvent', seq: e.seq }),
    onGap: (view, gap) => calls.push({ kind: 'onGap', gap }),
  });
  return { v, calls };
}

test('view: the first snapshot fills the window and reports everyone as new', () => {
  const { v, calls } = recordingView({ board: 'demo', view: { top: 5 } });
  assert.equal(v.apply({ op: 'snapshot', sub: 's1', board: 'demo', seq: 7, total: 5, rows: top5 }), true);
  assert.deepEqual(members(v.rows), ['a', 'b', 'c', 'd', 'e']);
  assert.equal(v.seq, 7);
  assert.equal(v.total, 5);
  assert.equal(v.ready, true);
  assert.equal(calls[0].changes.length, 5);
});

test('view: a later snapshot replaces the list, whatever deltas came before', () => {
  const { v, calls } = recordingView({ board: 'demo', view: { top: 5 } });
  v.apply({ op: 'snapshot', sub: 's1', seq: 1, total: 5, rows: top5 });
  v.apply({ op: 'delta', sub: 's1', seq: 2, total: 6, rows: [row(1, 'z', 99)], removed: [] });
  const fresh = [row(1, 'q', 7), row(2, 'r', 6)];
  v.apply({ op: 'snapshot', sub: 's1', period: '2026-W48', seq: 0, total: 2, rows: fresh });
  assert.deepEqual(v.rows, fresh);
  assert.equal(v.total, 2);
  assert.equal(v.periodId, '2026-W48');
  const last = calls[calls.length - 1];
  assert.equal(last.kind, 'snapshot');
  assert.deepEqual(last.changes.filter((c) => c.to === null).map((c) => c.member).sort(), ['a', 'b', 'c', 'd', 'z']);
});

test('view: a delta\'s prev_rank reaches the change callback, not the rows held', () => {
  const { v, calls } = recordingView({ board: 'demo', view: { top: 5 } });
  v.apply({ op: 'snapshot', sub: 's1', seq: 1, total: 60, rows: top5 });
  // z jumps from 57 to 1, n is new on the board at 3, c moves from 3 to 2
  // inside the window; d and e fall out
  const delta = { op: 'delta', sub: 's1', seq: 4, total: 61, removed: [],
    rows: [Object.assign(row(1, 'z', 99), { prev_rank: 57 }), Object.assign(row(2, 'c', 80), { prev_rank: 3 }),
      Object.assign(row(3, 'n', 70), { prev_rank: null })] };
  assert.equal(v.apply(delta), true);
  assert.deepEqual(members(v.rows), ['z', 'c', 'n', 'a', 'b']);
  assert.ok(v.rows.every((r) => !('prev_rank' in r)), 'held rows carry no prev_rank');
  const ch = new Map(calls[calls.length - 1].changes.map((c) => [c.member, c]));
  assert.deepEqual([ch.get('z').from, ch.get('z').to, ch.get('z').prev_rank], [null, 1, 57]);
  assert.deepEqual([ch.get('n').from, ch.get('n').to, ch.get('n').prev_rank], [null, 3, null]);
  assert.deepEqual([ch.get('c').from, ch.get('c').to, ch.get('c').prev_rank], [3, 2, 3]);
  assert.equal('prev_rank' in ch.get('a'), false, 'a only shifted: no row, no prev_rank');
  // a v1 gateway's delta (no prev_rank): changes without it
  v.apply({ op: 'delta', sub: 's1', seq: 5, total: 61, rows: [row(1, 'b', 200)], removed: [] });
  assert.equal('prev_rank' in calls[calls.length - 1].changes.find((c) => c.member === 'b'), false);
});

test('view: deltas update rows, seq and total; a broken delta asks for a resubscribe', () => {
  const { v } = recordingView({ board: 'demo', view: { top: 5 } });
  v.apply({ op: 'snapshot', sub: 's1', seq: 1, total: 5, rows: top5 });
  assert.equal(v.apply({ op: 'delta', sub: 's1', seq: 4, total: 6, rows: [row(2, 'z', 45)], removed: [] }), true);
  assert.deepEqual(members(v.rows), ['a', 'z', 'b', 'c', 'd']);
  assert.equal(v.seq, 4);
  assert.equal(v.total, 6);
  const before = v.rows;
  assert.equal(v.apply({ op: 'delta', sub: 's1', seq: 5, rows: [row(8, 'x', 1)], removed: [] }), false);
  assert.equal(v.rows, before); // left as it was until the fresh snapshot
});

test('view: around views take snapshots only', () => {
  const { v } = recordingView({ board: 'demo', view: { around: 'c', radius: 1 } });
  assert.equal(v.kind, 'around');
  v.apply({ op: 'snapshot', sub: 's2', seq: 1, total: 5, rows: top5.slice(1, 4) });
  assert.equal(v.apply({ op: 'delta', sub: 's2', seq: 2, rows: [row(1, 'x', 1)] }), true);
  assert.deepEqual(members(v.rows), ['b', 'c', 'd']);
});

test('view: subscribe message carries board, view and an explicit period', () => {
  const v = new View({ board: 'daily', view: { offset: 10, limit: 10 }, period: 'previous' });
  assert.deepEqual(v.subscribeMessage(), { op: 'subscribe', board: 'daily', view: { offset: 10, limit: 10 }, period: 'previous' });
  const w = new View({ board: 'demo', view: { top: 3 } });
  assert.deepEqual(w.subscribeMessage(), { op: 'subscribe', board: 'demo', view: { top: 3 } });
});

test('view: subscribe message carries max_rate when given, as given (the server checks it)', () => {
  const v = new View({ board: 'demo', view: { top: 10 }, max_rate: 2 });
  assert.deepEqual(v.subscribeMessage(), { op: 'subscribe', board: 'demo', view: { top: 10 }, max_rate: 2 });
  const p = new View({ board: 'daily', view: { around: 'a', radius: 2 }, period: 'previous', max_rate: 50 });
  assert.deepEqual(p.subscribeMessage(), { op: 'subscribe', board: 'daily', view: { around: 'a', radius: 2 }, period: 'previous', max_rate: 50 });
  const bad = new View({ board: 'demo', view: { top: 10 }, max_rate: '2' });
  assert.equal(bad.subscribeMessage().max_rate, '2'); // not coerced: refused with bad_request
  for (const none of [undefined, null]) {
    const w = new View({ board: 'demo', view: { top: 3 }, max_rate: none });
    assert.equal('max_rate' in w.subscribeMessage(), false);
  }
});

/* ---- feed views ---------------------------------------------------------- */

const ev = (seq, member = 'user:1') => ({ op: 'event', sub: 'f1', seq, member, score: seq * 10, delta: 10, rank: 1, prev_rank: 2, at: 1763769600000 + seq });

test('feedStep: next, already seen, gap', () => {
  assert.equal(feedStep(5, 6), 'next');
  assert.equal(feedStep(5, 5), 'old');
  assert.equal(feedStep(5, 3), 'old');
  assert.equal(feedStep(5, 8), 'gap');
});

test('feed: events in order are kept; a replayed duplicate is ignored', () => {
  const { v, calls } = recordingView({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, total: 3, rows: [] });
  assert.equal(v.lastSeq, 10);
  assert.equal(v.apply(ev(11)), true);
  assert.equal(v.apply(ev(12)), true);
  assert.equal(v.apply(ev(12)), true);
  assert.deepEqual(v.events.map((e) => e.seq), [11, 12]);
  assert.equal(calls.filter((c) => c.kind === 'onEvent').length, 2);
  const change = calls.filter((c) => c.kind === 'event').pop().changes[0];
  assert.deepEqual(change, { member: 'user:1', from: 2, to: 1, changed: true });
});

test('feed: a gap is detected, reported, not applied, and the resubscribe asks for since', () => {
  const { v, calls } = recordingView({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, total: 3, rows: [] });
  v.apply(ev(11));
  assert.equal(v.apply(ev(14)), false);
  assert.deepEqual(calls.find((c) => c.kind === 'onGap').gap, { from: 12, to: 13 });
  assert.equal(v.lastSeq, 11);
  assert.deepEqual(v.subscribeMessage().since, { seq: 11 });
});

test('feed: a replayable resume continues from since; the replay fills the gap', () => {
  const { v } = recordingView({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, rows: [] });
  v.apply(ev(11));
  v.subscribeMessage(); // reconnect: since 11
  v.apply({ op: 'snapshot', sub: 'f2', seq: 14, rows: [] }); // server is at 14, replays 12..14
  assert.equal(v.lastSeq, 11);
  for (const s of [12, 13, 14]) assert.equal(v.apply(Object.assign(ev(s), { sub: 'f2' })), true);
  assert.deepEqual(v.events.map((e) => e.seq), [11, 12, 13, 14]);
});

test('feed: a reset snapshot (gap not replayable) restarts from its seq', () => {
  const { v, calls } = recordingView({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, rows: [] });
  v.apply(ev(11));
  v.subscribeMessage();
  v.apply({ op: 'snapshot', sub: 'f2', seq: 5000, reset: true, rows: [] });
  assert.equal(v.lastSeq, 5000);
  assert.equal(calls.filter((c) => c.kind === 'snapshot').pop().reset, true);
  assert.equal(v.apply(Object.assign(ev(5001), { sub: 'f2' })), true);
});

test('feed: a resume names the epoch the view holds; a reset snapshot moves it to the new one', () => {
  const { v } = recordingView({ board: 'demo', view: { feed: true } });
  assert.equal(v.epoch, null);
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, epoch: 'aaaa', rows: [] });
  v.apply(ev(11));
  assert.deepEqual(v.subscribeMessage().since, { seq: 11, epoch: 'aaaa' });
  // the board was reset meanwhile: the server starts the view over in its new history
  v.apply({ op: 'snapshot', sub: 'f2', seq: 3, epoch: 'bbbb', reset: true, rows: [] });
  assert.equal(v.lastSeq, 3);
  assert.equal(v.apply(Object.assign(ev(4), { sub: 'f2' })), true);
  assert.deepEqual(v.subscribeMessage().since, { seq: 4, epoch: 'bbbb' });
});

test('feed: an event that begins the board\'s history names its epoch; the next resume sends it', () => {
  const { v } = recordingView({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 0, epoch: '', rows: [] }); // a board with no history yet
  assert.deepEqual(v.subscribeMessage().since, { seq: 0, epoch: '' });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 0, epoch: '', rows: [] });
  assert.equal(v.apply(Object.assign(ev(1), { epoch: 'cccc' })), true);
  assert.equal(v.apply(ev(2)), true);
  assert.deepEqual(v.subscribeMessage().since, { seq: 2, epoch: 'cccc' });
});

test('feed of a sharded board: the cursor of the last snapshot or event goes back in since', () => {
  const { v } = recordingView({ board: 'global', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, epoch: 'aaaa', cursor: 'aaaaaaaa:4.bbbbbbbb:6', rows: [] });
  assert.deepEqual(v.subscribeMessage().since, { seq: 10, epoch: 'aaaa', cursor: 'aaaaaaaa:4.bbbbbbbb:6' });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, epoch: 'aaaa', cursor: 'aaaaaaaa:4.bbbbbbbb:6', rows: [] });
  assert.equal(v.apply(Object.assign(ev(11), { cursor: 'aaaaaaaa:5.bbbbbbbb:6' })), true);
  assert.deepEqual(v.subscribeMessage().since, { seq: 11, epoch: 'aaaa', cursor: 'aaaaaaaa:5.bbbbbbbb:6' });
});

test('feed: a server without epochs (v1) gets since without one', () => {
  const { v } = recordingView({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, rows: [] });
  assert.deepEqual(v.subscribeMessage().since, { seq: 10 });
});

test('viewers: snapshots set the count, a delta without rows changes only it, onViewers fires on changes', () => {
  const seen = [];
  const infos = [];
  const v = new View({ board: 'demo', view: { top: 5 } }, {
    onViewers: (view, n) => seen.push(n),
    onChange: (view, changes, info) => infos.push({ changes, info }),
  });
  assert.equal(v.viewers, null);
  v.apply({ op: 'snapshot', sub: 's1', seq: 1, total: 5, viewers: 3, rows: top5 });
  assert.equal(v.viewers, 3);
  assert.equal(infos[0].info.viewers, 3);
  assert.equal(v.apply({ op: 'delta', sub: 's1', seq: 1, total: 5, rows: [], removed: [], viewers: 7 }), true);
  assert.equal(v.viewers, 7);
  assert.deepEqual(members(v.rows), ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(infos[1].changes, []);
  assert.equal(infos[1].info.viewers, 7);
  v.apply({ op: 'delta', sub: 's1', seq: 2, total: 6, rows: [row(2, 'z', 45)], removed: [] }); // count unchanged
  assert.equal(v.viewers, 7);
  assert.equal(infos[2].info.viewers, 7);
  const feed = new View({ board: 'demo', view: { feed: true } }, { onViewers: (view, n) => seen.push(-n) });
  feed.apply({ op: 'snapshot', sub: 'f1', seq: 0, viewers: 2, rows: [] });
  assert.equal(feed.viewers, 2);
  assert.deepEqual(seen, [3, 7, -2]);
});

test('window: a delta that begins the board\'s history names its epoch', () => {
  const { v } = recordingView({ board: 'demo', view: { top: 3 } });
  v.apply({ op: 'snapshot', sub: 'w1', seq: 0, epoch: '', rows: [] });
  assert.equal(v.apply({ op: 'delta', sub: 'w1', seq: 1, total: 1, epoch: 'dddd', rows: [row(1, 'a', 5)], removed: [] }),
    true);
  assert.equal(v.epoch, 'dddd');
});

test('feed: only the last `keep` events are held', () => {
  const v = new View({ board: 'demo', view: { feed: true }, keep: 3 });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 0, rows: [] });
  for (let s = 1; s <= 6; s++) v.apply(ev(s));
  assert.deepEqual(v.events.map((e) => e.seq), [4, 5, 6]);
});

/* ---- shared places (v1.1) ------------------------------------------------- */

test('places: the subscribe asks for shared places, and rows keep place and tied', () => {
  const v = new View({ board: 'demo', view: { top: 3 }, places: 'shared' });
  assert.deepEqual(v.subscribeMessage(), { op: 'subscribe', board: 'demo', view: { top: 3 }, places: 'shared' });
  assert.equal(new View({ board: 'demo', view: { top: 3 } }).subscribeMessage().places, undefined);
});

test('places: a row resent only for its place is reported changed, and the window shows it', () => {
  const { v, calls } = recordingView({ board: 'demo', view: { top: 3 }, places: 'shared' });
  v.apply({ op: 'snapshot', sub: 'p1', seq: 1, total: 3, rows: [
    { rank: 1, member: 'a', score: 9, place: 1 },
    { rank: 2, member: 'b', score: 7, place: 2 },
    { rank: 3, member: 'c', score: 5, place: 3 }] });
  // c reaches 7: a tie forms with b, which did not move
  assert.equal(v.apply({ op: 'delta', sub: 'p1', seq: 2, total: 3, removed: [], rows: [
    { rank: 2, member: 'b', score: 7, place: 2, tied: true },
    { rank: 3, member: 'c', score: 7, place: 2, tied: true }] }), true);
  assert.deepEqual(v.rows.map((r) => [r.member, r.place, r.tied === true]),
    [['a', 1, false], ['b', 2, true], ['c', 2, true]]);
  const last = calls[calls.length - 1];
  assert.deepEqual(last.changes.map((c) => [c.member, c.from, c.to, c.changed]).sort(),
    [['b', 2, 2, true], ['c', 3, 3, true]]);
});
