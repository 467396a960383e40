/* sharded_writes.test.js - what writes to and administers a sharded board
 * (docs/sharded.md; the shipped `global`, shards = 8): each write lands in
 * its member's shard rc:{global#i|}:z (i = FNV-1a of the member, modulo 8),
 * req duplicates and refusals are answered as on any board, a reset empties
 * every shard, a remove and a reverse reach the member's shard, freeze is
 * refused, and `rankcast export` / `import` round-trip the board merged.
 *
 * Tests named "(merged reads)" check what the ack's rank and seq say
 * against the global rank computed here from every shard's keys: they need
 * store/gw_read's merged reads of sharded boards. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');
const shardTool = require('./shard_tool');

const { runTool } = shardTool;

const skip = h.toolMissing(h.gatewayMissing());
const BOARD = 'global';
const SHARDS = 8;
const SCALE = 2 ** 29; // global's tie-break: 1 s over 3650 d -> 29 bits under the points

const shardOf = (member, shards = SHARDS) => shardTool.shardOf(member, shards);
const key = (i, suffix) => `rc:{${BOARD}#${i}|}:${suffix}`;

/* Members spread over every shard: the first n names "p:K" with K counting up. */
function membersOnEveryShard(perShard) {
  const seen = new Map();
  const out = [];
  for (let k = 0; out.length < perShard * SHARDS; k++) {
    const m = `p:${k}`;
    const s = shardOf(m);
    if ((seen.get(s) || 0) < perShard) {
      seen.set(s, (seen.get(s) || 0) + 1);
      out.push(m);
    }
  }
  return out;
}

/* Every row of every shard: { member, c, shard }. */
async function shardRows(redis) {
  const rows = [];
  for (let i = 0; i < SHARDS; i++) {
    const text = await redis.cli('ZRANGE', key(i, 'z'), '0', '-1', 'WITHSCORES');
    const parts = text === '' ? [] : text.split('\n');
    for (let k = 0; k < parts.length; k += 2) rows.push({ member: parts[k], c: Number(parts[k + 1]), shard: i });
  }
  return rows;
}

/* docs/sharded.md, "The merged order" (a desc board): composite, then the
 * lower shard, then Redis's order of equal scores (ZRANGE REV: the greater
 * member first). */
function mergedOrder(rows) {
  return [...rows].sort((a, b) => (b.c - a.c) || (a.shard - b.shard) || (a.member < b.member ? 1 : a.member > b.member ? -1 : 0));
}
const globalRank = (rows, member) => mergedOrder(rows).findIndex((r) => r.member === member) + 1;

async function seqSum(redis) {
  let sum = 0;
  for (let i = 0; i < SHARDS; i++) sum += Number((await redis.cli('GET', key(i, 'seq'))) || '0');
  return sum;
}

async function stack(t) {
  const { redis, gw } = await h.startStack(t);
  const ws = await h.connectWs(t, gw.wsUrl); // the admin key: every scope
  return { redis, gw, ws };
}

test('a write lands in its member\'s shard and nowhere else, acked with the script\'s score', { skip }, async (t) => {
  const { redis, ws } = await stack(t);
  const members = membersOnEveryShard(2);
  for (const [k, m] of members.entries()) {
    const ack = await ws.request({ op: 'incr', board: BOARD, member: m, delta: 10 + k });
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    assert.equal(ack.board, BOARD);
    assert.equal(ack.member, m);
    assert.equal(ack.score, 10 + k);
    assert.equal(ack.duplicate, false);
  }
  for (const m of members) {
    for (let i = 0; i < SHARDS; i++) {
      const score = await redis.cli('ZSCORE', key(i, 'z'), m);
      if (i === shardOf(m)) assert.notEqual(score, '', `${m} on its shard ${i}`);
      else assert.equal(score, '', `${m} is not on shard ${i}`);
    }
  }
  assert.equal(await redis.cli('EXISTS', `rc:{${BOARD}|}:z`), '0'); // the board's own name holds nothing
  // each shard's seq counts its own writes
  for (let i = 0; i < SHARDS; i++) assert.equal(await redis.cli('GET', key(i, 'seq')), '2');
  // set and best go to the same shard
  const m = members[3];
  assert.equal((await ws.request({ op: 'set', board: BOARD, member: m, value: 500 })).score, 500);
  assert.equal((await ws.request({ op: 'best', board: BOARD, member: m, value: 400 })).score, 500);
  assert.equal(Math.floor(Number(await redis.cli('ZSCORE', key(shardOf(m), 'z'), m)) / SCALE), 500);
});

