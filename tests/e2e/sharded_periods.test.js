/* sharded_periods.test.js - sharded boards with periods and on templates
 * (docs/sharded.md, "Periods and templates"): a daily board split over 4
 * shards written across local midnight is archived once as the merged
 * standings of its shards, its "current" viewers roll over, its shards'
 * keys carry the TTL of `keep`, a blocked member stays blocked in the next
 * period on its shard, and a past period is read from the archive once its
 * shards' keys are gone; a period bigger than a page of every shard (and
 * than the 10,000 ranks of a sharded read) is archived whole in merged
 * order, ties across shards included; a template's boards are split, read
 * merged, fanned out and, with a period, archived through its index. The
 * archive file is read back with the sqlite3 command-line tool. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const { sqliteMissing, sql, ROWS_SQL } = require('./sqlite_tool');
const { shardOf, runTool } = require('./shard_tool');

const skip = h.toolMissing(h.gatewayMissing() || sqliteMissing());

/* Each shard's rows of board-period from Redis, then the merged order
 * (docs/sharded.md): composite desc, the lower shard, then Redis's ZRANGE
 * REV order inside a shard (the greater member first); as archive rows. */
async function mergedTruth(redis, board, period, shards) {
  const all = [];
  for (let i = 0; i < shards; i++) {
    const words = (await redis.cli('ZRANGE', `rc:{${board}#${i}|${period}}:z`, 0, -1, 'WITHSCORES'))
      .split('\n').filter((x) => x !== '');
    for (let k = 0; k + 1 < words.length; k += 2) all.push({ shard: i, member: words[k], c: Number(words[k + 1]) });
  }
  all.sort((a, b) => (b.c - a.c) || (a.shard - b.shard) || (a.member < b.member ? 1 : a.member > b.member ? -1 : 0));
  return all.map((r, k) => ({ rank: k + 1, member: r.member, c: r.c }));
}

/* What viewer `sub` on connection c shows now: its snapshots and deltas
 * applied in order (a sharded board's window views are re-read and pushed
 * as snapshots: docs/sharded.md). Members, best first. */
function shown(c, sub, size) {
  let list = [];
  for (const m of c.messages.filter((x) => x.sub === sub)) {
    if (m.op === 'snapshot') list = (m.rows || []).map((r) => r.member);
    if (m.op !== 'delta') continue;
    const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
    list = list.filter((x) => !gone.has(x));
    for (const r of (m.rows || []).slice().sort((a, b) => a.rank - b.rank)) list.splice(r.rank - 1, 0, r.member);
    list = list.slice(0, size);
  }
  return list;
}

async function setClock(gw, iso) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse(iso) });
  assert.equal(r.status, 200, r.text);
}

/* `rankcast ...args` (export, import) against the test's Redis and config. */
function cli(args, { redis, config, state } = {}) {
  return runTool([...args, '--redis', `127.0.0.1:${redis.port}`, '--config', config, ...(state ? ['--state', state] : [])]);
}

const csvMembers = (text) => text.split('\n').slice(1).filter((l) => l).map((l) => l.split(',')[1]);

const archivedLines = (gw, board, period) => gw.stderr.filter((l) => l.includes(`archived ${board} ${period}:`));

function stateDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-shper-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a sharded day across midnight: archived once as the merged truth, viewers roll over, keys expire per keep, '
  + 'a block carries to the next day on its shard', { skip }, async (t) => {
  const SHARDS = 4;
  const config = h.configWith(t, { server: { test_clock: 'on' }, 'board daily': { shards: SHARDS } });
  const dir = stateDir(t);
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir: dir });
  const db = path.join(dir, 'archive.sqlite3');
  // A minute before local midnight at +08:00 for the writes, then the clock
  // is moved past it.
  await setClock(gw, '2026-11-22T15:59:00.000Z');
  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board: 'daily', view: { top: 10 } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.equal(snap.period, '2026-11-22');

  // 60 members over the 4 shards, with equal points on several of them.
  const expected = new Map();
  for (let i = 0; i < 90; i++) {
    const member = `u:${i % 60}`;
    const delta = 1 + ((i * 7) % 5);
    expected.set(member, (expected.get(member) || 0) + delta);
    const r = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member, op: 'incr', delta });
    assert.equal(r.status, 200, r.text);
  }
  // A write's ack has the member's global rank in this day.
  const ack = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member: 'u:0', op: 'incr', delta: 1 });
  assert.equal(ack.status, 200, ack.text);
  const rank0 = await h.http(gw.base, 'GET', '/api/v1/boards/daily/members/u:0');
  assert.equal(ack.body.rank, rank0.body.rank, `${ack.text} / ${rank0.text}`);

  // Block u:7 in 2026-11-22: the next day's list of its shard gets it.
  const admin = await h.connectWs(t, gw.wsUrl);
  const blocked = await admin.request({ op: 'remove', board: 'daily', member: 'u:7', block: true });
  assert.equal(blocked.op, 'removed', JSON.stringify(blocked));
  expected.delete('u:7');
  const home = shardOf('u:7', SHARDS);
  assert.equal(await redis.cli('SISMEMBER', `rc:{daily#${home}|2026-11-23}:blocked`, 'u:7'), '1');
  assert.equal(await redis.cli('SISMEMBER', `rc:{daily#${home}|}:blocked`, 'u:7'), '1');
  assert.equal(await redis.cli('EXISTS', 'rc:{daily|2026-11-23}:blocked', 'rc:{daily|}:blocked'), '0');

  const truth = await mergedTruth(redis, 'daily', '2026-11-22', SHARDS);
  assert.equal(truth.length, expected.size);
  const shardsUsed = new Set(truth.map((r) => shardOf(r.member, SHARDS)));
  assert.equal(shardsUsed.size, SHARDS);
  let seqSum = 0;
  for (let i = 0; i < SHARDS; i++) seqSum += Number(await redis.cli('GET', `rc:{daily#${i}|2026-11-22}:seq`));
  const page = (await h.http(gw.base, 'GET', '/api/v1/boards/daily?offset=3&limit=20&period=2026-11-22')).body;
  assert.deepEqual(page.rows.map((r) => r.member), truth.slice(3, 23).map((r) => r.member));
  // The viewer shows the day's merged top 10.
  const top10 = truth.slice(0, 10).map((r) => r.member).join();
  await h.waitFor(() => shown(c, snap.sub, 10).join() === top10, 3000, 'the viewer to show the merged top 10');

  // Midnight passes.
  await setClock(gw, '2026-11-22T16:00:00.200Z');
  const rolled = await c.next((m) => m.op === 'snapshot' && m.sub === snap.sub && m.period === '2026-11-23', 10000);
  assert.equal(rolled.id, undefined);
  assert.equal(rolled.period, '2026-11-23');
  assert.deepEqual([rolled.total, rolled.rows], [0, []]);

  await gw.waitForLine(new RegExp(`archived daily 2026-11-22: ${truth.length} rows$`), 10000);
  assert.deepEqual(sql(db, ROWS_SQL('daily', '2026-11-22')), truth);
  assert.deepEqual(sql(db, "SELECT seq, total FROM archived_periods WHERE board = 'daily' AND period = '2026-11-22'"),
    [{ seq: seqSum, total: truth.length }]);
  // The marker is the board's, in its own tag; none on the shards.
  assert.equal(await redis.cli('GET', 'rc:{daily|2026-11-22}:archived'), '1');
  assert.equal(await redis.cli('KEYS', 'rc:{daily#*|2026-11-22}:archiv*'), '');
  await h.sleep(2500);
  assert.equal(archivedLines(gw, 'daily', '2026-11-22').length, 1, 'archived once');

  // keep = 7: every key of every shard lives until the end of 2026-11-29
  // (local), as the marker does.
  const now = Date.parse('2026-11-22T16:00:00.200Z'); // the clock runs on from here: TTLs are a little shorter
  const want = Date.parse('2026-11-29T16:00:00Z') - now;
  for (let i = 0; i < SHARDS; i++) {
    for (const k of ['z', 'seq', 'log', 'epoch']) {
      const ttl = Number(await redis.cli('PTTL', `rc:{daily#${i}|2026-11-22}:${k}`));
      assert.ok(ttl > want - 30000 && ttl <= want + 70000, `shard ${i} ${k}: PTTL ${ttl}, want about ${want}`);
    }
  }
  const markerTtl = Number(await redis.cli('PTTL', 'rc:{daily|2026-11-22}:archived'));
  assert.ok(Math.abs(markerTtl - want) < 30000, `marker PTTL ${markerTtl}`);
  const next = Number(await redis.cli('PTTL', `rc:{daily#${home}|2026-11-23}:blocked`));
  const wantNext = Date.parse('2026-11-30T16:00:00Z') - now;
  assert.ok(next > wantNext - 90000 && next <= wantNext + 70000, `the next day's blocklist: PTTL ${next}`);

  // The next day: u:7 is still blocked (its shard's list), others write.
  const refused = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member: 'u:7', op: 'incr', delta: 1 });
  assert.equal(refused.status, 403, refused.text);
  const ok = await h.http(gw.base, 'POST', '/api/v1/boards/daily/scores', { member: 'u:8', op: 'incr', delta: 2 });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.rank, 1);
  await h.waitFor(() => shown(c, snap.sub, 10).join() === 'u:8', 3000, 'the rolled viewer to show the new day');
  assert.equal(await redis.cli('ZSCORE', `rc:{daily#${home}|2026-11-23}:z`, 'u:7'), '');

  // The CLI exports the finished day merged, from its shards.
  const live = await cli(['export', 'daily', '--period', '2026-11-22'], { redis, config, state: dir });
  assert.equal(live.code, 0, live.stderr);
  assert.deepEqual(csvMembers(live.stdout), truth.map((r) => r.member));

  // The finished day's shards expire (here: deleted): reads of it come
  // from the archive, the same rows.
  const before = (await h.http(gw.base, 'GET', '/api/v1/boards/daily?top=15&period=2026-11-22')).body;
  const keys = (await redis.cli('KEYS', 'rc:{daily#*|2026-11-22}:*')).split('\n').filter((x) => x);
  assert.ok(keys.length >= SHARDS * 4, keys.join());
  await redis.cli('DEL', ...keys);
  const after = await h.http(gw.base, 'GET', '/api/v1/boards/daily?top=15&period=2026-11-22');
  assert.equal(after.status, 200, after.text);
  assert.deepEqual(after.body.rows, before.rows);
  assert.equal(after.body.total, truth.length);
  const r3 = await h.http(gw.base, 'GET', `/api/v1/boards/daily/members/${truth[2].member}?period=2026-11-22`);
  assert.equal(r3.body.rank, 3, r3.text);
  const archived = await cli(['export', 'daily', '--period', '2026-11-22'], { redis, config, state: dir });
  assert.equal(archived.code, 0, archived.stderr);
  assert.equal(archived.stdout, live.stdout);
  assert.deepEqual(gw.stderr.filter((l) => / (error|warn) /.test(l) && /archive/.test(l) && !/test_clock = on/.test(l)), []);
});

