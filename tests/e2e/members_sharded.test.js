/* members_sharded.test.js - member-list views (PROTOCOL v1.2 "Member
 * lists") on sharded boards (docs/sharded.md, "Member lists"): ranks are
 * global, in the merged order (composite, then the lower shard, then Redis's
 * order inside a shard). Compared with the truth merged straight from every
 * shard's sorted set after thousands of concurrent writes with listed
 * members crossing each other, on one Redis and on the 3+3 cluster, on an
 * ascending board with shared places and on a periodic board; and a counter
 * that shows the lists follow every move (listed members' own included)
 * from the ranked change events without reading Redis, while what the
 * events cannot tell (a ZADD outside the scripts, a listed member's leave
 * and return, a reset) reads and stays exact. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const SHARDS = 4;
const TB = 2 ** 29; // 1 s tie-break slots over 3650 d (docs/score-layout.md)
const rnd = (n) => Math.floor(Math.random() * n);

const BOARD_SPEC = {
  'board msh': {
    order: 'desc', ops: 'incr, set, best', tiebreak: 'earliest', tiebreak_resolution: '1s',
    tiebreak_horizon: '3650d', tiebreak_base: '2026-01-01T00:00:00Z', shards: SHARDS, log_cap: 4000,
  },
  'board lsh': { // ascending (lap times: lowest first)
    order: 'asc', ops: 'incr, set, best', tiebreak: 'earliest', tiebreak_resolution: '1s',
    tiebreak_horizon: '3650d', tiebreak_base: '2026-01-01T00:00:00Z', shards: SHARDS, log_cap: 4000,
  },
};
const ASC = new Set(['lsh']);

/* member -> {rank, score, place, tied} over every shard, in the merged order. */
async function truth(cli, board) {
  const all = [];
  for (let s = 0; s < SHARDS; s++) {
    const key = `rc:{${board}#${s}|}:z`;
    const text = await cli(key, 'ZRANGE', key, '0', '-1', 'WITHSCORES');
    const f = text ? text.split('\n').filter((x) => x !== '') : [];
    for (let k = 0; k + 1 < f.length; k += 2) all.push({ member: f[k], c: Number(f[k + 1]), shard: s });
  }
  // desc: composite high first, the lower shard, then ZRANGE REV's order (the greater member first); asc mirrors
  const asc = ASC.has(board) ? -1 : 1;
  all.sort((a, b) => asc * (b.c - a.c) || (a.shard - b.shard) || asc * (a.member < b.member ? 1 : a.member > b.member ? -1 : 0));
  const count = new Map();
  for (const r of all) { r.key = Math.floor(r.c / TB); count.set(r.key, (count.get(r.key) || 0) + 1); }
  const by = new Map();
  let place = 0;
  all.forEach((r, i) => {
    if (i === 0 || all[i - 1].key !== r.key) place = i + 1;
    by.set(r.member, { rank: i + 1, score: r.key, place, tied: count.get(r.key) > 1 });
  });
  return by;
}

class ListViewer {
  constructor(conn, board, members, extra = {}) {
    Object.assign(this, { conn, board, members, extra, rows: [], absent: [], sub: null, broken: null, deltas: 0, snaps: 0 });
  }

