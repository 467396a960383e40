/* sharded.test.js - sharded boards (docs/sharded.md) seen by their viewers:
 * 300 members written by concurrent writers over 4 shards, then every rank,
 * window and REST page compared with the truth merged from the shards' own
 * sorted sets (read from Redis, merged in the documented order); a feed that
 * got every change exactly once with a seq that grows by one; a feed that
 * resumes from its cursor on another connection and gets exactly what it
 * missed; the same on a Redis Cluster, where the shards sit on every primary. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const h = require('./harness');
const { shardOf } = require('./shard_tool');

const skip = h.toolMissing(h.gatewayMissing());
const SHARDS = 4;

const BOARD_SPEC = {
  'board sh': {
    order: 'desc', ops: 'incr, set, best', tiebreak: 'earliest', tiebreak_resolution: '1s',
    tiebreak_horizon: '3650d', tiebreak_base: '2026-01-01T00:00:00Z', shards: SHARDS, log_cap: 2000,
  },
};

/* The merged order: composite desc, then the lower shard, then (inside a
 * shard) Redis's ZRANGE REV order: the greater member first. */
function mergedTruth(shardRows) {
  const all = [];
  shardRows.forEach((rows, shard) => rows.forEach((r) => all.push(Object.assign({ shard }, r))));
  all.sort((a, b) => (b.c - a.c) || (a.shard - b.shard) || (a.member < b.member ? 1 : a.member > b.member ? -1 : 0));
  return all;
}

async function readShards(cli, board, shards) {
  const out = [];
  for (let i = 0; i < shards; i++) {
    const text = await cli(`rc:{${board}#${i}|}:z`, 'ZRANGE', `rc:{${board}#${i}|}:z`, '0', '-1', 'WITHSCORES');
    const f = text ? text.split('\n') : [];
    const rows = [];
    for (let k = 0; k + 1 < f.length; k += 2) rows.push({ member: f[k], c: Number(f[k + 1]) });
    out.push(rows);
  }
  return out;
}

function windowOf(conn, sub) {
  const view = { list: [], snapshots: 0, deltas: 0 };
  conn.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub !== sub) return;
    if (m.op === 'snapshot') {
      view.snapshots++;
      view.list = (m.rows || []).map((r) => ({ member: r.member, score: r.score }));
    } else if (m.op === 'delta') {
      view.deltas++;
      const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
      view.list = view.list.filter((r) => !gone.has(r.member));
      for (const r of (m.rows || []).slice().sort((a, b) => a.rank - b.rank)) {
        view.list.splice(r.rank - view.first, 0, { member: r.member, score: r.score });
      }
      view.list = view.list.slice(0, view.size);
    }
  });
  return view;
}

function feedOf(conn, sub) {
  const feed = { events: [], snapshots: [] };
  conn.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub !== sub) return;
    if (m.op === 'event') feed.events.push(m);
    if (m.op === 'snapshot') feed.snapshots.push(m);
  });
  return feed;
}

/* Writers: `conns` connections, each writing its share of `writes` incr's
 * over `members` members, every write with its own req. Returns the
 * expected score per member. */
async function writeBurst(t, gw, board, members, writes, conns) {
  const expected = new Map();
  const clients = [];
  for (let c = 0; c < conns; c++) clients.push(await h.connectWs(t, gw.wsUrl));
  let seed = 12345;
  const rand = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 1; return seed; };
  const jobs = clients.map(() => []);
  for (let w = 0; w < writes; w++) {
    const m = `p:${w < members ? w : rand() % members}`; // every member once, then at random
    const delta = 1 + (rand() % 50);
    expected.set(m, (expected.get(m) || 0) + delta);
    jobs[w % conns].push({ op: 'incr', board, member: m, delta, req: `w${w}` });
  }
  await Promise.all(clients.map(async (cl, i) => {
    for (let k = 0; k < jobs[i].length; k += 32) {
      const batch = jobs[i].slice(k, k + 32);
      const acks = await Promise.all(batch.map((j) => cl.request(j, 10000)));
      for (const a of acks) assert.equal(a.op, 'ack', JSON.stringify(a));
    }
  }));
  return expected;
}

