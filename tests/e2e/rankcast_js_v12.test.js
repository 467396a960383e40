// Unit tests of web/rankcast.js's v1.2 parts (PROTOCOL.md v1.2): member-list and
// roster views (the member rule: applyMembers, view.absent), replay and the `live`
// message, and the requests get / history / team and the admin ops remove, unblock,
// reverse, reset (WebSocket and REST). Fake message sequences written from the
// contract: no gateway (a gateway may not serve these views yet).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const Rankcast = require('../../web/rankcast.js');

const { View, Client, applyMembers } = Rankcast;

const row = (rank, member, score, extra) => Object.assign({ rank, member, score }, extra);
const members = (list) => list.map((r) => r.member);

/* ---- the member rule ---------------------------------------------------- */

test('applyMembers: removed join absent, rows replace or insert and leave absent, order by rank; the old lists stay', () => {
  const list = [row(3, 'a', 50), row(9, 'b', 20)];
  const absent = ['c', 'd'];
  const out = applyMembers(list, absent, {
    rows: [row(1, 'c', 90, { prev_rank: null }), row(4, 'a', 50, { prev_rank: 3 })],
    removed: ['b'],
  });
  assert.deepEqual(members(out.rows), ['c', 'a']);
  assert.deepEqual(out.rows.map((r) => r.rank), [1, 4], 'a shifted by another member\'s write: its whole row');
  assert.deepEqual(out.absent, ['d', 'b']);
  assert.deepEqual(members(list), ['a', 'b']);
  assert.deepEqual(absent, ['c', 'd']);
  // no removed, no rows: nothing changes
  assert.deepEqual(applyMembers(list, absent, {}), { rows: list, absent });
});

test('members view: snapshot rows and absent, deltas by member with prev_rank in the changes', () => {
  const changes = [];
  const v = new View({ board: 'demo', view: { members: ['a', 'b', 'z'] } }, {
    onChange: (view, c, info) => changes.push({ c, info }),
  });
  assert.equal(v.kind, 'members');
  assert.equal(v.window, null);
  assert.deepEqual(v.subscribeMessage().view, { members: ['a', 'b', 'z'] });
  assert.equal(v.apply({ op: 'snapshot', sub: 'm1', board: 'demo', seq: 5, total: 40, rows: [row(2, 'a', 70), row(30, 'b', 3)], absent: ['z'] }), true);
  assert.deepEqual(members(v.rows), ['a', 'b']);
  assert.deepEqual(v.absent, ['z']);
  // z enters at 1 and pushes a to 3 (a's whole row comes: a rank shift counts); b leaves
  assert.equal(v.apply({ op: 'delta', sub: 'm1', seq: 6, total: 40,
    rows: [row(1, 'z', 99, { prev_rank: null }), row(3, 'a', 70, { prev_rank: 2 })], removed: ['b'] }), true);
  assert.deepEqual(members(v.rows), ['z', 'a']);
  assert.deepEqual(v.absent, ['b']);
  assert.equal(v.seq, 6);
  assert.ok(v.rows.every((r) => !('prev_rank' in r)), 'prev_rank belongs to the delta, not the rows held');
  const last = changes[changes.length - 1];
  assert.equal(last.info.kind, 'delta');
  const byMember = Object.fromEntries(last.c.map((c) => [c.member, c]));
  assert.deepEqual(byMember.z, { member: 'z', from: null, to: 1, changed: true, prev_rank: null });
  assert.deepEqual(byMember.a, { member: 'a', from: 2, to: 3, changed: false, prev_rank: 2 });
  assert.deepEqual(byMember.b, { member: 'b', from: 30, to: null, changed: false }); // as a window's leavers
  // a leaves too: absent is in the order the list was asked in
  v.apply({ op: 'delta', sub: 'm1', seq: 7, total: 39, rows: [], removed: ['a'] });
  assert.deepEqual(v.absent, ['a', 'b']);
  assert.deepEqual(members(v.rows), ['z']);
});

test('roster view: { team } is a member list', () => {
  const v = new View({ board: 'players', view: { team: 'red' } });
  assert.equal(v.kind, 'members');
  v.apply({ op: 'snapshot', sub: 'r1', board: 'players', seq: 1, total: 2, rows: [row(1, 'u1', 10, { team: 'red' })] });
  v.apply({ op: 'delta', sub: 'r1', seq: 2, total: 3, rows: [row(2, 'u2', 5, { team: 'red', prev_rank: null })], removed: [] });
  assert.deepEqual(members(v.rows), ['u1', 'u2']);
  assert.equal(v.total, 3);
});

