/* places.test.js - shared places (docs/protocol.md, "Shared places") end to
 * end: a real redis-server, the real gateway, real WebSocket clients. Window
 * views and REST reads asked with places "shared" carry place (1, 2, 2, 4)
 * and tied on every row, pages that start inside a tie included; windows
 * rebuilt from snapshots and deltas by the documented rule keep every row's
 * place and tied equal to the truth counted over the whole board in Redis,
 * as ties form and break. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const TB = 2 ** 29; // match:*, laps: 1 s tie-break slots over 3650 d (docs/score-layout.md)
const zkey = (board) => `rc:{${board}|}:z`;
const rnd = (n) => Math.floor(Math.random() * n);

/* The whole board from Redis in rank order, each member with its true rank,
 * place (1 + members with strictly better points) and tied. unit: the
 * composite's tie unit (2^T; 1 on a board without tie-break). */
async function truthBoard(redis, board, { asc = false, unit = TB } = {}) {
  const args = asc ? ['ZRANGE', zkey(board), '0', '-1', 'WITHSCORES']
    : ['ZRANGE', zkey(board), '0', '-1', 'REV', 'WITHSCORES'];
  const out = (await redis.cli(...args)).split('\n').filter((x) => x !== '');
  const rows = [];
  for (let i = 0; i + 1 < out.length; i += 2)
    rows.push({ member: out[i], key: Math.floor(Number(out[i + 1]) / unit) });
  const count = new Map();
  for (const r of rows) count.set(r.key, (count.get(r.key) || 0) + 1);
  let place = 0;
  rows.forEach((r, i) => {
    if (i === 0 || rows[i - 1].key !== r.key) place = i + 1;
    r.rank = i + 1;
    r.place = place;
    r.tied = count.get(r.key) > 1;
  });
  return rows;
}

/* The rows a view should hold, from the whole board. */
function truthWindow(board, view) {
  if (view.top) return board.slice(0, view.top);
  if (view.limit) return board.slice(view.offset, view.offset + view.limit);
  const i = board.findIndex((r) => r.member === view.around);
  if (i < 0) return [];
  return board.slice(Math.max(0, i - view.radius), i + view.radius + 1);
}

const shape = (rows) => rows.map((r) => `${r.rank}:${r.member}@${r.place}${r.tied === true ? 't' : ''}`).join(' ');

/* A viewer with shared places: its window rebuilt by the delta rule. */
class Viewer {
  constructor(conn, board, view) {
    Object.assign(this, { conn, board, view, rows: null, broken: null, sub: null });
  }

  async start() {
    const snap = await this.conn.request({ op: 'subscribe', board: this.board, view: this.view, places: 'shared' });
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    this.sub = snap.sub;
    this.rows = snap.rows;
    this.conn.ws.on('message', (data) => this.onMessage(JSON.parse(data.toString())));
    return snap;
  }

  get first() { return this.view.top ? 1 : (this.view.offset || 0) + 1; }
  get length() { return this.view.top || this.view.limit; }

  onMessage(m) {
    if (m.sub !== this.sub) return;
    if (m.op === 'snapshot') this.rows = m.rows;
    else if (m.op === 'delta') {
      if (!this.length) { this.broken = `delta on an around view: ${JSON.stringify(m)}`; return; }
      for (const r of m.rows) {
        if (!(r.place >= 1)) this.broken = `delta row without a place: ${JSON.stringify(r)}`;
      }
      const next = applyDelta(this.rows, m, this.first, this.length);
      if (!next) this.broken = `delta did not apply: ${JSON.stringify(m)}`;
      else this.rows = next;
    }
  }
}

/* Waits until every viewer holds its true window (member, rank, place, tied). */
async function settle(redis, viewers, opts, what) {
  let last = '';
  try {
    await h.waitFor(async () => {
      const board = await truthBoard(redis, viewers[0].board, opts);
      last = '';
      for (const v of viewers) {
        assert.equal(v.broken, null);
        const want = shape(truthWindow(board, v.view));
        const got = shape(v.rows);
        if (want !== got) last += `\n${JSON.stringify(v.view)}\n  want ${want}\n  got  ${got}`;
      }
      return last === '';
    }, 15000, what);
  } catch (e) {
    throw new Error(`${e.message}${last}`);
  }
}

/* Rows as [member, place, tied] sorted by member (members with equal points
 * written in the same tie-break second order by name: the test does not care
 * which), after checking their ranks run on from first. */
