/* freeze.test.js - freeze and reveal (docs/protocol.md, "Freeze and reveal"),
 * end to end: a real redis-server, the real gateway, real WebSocket clients
 * and REST.
 *
 * The audience (anonymous window and feed views, REST reads, rank) must see
 * the board exactly as of the freeze while writes go on (acked with their
 * true rank); an admin's live view sees everything; reveal steps move the
 * audience by exactly the next N hidden changes, in seq order; "all" catches
 * up and unfreezes. The state lives in Redis: a second gateway on the same
 * Redis and a restarted gateway show the same frozen board. When more
 * changes were hidden than the change log holds, the first reveal step
 * crosses the gap at once ("skipped"), and later steps go one by one. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const BOARD = 'match:7001';

async function write(gw, member, value, board = BOARD) {
  const res = await h.http(gw.base, 'POST', `/api/v1/boards/${encodeURIComponent(board)}/scores`,
    { member, op: 'set', value });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function top(gw, board = BOARD, extra = '', opts = {}) {
  const res = await h.http(gw.base, 'GET', `/api/v1/boards/${encodeURIComponent(board)}?top=10${extra}`,
    undefined, opts);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/* The update of window view `sub` to `seq` (a delta, or a snapshot without
 * id: the gateway sends one when it cannot say where a row came from)
 * applied to rows: { msg, rows }. (Viewer-count deltas in between change no
 * row and keep the seq.) */
async function nextWindow(client, sub, rows, n, seq) {
  const m = await client.next((x) => (x.op === 'delta' || (x.op === 'snapshot' && x.id === undefined)) && x.sub === sub &&
    x.seq === seq, 5000);
  return { msg: m, rows: m.op === 'snapshot' ? m.rows : apply(rows, m, n) };
}

const members = (snap) => snap.rows.map((r) => `${r.member}=${r.score}`);

/* Applies a delta to a window the way docs/protocol.md says (top N). */
function apply(rows, delta, n = 10) {
  const gone = new Set([...(delta.removed || []), ...delta.rows.map((r) => r.member)]);
  const out = rows.filter((r) => !gone.has(r.member));
  for (const r of delta.rows) out.splice(r.rank - 1, 0, r);
  return out.slice(0, n);
}