test('a row whose member changed teams is a change (the same rank and score)', () => {
  const changes = [];
  const v = new View({ board: 'players', view: { top: 10 } }, { onChange: (view, c) => changes.push(c) });
  v.apply({ op: 'snapshot', sub: 't1', board: 'players', seq: 1, total: 1, rows: [row(1, 'u1', 10, { team: 'red' })] });
  // the gateway resends a row whose team changed at its rank, prev_rank its own rank
  v.apply({ op: 'delta', sub: 't1', seq: 1, total: 1, rows: [row(1, 'u1', 10, { team: 'blue', prev_rank: 1 })], removed: [] });
  assert.equal(v.rows[0].team, 'blue');
  assert.deepEqual(changes[changes.length - 1], [{ member: 'u1', from: 1, to: 1, changed: true, prev_rank: 1 }]);
});

/* ---- replay --------------------------------------------------------------- */

test('replay: the subscribe carries it, the snapshot and later changes say replay, live ends it; a resubscribe goes on from view.seq', () => {
  const seen = [];
  const v = new View({ board: 'demo', view: { top: 2 }, replay: { from: { seq: 10 }, speed: 4 } }, {
    onChange: (view, c, info) => seen.push(['change', info.kind, !!info.replay]),
    onLive: (view, info) => seen.push(['live', info.seq]),
  });
  assert.deepEqual(v.subscribeMessage().replay, { from: { seq: 10 }, speed: 4 });
  v.apply({ op: 'snapshot', sub: 'p1', board: 'demo', seq: 10, total: 2, rows: [row(1, 'a', 5)], replay: true, at_seq: 10 });
  assert.equal(v.replaying, true);
  v.apply({ op: 'delta', sub: 'p1', seq: 11, total: 2, rows: [row(2, 'b', 3, { prev_rank: null })], removed: [] });
  // a reconnect now replays on from what the view shows, not from the start
  assert.deepEqual(v.subscribeMessage().replay, { from: { seq: 11 }, speed: 4 });
  v.apply({ op: 'live', sub: 'p1', seq: 20 });
  assert.equal(v.replaying, false);
  assert.equal(v.subscribeMessage().replay, undefined, 'once live, a resubscribe is a live subscribe');
  v.apply({ op: 'delta', sub: 'p1', seq: 21, total: 2, rows: [row(1, 'b', 9, { prev_rank: 2 })], removed: [] });
  assert.deepEqual(seen, [['change', 'snapshot', true], ['change', 'delta', true], ['live', 20], ['change', 'delta', false]]);
});

test('a feed replay ended by live with reset (the board went back) starts over at the next snapshot: the live events after it are taken, not judged against the lost seqs', () => {
  const seen = [];
  const v = new View({ board: 'demo', view: { feed: true }, replay: { from: { seq: 10 }, speed: 4 } }, {
    onEvent: (view, e) => seen.push(['event', e.seq]),
    onGap: (view, g) => seen.push(['gap', g.from, g.to]),
    onLive: (view, info) => seen.push(['live', info.seq, !!info.reset]),
  });
  v.apply({ op: 'snapshot', sub: 'f1', board: 'demo', seq: 10, total: 2, rows: [], replay: true, at_seq: 10 });
  for (const seq of [11, 12, 13]) v.apply({ op: 'event', sub: 'f1', seq, member: 'a', score: seq, rank: 1, prev_rank: 1, at: seq });
  // the board lost 12 and 13 and went on with other changes: live at its present
  v.apply({ op: 'live', sub: 'f1', seq: 11, reset: true });
  v.apply({ op: 'snapshot', sub: 'f1', board: 'demo', seq: 14, total: 2, rows: [] });
  for (const seq of [15, 16]) v.apply({ op: 'event', sub: 'f1', seq, member: 'b', score: seq, rank: 1, prev_rank: 1, at: seq });
  assert.deepEqual(seen, [['event', 11], ['event', 12], ['event', 13], ['live', 11, true], ['event', 15], ['event', 16]]);
  assert.equal(v.lastSeq, 16);
});

/* ---- requests --------------------------------------------------------------- */

class FakeSocket {
  constructor(url, protocol) {
    this.url = url;
    this.protocol = protocol;
    this.sent = [];
    FakeSocket.last = this;
    setImmediate(() => this.onopen && this.onopen());
  }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() { setImmediate(() => this.onclose && this.onclose()); }
  reply(msg) { this.onmessage({ data: JSON.stringify(msg) }); }
}