test('a retried write with the same req is a duplicate on a sharded board', { skip }, async (t) => {
  const { redis, ws, gw } = await stack(t);
  const m = 'user:retry';
  const first = await ws.request({ op: 'incr', board: BOARD, member: m, delta: 7, req: 'r-1' });
  assert.equal(first.duplicate, false);
  const again = await ws.request({ op: 'incr', board: BOARD, member: m, delta: 7, req: 'r-1' });
  assert.equal(again.op, 'ack');
  assert.equal(again.duplicate, true);
  assert.equal(again.score, 7);
  const rest = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/scores`, { member: m, op: 'incr', delta: 7, req: 'r-1' });
  assert.equal(rest.status, 200, rest.text);
  assert.equal(rest.body.duplicate, true);
  assert.equal(await redis.cli('GET', key(shardOf(m), 'seq')), '1');
  assert.equal(Math.floor(Number(await redis.cli('ZSCORE', key(shardOf(m), 'z'), m)) / SCALE), 7);
});

test('out_of_range and bad ops are answered as on any board, and write nothing', { skip }, async (t) => {
  const { redis, ws, gw } = await stack(t);
  await ws.request({ op: 'set', board: BOARD, member: 'user:top', value: 16777000 });
  const before = await redis.fingerprint();
  const over = await ws.request({ op: 'incr', board: BOARD, member: 'user:top', delta: 1000 }); // the script's check
  assert.equal(over.op, 'error');
  assert.equal(over.code, 'out_of_range', JSON.stringify(over));
  const big = await ws.request({ op: 'set', board: BOARD, member: 'user:x', value: 99999999 }); // before Redis
  assert.equal(big.code, 'out_of_range');
  const submit = await ws.request({ op: 'submit', board: BOARD, member: 'user:x', fields: { a: 1 } });
  assert.equal(submit.code, 'bad_request');
  assert.doesNotMatch(submit.message, /#/); // messages name the board, never a shard
  const rest = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/scores`, { member: 'user:top', op: 'incr', delta: 1000 });
  assert.equal(rest.status, 422, rest.text);
  assert.equal(await redis.fingerprint(), before);
});

test('a blocked member of a sharded board is refused, and unblocked again, on its shard', { skip }, async (t) => {
  const { redis, ws } = await stack(t);
  const m = 'user:cheat';
  await ws.request({ op: 'incr', board: BOARD, member: m, delta: 99 });
  const removed = await ws.request({ op: 'remove', board: BOARD, member: m, block: true });
  assert.equal(removed.op, 'removed', JSON.stringify(removed));
  assert.equal(removed.blocked, true);
  assert.equal(await redis.cli('ZSCORE', key(shardOf(m), 'z'), m), '');
  assert.equal(await redis.cli('SISMEMBER', key(shardOf(m), 'blocked'), m), '1');
  const refused = await ws.request({ op: 'incr', board: BOARD, member: m, delta: 1 });
  assert.equal(refused.code, 'forbidden');
  assert.equal((await ws.request({ op: 'unblock', board: BOARD, member: m })).op, 'unblocked');
  assert.equal((await ws.request({ op: 'incr', board: BOARD, member: m, delta: 1 })).op, 'ack');
});

test('a remove takes the member off its shard only', { skip }, async (t) => {
  const { redis, ws } = await stack(t);
  const members = membersOnEveryShard(1);
  for (const m of members) await ws.request({ op: 'incr', board: BOARD, member: m, delta: 5 });
  const gone = members[5];
  const ans = await ws.request({ op: 'remove', board: BOARD, member: gone });
  assert.equal(ans.op, 'removed', JSON.stringify(ans));
  const rows = await shardRows(redis);
  assert.deepEqual(rows.map((r) => r.member).sort(), members.filter((m) => m !== gone).sort());
  assert.equal(await redis.cli('GET', key(shardOf(gone), 'seq')), '2'); // the write, then the remove
});

