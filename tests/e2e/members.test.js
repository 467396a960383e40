/* members.test.js - member-list views (PROTOCOL v1.2 "Member lists",
 * docs/protocol-additions.md "Member lists") through the real gateway and a
 * real redis-server:
 * - a snapshot holds the listed members on the board by rank, each with its
 *   board-wide rank and score, and `absent` the others in the order asked;
 * - deltas carry the whole row of every listed member whose rank, score or
 *   place changed, shifts caused by other members' writes included, with
 *   prev_rank, and `removed`; applied by member they leave every viewer's
 *   rows equal to what `rank` answers once writes stop;
 * - bad lists are bad_request, REST reads take ?members= and a URL over
 *   8 KB is too_large. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const TB = 2 ** 29; // match:*: 1 s tie-break slots over 3650 d (docs/score-layout.md)
const zkey = (board) => `rc:{${board}|}:z`;
const rnd = (n) => Math.floor(Math.random() * n);

/* The whole board from Redis: member -> {rank, score, place, tied}. */
async function truth(redis, board) {
  const out = (await redis.cli('ZRANGE', zkey(board), '0', '-1', 'REV', 'WITHSCORES')).split('\n').filter((x) => x !== '');
  const rows = [];
  for (let i = 0; i + 1 < out.length; i += 2) rows.push({ member: out[i], key: Math.floor(Number(out[i + 1]) / TB) });
  const count = new Map();
  for (const r of rows) count.set(r.key, (count.get(r.key) || 0) + 1);
  const by = new Map();
  let place = 0;
  rows.forEach((r, i) => {
    if (i === 0 || rows[i - 1].key !== r.key) place = i + 1;
    by.set(r.member, { rank: i + 1, score: r.key, place, tied: count.get(r.key) > 1 });
  });
  return by;
}

/* A member-list viewer: rows and absent kept by the documented rule. */
class ListViewer {
  constructor(conn, board, members, extra = {}) {
    Object.assign(this, { conn, board, members, extra, rows: [], absent: [], sub: null, broken: null, deltas: [] });
  }

