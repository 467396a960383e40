/* cluster_kill.test.js - a primary killed with SIGKILL (its replica then
 * promoted by the cluster) under writes, on the 3-primary + 3-replica
 * cluster with ack_replicas = 1, for the two boards whose writes do more
 * than one script call on one node:
 *  - a sharded board (the shipped `global`, 8 shards over the primaries):
 *    the killed primary holds some of its shards, the others carry on;
 *  - a queued board (the shipped `burst`, write_mode = queued): the killed
 *    primary holds its stream, its consumer group and its sorted set.
 * Writers send each write again with the same req until it is acked (as
 * docs/cluster.md asks of clients), 3 at once. Before the kill every ack
 * says replicas >= 1 (the replica has it, so the promotion keeps it).
 * Afterwards nothing acked is lost and nothing is applied twice: every
 * member's score is the sum of its distinct acked writes and the board's
 * seq is the number of distinct writes (one change each). Every wait is a
 * condition with a generous deadline. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { shardOf } = require('./shard_tool');

const skip = h.toolMissing(h.gatewayMissing());
const OPEN_LIMITS = { conn_write_rate: 1000000, conn_write_burst: 10000000, key_write_rate: 1000000,
  key_write_burst: 10000000, max_pending: 100000 };
// A WAIT on a live primary with its replica in sync answers at once; the
// timeout bounds the writes to the promoted primary, which has no replica
// left (its writes share one WAIT at a time: the tests at the end).
const WRITERS = 3;
// 1500ms: with 500ms a run beside other work (load 14) saw a queued board's
// first three writes acked with replicas 0 before the kill, which the
// tests take for a premise (assertReplicatedBeforeKill)
const ACK = { ack_replicas: 1, ack_timeout: '1500ms' };

/* One write over REST, sent again with the same req while the answer is
 * unavailable or the request fails (the node is gone, the slot has no
 * primary yet). Returns the ack and how many tries it took. */
async function writeUntilAcked(gw, board, body, deadlineMs = 90000) {
  const t0 = Date.now();
  for (let tries = 1; ; tries++) {
    let r;
    try {
      r = await h.http(gw.base, 'POST', `/api/v1/boards/${encodeURIComponent(board)}/scores`, body, { timeoutMs: 15000 });
    } catch (e) {
      r = { body: { op: 'error', code: 'unavailable', message: String(e) } };
    }
    if (r.body && r.body.op === 'ack') return { ack: r.body, tries };
    if (!r.body || r.body.code !== 'unavailable') throw new Error(`write ${JSON.stringify(body)} to ${board}: ${r.text}`);
    if (Date.now() - t0 > deadlineMs) throw new Error(`write ${JSON.stringify(body)} to ${board}: unavailable for ${deadlineMs} ms`);
    await h.sleep(50);
  }
}

/* `writes` (each { member, delta, req }) sent by WRITERS writers at once; `kill`
 * runs once killAfter of them (default half) are acked, while the rest are
 * in flight. Returns the acks by req and the sums of the acked deltas by
 * member. */
async function writeThroughKill(gw, board, writes, kill, killAfter = writes.length / 2) {
  const acks = new Map();
  let next = 0;
  let killed = null;
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (next < writes.length) {
      const w = writes[next++];
      const { ack, tries } = await writeUntilAcked(gw, board, { member: w.member, op: 'incr', delta: w.delta, req: w.req });
      acks.set(w.req, { ack, tries, beforeKill: !killed }); // acked before the kill was sent
      if (!killed && acks.size >= killAfter) {
        killed = kill();
      }
    }
  }));
  await killed;
  // the kill met writes: some were answered unavailable and sent again by req
  assert.ok([...acks.values()].some((a) => a.tries > 1), 'some writes were sent again after the kill');
  const sums = new Map();
  for (const w of writes) {
    assert.ok(acks.has(w.req), `${w.req} was acked`);
    sums.set(w.member, (sums.get(w.member) || 0) + w.delta);
  }
  return { acks, sums };
}

function plan(members, rounds, prefix) {
  const writes = [];
  for (let r = 0; r < rounds; r++) {
    members.forEach((m, k) => writes.push({ member: m, delta: 1 + ((r * 5 + k) % 9), req: `${prefix}-${r}-${k}` }));
  }
  return writes;
}