test('a reverse finds its req on the member\'s shard, whichever it is', { skip }, async (t) => {
  const { redis, ws } = await stack(t);
  const members = membersOnEveryShard(1);
  const m = members.find((x) => shardOf(x) === SHARDS - 1); // the last shard asked
  await ws.request({ op: 'incr', board: BOARD, member: m, delta: 10 });
  await ws.request({ op: 'incr', board: BOARD, member: m, delta: 25, req: 'w-rev' });
  const rev = await ws.request({ op: 'reverse', board: BOARD, req: 'w-rev' });
  assert.equal(rev.op, 'reversed', JSON.stringify(rev));
  assert.equal(rev.member, m);
  assert.equal(rev.score, 10);
  assert.equal(Math.floor(Number(await redis.cli('ZSCORE', key(shardOf(m), 'z'), m)) / SCALE), 10);
  const again = await ws.request({ op: 'reverse', board: BOARD, req: 'w-rev' });
  assert.equal(again.op, 'reversed'); // already done: not applied twice
  assert.equal(again.score, 10);
  const none = await ws.request({ op: 'reverse', board: BOARD, req: 'never-written' });
  assert.equal(none.code, 'bad_request');
  assert.match(none.message, /no write with that req/);
});

test('a reset of a sharded board empties every shard and answers the sum of their seqs', { skip }, async (t) => {
  const { redis, ws, gw } = await stack(t);
  for (const m of membersOnEveryShard(2)) await ws.request({ op: 'incr', board: BOARD, member: m, delta: 3 });
  const reset = await ws.request({ op: 'reset', board: BOARD });
  assert.equal(reset.op, 'board_reset', JSON.stringify(reset));
  for (let i = 0; i < SHARDS; i++) assert.equal(await redis.cli('EXISTS', key(i, 'z')), '0', `shard ${i}`);
  assert.equal(reset.seq, await seqSum(redis));
  assert.equal(reset.seq, 2 * SHARDS + SHARDS); // two writes and a reset per shard
  // over REST too; a board with nothing left resets as it stands
  await ws.request({ op: 'incr', board: BOARD, member: 'user:after', delta: 1 });
  const rest = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/reset`);
  assert.equal(rest.status, 200, rest.text);
  assert.equal(await redis.cli('EXISTS', key(shardOf('user:after'), 'z')), '0');
});

test('freeze and reveal are refused on a sharded board, on WebSocket and REST', { skip }, async (t) => {
  const { redis, ws, gw } = await stack(t);
  await ws.request({ op: 'incr', board: BOARD, member: 'user:a', delta: 1 });
  const before = await redis.fingerprint();
  for (const op of ['freeze', 'reveal']) {
    const ans = await ws.request(op === 'reveal' ? { op, board: BOARD, steps: 1 } : { op, board: BOARD });
    assert.equal(ans.op, 'error');
    assert.equal(ans.code, 'bad_request');
    assert.match(ans.message, /freeze is not supported on sharded boards/);
    const rest = await h.http(gw.base, 'POST', `/api/v1/boards/${BOARD}/${op}`);
    assert.equal(rest.status, 400, rest.text);
    assert.match(rest.body.message, /freeze is not supported on sharded boards/);
  }
  assert.equal(await redis.fingerprint(), before);
});

/* ---- the CLI ------------------------------------------------------------------- */

const cli = (args, input) => runTool(args, input);
const parseJsonl = (text) => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

test('import routes each row to its shard, export streams the board merged in rank order, and they round-trip',
  { skip, timeout: 180000 }, async (t) => {
    const { redis, ws } = await stack(t);
    const seeds = `127.0.0.1:${redis.port}`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-sharded-'));
    h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
    // more rows than one page of the export (1,000) on every shard, with ties across shards
    const members = membersOnEveryShard(1100);
    const file = path.join(dir, 'in.csv');
    fs.writeFileSync(file, 'member,score\n' + members.map((m, k) => `${m},${k % 700}\n`).join(''));
    const imp = await cli(['import', BOARD, file, '--quiet', '--redis', seeds]);
    assert.equal(imp.code, 0, imp.stderr);
    assert.match(imp.stderr, new RegExp(`${members.length} rows written`));
    const stored = await shardRows(redis);
    assert.equal(stored.length, members.length);
    for (const r of stored) assert.equal(r.shard, shardOf(r.member), r.member);
    assert.equal(await redis.cli('EXISTS', `rc:{${BOARD}|}:z`), '0');

    const exp = await cli(['export', BOARD, '--format', 'jsonl', '--redis', seeds]);
    assert.equal(exp.code, 0, exp.stderr);
    assert.equal(exp.stderr, '');
    const rows = parseJsonl(exp.stdout);
    const expected = mergedOrder(stored);
    assert.equal(rows.length, members.length);
    assert.ok(rows.every((r, i) => r.rank === i + 1), 'ranks 1..N');
    assert.deepEqual(rows.map((r) => r.member), expected.map((r) => r.member));
    assert.deepEqual(rows.map((r) => r.score), expected.map((r) => Math.floor(r.c / SCALE)));

    // a rerun of the import is all duplicates (each row's req is remembered by its shard)
    const seq = await seqSum(redis);
    const rerun = await cli(['import', BOARD, file, '--quiet', '--redis', seeds]);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.match(rerun.stderr, new RegExp(`${members.length} were duplicates`));
    assert.equal(await seqSum(redis), seq);
    assert.deepEqual(await shardRows(redis), stored);

    // the export (csv) loads back into the emptied board, each member on its shard with its points
    const csv = await cli(['export', BOARD, '--redis', seeds]);
    assert.equal(csv.code, 0, csv.stderr);
    assert.equal((await ws.request({ op: 'reset', board: BOARD })).op, 'board_reset');
    assert.equal((await shardRows(redis)).length, 0);
    const copy = path.join(dir, 'export.csv');
    fs.writeFileSync(copy, csv.stdout);
    const back = await cli(['import', BOARD, copy, '--quiet', '--redis', seeds]);
    assert.equal(back.code, 0, back.stderr);
    const again = await shardRows(redis);
    assert.equal(again.length, members.length);
    for (const r of again) assert.equal(r.shard, shardOf(r.member), r.member);
    const points = new Map(again.map((r) => [r.member, Math.floor(r.c / SCALE)]));
    for (const r of rows) assert.equal(points.get(r.member), r.score, r.member);
  });

/* ---- global ranks: need store/gw_read's merged reads ----------------------------- */

test('(merged reads) acks carry the global rank and the sum of the shards\' seqs', { skip }, async (t) => {
  const { redis, ws } = await stack(t);
  const members = membersOnEveryShard(3);
  for (const [k, m] of members.entries()) {
    // equal points across shards too (k % 5): the shard index orders them
    const ack = await ws.request({ op: 'set', board: BOARD, member: m, value: (k % 5) * 10 });
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    const rows = await shardRows(redis);
    assert.equal(ack.rank, globalRank(rows, m), `${m}: global rank`);
    assert.equal(ack.seq, await seqSum(redis), `${m}: merged seq`);
  }
  const m = members[7];
  const dup = await ws.request({ op: 'incr', board: BOARD, member: m, delta: 1, req: 'q' });
  const again = await ws.request({ op: 'incr', board: BOARD, member: m, delta: 1, req: 'q' });
  assert.equal(again.duplicate, true);
  assert.equal(again.rank, dup.rank);
  assert.equal(again.rank, globalRank(await shardRows(redis), m));
});

test('(merged reads) a remove and a reverse answer the board\'s seq and the global rank', { skip }, async (t) => {
  const { redis, ws } = await stack(t);
  const members = membersOnEveryShard(2);
  for (const [k, m] of members.entries()) await ws.request({ op: 'incr', board: BOARD, member: m, delta: k });
  const target = members[9];
  await ws.request({ op: 'incr', board: BOARD, member: target, delta: 100, req: 'big' });
  const rev = await ws.request({ op: 'reverse', board: BOARD, req: 'big' });
  assert.equal(rev.rank, globalRank(await shardRows(redis), target));
  assert.equal(rev.seq, await seqSum(redis));
  const rm = await ws.request({ op: 'remove', board: BOARD, member: members[0] });
  assert.equal(rm.seq, await seqSum(redis));
});

test('a write whose global rank cannot be read after it is acked with rank null and rank_unknown', { skip }, async (t) => {
  const { redis, ws } = await stack(t);
  // every other shard's set made a string: the ZCOUNT read after the write
  // (store/gw_read_ahead.c) fails with WRONGTYPE, the write on user:u's shard
  // does not touch them
  for (let i = 0; i < SHARDS; i++) if (i !== shardOf('user:u')) await redis.cli('SET', key(i, 'z'), 'x');
  const ack = await ws.request({ op: 'incr', board: BOARD, member: 'user:u', delta: 42, req: 'u1' });
  assert.equal(ack.op, 'ack', JSON.stringify(ack));
  assert.equal(ack.score, 42);
  assert.equal(ack.rank, null);
  assert.equal(ack.seq, null);
  assert.equal(ack.rank_unknown, true);
  assert.equal(ack.duplicate, false);
  // the write stands: a retry with its req is a duplicate, not a second increment
  const again = await ws.request({ op: 'incr', board: BOARD, member: 'user:u', delta: 42, req: 'u1' });
  assert.equal(again.duplicate, true);
  assert.equal(again.score, 42);
  assert.equal(Math.floor(Number(await redis.cli('ZSCORE', key(shardOf('user:u'), 'z'), 'user:u')) / SCALE), 42);
});
