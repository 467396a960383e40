/* archive.test.js - finished periods go to the SQLite archive
 * ([server] archive_path) exactly once, with the rows Redis held, also when
 * several gateways share Redis and the file; a large board is archived in
 * pages without holding the gateway's loop; once a period's keys are gone
 * from Redis, reads of it are answered from the archive in the same shape.
 * The archive file is read back with the sqlite3 command-line tool. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const { sqliteMissing, sql, ROWS_SQL } = require('./sqlite_tool');
// `|| false`: node 20 reports a test with skip: null as skipped, though it runs.
const skip = h.toolMissing(h.gatewayMissing() || sqliteMissing());



/* What Redis holds for a board-period, best first, as archive rows. */
async function redisRows(redis, board, period, desc = true) {
  const words = (await redis.cli('ZRANGE', `rc:{${board}|${period}}:z`, 0, -1, ...(desc ? ['REV'] : []), 'WITHSCORES'))
    .split('\n').filter((x) => x !== '');
  const rows = [];
  for (let i = 0; i < words.length; i += 2) rows.push({ rank: i / 2 + 1, member: words[i], c: Number(words[i + 1]) });
  return rows;
}

async function setClock(gw, iso) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse(iso) });
  assert.equal(r.status, 200, r.text);
}

const archivedLines = (gws, board, period) => gws.flatMap((g) => g.stderr)
  .filter((l) => l.includes(`archived ${board} ${period}:`));

test('a finished day is archived once, with the rows Redis held, and read back once its keys are gone',
  { skip }, async (t) => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-archive-'));
    h.defer(t, () => fs.rmSync(stateDir, { recursive: true, force: true }));
    const config = h.configWith(t, { server: { test_clock: 'on' } });
    const redis = await h.startRedis(t);
    let gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
    const db = path.join(stateDir, 'archive.sqlite3');
    // 2 s before local midnight at +08:00: the day 2026-11-22 ends in real time.
    await setClock(gw, '2026-11-22T15:59:58.000Z');
    const writes = [['user:a', 30], ['user:b', 50], ['user:c', 50], ['user:d', 10], ['user:e', 70]];
    for (const [member, delta] of writes) {
      const r = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member, op: 'incr', delta });
      assert.equal(r.status, 200, r.text);
    }
    await h.http(gw.base, 'PUT', '/api/v1/members/user:b/profile', { name: 'Bea' });
    const held = await redisRows(redis, 'daily', '2026-11-22');
    assert.deepEqual(held.map((r) => r.member), ['user:e', 'user:b', 'user:c', 'user:a', 'user:d']);
    const seq = Number(await redis.cli('GET', 'rc:{daily|2026-11-22}:seq'));

    // REST answers from Redis, to compare with the archive's later.
    const queries = ['?top=10', '?offset=1&limit=2', '?around=user:c&radius=1', '?offset=9&limit=3'];
    const fromRedis = [];
    for (const q of queries) fromRedis.push((await h.http(gw.base, 'GET', `/api/v1/boards/daily${q}&period=2026-11-22`)).body);
    const rankFromRedis = (await h.http(gw.base, 'GET', '/api/v1/boards/daily/members/user:c?period=2026-11-22')).body;

    await gw.waitForLine(/archived daily 2026-11-22: 5 rows$/, 8000);
    assert.deepEqual(sql(db, ROWS_SQL('daily', '2026-11-22')), held);
    assert.deepEqual(sql(db, "SELECT seq, total FROM archived_periods WHERE board = 'daily' AND period = '2026-11-22'"),
      [{ seq, total: 5 }]);
    // The day before had no writes: archived as an empty period.
    assert.deepEqual(sql(db, "SELECT total FROM archived_periods WHERE board = 'daily' AND period = '2026-11-21'"),
      [{ total: 0 }]);
    assert.equal(sql(db, "SELECT count(*) AS n FROM archived_rows WHERE board = 'daily' AND period = '2026-11-21'")[0].n, 0);
    // ... without a marker or a lock: idle boards leave Redis as it was.
    assert.equal(await redis.cli('KEYS', 'rc:{daily|2026-11-21}:*'), '');
    // The marker expires with the period's keys (keep = 7 days).
    assert.equal(await redis.cli('GET', 'rc:{daily|2026-11-22}:archived'), '1');
    const zTtl = Number(await redis.cli('PTTL', 'rc:{daily|2026-11-22}:z'));
    const markerTtl = Number(await redis.cli('PTTL', 'rc:{daily|2026-11-22}:archived'));
    assert.ok(Math.abs(zTtl - markerTtl) < 10000, `marker PTTL ${markerTtl}, keys' ${zTtl}`);

    // Ticks go on: nothing is archived twice.
    await h.sleep(2500);
    assert.equal(archivedLines([gw], 'daily', '2026-11-22').length, 1);

    // A marker lost from Redis (and no lock): a restarted gateway finds the
    // period in the file and puts the marker back, without archiving again.
    await gw.stop();
    await redis.cli('DEL', 'rc:{daily|2026-11-22}:archived', 'rc:{daily|2026-11-22}:archiving');
    gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
    await setClock(gw, '2026-11-22T16:00:03.000Z');
    await h.waitFor(async () => (await redis.cli('GET', 'rc:{daily|2026-11-22}:archived')) === '1', 5000, 'the marker back');
    assert.equal(archivedLines([gw], 'daily', '2026-11-22').length, 0);
    assert.deepEqual(sql(db, ROWS_SQL('daily', '2026-11-22')), held);

    // The keys expire (here: deleted); reads of the day come from the archive.
    await redis.cli('DEL', 'rc:{daily|2026-11-22}:z', 'rc:{daily|2026-11-22}:seq', 'rc:{daily|2026-11-22}:log',
      'rc:{daily|2026-11-22}:epoch');
    for (let i = 0; i < queries.length; i++) {
      const r = await h.http(gw.base, 'GET', `/api/v1/boards/daily${queries[i]}&period=2026-11-22`);
      assert.equal(r.status, 200, r.text);
      // the same answer, but for the epoch: the period's history is no longer in Redis
      const { epoch, ...got } = r.body;
      const { epoch: live, ...want } = fromRedis[i];
      assert.deepEqual(got, want, queries[i]);
      assert.match(live, /^[0-9a-f]{16}$/);
      assert.equal(epoch, '');
    }
    assert.equal(fromRedis[0].rows.find((r) => r.member === 'user:b').name, 'Bea');
    assert.deepEqual(fromRedis[2].rows.map((r) => r.member), ['user:b', 'user:c', 'user:a']);
    const rank = await h.http(gw.base, 'GET', '/api/v1/boards/daily/members/user:c?period=2026-11-22');
    assert.deepEqual(rank.body, rankFromRedis);
    assert.equal(rank.body.rank, 3);
    const absent = await h.http(gw.base, 'GET', '/api/v1/boards/daily/members/user:zz?period=2026-11-22');
    assert.equal(absent.status, 200, absent.text);
    assert.equal(absent.body.rank, null);
    // A period never archived (and gone from Redis) reads as empty.
    const never = await h.http(gw.base, 'GET', '/api/v1/boards/daily?top=5&period=2026-10-01');
    assert.equal(never.status, 200, never.text);
    assert.deepEqual([never.body.total, never.body.rows], [0, []]);
  });

