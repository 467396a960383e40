/* archive_lists.test.js - member lists ({"members": [...]}, PROTOCOL v1.2)
 * of a past period, on subscribe, get and REST:
 * - while the period's keys live, a list of the closed period shows its
 *   final standings (writes to the new period do not touch it), the ranks
 *   Redis holds for it; a list of `previous` moves to it when it closes,
 *   one of `current` to the new period;
 * - once its keys are gone from Redis (expired; here deleted, as expiry
 *   would), the list is answered from the SQLite archive with the ranks,
 *   scores, places and absent members it had when the period closed (before
 *   this, every member showed as absent).
 * docs/periods.md, "Reading periods". */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const { sqliteMissing } = require('./sqlite_tool');
// `|| false`: node 20 reports a test with skip: null as skipped, though it runs.
const skip = h.toolMissing(h.gatewayMissing() || sqliteMissing()) || false;

const DAY = '2026-11-22';

async function setClock(gw, iso) {
  const c = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse(iso) });
  assert.equal(c.status, 200, c.text);
}

// The lists read: REST query strings, and the same lists subscribed over WebSocket.
const LISTS = [
  { members: ['user:c', 'user:zz', 'user:a', 'user:e'] },
  { members: ['user:c', 'user:zz', 'user:a', 'user:e'], places: true },
  { members: ['user:d', 'user:f', 'user:yy', 'user:b'], places: true },
  { members: ['user:zz'] },
];
// Windows with shared places: a page that starts inside a tie, and around a tied member.
const WINDOWS = ['?top=10&places=shared', '?offset=2&limit=2&places=shared', '?around=user:f&radius=0&places=shared'];
const restQuery = (l) => `/api/v1/boards/daily?members=${l.members.map(encodeURIComponent).join(',')}`
  + `${l.places ? '&places=shared' : ''}&period=${DAY}`;

