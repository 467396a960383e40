/* archive_backlog.test.js - the archive beyond the last finished period of
 * a declared board: boards of a periodic template (match:*-like) archived
 * from the template's index; periods that ended while no gateway ran
 * archived when one starts, oldest first; and the archive lock renewed while
 * a long archive runs (two gateways never archive one period together, the
 * marker is set once) or, when the lock is lost, the run stopped without a
 * marker. The lock's expiry is shortened with RANKCAST_TEST_ARCHIVE_LOCK_MS
 * (honoured only with test_clock = on). Archive files are read back with the
 * sqlite3 command-line tool. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const { sqliteMissing, sql, ROWS_SQL } = require('./sqlite_tool');
const skip = h.toolMissing(h.gatewayMissing() || sqliteMissing());



async function redisRows(redis, board, period) {
  const out = await redis.cli('ZRANGE', `rc:{${board}|${period}}:z`, 0, -1, 'REV', 'WITHSCORES');
  const words = out.split('\n').filter((x) => x !== '');
  const rows = [];
  for (let i = 0; i < words.length; i += 2) rows.push({ rank: i / 2 + 1, member: words[i], c: Number(words[i + 1]) });
  return rows;
}

const BASE = Date.parse('2026-01-01T00:00:00Z');
const HOUR = 3600000;

async function setClock(gw, ms) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: ms });
  assert.equal(r.status, 200, r.text);
}

async function incr(gw, board, member, delta) {
  const r = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, { member, op: 'incr', delta });
  assert.equal(r.status, 200, r.text);
}

const stateDir = (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-backlog-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

// Hourly custom periods from BASE; no tie-break: a composite is the points.
const HOURLY = (name, keep = 6) => `[board ${name}]
period = custom
period_base = 2026-01-01T00:00:00Z
period_length = 1h
keep = ${keep}
tiebreak = none
`;

/* The periods of board in the order the gateways logged them archived. */
const archivedOrder = (gws, board) => gws.flatMap((g) => g.stderr)
  .map((l) => new RegExp(`archived ${board.replace(/[*:]/g, '\\$&')} (-?\\d+): (\\d+) rows$`).exec(l))
  .filter(Boolean).map((m) => m[1]);