  async start() {
    const snap = await this.conn.request(Object.assign({ op: 'subscribe', board: this.board, view: { members: this.members } }, this.extra), 15000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    this.sub = snap.sub;
    this.take(snap);
    this.conn.ws.on('message', (data) => this.onMessage(JSON.parse(String(data))));
  }

  take(snap) {
    this.snaps++;
    this.rows = snap.rows;
    this.absent = snap.absent;
    if (!Array.isArray(this.absent)) this.broken = `snapshot without absent: ${JSON.stringify(snap)}`;
  }

  onMessage(m) {
    if (m.sub !== this.sub) return;
    if (m.op === 'snapshot') { this.take(m); return; }
    if (m.op !== 'delta') return;
    this.deltas++;
    const rows = new Map(this.rows.map((r) => [r.member, r]));
    const absent = new Set(this.absent);
    for (const x of m.removed || []) { rows.delete(x); absent.add(x); }
    for (const r of m.rows) {
      if (!this.members.includes(r.member)) this.broken = `delta row of an unlisted member: ${JSON.stringify(r)}`;
      if (!('prev_rank' in r)) this.broken = `delta row without prev_rank: ${JSON.stringify(r)}`;
      const was = rows.get(r.member);
      if (r.prev_rank !== (was ? was.rank : null)) this.broken = `prev_rank ${r.prev_rank}, the viewer held ${was ? was.rank : null}: ${JSON.stringify(r)}`;
      rows.set(r.member, r);
      absent.delete(r.member);
    }
    this.rows = [...rows.values()].sort((a, b) => a.rank - b.rank);
    this.absent = this.members.filter((x) => absent.has(x));
  }
}

const shape = (rows, places) => rows.map((r) => `${r.rank}:${r.member}=${r.score}${places ? `@${r.place}${r.tied ? 't' : ''}` : ''}`).join(' ');

async function settle(cli, viewers, what) {
  let last = '';
  try {
    await h.waitFor(async () => {
      const by = await truth(cli, viewers[0].board);
      last = '';
      for (const v of viewers) {
        assert.equal(v.broken, null);
        const places = !!v.extra.places;
        const want = shape(v.members.filter((m) => by.has(m)).map((m) => Object.assign({ member: m }, by.get(m)))
          .sort((a, b) => a.rank - b.rank), places);
        const wantAbsent = v.members.filter((m) => !by.has(m)).join(' ');
        const got = shape(v.rows, places);
        if (want !== got || wantAbsent !== v.absent.join(' '))
          last += `\n${v.members.join(',')}\n  want ${want} | ${wantAbsent}\n  got  ${got} | ${v.absent.join(' ')}`;
      }
      return last === '';
    }, 30000, what);
  } catch (e) {
    throw new Error(`${e.message}${last}`);
  }
}

async function metric(gw, re) {
  const m = await h.http(gw.base, 'GET', '/metrics', null, { headers: { Authorization: 'Bearer ' + h.ADMIN_KEY } });
  const x = re.exec(m.text);
  return x ? Number(x[1]) : 0;
}
const LIST_READS = /^rankcast_view_reads_total\{view="members"\} (\d+)$/m;

async function set(c, board, member, value) {
  const r = await c.request({ op: 'set', board, member, value }, 10000);
  assert.equal(r.op, 'ack', JSON.stringify(r));
}

/* Lists exact after `rounds` x 3 writers x 40 concurrent writes, many of
 * them by listed members crossing each other. */
async function crossing(t, gw, cli, board, rounds) {
  const c = await h.connectWs(t, gw.wsUrl);
  const all = Array.from({ length: 80 }, (_, i) => `p:${i}`);
  for (const m of all.slice(0, 50)) await set(c, board, m, rnd(60));
  const viewers = [];
  for (let i = 0; i < 6; i++) {
    const members = all.filter(() => Math.random() < 0.25).slice(0, 20);
    if (!members.length) members.push(all[i]);
    members.push('nobody:' + i); // never written: always absent
    const extra = i === 1 ? { max_rate: 3 } : i === 2 ? { places: 'shared' } : {};
    const v = new ListViewer(await h.connectWs(t, gw.wsUrl), board, members, extra);
    await v.start();
    viewers.push(v);
  }
  await settle(cli, viewers, 'lists exact before writes');
  const writers = await Promise.all([0, 1, 2].map(() => h.connectWs(t, gw.wsUrl)));
  for (let round = 0; round < rounds; round++) {
    await Promise.all(writers.map((w) => {
      const reqs = [];
      for (let k = 0; k < 40; k++) {
        const m = all[rnd(all.length)];
        reqs.push(rnd(4) === 0 ? { op: 'set', board, member: m, value: rnd(70) }
          : { op: 'incr', board, member: m, delta: rnd(11) - 5 });
      }
      return Promise.all(reqs.map((r) => w.request(r, 30000)));
    }));
  }
  await settle(cli, viewers, `lists exact after ${rounds * 120} writes`);
  for (const v of viewers) {
    for (const r of v.rows) {
      const rk = await c.request({ op: 'rank', board, member: r.member });
      assert.equal(rk.rank, r.rank, JSON.stringify([rk, r]));
    }
  }
  assert.ok(viewers[0].deltas > 0, 'the lists got deltas');
  // REST ?members= answers the same rows
  const v = viewers[0];
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?members=${encodeURIComponent(v.members.join(','))}`);
  assert.equal(rest.status, 200, rest.text);
  const body = JSON.parse(rest.text);
  assert.equal(shape(body.rows), shape(v.rows));
  assert.deepEqual(body.absent, v.absent);
}

test('member lists on a sharded board: global ranks, snapshot, absent, REST', { skip, timeout: 60000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, BOARD_SPEC) });
  const c = await h.connectWs(t, gw.wsUrl);
  const board = 'msh';
  const names = ['ann', 'bob', 'cat', 'dan', 'eve', 'fay', 'gus', 'hal'];
  for (let i = 0; i < names.length; i++) await set(c, board, names[i], 10 * (i + 1));
  await set(c, board, 'tie', 40); // ties dan's points: the merged order decides
  const snap = await c.request({ op: 'subscribe', board, view: { members: ['ann', 'zed', 'hal', 'dan', 'tie'] } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.equal(snap.total, 9);
  const by = await truth((_k, ...a) => redis.cli(...a), board);
  assert.deepEqual(snap.rows.map((r) => [r.rank, r.member, r.score]),
    ['hal', 'dan', 'tie', 'ann'].map((m) => [by.get(m).rank, m, by.get(m).score]).sort((a, b) => a[0] - b[0]));
  assert.deepEqual(snap.absent, ['zed']);
  const pl = await c.request({ op: 'subscribe', board, view: { members: ['dan', 'tie', 'ann'] }, places: 'shared' });
  assert.equal(pl.op, 'snapshot', JSON.stringify(pl));
  assert.deepEqual(pl.rows.map((r) => [r.member, r.place, !!r.tied]).sort(),
    [['ann', 9, false], ['dan', 5, true], ['tie', 5, true]]);
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?members=bob,zed`);
  assert.equal(rest.status, 200, rest.text);
  const body = JSON.parse(rest.text);
  assert.deepEqual(body.rows.map((r) => [r.rank, r.member]), [[by.get('bob').rank, 'bob']]);
  assert.deepEqual(body.absent, ['zed']);
  // at a moment by time (store/gw_read_at_list, docs/history.md): the same
  // ranks, since nothing was written since; so does a replay from then,
  // which goes live at once (replay_sharded.test.js replays one in full)
  const at = await c.request({ op: 'get', board, view: { members: ['ann', 'zed'] }, at: { time: Date.now() } });
  assert.equal(at.op, 'snapshot', JSON.stringify(at));
  assert.deepEqual(at.rows.map((r) => [r.rank, r.member]), [[by.get('ann').rank, 'ann']]);
  assert.deepEqual(at.absent, ['zed']);
  const now = await c.request({ op: 'get', board, view: { members: ['ann', 'zed'] } });
  assert.equal(now.op, 'snapshot', JSON.stringify(now));
  assert.deepEqual(now.rows.map((r) => [r.rank, r.member]), [[by.get('ann').rank, 'ann']]);
  const rp = await c.request({ op: 'subscribe', board, view: { members: ['ann', 'zed'] }, replay: { from: { time: Date.now() } } });
  assert.equal(rp.op, 'snapshot', JSON.stringify(rp));
  assert.equal(rp.replay, true, JSON.stringify(rp));
  assert.deepEqual(rp.rows.map((r) => [r.rank, r.member]), [[by.get('ann').rank, 'ann']]);
  assert.deepEqual(rp.absent, ['zed']);
  const live = await c.next((m) => m.op === 'live' && m.sub === rp.sub, 15000);
  assert.equal(live.seq, rp.at_seq, JSON.stringify(live));
});