// keep = 5: a period's keys outlive its end by 10 s, so a loaded machine
// (the sanitizer run) still finds them when the 20,000-row period's archive
// starts late (keep = 2 once left it 4 s, and it found the keys expired).
const TICK2 = `[board tick2]
period = custom
period_base = 2026-01-01T00:00:00Z
period_length = 2s
keep = 5
tiebreak = earliest
`;

test('two gateways sharing Redis and the archive file archive each period exactly once', { skip }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-archive-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'shared.sqlite3');
  const config = h.configWith(t, { server: { archive_path: db }, extra: TICK2 });
  const redis = await h.startRedis(t);
  const gws = [await h.startGateway(t, { redisPort: redis.port, config }),
    await h.startGateway(t, { redisPort: redis.port, config })];

  // Writes through both for about five 2-second periods, both gateways
  // running through every rollover. One period also gets 20,000 rows straight
  // into its key, so its archive lasts long enough (a few hundred ms) for the
  // other gateway's tick to come while the lock is held.
  const snapshots = new Map(); // period -> rows Redis held when it ended
  const end = Date.now() + 9000;
  let i = 0;
  let lastPeriod = null;
  let bulk = null;
  while (Date.now() < end) {
    const g = gws[i % 2];
    const r = await h.http(g.base, 'POST', '/api/v1/boards/tick2/scores', { member: `m${i % 7}`, op: 'incr', delta: 1 + (i % 3) });
    assert.equal(r.status, 200, r.text);
    i++;
    const period = String(Math.floor((Date.now() - Date.parse('2026-01-01T00:00:00Z')) / 2000));
    if (lastPeriod !== null && period !== lastPeriod && !snapshots.has(lastPeriod)) {
      // The previous period just ended; writes in flight land within the grace.
      await h.sleep(300);
      snapshots.set(lastPeriod, await redisRows(redis, 'tick2', lastPeriod));
    }
    if (lastPeriod !== null && period !== lastPeriod && !bulk) {
      bulk = period;
      await redis.cli('EVAL', "for i = 1, 20000 do redis.call('ZADD', KEYS[1], i, 'bulk:' .. i) end", 1,
        `rc:{tick2|${period}}:z`);
    }
    lastPeriod = period;
    await h.sleep(40);
  }
  await h.sleep(5500); // the last period: over, grace, a tick

  const periods = sql(db, "SELECT period, total FROM archived_periods WHERE board = 'tick2' ORDER BY CAST(period AS INTEGER)");
  const written = periods.filter((p) => p.total > 0);
  assert.ok(written.length >= 4, `periods with writes archived: ${JSON.stringify(periods)}`);
  for (const p of periods) {
    const lines = archivedLines(gws, 'tick2', p.period);
    assert.equal(lines.length, 1, `period ${p.period} archived by ${lines.length} gateways`);
    const rows = sql(db, ROWS_SQL('tick2', p.period));
    assert.deepEqual(rows.map((r) => r.rank), Array.from({ length: p.total }, (_, k) => k + 1));
    if (snapshots.has(p.period)) assert.deepEqual(rows, snapshots.get(p.period), `period ${p.period}`);
  }
  assert.ok([...snapshots.keys()].filter((p) => periods.some((x) => x.period === p)).length >= 3);
  assert.ok(periods.find((p) => p.period === bulk).total > 20000, `the bulk period ${bulk}`);
  // Both marked the ones they saw, neither logged an error.
  for (const g of gws) assert.deepEqual(g.stderr.filter((l) => / (error|warn) /.test(l) && /archive/.test(l) && !/test_clock = on/.test(l)), []);
});

