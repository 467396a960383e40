// Unit tests of web/rankcast.js's frozen state (PROTOCOL.md "Freeze and
// reveal"): view.frozen / view.shown / view.pending, onFrozen, info.frozen,
// subscribe({ live: true }), the rowless feed snapshots that are not gaps, and
// the client's freeze/reveal requests and REST helpers. Fake message
// sequences written from the wire spec: no gateway (the browser test
// tests/browser/console.test.js runs the real one).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const Rankcast = require('../../web/rankcast.js');

const { View, Client } = Rankcast;

const row = (rank, member, score, extra) => Object.assign({ rank, member, score }, extra);
const members = (list) => list.map((r) => r.member);
const top3 = [row(1, 'a', 50), row(2, 'b', 40), row(3, 'c', 30)];

// A View whose callbacks are recorded in order.
function recorded(spec) {
  const calls = [];
  const v = new View(spec, {
    onChange: (view, changes, info) => calls.push({ kind: 'change', info, changes }),
    onFrozen: (view, state) => calls.push({ kind: 'frozen', state }),
    onEvent: (view, e) => calls.push({ kind: 'event', seq: e.seq }),
    onGap: (view, gap) => calls.push({ kind: 'gap', gap }),
  });
  const of = (kind) => calls.filter((c) => c.kind === kind);
  return { v, calls, of };
}

/* ---- audience window views -------------------------------------------- */

test('window: the freeze delta (no rows) marks the view frozen; reveal deltas keep it; the unfreeze clears it', () => {
  const { v, of } = recorded({ board: 'demo', view: { top: 3 } });
  v.apply({ op: 'snapshot', sub: 's1', seq: 7, total: 3, rows: top3 });
  assert.equal(v.frozen, null);
  assert.equal(of('frozen').length, 0, 'a live board fires no onFrozen');
  assert.equal(of('change')[0].info.frozen, null);

  assert.equal(v.apply({ op: 'delta', sub: 's1', seq: 7, rows: [], removed: [], frozen: 7 }), true);
  assert.equal(v.frozen, 7);
  assert.equal(v.shown, null, 'audience views have no shown');
  assert.equal(v.pending, null);
  assert.deepEqual(of('frozen').map((c) => c.state), [{ frozen: 7, shown: null, seq: 7 }]);
  assert.deepEqual(members(v.rows), ['a', 'b', 'c']);
  assert.equal(of('change').pop().info.frozen, 7);

  // reveal one: c (3rd) climbs to 1st, an ordinary delta with prev_rank, still frozen
  assert.equal(v.apply({ op: 'delta', sub: 's1', seq: 8, rows: [row(1, 'c', 60, { prev_rank: 3 })], removed: [], frozen: 7 }), true);
  assert.deepEqual(members(v.rows), ['c', 'a', 'b']);
  assert.equal(v.seq, 8);
  assert.equal(v.frozen, 7);
  assert.equal(of('frozen').length, 1, 'a reveal step is no new frozen state');
  const step = of('change').pop();
  assert.equal(step.info.frozen, 7);
  assert.deepEqual(step.changes.find((c) => c.member === 'c'), { member: 'c', from: 3, to: 1, changed: true, prev_rank: 3 });

  // reveal all: the unfreeze delta carries no frozen (its rows may be empty)
  assert.equal(v.apply({ op: 'delta', sub: 's1', seq: 10, rows: [], removed: [] }), true);
  assert.equal(v.frozen, null);
  assert.deepEqual(of('frozen').map((c) => c.state).pop(), { frozen: null, shown: null, seq: 10 });
  assert.equal(of('change').pop().info.frozen, null);
});

test('window: a snapshot of a frozen board says so, and the next one that does not unfreezes the view', () => {
  const { v, of } = recorded({ board: 'demo', view: { top: 3 } });
  v.apply({ op: 'snapshot', sub: 's1', seq: 4, total: 3, rows: top3, frozen: 4 });
  assert.equal(v.frozen, 4);
  assert.equal(of('change')[0].info.frozen, 4);
  assert.equal(of('frozen').length, 1);
  // a reconnect's snapshot of the same frozen state: nothing to tell
  v.apply({ op: 'snapshot', sub: 's2', seq: 4, total: 3, rows: top3, frozen: 4 });
  assert.equal(of('frozen').length, 1);
  v.apply({ op: 'snapshot', sub: 's3', seq: 9, total: 3, rows: top3 });
  assert.equal(v.frozen, null);
  assert.equal(of('frozen').length, 2);
});