test('member lists on a sharded board stay exact while listed members cross each other (one Redis)', { skip, timeout: 240000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, BOARD_SPEC) });
  await crossing(t, gw, (_k, ...a) => redis.cli(...a), 'msh', 25);
});

test('member lists on a sharded board follow moves from the change events, without reading Redis', { skip, timeout: 120000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, BOARD_SPEC) });
  const cli = (_k, ...a) => redis.cli(...a);
  const board = 'msh';
  const c = await h.connectWs(t, gw.wsUrl);
  const all = Array.from({ length: 60 }, (_, i) => `q:${i}`);
  for (const m of all) await set(c, board, m, rnd(100));
  const listed = all.slice(0, 20);
  const others = all.slice(20);
  const viewers = [];
  for (let i = 0; i < 4; i++) {
    const v = new ListViewer(await h.connectWs(t, gw.wsUrl), board, listed.filter((_, k) => k % 4 === i));
    await v.start();
    viewers.push(v);
  }
  await settle(cli, viewers, 'lists exact before writes');
  const reads0 = await metric(gw, LIST_READS);
  // 1,600 moves on every shard, listed members' own among them (crossing
  // each other), and joins of unlisted members: the ranked events say every
  // listed rank
  const writers = await Promise.all([0, 1].map(() => h.connectWs(t, gw.wsUrl)));
  for (let round = 0; round < 20; round++) {
    await Promise.all(writers.map((w) => Promise.all(Array.from({ length: 40 }, () =>
      w.request({ op: 'incr', board, member: all[rnd(all.length)], delta: rnd(31) - 15 }, 20000)))));
  }
  for (let k = 0; k < 10; k++) await set(c, board, `new:${k}`, rnd(100));
  await settle(cli, viewers, 'lists exact after 1,600 moves');
  const reads = (await metric(gw, LIST_READS)) - reads0;
  t.diagnostic(`member-list reads during 1,610 changes (listed members' own included): ${reads}`);
  assert.ok(reads <= 8, `member-list reads during 1,610 changes (listed members' own included): ${reads}`);
  assert.ok(viewers.every((v) => v.deltas > 0), 'every list got deltas');
  // what the events cannot tell reads: a ZADD made outside the scripts on a shard's set ...
  const key = `rc:{${board}#1|}:z`;
  await redis.cli('ZADD', key, String(1e9 * TB), 'outsider:1');
  await settle(cli, viewers, 'lists exact after a ZADD made outside the scripts');
  // ... a listed member that leaves and comes back (its row needs its profile) ...
  const rm = await c.request({ op: 'remove', board, member: listed[0] }, 20000);
  assert.ok(rm.op !== 'error', JSON.stringify(rm));
  await settle(cli, viewers, 'lists exact after a listed member left');
  await set(c, board, listed[0], 1000);
  await settle(cli, viewers, 'lists exact after a listed member came back');
  // ... and a reset (a new history): every listed member absent, then back
  const r = await c.request({ op: 'reset', board }, 20000);
  assert.ok(r.op !== 'error', JSON.stringify(r));
  await settle(cli, viewers, 'lists exact after a reset');
  assert.ok(viewers.every((v) => v.rows.length === 0));
  for (const m of listed.slice(0, 6)) await set(c, board, m, rnd(100));
  for (const m of others.slice(0, 10)) await set(c, board, m, rnd(100));
  await settle(cli, viewers, 'lists exact after writes following the reset');
});