  async start() {
    const snap = await this.conn.request(Object.assign({ op: 'subscribe', board: this.board, view: { members: this.members } }, this.extra), 15000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    this.sub = snap.sub;
    this.take(snap);
    this.conn.ws.on('message', (data) => this.onMessage(JSON.parse(String(data))));
    return snap;
  }

  take(snap) {
    this.rows = snap.rows;
    this.absent = snap.absent;
    if (!Array.isArray(this.absent)) this.broken = `snapshot without absent: ${JSON.stringify(snap)}`;
  }

  onMessage(m) {
    if (m.sub !== this.sub) return;
    if (m.op === 'snapshot') { this.take(m); return; }
    if (m.op !== 'delta') return;
    this.deltas.push(m);
    const rows = new Map(this.rows.map((r) => [r.member, r]));
    const absent = new Set(this.absent);
    for (const x of m.removed || []) { rows.delete(x); absent.add(x); }
    for (const r of m.rows) {
      if (!this.members.includes(r.member)) this.broken = `delta row of an unlisted member: ${JSON.stringify(r)}`;
      if (!('prev_rank' in r)) this.broken = `delta row without prev_rank: ${JSON.stringify(r)}`;
      rows.set(r.member, r);
      absent.delete(r.member);
    }
    this.rows = [...rows.values()].sort((a, b) => a.rank - b.rank);
    this.absent = this.members.filter((x) => absent.has(x));
  }
}

const shape = (rows) => rows.map((r) => `${r.rank}:${r.member}=${r.score}${r.place ? `@${r.place}${r.tied ? 't' : ''}` : ''}`).join(' ');

function want(by, members, places) {
  const rows = members.filter((m) => by.has(m)).map((m) => Object.assign({ member: m }, by.get(m)))
    .sort((a, b) => a.rank - b.rank);
  return {
    rows: shape(rows.map((r) => ({ rank: r.rank, member: r.member, score: r.score, place: places ? r.place : 0, tied: r.tied }))),
    absent: members.filter((m) => !by.has(m)).join(' '),
  };
}

async function settle(redis, viewers, what, places = false) {
  let last = '';
  try {
    await h.waitFor(async () => {
      const by = await truth(redis, viewers[0].board);
      last = '';
      for (const v of viewers) {
        assert.equal(v.broken, null);
        const w = want(by, v.members, places);
        const got = { rows: shape(v.rows), absent: v.absent.join(' ') };
        if (w.rows !== got.rows || w.absent !== got.absent)
          last += `\n${v.members.join(',')}\n  want ${w.rows} | ${w.absent}\n  got  ${got.rows} | ${got.absent}`;
      }
      return last === '';
    }, 20000, what);
  } catch (e) {
    throw new Error(`${e.message}${last}`);
  }
}

async function set(c, board, member, value) {
  const r = await c.request({ op: 'set', board, member, value }, 10000);
  assert.equal(r.op, 'ack', JSON.stringify(r));
  return r;
}

test('a member-list snapshot holds the listed members by rank and absent in the order asked', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const board = 'match:2601';
  await set(c, board, 'ann', 40);
  await set(c, board, 'bob', 30);
  await set(c, board, 'cat', 20);
  await set(c, board, 'dan', 10);
  const snap = await c.request({ op: 'subscribe', board, view: { members: ['dan', 'zed', 'bob', 'amy'] } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.equal(snap.total, 4);
  assert.deepEqual(snap.rows.map((r) => [r.rank, r.member, r.score]), [[2, 'bob', 30], [4, 'dan', 10]]);
  assert.deepEqual(snap.absent, ['zed', 'amy']);
  // another list is another view
  const other = await c.request({ op: 'subscribe', board, view: { members: ['ann'] } });
  assert.notEqual(other.sub, snap.sub);
  assert.deepEqual(other.rows.map((r) => [r.rank, r.member]), [[1, 'ann']]);
  assert.deepEqual(other.absent, []);
  // shared places
  await set(c, board, 'cat', 30);
  const pl = await c.request({ op: 'subscribe', board, view: { members: ['cat', 'dan'] }, places: 'shared' });
  assert.equal(pl.op, 'snapshot', JSON.stringify(pl));
  assert.deepEqual(pl.rows.map((r) => [r.member, r.place, r.tied]), [['cat', 2, true], ['dan', 4, undefined]]);
});

test('bad member lists are bad_request', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const bad = [
    { members: [] },
    { members: 'ann' },
    { members: ['ann', 'ann'] },
    { members: ['ann', 'bad name'] },
    { members: ['ann', 7] },
    { members: Array.from({ length: 201 }, (_, i) => `u:${i}`) },
  ];
  for (const view of bad) {
    const r = await c.request({ op: 'subscribe', board: 'match:2602', view });
    assert.equal(r.op, 'error', JSON.stringify(view));
    assert.equal(r.code, 'bad_request', JSON.stringify(r));
  }
  const ok = await c.request({ op: 'subscribe', board: 'match:2602', view: { members: Array.from({ length: 200 }, (_, i) => `u:${i}`) } });
  assert.equal(ok.op, 'snapshot', JSON.stringify(ok).slice(0, 300));
  assert.equal(ok.absent.length, 200);
  // REST
  let r = await h.http(gw.base, 'GET', '/api/v1/boards/match:2602?members=a,a');
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.code, 'bad_request');
  r = await h.http(gw.base, 'GET', '/api/v1/boards/match:2602?members=');
  assert.equal(r.status, 400, r.text);
  const long = Array.from({ length: 200 }, (_, i) => `user:${'x'.repeat(40)}${i}`).join(',');
  r = await h.http(gw.base, 'GET', `/api/v1/boards/match:2602?members=${encodeURIComponent(long)}`);
  assert.equal(r.status, 413, r.text);
  assert.equal(r.body.code, 'too_large');
});

test('REST reads a member list with ?members=', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const board = 'match:2603';
  await set(c, board, 'user:1', 5);
  await set(c, board, 'user:2', 50);
  await set(c, board, 'user:3', 7);
  const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?members=${encodeURIComponent('user:3,nobody,user:2')}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.op, 'snapshot');
  assert.equal(r.body.total, 3);
  assert.deepEqual(r.body.rows.map((x) => [x.rank, x.member, x.score]), [[1, 'user:2', 50], [2, 'user:3', 7]]);
  assert.deepEqual(r.body.absent, ['nobody']);
});