test('the boards of a periodic template are archived from its index, each period once', { skip }, async (t) => {
  const dir = stateDir(t);
  const db = path.join(dir, 'archive.sqlite3');
  const config = h.configWith(t, { server: { test_clock: 'on' }, extra: `${HOURLY('round:*')}points_max = 1000\n` });
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir: dir });
  await setClock(gw, BASE + HOUR / 2); // period 0
  // A write the script refuses still records its board (sent with the
  // write); with nothing in Redis the period is passed over, not archived.
  const refused = await h.http(gw.base, 'POST', '/api/v1/boards/round:z/scores', { member: 'p', op: 'incr', delta: 5000 });
  assert.equal(refused.body.error?.code ?? refused.body.code, 'out_of_range', refused.text);
  await incr(gw, 'round:a', 'p1', 30);
  await incr(gw, 'round:a', 'p2', 50);
  await incr(gw, 'round:b', 'p1', 7);
  // A board of the all-time template match:* needs no index.
  await incr(gw, 'match:1842', 'p1', 1);
  // Each board-period is in the template's index once, scored by its end.
  await h.waitFor(async () => (await redis.cli('ZCARD', 'rc:{round:*}:periods')) === '3', 5000, 'three index entries');
  assert.equal(await redis.cli('ZSCORE', 'rc:{round:*}:periods', 'round:a|0'), String(BASE + HOUR));
  assert.equal(await redis.cli('EXISTS', 'rc:{match:*}:periods'), '0');
  assert.equal(await redis.cli('EXISTS', 'rc:{match:*}:boards'), '0');

  await setClock(gw, BASE + HOUR + HOUR / 2); // period 1: period 0 is over
  await incr(gw, 'round:a', 'p3', 11);
  await gw.waitForLine(/archived round:b 0: 1 rows$/, 8000);
  await gw.waitForLine(/archived round:a 0: 2 rows$/, 8000);
  const a0 = await redisRows(redis, 'round:a', '0');
  assert.deepEqual(a0.map((r) => [r.member, r.c]), [['p2', 50], ['p1', 30]]);
  assert.deepEqual(sql(db, ROWS_SQL('round:a', '0')), a0);
  assert.deepEqual(sql(db, ROWS_SQL('round:b', '0')), await redisRows(redis, 'round:b', '0'));
  assert.equal(await redis.cli('GET', 'rc:{round:a|0}:archived'), '1');
  // archived entries leave the index; period 1 of round:a waits for its end
  await h.waitFor(async () => (await redis.cli('ZRANGE', 'rc:{round:*}:periods', 0, -1)) === 'round:a|1', 5000,
    'only round:a|1 left in the index');

  await setClock(gw, BASE + 2 * HOUR + HOUR / 2);
  await gw.waitForLine(/archived round:a 1: 1 rows$/, 8000);
  await h.waitFor(async () => (await redis.cli('ZCARD', 'rc:{round:*}:periods')) === '0', 5000, 'an empty index');
  assert.deepEqual(sql(db, "SELECT board, period, total FROM archived_periods WHERE board LIKE 'round:%' ORDER BY board, period"),
    [{ board: 'round:a', period: '0', total: 2 }, { board: 'round:a', period: '1', total: 1 },
      { board: 'round:b', period: '0', total: 1 }]);
  // Ticks go on: nothing twice.
  await h.sleep(2500);
  assert.deepEqual(archivedOrder([gw], 'round:a'), ['0', '1']);

  // Once the keys are gone, the period is read from the archive.
  await redis.cli('DEL', 'rc:{round:a|0}:z', 'rc:{round:a|0}:seq', 'rc:{round:a|0}:log');
  const r = await h.http(gw.base, 'GET', '/api/v1/boards/round:a?top=10&period=0');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.rows.map((x) => [x.member, x.score, x.rank]), [['p2', 50, 1], ['p1', 30, 2]]);
});

test('periods that ended while no gateway ran are archived when one starts, oldest first', { skip }, async (t) => {
  const dir = stateDir(t);
  const db = path.join(dir, 'archive.sqlite3');
  const config = h.configWith(t, { server: { test_clock: 'on' }, extra: HOURLY('miss') + '\n' + HOURLY('lap:*') + '\n' + HOURLY('old:*', 1) });
  const redis = await h.startRedis(t);
  let gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir: dir });
  await setClock(gw, BASE + HOUR / 2); // period 0
  await incr(gw, 'miss', 'a', 3);
  await incr(gw, 'miss', 'b', 4);
  await incr(gw, 'lap:x', 'a', 9);
  await incr(gw, 'lap:y', 'b', 8);
  await incr(gw, 'old:a', 'a', 1); // keep = 1: gone by period 2
  await h.waitFor(async () => (await redis.cli('ZCARD', 'rc:{lap:*}:periods')) === '2', 5000, 'the index entries');
  await h.waitFor(async () => (await redis.cli('ZCARD', 'rc:{old:*}:periods')) === '1', 5000, 'old:a in its index');
  const gw1 = gw;
  await gw.stop(); // in the middle of period 0: nothing of it archived (the empty ones before may be)
  assert.equal(archivedOrder([gw1], 'miss').filter((p) => Number(p) >= 0 && Number(p) <= 5).length, 0);
  // Periods 1..3 got rows from gateways that are gone too (written straight
  // into their keys here, as those gateways would have left them).
  for (const p of [1, 2, 3]) {
    await redis.cli('ZADD', `rc:{miss|${p}}:z`, 10 * p, `m${p}`, 10 * p + 1, 'b');
    await redis.cli('PEXPIRE', `rc:{miss|${p}}:z`, 60000);
  }

  // Five periods later a gateway starts: every finished period still in
  // Redis (keep = 6) is archived, one after the other, oldest first.
  gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir: dir });
  await setClock(gw, BASE + 5 * HOUR + HOUR / 2); // period 5
  await gw.waitForLine(/archived miss 4: 0 rows$/, 15000);
  // (each period is logged once, by whoever recorded it first: the first
  // gateway may have recorded the empty period -1 before it stopped)
  const order = archivedOrder([gw1, gw], 'miss').filter((p) => Number(p) >= -1 && Number(p) <= 5);
  assert.deepEqual(order, ['-1', '0', '1', '2', '3', '4']);
  assert.deepEqual(sql(db, ROWS_SQL('miss', '0')).map((r) => [r.member, r.c]), [['b', 4], ['a', 3]]);
  for (const p of [1, 2, 3]) assert.deepEqual(sql(db, ROWS_SQL('miss', String(p))), await redisRows(redis, 'miss', p));
  // ... and the template's boards of period 0, from its index
  await h.waitFor(async () => (await redis.cli('ZCARD', 'rc:{lap:*}:periods')) === '0', 8000, 'the index emptied');
  assert.deepEqual(sql(db, "SELECT board, total FROM archived_periods WHERE board LIKE 'lap:%' ORDER BY board"),
    [{ board: 'lap:x', total: 1 }, { board: 'lap:y', total: 1 }]);
  for (const p of ['0', '1', '2', '3']) assert.equal(await redis.cli('GET', `rc:{miss|${p}}:archived`), '1', p);
  // A template's period that ended more than keep periods ago has no keys
  // left to copy (by the gateway's clock): dropped from the index, logged.
  await gw.waitForLine(/archive old:a 0: ended more than keep periods ago/, 8000);
  await h.waitFor(async () => (await redis.cli('ZCARD', 'rc:{old:*}:periods')) === '0', 5000, 'old:a dropped');
  assert.deepEqual(sql(db, "SELECT period FROM archived_periods WHERE board = 'old:a'"), []);
});