test('member lists on an ascending sharded board, with shared places', { skip, timeout: 180000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, BOARD_SPEC) });
  await crossing(t, gw, (_k, ...a) => redis.cli(...a), 'lsh', 10);
});

test('member lists on a periodic sharded board (the current day) equal what rank answers', { skip, timeout: 120000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, { 'board daily': { shards: SHARDS } }) });
  const c = await h.connectWs(t, gw.wsUrl);
  const all = Array.from({ length: 40 }, (_, i) => `d:${i}`);
  for (const m of all.slice(0, 30)) await c.request({ op: 'incr', board: 'daily', member: m, delta: 1 + rnd(20) });
  const v = new ListViewer(await h.connectWs(t, gw.wsUrl), 'daily', all.filter((_, i) => i % 3 === 0));
  await v.start();
  await Promise.all(Array.from({ length: 400 }, () =>
    c.request({ op: 'incr', board: 'daily', member: all[rnd(all.length)], delta: rnd(11) - 3 }, 20000)));
  let last = '';
  await h.waitFor(async () => {
    last = '';
    for (const m of v.members) {
      const rk = await c.request({ op: 'rank', board: 'daily', member: m });
      const row = v.rows.find((r) => r.member === m);
      if (rk.rank === null ? (row || !v.absent.includes(m)) : (!row || row.rank !== rk.rank || row.score !== rk.score))
        last += ` ${m}: rank ${JSON.stringify(rk)} row ${JSON.stringify(row)};`;
    }
    return last === '' && v.broken === null;
  }, 30000, 'the list equals rank on the periodic sharded board').catch((e) => { throw new Error(e.message + last + (v.broken || '')); });
  assert.ok(v.deltas > 0);
});