test('window: a frozen board frozen again at a later seq is a new frozen state', () => {
  const { v, of } = recorded({ board: 'demo', view: { top: 3 } });
  v.apply({ op: 'snapshot', sub: 's1', seq: 4, rows: top3, frozen: 4 });
  v.apply({ op: 'delta', sub: 's1', seq: 6, rows: [], removed: [] });
  v.apply({ op: 'delta', sub: 's1', seq: 6, rows: [], removed: [], frozen: 6 });
  assert.deepEqual(of('frozen').map((c) => c.state.frozen), [4, null, 6]);
});

/* ---- live views (the caster's preview) ---------------------------------- */

test('live: the subscribe asks for live only when told', () => {
  const v = new View({ board: 'demo', view: { top: 10 }, live: true, period: 'previous' });
  assert.deepEqual(v.subscribeMessage(), { op: 'subscribe', board: 'demo', view: { top: 10 }, period: 'previous', live: true });
  assert.equal(v.live, true);
  for (const live of [undefined, false, null]) {
    const w = new View({ board: 'demo', view: { top: 10 }, live });
    assert.equal('live' in w.subscribeMessage(), false);
    assert.equal(w.live, false);
  }
  const f = new View({ board: 'demo', view: { feed: true }, live: true });
  assert.equal(f.subscribeMessage().live, true);
});

test('live window: writes go on through a freeze; shown and pending follow the reveals', () => {
  const { v, of } = recorded({ board: 'demo', view: { top: 3 }, live: true });
  v.apply({ op: 'snapshot', sub: 'l1', seq: 7, total: 3, rows: top3 });
  assert.equal(v.pending, null);
  // freeze: a rowless delta with the new fields
  v.apply({ op: 'delta', sub: 'l1', seq: 7, rows: [], removed: [], frozen: 7, shown: 7 });
  assert.equal(v.frozen, 7);
  assert.equal(v.shown, 7);
  assert.equal(v.pending, 0);
  assert.deepEqual(of('frozen').pop().state, { frozen: 7, shown: 7, seq: 7 });
  // two writes: the live view moves, the audience would not
  v.apply({ op: 'delta', sub: 'l1', seq: 8, rows: [row(1, 'c', 60, { prev_rank: 3 })], removed: [], frozen: 7, shown: 7 });
  v.apply({ op: 'delta', sub: 'l1', seq: 9, rows: [row(2, 'b', 55, { prev_rank: 3 })], removed: [], frozen: 7, shown: 7 });
  assert.deepEqual(members(v.rows), ['c', 'b', 'a']);
  assert.equal(v.pending, 2);
  assert.equal(of('frozen').length, 1, 'writes while frozen do not change the frozen state');
  const info = of('change').pop().info;
  assert.equal(info.frozen, 7);
  assert.equal(info.shown, 7);
  // reveal one: rowless delta, shown moves on
  v.apply({ op: 'delta', sub: 'l1', seq: 9, rows: [], removed: [], frozen: 7, shown: 8 });
  assert.equal(v.pending, 1);
  assert.deepEqual(of('frozen').pop().state, { frozen: 7, shown: 8, seq: 9 });
  assert.deepEqual(members(v.rows), ['c', 'b', 'a']);
  // reveal all: no frozen, no shown
  v.apply({ op: 'delta', sub: 'l1', seq: 9, rows: [], removed: [] });
  assert.equal(v.frozen, null);
  assert.equal(v.shown, null);
  assert.equal(v.pending, null);
  assert.deepEqual(of('frozen').pop().state, { frozen: null, shown: null, seq: 9 });
  assert.equal(of('frozen').length, 3);
});

test('live window: a snapshot taken during a freeze carries frozen and shown', () => {
  const { v, of } = recorded({ board: 'demo', view: { top: 3 }, live: true });
  v.apply({ op: 'snapshot', sub: 'l1', seq: 12, total: 3, rows: top3, frozen: 7, shown: 9 });
  assert.equal(v.pending, 3);
  assert.deepEqual(of('frozen')[0].state, { frozen: 7, shown: 9, seq: 12 });
  assert.equal(of('change')[0].info.shown, 9);
});

