/* cluster_queued_move.test.js - the slot of the queued board `burst` moves to
 * another primary (CLUSTER SETSLOT MIGRATING/IMPORTING + MIGRATE, a few
 * hundred keys) while writers keep enqueueing, on the harness's 3+3 cluster.
 *
 * What Redis does here (Redis 7.0, cluster.c getNodeByQuery): while a slot is
 * MIGRATING/IMPORTING, a command with several keys runs only where all of its
 * keys exist. lua/enqueue.lua declares the board's stream, the write's new
 * idempotency record (exists nowhere yet) and the blocklist (usually absent):
 * so for the whole move the old owner answers ASK or TRYAGAIN and the new one
 * (after ASKING) TRYAGAIN. No retry can run the enqueue until the slot is
 * handed over (SETSLOT NODE), so what the gateway owes is: retry quietly
 * while it can, refuse with the real cause (the slot is being moved, the
 * write was NOT queued) when it cannot, and accept writes again as soon as
 * the move ends. The chaos run saw the refusal named "Redis connection lost"
 * (docs/reliability.md), which tells a writer the outcome is unknown. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

test("the queued board's slot moves under writes: every write queued once, refusals only while the slot is split, named for it", { skip, timeout: 240000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds });
  const board = 'burst';
  const key = `rc:{${board}|}:in`;
  const slot = Number(await cluster.cli(cluster.nodes[0].port, 'CLUSTER', 'KEYSLOT', key));
  const from = await cluster.owner(key);
  const to = (await cluster.primaries()).find((p) => p !== from);
  const idOf = async (port) => (await cluster.cli(port, 'CLUSTER', 'MYID')).trim();
  const fromId = await idOf(from);
  const toId = await idOf(to);

  const post = (body) =>
    h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, body, { timeoutMs: 15000 }).catch((e) => ({
      body: { op: 'error', code: 'unavailable', message: `no answer: ${e.message}` },
    }));

  // A few hundred keys in the slot: the idempotency records of earlier writes.
  const PRE = 300;
  for (let i = 0; i < PRE; i += 20) {
    const batch = [];
    for (let j = i; j < Math.min(PRE, i + 20); j++) batch.push(post({ member: `p${j % 10}`, op: 'incr', delta: 1, req: `pre-${j}` }));
    for (const r of await Promise.all(batch)) assert.equal(r.body.op, 'ack', `a write before the move: ${JSON.stringify(r.body)}`);
  }
  const inSlot = Number(await cluster.cli(from, 'CLUSTER', 'COUNTKEYSINSLOT', slot));
  t.diagnostic(`${inSlot} keys in slot ${slot} before the move`);
  assert.ok(inSlot >= PRE, `the slot holds the ${PRE} records (${inSlot})`);

  // Steady writers: each write is sent again with its req while refused
  // unavailable, as a client should; every refusal is recorded with its time.
  const refusals = [];
  const acks = [];
  let stop = false;
  let n = 0;
  const writeOne = async (i) => {
    const body = { member: `w${i % 8}`, op: 'incr', delta: 1, req: `mv-${i}` };
    const t0 = Date.now();
    for (let tries = 1; ; tries++) {
      const r = await post(body);
      if (r.body && r.body.op === 'ack') {
        acks.push({ i, tries, ms: Date.now() - t0, duplicate: !!r.body.duplicate });
        return;
      }
      if (!r.body || r.body.code !== 'unavailable') throw new Error(`write ${i}: ${JSON.stringify(r.body)}`);
      refusals.push({ at: Date.now(), i, message: r.body.message || '' });
      if (Date.now() - t0 > 120000) throw new Error(`write ${i} refused for 120 s: ${r.body.message}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  };
  const writer = async () => {
    while (!stop) await writeOne(n++);
  };
  const writers = [writer(), writer()];
  await h.waitFor(() => acks.length >= 10, 20000, 'writes before the move');

  // The move, one MIGRATE per key as docs/reliability.md's chaos run does it
  // (redis-cli --cluster reshard pipelines 10 at a time; one at a time keeps
  // the slot split for longer than the 3 s a command is retried for).
  const tryagainBefore = await metric(gw, 'rankcast_redis_tryagain_total');
  const askBefore = await metric(gw, 'rankcast_redis_ask_total');
  const moveStart = Date.now();
  await cluster.cli(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
  await cluster.cli(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
  // What Redis answers the enqueue's shape (three keys, one of them new)
  // while the slot is split: logged, so a failure says why.
  const probeKeys = [key, `rc:{${board}|}:req:probe-never`, `rc:{${board}|}:blocked`];
  const probeFrom = await cluster.cli(from, 'EVAL', 'return 1', 3, ...probeKeys).catch((e) => `error: ${e.message}`);
  t.diagnostic(`old owner answers a 3-key script: ${String(probeFrom).trim()}`);
  let moved = 0;
  for (;;) {
    const keys = (await cluster.cli(from, 'CLUSTER', 'GETKEYSINSLOT', slot, 1)).split('\n').filter(Boolean);
    if (keys.length === 0) break;
    await cluster.cli(from, 'MIGRATE', '127.0.0.1', to, keys[0], 0, 5000);
    moved++;
  }
  for (const p of await cluster.primaries()) await cluster.cli(p, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
  const moveEnd = Date.now();
  await cluster.waitOk();
  const afterMove = acks.length;
  await h.waitFor(() => acks.length >= afterMove + 20, 30000, 'writes after the move');
  stop = true;
  await Promise.all(writers);

  const tryagain = (await metric(gw, 'rankcast_redis_tryagain_total')) - tryagainBefore;
  const ask = (await metric(gw, 'rankcast_redis_ask_total')) - askBefore;
  const moveMs = moveEnd - moveStart;
  const firstRefusal = refusals.length ? refusals[0].at - moveStart : null;
  const lastRefusal = refusals.length ? refusals[refusals.length - 1].at - moveStart : null;
  const maxTries = Math.max(...acks.map((a) => a.tries));
  const slowest = Math.max(...acks.map((a) => a.ms));
  t.diagnostic(`moved ${moved} keys in ${moveMs} ms; Redis answered ${tryagain} TRYAGAIN and ${ask} ASK; ` +
    `${acks.length} writes acked, ${refusals.length} refusals (first at +${firstRefusal} ms, last at +${lastRefusal} ms), ` +
    `most tries ${maxTries}, slowest ${slowest} ms`);
  const messages = [...new Set(refusals.map((r) => r.message))];
  if (messages.length) t.diagnostic(`refusal messages: ${JSON.stringify(messages)}`);

  assert.equal(await cluster.owner(key), to, 'the slot moved');
  assert.ok(tryagain + ask > 0, 'the gateway met the half-moved slot (ASK or TRYAGAIN)');
  // A refusal names the real cause: the slot being moved, and that the write
  // was not queued (so a retry is safe), never a lost connection.
  for (const m of messages) {
    assert.doesNotMatch(m, /connection lost/i, `a refusal during a slot move blames the connection: ${m}`);
    assert.match(m, /slot/i, `a refusal names the slot move: ${m}`);
    assert.match(m, /not queued/i, `a refusal says the write was not queued: ${m}`);
  }
  // Refusals only while the slot is split, plus a short margin (5 s).
  if (refusals.length) assert.ok(lastRefusal <= moveMs + 5000, `the last refusal came ${lastRefusal - moveMs} ms after the move ended`);
  // Every write is queued, each within a bounded number of tries: the move's
  // length over the 50 ms retry pause, plus slack, never an endless loop.
  const bound = Math.ceil((moveMs + 5000) / 50) + 10;
  assert.ok(maxTries <= bound, `a write needed ${maxTries} tries (bound ${bound})`);

  // Each write counted once: the queue drains and every member's score is
  // its number of distinct writes.
  const want = new Map();
  for (const a of acks) want.set(`w${a.i % 8}`, (want.get(`w${a.i % 8}`) || 0) + 1);
  await h.waitFor(async () => {
    for (const [m, s] of want) {
      const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}/members/${m}`);
      if (!r.body || r.body.score !== s) return false;
    }
    return true;
  }, 60000, 'every queued write applied once');
});

async function metric(gw, name) {
  const text = (await h.http(gw.base, 'GET', '/metrics')).text;
  let sum = 0;
  for (const l of text.split('\n')) if (l.startsWith(name)) sum += Number(l.split(' ').pop());
  return sum;
}
