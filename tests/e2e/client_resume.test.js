// web/rankcast.js against the real gateway across a gateway restart: the
// client reconnects by itself, resubscribes its window (which comes back
// equal to the board) and resumes its feed with since = last seq, so the
// events written while it was away are replayed in order, with no reset.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const h = require('./harness');
const Rankcast = require('../../web/rankcast.js');

const write = (gw, member, delta) =>
  h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member, op: 'incr', delta });
const shape = (rows) => rows.map((r) => `${r.member}=${r.score}`).join(' ');

test('rankcast.js reconnects after a gateway restart, resubscribes, and replays missed feed events',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 60000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port });
    // A second gateway on the same Redis takes writes while the first is down.
    const other = await h.startGateway(t, { redisPort: redis.port });
    for (let i = 1; i <= 8; i++) await write(gw, `user:${i}`, i * 10);

    const states = [];
    const resets = [];
    const rc = new Rankcast.Client({ url: gw.wsUrl, WebSocket, minDelay: 50, maxDelay: 400,
      onState: (s) => states.push(s) });
    h.defer(t, () => rc.close());
    const top = rc.subscribe({ board: 'demo', view: { top: 5 } });
    const feed = rc.subscribe({ board: 'demo', view: { feed: true } },
      { onChange: (v, changes, info) => { if (info.reset) resets.push(v.seq); } });
    await h.waitFor(() => top.ready && feed.ready, 5000, 'both first snapshots');
    const start = feed.lastSeq;

    await write(gw, 'user:1', 500);
    await h.waitFor(() => feed.lastSeq === start + 1, 2000, 'the live event');

    await gw.stop();
    await h.waitFor(() => rc.state === 'reconnecting', 2000, 'the client to notice');
    for (let k = 2; k <= 4; k++) {
      const r = await write(other, `user:${k}`, 1000 + k);
      assert.equal(r.body.op, 'ack', r.text);
    }

    const again = await h.startGateway(t, { redisPort: redis.port, port: gw.port });
    await h.waitFor(() => rc.state === 'open', 5000, 'the client to reconnect');
    await h.waitFor(() => feed.lastSeq === start + 4, 3000, 'the missed events to be replayed');
    assert.deepEqual(feed.events.map((e) => e.seq), [start + 1, start + 2, start + 3, start + 4]);
    assert.deepEqual(feed.events.slice(1).map((e) => e.member), ['user:2', 'user:3', 'user:4']);
    assert.deepEqual(resets, []);

    const truth = (await h.http(again.base, 'GET', '/api/v1/boards/demo?top=5')).body;
    await h.waitFor(() => shape(top.rows) === shape(truth.rows), 2000, 'the window to equal the board');
    assert.deepEqual(states.slice(0, 2), ['connecting', 'open']);
    assert.ok(states.includes('reconnecting'));
  });

test('rankcast.js resumes its feed with the epoch it holds: a board reset while it was away starts it over',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 60000 }, async (t) => {
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port });
    const other = await h.startGateway(t, { redisPort: redis.port });
    for (let i = 1; i <= 3; i++) await write(gw, `old:${i}`, i * 10);

    const resets = [];
    const rc = new Rankcast.Client({ url: gw.wsUrl, WebSocket, minDelay: 50, maxDelay: 400 });
    h.defer(t, () => rc.close());
    const feed = rc.subscribe({ board: 'demo', view: { feed: true } },
      { onChange: (v, changes, info) => { if (info.reset) resets.push(v.seq); } });
    await h.waitFor(() => feed.ready, 5000, 'the first snapshot');
    const before = feed.epoch;
    assert.match(before, /^[0-9a-f]{16}$/);

    await gw.stop();
    await h.waitFor(() => rc.state === 'reconnecting', 2000, 'the client to notice');
    // While it is away: the board is reset and written past the seq it holds.
    const reset = await h.http(other.base, 'POST', '/api/v1/boards/demo/reset', {});
    assert.equal(reset.status, 200, reset.text);
    for (let k = 1; k <= 6; k++) assert.equal((await write(other, `new:${k}`, k)).body.op, 'ack');
    const seq = Number(await redis.cli('GET', 'rc:{demo|}:seq'));

    await h.startGateway(t, { redisPort: redis.port, port: gw.port });
    await h.waitFor(() => rc.state === 'open' && resets.length > 0, 5000, 'the reset snapshot after reconnecting');
    assert.notEqual(feed.epoch, before);
    assert.match(feed.epoch, /^[0-9a-f]{16}$/);
    assert.equal(feed.lastSeq, seq);
    assert.deepEqual(feed.events.map((e) => e.member).filter((m) => m.startsWith('new:')), []); // nothing replayed
    await write(other, 'new:7', 7);
    await h.waitFor(() => feed.lastSeq === seq + 1, 3000, 'the next live event');
    assert.equal(feed.events.at(-1).member, 'new:7');
  });
