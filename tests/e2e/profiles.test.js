/* profiles.test.js - member profiles (rc:profile:MEMBER) are joined into rows
 * as `name` (and other fields), and a profile changed through the gateway
 * reaches viewers who already hold the row. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

test('a profile shows in snapshots, REST reads and, once renamed, in deltas', async (t) => {
  const { gw } = await h.startStack(t);
  await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:1', op: 'incr', delta: 5 });
  let r = await h.http(gw.base, 'PUT', '/api/v1/members/user:1/profile', { name: 'PlayerOne', avatar: 'a.png' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { name: 'PlayerOne', avatar: 'a.png' });
  r = await h.http(gw.base, 'GET', '/api/v1/members/user:1/profile');
  assert.deepEqual(r.body, { name: 'PlayerOne', avatar: 'a.png' });

  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  assert.equal(snap.rows[0].name, 'PlayerOne');
  assert.equal(snap.rows[0].avatar, 'a.png');
  let rows = snap.rows;
  c.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.op === 'delta' && m.sub === snap.sub) rows = applyDelta(rows, m, 1, 10);
  });

  // PUT replaces the whole profile: avatar is gone, the name is new.
  r = await h.http(gw.base, 'PUT', '/api/v1/members/user:1/profile', { name: 'Renamed' });
  assert.equal(r.status, 200);
  await h.waitFor(() => rows[0].name === 'Renamed' && rows[0].avatar === undefined, 10000, 'the rename to reach the viewer');
  const read = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=1');
  assert.equal(read.body.rows[0].name, 'Renamed');
});

test('profile writes need the write scope and reject malformed bodies', async (t) => {
  const { redis, gw } = await h.startStack(t);
  let r = await h.http(gw.base, 'PUT', '/api/v1/members/user:2/profile', { name: 'x' }, { token: null });
  assert.equal(r.status, 401);
  for (const body of ['[1]', '{"name":5}', '{"Bad Key":"x"}', 'not json']) {
    r = await h.http(gw.base, 'PUT', '/api/v1/members/user:2/profile', body);
    assert.equal(r.status, 400, body);
    assert.equal(r.body.code, 'bad_request');
  }
  assert.equal(await redis.cli('EXISTS', 'rc:profile:user:2'), '0');
});