test('audience window: info has no shown (only live views carry it)', () => {
  const { v, of } = recorded({ board: 'demo', view: { top: 3 } });
  v.apply({ op: 'snapshot', sub: 's1', seq: 1, rows: top3, frozen: 1 });
  assert.equal('shown' in of('change')[0].info, false);
});

/* ---- feed views ---------------------------------------------------------- */

const ev = (seq, member = 'user:1', extra) =>
  Object.assign({ op: 'event', sub: 'f1', seq, member, score: seq * 10, delta: 10, rank: 1, prev_rank: 2, at: 1763769600000 + seq }, extra);

test('audience feed: the freeze snapshot (no rows, same seq) is no gap and no restart', () => {
  const { v, of } = recorded({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, total: 3, rows: [] });
  v.apply(ev(11));
  v.apply(ev(12));
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 12, total: 3, rows: [], frozen: 12 }), true);
  assert.equal(of('gap').length, 0);
  assert.equal(v.frozen, 12);
  assert.equal(v.lastSeq, 12);
  assert.deepEqual(v.events.map((e) => e.seq), [11, 12], 'the events held stay');
  const status = of('change').pop();
  assert.equal(status.info.kind, 'status');
  assert.equal(status.info.frozen, 12);
  assert.deepEqual(status.changes, []);
  assert.deepEqual(of('frozen').map((c) => c.state), [{ frozen: 12, shown: null, seq: 12 }]);

  // reveal: the hidden events, in order, as ordinary events
  assert.equal(v.apply(ev(13, 'user:7', { prev_rank: 57, rank: 1 })), true);
  assert.equal(v.frozen, 12, 'events do not unfreeze');
  assert.deepEqual(of('change').pop().changes, [{ member: 'user:7', from: 57, to: 1, changed: true }]);
  // unfreeze: the remaining events, then a rowless snapshot without frozen
  assert.equal(v.apply(ev(14)), true);
  assert.equal(v.apply(ev(15)), true);
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 15, total: 4, rows: [] }), true);
  assert.equal(v.frozen, null);
  assert.equal(v.total, 4);
  assert.deepEqual(v.events.map((e) => e.seq), [11, 12, 13, 14, 15]);
  assert.deepEqual(of('event').map((c) => c.seq), [11, 12, 13, 14, 15]);
  assert.equal(of('gap').length, 0);
  assert.deepEqual(of('frozen').map((c) => c.state.frozen), [12, null]);
  // and the next resume still asks from the last event
  assert.deepEqual(v.subscribeMessage().since, { seq: 15 });
});

test('audience feed: the unfreeze snapshot at the live seq comes first; the events not given follow (PROTOCOL.md)', () => {
  const { v, of } = recorded({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, rows: [] });
  v.apply(ev(11));
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 11, rows: [], frozen: 11 }), true);
  v.apply(ev(12)); // one reveal step
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 15, total: 4, rows: [] }), true, 'no gap: the events follow');
  assert.equal(v.frozen, null);
  assert.equal(v.lastSeq, 12);
  for (const s of [13, 14, 15]) assert.equal(v.apply(ev(s)), true);
  assert.deepEqual(v.events.map((e) => e.seq), [11, 12, 13, 14, 15]);
  assert.equal(of('gap').length, 0);
  // a later event that skips one is still a gap
  assert.equal(v.apply(ev(17)), false);
  assert.deepEqual(of('gap').pop().gap, { from: 16, to: 16 });
  assert.deepEqual(v.subscribeMessage().since, { seq: 15 });
});

test('feed: a reveal that crossed the change log\'s end is a reset snapshot, then events one by one', () => {
  const { v, of } = recorded({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, rows: [] });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, rows: [], frozen: 10 });
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 1500, rows: [], reset: true, frozen: 10 }), true);
  assert.equal(v.lastSeq, 1500);
  assert.equal(of('change').pop().info.reset, true);
  assert.equal(v.apply(ev(1501)), true);
  assert.equal(v.frozen, 10);
  assert.equal(of('gap').length, 0);
});

test('feed: a subscribe reply (it has an id) on a view already showing events is not a status', () => {
  const { v, of } = recorded({ board: 'demo', view: { feed: true } });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 10, rows: [] });
  v.apply({ op: 'snapshot', sub: 'f2', id: 4, seq: 20, rows: [], reset: true, frozen: 20 });
  assert.equal(v.lastSeq, 20);
  assert.equal(v.frozen, 20);
  assert.equal(of('change').pop().info.kind, 'snapshot');
  assert.equal(of('gap').length, 0);
});

