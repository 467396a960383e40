/* roster_race.test.js - a roster view ({"team": T}, docs/teams.md) whose
 * membership changes while a read of it is out. Found by the chaos run
 * (tests/chaos, seed 20261127, single Redis): after a Redis restart without
 * persistence the gateway re-read the membership while a roster's read of
 * the old members was out; that read came back as the fresh snapshot the
 * change asks for (the old members' rows, the new total), and the new list
 * then only as a delta whose `removed` (meaning: left the board) kept the
 * old member in the client's `absent` for good. A read of an old list is now
 * dropped and the new list read (fanout/gw_view.c). The race is made on
 * purpose: RANKCAST_TEST_SLOW_VIEW_READ (base/gw_fault.h, test_clock = on)
 * holds each view read's reply 400 ms, and the team move comes meanwhile. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

/* A roster viewer following the member-list rule. */
async function watchRoster(t, gw, team) {
  const v = await h.connectWs(t, gw.wsUrl, { token: null });
  const state = { rows: [], absent: new Set(), msgs: [] };
  let sub = null;
  v.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (sub === null || m.sub !== sub) return;
    state.msgs.push(m);
    if (m.op === 'snapshot') {
      state.rows = m.rows;
      state.absent = new Set(m.absent || []);
    } else if (m.op === 'delta') {
      const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
      state.rows = state.rows.filter((r) => !gone.has(r.member));
      for (const x of m.removed || []) state.absent.add(x);
      for (const r of m.rows || []) { state.rows.push(r); state.absent.delete(r.member); }
      state.rows.sort((a, b) => a.rank - b.rank);
    }
  });
  const snap = await v.request({ op: 'subscribe', board: 'players', view: { team } }, 10000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  sub = snap.sub;
  state.rows = snap.rows;
  state.absent = new Set(snap.absent || []);
  state.show = () => `rows ${JSON.stringify(state.rows)} absent ${JSON.stringify([...state.absent])}\n` +
    state.msgs.map((m) => JSON.stringify(m)).join('\n');
  return state;
}

test('a member that leaves the team while the roster reads his row leaves the roster', { skip, timeout: 60000 }, async (t) => {
  const config = h.configWith(t, { server: { test_clock: 'on' } });
  const { gw } = await h.startStack(t, { config, env: { RANKCAST_TEST_SLOW_VIEW_READ: '400' } });
  const w = await h.connectWs(t, gw.wsUrl);
  assert.equal((await w.request({ op: 'incr', board: 'players', member: 'ann', delta: 5 }, 10000)).op, 'ack');
  for (const member of ['ann', 'bob']) {
    assert.equal((await w.request({ op: 'team', board: 'players', member, team: 'red' }, 10000)).op, 'teamed');
  }
  const state = await watchRoster(t, gw, 'red');
  assert.deepEqual([state.rows.map((r) => r.member), [...state.absent]], [['ann'], ['bob']]);
  // bob's first points (the roster reads his row: held 400 ms), then bob
  // off the team while that read is out
  assert.equal((await w.request({ op: 'incr', board: 'players', member: 'bob', delta: 1 }, 10000)).op, 'ack');
  await h.sleep(150);
  assert.equal((await w.request({ op: 'team', board: 'players', member: 'bob', team: null }, 10000)).op, 'teamed');
  await h.sleep(2500);
  assert.deepEqual([state.rows.map((r) => r.member), [...state.absent]], [['ann'], []], state.show());
});

test('after a Redis restart without persistence a roster view comes back empty', { skip, timeout: 90000 }, async (t) => {
  const stack = await h.startStack(t);
  const { gw } = stack;
  const w = await h.connectWs(t, gw.wsUrl);
  for (const [member, delta] of [['ann', 5], ['bob', 3]]) {
    assert.equal((await w.request({ op: 'incr', board: 'players', member, delta }, 10000)).op, 'ack');
    assert.equal((await w.request({ op: 'team', board: 'players', member, team: 'red' }, 10000)).op, 'teamed');
  }
  const v = await h.connectWs(t, gw.wsUrl, { token: null });
  const state = { rows: [], absent: new Set(), msgs: [] };
  let sub = null;
  v.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (sub === null || m.sub !== sub) return;
    state.msgs.push(m);
    if (m.op === 'snapshot') {
      state.rows = m.rows;
      state.absent = new Set(m.absent || []);
    } else if (m.op === 'delta') {
      const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
      state.rows = state.rows.filter((r) => !gone.has(r.member));
      for (const x of m.removed || []) state.absent.add(x);
      for (const r of m.rows || []) { state.rows.push(r); state.absent.delete(r.member); }
      state.rows.sort((a, b) => a.rank - b.rank);
    }
  });
  const snap = await v.request({ op: 'subscribe', board: 'players', view: { team: 'red' } }, 10000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  sub = snap.sub;
  state.rows = snap.rows;
  assert.deepEqual(snap.rows.map((r) => r.member), ['ann', 'bob']);

  // other members scoring all along: the roster's reads are out when the
  // membership read after the restart comes back
  let writing = true;
  const w2 = await h.connectWs(t, gw.wsUrl);
  const others = (async () => {
    for (let k = 0; writing; k++) {
      w2.ws.send(JSON.stringify({ op: 'incr', board: 'players', member: `x${k % 7}`, delta: 1 }));
      await h.sleep(3);
    }
  })();
  await h.sleep(300);
  const port = stack.redis.port;
  await stack.redis.stop();
  stack.redis = await h.startRedis(t, { port });
  // ann scores again on the empty Redis: on the board, on no team
  await h.waitFor(async () => (await w.request({ op: 'incr', board: 'players', member: 'ann', delta: 2 }, 5000)).op === 'ack',
    30000, 'a write after the restart');
  await h.sleep(1000);
  writing = false;
  await others;
  const empty = () => state.rows.length === 0 && state.absent.size === 0;
  try {
    await h.waitFor(() => empty() && state.msgs.some((m) => m.op === 'snapshot' && m.reset), 20000, 'the roster empty');
  } catch (e) {
    assert.fail(`roster of red after the restart: rows ${JSON.stringify(state.rows)} absent ${JSON.stringify([...state.absent])}\n` +
      state.msgs.map((m) => JSON.stringify(m)).join('\n'));
  }
  // and it stays so (nothing late undoes it)
  await h.sleep(1500);
  assert.ok(empty(), `rows ${JSON.stringify(state.rows)} absent ${JSON.stringify([...state.absent])}`);
});