test('client: get, history, team and the admin ops send the documented requests and resolve with the replies', async (t) => {
  const rc = new Client({ url: 'ws://test/ws', WebSocket: FakeSocket });
  t.after(() => rc.close());
  while (rc.state !== 'open') await new Promise((r) => setImmediate(r));
  const ws = FakeSocket.last;
  const calls = [
    rc.get('demo', { top: 3 }, { at: { seq: 4 }, places: 'shared', period: 'current' }),
    rc.get('demo', { members: ['a'] }),
    rc.history('demo', 'a', { from: 0, to: 2000, step: 1000 }),
    rc.team('players', 'u1', 'red'),
    rc.team('players', 'u1', null),
    rc.remove('demo', 'a', { block: true, period: 'previous' }),
    rc.remove('demo', 'b'),
    rc.unblock('demo', 'a'),
    rc.reverse('demo', 'r-1', { period: 'current' }),
    rc.reset('demo'),
    rc.get('demo', { top: 3 }, { at: { seq: 2 }, live: true }),
  ];
  const strip = (m) => { const o = Object.assign({}, m); delete o.id; return o; };
  assert.deepEqual(ws.sent.map(strip), [
    { op: 'get', board: 'demo', view: { top: 3 }, period: 'current', at: { seq: 4 }, places: 'shared' },
    { op: 'get', board: 'demo', view: { members: ['a'] } },
    { op: 'history', board: 'demo', member: 'a', from: 0, to: 2000, step: 1000 },
    { op: 'team', board: 'players', member: 'u1', team: 'red' },
    { op: 'team', board: 'players', member: 'u1', team: null },
    { op: 'remove', board: 'demo', member: 'a', period: 'previous', block: true },
    { op: 'remove', board: 'demo', member: 'b' },
    { op: 'unblock', board: 'demo', member: 'a' },
    { op: 'reverse', board: 'demo', req: 'r-1', period: 'current' },
    { op: 'reset', board: 'demo' },
    { op: 'get', board: 'demo', view: { top: 3 }, at: { seq: 2 }, live: true },
  ]);
  ws.reply({ op: 'snapshot', id: ws.sent[0].id, board: 'demo', seq: 4, total: 1, rows: [row(1, 'a', 1)], at_seq: 4, at_time: 1 });
  assert.equal((await calls[0]).at_seq, 4);
  ws.reply({ op: 'error', id: ws.sent[2].id, code: 'out_of_range', message: 'history no longer holds it', oldest_seq: 9,
    oldest_time: 1795799603803 });
  // the rejection keeps oldest_seq (the caster's timeline and the chart start there) and
  // oldest_time (the earliest time to ask; a sharded board's seqs name no moment)
  await assert.rejects(calls[2], { code: 'out_of_range', oldest_seq: 9, oldest_time: 1795799603803 });
  ws.reply({ op: 'teamed', id: ws.sent[3].id, board: 'players', member: 'u1', team: 'red', seq: 3, team_seq: 5 });
  assert.equal((await calls[3]).team_seq, 5);
  rc.close();
  await Promise.allSettled(calls);
});

test('rest: remove, unblock, reverse, reset, team, history and member-list reads use the documented routes', async (t) => {
  const calls = [];
  const saved = globalThis.fetch;
  t.after(() => { globalThis.fetch = saved; });
  globalThis.fetch = async (url, init) => {
    calls.push([init.method, url, init.body === undefined ? undefined : JSON.parse(init.body)]);
    return { ok: true, status: 200, json: async () => ({}) };
  };
  const api = Rankcast.rest({ base: 'http://gw', token: 'KEY' });
  await api.remove('match:1', 'user:1', { block: true, period: 'current' });
  await api.remove('demo', 'user:1');
  await api.unblock('demo', 'user:1');
  await api.reverse('demo', 'r-1', { period: 'previous' });
  await api.reset('demo');
  await api.team('players', 'user:1', 'red');
  await api.team('players', 'user:1', null);
  await api.history('demo', 'user:1', { from: 0, to: 10, step: 5 });
  await api.board('demo', { members: ['user:1', 'a b'], at_seq: 3 });
  assert.deepEqual(calls, [
    ['DELETE', 'http://gw/api/v1/boards/match:1/members/user:1?block=1&period=current', undefined],
    ['DELETE', 'http://gw/api/v1/boards/demo/members/user:1', undefined],
    ['DELETE', 'http://gw/api/v1/boards/demo/blocked/user:1', undefined],
    ['POST', 'http://gw/api/v1/boards/demo/reverse', { req: 'r-1', period: 'previous' }],
    ['POST', 'http://gw/api/v1/boards/demo/reset', {}],
    ['PUT', 'http://gw/api/v1/boards/players/members/user:1/team', { team: 'red' }],
    ['PUT', 'http://gw/api/v1/boards/players/members/user:1/team', { team: null }],
    ['GET', 'http://gw/api/v1/boards/demo/members/user:1/history?from=0&to=10&step=5', undefined],
    ['GET', 'http://gw/api/v1/boards/demo?members=user%3A1,a%20b&at_seq=3', undefined],
  ]);
});