test('a listed member shifted by another member\'s write gets a delta row with prev_rank', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const board = 'match:2604';
  await set(c, board, 'ann', 40);
  await set(c, board, 'bob', 30);
  await set(c, board, 'cat', 20);
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl), board, ['bob']);
  const snap = await v.start();
  assert.deepEqual(snap.rows.map((r) => [r.rank, r.member]), [[2, 'bob']]);
  await set(c, board, 'cat', 100); // cat (not listed) passes bob
  await h.waitFor(() => v.rows.length === 1 && v.rows[0].rank === 3, 10000, 'bob shifted to 3');
  const d = v.deltas.find((m) => m.rows.some((r) => r.member === 'bob'));
  const row = d.rows.find((r) => r.member === 'bob');
  assert.equal(row.prev_rank, 2);
  assert.equal(row.score, 30);
  // a write far below bob changes nothing for it
  const before = v.deltas.length;
  await set(c, board, 'dan', 1);
  await set(c, board, 'dan', 2);
  await new Promise((r) => setTimeout(r, 400));
  for (const m of v.deltas.slice(before)) assert.deepEqual(m.rows.filter((r) => r.member === 'bob'), [], JSON.stringify(m));
  // a listed member joins, then leaves (removed)
  const w = new ListViewer(await h.connectWs(t, gw.wsUrl), board, ['eve', 'bob']);
  await w.start();
  assert.deepEqual(w.absent, ['eve']);
  await set(c, board, 'eve', 35);
  await h.waitFor(() => w.absent.length === 0 && w.rows.length === 2, 10000, 'eve arrives');
  assert.deepEqual(w.rows.map((r) => [r.rank, r.member]), [[3, 'eve'], [4, 'bob']]);
  const admin = await h.connectWs(t, gw.wsUrl);
  const rm = await admin.request({ op: 'remove', board, member: 'eve' });
  assert.notEqual(rm.op, 'error', JSON.stringify(rm));
  await h.waitFor(() => w.absent.length === 1 && w.rows.length === 1, 10000, 'eve removed');
  assert.ok(w.deltas.some((m) => (m.removed || []).includes('eve')), JSON.stringify(w.deltas));
  assert.deepEqual(w.rows.map((r) => [r.rank, r.member]), [[3, 'bob']]);
});

test('member lists stay exact while many members cross each other', { timeout: 180000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const board = 'match:2605';
  const c = await h.connectWs(t, gw.wsUrl);
  const all = Array.from({ length: 60 }, (_, i) => `p:${i}`);
  for (const m of all.slice(0, 40)) await set(c, board, m, rnd(100));
  const viewers = [];
  for (let i = 0; i < 6; i++) {
    const members = all.filter(() => Math.random() < 0.3).slice(0, 25);
    if (!members.length) members.push(all[i]);
    const extra = i === 1 ? { max_rate: 3 } : i === 2 ? { places: 'shared' } : {};
    const v = new ListViewer(await h.connectWs(t, gw.wsUrl), board, members, extra);
    await v.start();
    viewers.push(v);
  }
  // 34 more plain lists on two connections: with 32 lists or more a board's
  // lists take each batch of events as one run (gateway/fanout/gw_reads_batch.c)
  const shared = await Promise.all([0, 1].map(() => h.connectWs(t, gw.wsUrl)));
  const more = [];
  for (let i = 0; i < 34; i++) {
    const ms = all.filter(() => Math.random() < 0.3).slice(0, 25);
    if (!ms.length) ms.push(all[i]);
    const v = new ListViewer(shared[i % 2], board, ms);
    await v.start();
    more.push(v);
  }
  viewers.push(...more);
  await settle(redis, viewers.filter((v) => !v.extra.places), 'lists exact before writes');
  await settle(redis, viewers.filter((v) => v.extra.places), 'places exact before writes', true);
  const writers = await Promise.all([0, 1, 2].map(() => h.connectWs(t, gw.wsUrl)));
  for (let round = 0; round < 15; round++) {
    await Promise.all(writers.map((w) => {
      const reqs = [];
      for (let k = 0; k < 40; k++) {
        const m = all[rnd(all.length)];
        reqs.push(rnd(4) === 0 ? { op: 'set', board, member: m, value: rnd(120) }
          : { op: 'incr', board, member: m, delta: rnd(21) - 10 });
      }
      return Promise.all(reqs.map((r) => w.request(r, 20000)));
    }));
  }
  await settle(redis, viewers.filter((v) => !v.extra.places), 'lists exact after 1,800 writes');
  await settle(redis, viewers.filter((v) => v.extra.places), 'places exact after writes', true);
  // every row equals what `rank` answers
  for (const v of viewers.slice(0, 6)) {
    for (const r of v.rows) {
      const rk = await c.request({ op: 'rank', board, member: r.member });
      assert.equal(rk.rank, r.rank, JSON.stringify([rk, r]));
      assert.equal(rk.score, r.score);
    }
  }
  // the non-rate viewers got deltas, not only snapshots
  assert.ok(viewers[0].deltas.length > 0);
});

async function metric(gw, re) {
  const m = await h.http(gw.base, 'GET', '/metrics', null, { headers: { Authorization: 'Bearer ' + h.ADMIN_KEY } });
  const x = re.exec(m.text);
  return x ? Number(x[1]) : 0;
}

/* A ListViewer that also checks each delta against what it holds: seqs
 * never go back, and every row's prev_rank is the rank it held for that
 * member (null when it held none: not on the board), and only held members
 * are removed: a delta lost or sent out of order breaks one of them. */