// Raw composites straight into the period's key (no tie-break: a composite is the points).
const BIG = HOURLY('big', 2);
const ROWS = 200000;

async function fillBig(redis) {
  await redis.cli('EVAL', `for i = 1, ${ROWS} do redis.call('ZADD', KEYS[1], i, 'member:' .. i) end`, 1, 'rc:{big|0}:z');
}

test('the lock is renewed while a long archive runs: a second gateway never archives alongside', { skip }, async (t) => {
  const config = h.configWith(t, { server: { test_clock: 'on' }, extra: BIG });
  const env = { RANKCAST_TEST_ARCHIVE_LOCK_MS: '1500' };
  const redis = await h.startRedis(t);
  const dirs = [stateDir(t), stateDir(t)];
  const gws = [await h.startGateway(t, { redisPort: redis.port, config, stateDir: dirs[0], env }),
    await h.startGateway(t, { redisPort: redis.port, config, stateDir: dirs[1], env })];
  await fillBig(redis);
  for (const g of gws) await setClock(g, BASE + HOUR + 2500); // period 0 over, past the grace

  // Who holds the lock, polled until the marker is set: one token only.
  const holders = new Set();
  const t0 = Date.now();
  await h.waitFor(async () => {
    const tok = await redis.cli('GET', 'rc:{big|0}:archiving');
    if (tok) holders.add(tok);
    return (await redis.cli('GET', 'rc:{big|0}:archived')) === '1';
  }, 120000, 'the marker');
  t.diagnostic(`archived ${ROWS} rows in about ${Date.now() - t0} ms with a 1500 ms lock`);
  assert.ok(holders.size <= 1, `lock holders: ${[...holders].join(', ')}`);
  const done = gws.map((g) => g.stderr.filter((l) => /archived big 0: \d+ rows$/.test(l)).length);
  assert.deepEqual(done.sort(), [0, 1], 'one gateway archived the period');
  const winner = gws.find((g) => g.stderr.some((l) => /archived big 0: /.test(l)));
  const renewals = winner.stderr.filter((l) => /archive big 0: \d+ of \d+ rows copied, lock renewed/.test(l)).length;
  assert.ok(renewals >= 3, `the lock was renewed ${renewals} times: the run did not outlive its first expiry`);
  for (const g of gws) assert.deepEqual(g.stderr.filter((l) => /lock was lost/.test(l)), []);
  const files = dirs.map((d) => path.join(d, 'archive.sqlite3'));
  const counts = files.map((f) => sql(f, "SELECT count(*) AS n FROM archived_rows WHERE board = 'big'")[0].n);
  assert.deepEqual(counts.sort((x, y) => x - y), [0, ROWS], 'only the winner copied rows');
});