// Raw composites go straight into the shards' keys (no tie-break: a
// composite is the points), with many equal ones across shards.
const BIG = `[board bigsh]
order = desc
period = custom
period_base = 2026-01-01T00:00:00Z
period_length = 1h
keep = 2
tiebreak = none
shards = 4
`;

test('a sharded period of 12,000 members (pages of every shard, past rank 10,000) is archived whole in merged order',
  { skip }, async (t) => {
    const SHARDS = 4;
    const config = h.configWith(t, { server: { test_clock: 'on' }, extra: BIG });
    const dir = stateDir(t);
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir: dir });
    await setClock(gw, '2026-01-01T00:30:00Z'); // inside period 0
    const byShard = Array.from({ length: SHARDS }, () => []);
    for (let i = 1; i <= 12000; i++) byShard[shardOf(`m:${i}`, SHARDS)].push(`m:${i}`);
    for (let s = 0; s < SHARDS; s++) {
      assert.ok(byShard[s].length > 1000, `shard ${s}: ${byShard[s].length} members`);
      // points: 0..2999, so each value is held by about 4 members, on several shards
      await redis.cli('EVAL', `for i = 2, #ARGV do
          local n = tonumber(string.sub(ARGV[i], 3))
          redis.call('ZADD', KEYS[1], (n * 7919) % 3000, ARGV[i])
        end
        redis.call('SET', KEYS[2], ARGV[1])`, 2, `rc:{bigsh#${s}|0}:z`, `rc:{bigsh#${s}|0}:seq`,
      String(byShard[s].length), ...byShard[s]);
    }
    const truth = await mergedTruth(redis, 'bigsh', '0', SHARDS);
    assert.equal(truth.length, 12000);
    await setClock(gw, '2026-01-01T01:00:01Z'); // period 0 is over
    await gw.waitForLine(/archived bigsh 0: 12000 rows$/, 30000);
    const db = path.join(dir, 'archive.sqlite3');
    const rows = sql(db, ROWS_SQL('bigsh', '0'));
    assert.equal(rows.length, 12000);
    for (let k = 0; k < rows.length; k++) {
      if (rows[k].member !== truth[k].member || rows[k].c !== truth[k].c || rows[k].rank !== k + 1) {
        assert.fail(`rank ${k + 1}: archived ${JSON.stringify(rows[k])}, truth ${JSON.stringify(truth[k])}`);
      }
    }
    assert.deepEqual(sql(db, "SELECT seq, total FROM archived_periods WHERE board = 'bigsh' AND period = '0'"),
      [{ seq: 12000, total: 12000 }]);
    // Past rank 10,000 the archive serves what a live sharded read refuses.
    const keys = (await redis.cli('KEYS', 'rc:{bigsh#*|0}:*')).split('\n').filter((x) => x);
    await redis.cli('DEL', ...keys);
    const deep = await h.http(gw.base, 'GET', '/api/v1/boards/bigsh/members/' + truth[11000].member + '?period=0');
    assert.equal(deep.body.rank, 11001, deep.text);
  });