async function readAll(t, gw) {
  const rest = [];
  const ws = [];
  const gets = [];
  const c = await h.connectWs(t, gw.wsUrl); // (a fresh connection: its views are read now)
  for (const l of LISTS) {
    const r = await h.http(gw.base, 'GET', restQuery(l));
    assert.equal(r.status, 200, r.text);
    const { epoch, ...body } = r.body; // (the epoch goes with the period's history in Redis)
    rest.push(body);
    const s = await c.request({ op: 'subscribe', board: 'daily', period: DAY, view: { members: l.members },
      ...(l.places ? { places: 'shared' } : {}) }, 10000);
    assert.equal(s.op, 'snapshot', JSON.stringify(s));
    const { id, sub, epoch: e2, ...snap } = s;
    ws.push(snap);
    const g = await c.request({ op: 'get', board: 'daily', period: DAY, view: { members: l.members },
      ...(l.places ? { places: 'shared' } : {}) }, 10000);
    assert.equal(g.op, 'snapshot', JSON.stringify(g));
    const { id: id2, epoch: e3, ...got } = g;
    gets.push(got);
  }
  await c.close();
  const windows = [];
  for (const q of WINDOWS) {
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/daily${q}&period=${DAY}`);
    assert.equal(r.status, 200, r.text);
    const { epoch, ...body } = r.body;
    windows.push(body);
  }
  return { rest, ws, gets, windows };
}

// A message of a view that tells something besides a viewer count.
const news = (m) => m.op !== 'snapshot' && !(m.op === 'delta' && !m.rows.length && !m.removed.length);
const rowsOf = (body) => body.rows.map((r) => [r.rank, r.member, r.score, r.place, !!r.tied]);

test('member lists of a past period: its final ranks while its keys live, and from the archive once they are gone',
  { skip, timeout: 90000 }, async (t) => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-archive-lists-'));
    h.defer(t, () => fs.rmSync(stateDir, { recursive: true, force: true }));
    const config = h.configWith(t, { server: { test_clock: 'on' } });
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
    // 3 s before local midnight at +08:00: the day 2026-11-22 ends in real time.
    await setClock(gw, '2026-11-22T15:59:57.000Z');
    const writes = [['user:e', 70], ['user:b', 50], ['user:c', 50], ['user:a', 30], ['user:f', 30], ['user:d', 10]];
    for (const [member, delta] of writes) {
      const r = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member, op: 'incr', delta });
      assert.equal(r.status, 200, r.text);
    }
    await h.http(gw.base, 'PUT', '/api/v1/members/user:c/profile', { name: 'Cy' });
    // A viewer of the day's list, subscribed while the day is current.
    const live = await h.connectWs(t, gw.wsUrl);
    const liveSnap = await live.request({ op: 'subscribe', board: 'daily', period: DAY,
      view: { members: LISTS[1].members }, places: 'shared' });
    assert.equal(liveSnap.op, 'snapshot', JSON.stringify(liveSnap));

    // Lists that follow the clock: `previous` (the day before, empty, until
    // the day closes) and `current` (the day, then the next one).
    const follow = await h.connectWs(t, gw.wsUrl);
    const prevSnap = await follow.request({ op: 'subscribe', board: 'daily', period: 'previous',
      view: { members: LISTS[2].members }, places: 'shared' });
    assert.deepEqual([prevSnap.period, prevSnap.rows, prevSnap.absent], ['2026-11-21', [], LISTS[2].members]);
    const curSnap = await follow.request({ op: 'subscribe', board: 'daily', view: { members: LISTS[0].members } });
    assert.equal(curSnap.period, DAY, JSON.stringify(curSnap));

    // The ranks Redis gives for the day, before it closes.
    const before = await readAll(t, gw);
    assert.deepEqual(rowsOf(before.rest[1]), [[1, 'user:e', 70, 1, false], [3, 'user:c', 50, 2, true],
      [4, 'user:a', 30, 4, true]]);
    assert.deepEqual(before.rest[1].absent, ['user:zz']);
    assert.equal(before.rest[1].rows[1].name, 'Cy');
    assert.deepEqual(rowsOf(before.rest[2]), [[2, 'user:b', 50, 2, true], [5, 'user:f', 30, 4, true],
      [6, 'user:d', 10, 6, false]]);
    assert.deepEqual(before.rest[2].absent, ['user:yy']);
    assert.deepEqual(rowsOf(before.windows[1]), [[3, 'user:c', 50, 2, true], [4, 'user:a', 30, 4, true]]);
    assert.deepEqual(rowsOf(before.windows[2]), [[5, 'user:f', 30, 4, true]]);
    assert.deepEqual([before.rest[3].rows, before.rest[3].absent], [[], ['user:zz']]);
    for (let i = 0; i < LISTS.length; i++) assert.deepEqual(before.ws[i].rows, before.rest[i].rows, `list ${i}`);
    for (let i = 0; i < LISTS.length; i++) assert.deepEqual(before.gets[i], before.rest[i], `get of list ${i}`);
    const seq = Number(await redis.cli('GET', `rc:{daily|${DAY}}:seq`));
    assert.equal(before.rest[0].seq, seq);

    // The day closes; the next day's writes pass every listed member.
    await setClock(gw, '2026-11-22T16:00:01.000Z');
    for (const [member, delta] of [['user:d', 500], ['user:zz', 400], ['user:a', 300]]) {
      const r = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member, op: 'incr', delta });
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(await redis.cli('ZCARD', 'rc:{daily|2026-11-23}:z'), '3');
    // Keys live: the closed day's lists are its final standings, the ranks
    // Redis holds for the day.
    const closed = await readAll(t, gw);
    for (const m of ['user:a', 'user:b', 'user:c', 'user:d', 'user:e', 'user:f']) {
      const rank = Number(await redis.cli('ZREVRANK', `rc:{daily|${DAY}}:z`, m)) + 1;
      const row = closed.rest.flatMap((b) => b.rows).find((r) => r.member === m);
      if (row) assert.equal(row.rank, rank, m);
    }
    assert.deepEqual(closed.rest, before.rest);
    assert.deepEqual(closed.gets, before.gets);
    assert.deepEqual(closed.windows, before.windows);
    for (let i = 0; i < LISTS.length; i++) assert.deepEqual(closed.ws[i].rows, before.ws[i].rows, `list ${i}`);
    for (let i = 0; i < LISTS.length; i++) assert.deepEqual(closed.ws[i].absent, before.ws[i].absent, `list ${i}`);
    // ... and the day's viewer got no delta from the next day's writes.
    await h.sleep(500);
    assert.deepEqual(live.messages.filter((m) => m.sub === liveSnap.sub && news(m)), []);

    // The `previous` list moved to the closed day: its final standings.
    await h.waitFor(() => follow.messages.some((m) => m.op === 'snapshot' && m.sub === prevSnap.sub && m.period === DAY),
      10000, 'the previous list on the closed day');
    const moved = follow.messages.filter((m) => m.sub === prevSnap.sub && m.op === 'snapshot' && m.period === DAY);
    assert.equal(moved.length, 1);
    assert.deepEqual([moved[0].rows, moved[0].absent], [before.ws[2].rows, before.ws[2].absent]);
    // The `current` list moved to the next day, and by the delta rule shows
    // what Redis holds for that day.
    const next = await h.http(gw.base, 'GET', `/api/v1/boards/daily?members=${LISTS[0].members.join(',')}&period=2026-11-23`);
    assert.equal(next.status, 200, next.text);
    assert.deepEqual(next.body.rows.map((r) => [r.rank, r.member, r.score]), [[2, 'user:zz', 400], [3, 'user:a', 300]]);
    const applied = () => {
      let rows = null;
      for (const m of follow.messages.filter((x) => x.sub === curSnap.sub)) {
        if (m.op === 'snapshot') rows = m.period === '2026-11-23' ? new Map(m.rows.map((r) => [r.member, r])) : null;
        else if (m.op === 'delta' && rows) {
          for (const x of m.removed) rows.delete(x);
          for (const r of m.rows) rows.set(r.member, r);
        }
      }
      return rows && [...rows.values()].sort((x, y) => x.rank - y.rank).map((r) => [r.rank, r.member, r.score]);
    };
    await h.waitFor(() => JSON.stringify(applied()) === JSON.stringify([[2, 'user:zz', 400], [3, 'user:a', 300]]),
      10000, `the current list on the next day: ${JSON.stringify(applied())}`);

    await gw.waitForLine(new RegExp(`archived daily ${DAY}: 6 rows$`), 15000);
    // The day's keys expire (here: deleted, all of them, the archive marker too).
    const keys = (await redis.cli('KEYS', `rc:{daily|${DAY}}:*`)).split('\n').filter((k) => k);
    assert.ok(keys.includes(`rc:{daily|${DAY}}:z`), keys.join(' '));
    await redis.cli('DEL', ...keys);
    assert.equal(await redis.cli('EXISTS', `rc:{daily|${DAY}}:z`), '0');

    // From the archive: the same answers, ranks, places, profiles, seq and total.
    const gone = await readAll(t, gw);
    for (let i = 0; i < LISTS.length; i++) {
      assert.deepEqual(gone.rest[i], before.rest[i], `REST list ${i}`);
      assert.deepEqual(gone.ws[i], before.ws[i], `subscribed list ${i}`);
      assert.deepEqual(gone.gets[i], before.gets[i], `get of list ${i}`);
    }
    for (let i = 0; i < WINDOWS.length; i++) assert.deepEqual(gone.windows[i], before.windows[i], WINDOWS[i]);
    assert.equal(gone.rest[0].seq, seq);
    assert.equal(gone.rest[0].total, 6);
    // Rosters have no past periods: a board with teams has none (docs/periods.md).
    for (const q of ['players?team=red&period=2026-11-22', 'players?team=red&period=previous', 'squads?members=red&period=previous']) {
      const r = await h.http(gw.base, 'GET', `/api/v1/boards/${q}`);
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.message, /^board (players|squads) has no periods: leave period out$/);
    }
    // The day's viewer saw nothing change: no delta, no member removed.
    await h.sleep(1000);
    assert.deepEqual(live.messages.filter((m) => m.sub === liveSnap.sub && news(m)), []);
    assert.deepEqual(follow.messages.filter((m) => m.sub === prevSnap.sub && news(m)), []);
  });