async function checkBoard(t, gw, cli, board, expected, opts = {}) {
  const shardRows = await readShards(cli, board, SHARDS);
  const truth = mergedTruth(shardRows);
  assert.equal(truth.length, expected.size, 'every member is on exactly one shard');
  for (const [i, rows] of shardRows.entries()) for (const r of rows) assert.equal(shardOf(r.member, SHARDS), i);
  // every member's rank and score over REST
  for (let i = 0; i < truth.length; i++) {
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}/members/${truth[i].member}`);
    assert.equal(r.body.rank, i + 1, `rank of ${truth[i].member}: ${r.text}`);
    assert.equal(r.body.score, expected.get(truth[i].member));
    assert.equal(r.body.total, truth.length);
  }
  // pages, the first and last included
  for (const [o, l] of [[0, 10], [0, 1000], [37, 25], [290, 20], [299, 1], [300, 5]]) {
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?offset=${o}&limit=${l}`);
    assert.equal(r.body.total, truth.length);
    assert.deepEqual(r.body.rows.map((x) => x.member), truth.slice(o, o + l).map((x) => x.member), `page ${o},${l}`);
    assert.deepEqual(r.body.rows.map((x) => x.rank), truth.slice(o, o + l).map((_, k) => o + k + 1));
  }
  // around views
  for (const k of [0, 1, 150, truth.length - 1]) {
    const m = truth[k].member;
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?around=${m}&radius=3`);
    const lo = Math.max(0, k - 3);
    assert.deepEqual(r.body.rows.map((x) => x.member), truth.slice(lo, k + 4).map((x) => x.member), `around ${m}`);
    assert.equal(r.body.rows[0].rank, lo + 1);
  }
  // the windows the viewers hold
  if (opts.views) {
    for (const v of opts.views) {
      await h.waitFor(() => JSON.stringify(v.list.map((x) => x.member)) ===
        JSON.stringify(truth.slice(v.first - 1, v.first - 1 + v.size).map((x) => x.member)), 20000,
      `the window at ${v.first} to equal the merged truth`);
      for (const row of v.list) assert.equal(row.score, expected.get(row.member));
    }
  }
  return truth;
}

async function feedTest(t, gw, cli, board, { writes, members }) {
  const viewer = await h.connectWs(t, gw.wsUrl);
  const top = await viewer.request({ op: 'subscribe', board, view: { top: 10 } });
  assert.equal(top.op, 'snapshot', JSON.stringify(top));
  const page = await viewer.request({ op: 'subscribe', board, view: { offset: 20, limit: 15 } });
  const feedSnap = await viewer.request({ op: 'subscribe', board, view: { feed: true } });
  assert.equal(feedSnap.op, 'snapshot');
  assert.equal(typeof feedSnap.cursor, 'string', 'a sharded feed snapshot carries its cursor');
  const vTop = Object.assign(windowOf(viewer, top.sub), { first: 1, size: 10 });
  const vPage = Object.assign(windowOf(viewer, page.sub), { first: 21, size: 15 });
  const feed = feedOf(viewer, feedSnap.sub);

  const expected = await writeBurst(t, gw, board, members, writes, 4);
  await h.waitFor(() => feed.events.length >= writes, 60000, `all ${writes} events on the feed`);
  await h.sleep(300);
  assert.equal(feed.events.length, writes, 'every change exactly once');
  const seen = new Set();
  let seq = feedSnap.seq;
  for (const e of feed.events) {
    assert.equal(e.seq, seq + 1, 'seq grows by one per event');
    seq = e.seq;
    assert.equal(typeof e.cursor, 'string');
    const key = `${e.member}@${e.score}`;
    assert.ok(!seen.has(key), `event ${key} twice`);
    seen.add(key);
    assert.ok(e.rank >= 1 && e.rank <= members, `a global rank: ${JSON.stringify(e)}`);
  }
  // each member's last event carries its final score
  const last = new Map();
  for (const e of feed.events) last.set(e.member, e.score);
  for (const [m, s] of expected) assert.equal(last.get(m), s);

  const truth = await checkBoard(t, gw, cli, board, expected, { views: [vTop, vPage] });
  t.diagnostic(`top view under the burst: ${vTop.snapshots} snapshots, ${vTop.deltas} deltas`);
  // a member that jumps into the top 10 arrives with where it stood (prev_rank, global).
  // prev_rank counts from the state the view last delivered (PROTOCOL v1.1): the
  // burst's last writes outside the top 10 sent the view nothing, so first a write
  // that moves the top 10 brings the view up to date (the leader gains a point and
  // stays first: every rank stays as in the truth).
  const deltas = [];
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub === top.sub && (m.op === 'delta' || m.op === 'snapshot')) deltas.push(m);
  });
  const leader = truth[0].member;
  const lead = await viewer.request({ op: 'incr', board, member: leader, delta: 1 });
  assert.equal(lead.rank, 1);
  expected.set(leader, expected.get(leader) + 1);
  await h.waitFor(() => deltas.some((d) => (d.rows || []).some((r) => r.member === leader && r.score === expected.get(leader))),
    20000, 'the top view to show the leader\'s point');
  const jumper = truth[40].member;
  // a write of the jumper's outside the view sends nothing; its jump then
  // carries where it stood before its first write since the last delta: 41
  const nudge = await viewer.request({ op: 'incr', board, member: jumper, delta: 1 });
  assert.equal(nudge.op, 'ack');
  expected.set(jumper, expected.get(jumper) + 1);
  const sentBefore = deltas.length;
  const jump = await viewer.request({ op: 'incr', board, member: jumper, delta: 100000 });
  assert.equal(jump.rank, 1);
  expected.set(jumper, expected.get(jumper) + 100000);
  await h.waitFor(() => deltas.length > sentBefore, 20000, 'the top view to move');
  const moved = deltas.slice(sentBefore).find((d) => d.op === 'delta' && (d.rows || []).some((r) => r.member === jumper));
  assert.ok(moved, `a delta (not a snapshot) brings ${jumper}: ${JSON.stringify(deltas.slice(sentBefore))}`);
  assert.equal(moved.rows.find((r) => r.member === jumper).prev_rank, 41,
    `the nudge took ${jumper} to rank ${nudge.rank}; the view last showed it at 41`);
  // a quiet write: its ack's rank is the truth's
  await h.sleep(200);
  const w = await viewer.request({ op: 'incr', board, member: truth[5].member, delta: 1 });
  assert.equal(w.op, 'ack');
  const after = mergedTruth(await readShards(cli, board, SHARDS));
  assert.equal(w.rank, after.findIndex((x) => x.member === truth[5].member) + 1);
  assert.equal(w.score, expected.get(truth[5].member) + 1);
  return { viewer, feed, lastSeq: seq };
}

test('a sharded board on one Redis: exact ranks, windows, pages and a complete feed', { skip, timeout: 120000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, BOARD_SPEC) });
  const cli = (_key, ...args) => redis.cli(...args);
  await feedTest(t, gw, cli, 'sh', { writes: 1200, members: 300 });
  // the writes went to the member's shard, and every shard has some
  for (let i = 0; i < SHARDS; i++) assert.ok(Number(await redis.cli('ZCARD', `rc:{sh#${i}|}:z`)) > 40);
});