const TEMPLATES = `[board m:*]
order = desc
ops = incr, set, best
tiebreak = earliest
tiebreak_resolution = 1s
tiebreak_horizon = 3650d
tiebreak_base = 2026-01-01T00:00:00Z
shards = 3

[board dm:*]
order = desc
ops = incr
period = day
utc_offset = +00:00
tiebreak = earliest
shards = 2
`;

test('a template with shards = 3: each board split, reads merged, fan-out; a periodic one archived from its index',
  { skip }, async (t) => {
    const config = h.configWith(t, { server: { test_clock: 'on' }, extra: TEMPLATES });
    const dir = stateDir(t);
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir: dir });
    await setClock(gw, '2026-03-10T23:59:00Z');
    const c = await h.connectWs(t, gw.wsUrl);
    const view1 = await c.request({ op: 'subscribe', board: 'm:1', view: { top: 5 } });
    assert.equal(view1.op, 'snapshot', JSON.stringify(view1));
    const feed2 = await c.request({ op: 'subscribe', board: 'm:2', view: { feed: true } });
    assert.equal(feed2.op, 'snapshot', JSON.stringify(feed2));

    const members = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const [k, m] of members.entries()) {
      for (const board of ['m:1', 'm:2']) {
        const delta = board === 'm:1' ? 10 + k : 100 - k;
        const r = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, { member: m, op: 'incr', delta });
        assert.equal(r.status, 200, r.text);
      }
    }
    // Each member is on its shard of each board, nowhere else.
    for (const board of ['m:1', 'm:2']) {
      for (const m of members) {
        for (let i = 0; i < 3; i++) {
          const score = await redis.cli('ZSCORE', `rc:{${board}#${i}|}:z`, m);
          assert.equal(score !== '', i === shardOf(m, 3), `${board} ${m} on shard ${i}`);
        }
      }
      assert.equal(await redis.cli('EXISTS', `rc:{${board}|}:z`), '0');
    }
    // Reads merge the shards.
    const top1 = (await h.http(gw.base, 'GET', '/api/v1/boards/m:1?top=5')).body;
    assert.deepEqual(top1.rows.map((r) => r.member), ['h', 'g', 'f', 'e', 'd']);
    assert.equal(top1.total, 8);
    const top2 = (await h.http(gw.base, 'GET', '/api/v1/boards/m:2?top=3')).body;
    assert.deepEqual(top2.rows.map((r) => `${r.member}=${r.score}`), ['a=100', 'b=99', 'c=98']);
    const rank = (await h.http(gw.base, 'GET', '/api/v1/boards/m:2/members/e')).body;
    assert.equal(rank.rank, 5);
    // Fan-out: the window viewer of m:1 holds the merged top 5, the feed of
    // m:2 got every change once.
    await h.waitFor(() => shown(c, view1.sub, 5).join() === 'h,g,f,e,d', 3000,
      'the viewer of m:1 to show the merged top 5');
    await h.waitFor(() => c.messages.filter((x) => x.sub === feed2.sub && x.op === 'event').length === 8, 3000,
      'eight events on the feed of m:2');
    const events = c.messages.filter((x) => x.sub === feed2.sub && x.op === 'event');
    assert.deepEqual(events.map((e) => e.member), members);
    assert.deepEqual(events.map((e) => e.seq), [1, 2, 3, 4, 5, 6, 7, 8]);

    // A periodic template's board: split per day, archived from the index.
    for (const [m, d] of [['x', 5], ['y', 9], ['z', 7], ['w', 9]]) {
      const r = await h.http(gw.base, 'POST', '/api/v1/boards/dm:7/scores', { member: m, op: 'incr', delta: d });
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(await redis.cli('ZRANGE', 'rc:{dm:*}:periods', 0, -1), 'dm:7|2026-03-10');
    const truth = await mergedTruth(redis, 'dm:7', '2026-03-10', 2);
    assert.equal(truth.length, 4);
    await setClock(gw, '2026-03-11T00:00:01Z');
    await gw.waitForLine(/archived dm:7 2026-03-10: 4 rows$/, 10000);
    assert.deepEqual(sql(path.join(dir, 'archive.sqlite3'), ROWS_SQL('dm:7', '2026-03-10')), truth);
    assert.equal(await redis.cli('GET', 'rc:{dm:7|2026-03-10}:archived'), '1');
    await h.waitFor(async () => (await redis.cli('ZCARD', 'rc:{dm:*}:periods')) === '0', 5000, 'the index entry to go');
  });

