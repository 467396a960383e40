/* checker.test.js - the chaos checker catches what it claims (issue 25): a
 * small, clean history passes with 0 violations, and each doctored copy of
 * it (an acked write dropped, a feed seq skipped, a wrong delta row, a wrong
 * prev_rank, a lost last event, a write applied twice, an epoch change
 * without reset) is reported for that reason. No gateway or Redis needed:
 * the histories are built here, in the format tests/chaos/chaos.js records. */
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { check } = require('./checker');

// A clean history: 4 acked writes on demo, one feed viewer from seq 0, one
// top-3 viewer fed by a snapshot and deltas, a quiet point with the truth,
// and the final state.
function clean() {
  let t = 0;
  const L = [];
  const add = (o) => { t += 1; L.push(Object.assign({ t }, o)); return o; };
  add({ k: 'meta', seed: 42, mode: 'single', seconds: 1 });
  add({ k: 'open', c: 'w0#1', gw: 0 });
  add({ k: 'open', c: 'v0#2', gw: 1 });
  add({ k: 'send', c: 'v0#2', m: { op: 'subscribe', board: 'demo', view: { feed: true }, id: 'v0#2:s0' } });
  add({ k: 'recv', c: 'v0#2', m: { op: 'snapshot', id: 'v0#2:s0', sub: 'v1', board: 'demo', seq: 0, epoch: '', rows: [] } });
  add({ k: 'send', c: 'v0#2', m: { op: 'subscribe', board: 'demo', view: { top: 3 }, id: 'v0#2:s1' } });
  add({ k: 'recv', c: 'v0#2', m: { op: 'snapshot', id: 'v0#2:s1', sub: 'v2', board: 'demo', seq: 0, epoch: '', rows: [] } });
  // writes: a +5, b +3, a +2 (a retry of the same req acked as duplicate), c +4
  const w = (n, member, delta, seq, score, rank) => {
    add({ k: 'send', c: 'w0#1', m: { op: 'incr', board: 'demo', member, delta, req: `w0-${n}`, id: `w0#1:${n}` } });
    add({ k: 'recv', c: 'w0#1', m: { op: 'ack', id: `w0#1:${n}`, board: 'demo', member, score, rank, seq, duplicate: false } });
  };
  w(1, 'a', 5, 1, 5, 1);
  add({ k: 'recv', c: 'v0#2', m: { op: 'event', sub: 'v1', seq: 1, member: 'a', score: 5, delta: 5, rank: 1, prev_rank: null, epoch: 'E1' } });
  add({ k: 'recv', c: 'v0#2', m: { op: 'delta', sub: 'v2', seq: 1, rows: [{ rank: 1, member: 'a', score: 5, prev_rank: null }], removed: [] } });
  w(2, 'b', 3, 2, 3, 2);
  add({ k: 'recv', c: 'v0#2', m: { op: 'event', sub: 'v1', seq: 2, member: 'b', score: 3, delta: 3, rank: 2, prev_rank: null } });
  add({ k: 'recv', c: 'v0#2', m: { op: 'delta', sub: 'v2', seq: 2, rows: [{ rank: 2, member: 'b', score: 3, prev_rank: null }], removed: [] } });
  // req w0-3: the first try answered unavailable, the retry acked
  add({ k: 'send', c: 'w0#1', m: { op: 'incr', board: 'demo', member: 'c', delta: 4, req: 'w0-3', id: 'w0#1:3a' } });
  add({ k: 'recv', c: 'w0#1', m: { op: 'error', id: 'w0#1:3a', code: 'unavailable' } });
  add({ k: 'send', c: 'w0#1', m: { op: 'incr', board: 'demo', member: 'c', delta: 4, req: 'w0-3', id: 'w0#1:3b' } });
  add({ k: 'recv', c: 'w0#1', m: { op: 'ack', id: 'w0#1:3b', board: 'demo', member: 'c', score: 4, rank: 2, seq: 3, duplicate: false } });
  add({ k: 'recv', c: 'v0#2', m: { op: 'event', sub: 'v1', seq: 3, member: 'c', score: 4, delta: 4, rank: 2, prev_rank: null } });
  add({ k: 'recv', c: 'v0#2', m: { op: 'delta', sub: 'v2', seq: 3, rows: [{ rank: 2, member: 'c', score: 4, prev_rank: null }], removed: [] } });
  w(4, 'b', 2, 4, 5, 2);
  add({ k: 'recv', c: 'v0#2', m: { op: 'event', sub: 'v1', seq: 4, member: 'b', score: 5, delta: 2, rank: 2, prev_rank: 3 } });
  add({ k: 'recv', c: 'v0#2', m: { op: 'delta', sub: 'v2', seq: 4, rows: [{ rank: 2, member: 'b', score: 5, prev_rank: 3 }], removed: [] } });
  add({ k: 'quiet', n: 1 });
  const rows = [{ rank: 1, member: 'a', score: 5 }, { rank: 2, member: 'b', score: 5 }, { rank: 3, member: 'c', score: 4 }];
  add({ k: 'truth', board: 'demo', view: { top: 3 }, places: null, period: null, snap: { rows } });
  add({ k: 'feedtruth', board: 'demo', period: null, seq: 4, epoch: 'E1' });
  add({ k: 'final', board: 'demo', period: null, status: 200, rows, total: 3 });
  add({ k: 'end' });
  return L;
}