test('a sharded feed resumes from its cursor, on any gateway, with exactly what it missed', { skip, timeout: 60000 }, async (t) => {
  const redis = await h.startRedis(t);
  const config = h.configWith(t, BOARD_SPEC);
  const gw1 = await h.startGateway(t, { redisPort: redis.port, config });
  const gw2 = await h.startGateway(t, { redisPort: redis.port, config });
  const writer = await h.connectWs(t, gw1.wsUrl);
  for (let i = 0; i < 40; i++) assert.equal((await writer.request({ op: 'incr', board: 'sh', member: `r:${i}`, delta: i + 1 })).op, 'ack');
  const a = await h.connectWs(t, gw1.wsUrl);
  const snap = await a.request({ op: 'subscribe', board: 'sh', view: { feed: true } });
  assert.equal(snap.seq, 40);
  const feed = feedOf(a, snap.sub);
  for (let i = 0; i < 20; i++) await writer.request({ op: 'incr', board: 'sh', member: `r:${i}`, delta: 100 });
  await h.waitFor(() => feed.events.length === 20, 5000, '20 events');
  const lastEv = feed.events[19];
  await a.close();
  // missed while away: 30 changes over every shard
  const missed = [];
  for (let i = 0; i < 30; i++) {
    const m = `r:${(i * 7) % 40}`;
    const ack = await writer.request({ op: 'incr', board: 'sh', member: m, delta: 1000 });
    missed.push(`${m}@${ack.score}`);
  }
  // resume on the other gateway from the cursor
  const b = await h.connectWs(t, gw2.wsUrl);
  const rs = await b.request({ op: 'subscribe', board: 'sh', view: { feed: true },
    since: { seq: lastEv.seq, epoch: snap.epoch, cursor: lastEv.cursor } });
  assert.equal(rs.op, 'snapshot', JSON.stringify(rs));
  assert.notEqual(rs.reset, true, 'a resume the logs can serve is no reset');
  assert.equal(rs.seq, lastEv.seq);
  const feedB = feedOf(b, rs.sub);
  await h.waitFor(() => feedB.events.length >= 30, 5000, 'the 30 missed events');
  await h.sleep(200);
  assert.deepEqual(feedB.events.map((e) => `${e.member}@${e.score}`).sort(), missed.slice().sort());
  feedB.events.forEach((e, k) => assert.equal(e.seq, lastEv.seq + 1 + k));
  // and live after it
  await writer.request({ op: 'incr', board: 'sh', member: 'r:1', delta: 5 });
  await h.waitFor(() => feedB.events.length === 31, 5000, 'the live event after the replay');
  assert.equal(feedB.events[30].seq, lastEv.seq + 31);
  // a resume with a seq alone cannot be honoured on a sharded board: a reset snapshot, no replay
  const c = await h.connectWs(t, gw2.wsUrl);
  const r2 = await c.request({ op: 'subscribe', board: 'sh', view: { feed: true }, since: { seq: 3 } });
  assert.equal(r2.reset, true);
  // a cursor of another shape is refused
  const r3 = await c.request({ op: 'subscribe', board: 'sh', view: { feed: true }, since: { seq: 3, cursor: ':1.:2' } });
  assert.equal(r3.op, 'error');
  assert.equal(r3.code, 'bad_request');
  // a page too deep to merge is refused, and says why (docs/sharded.md, "Reads")
  const deep = await h.http(gw2.base, 'GET', '/api/v1/boards/sh?offset=9995&limit=10');
  assert.equal(deep.status, 400);
  assert.match(deep.body.message, /within rank 10000/);
  const ok = await h.http(gw2.base, 'GET', '/api/v1/boards/sh?offset=9990&limit=10');
  assert.equal(ok.status, 200);
  const r4 = await c.request({ op: 'subscribe', board: 'sh', view: { offset: 9995, limit: 10 } });
  assert.equal(r4.code, 'bad_request');
  assert.match(r4.message, /within rank 10000/);
});

