/* sharded_reset.test.js - a reset of a sharded board that fails part-way
 * and is finished by a second reset (docs/sharded.md, "Admin operations":
 * "A reset that fails part-way answers unavailable with how many of the S
 * shards were reset. Sending the reset again resets them all").
 *
 * The shipped `global` (8 shards). Two ways to break it between shards:
 *  - one shard holds a key of the wrong type (its seq a hash): the admin
 *    script fails there with WRONGTYPE, on one redis-server;
 *  - the Redis link of one shard breaks: on a 3-primary cluster the primary
 *    of the first shard that is not on shard 0's primary is paused (CLIENT
 *    PAUSE), so the gateway's call there and its PINGs go unanswered and it
 *    drops the link (ping timeout, 3 s) after shards 0..k-1 were reset.
 * Either way, afterwards: the answer named how many shards were reset, the
 * second reset empties every shard, the board has one epoch (the same for
 * a REST read, the viewers and a new subscriber, unchanged by the writes
 * after it), window and feed viewers get a "reset": true snapshot of the
 * empty board, and every write acked after the second reset is on the
 * board with its exact score. No timing targets: every wait is a condition. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { shardOf } = require('./shard_tool');
const { applyDelta } = require('../../web/rankcast.js');

const skip = h.toolMissing(h.gatewayMissing());
const BOARD = 'global';
const SHARDS = 8;
const key = (i, suffix) => `rc:{${BOARD}#${i}|}:${suffix}`;

/* perShard members on every shard: "p:K" with K counting up. */
function membersOnEveryShard(perShard, prefix = 'p:') {
  const seen = new Map();
  const out = [];
  for (let k = 0; out.length < perShard * SHARDS; k++) {
    const m = `${prefix}${k}`;
    const s = shardOf(m, SHARDS);
    if ((seen.get(s) || 0) < perShard) {
      seen.set(s, (seen.get(s) || 0) + 1);
      out.push(m);
    }
  }
  return out;
}

/* A command on the node holding key: one server, or the slot's primary. */
function on(stack) {
  if (stack.redis) return (k, ...args) => stack.redis.cli(...args);
  return async (k, ...args) => stack.cluster.cli(await stack.cluster.owner(k), ...args);
}

async function shardState(run) {
  const out = [];
  for (let i = 0; i < SHARDS; i++) {
    out.push({
      z: Number(await run(key(i, 'z'), 'EXISTS', key(i, 'z'))),
      card: Number(await run(key(i, 'z'), 'ZCARD', key(i, 'z'))),
      epoch: await run(key(i, 'epoch'), 'HGET', key(i, 'epoch'), 'id'),
    });
  }
  return out;
}

/* Every member written once with its own req, on every shard; the viewers
 * (a top 10 window and a feed) subscribed before. Returns what the story
 * needs after the break. */
async function before(t, stack, gw) {
  const admin = await h.connectWs(t, gw.wsUrl);
  for (const [k, m] of membersOnEveryShard(2, 'old:').entries()) {
    const ack = await admin.request({ op: 'incr', board: BOARD, member: m, delta: 10 + k, req: `old-${k}` }, 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
  }
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const top = await viewer.request({ op: 'subscribe', board: BOARD, view: { top: 10 } }, 10000);
  assert.equal(top.op, 'snapshot', JSON.stringify(top));
  assert.equal(top.total, 2 * SHARDS);
  // the window as a client keeps it: snapshots replace it, deltas apply by the PROTOCOL rule
  const win = { rows: top.rows, broken: null };
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub !== top.sub) return;
    if (m.op === 'snapshot') win.rows = m.rows;
    else if (m.op === 'delta') {
      const next = applyDelta(win.rows, m, 1, 10);
      if (!next) win.broken = `delta did not apply: ${JSON.stringify(m)}`;
      else win.rows = next;
    }
  });
  const feed = await viewer.request({ op: 'subscribe', board: BOARD, view: { feed: true } }, 10000);
  assert.equal(feed.op, 'snapshot', JSON.stringify(feed));
  const epochs = (await shardState(on(stack))).map((s) => s.epoch);
  assert.ok(epochs.every((e) => e), 'every shard has an epoch before the reset');
  return { admin, viewer, top, win, feed, epochs };
}