// Raw composites go straight into this board's keys (no tie-break: a
// composite is the points).
const BIG = `[board big]
order = desc
period = custom
period_base = 2026-01-01T00:00:00Z
period_length = 1h
keep = 2
tiebreak = none
`;

test('a 20,000-member period is archived completely while the gateway keeps answering', { skip }, async (t) => {
  // pings back to back: far above the shipped read rate, which is not what this measures
  const config = h.configWith(t, { server: { test_clock: 'on' },
    limits: { conn_read_rate: 1000000, conn_read_burst: 10000000, ip_read_rate: 1000000, ip_read_burst: 10000000 },
    extra: BIG });
  const { redis, gw } = await h.startStack(t, { config });
  await setClock(gw, '2026-01-01T00:30:00Z'); // inside period 0
  // Raw composites straight into the period's key: the archive copies what is stored.
  await redis.cli('EVAL', `for i = 1, 20000 do
      redis.call('ZADD', KEYS[1], (i * 7919) % 20011, 'member:' .. i)
    end
    redis.call('SET', KEYS[2], 20000)`, 2, 'rc:{big|0}:z', 'rc:{big|0}:seq');
  const held = await redisRows(redis, 'big', '0');
  assert.equal(held.length, 20000);

  // Ping over WebSocket back to back until the archive is done: the loop must
  // keep answering (never held by SQLite or a big reply): many pings come
  // back while the archive runs (one at a time: a loop held for the whole
  // copy would answer one). The latencies are reported, not bounded: on a
  // shared 2-core machine a bound flakes.
  const c = await h.connectWs(t, gw.wsUrl);
  const rtts = [];
  let pinging = true;
  const pinger = (async () => {
    while (pinging) {
      const t0 = process.hrtime.bigint();
      const r = await c.request({ op: 'ping' }, 10000);
      assert.equal(r.op, 'pong');
      rtts.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  })();
  await h.sleep(200);
  const before = rtts.length;
  await setClock(gw, '2026-01-01T01:00:00.500Z'); // period 0 over; archived after the grace
  await gw.waitForLine(/archived big 0: 20000 rows$/, 15000);
  pinging = false;
  await pinger;

  const during = rtts.slice(before);
  const max = Math.max(...during);
  const sorted = [...during].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
  t.diagnostic(`${during.length} pings while archiving: p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
  assert.ok(during.length > 20, `only ${during.length} pings while archiving (max ${max.toFixed(1)} ms): the loop stalled`);
  const rows = sql(gw.stateDir + '/archive.sqlite3', ROWS_SQL('big', '0'));
  assert.equal(rows.length, 20000);
  assert.deepEqual(rows, held);
});

test('a gateway stopped mid-archive exits cleanly; the next attempt archives the whole period once', { skip }, async (t) => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-archive-'));
  h.defer(t, () => fs.rmSync(stateDir, { recursive: true, force: true }));
  const config = h.configWith(t, { server: { test_clock: 'on' }, extra: BIG });
  const redis = await h.startRedis(t);
  let gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
  await redis.cli('EVAL', "for i = 1, 100000 do redis.call('ZADD', KEYS[1], i, 'member:' .. i) end", 1, 'rc:{big|0}:z');
  await setClock(gw, '2026-01-01T01:00:02.000Z'); // period 0 over for the whole grace: the next tick takes it
  // The lock shows the run has begun; stop the gateway at once, most often
  // while it pages (100,000 rows), sometimes after it finished.
  await h.waitFor(async () => (await redis.cli('EXISTS', 'rc:{big|0}:archiving')) === '1', 3000, 'the archive lock');
  const res = await gw.stop();
  assert.deepEqual(res, { code: 0, signal: null }, gw.stderr.slice(-10).join('\n'));
  assert.deepEqual(gw.stderr.filter((l) => /still open|Sanitizer|runtime error/.test(l)), []);

  // Exactly one of two outcomes, each checked in full: the run finished (its
  // marker names all 100,000 rows and they are all there), or it did not (no
  // marker; whatever rows it wrote are completed, not duplicated, below).
  const db = path.join(stateDir, 'archive.sqlite3');
  const marker = sql(db, "SELECT total FROM archived_periods WHERE board = 'big' AND period = '0'");
  const partial = sql(db, "SELECT count(*) AS n FROM archived_rows WHERE board = 'big' AND period = '0'")[0].n;
  if (marker.length) {
    assert.deepEqual(marker, [{ total: 100000 }]);
    assert.equal(partial, 100000, 'a marker with missing rows');
    t.diagnostic('outcome: the archive finished before the stop');
  } else {
    assert.equal(archivedLines([gw], 'big', '0').length, 0, 'logged as archived without a marker');
    t.diagnostic(`outcome: stopped mid-run, ${partial} rows without a marker`);
  }

  // The lock would expire within a minute; delete it to go on now.
  await redis.cli('DEL', 'rc:{big|0}:archiving');
  gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
  await setClock(gw, '2026-01-01T01:00:02.000Z');
  await h.waitFor(async () => (await redis.cli('GET', 'rc:{big|0}:archived')) === '1', 20000, 'the period archived');
  // Once: one marker, every rank once, nothing more.
  assert.deepEqual(sql(db, "SELECT total FROM archived_periods WHERE board = 'big' AND period = '0'"), [{ total: 100000 }]);
  assert.deepEqual(sql(db, `SELECT count(*) AS n, count(DISTINCT rank) AS ranks, count(DISTINCT member) AS members,
    min(rank) AS lo, max(rank) AS hi, min(composite) AS cmin
    FROM archived_rows WHERE board = 'big' AND period = '0'`),
  [{ n: 100000, ranks: 100000, members: 100000, lo: 1, hi: 100000, cmin: 1.0 }]);
});

// A period recorded as empty (no sorted set when the archive looked) is not
// archived for good: when rows turn up in its keys later (here: the test clock
// moved back into it, as tests do; for real: a write that landed after the
// look), the next run copies them and the period row gets their total.
test('a period first recorded empty is archived again once rows turn up in its keys', { skip }, async (t) => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-archive-'));
  h.defer(t, () => fs.rmSync(stateDir, { recursive: true, force: true }));
  const config = h.configWith(t, { server: { test_clock: 'on' } });
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
  const db = path.join(stateDir, 'archive.sqlite3');
  // The gateway starts on today's clock: the finished days it keeps are recorded empty.
  const now = new Date(Date.now() + 8 * 3600 * 1000); // the daily board's days are at +08:00
  const twoDaysAgo = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 2));
  const day = twoDaysAgo.toISOString().slice(0, 10);
  await gw.waitForLine(new RegExp(`archived daily ${day}: 0 rows$`), 15000);
  // Back into that day, 2 s before its end: three writes, then the day ends.
  await setClock(gw, new Date(Date.parse(`${day}T23:59:58.000+08:00`)).toISOString());
  for (const [member, delta] of [['user:a', 3], ['user:b', 9], ['user:c', 6]]) {
    const r = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member, op: 'incr', delta });
    assert.equal(r.status, 200, r.text);
  }
  const held = await redisRows(redis, 'daily', day);
  assert.equal(held.length, 3);
  await gw.waitForLine(new RegExp(`archived daily ${day}: 3 rows$`), 15000);
  assert.deepEqual(sql(db, ROWS_SQL('daily', day)), held);
  assert.deepEqual(sql(db, `SELECT total FROM archived_periods WHERE board = 'daily' AND period = '${day}'`), [{ total: 3 }]);
  assert.equal(await redis.cli('GET', `rc:{daily|${day}}:archived`), '1');
});