class StrictListViewer extends ListViewer {
  take(snap) {
    super.take(snap);
    this.seq = snap.seq;
  }

  onMessage(m) {
    if (m.sub === this.sub && m.op === 'delta' && !this.broken) {
      const held = new Map(this.rows.map((r) => [r.member, r.rank]));
      if (m.seq < this.seq) this.broken = `seq went back: ${this.seq} then ${JSON.stringify(m)}`;
      for (const r of m.rows) {
        if (r.prev_rank !== (held.has(r.member) ? held.get(r.member) : null))
          this.broken = `prev_rank ${r.prev_rank} of ${r.member}, held ${held.get(r.member)}: ${JSON.stringify(m)}`;
      }
      for (const x of m.removed || []) if (!held.has(x)) this.broken = `removed ${x}, not held: ${JSON.stringify(m)}`;
      this.seq = m.seq;
    }
    super.onMessage(m);
  }
}

test('member lists built one per loop turn (list_builds_per_turn = 1) get every change in order and converge', { timeout: 180000 }, async (t) => {
  const config = h.configWith(t, { server: { list_builds_per_turn: 1 } });
  const { redis, gw } = await h.startStack(t, { config });
  const board = 'match:2620';
  const c = await h.connectWs(t, gw.wsUrl);
  const all = Array.from({ length: 50 }, (_, i) => `s:${i}`);
  for (const m of all.slice(0, 40)) await set(c, board, m, rnd(100));
  const conns = await Promise.all([0, 1, 2, 3].map(() => h.connectWs(t, gw.wsUrl)));
  const viewers = [];
  for (let i = 0; i < 24; i++) {
    const members = all.filter(() => Math.random() < 0.4).slice(0, 20);
    if (!members.length) members.push(all[i]);
    const v = new StrictListViewer(conns[i % conns.length], board, members);
    await v.start();
    viewers.push(v);
  }
  await settle(redis, viewers, 'lists exact before writes');
  const deferred0 = await metric(gw, /^rankcast_list_builds_deferred_total (\d+)$/m);
  const writers = await Promise.all([0, 1].map(() => h.connectWs(t, gw.wsUrl)));
  for (let round = 0; round < 12; round++) {
    await Promise.all(writers.map((w) => Promise.all(Array.from({ length: 40 }, () => {
      const m = all[rnd(all.length)];
      return w.request(rnd(5) === 0 ? { op: 'set', board, member: m, value: rnd(120) }
        : { op: 'incr', board, member: m, delta: rnd(21) - 10 }, 20000);
    }))));
  }
  await settle(redis, viewers, 'lists exact after 960 writes, built a list per loop turn');
  const deferred = (await metric(gw, /^rankcast_list_builds_deferred_total (\d+)$/m)) - deferred0;
  assert.ok(deferred > 0, 'some ticks had more lists to build than a turn builds');
  for (const v of viewers) assert.equal(v.broken, null);
  assert.ok(viewers.every((v) => v.deltas.length > 0));
});

test('member lists follow other members\' moves from the change events, without reading Redis', { timeout: 120000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const board = 'match:2606';
  const c = await h.connectWs(t, gw.wsUrl);
  const all = Array.from({ length: 40 }, (_, i) => `q:${i}`);
  for (const m of all) await set(c, board, m, rnd(100));
  const viewers = [];
  for (let i = 0; i < 4; i++) {
    const v = new ListViewer(await h.connectWs(t, gw.wsUrl), board, all.filter((_, k) => k % 4 === i).slice(0, 8));
    await v.start();
    viewers.push(v);
  }
  // and 32 lists on two connections: the board's lists then take each batch
  // of events as one run (gateway/fanout/gw_reads_batch.c), reading no more
  const shared = await Promise.all([0, 1].map(() => h.connectWs(t, gw.wsUrl)));
  for (let i = 0; i < 32; i++) {
    const v = new ListViewer(shared[i % 2], board, all.filter(() => Math.random() < 0.25).slice(0, 10).concat([all[i]]).filter((m, k, a) => a.indexOf(m) === k));
    await v.start();
    viewers.push(v);
  }
  await settle(redis, viewers, 'lists exact before writes');
  const reads0 = await metric(gw, /^rankcast_view_reads_total\{view="members"\} (\d+)$/m);
  // 800 writes of members already on the board: listed or not, the events tell every listed rank
  const writers = await Promise.all([0, 1].map(() => h.connectWs(t, gw.wsUrl)));
  for (let round = 0; round < 10; round++) {
    await Promise.all(writers.map((w) => Promise.all(Array.from({ length: 40 }, () =>
      w.request({ op: 'incr', board, member: all[rnd(all.length)], delta: rnd(31) - 15 }, 20000)))));
  }
  await settle(redis, viewers, 'lists exact after 800 moves');
  const reads = (await metric(gw, /^rankcast_view_reads_total\{view="members"\} (\d+)$/m)) - reads0;
  assert.ok(reads <= 8, `member-list reads during 800 moves: ${reads}`);
  assert.ok(viewers.every((v) => v.deltas.some((m) => m.rows.length > 0)));
});