/* The second reset and everything the contract promises after it. */
async function finish(t, stack, gw, ctx) {
  const { admin, viewer, top, win, feed, epochs } = ctx;
  const run = on(stack);
  const mark = viewer.messages.length;
  let second;
  // the link may still be coming back (a cluster node paused): send again while unavailable
  await h.waitFor(async () => {
    second = await admin.request({ op: 'reset', board: BOARD }, 20000);
    return second.op === 'board_reset' || second.code !== 'unavailable';
  }, 60000, 'the second reset to be answered');
  assert.equal(second.op, 'board_reset', JSON.stringify(second));

  const after = await shardState(run);
  after.forEach((s, i) => assert.equal(s.z, 0, `shard ${i} is empty after the second reset`));
  after.forEach((s, i) => assert.notEqual(s.epoch, epochs[i], `shard ${i} has a new epoch`));
  let seqSum = 0;
  for (let i = 0; i < SHARDS; i++) seqSum += Number((await run(key(i, 'seq'), 'GET', key(i, 'seq'))) || '0');
  assert.equal(second.seq, seqSum, 'the answer\'s seq is the sum of the shards\' seqs');

  // viewers: a reset snapshot of the empty board, on the window and on the feed
  const fresh = (sub) => (m) => viewer.messages.indexOf(m) >= mark && m.sub === sub && m.op === 'snapshot' &&
    m.reset === true && m.total === 0;
  const topReset = await viewer.next(fresh(top.sub), 20000);
  const feedReset = await viewer.next(fresh(feed.sub), 20000);
  assert.deepEqual(topReset.rows, []);
  assert.deepEqual(feedReset.rows, []);

  // one epoch: REST, both viewers and a new subscriber agree
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}?top=10`);
  assert.equal(rest.status, 200, rest.text);
  assert.equal(rest.body.total, 0);
  assert.ok(rest.body.epoch, `the read says the board's epoch: ${rest.text}`);
  assert.equal(topReset.epoch, rest.body.epoch, 'the window\'s reset snapshot has the board\'s epoch');
  assert.equal(feedReset.epoch, rest.body.epoch, 'the feed\'s reset snapshot has the board\'s epoch');
  assert.notEqual(rest.body.epoch, top.epoch, 'the board\'s epoch changed');

  // writes acked after the second reset: none lost, each counted once (a retry by req is a duplicate)
  const members = membersOnEveryShard(2, 'new:');
  const sums = new Map();
  for (const [k, m] of members.entries()) {
    for (const r of [0, 1]) {
      const w = { op: 'incr', board: BOARD, member: m, delta: 1 + ((k + r) % 7), req: `new-${k}-${r}` };
      const ack = await admin.request(w, 10000);
      assert.equal(ack.op, 'ack', JSON.stringify(ack));
      sums.set(m, (sums.get(m) || 0) + w.delta);
      if (r === 1) assert.equal((await admin.request(w, 10000)).duplicate, true, `${w.req} sent again`);
    }
  }
  const board = (await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}?top=1000`)).body;
  assert.equal(board.total, members.length, 'the board holds exactly the writes after the reset');
  assert.deepEqual(new Map(board.rows.map((r) => [r.member, r.score])), sums);
  assert.equal(board.epoch, rest.body.epoch, 'the writes continue the reset\'s history (one epoch)');
  const late = await viewer.request({ op: 'subscribe', board: BOARD, view: { top: 10 } }, 10000);
  assert.equal(late.epoch, rest.body.epoch, 'a new subscriber sees the same epoch');
  // the window (from before the resets) follows to the board's top 10
  const want = board.rows.slice(0, 10).map((r) => `${r.member}=${r.score}`).join(' ');
  const shown = () => win.rows.map((r) => `${r.member}=${r.score}`).join(' ');
  await h.waitFor(() => win.broken || shown() === want, 20000, `the window to show the writes after the reset: ${want}`)
    .catch((e) => { throw new Error(`${e.message}\n  shown: ${shown()}`); });
  assert.equal(win.broken, null);
  return { second };
}

test('a sharded reset broken by a wrong-type key on one shard answers how many were reset; a second reset finishes it',
  { skip, timeout: 120000 }, async (t) => {
    const stack = await h.startStack(t);
    const { redis, gw } = stack;
    const ctx = await before(t, stack, gw);
    const BROKEN = 5;
    // shard 5's seq a hash: the admin script's INCR fails there (WRONGTYPE)
    const seq5 = await redis.cli('GET', key(BROKEN, 'seq'));
    await redis.cli('DEL', key(BROKEN, 'seq'));
    await redis.cli('HSET', key(BROKEN, 'seq'), 'x', '1');

    const first = await ctx.admin.request({ op: 'reset', board: BOARD }, 10000);
    assert.equal(first.op, 'error', JSON.stringify(first));
    assert.match(first.message, new RegExp(`${BROKEN} of ${SHARDS} shards of board ${BOARD} were reset; send the reset again`),
      first.message);
    // the cause comes after, as a stable message: never Redis' own text (issue 23)
    assert.match(first.message, /\(the admin script: Redis refused the operation/, 'the cause comes after');
    assert.doesNotMatch(first.message, /WRONGTYPE/, 'no Redis reply text in an error');
    const mid = await shardState(on(stack));
    for (let i = 0; i < BROKEN; i++) assert.equal(mid[i].z, 0, `shard ${i} was reset by the first reset`);
    for (let i = BROKEN + 1; i < SHARDS; i++) assert.equal(mid[i].card, 2, `shard ${i} was not reached`);

    // the operator repairs the key; the reset sent again finishes the job
    await redis.cli('DEL', key(BROKEN, 'seq'));
    await redis.cli('SET', key(BROKEN, 'seq'), seq5);
    await finish(t, stack, gw, ctx);
  });

test('a sharded reset whose Redis link breaks on one cluster node answers how many were reset; a second reset finishes it',
  { skip, timeout: 180000 }, async (t) => {
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
    const stack = { cluster };
    const gw = await h.startGateway(t, { redis: cluster.seeds });
    const ctx = await before(t, stack, gw);
    const owners = [];
    for (let i = 0; i < SHARDS; i++) owners.push(await cluster.owner(key(i, 'z')));
    const k = owners.findIndex((p) => p !== owners[0]);
    assert.ok(k > 0, `the shards sit on more than one primary: ${owners}`);

    // the primary of shard k stops answering anyone (not the cluster bus: it
    // stays a healthy primary) for longer than the gateway's ping timeout
    await cluster.cli(owners[k], 'CLIENT', 'PAUSE', '8000', 'ALL');
    const first = await ctx.admin.request({ op: 'reset', board: BOARD }, 30000);
    assert.equal(first.op, 'error', JSON.stringify(first));
    assert.equal(first.code, 'unavailable', JSON.stringify(first));
    assert.match(first.message, new RegExp(`${k} of ${SHARDS} shards of board ${BOARD} were reset; send the reset again`),
      first.message);
    // the pause runs out; then the shards show what the first reset did
    await h.waitFor(async () => {
      try { return (await cluster.cli(owners[k], 'PING')) === 'PONG'; } catch (e) { return false; }
    }, 30000, 'the paused primary to answer again');
    const mid = await shardState(on(stack));
    for (let i = 0; i < k; i++) assert.equal(mid[i].z, 0, `shard ${i} was reset by the first reset`);
    for (let i = k; i < SHARDS; i++) assert.equal(mid[i].card, 2, `shard ${i} was not reset`);

    await finish(t, stack, gw, ctx);
  });