test('freeze: the audience sees the frozen board while writes go on; live sees everything; reveal steps one change at a time',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 120000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port });
    for (const [m, v] of [['a', 100], ['b', 90], ['c', 80]]) await write(gw, m, v);

    const audience = await h.connectWs(t, gw.wsUrl, { token: null });
    const snap = await audience.request({ op: 'subscribe', board: BOARD, view: { top: 10 } });
    assert.equal(snap.op, 'snapshot');
    assert.equal('frozen' in snap, false);
    const feed = await audience.request({ op: 'subscribe', board: BOARD, view: { feed: true } });
    assert.equal(feed.seq, 3);

    // live views are the caster's: not for the audience
    const refused = await audience.request({ op: 'subscribe', board: BOARD, view: { top: 10 }, live: true });
    assert.equal(refused.code, 'unauthorized', JSON.stringify(refused));
    const bad = await audience.request({ op: 'subscribe', board: BOARD, view: { top: 10 }, live: 'yes' });
    assert.equal(bad.code, 'bad_request');

    const caster = await h.connectWs(t, gw.wsUrl);
    const liveSnap = await caster.request({ op: 'subscribe', board: BOARD, view: { top: 10 }, live: true });
    assert.equal(liveSnap.op, 'snapshot');
    assert.notEqual(liveSnap.sub, snap.sub, 'a live view is another view');

    // the audience cannot freeze
    const notAdmin = await audience.request({ op: 'freeze', board: BOARD });
    assert.equal(notAdmin.code, 'unauthorized');

    const frozen = await caster.request({ op: 'freeze', board: BOARD });
    assert.deepEqual({ op: frozen.op, board: frozen.board, seq: frozen.seq, frozen: frozen.frozen },
      { op: 'frozen', board: BOARD, seq: 3, frozen: 3 });
    const marker = await audience.next((m) => m.op === 'delta' && m.sub === snap.sub && m.frozen === 3, 5000);
    assert.equal(marker.frozen, 3);
    assert.equal(marker.seq, 3);
    assert.deepEqual(marker.rows, []);
    const feedMarker = await audience.next((m) => m.op === 'snapshot' && m.sub === feed.sub, 5000);
    assert.equal(feedMarker.frozen, 3);
    assert.equal(feedMarker.seq, 3);
    const liveMarker = await caster.next((m) => m.op === 'delta' && m.sub === liveSnap.sub && m.frozen === 3, 5000);
    assert.equal(liveMarker.frozen, 3);
    assert.equal(liveMarker.shown, 3);
    // freezing a frozen board changes nothing
    const again = await caster.request({ op: 'freeze', board: BOARD });
    assert.equal(again.seq, 3);

    // writes go on, acked with their true rank
    const ack1 = await write(gw, 'd', 200); // seq 4: d goes to rank 1
    assert.equal(ack1.rank, 1);
    assert.equal(ack1.seq, 4);
    const ack2 = await write(gw, 'c', 300); // seq 5: c jumps from 3 to 1
    assert.equal(ack2.rank, 1);
    const ack3 = await write(gw, 'e', 10);  // seq 6: e new at 5
    assert.equal(ack3.rank, 5);

    // the live view moves; it says what the audience is shown
    let liveRows = liveSnap.rows;
    await h.waitFor(async () => {
      const d = await caster.next((m) => m.op === 'delta' && m.sub === liveSnap.sub, 5000);
      liveRows = apply(liveRows, d);
      assert.equal(d.frozen, 3);
      assert.equal(d.shown, 3);
      return d.seq === 6;
    }, 10000, 'the live view to reach seq 6');
    assert.deepEqual(liveRows.map((r) => r.member), ['c', 'd', 'a', 'b', 'e']);

    // REST: the audience's board, the live board (admin), the rank, the state
    const restFrozen = await top(gw, BOARD, '', { token: null });
    assert.deepEqual(members(restFrozen), ['a=100', 'b=90', 'c=80']);
    assert.equal(restFrozen.frozen, 3);
    assert.equal(restFrozen.seq, 3);
    const restLive = await top(gw, BOARD, '&live=1');
    assert.deepEqual(members(restLive), ['c=300', 'd=200', 'a=100', 'b=90', 'e=10']);
    assert.equal(restLive.shown, 3);
    const liveAnon = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}?top=10&live=1`, undefined, { token: null });
    assert.equal(liveAnon.status, 401, liveAnon.text);
    const rank = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}/members/c`, undefined, { token: null });
    assert.equal(rank.body.rank, 3, rank.text);
    assert.equal(rank.body.frozen, 3);
    const state = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}/freeze`);
    assert.deepEqual(state.body, { board: BOARD, frozen: 3, shown: 3, seq: 6, pending: 3 });

    // a late audience subscriber gets the frozen state too
    const late = await h.connectWs(t, gw.wsUrl, { token: null });
    const lateSnap = await late.request({ op: 'subscribe', board: BOARD, view: { top: 10 } });
    assert.deepEqual(members(lateSnap), ['a=100', 'b=90', 'c=80']);
    assert.equal(lateSnap.frozen, 3);
    assert.equal(lateSnap.seq, 3);
    const lateFeed = await late.request({ op: 'subscribe', board: BOARD, view: { feed: true }, since: { seq: 1 } });
    assert.equal(lateFeed.seq, 3);
    assert.equal(lateFeed.frozen, 3);
    const replayed = [await late.next({ op: 'event', seq: 2 }), await late.next({ op: 'event', seq: 3 })];
    assert.deepEqual(replayed.map((e) => e.member), ['b', 'c']);

    // nothing hidden reached the audience
    await new Promise((r) => setTimeout(r, 300));
    const leaked = audience.messages.filter((m) => (m.op === 'event' && m.seq > 3) ||
      (m.op === 'delta' && m.seq > 3));
    assert.deepEqual(leaked, []);

    // reveal one: exactly the next change (d arrives at 1)
    const r1 = await caster.request({ op: 'reveal', board: BOARD, steps: 1 });
    assert.deepEqual({ op: r1.op, seq: r1.seq, pending: r1.pending, frozen: r1.frozen }, { op: 'revealed', seq: 4, pending: 2, frozen: 3 });
    const d1 = await audience.next((m) => m.op === 'delta' && m.sub === snap.sub && m.seq === 4, 5000);
    assert.equal(d1.seq, 4);
    assert.equal(d1.frozen, 3);
    let rows = apply(snap.rows, d1);
    assert.deepEqual(rows.map((r) => `${r.member}=${r.score}`), ['d=200', 'a=100', 'b=90', 'c=80']);
    const dRow = d1.rows.find((r) => r.member === 'd');
    assert.equal(dRow.prev_rank, null, 'd was not on the board before');
    const e4 = await audience.next((m) => m.op === 'event' && m.sub === feed.sub, 5000);
    assert.deepEqual([e4.seq, e4.member, e4.rank], [4, 'd', 1]);
    const lateD = await late.next((m) => m.op === 'delta' && m.sub === lateSnap.sub && m.seq === 4, 5000);
    assert.equal(lateD.seq, 4);

    // REST reveal of the next one: c jumps 4 -> 1
    const r2 = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/reveal`, { steps: 1 });
    assert.equal(r2.status, 200, r2.text);
    assert.deepEqual([r2.body.seq, r2.body.pending], [5, 1]);
    const d2 = await audience.next((m) => m.op === 'delta' && m.sub === snap.sub && m.seq === 5, 5000);
    rows = apply(rows, d2);
    assert.deepEqual(rows.map((r) => r.member), ['c', 'd', 'a', 'b']);
    assert.equal(d2.rows.find((r) => r.member === 'c').prev_rank, 4);
    const e5 = await audience.next((m) => m.op === 'event' && m.sub === feed.sub, 5000);
    assert.deepEqual([e5.seq, e5.member, e5.prev_rank, e5.rank], [5, 'c', 4, 1]);

    // a second gateway on the same Redis shows the same frozen state
    const gw2 = await h.startGateway(t, { redisPort: redis.port });
    const other = await top(gw2, BOARD, '', { token: null });
    assert.deepEqual(members(other), ['c=300', 'd=200', 'a=100', 'b=90']);
    assert.equal(other.frozen, 3);
    assert.equal(other.seq, 5);

    // "all": the rest, then live again
    const r3 = await caster.request({ op: 'reveal', board: BOARD, steps: 'all' });
    assert.deepEqual([r3.seq, r3.pending, 'frozen' in r3], [6, 0, false]);
    const d3 = await audience.next((m) => m.op === 'delta' && m.sub === snap.sub && m.seq === 6, 5000);
    assert.equal('frozen' in d3, false, JSON.stringify(d3));
    rows = apply(rows, d3);
    assert.deepEqual(rows.map((r) => r.member), ['c', 'd', 'a', 'b', 'e']);
    const e6 = await audience.next((m) => m.op === 'event' && m.sub === feed.sub, 5000);
    assert.equal(e6.seq, 6);
    const thawed = await audience.next((m) => m.op === 'snapshot' && m.sub === feed.sub, 5000);
    assert.equal('frozen' in thawed, false);
    const liveThaw = await caster.next((m) => m.op === 'delta' && m.sub === liveSnap.sub && !('frozen' in m), 5000);
    assert.equal(liveThaw.seq, 6);

    // and live changes flow again
    await write(gw, 'b', 500);
    const d4 = await audience.next((m) => m.op === 'delta' && m.sub === snap.sub && m.seq === 7, 5000);
    assert.equal(d4.seq, 7);
    assert.equal(d4.rows[0].member, 'b');
    const restAfter = await top(gw, BOARD, '', { token: null });
    assert.equal('frozen' in restAfter, false);

    // revealing an unfrozen board changes nothing
    const r4 = await caster.request({ op: 'reveal', board: BOARD, steps: 2 });
    assert.deepEqual([r4.seq, r4.pending, 'frozen' in r4], [7, 0, false]);
  });