test('a sharded board on a Redis Cluster: shards on every primary, exact reads, a complete feed', { skip, timeout: 180000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config: h.configWith(t, BOARD_SPEC) });
  const cli = async (key, ...args) => cluster.cli(await cluster.owner(key), ...args);
  const owners = new Set();
  for (let i = 0; i < SHARDS; i++) owners.add(await cluster.owner(`rc:{sh#${i}|}:z`));
  assert.equal(owners.size, 3, 'the 4 shards of sh sit on all 3 primaries');
  await feedTest(t, gw, cli, 'sh', { writes: 600, members: 300 });
});

test('bad shards config is refused at start with file:line', { skip, timeout: 60000 }, async (t) => {
  const start = (file) => new Promise((resolve) => {
    execFile(h.gatewayBin(), ['--config', file, '--listen', '127.0.0.1:1', '--redis', '127.0.0.1:1'],
      { timeout: 10000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout + stderr }));
  });
  const cases = [
    [{ 'board global': { shards: 65 } }, /rankcast\.conf:\d+: shards must be an integer from 2 to 64/],
    [{ 'board global': { shards: 1 } }, /rankcast\.conf:\d+: shards must be an integer from 2 to 64/],
    [{ 'board global': { shards: 'eight' } }, /rankcast\.conf:\d+: shards must be an integer/],
    [{ 'board hot': { shards: 4 } }, /rankcast\.conf:\d+: shards cannot be combined with decay/],
    [{ 'board arena': { shards: 4 } }, /rankcast\.conf:\d+: shards cannot be combined with tiebreak = arrival/],
    [{ 'board burst': { shards: 4 } }, /rankcast\.conf:\d+: shards cannot be combined with write_mode = queued/],
  ];
  for (const [spec, re] of cases) {
    const res = await start(h.configWith(t, spec));
    assert.notEqual(res.code, 0, JSON.stringify(spec));
    assert.match(res.out, re, JSON.stringify(spec));
  }
});