test('a member list on a frozen board shows the frozen state until the reveal', { timeout: 60000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const board = 'match:2607';
  const c = await h.connectWs(t, gw.wsUrl);
  await set(c, board, 'ann', 40);
  await set(c, board, 'bob', 30);
  await set(c, board, 'cat', 20);
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl, { token: null }), board, ['bob', 'dan']);
  await v.start();
  const fz = await c.request({ op: 'freeze', board });
  assert.equal(fz.op, 'frozen', JSON.stringify(fz));
  await set(c, board, 'cat', 100); // passes bob, hidden
  await set(c, board, 'dan', 50); // joins, hidden
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(v.rows.map((r) => [r.rank, r.member]), [[2, 'bob']]);
  assert.deepEqual(v.absent, ['dan']);
  // a new viewer and a REST read see the frozen state, marked frozen
  const late = await (await h.connectWs(t, gw.wsUrl, { token: null })).request({ op: 'subscribe', board, view: { members: ['bob', 'dan'] } });
  assert.equal(late.frozen, fz.seq, JSON.stringify(late));
  assert.deepEqual(late.rows.map((r) => [r.rank, r.member]), [[2, 'bob']]);
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?members=bob,dan`);
  assert.equal(rest.status, 200, rest.text);
  assert.deepEqual(rest.body.rows.map((r) => [r.rank, r.member]), [[2, 'bob']]);
  assert.deepEqual(rest.body.absent, ['dan']);
  const rv = await c.request({ op: 'reveal', board, steps: 'all' });
  assert.equal(rv.op, 'revealed', JSON.stringify(rv));
  await settle(redis, [v], 'the list after the reveal');
  assert.deepEqual(v.rows.map((r) => [r.rank, r.member]), [[2, 'dan'], [4, 'bob']]);
});

test('member lists on a periodic board, with since, and shared places over REST', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const a1 = await set(c, 'daily', 'ann', 5);
  await set(c, 'daily', 'bob', 9);
  const snap = await c.request({ op: 'subscribe', board: 'daily', view: { members: ['ann', 'zoe'] }, period: 'current', since: { seq: a1.seq } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.ok(snap.period, JSON.stringify(snap));
  assert.deepEqual(snap.rows.map((r) => [r.rank, r.member, r.score]), [[2, 'ann', 5]]);
  assert.deepEqual(snap.absent, ['zoe']);
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/daily?members=ann,bob&places=shared&period=${snap.period}`);
  assert.equal(rest.status, 200, rest.text);
  assert.deepEqual(rest.body.rows.map((r) => [r.rank, r.member, r.place]), [[1, 'bob', 1], [2, 'ann', 2]]);
});

test('a member list of team ids on a team board, and of a hot board', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  for (const [m, team] of [['ann', 'red'], ['bob', 'blue']]) {
    const r = await c.request({ op: 'team', board: 'players', member: m, team });
    assert.equal(r.op, 'teamed', JSON.stringify(r));
  }
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 10 });
  await c.request({ op: 'incr', board: 'players', member: 'bob', delta: 20 });
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl), 'squads', ['red', 'green']);
  const snap = await v.start();
  assert.deepEqual(snap.rows.map((r) => [r.rank, r.member, r.score]), [[2, 'red', 10]]);
  assert.deepEqual(snap.absent, ['green']);
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 15 }); // red passes blue
  await h.waitFor(() => v.rows.length === 1 && v.rows[0].rank === 1 && v.rows[0].score === 25, 10000, 'red first');
  // a hot (decaying) board answers lists too
  const w = await c.request({ op: 'incr', board: 'hot', member: 'ann', delta: 5 });
  assert.equal(w.op, 'ack', JSON.stringify(w));
  let hot;
  await h.waitFor(async () => { // (its set is rebuilt from the buckets every 5 s)
    hot = await h.http(gw.base, 'GET', '/api/v1/boards/hot?members=ann,bob');
    assert.equal(hot.status, 200, hot.text);
    return hot.body.rows.length === 1;
  }, 20000, 'the hot board rebuilt');
  assert.deepEqual(hot.body.rows.map((r) => [r.rank, r.member]), [[1, 'ann']]);
  assert.deepEqual(hot.body.absent, ['bob']);
});