test('freeze: the state lives in Redis (a restarted gateway still shows it); reset ends it',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 90000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port });
    for (const [m, v] of [['a', 10], ['b', 20]]) await write(gw, m, v);
    const fr = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/freeze`);
    assert.equal(fr.status, 200, fr.text);
    assert.equal(fr.body.frozen, 2);
    await write(gw, 'c', 30);
    await gw.stop();
    const gw2 = await h.startGateway(t, { redisPort: redis.port });
    const c = await h.connectWs(t, gw2.wsUrl, { token: null });
    const snap = await c.request({ op: 'subscribe', board: BOARD, view: { top: 10 } });
    assert.deepEqual(members(snap), ['b=20', 'a=10']);
    assert.equal(snap.frozen, 2);
    // a write through the new gateway is hidden too
    await write(gw2, 'a', 40);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(c.messages.filter((m) => m.op === 'delta' && m.seq > 2).length, 0, JSON.stringify(c.messages));
    // a reset ends the freeze: the audience gets the empty, live board
    const reset = await h.http(gw2.base, 'POST', `/api/v1/boards/${BOARD}/reset`);
    assert.equal(reset.status, 200, reset.text);
    const after = await c.next((m) => m.op === 'snapshot' || (m.op === 'delta' && !('frozen' in m)), 5000);
    assert.equal('frozen' in after, false, JSON.stringify(after));
    const state = await h.http(gw2.base, 'GET', `/api/v1/boards/${BOARD}/freeze`);
    assert.equal(state.body.frozen, null);
    const rest = await top(gw2, BOARD, '', { token: null });
    assert.deepEqual(rest.rows, []);
  });

test('freeze: more hidden changes than the log holds: the first reveal step crosses the gap, then one by one',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 90000 }, async (t) => {
    const config = h.configWith(t, { 'board match:*': { log_cap: 5 } });
    const { gw } = await h.startStack(t, { config });
    for (let i = 1; i <= 3; i++) await write(gw, `m${i}`, i * 10); // seq 1..3
    const fr = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/freeze`);
    assert.equal(fr.body.frozen, 3);
    // 8 hidden changes; the log keeps the last 5 (seq 7..11)
    const values = [];
    for (let i = 4; i <= 11; i++) {
      const v = 100 + i;
      values.push([`n${i}`, v]);
      await write(gw, `n${i}`, v);
    }
    const audience = await h.connectWs(t, gw.wsUrl, { token: null });
    const snap = await audience.request({ op: 'subscribe', board: BOARD, view: { top: 20 } });
    assert.equal(snap.seq, 3);
    const feed = await audience.request({ op: 'subscribe', board: BOARD, view: { feed: true } });
    assert.equal(feed.seq, 3);

    // step 1: crosses seq 4..6 at once (the log no longer holds them)
    const r1 = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/reveal`, { steps: 1 });
    assert.deepEqual([r1.body.seq, r1.body.skipped, r1.body.pending, r1.body.frozen], [6, 3, 5, 3]);
    const { msg: d1, rows: rows1 } = await nextWindow(audience, snap.sub, snap.rows, 20, 6);
    assert.equal(d1.seq, 6);
    assert.equal(d1.frozen, 3);
    assert.deepEqual(rows1.map((r) => r.member), ['n6', 'n5', 'n4', 'm3', 'm2', 'm1']);
    // the feed cannot replay what the log lost: it starts over from seq 6
    const fs = await audience.next((m) => m.op === 'snapshot' && m.sub === feed.sub, 5000);
    assert.equal(fs.seq, 6);
    assert.equal(fs.reset, true);

    // step 2: exactly seq 7
    const r2 = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/reveal`, { steps: 1 });
    assert.deepEqual([r2.body.seq, r2.body.pending, 'skipped' in r2.body], [7, 4, false]);
    const { msg: d2, rows: rows2 } = await nextWindow(audience, snap.sub, rows1, 20, 7);
    assert.equal(d2.seq, 7);
    assert.deepEqual(rows2.map((r) => r.member), ['n7', 'n6', 'n5', 'n4', 'm3', 'm2', 'm1']);
    const e7 = await audience.next((m) => m.op === 'event' && m.sub === feed.sub, 5000);
    assert.deepEqual([e7.seq, e7.member], [7, 'n7']);

    // bad steps
    for (const steps of [0, -1, 1.5, 'some', null]) {
      const bad = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/reveal`, { steps });
      assert.equal(bad.status, 400, `${JSON.stringify(steps)}: ${bad.text}`);
    }
    // the rest in two steps of 2
    const r3 = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/reveal`, { steps: 2 });
    assert.deepEqual([r3.body.seq, r3.body.pending], [9, 2]);
    const r4 = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/reveal`, { steps: 5 });
    assert.deepEqual([r4.body.seq, r4.body.pending, r4.body.frozen], [11, 0, 3], 'stays frozen with nothing pending');
    const rest = await top(gw, BOARD, '&limit=20', { token: null });
    assert.equal(rest.seq, 11);
    assert.equal(rest.rows[0].member, 'n11');
  });

test('freeze: refused on decaying boards; periods freeze one at a time',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const hot = await h.http(gw.base, 'POST', '/api/v1/boards/hot/freeze');
    assert.equal(hot.status, 400, hot.text);
    assert.match(hot.body.message, /decaying board \(decay = buckets\)/);
    const unknown = await h.http(gw.base, 'POST', '/api/v1/boards/nosuch/freeze');
    assert.equal(unknown.status, 404, unknown.text);

    await write(gw, 'p', 5, 'daily');
    const fr = await h.http(gw.base, 'POST', '/api/v1/boards/daily/freeze');
    assert.equal(fr.status, 200, fr.text);
    assert.ok(fr.body.period, 'a periodic board names the period it froze');
    await write(gw, 'q', 9, 'daily');
    const cur = await top(gw, 'daily', '', { token: null });
    assert.deepEqual(members(cur), ['p=5']);
    const prev = await top(gw, 'daily', '&period=previous', { token: null });
    assert.equal('frozen' in prev, false, 'another period is not frozen');
    const st = await h.http(gw.base, 'GET', `/api/v1/boards/daily/freeze?period=${fr.body.period}`);
    assert.equal(st.body.pending, 1);
  });

test('freeze on a Redis Cluster: the copy and the state live in the board\'s slot; events reach every gateway',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 150000 }, async (t) => {
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
    const gw = await h.startGateway(t, { redis: cluster.seeds });
    const gw2 = await h.startGateway(t, { redis: cluster.seeds });
    const boards = ['match:7101', 'match:7102', 'match:7103', 'match:7104'];
    const views = [];
    for (const b of boards) {
      await write(gw, 'x', 5, b);
      const c = await h.connectWs(t, gw2.wsUrl, { token: null });
      const snap = await c.request({ op: 'subscribe', board: b, view: { top: 5 } }, 10000);
      assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
      const fr = await h.http(gw.base, 'POST', `/api/v1/boards/${b}/freeze`);
      assert.equal(fr.status, 200, fr.text);
      await c.next((m) => m.op === 'delta' && m.sub === snap.sub && m.frozen === 1, 10000);
      views.push({ b, c, snap });
    }
    // the boards' slots are spread over the primaries (not all on one)
    const owners = new Set();
    for (const b of boards) owners.add(await cluster.owner(`rc:{${b}|}:z`));
    assert.ok(owners.size >= 2, `boards on ${owners.size} primaries`);
    for (const { b } of views) await write(gw, 'y', 9, b);
    for (const { b, c, snap } of views) {
      const owner = await cluster.owner(`rc:{${b}|}:z`);
      assert.equal(await cluster.cli(owner, 'HGET', `rc:{${b}|}:frz`, 'on'), '1');
      assert.equal(await cluster.cli(owner, 'ZSCORE', `rc:{${b}|}:fz`, 'y'), ''); // (redis-cli prints nil as an empty line)
      assert.notEqual(await cluster.cli(owner, 'ZSCORE', `rc:{${b}|}:fz`, 'x'), '');
      const rest = await top(gw2, b, '', { token: null });
      assert.deepEqual(members(rest), ['x=5']);
      const r = await h.http(gw.base, 'POST', `/api/v1/boards/${b}/reveal`, { steps: 'all' });
      assert.equal(r.status, 200, r.text);
      const d = await c.next((m) => m.op === 'delta' && m.sub === snap.sub && m.seq === 2, 10000);
      assert.equal('frozen' in d, false);
      assert.equal(d.rows[0].member, 'y');
    }
  });

test('freeze on a multi-field board: frozen rows keep their fields',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const sub = async (member, fields) => {
      const res = await h.http(gw.base, 'POST', '/api/v1/boards/clears/scores', { member, op: 'submit', fields });
      assert.equal(res.status, 200, res.text);
    };
    await sub('p', { clears: 3, revives: 1, first_clear_ms: 500 });
    const fr = await h.http(gw.base, 'POST', '/api/v1/boards/clears/freeze');
    assert.equal(fr.status, 200, fr.text);
    await sub('p', { clears: 5, revives: 1, first_clear_ms: 500 });
    await sub('q', { clears: 9, revives: 0, first_clear_ms: 100 });
    const frozen = await top(gw, 'clears', '', { token: null });
    assert.deepEqual(frozen.rows.map((r) => [r.member, r.fields.clears]), [['p', 3]]);
    const r = await h.http(gw.base, 'POST', '/api/v1/boards/clears/reveal', { steps: 1 });
    assert.equal(r.body.pending, 1);
    const one = await top(gw, 'clears', '', { token: null });
    assert.deepEqual(one.rows.map((x) => [x.member, x.fields.clears]), [['p', 5]]);
  });

test('freeze: after a long freeze (more hidden changes than the live ring of 256) reveals still carry prev_rank',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 90000 }, async (t) => {
    const board = 'match:7201';
    const { gw } = await h.startStack(t);
    for (const [m, v] of [['a', 30], ['b', 20], ['c', 10], ['d', 5], ['e', 4]]) await write(gw, m, v, board);
    const audience = await h.connectWs(t, gw.wsUrl, { token: null });
    const snap = await audience.request({ op: 'subscribe', board, view: { top: 3 } });
    const fr = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/freeze`);
    assert.equal(fr.body.frozen, 5);
    // 400 hidden changes: e climbs from 5th, outside the window, to the top
    // first (seq 6), then 399 writes below
    const writer = await h.connectWs(t, gw.wsUrl);
    const first = await writer.request({ op: 'set', board, member: 'e', value: 99 });
    assert.equal(first.seq, 6);
    // in batches of 32: a connection may have at most max_pending (64)
    // requests waiting for an answer
    for (let i = 0; i < 399; i += 32) {
      const batch = [];
      for (let k = i; k < Math.min(i + 32, 399); k++) {
        batch.push(writer.request({ op: 'set', board, member: `low:${k}`, value: 1 + (k % 5) }, 20000));
      }
      const acks = await Promise.all(batch);
      assert.ok(acks.every((a) => a.op === 'ack'), 'every write acked: ' + JSON.stringify(acks.find((a) => a.op !== 'ack')));
    }
    const r1 = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/reveal`, { steps: 1 });
    assert.deepEqual([r1.body.seq, r1.body.pending], [6, 399]);
    const d = await audience.next((m) => (m.op === 'delta' || (m.op === 'snapshot' && m.id === undefined)) &&
      m.sub === snap.sub && m.seq === 6, 10000);
    assert.equal(d.op, 'delta', 'a delta with prev_rank, not a snapshot: ' + JSON.stringify(d));
    assert.deepEqual(d.rows.map((r) => [r.member, r.rank, r.prev_rank]), [['e', 1, 5]]);
  });

/* A freeze holds only in the history it was made in: a set deleted from
 * outside, or a Redis that came back empty, voids it, and the audience sees
 * the new history live (the views must not stay held by a freeze nobody
 * holds any more). */
for (const [what, lose] of [
  ['a DEL of the set from redis-cli', async (stack) => {
    assert.equal(await stack.redis.cli('DEL', `rc:{${BOARD}|}:z`), '1');
  }],
  ['a Redis restart without persistence', async (stack) => {
    const port = stack.redis.port;
    await stack.redis.stop();
    stack.redis = await h.startRedis(t0(stack), { port });
  }],
]) {
  test(`freeze: ${what} voids the freeze; the next history is live`,
    { skip: h.toolMissing(h.gatewayMissing()), timeout: 90000 }, async (t) => {
      const stack = await h.startStack(t);
      stack.t = t;
      const { gw } = stack;
      await write(gw, 'a', 10);
      const audience = await h.connectWs(t, gw.wsUrl, { token: null });
      const snap = await audience.request({ op: 'subscribe', board: BOARD, view: { top: 5 } });
      const feed = await audience.request({ op: 'subscribe', board: BOARD, view: { feed: true } });
      const fr = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/freeze`);
      assert.equal(fr.body.frozen, 1);
      await audience.next((m) => m.op === 'delta' && m.sub === snap.sub && m.frozen === 1, 5000);
      await lose(stack);
      // the next write starts a new history: the audience sees it live
      await h.waitFor(async () => {
        const r = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/scores`, { member: 'b', op: 'set', value: 7 });
        return r.status === 200;
      }, 20000, 'a write to be acked after the loss');
      const live = await audience.next((m) => (m.op === 'snapshot' || m.op === 'delta') && m.sub === snap.sub &&
        !('frozen' in m) && (m.rows || []).some((r) => r.member === 'b'), 15000);
      assert.ok(live);
      // the feed: the new history's event, or (when it caught up after Redis
      // came back) a reset snapshot of the new history, not frozen
      const ev = await audience.next((m) => m.sub === feed.sub && ((m.op === 'event' && m.member === 'b') ||
        (m.op === 'snapshot' && m.reset === true && m.seq >= 1)), 15000);
      assert.equal('frozen' in ev, false, JSON.stringify(ev));
      const rest = await top(gw, BOARD, '', { token: null });
      assert.equal('frozen' in rest, false, JSON.stringify(rest.body));
      const st = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}/freeze`);
      assert.equal(st.body.frozen, null);
      // and a new freeze works in the new history
      const again = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/freeze`);
      assert.equal(again.status, 200, again.text);
      await audience.next((m) => m.op === 'delta' && m.sub === snap.sub && m.frozen === again.body.frozen, 10000);
    });
}

function t0(stack) { return stack.t; }
