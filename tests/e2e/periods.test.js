/* periods.test.js - periodic boards across their boundaries, with the
 * gateway's clock shifted by the test clock ([server] test_clock = on). A
 * viewer of "current" gets a snapshot of the new, empty period without
 * reconnecting; "previous" and explicit ids read the finished one. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const EXTRA = `
[board monthly]
period = month
keep = 2

[board yearly]
period = year
utc_offset = -05:00

[board sprint]
period = custom
period_base = 2026-01-01T00:00:00Z
period_length = 7d
`;

async function stack(t) {
  return h.startStack(t, { config: h.configWith(t, { server: { test_clock: 'on' }, extra: EXTRA }) });
}

async function setClock(gw, iso) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse(iso) });
  assert.equal(r.status, 200, r.text);
}

/* A viewer of `current` on board, following its messages. */
async function viewCurrent(t, gw, board) {
  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board, view: { top: 10 } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  return { c, snap };
}

// Each case: board, an instant 1.5 s before a boundary, and the period ids on
// either side of it.
const cases = [
  ['daily', '2026-11-22T15:59:58.500Z', '2026-11-22', '2026-11-23', 'local midnight at +08:00'],
  ['weekly', '2021-01-03T23:59:58.500Z', '2020-W53', '2021-W01', 'ISO week-year: 2020-W53 to 2021-W01'],
  ['weekly', '2024-12-29T23:59:58.500Z', '2024-W52', '2025-W01', 'ISO week-year: 2024-12-30 is 2025-W01'],
  ['monthly', '2024-02-29T23:59:58.500Z', '2024-02', '2024-03', 'month end after a leap day'],
  ['daily', '2024-02-28T15:59:58.500Z', '2024-02-28', '2024-02-29', 'into a leap day at +08:00'],
  ['yearly', '2027-01-01T04:59:58.500Z', '2026', '2027', 'year end at -05:00'],
  ['sprint', '2026-01-07T23:59:58.500Z', '0', '1', 'custom 7-day periods from a base'],
];

for (const [board, at, before, after, what] of cases) {
  test(`rollover, ${what}: "current" viewers get the new empty period, "previous" reads the old`, async (t) => {
    const { gw } = await stack(t);
    // A minute before the boundary for the setup (a slow machine cannot push
    // the write past it), then the clock is moved just past it.
    const boundary = Date.parse(at) + 1500;
    await setClock(gw, new Date(boundary - 60000).toISOString());
    const w = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, { member: 'user:early', op: 'incr', delta: 7 });
    assert.equal(w.status, 200, w.text);
    const { c, snap } = await viewCurrent(t, gw, board);
    assert.equal(snap.period, before);
    assert.deepEqual(snap.rows.map((r) => r.member), ['user:early']);

    // The boundary passes: the clock is moved just past it.
    await setClock(gw, new Date(boundary + 100).toISOString());
    const next = await c.next({ op: 'snapshot', sub: snap.sub }, 10000);
    assert.equal(next.period, after);
    assert.equal(next.total, 0);
    assert.deepEqual(next.rows, []);

    // The new period takes writes; the viewer sees them as deltas.
    await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, { member: 'user:late', op: 'incr', delta: 3 });
    const d = await c.next({ op: 'delta', sub: snap.sub }, 2000);
    assert.deepEqual(d.rows.map((r) => r.member), ['user:late']);

    // The finished period is still there, by "previous" and by its id.
    for (const sel of ['previous', before]) {
      const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?top=5&period=${sel}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.period, before);
      assert.deepEqual(r.body.rows.map((x) => `${x.member}=${x.score}`), ['user:early=7']);
    }
    const cur = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?top=5`);
    assert.equal(cur.body.period, after);
  });
}

test('a viewer of an explicit period stays on it across the boundary', async (t) => {
  const { gw } = await stack(t);
  await setClock(gw, '2026-11-22T15:59:00.000Z'); // a minute before midnight at +08:00
  await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member: 'user:a', op: 'incr', delta: 1 });
  const c = await h.connectWs(t, gw.wsUrl);
  const pinned = await c.request({ op: 'subscribe', board: 'daily', period: '2026-11-22', view: { top: 5 } });
  const prev = await c.request({ op: 'subscribe', board: 'daily', period: 'previous', view: { top: 5 } });
  assert.equal(prev.period, '2026-11-21');
  // "previous" follows the clock too: it becomes the day that just ended.
  await setClock(gw, '2026-11-22T16:00:00.100Z');
  const moved = await c.next({ op: 'snapshot', sub: prev.sub }, 10000);
  assert.equal(moved.period, '2026-11-22');
  assert.deepEqual(moved.rows.map((r) => r.member), ['user:a']);
  await h.sleep(200);
  assert.equal(c.messages.filter((m) => m.sub === pinned.sub && m.op === 'snapshot' && m.id === undefined).length, 0);
});

test('period selectors are validated per board kind', async (t) => {
  const { gw } = await stack(t);
  for (const [board, period] of [['daily', '2026-W47'], ['weekly', '2021-W53'], ['daily', '2026-02-30'],
    ['monthly', '2026-13'], ['demo', 'previous']]) {
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?top=5&period=${period}`);
    assert.equal(r.status, 400, `${board} ${period}: ${r.text}`);
    assert.equal(r.body.code, 'bad_request');
  }
  const ok = await h.http(gw.base, 'GET', '/api/v1/boards/weekly?top=5&period=2020-W53');
  assert.equal(ok.status, 200);
  assert.equal(ok.body.period, '2020-W53');
});

test('a period keeps its keys for keep periods, then they expire in Redis', async (t) => {
  const { redis, gw } = await stack(t);
  await setClock(gw, '2026-03-15T12:00:00Z');
  await h.http(gw.base, 'POST', '/api/v1/boards/monthly/scores', { member: 'user:m', op: 'incr', delta: 1 });
  // March ends in 16.5 days, keep = 2 adds April and May: 77.5 days from now.
  const ttl = Number(await redis.cli('PTTL', 'rc:{monthly|2026-03}:z'));
  const want = Date.parse('2026-06-01T00:00:00Z') - Date.parse('2026-03-15T12:00:00Z');
  assert.ok(Math.abs(ttl - want) < 5000, `PTTL ${ttl}, expected about ${want}`);
});