test('member lists on a sharded board on the 3+3 cluster', { skip, timeout: 300000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config: h.configWith(t, BOARD_SPEC) });
  const cli = async (key, ...args) => cluster.cli(await cluster.owner(key), ...args);
  await crossing(t, gw, cli, 'msh', 15);
});

const EVENT_VISITS = /^rankcast_views_visited_total\{on="event"\} (\d+)$/m;

/* Issue 26 ("cost that does not grow with the audience") and 23 (a change
 * visits only the views it reaches): a sharded board's followed lists sit
 * in the board's read index by their entries' composites (gw_reads.c,
 * core/rc_vtrack_shard.h), so a move visits only the lists whose span of
 * composites it crosses; a join or leave (total) still walks every list. */
test('a move on a sharded board visits only the member lists whose span it reaches', { skip, timeout: 120000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, BOARD_SPEC) });
  const cli = (_k, ...a) => redis.cli(...a);
  const board = 'msh';
  const c = await h.connectWs(t, gw.wsUrl);
  // list i shows b<i>:0..2 at 1000 (i + 1) + 0, 3, 6: bands far apart
  const N = 40;
  const band = (i, k) => 1000 * (i + 1) + 3 * k;
  for (let i = 0; i < N; i++) for (let k = 0; k < 3; k++) await set(c, board, `b${i}:${k}`, band(i, k));
  const conn = await h.connectWs(t, gw.wsUrl);
  conn.ws.setMaxListeners(N + 10); // (every list listens on one connection)
  const viewers = [];
  for (let i = 0; i < N; i++) {
    const v = new ListViewer(conn, board, [0, 1, 2].map((k) => `b${i}:${k}`));
    await v.start();
    viewers.push(v);
  }
  // unlisted members below every band, on every shard (their joins walk
  // every list, and set where the index stands on each shard)
  const w = Array.from({ length: 40 }, (_, k) => `w:${k}`);
  for (const m of w) await set(c, board, m, 500);
  for (let s = 0; s < SHARDS; s++) {
    let n = 0;
    for (const m of w) if ((await redis.cli('ZSCORE', `rc:{${board}#${s}|}:z`, m)) !== '') n++;
    assert.ok(n > 0, `shard ${s} holds no w: member`);
  }
  await settle(cli, viewers, 'lists exact after the joins');
  const moveAndCount = async (member, value, reached, what) => {
    const before = await metric(gw, EVENT_VISITS);
    const ack = await c.request({ op: 'set', board, member, value }, 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    await settle(cli, viewers, what);
    let got = 0;
    // (counted once the event was ranked and delivered: the lists it moved show it)
    await h.waitFor(async () => (got = (await metric(gw, EVENT_VISITS)) - before) >= reached, 10000, what).catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    got = (await metric(gw, EVENT_VISITS)) - before;
    t.diagnostic(`${what}: ${got} lists visited of ${N}, ${reached} reached`);
    assert.equal(got, reached, `${what}: lists visited`);
  };
  // 500 -> 520: below every band, reaches none
  await moveAndCount('w:0', 520, 0, 'a move below every list');
  // 500 -> 3500: crosses the bands of lists 0, 1, 2
  await moveAndCount('w:1', 3500, 3, 'a move across three lists');
  // a listed member's own move inside its band (past b5:1): its list only
  await moveAndCount('b5:0', band(5, 1) + 1, 1, "a listed member's own move");
  // a join changes every list's total: every list
  await moveAndCount('newcomer', 100, N, 'a join');
  assert.ok(viewers.slice(0, 3).every((v) => v.deltas > 0));
});
