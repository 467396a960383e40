// web/rankcast.js against the real gateway through a freeze: the audience
// window and feed stay at the freeze while writes go on, the live window and
// feed follow the writes (view.pending = seq - shown), reveal 1 moves the
// audience by exactly one change, reveal "all" unfreezes, and the audience
// feed ends with every event once, in order, with no gap reported. Also the
// REST helpers freeze / reveal / freezeState.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const h = require('./harness');
const Rankcast = require('../../web/rankcast.js');

const write = async (gw, member, delta) => {
  const r = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member, op: 'incr', delta });
  assert.equal(r.status, 200, r.text);
  return r.body;
};
const shape = (rows) => rows.map((r) => `${r.member}=${r.score}`).join(' ');
const board = async (gw, q) => shape((await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=5' + (q || ''))).body.rows);

test('rankcast.js through a freeze: audience views hold, live views follow, reveal steps, unfreeze',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    for (let i = 1; i <= 5; i++) await write(gw, `user:${i}`, i * 10);

    const rc = new Rankcast.Client({ url: gw.wsUrl, WebSocket, token: h.ADMIN_KEY });
    h.defer(t, () => rc.close());
    const frozenCalls = [];
    const gaps = [];
    const onFrozen = (name) => (v, s) => frozenCalls.push([name, s.frozen, s.shown]);
    const top = rc.subscribe({ board: 'demo', view: { top: 5 } }, { onFrozen: onFrozen('top') });
    const feed = rc.subscribe({ board: 'demo', view: { feed: true } },
      { onFrozen: onFrozen('feed'), onGap: (v, g) => gaps.push(g) });
    const live = rc.subscribe({ board: 'demo', view: { top: 5 }, live: true }, { onFrozen: onFrozen('live') });
    const liveFeed = rc.subscribe({ board: 'demo', view: { feed: true }, live: true }, { onGap: (v, g) => gaps.push(g) });
    await h.waitFor(() => top.ready && feed.ready && live.ready && liveFeed.ready, 5000, 'four first snapshots');
    assert.equal(top.frozen, null);
    const start = feed.lastSeq;

    const frozen = await rc.freeze('demo');
    assert.equal(frozen.op, 'frozen');
    assert.equal(frozen.seq, start);
    await h.waitFor(() => top.frozen === start && feed.frozen === start && live.frozen === start, 3000, 'every view to say frozen');
    assert.equal(live.shown, start);
    assert.equal(live.pending, 0);
    const atFreeze = shape(top.rows);

    await write(gw, 'user:1', 100); // 5th -> 1st
    await write(gw, 'user:2', 100); // -> 1st
    await write(gw, 'user:3', 1);
    await h.waitFor(() => live.pending === 3 && liveFeed.lastSeq === start + 3, 3000, 'the live views to follow');
    assert.equal(shape(live.rows), await board(gw, '&live=1'));
    assert.equal(shape(top.rows), atFreeze, 'the audience window held');
    assert.equal(feed.lastSeq, start, 'the audience feed held');
    assert.equal(await board(gw), atFreeze, 'REST reads show the frozen board');
    const state = await Rankcast.rest({ base: gw.base, token: h.ADMIN_KEY }).freezeState('demo');
    assert.deepEqual([state.frozen, state.shown, state.seq, state.pending], [start, start, start + 3, 3]);

    const one = await rc.reveal('demo', 1);
    assert.deepEqual([one.op, one.seq, one.pending, one.frozen], ['revealed', start + 1, 2, start]);
    await h.waitFor(() => top.seq === start + 1 && feed.lastSeq === start + 1 && live.shown === start + 1, 3000, 'one step');
    assert.equal(top.rows[0].member, 'user:1');
    assert.equal(top.rows[0].score, 110);
    assert.equal(shape(top.rows), await board(gw), 'the audience window is the REST frozen board');
    assert.equal(live.pending, 2);
    assert.equal(feed.events.at(-1).member, 'user:1');

    // the REST helper reveals the rest and unfreezes
    const all = await Rankcast.rest({ base: gw.base, token: h.ADMIN_KEY }).reveal('demo', 'all');
    assert.equal('frozen' in all, false);
    await h.waitFor(() => top.frozen === null && feed.frozen === null && live.frozen === null, 3000, 'every view live again');
    await h.waitFor(() => feed.lastSeq === start + 3, 3000, 'the audience feed to get the rest');
    assert.equal(shape(top.rows), await board(gw, '&live=1'));
    assert.deepEqual(feed.events.map((e) => e.seq), [start + 1, start + 2, start + 3]);
    assert.deepEqual(feed.events.map((e) => e.member), ['user:1', 'user:2', 'user:3']);
    assert.deepEqual(gaps, []);

    // and writes reach the audience again
    await write(gw, 'user:4', 500);
    await h.waitFor(() => feed.lastSeq === start + 4 && top.rows[0].member === 'user:4', 3000, 'a live write');
    assert.deepEqual(frozenCalls.filter((c) => c[0] === 'top').map((c) => c[1]), [start, null]);
    assert.deepEqual(frozenCalls.filter((c) => c[0] === 'feed').map((c) => c[1]), [start, null]);
    assert.deepEqual(frozenCalls.filter((c) => c[0] === 'live').map((c) => c.slice(1)), [[start, start], [start, start + 1], [null, null]]);
  });

test('rankcast.js: live views need the admin scope; a decaying board refuses freeze',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const anon = new Rankcast.Client({ url: gw.wsUrl, WebSocket });
    h.defer(t, () => anon.close());
    const errors = [];
    anon.subscribe({ board: 'demo', view: { top: 5 }, live: true }, { onError: (v, e) => errors.push(e.code) });
    await h.waitFor(() => errors.length === 1, 5000, 'the refusal');
    assert.ok(['forbidden', 'unauthorized'].includes(errors[0]), errors[0]);

    const admin = new Rankcast.Client({ url: gw.wsUrl, WebSocket, token: h.ADMIN_KEY });
    h.defer(t, () => admin.close());
    await assert.rejects(admin.freeze('hot'), { code: 'bad_request' });
    await assert.rejects(Rankcast.rest({ base: gw.base, token: h.ADMIN_KEY }).freeze('hot'), { status: 400 });
  });