test('a Redis outage on a sharded board: the feed resumes from its cursor with every change once, windows equal the truth again', { skip, timeout: 90000 }, async (t) => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-sharded-faults-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const AOF = ['--appendonly', 'yes', '--appendfsync', 'always'];
  let redis = await h.startRedis(t, { dir, args: AOF });
  const port = redis.port;
  const gw = await h.startGateway(t, { redisPort: port, config: h.configWith(t, BOARD_SPEC) });
  const viewer = await h.connectWs(t, gw.wsUrl);
  const top = await viewer.request({ op: 'subscribe', board: 'sh', view: { top: 10 } });
  const snap = await viewer.request({ op: 'subscribe', board: 'sh', view: { feed: true } });
  const vTop = Object.assign(windowOf(viewer, top.sub), { first: 1, size: 10 });
  vTop.list = top.rows.map((r) => ({ member: r.member, score: r.score }));
  const feed = feedOf(viewer, snap.sub);
  const writer = await h.connectWs(t, gw.wsUrl);
  const expected = new Map();
  let n = 0;
  const write = async () => {
    const member = `o:${n % 40}`;
    const r = await writer.request({ op: 'incr', board: 'sh', member, delta: 1 + (n % 9), req: `o-${n}` }, 5000);
    if (r.op === 'ack') expected.set(member, r.score);
    n++;
    return r;
  };
  for (let i = 0; i < 120; i++) assert.equal((await write()).op, 'ack');
  await redis.stop();
  for (let i = 0; i < 5; i++) assert.equal((await write()).code, 'unavailable');
  redis = await h.startRedis(t, { port, dir, args: AOF });
  await h.waitFor(async () => (await write()).op === 'ack', 15000, 'a write to succeed again');
  for (let i = 0; i < 60; i++) assert.equal((await write()).op, 'ack');
  // every change once, numbered without a gap: what the outage hid came from the logs
  let total = 0;
  for (let i = 0; i < SHARDS; i++) total += Number(await redis.cli('GET', `rc:{sh#${i}|}:seq`));
  await h.waitFor(() => feed.events.length && feed.events.at(-1).seq === total, 15000, 'the feed to catch up');
  const seqs = feed.events.map((e) => e.seq);
  assert.deepEqual(seqs, Array.from({ length: total }, (_, i) => i + 1));
  assert.ok(!feed.snapshots.some((s) => s.reset), 'a resume the logs can serve is no reset');
  const last = new Map();
  for (const e of feed.events) last.set(e.member, e.score);
  for (const [m, s] of expected) assert.equal(last.get(m), s);
  // the window: a fresh snapshot, then the merged truth
  const truth = mergedTruth(await readShards((_k, ...a) => redis.cli(...a), 'sh', SHARDS));
  await h.waitFor(() => JSON.stringify(vTop.list.map((x) => x.member)) ===
    JSON.stringify(truth.slice(0, 10).map((x) => x.member)), 10000, 'the top view to equal the truth');
});