test('import into a sharded weekly board seeds the week\'s blocklist on each shard; export merges the week',
  { skip }, async (t) => {
    const SHARDS = 3;
    const config = h.configWith(t, { 'board weekly': { shards: SHARDS } });
    const redis = await h.startRedis(t);
    // blocked on the board before the week's first write: on its shard's list
    const bad = 'w:bad';
    await redis.cli('SADD', `rc:{weekly#${shardOf(bad, SHARDS)}|}:blocked`, bad);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-shper-'));
    h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
    const good = Array.from({ length: 12 }, (_, i) => `w:${i}`);
    const file = path.join(dir, 'weekly.csv');
    fs.writeFileSync(file, `member,score\n${good.map((m, i) => `${m},${10 + i}`).join('\n')}\n${bad},99\nw:after,1\n`);
    const imp = await cli(['import', 'weekly', file], { redis, config });
    assert.equal(imp.code, 1, imp.stderr);
    assert.match(imp.stderr, /line 14: forbidden: member w:bad is blocked on this board/);
    const week = /to period (\S+):/.exec(imp.stderr)[1];
    for (let i = 0; i < SHARDS; i++) {
      assert.equal(await redis.cli('SISMEMBER', `rc:{weekly#${i}|${week}}:blocked`, ''), '1', `shard ${i} seeded`);
    }
    assert.equal(await redis.cli('SISMEMBER', `rc:{weekly#${shardOf(bad, SHARDS)}|${week}}:blocked`, bad), '1');
    const truth = await mergedTruth(redis, 'weekly', week, SHARDS);
    assert.deepEqual(truth.map((r) => r.member), good.slice().reverse());
    const exp = await cli(['export', 'weekly', '--period', week], { redis, config });
    assert.equal(exp.code, 0, exp.stderr);
    assert.deepEqual(csvMembers(exp.stdout), good.slice().reverse());
  });