test('rows of a board with teams carry the member\'s team, kept as members join and leave teams', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const team = async (member, id) => {
    const r = await c.request({ op: 'team', board: 'players', member, team: id });
    assert.equal(r.op, 'teamed', JSON.stringify(r));
  };
  await team('ann', 'red');
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 10 });
  await c.request({ op: 'incr', board: 'players', member: 'bob', delta: 5 });
  const teams = (rows) => rows.map((r) => `${r.rank}:${r.member}:${r.team || '-'}`).join(' ');
  const top = await h.connectWs(t, gw.wsUrl);
  const snap = await top.request({ op: 'subscribe', board: 'players', view: { top: 5 } });
  assert.equal(teams(snap.rows), '1:ann:red 2:bob:-', JSON.stringify(snap));
  let rows = snap.rows;
  const deltas = [];
  top.ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.sub !== snap.sub || m.op !== 'delta') return;
    deltas.push(m);
    const by = new Map(rows.map((r) => [r.member, r]));
    for (const r of m.rows) by.set(r.member, r);
    rows = [...by.values()].sort((a, b) => a.rank - b.rank);
  });
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl), 'players', ['bob']);
  const ls = await v.start();
  assert.equal(teams(ls.rows), '2:bob:-');
  await team('bob', 'blue');
  await h.waitFor(() => teams(rows) === '1:ann:red 2:bob:blue' && teams(v.rows) === '2:bob:blue', 10000, 'bob in blue');
  await team('ann', null);
  await h.waitFor(() => teams(rows) === '1:ann:- 2:bob:blue', 10000, 'ann without a team');
  // a new viewer sees the teams as they are
  const late = await (await h.connectWs(t, gw.wsUrl)).request({ op: 'subscribe', board: 'players', view: { around: 'bob', radius: 1 } });
  assert.equal(teams(late.rows), '1:ann:- 2:bob:blue', JSON.stringify(late));
  // REST reads too
  const rest = await h.http(gw.base, 'GET', '/api/v1/boards/players?top=5');
  assert.equal(rest.status, 200, rest.text);
  assert.equal(teams(rest.body.rows), '1:ann:- 2:bob:blue', rest.text);
});

test('a roster view {"team": T} lists the team\'s members live, as they score, join and leave', { timeout: 60000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const team = async (member, id) => {
    const r = await c.request({ op: 'team', board: 'players', member, team: id });
    assert.equal(r.op, 'teamed', JSON.stringify(r));
  };
  await team('ann', 'red');
  await team('bob', 'red');
  await team('cat', 'blue');
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 10 });
  await c.request({ op: 'incr', board: 'players', member: 'cat', delta: 30 });
  await c.request({ op: 'incr', board: 'players', member: 'dan', delta: 20 });
  const conn = await h.connectWs(t, gw.wsUrl);
  const snap = await conn.request({ op: 'subscribe', board: 'players', view: { team: 'red' } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.equal(snap.total, 2);
  assert.deepEqual(snap.rows.map((r) => [r.rank, r.member, r.team]), [[3, 'ann', 'red']]);
  assert.deepEqual(snap.absent, ['bob']);
  const v = new ListViewer(conn, 'players', ['ann', 'bob']);
  v.sub = snap.sub;
  v.take(snap);
  conn.ws.on('message', (d) => v.onMessage(JSON.parse(String(d))));
  const view = () => `${v.rows.map((r) => `${r.rank}:${r.member}`).join(' ')} | ${v.absent.join(' ')}`;
  // a member scores: a delta (dan and cat shifted are not on the team)
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 15 });
  await h.waitFor(() => view() === '2:ann | bob', 10000, 'ann second');
  // bob scores (arrives on the board), dan joins red: a fresh snapshot with the new list
  await c.request({ op: 'incr', board: 'players', member: 'bob', delta: 1 });
  await h.waitFor(() => view() === '2:ann 4:bob | ', 10000, 'bob on the board');
  v.members = ['ann', 'bob', 'dan'];
  await team('dan', 'red');
  await h.waitFor(() => view() === '2:ann 3:dan 4:bob | ', 10000, 'dan on the roster');
  // ann leaves the team
  v.members = ['bob', 'dan'];
  await team('ann', null);
  await h.waitFor(() => view() === '3:dan 4:bob | ', 10000, 'ann off the roster');
  // a board without teams refuses rosters
  const r = await c.request({ op: 'subscribe', board: 'demo', view: { team: 'red' } });
  assert.equal(r.code, 'bad_request', JSON.stringify(r));
  void redis;
});