test('live feed: events keep coming while frozen; the reveal snapshot moves shown on', () => {
  const { v, of } = recorded({ board: 'demo', view: { feed: true }, live: true });
  v.apply({ op: 'snapshot', sub: 'f1', seq: 5, rows: [] });
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 5, rows: [], frozen: 5, shown: 5 }), true);
  assert.equal(v.pending, 0);
  for (const s of [6, 7, 8]) assert.equal(v.apply(ev(s)), true);
  assert.equal(v.pending, 3);
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 8, rows: [], frozen: 5, shown: 6 }), true);
  assert.equal(v.pending, 2);
  assert.equal(v.apply({ op: 'snapshot', sub: 'f1', seq: 8, rows: [] }), true);
  assert.equal(v.pending, null);
  assert.deepEqual(of('frozen').map((c) => [c.state.frozen, c.state.shown]), [[5, 5], [5, 6], [null, null]]);
  assert.equal(of('gap').length, 0);
  assert.deepEqual(v.events.map((e) => e.seq), [6, 7, 8]);
});

/* ---- the client: freeze, reveal, live subscribe over a fake socket ------- */

// A WebSocket stand-in: records what the client sends and lets the test answer.
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

async function openClient(t) {
  const states = [];
  const rc = new Client({ url: 'ws://test/ws', token: 'k', WebSocket: FakeSocket, onState: (s) => states.push(s) });
  t.after(() => rc.close());
  while (rc.state !== 'open') await new Promise((r) => setImmediate(r));
  return { rc, ws: FakeSocket.last };
}

test('client: freeze and reveal send the ops (period when given) and resolve with the replies', async (t) => {
  const { rc, ws } = await openClient(t);
  const frozen = rc.freeze('demo');
  assert.deepEqual(ws.sent[0], { op: 'freeze', board: 'demo', id: ws.sent[0].id });
  ws.reply({ op: 'frozen', id: ws.sent[0].id, board: 'demo', seq: 41 });
  assert.deepEqual(await frozen, { op: 'frozen', id: ws.sent[0].id, board: 'demo', seq: 41 });

  const one = rc.reveal('weekly', 1, { period: 'previous' });
  assert.deepEqual(ws.sent[1], { op: 'reveal', board: 'weekly', steps: 1, period: 'previous', id: ws.sent[1].id });
  ws.reply({ op: 'revealed', id: ws.sent[1].id, board: 'weekly', seq: 42, pending: 3, frozen: 41 });
  assert.equal((await one).pending, 3);

  const all = rc.reveal('demo', 'all', { period: 'current' });
  assert.equal(ws.sent[2].steps, 'all');
  assert.equal(ws.sent[2].period, 'current');
  ws.reply({ op: 'revealed', id: ws.sent[2].id, board: 'demo', seq: 45, pending: 0 });
  assert.equal('frozen' in (await all), false);

  const refused = rc.freeze('hot');
  ws.reply({ op: 'error', id: ws.sent[3].id, code: 'bad_request', message: 'a decaying board cannot be frozen' });
  await assert.rejects(refused, { code: 'bad_request' });
});