function places(rows, first) {
  rows.forEach((r, i) => assert.equal(r.rank, first + i, JSON.stringify(rows)));
  return rows.map((r) => [r.member, r.place, r.tied]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

async function set(c, board, member, value) {
  const r = await c.request({ op: 'set', board, member, value }, 10000);
  assert.equal(r.op, 'ack', JSON.stringify(r));
}

test('a top view shows competition places 1, 2, 2, 4 and tied', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const board = 'match:1061';
  await set(c, board, 'ann', 40);
  await set(c, board, 'bob', 30);
  await set(c, board, 'cat', 30);
  await set(c, board, 'dan', 20);
  const snap = await c.request({ op: 'subscribe', board, view: { top: 4 }, places: 'shared' });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.deepEqual(places(snap.rows, 1),
    [['ann', 1, undefined], ['bob', 2, true], ['cat', 2, true], ['dan', 4, undefined]]);

  // the same window without places is another view: another sub, rows without place
  const plain = await c.request({ op: 'subscribe', board, view: { top: 4 } });
  assert.equal(plain.op, 'snapshot');
  assert.notEqual(plain.sub, snap.sub);
  assert.ok(plain.rows.every((r) => r.place === undefined && r.tied === undefined));
  const unique = await c.request({ op: 'subscribe', board, view: { top: 4 }, places: 'unique' });
  assert.equal(unique.sub, plain.sub);
  // a second viewer asking shared places shares the first one's view
  const c2 = await h.connectWs(t, gw.wsUrl);
  const again = await c2.request({ op: 'subscribe', board, view: { top: 4 }, places: 'shared' });
  assert.equal(again.sub, snap.sub);
});

test('a page or an around view starting inside a tie shows the tie\'s first place', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const board = 'match:1062';
  for (const [m, v] of [['a', 50], ['b', 40], ['c', 40], ['d', 40], ['e', 10], ['f', 10]]) await set(c, board, m, v);

  // from the mirror: ranks 3..5 are two of the 40s and one of the 10s
  const page = await c.request({ op: 'subscribe', board, view: { offset: 2, limit: 3 }, places: 'shared' });
  assert.deepEqual(page.rows.map((r) => [r.rank, r.score, r.place, r.tied]),
    [[3, 40, 2, true], [4, 40, 2, true], [5, 10, 5, true]]);
  // ranks 5..5: e ties f past the window's end
  const one = await c.request({ op: 'subscribe', board, view: { offset: 4, limit: 1 }, places: 'shared' });
  assert.deepEqual(one.rows.map((r) => [r.rank, r.place, r.tied]), [[5, 5, true]]);

  // from Redis (read.lua): around views
  // the last of the 40s and the first of the 10s, alone in their windows
  const last40 = page.rows[1].member, first10 = page.rows[2].member;
  const around = await c.request({ op: 'subscribe', board, view: { around: last40, radius: 0 }, places: 'shared' });
  assert.deepEqual(around.rows.map((r) => [r.rank, r.member, r.place, r.tied]), [[4, last40, 2, true]]);
  const aroundE = await c.request({ op: 'subscribe', board, view: { around: first10, radius: 0 }, places: 'shared' });
  assert.deepEqual(aroundE.rows.map((r) => [r.rank, r.member, r.place, r.tied]), [[5, first10, 5, true]]);
  const aroundA = await c.request({ op: 'subscribe', board, view: { around: 'a', radius: 1 }, places: 'shared' });
  assert.deepEqual(aroundA.rows.map((r) => [r.rank, r.score, r.place, r.tied]), [[1, 50, 1, undefined], [2, 40, 2, true]]);

  // REST reads
  const base = `/api/v1/boards/${board}`;
  let r = await h.http(gw.base, 'GET', `${base}?offset=3&limit=3&places=shared`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.rows.map((x) => [x.rank, x.score, x.place, x.tied]),
    [[4, 40, 2, true], [5, 10, 5, true], [6, 10, 5, true]]);
  r = await h.http(gw.base, 'GET', `${base}?top=2&places=shared`);
  assert.deepEqual(r.body.rows.map((x) => [x.rank, x.place, x.tied]), [[1, 1, undefined], [2, 2, true]]);
  r = await h.http(gw.base, 'GET', `${base}?around=${last40}&radius=0&places=shared`);
  assert.deepEqual(r.body.rows.map((x) => [x.rank, x.place, x.tied]), [[4, 2, true]]);
  r = await h.http(gw.base, 'GET', `${base}?top=2`);
  assert.ok(r.body.rows.every((x) => x.place === undefined), r.text);
});

test('a bad places value is bad_request, on WebSocket and REST; feeds have no places', { timeout: 60000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const before = await redis.fingerprint();
  const c = await h.connectWs(t, gw.wsUrl);
  for (const value of ['dense', '', 1, true, null]) {
    const r = await c.request({ op: 'subscribe', board: 'demo', view: { top: 3 }, places: value });
    assert.equal(r.op, 'error', JSON.stringify(r));
    assert.equal(r.code, 'bad_request');
    assert.match(r.message, /places/);
  }
  const feed = await c.request({ op: 'subscribe', board: 'demo', view: { feed: true }, places: 'shared' });
  assert.equal(feed.code, 'bad_request');
  assert.match(feed.message, /places/);
  const r = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=3&places=dense');
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.code, 'bad_request');
  assert.match(r.body.message, /places/);
  assert.equal(await redis.fingerprint(), before);
});

/* Random writes with few distinct points, so ties form and break all the
 * time, in bursts; after each burst every viewer's window, rebuilt by the
 * delta rule, must hold the true places. */