async function boardRows(gw, board) {
  const res = await h.http(gw.base, 'GET', `/api/v1/boards/${encodeURIComponent(board)}?top=1000`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const shown = (body) => new Map(body.rows.map((r) => [r.member, r.score]));
const sameSums = (body, sums) => body.rows.length === sums.size && [...sums].every(([m, s]) => shown(body).get(m) === s);

async function metric(gw, name) {
  const res = await h.http(gw.base, 'GET', '/metrics', undefined, { token: h.ADMIN_KEY });
  assert.equal(res.status, 200, res.text);
  const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => '\\' + c)} ([0-9.e+-]+)$`, 'm').exec(res.text);
  return m ? Number(m[1]) : null;
}

function assertReplicatedBeforeKill(acks) {
  const early = [...acks].filter(([, a]) => a.beforeKill);
  assert.ok(early.length > 0, 'writes were acked before the kill');
  const unreplicated = early.filter(([, a]) => !(a.ack.replicas >= 1)).map(([req, a]) => `${req}: ${JSON.stringify(a.ack)}`);
  assert.deepEqual(unreplicated, [], 'every write acked before the kill was acked as replicated');
}

test('a primary holding shards of a sharded board killed under writes: nothing acked lost, nothing applied twice',
  { skip, timeout: 240000 }, async (t) => {
    const BOARD = 'global';
    const SHARDS = 8;
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
    const config = h.configWith(t, { redis: ACK, limits: OPEN_LIMITS });
    const gw = await h.startGateway(t, { redis: cluster.seeds, config });
    const owners = [];
    for (let i = 0; i < SHARDS; i++) owners.push(await cluster.owner(`rc:{${BOARD}#${i}|}:z`));
    assert.ok(new Set(owners).size > 1, `the shards are spread over the primaries: ${owners}`);
    // the primary with the most shards, so the others keep some too
    const victim = [...new Set(owners)].sort((a, b) => owners.filter((o) => o === b).length - owners.filter((o) => o === a).length)[0];
    const victimShards = owners.map((o, i) => (o === victim ? i : -1)).filter((i) => i >= 0);
    const [replica] = await cluster.replicaOf(victim);
    assert.ok(replica, 'the victim has a replica');

    // 3 members on every shard, 8 rounds of writes each
    const members = [];
    for (let k = 0, per = new Map(); members.length < 3 * SHARDS; k++) {
      const m = `k:${k}`;
      const s = shardOf(m, SHARDS);
      if ((per.get(s) || 0) < 3) { per.set(s, (per.get(s) || 0) + 1); members.push(m); }
    }
    const writes = plan(members, 8, 'g');
    const { acks, sums } = await writeThroughKill(gw, BOARD, writes, () => cluster.kill(victim, 'SIGKILL'));
    assertReplicatedBeforeKill(acks);
    assert.equal(await cluster.owner(`rc:{${BOARD}#${victimShards[0]}|}:z`), replica, 'the replica was promoted');
    const again = [...acks.values()].filter((a) => a.tries > 1).length;
    t.diagnostic(`killed ${victim} (shards ${victimShards.join(',')}), ${writes.length} writes acked, ${again} sent again, ` +
      `${[...acks.values()].filter((a) => a.ack.duplicate).length} retries answered duplicate`);

    // writes to the promoted node are acked without a replica: all in now, the board is still
    const body = await boardRows(gw, BOARD);
    assert.deepEqual(shown(body), sums, 'every member\'s score is the sum of its distinct acked writes');
    assert.equal(body.total, members.length);
    assert.equal(body.seq, writes.length, 'one change per distinct write: none applied twice, none lost');
    for (const [i, port] of owners.entries()) {
      const live = port === victim ? replica : port;
      const inShard = members.filter((m) => shardOf(m, SHARDS) === i);
      assert.equal(await cluster.cli(live, 'ZCARD', `rc:{${BOARD}#${i}|}:z`), String(inShard.length), `shard ${i}`);
    }
  });

