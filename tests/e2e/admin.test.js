/* admin.test.js - admin operations over WebSocket and REST (admin scope):
 * remove a member and block it from future writes (checked inside the write
 * script), unblock, reverse a write by its req, reset a board; every action
 * lands in the audit stream rc:audit with who, what and when. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const WRITER = 'writer-secret-0123456789';
const EXTRA = `
[key writer]
secret = ${WRITER}
scopes = read, write
`;

async function stack(t) {
  return h.startStack(t, { config: h.configWith(t, { extra: EXTRA }) });
}

async function audit(redis) {
  const out = (await redis.cli('XRANGE', 'rc:audit', '-', '+')).split('\n');
  // flatten: id, then field/value pairs; group entries by their "who" field
  const entries = [];
  for (let i = 0; i < out.length; i++) {
    if (out[i] === 'who') entries.push({ who: out[i + 1] });
    else if (entries.length && ['op', 'board', 'member', 'req', 'block', 'at', 'period'].includes(out[i]))
      entries.at(-1)[out[i]] = out[i + 1];
  }
  return entries;
}

test('remove + block: the member leaves the board, viewers see it, and its writes are refused', async (t) => {
  const { redis, gw } = await stack(t);
  const writer = await h.connectWs(t, gw.wsUrl, { token: WRITER });
  for (const [m, d] of [['user:a', 30], ['user:b', 20], ['user:cheat', 99]])
    assert.equal((await writer.request({ op: 'incr', board: 'demo', member: m, delta: d })).op, 'ack');
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await viewer.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  let rows = snap.rows;
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.op === 'delta' && m.sub === snap.sub) rows = applyDelta(rows, m, 1, 10);
    if (m.op === 'snapshot' && m.sub === snap.sub) rows = m.rows;
  });
  assert.equal(rows[0].member, 'user:cheat');

  // Not for a write key.
  const refused = await writer.request({ op: 'remove', board: 'demo', member: 'user:cheat', block: true });
  assert.equal(refused.code, 'forbidden');

  const admin = await h.connectWs(t, gw.wsUrl); // the harness' admin key
  const r = await admin.request({ op: 'remove', board: 'demo', member: 'user:cheat', block: true });
  assert.equal(r.op, 'removed', JSON.stringify(r));
  assert.equal(r.blocked, true);
  await h.waitFor(() => rows.map((x) => x.member).join() === 'user:a,user:b', 10000, 'the viewer to drop user:cheat');
  assert.equal(await redis.cli('ZSCORE', 'rc:{demo|}:z', 'user:cheat'), '');

  const blocked = await writer.request({ op: 'incr', board: 'demo', member: 'user:cheat', delta: 1 });
  assert.equal(blocked.code, 'forbidden', JSON.stringify(blocked));
  const rest = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:cheat', op: 'incr', delta: 1 },
    { token: WRITER });
  assert.equal(rest.status, 403);
  assert.equal(await redis.cli('ZSCORE', 'rc:{demo|}:z', 'user:cheat'), '');

  // Unblock over REST; writes go through again.
  const ub = await h.http(gw.base, 'DELETE', '/api/v1/boards/demo/blocked/user:cheat');
  assert.equal(ub.status, 200, ub.text);
  assert.equal(ub.body.op, 'unblocked');
  assert.equal((await writer.request({ op: 'incr', board: 'demo', member: 'user:cheat', delta: 1 })).op, 'ack');

  const log = await audit(redis);
  assert.deepEqual(log.map((e) => `${e.who} ${e.op} ${e.member} ${e.block}`),
    ['env-admin remove user:cheat 1', 'env-admin unblock user:cheat 0']);
  assert.ok(log.every((e) => Number(e.at) > 0));
});

test('reverse: a write is taken back by its req, once; the feed sees the correction', async (t) => {
  const { redis, gw } = await stack(t);
  const writer = await h.connectWs(t, gw.wsUrl, { token: WRITER });
  await writer.request({ op: 'incr', board: 'demo', member: 'user:r', delta: 100, req: 'w-1' });
  await writer.request({ op: 'incr', board: 'demo', member: 'user:r', delta: 7, req: 'w-2' });
  const feedConn = await h.connectWs(t, gw.wsUrl);
  const feed = await feedConn.request({ op: 'subscribe', board: 'demo', view: { feed: true } });

  const r = await h.http(gw.base, 'POST', '/api/v1/boards/demo/reverse', { req: 'w-1' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.op, 'reversed');
  assert.equal(r.body.member, 'user:r');
  assert.equal(r.body.score, 7);
  assert.equal(r.body.req, 'w-1');
  const ev = await feedConn.next({ op: 'event', sub: feed.sub }, 2000);
  assert.equal(ev.member, 'user:r');
  assert.equal(ev.score, 7);
  assert.equal(ev.delta, -100);

  // Reversing twice changes nothing; an unknown req is a clear error.
  const again = await h.http(gw.base, 'POST', '/api/v1/boards/demo/reverse', { req: 'w-1' });
  assert.equal(again.status, 200);
  assert.equal(again.body.score, 7);
  const unknown = await h.http(gw.base, 'POST', '/api/v1/boards/demo/reverse', { req: 'nope' });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.code, 'bad_request');
  // The original req still counts as seen: a retry of it does not re-apply.
  const retry = await writer.request({ op: 'incr', board: 'demo', member: 'user:r', delta: 100, req: 'w-1' });
  assert.equal(retry.duplicate, true);
  assert.equal(retry.score, 7);
  const log = await audit(redis);
  assert.deepEqual(log.map((e) => `${e.op} ${e.req}`), ['reverse w-1']);
});

test('reset: the board empties, viewers and feeds start over, the audit says who', async (t) => {
  const { redis, gw } = await stack(t);
  const writer = await h.connectWs(t, gw.wsUrl, { token: WRITER });
  for (let i = 0; i < 5; i++) await writer.request({ op: 'incr', board: 'demo', member: `user:${i}`, delta: i + 1 });
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const top = await viewer.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  const feed = await viewer.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
  let rows = top.rows;
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.op === 'delta' && m.sub === top.sub) rows = applyDelta(rows, m, 1, 10);
    if (m.op === 'snapshot' && m.sub === top.sub) rows = m.rows;
  });
  const forbidden = await writer.request({ op: 'reset', board: 'demo' });
  assert.equal(forbidden.code, 'forbidden');
  const admin = await h.connectWs(t, gw.wsUrl);
  const r = await admin.request({ op: 'reset', board: 'demo' });
  assert.equal(r.op, 'board_reset', JSON.stringify(r));
  await h.waitFor(() => rows.length === 0, 10000, 'the viewer to show an empty board');
  const fs = await viewer.next({ op: 'snapshot', sub: feed.sub, reset: true }, 2000);
  assert.equal(fs.seq, r.seq);
  assert.equal(await redis.cli('ZCARD', 'rc:{demo|}:z'), '0');
  // The board takes writes again, seq keeps growing.
  const ack = await writer.request({ op: 'incr', board: 'demo', member: 'user:new', delta: 1 });
  assert.equal(ack.seq, r.seq + 1);
  assert.deepEqual((await audit(redis)).map((e) => `${e.who} ${e.op} ${e.board}`), ['env-admin reset demo']);
});