async function churn(t, { board, asc, unit, write, members, views, rounds }) {
  const { redis, gw } = await h.startStack(t);
  const w = await h.connectWs(t, gw.wsUrl);
  for (let i = 0; i < members; i += 50) {
    const batch = [];
    for (let k = i; k < Math.min(members, i + 50); k++) batch.push(write(w, `p${k}`));
    await Promise.all(batch);
  }
  const viewers = [];
  for (const view of views) {
    const v = new Viewer(await h.connectWs(t, gw.wsUrl), board, view);
    await v.start();
    viewers.push(v);
  }
  await settle(redis, viewers, { asc, unit }, 'the first snapshots');
  for (let round = 0; round < rounds; round++) {
    const batch = [];
    for (let k = 0; k < 25; k++) batch.push(write(w, `p${rnd(members)}`));
    await Promise.all(batch);
    await settle(redis, viewers, { asc, unit }, `quiet after round ${round}`);
  }
}

const churnViews = (members) => [
  { top: 6 }, { top: 12 }, { offset: 3, limit: 5 }, { offset: 9, limit: 4 },
  { around: `p${Math.floor(members / 2)}`, radius: 2 },
];

test('WebSocket deltas keep place and tied right as ties form and break (desc, negative points)',
  { timeout: 120000 }, async (t) => {
    await churn(t, {
      board: 'match:1063', unit: TB, members: 16, views: churnViews(16), rounds: 12,
      write: (c, m) => set(c, 'match:1063', m, rnd(5) - 2), // -2..2
    });
  });

test('pages past the mirror (read from Redis) keep place and tied right too', { timeout: 180000 }, async (t) => {
  // offset + limit past 1000 rows: such pages are read with lua/read.lua, not cut from the mirror
  await churn(t, {
    board: 'match:1064', unit: TB, members: 1010, rounds: 6,
    views: [{ offset: 997, limit: 8 }, { offset: 1000, limit: 20 }, { top: 3 }],
    write: (c, m) => set(c, 'match:1064', m, rnd(7) - 3),
  });
});

test('WebSocket deltas keep place and tied right on an asc board (laps)', { timeout: 120000 }, async (t) => {
  await churn(t, {
    board: 'laps', asc: true, unit: TB, members: 16, views: churnViews(16), rounds: 10,
    write: async (c, m) => {
      const r = await c.request({ op: 'best', board: 'laps', member: m, value: 1000 + 100 * rnd(12) }, 10000);
      assert.equal(r.op, 'ack', JSON.stringify(r));
    },
  });
});

test('WebSocket deltas keep place and tied right on a multi-field board (clears)', { timeout: 120000 }, async (t) => {
  await churn(t, {
    board: 'clears', unit: 1, members: 16, views: churnViews(16), rounds: 10,
    write: async (c, m) => {
      const fields = { clears: rnd(4), revives: rnd(2), first_clear_ms: 1000 * rnd(2) };
      const r = await c.request({ op: 'submit', board: 'clears', member: m, fields }, 10000);
      assert.equal(r.op, 'ack', JSON.stringify(r));
    },
  });
});

test('a decaying board ties on equal weighted scores, fractions included', { timeout: 60000 }, async (t) => {
  const HOUR = 3600000, T0 = Date.UTC(2030, 0, 7, 0, 10);
  const config = h.configWith(t, {
    server: { test_clock: 'on' },
    'board hot': { bucket_span: '1h', window: '4h', rebuild_every: '200ms', result_ttl: '2s' },
  });
  const { redis, gw } = await h.startStack(t, { config });
  const clock = async (now) => assert.equal((await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: now })).status, 200);
  const incr = async (member, delta) => assert.equal((await h.http(gw.base, 'POST', '/api/v1/boards/hot/scores',
    { member, op: 'incr', delta })).status, 200);
  await clock(T0);
  await incr('a', 10);
  await incr('b', 10);
  // an hour later a and b weigh 3/4: 7.5 each, between c (8) and d (7)
  await clock(T0 + HOUR);
  await incr('c', 8);
  await incr('d', 7);
  const want = [['c', 8], ['b', 7.5], ['a', 7.5], ['d', 7]];
  await h.waitFor(async () => {
    const out = (await redis.cli('ZRANGE', zkey('hot'), '0', '-1', 'REV', 'WITHSCORES')).split('\n');
    return JSON.stringify(out) === JSON.stringify(want.flat().map(String));
  }, 10000, 'the rebuilt board');
  let r = await h.http(gw.base, 'GET', '/api/v1/boards/hot?top=4&places=shared');
  assert.deepEqual(r.body.rows.map((x) => [x.rank, x.score, x.place, x.tied]),
    [[1, 8, 1, undefined], [2, 7.5, 2, true], [3, 7.5, 2, true], [4, 7, 4, undefined]]);
  r = await h.http(gw.base, 'GET', '/api/v1/boards/hot?offset=2&limit=2&places=shared');
  assert.deepEqual(r.body.rows.map((x) => [x.rank, x.score, x.place, x.tied]), [[3, 7.5, 2, true], [4, 7, 4, undefined]]);
  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board: 'hot', view: { offset: 1, limit: 1 }, places: 'shared' });
  assert.deepEqual(snap.rows.map((x) => [x.rank, x.score, x.place, x.tied]), [[2, 7.5, 2, true]]);
});