test('the primary of a queued board killed under writes: every acked entry applied once',
  { skip, timeout: 240000 }, async (t) => {
    const BOARD = 'burst';
    const STREAM = 'rc:{burst|}:in';
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
    const config = h.configWith(t, { redis: ACK, limits: OPEN_LIMITS });
    const gw = await h.startGateway(t, { redis: cluster.seeds, config });
    const victim = await cluster.owner(STREAM);
    assert.equal(await cluster.owner(`rc:{${BOARD}|}:z`), victim, 'the stream shares the board\'s slot');
    const [replica] = await cluster.replicaOf(victim);
    assert.ok(replica, 'the victim has a replica');

    // 100 writes before the kill, 40 after: each write to the promoted
    // primary (no replica left) waits out ack_timeout, WRITERS of them at a
    // time, and the 40 prove what 100 did (every entry queued after the
    // promotion applied once), ~19 s sooner
    const members = Array.from({ length: 20 }, (_, k) => `q:${k}`);
    const writes = plan(members, 7, 'q');
    const { acks, sums } = await writeThroughKill(gw, BOARD, writes, () => cluster.kill(victim, 'SIGKILL'), 100);
    for (const [req, a] of acks) assert.equal(a.ack.queued, true, `${req}: ${JSON.stringify(a.ack)}`);
    assertReplicatedBeforeKill(acks);
    assert.equal(await cluster.owner(STREAM), replica, 'the replica was promoted');
    const again = [...acks.values()].filter((a) => a.tries > 1).length;
    t.diagnostic(`killed ${victim}, ${writes.length} writes acked queued, ${again} sent again, ` +
      `${[...acks.values()].filter((a) => a.ack.duplicate).length} retries answered duplicate`);

    // the queue drains on the promoted primary: every acked entry applied, once
    let body = null;
    let last = null;
    await h.waitFor(async () => {
      last = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}?top=1000`);
      if (last.status !== 200) return false; // the read may meet the promotion too
      return sameSums((body = last.body), sums);
    }, 90000, 'every acked entry applied').catch((e) => {
      const got = body ? shown(body) : new Map();
      const diff = [...sums].filter(([m, s]) => got.get(m) !== s).map(([m, s]) => `${m}: ${got.get(m)} != ${s}`);
      throw new Error(`${e.message}\n  last read: ${last && last.status} ${last && last.text.slice(0, 300)}\n  ${diff.join('\n  ')}`);
    });
    await h.waitFor(async () => (await cluster.cli(replica, 'XLEN', STREAM)) === '0', 30000, 'the stream to empty');
    await h.waitFor(async () => /^0\n/.test(await cluster.cli(replica, 'XPENDING', STREAM, 'rankcast')), 30000,
      'nothing pending');
    body = await boardRows(gw, BOARD);
    assert.deepEqual(shown(body), sums, 'every member\'s score is the sum of its distinct acked writes');
    assert.equal(body.seq, writes.length, 'one change per distinct write: none applied twice, none lost');
    assert.equal(await metric(gw, 'rankcast_queue_dropped_total'), 0, 'no entry refused when applied');
  });

/* Found by the queued test above with ack_timeout 2s and 6 writers: once the
 * killed primary's replica is promoted it has no replica, and every WAIT
 * there runs to ack_timeout. The gateway used to send one WAIT per write on
 * the node's connection, where Redis runs a client's commands in turn (a
 * WAIT blocks its client), so N writes in flight took N x ack_timeout and
 * the PING watchdog (3 s), queued behind them, dropped and reconnected the
 * link, failing other commands in flight on that node ("redis down: PING
 * unanswered after 3000 ms" every ~6 s). Now one WAIT at most is in flight
 * per connection and covers every write answered before it was sent
 * (gw_redis_wait.c), and the watchdog allows for that WAIT's timeout
 * (docs/gateway.md, "The Redis links"). Shown on one redis-server without a
 * replica: 8 concurrent writes with ack_timeout 1s (8 s of WAITs one by
 * one), and 4 with an ack_timeout (4s) past the watchdog's 3 s. */
async function writesWithoutReplica(t, ackTimeout, n) {
  const redis = await h.startRedis(t);
  const config = h.configWith(t, { redis: { ack_replicas: 1, ack_timeout: ackTimeout }, limits: OPEN_LIMITS });
  const gw = await h.startGateway(t, { redisPort: redis.port, config });
  const conn = await h.connectWs(t, gw.wsUrl);
  const acks = await Promise.all(Array.from({ length: n }, (_, i) =>
    conn.request({ op: 'incr', board: 'demo', member: `w${i}`, delta: 1, req: `nowait-${i}` }, 60000)));
  const refused = acks.filter((a) => a.op !== 'ack').map((a) => JSON.stringify(a));
  const drops = gw.stderr.filter((l) => /redis down/.test(l));
  // each ack says 0 replicas: its WAIT timed out with none
  const replicas = acks.map((a) => a.replicas);
  assert.deepEqual({ refused, drops, replicas }, { refused: [], drops: [], replicas: replicas.map(() => 0) });
  // the writes shared WAITs: fewer WAITs than writes
  const waits = Number((/cmdstat_wait:calls=(\d+)/.exec(await redis.cli('INFO', 'commandstats')) || [0, 0])[1]);
  assert.ok(waits >= 1 && waits < n, `${waits} WAIT calls for ${n} writes`);
}

test('a primary without replicas under ack_replicas = 1: concurrent writes share WAITs and keep the Redis link',
  { skip, timeout: 90000 }, async (t) => {
    await writesWithoutReplica(t, '1s', 8);
  });

test('a primary without replicas, ack_timeout past the PING watchdog: the link stays up',
  { skip, timeout: 90000 }, async (t) => {
    await writesWithoutReplica(t, '4s', 4);
  });

// A primary paused (SIGSTOP) while a team move sits unread in its socket:
// its replica is promoted and takes the move again (the writer retries on
// `unavailable`), then a newer move. When the old primary wakes it runs the
// first try on its stale data before it learns it was demoted; the data is
// thrown away when it resyncs as a replica, but its team message reaches the
// gateway through the shard's new primary (sharded pub/sub), after the newer
// move's. Team messages carry the membership's version (lua/write.lua, op
// team): the gateway applies the next version only and reads the membership
// again on any other, so the roster of `green` ends without u1. Seen in the
// 60-minute chaos run (docs/reliability.md, "Run 2"); this test failed on
// the code before the version (the roster kept u1).
test('a paused primary wakes and runs a team move it held: the late team message does not undo a newer move',
  { skip, timeout: 120000 }, async (t) => {
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 1, nodeTimeoutMs: 2000 });
    const gw = await h.startGateway(t, { redis: cluster.seeds });
    const w = await h.connectWs(t, gw.wsUrl);
    const until = async (msg) => {
      for (let i = 0; i < 300; i++) {
        const r = await w.request(msg, 15000).catch(() => null);
        if (r && (r.op === 'ack' || r.op === 'teamed')) return r;
        await h.sleep(100);
      }
      throw new Error(`never acked: ${JSON.stringify(msg)}`);
    };
    for (const m of ['u1', 'u2']) await until({ op: 'incr', board: 'players', member: m, delta: 5 });
    await until({ op: 'team', board: 'players', member: 'u1', team: 'red' });
    await until({ op: 'team', board: 'players', member: 'u2', team: 'green' });
    const v = await h.connectWs(t, gw.wsUrl, { token: null });
    const snap = await v.request({ op: 'subscribe', board: 'players', view: { team: 'green' } }, 10000);
    let rows = snap.rows.map((r) => r.member);
    v.ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      if (m.sub === snap.sub && m.op === 'snapshot') rows = m.rows.map((r) => r.member);
    });
    const port = await cluster.owner('rc:{players|}:tm');
    cluster.kill(port, 'SIGSTOP');
    const t0 = Date.now();
    await until({ op: 'team', board: 'players', member: 'u1', team: 'green' });
    await until({ op: 'team', board: 'players', member: 'u1', team: 'blue' });
    // paused long enough for the promotion to have happened (node timeout 2 s)
    await h.sleep(Math.max(0, 6000 - (Date.now() - t0)));
    cluster.kill(port, 'SIGCONT');
    // the woken node learns it is a replica and resyncs: by then it has run
    // what it held and published its message
    await h.waitFor(async () => /role:slave[\s\S]*master_link_status:up/.test(
      await cluster.cli(port, 'INFO', 'replication').catch(() => '')), 30000, `node ${port} to resync as a replica`);
    await h.sleep(3000);
    const owner = await cluster.owner('rc:{players|}:tm');
    assert.equal(await cluster.cli(owner, 'HGET', 'rc:{players|}:tm', 'u1'), 'blue', 'Redis has the newer move');
    const fresh = await h.connectWs(t, gw.wsUrl, { token: null });
    const now = await fresh.request({ op: 'subscribe', board: 'players', view: { team: 'green' } }, 10000);
    assert.deepEqual(now.rows.map((r) => r.member), ['u2'], 'a new viewer of the roster');
    assert.deepEqual(rows, ['u2'], 'the roster a viewer followed through the failover');
    const row = (await fresh.request({ op: 'subscribe', board: 'players', view: { around: 'u1', radius: 1 } }, 10000)).rows.find((r) => r.member === 'u1');
    assert.equal(row.team, 'blue', 'u1\'s row on the board');
  });