test('a run that loses its lock stops without a marker; the period is archived once later', { skip }, async (t) => {
  const dir = stateDir(t);
  const db = path.join(dir, 'archive.sqlite3');
  const config = h.configWith(t, { server: { test_clock: 'on' }, extra: BIG });
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir: dir,
    env: { RANKCAST_TEST_ARCHIVE_LOCK_MS: '1500' } });
  await fillBig(redis);
  await setClock(gw, BASE + HOUR + 2500);
  // As soon as the run holds the lock, another owner takes it over (as if
  // ours had expired while the gateway stalled).
  await h.waitFor(async () => (await redis.cli('EVAL',
    "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('SET', KEYS[1], 'thief', 'PX', 4000) return 1 end return 0",
    1, 'rc:{big|0}:archiving')) === '1', 10000, 'the run to take the lock');
  await gw.waitForLine(/archive big 0: the archive lock was lost/, 10000);
  assert.equal(await redis.cli('GET', 'rc:{big|0}:archived'), '');
  assert.equal(await redis.cli('GET', 'rc:{big|0}:archiving'), 'thief', 'the new owner\'s lock left alone');
  assert.deepEqual(sql(db, "SELECT total FROM archived_periods WHERE board = 'big' AND period = '0'"), []);
  // The thief's lock expires; a later tick archives the whole period, once.
  await h.waitFor(async () => (await redis.cli('GET', 'rc:{big|0}:archived')) === '1', 120000, 'the marker');
  assert.deepEqual(sql(db, "SELECT total FROM archived_periods WHERE board = 'big' AND period = '0'"), [{ total: ROWS }]);
  assert.deepEqual(sql(db, `SELECT count(*) AS n, count(DISTINCT rank) AS ranks, min(rank) AS lo, max(rank) AS hi
    FROM archived_rows WHERE board = 'big' AND period = '0'`), [{ n: ROWS, ranks: ROWS, lo: 1, hi: ROWS }]);
  assert.equal(gw.stderr.filter((l) => /archived big 0: /.test(l)).length, 1);
});

test('on a Redis Cluster, a template\'s boards on every primary are archived from its index', { skip }, async (t) => {
  const dir = stateDir(t);
  const db = path.join(dir, 'archive.sqlite3');
  const config = h.configWith(t, { server: { test_clock: 'on' }, extra: HOURLY('round:*') });
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config, stateDir: dir });
  await setClock(gw, BASE + HOUR / 2);
  const primaries = await cluster.primaries();
  const boards = [];
  const owners = new Set();
  for (let i = 0; boards.length < 6 || owners.size < primaries.length; i++) {
    const b = `round:c${i}`;
    boards.push(b);
    owners.add(await cluster.owner(`rc:{${b}|0}:z`));
  }
  for (const [i, b] of boards.entries()) await incr(gw, b, 'p', i + 1);
  const index = 'rc:{round:*}:periods';
  const at = await cluster.owner(index);
  await h.waitFor(async () => Number(await cluster.cli(at, 'ZCARD', index)) === boards.length, 5000, 'the index');
  await setClock(gw, BASE + HOUR + HOUR / 2);
  await h.waitFor(async () => Number(await cluster.cli(at, 'ZCARD', index)) === 0, 15000, 'the index emptied');
  const got = sql(db, "SELECT board, total FROM archived_periods WHERE board LIKE 'round:%' AND period = '0' ORDER BY board");
  assert.deepEqual(got, boards.slice().sort().map((board) => ({ board, total: 1 })));
  for (const [i, b] of boards.entries()) {
    assert.deepEqual(sql(db, ROWS_SQL(b, '0')), [{ rank: 1, member: 'p', c: i + 1 }]);
    assert.equal(await cluster.cli(await cluster.owner(`rc:{${b}|0}:archived`), 'GET', `rc:{${b}|0}:archived`), '1');
  }
});