const copy = (L) => JSON.parse(JSON.stringify(L));
const find = (L, pred) => {
  const i = L.findIndex(pred);
  assert.ok(i >= 0, 'the clean history has the line to doctor');
  return i;
};
const whats = (res) => res.violations.map((v) => v.what).join('\n');

test('a clean history has 0 violations and counts its checks', () => {
  const res = check(clean());
  assert.deepStrictEqual(res.violations, []);
  assert.equal(res.acked, 4);
  assert.ok(res.checks >= 10, `checks ${res.checks}`);
});

test('an acked write missing from the final state is reported', () => {
  const L = copy(clean());
  const f = L[find(L, (l) => l.k === 'final')];
  f.rows = f.rows.filter((r) => r.member !== 'c');
  f.total = 2;
  const res = check(L);
  assert.match(whats(res), /demo\|\|c: final score 0, acked writes say 4 \(an acked write is missing\)/);
});

test('a write applied twice is reported', () => {
  const L = copy(clean());
  L[find(L, (l) => l.k === 'final')].rows[0].score = 10;
  assert.match(whats(check(L)), /demo\|\|a: final score 10, acked writes say 5 \(a write applied more than once/);
});

test('a write acked before a Redis lost its data need not be there; one acked after must', () => {
  const L = copy(clean());
  // the data loss between the write of a (seq 1) and the rest
  const at = find(L, (l) => l.k === 'send' && l.m.req === 'w0-2');
  L.splice(at, 0, { t: L[at].t - 0.5, k: 'epoch', phase: 'down' }, { t: L[at].t - 0.2, k: 'epoch', phase: 'up' });
  let res = check(L);
  assert.match(whats(res), /demo\|\|a: final score 5, acked writes say 0/);
  L[find(L, (l) => l.k === 'final')].rows.shift();
  // the viewers' views are doctored only by the final state here
  res = check(L);
  assert.doesNotMatch(whats(res), /final score/);
});

test('a skipped feed seq is reported', () => {
  const L = copy(clean());
  L.splice(find(L, (l) => l.k === 'recv' && l.m.op === 'event' && l.m.seq === 3), 1);
  assert.match(whats(check(L)), /feed on demo: expected seq 3, got 4 \(no reset\)/);
});

test('a lost last event is reported at the quiet point', () => {
  const L = copy(clean());
  L.splice(find(L, (l) => l.k === 'recv' && l.m.op === 'event' && l.m.seq === 4), 1);
  assert.match(whats(check(L)), /feed on demo delivered up to seq 3 at a quiet point, the board is at seq 4 \(an event never arrived\)/);
});

test('an epoch change without reset is reported', () => {
  const L = copy(clean());
  L[find(L, (l) => l.k === 'recv' && l.m.op === 'event' && l.m.seq === 3)].m.epoch = 'E2';
  assert.match(whats(check(L)), /epoch changed from E1 to E2 without reset/);
});

test('a feed that says reset may start over', () => {
  const L = copy(clean());
  const at = find(L, (l) => l.k === 'recv' && l.m.op === 'event' && l.m.seq === 3);
  L.splice(at, 0, { t: L[at].t - 0.1, k: 'recv', c: 'v0#2', m: { op: 'snapshot', sub: 'v1', board: 'demo', seq: 2, epoch: 'E1', reset: true, rows: [] } });
  assert.deepStrictEqual(check(L).violations, []);
});

test('a wrong delta row is reported (the view differs from the truth)', () => {
  const L = copy(clean());
  L[find(L, (l) => l.k === 'recv' && l.m.op === 'delta' && l.m.seq === 3)].m.rows[0].score = 40;
  assert.match(whats(check(L)), /view of demo \{"top":3\} differs from the truth at a quiet point/);
});

test('a dropped delta row is reported', () => {
  const L = copy(clean());
  L[find(L, (l) => l.k === 'recv' && l.m.op === 'delta' && l.m.seq === 3)].m.rows = []; // c never shows
  assert.match(whats(check(L)), /view of demo \{"top":3\} differs from the truth/);
});

test('a wrong prev_rank is reported, on deltas and on feed events', () => {
  const L = copy(clean());
  L[find(L, (l) => l.k === 'recv' && l.m.op === 'delta' && l.m.seq === 4)].m.rows[0].prev_rank = 1;
  assert.match(whats(check(L)), /delta on demo: b was at rank 3 in the view, delta says prev_rank 1/);
  const F = copy(clean());
  F[find(F, (l) => l.k === 'recv' && l.m.op === 'event' && l.m.seq === 2)].m.prev_rank = 7;
  assert.match(whats(check(F)), /first event of b has prev_rank 7, expected null/);
  const G = copy(clean());
  G[find(G, (l) => l.k === 'recv' && l.m.op === 'event' && l.m.seq === 4)].m.prev_rank = 1;
  assert.match(whats(check(G)), /b \+2 went down from 1 to 2/);
});

test('a gateway that did not end cleanly is reported', () => {
  const L = copy(clean());
  L.push({ t: 999, k: 'gwexit', gw: 0, problems: ['sanitizer report: ERROR: AddressSanitizer'] });
  assert.match(whats(check(L)), /gateway 0 did not end cleanly/);
});

// The clean history with the final state read from Redis itself too (raw
// composites: points * 2^29 + a tie-break slot, as demo stores them).
function withRedis(L) {
  L = copy(L);
  L[0].tbits = { demo: 29 };
  const f = L[find(L, (l) => l.k === 'final')];
  const rows = f.rows.map((r) => [r.member, r.score * 2 ** 29 + 1000 + r.rank]);
  L.splice(L.length - 1, 0, { t: f.t + 0.5, k: 'redisfinal', key: 'rc:{demo|}:z', board: 'demo', period: null, rows });
  return L;
}

test('the final state read from Redis: clean passes, and a member missing there is reported', () => {
  assert.deepStrictEqual(check(withRedis(clean())).violations, []);
  const L = withRedis(clean());
  const rf = L[find(L, (l) => l.k === 'redisfinal')];
  rf.rows = rf.rows.filter(([m]) => m !== 'c');
  // the gateway's read still shows c: Redis decides, and the two disagree
  const w = whats(check(L));
  assert.match(w, /demo\|\|c: final score 0, acked writes say 4 \(an acked write is missing\)/);
  assert.match(w, /demo\|\|c: the gateway's final read has it, Redis does not/);
});

test('a gateway final read that differs from Redis is reported', () => {
  const L = withRedis(clean());
  L[find(L, (l) => l.k === 'final')].rows[0].score = 6;
  assert.match(whats(check(L)), /demo\|\|a: the gateway's final read says 6, Redis holds 5/);
});

test('a sharded board\'s shards are summed', () => {
  const L = withRedis(clean());
  const at = find(L, (l) => l.k === 'redisfinal');
  const rf = L[at];
  // a sits on shard 1 only, b and c on shard 0
  L.splice(at, 1,
    Object.assign({}, rf, { key: 'rc:{demo#0|}:z', rows: rf.rows.filter(([m]) => m !== 'a') }),
    Object.assign({}, rf, { key: 'rc:{demo#1|}:z', rows: rf.rows.filter(([m]) => m === 'a') }));
  assert.deepStrictEqual(check(L).violations, []);
  // a member on two shards counts twice
  L[at].rows.push(['a', 5 * 2 ** 29]);
  assert.match(whats(check(L)), /demo\|\|a: final score 10, acked writes say 5/);
});

// A sharded feed (global, 2 shards here): the board's epoch is a digest of
// the shards' epochs, and its cursor says each shard's (docs/sharded.md).
function sharded(secondCursor) {
  const L = [];
  let t = 0;
  const add = (o) => { t += 1; L.push(Object.assign({ t }, o)); };
  add({ k: 'meta', seed: 1, mode: 'cluster', seconds: 1 });
  add({ k: 'open', c: 'v0#1', gw: 0 });
  add({ k: 'send', c: 'v0#1', m: { op: 'subscribe', board: 'global', view: { feed: true }, id: 'v0#1:s0' } });
  add({ k: 'recv', c: 'v0#1', m: { op: 'snapshot', id: 'v0#1:s0', sub: 'v1', board: 'global', seq: 1, epoch: 'D1', cursor: ':0.aaaaaaaa:1', rows: [] } });
  add({ k: 'recv', c: 'v0#1', m: { op: 'event', sub: 'v1', seq: 2, member: 'x', score: 3, delta: 3, rank: 1, prev_rank: null, cursor: 'bbbbbbbb:1.aaaaaaaa:1' } });
  // a re-subscribe pushes a snapshot naming the digest of both shards' epochs
  add({ k: 'recv', c: 'v0#1', m: { op: 'snapshot', sub: 'v1', board: 'global', seq: 2, epoch: 'D2', cursor: secondCursor, rows: [] } });
  add({ k: 'recv', c: 'v0#1', m: { op: 'event', sub: 'v1', seq: 3, member: 'y', score: 1, delta: 1, rank: 2, prev_rank: null, cursor: 'bbbbbbbb:1.aaaaaaaa:2' } });
  return L;
}

test('a sharded feed\'s epoch digest may change as a shard begins its history, not when one starts over', () => {
  assert.deepStrictEqual(check(sharded('bbbbbbbb:1.aaaaaaaa:1')).violations.filter((v) => /epoch/.test(v.what)), []);
  assert.match(whats(check(sharded('bbbbbbbb:1.cccccccc:1'))), /feed's epoch changed from D1 to D2 without reset/);
});

test('a finished period gone from Redis is judged by the gateway\'s (archive) read', () => {
  const L = withRedis(clean());
  const f = L[find(L, (l) => l.k === 'final')];
  // sprint, period 7: written, closed, archived, then its keys lost with the data
  L.splice(1, 0, { t: 0.5, k: 'period', board: 'sprint', period: '7' });
  L.splice(L.length - 1, 0, Object.assign({}, f, { board: 'sprint', period: '7', rows: [{ rank: 1, member: 'z', score: 2 }], total: 1 }));
  const at = find(L, (l) => l.k === 'send' && l.m.req === 'w0-1');
  L.splice(at, 0,
    { t: L[at].t - 0.3, k: 'send', c: 'w0#1', m: { op: 'incr', board: 'sprint', member: 'z', delta: 2, req: 'sp-1', id: 'sp1' } },
    { t: L[at].t - 0.2, k: 'recv', c: 'w0#1', m: { op: 'ack', id: 'sp1', board: 'sprint', member: 'z', score: 2, rank: 1, seq: 1 } });
  L[0].tbits.sprint = 22;
  assert.deepStrictEqual(check(L).violations, []);
  // while a period Redis still holds must be there
  L.splice(L.length - 1, 0, { t: 999, k: 'redisfinal', key: 'rc:{sprint|7}:z', board: 'sprint', period: '7', rows: [] });
  assert.match(whats(check(L)), /sprint\|7\|z: the gateway's final read has it, Redis does not/);
});

// A clean history on a board with teams (players, team board squads): three
// acked team moves, four acked writes, a member list (one name never written:
// absent) and a roster fed by a snapshot and deltas, and the quiet point's
// team truth (rows with teams, the membership hash, the team board).
function cleanTeams() {
  let t = 0;
  const L = [];
  const add = (o) => { t += 1; L.push(Object.assign({ t }, o)); return o; };
  add({ k: 'meta', seed: 43, mode: 'single', seconds: 1 });
  add({ k: 'open', c: 'tw0#1', gw: 0 });
  add({ k: 'open', c: 'w0#2', gw: 0 });
  add({ k: 'open', c: 'v0#3', gw: 1 });
  const move = (n, member, team) => {
    add({ k: 'send', c: 'tw0#1', m: { op: 'team', board: 'players', member, team, req: `tw0-${n}`, id: `tw0#1:${n}` } });
    add({ k: 'recv', c: 'tw0#1', m: { op: 'teamed', id: `tw0#1:${n}`, board: 'players', member, team, seq: 0, team_seq: n } });
  };
  move(1, 'a', 'red');
  move(2, 'b', 'red');
  move(3, 'c', 'blue');
  const w = (n, member, delta) => {
    add({ k: 'send', c: 'w0#2', m: { op: 'incr', board: 'players', member, delta, req: `w0-${n}`, id: `w0#2:${n}` } });
    add({ k: 'recv', c: 'w0#2', m: { op: 'ack', id: `w0#2:${n}`, board: 'players', member, seq: n } });
  };
  w(1, 'a', 5);
  w(2, 'b', 3);
  w(3, 'c', 4);
  add({ k: 'send', c: 'v0#3', m: { op: 'subscribe', board: 'players', view: { members: ['a', 'c', 'nobody0'] }, id: 'v0#3:s0' } });
  add({ k: 'recv', c: 'v0#3', m: { op: 'snapshot', id: 'v0#3:s0', sub: 'v1', board: 'players', seq: 3, rows: [
    { rank: 1, member: 'a', score: 5, team: 'red' }, { rank: 2, member: 'c', score: 4, team: 'blue' }], absent: ['nobody0'] } });
  add({ k: 'send', c: 'v0#3', m: { op: 'subscribe', board: 'players', view: { team: 'red' }, id: 'v0#3:s1' } });
  add({ k: 'recv', c: 'v0#3', m: { op: 'snapshot', id: 'v0#3:s1', sub: 'v2', board: 'players', seq: 3, rows: [
    { rank: 1, member: 'a', score: 5, team: 'red' }, { rank: 3, member: 'b', score: 3, team: 'red' }], absent: [] } });
  w(4, 'c', 2);
  add({ k: 'recv', c: 'v0#3', m: { op: 'delta', sub: 'v1', seq: 4, rows: [
    { rank: 1, member: 'c', score: 6, team: 'blue', prev_rank: 2 }, { rank: 2, member: 'a', score: 5, team: 'red', prev_rank: 1 }], removed: [] } });
  add({ k: 'recv', c: 'v0#3', m: { op: 'delta', sub: 'v2', seq: 4, rows: [
    { rank: 2, member: 'a', score: 5, team: 'red', prev_rank: 1 }], removed: [] } });
  add({ k: 'quiet', n: 1 });
  const rows = [{ rank: 1, member: 'c', score: 6, team: 'blue' }, { rank: 2, member: 'a', score: 5, team: 'red' },
    { rank: 3, member: 'b', score: 3, team: 'red' }];
  add({ k: 'teamtruth', board: 'players', teams: 'squads', tm: { a: 'red', b: 'red', c: 'blue', '#red': '2', '#blue': '1' },
    players: { rows, total: 3 }, squads: { rows: [{ rank: 1, member: 'red', score: 8 }, { rank: 2, member: 'blue', score: 6 }], total: 2 } });
  add({ k: 'final', board: 'players', period: null, status: 200, rows, total: 3 });
  add({ k: 'end' });
  return L;
}

const line = (L, pred) => L[find(L, pred)];
const teamTruth = (L) => line(L, (l) => l.k === 'teamtruth');
const expectTeams = (L, re) => {
  const res = check(L);
  assert.ok(res.violations.some((v) => re.test(v.what)), `expected ${re}, got ${JSON.stringify(res.violations.map((v) => v.what))}`);
};

test('a clean history with teams, member lists and rosters has 0 violations', () => {
  const res = check(cleanTeams());
  assert.deepStrictEqual(res.violations, []);
  assert.ok(res.checks >= 12, `checks ${res.checks}`);
});

test('a member list that differs from the truth is reported (a delta row dropped)', () => {
  const L = copy(cleanTeams());
  const d = line(L, (l) => l.k === 'recv' && l.m.op === 'delta' && l.m.sub === 'v1');
  d.m.rows = d.m.rows.slice(0, 1); // a's new rank never sent
  expectTeams(L, /member list on players differs from the truth/);
});

test('a member list with absent wrong is reported', () => {
  const L = copy(cleanTeams());
  line(L, (l) => l.k === 'recv' && l.m.op === 'snapshot' && l.m.sub === 'v1').m.absent = [];
  expectTeams(L, /member list on players differs/);
});

test('a list delta row with a wrong prev_rank is reported', () => {
  const L = copy(cleanTeams());
  line(L, (l) => l.k === 'recv' && l.m.op === 'delta' && l.m.sub === 'v1').m.rows[0].prev_rank = null;
  expectTeams(L, /delta row c has prev_rank null, the list had it at 2/);
});

test('a roster missing a team member is reported', () => {
  const L = copy(cleanTeams());
  const s = line(L, (l) => l.k === 'recv' && l.m.op === 'snapshot' && l.m.sub === 'v2');
  s.m.rows = s.m.rows.slice(0, 1);
  expectTeams(L, /roster of red on players differs from the truth/);
});

test('a wrong team sum on the team board is reported', () => {
  const L = copy(cleanTeams());
  teamTruth(L).squads.rows[0].score = 9;
  expectTeams(L, /squads: team red has 9, its members' points sum to 8/);
});

test('a team missing from the team board, and wrong member counts, are reported', () => {
  const L = copy(cleanTeams());
  teamTruth(L).squads.rows.pop();
  teamTruth(L).tm['#red'] = '3';
  expectTeams(L, /squads: team blue is missing/);
  expectTeams(L, /team red: the membership counts 3 members, 2 have it/);
});

test('a row whose team is not the member\'s is reported', () => {
  const L = copy(cleanTeams());
  teamTruth(L).players.rows[2].team = 'blue';
  expectTeams(L, /row b says team blue, the membership says red/);
});

test('an acked team move not in the final membership is reported; one acked before a data loss is not', () => {
  const L = copy(cleanTeams());
  const tt = teamTruth(L);
  Object.assign(tt.tm, { c: 'red', '#red': '3', '#blue': '0' });
  tt.squads.rows = [{ rank: 1, member: 'red', score: 14 }];
  tt.players.rows[0].team = 'red';
  expectTeams(L, /c: on team red at the end, its last acked team move \(tw0-3\) says blue/);
  // the same end after a Redis lost its data: that move need not be there
  const L2 = copy(L);
  const at = L2.findIndex((l) => l.k === 'quiet');
  L2.splice(at, 0, { t: L2[at].t, k: 'epoch', phase: 'down' }, { t: L2[at].t, k: 'epoch', phase: 'up' });
  const res = check(L2);
  assert.ok(!res.violations.some((v) => /last acked team move/.test(v.what)), JSON.stringify(res.violations.map((v) => v.what)));
});

test('a gateway over the run\'s RSS bound is reported; within it, not', () => {
  const L = copy(clean());
  L[0].rssBoundKb = 65536;
  const q = find(L, (l) => l.k === 'quiet');
  L.splice(q + 1, 0, { k: 'rss', gw: 0, kb: 20000, t: L[q].t }, { k: 'rss', gw: 1, kb: 70000, t: L[q].t });
  const res = check(L);
  assert.match(whats(res), /gateway 1: RSS 70000 kB, over the run's bound of 65536 kB/);
  assert.doesNotMatch(whats(res), /gateway 0: RSS/);
});
