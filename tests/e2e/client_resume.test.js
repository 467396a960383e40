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