/* calls of a Redis command so far, scripts' included (INFO commandstats) */
async function commandCalls(redis, cmd) {
  const text = await redis.cli('INFO', 'commandstats');
  const m = new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

test('a sharded board\'s top view is cut from its mirror: a burst of writes reads no window from Redis, ' +
  'and a change made outside the script on a shard reaches the window', { skip, timeout: 60000 }, async (t) => {
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, BOARD_SPEC) });
  const viewer = await h.connectWs(t, gw.wsUrl);
  const writer = await h.connectWs(t, gw.wsUrl);
  // every shard's history begun (a first change makes the mirror read again)
  const members = [];
  for (let k = 0; members.length < 60; k++) members.push(`q:${k}`);
  for (const m of members) assert.equal((await writer.request({ op: 'incr', board: 'sh', member: m, delta: 1 })).op, 'ack');
  for (let i = 0; i < SHARDS; i++) assert.ok(members.some((m) => shardOf(m, SHARDS) === i));
  const top = await viewer.request({ op: 'subscribe', board: 'sh', view: { top: 10 } });
  assert.equal(top.op, 'snapshot', JSON.stringify(top));
  const v = Object.assign(windowOf(viewer, top.sub), { first: 1, size: 10 });
  v.list = top.rows.map((r) => ({ member: r.member, score: r.score }));
  await h.sleep(300);

  // (ZRANGE is read.lua's alone: the window reads and the mirror's reloads)
  const before = await commandCalls(redis, 'zrange');
  let seed = 7;
  for (let w = 0; w < 400; w++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 1;
    const m = members[seed % members.length];
    await writer.request({ op: 'incr', board: 'sh', member: m, delta: 1 + (seed % 20) });
    if (w % 40 === 0) await h.sleep(30); // a burst over many ticks
  }
  const truth = mergedTruth(await readShards((_key, ...a) => redis.cli(...a), 'sh', SHARDS));
  const want = JSON.stringify(truth.slice(0, 10).map((x) => x.member));
  await h.waitFor(() => JSON.stringify(v.list.map((x) => x.member)) === want, 5000, 'the top view to equal the merged truth')
    .catch((e) => { t.diagnostic(`view ${JSON.stringify(v.list)} truth ${JSON.stringify(truth.slice(0, 10))}`); throw e; });
  const reads = (await commandCalls(redis, 'zrange')) - before;
  t.diagnostic(`ZRANGE calls during 400 writes: ${reads}; top view: ${v.snapshots} snapshots, ${v.deltas} deltas`);
  assert.ok(v.deltas > 3, 'the top view moved with deltas');
  assert.ok(reads <= 2 * SHARDS, `the top view is cut from the mirror, not read per tick (${reads} ZRANGE calls)`);

  // a change made outside the script, on one shard's set: the mirror is read again
  for (const [cmd, label] of [['ZADD', 'a ZADD'], ['ZREM', 'a ZREM']]) {
    const cur = mergedTruth(await readShards((_key, ...a) => redis.cli(...a), 'sh', SHARDS));
    const m = cmd === 'ZADD' ? 'outsider' : cur[0].member;
    const key = `rc:{sh#${shardOf(m, SHARDS)}|}:z`;
    if (cmd === 'ZADD') await redis.cli('ZADD', key, String(cur[0].c + 1e9), m);
    else await redis.cli('ZREM', key, m);
    const after = mergedTruth(await readShards((_key, ...a) => redis.cli(...a), 'sh', SHARDS));
    const w2 = JSON.stringify(after.slice(0, 10).map((x) => x.member));
    await h.waitFor(() => JSON.stringify(v.list.map((x) => x.member)) === w2, 5000,
      `${label} made outside the script to reach the top view`);
  }
});