test('member lists, team rows and rosters on the 3+3 cluster', { timeout: 240000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds });
  const c = await h.connectWs(t, gw.wsUrl);
  const board = 'match:2610';
  const all = Array.from({ length: 30 }, (_, i) => `k:${i}`);
  for (const m of all.slice(0, 20)) await set(c, board, m, rnd(50));
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl), board, all.filter((_, i) => i % 3 === 0));
  await v.start();
  const reqs = [];
  for (let k = 0; k < 300; k++) reqs.push(c.request({ op: 'incr', board, member: all[rnd(all.length)], delta: rnd(11) - 5 }, 20000));
  await Promise.all(reqs);
  let last = '';
  await h.waitFor(async () => {
    last = '';
    for (const m of v.members) {
      const rk = await c.request({ op: 'rank', board, member: m });
      const row = v.rows.find((r) => r.member === m);
      if (rk.rank === null ? (row || !v.absent.includes(m)) : (!row || row.rank !== rk.rank || row.score !== rk.score))
        last += ` ${m}: rank ${JSON.stringify(rk)} row ${JSON.stringify(row)};`;
    }
    return last === '';
  }, 20000, 'the list equals rank on the cluster').catch((e) => { throw new Error(e.message + last); });
  // team rows and a roster on the cluster
  for (const [m, id] of [['ann', 'red'], ['bob', 'red']]) {
    const r = await c.request({ op: 'team', board: 'players', member: m, team: id });
    assert.equal(r.op, 'teamed', JSON.stringify(r));
  }
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 7 });
  const roster = await (await h.connectWs(t, gw.wsUrl)).request({ op: 'subscribe', board: 'players', view: { team: 'red' } }, 15000);
  assert.equal(roster.op, 'snapshot', JSON.stringify(roster));
  assert.deepEqual(roster.rows.map((r) => [r.member, r.team]), [['ann', 'red']]);
  assert.deepEqual(roster.absent, ['bob']);
  assert.equal(roster.total, 2);
});

test('a roster of a team over 200 members shows its best 200 by rank', { timeout: 120000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const names = Array.from({ length: 210 }, (_, i) => `big:${i}`);
  // (in chunks of 50: max_pending)
  const chunks = async (reqs, op) => {
    for (let i = 0; i < reqs.length; i += 50) {
      const got = await Promise.all(reqs.slice(i, i + 50).map((r) => c.request(r, 20000)));
      for (const g of got) assert.equal(g.op, op, JSON.stringify(g));
    }
  };
  await chunks(names.map((m) => ({ op: 'team', board: 'players', member: m, team: 'big' })), 'teamed');
  // 205 on the board with points 1..205 (big:0 the least), 5 without points
  await chunks(names.slice(0, 205).map((m, i) => ({ op: 'incr', board: 'players', member: m, delta: i + 1 })), 'ack');
  const conn = await h.connectWs(t, gw.wsUrl);
  const snap = await conn.request({ op: 'subscribe', board: 'players', view: { team: 'big' } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap).slice(0, 300));
  assert.equal(snap.total, 210);
  assert.equal(snap.rows.length, 200);
  assert.deepEqual(snap.absent, []);
  assert.equal(snap.rows[0].member, 'big:204');
  assert.equal(snap.rows[199].member, 'big:5');
  // big:0 (below the best 200) passes everyone: the viewers get the new best 200
  let rows = snap.rows;
  conn.ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.sub !== snap.sub) return;
    if (m.op === 'snapshot') rows = m.rows;
    else if (m.op === 'delta') {
      const by = new Map(rows.map((r) => [r.member, r]));
      for (const x of m.removed) by.delete(x);
      for (const r of m.rows) by.set(r.member, r);
      rows = [...by.values()].sort((a, b) => a.rank - b.rank);
    }
  });
  await c.request({ op: 'incr', board: 'players', member: 'big:0', delta: 1000 });
  await h.waitFor(() => rows.length === 200 && rows[0].member === 'big:0' && rows[199].member === 'big:6', 10000, 'big:0 first, big:5 out');
});

test('REST reads a roster with ?team=', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  for (const [m, id] of [['ann', 'red'], ['bob', 'red'], ['cat', 'blue']]) {
    const r = await c.request({ op: 'team', board: 'players', member: m, team: id });
    assert.equal(r.op, 'teamed', JSON.stringify(r));
  }
  await c.request({ op: 'incr', board: 'players', member: 'cat', delta: 9 });
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 4 });
  let r = await h.http(gw.base, 'GET', '/api/v1/boards/players?team=red');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.total, 2, r.text);
  assert.deepEqual(r.body.rows.map((x) => [x.rank, x.member, x.team]), [[2, 'ann', 'red']]);
  assert.deepEqual(r.body.absent, ['bob']);
  r = await h.http(gw.base, 'GET', '/api/v1/boards/players?team=green');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.total, 0);
  assert.deepEqual(r.body.rows, []);
  assert.deepEqual(r.body.absent, []);
  r = await h.http(gw.base, 'GET', '/api/v1/boards/demo?team=red');
  assert.equal(r.status, 400, r.text);
  r = await h.http(gw.base, 'GET', '/api/v1/boards/players?team=bad%20id');
  assert.equal(r.status, 400, r.text);
});