test('client: a live subscribe sends live: true; its view gets the frozen state pushed to it', async (t) => {
  const { rc, ws } = await openClient(t);
  const seen = [];
  const v = rc.subscribe({ board: 'demo', view: { top: 3 }, live: true }, { onFrozen: (view, s) => seen.push(s) });
  const sub = ws.sent[0];
  assert.equal(sub.op, 'subscribe');
  assert.equal(sub.live, true);
  ws.reply({ op: 'snapshot', id: sub.id, sub: 'L', board: 'demo', seq: 3, total: 3, rows: top3 });
  ws.reply({ op: 'delta', sub: 'L', board: 'demo', seq: 3, rows: [], removed: [], frozen: 3, shown: 3 });
  ws.reply({ op: 'delta', sub: 'L', board: 'demo', seq: 4, rows: [row(1, 'c', 60, { prev_rank: 3 })], removed: [], frozen: 3, shown: 3 });
  assert.equal(v.pending, 1);
  assert.deepEqual(members(v.rows), ['c', 'a', 'b']);
  assert.deepEqual(seen, [{ frozen: 3, shown: 3, seq: 3 }]);

  const refused = [];
  rc.subscribe({ board: 'demo', view: { top: 3 }, live: true }, { onError: (view, e) => refused.push(e.code) });
  ws.reply({ op: 'error', id: ws.sent[1].id, code: 'forbidden', message: 'live views need the admin scope' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(refused, ['forbidden']);
});

/* ---- REST helpers --------------------------------------------------------- */

test('rest: freeze, reveal and freezeState call the documented routes', async (t) => {
  const calls = [];
  const saved = globalThis.fetch;
  t.after(() => { globalThis.fetch = saved; });
  const answers = [
    { board: 'demo', seq: 12, frozen: 12 },
    { op: 'revealed', board: 'demo', seq: 13, pending: 2, frozen: 12 },
    { board: 'demo', frozen: 12, shown: 13, seq: 15, pending: 2 },
    { board: 'daily', frozen: null, shown: null, seq: 3, pending: 0 },
  ];
  globalThis.fetch = async (url, init) => {
    calls.push({ url, method: init.method, auth: init.headers.Authorization, body: init.body });
    return { ok: true, status: 200, json: async () => answers.shift() };
  };
  const api = Rankcast.rest({ base: 'http://gw', token: 'KEY' });
  assert.deepEqual(await api.freeze('demo'), { board: 'demo', seq: 12, frozen: 12 });
  assert.equal((await api.reveal('match:1842', 1)).pending, 2);
  assert.equal((await api.freezeState('demo')).shown, 13);
  assert.equal((await api.freezeState('daily', { period: 'previous' })).frozen, null);
  assert.deepEqual(calls.map((c) => [c.method, c.url]), [
    ['POST', 'http://gw/api/v1/boards/demo/freeze'],
    ['POST', 'http://gw/api/v1/boards/match:1842/reveal'],
    ['GET', 'http://gw/api/v1/boards/demo/freeze'],
    ['GET', 'http://gw/api/v1/boards/daily/freeze?period=previous'],
  ]);
  assert.deepEqual(JSON.parse(calls[1].body), { steps: 1 });
  assert.equal(calls[2].body, undefined);
  assert.ok(calls.every((c) => c.auth === 'Bearer KEY'));

  globalThis.fetch = async (url, init) => {
    calls.push({ url, body: init.body });
    return { ok: false, status: 400, statusText: 'Bad Request', json: async () => ({ code: 'bad_request', message: 'hot boards cannot be frozen' }) };
  };
  await assert.rejects(api.reveal('hot', 'all', { period: 'current' }), { status: 400, code: 'bad_request' });
  assert.equal(calls.pop().url, 'http://gw/api/v1/boards/hot/reveal?period=current');
});

/* ---- two views of one window on one client ------------------------------- */

test('client: two views of the same window share the server\'s sub: both follow it; closing one keeps the other', async (t) => {
  const { rc, ws } = await openClient(t);
  const a = rc.subscribe({ board: 'demo', view: { top: 3 } });
  const b = rc.subscribe({ board: 'demo', view: { top: 3 } });
  const [sa, sb] = [ws.sent[0], ws.sent[1]];
  // the gateway answers the second subscribe with the same sub (one view per connection)
  ws.reply({ op: 'snapshot', id: sa.id, sub: 'v1', board: 'demo', seq: 3, total: 3, rows: top3 });
  ws.reply({ op: 'snapshot', id: sb.id, sub: 'v1', board: 'demo', seq: 3, total: 3, rows: top3 });
  ws.reply({ op: 'delta', sub: 'v1', seq: 4, total: 3, rows: [row(1, 'c', 60, { prev_rank: 3 })], removed: [] });
  assert.deepEqual(members(a.rows), ['c', 'a', 'b']);
  assert.deepEqual(members(b.rows), ['c', 'a', 'b'], 'the first view keeps getting the deltas too');
  a.close();
  assert.equal(ws.sent.filter((m) => m.op === 'unsubscribe').length, 0, 'the other view still holds the sub');
  ws.reply({ op: 'delta', sub: 'v1', seq: 5, total: 3, rows: [row(1, 'b', 70, { prev_rank: 3 })], removed: [] });
  assert.deepEqual(members(b.rows), ['b', 'c', 'a']);
  b.close();
  const unsub = ws.sent.filter((m) => m.op === 'unsubscribe');
  assert.deepEqual(unsub.map((m) => m.sub), ['v1'], 'the last view unsubscribes it once');
});