test('a one-shot get of a roster answers the roster, as REST ?team= does, also at a moment', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  for (const [m, id] of [['ann', 'red'], ['bob', 'red'], ['cat', 'blue']]) {
    const r = await c.request({ op: 'team', board: 'players', member: m, team: id });
    assert.equal(r.op, 'teamed', JSON.stringify(r));
  }
  await c.request({ op: 'incr', board: 'players', member: 'cat', delta: 9 });
  await c.request({ op: 'incr', board: 'players', member: 'ann', delta: 4 });
  const g = await c.request({ op: 'get', board: 'players', view: { team: 'red' } });
  assert.equal(g.op, 'snapshot', JSON.stringify(g));
  assert.equal(g.total, 2, JSON.stringify(g));
  assert.deepEqual(g.rows.map((x) => [x.rank, x.member, x.team]), [[2, 'ann', 'red']], JSON.stringify(g));
  assert.deepEqual(g.absent, ['bob'], JSON.stringify(g));
  const rest = await h.http(gw.base, 'GET', '/api/v1/boards/players?team=red');
  assert.deepEqual(Object.assign({}, g, { id: undefined }), Object.assign({ id: undefined }, rest.body));
  const bad = await c.request({ op: 'get', board: 'demo', view: { team: 'red' } });
  assert.equal(bad.code, 'bad_request', JSON.stringify(bad));
  // at a moment (docs/history.md, "Rosters at a moment"): seq 1 is cat's
  // write, before ann's; the present time shows ann on the board
  for (const [at, rows, absent] of [[{ seq: 1 }, [], ['ann', 'bob']], [{ time: Date.now() }, [[2, 'ann', 'red']], ['bob']]]) {
    const e = await c.request({ op: 'get', board: 'players', view: { team: 'red' }, at });
    assert.equal(e.op, 'snapshot', JSON.stringify(e));
    assert.deepEqual([e.total, e.rows.map((x) => [x.rank, x.member, x.team]), e.absent], [2, rows, absent], JSON.stringify(e));
    const q = at.seq !== undefined ? `at_seq=${at.seq}` : `at=${at.time}`;
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/players?team=red&${q}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.total, r.body.absent], [2, absent], r.text);
  }
});

test('a member list of a multi-field board carries each row\'s fields, moved by others\' submits', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  const submit = async (member, clears) => {
    const r = await c.request({ op: 'submit', board: 'clears', member, fields: { clears, revives: 0, first_clear_ms: 500 } });
    assert.equal(r.op, 'ack', JSON.stringify(r));
  };
  await submit('ann', 5);
  await submit('bob', 3);
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl), 'clears', ['bob']);
  const snap = await v.start();
  assert.deepEqual(snap.rows.map((r) => [r.rank, r.member, r.fields && r.fields.clears]), [[2, 'bob', 3]]);
  await submit('cat', 9); // passes bob
  await h.waitFor(() => v.rows.length === 1 && v.rows[0].rank === 3, 10000, 'bob third');
  assert.equal(v.rows[0].fields.clears, 3);
  await submit('bob', 10); // bob's own, best of old and new
  await h.waitFor(() => v.rows[0].rank === 1 && v.rows[0].fields.clears === 10, 10000, 'bob first with 10');
  assert.equal(v.rows[0].fields.first_clear_ms, 500);
});

test('a member list of an ascending board (laps: lowest first), with shared places', { timeout: 60000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  for (const [m, ms] of [['ann', 61000], ['bob', 59000], ['cat', 61000]]) {
    const r = await c.request({ op: 'best', board: 'laps', member: m, value: ms });
    assert.equal(r.op, 'ack', JSON.stringify(r));
  }
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl), 'laps', ['cat', 'ann'], { places: 'shared' });
  const snap = await v.start();
  assert.deepEqual(snap.rows.map((r) => [r.member, r.score, r.place, r.tied]).sort(), [['ann', 61000, 2, true], ['cat', 61000, 2, true]]);
  await c.request({ op: 'best', board: 'laps', member: 'dan', value: 58000 }); // a faster lap pushes both down
  await h.waitFor(() => v.rows.length === 2 && v.rows.every((r) => r.place === 3), 10000, 'both at place 3');
  assert.deepEqual(v.rows.map((r) => r.rank), [3, 4]);
});
