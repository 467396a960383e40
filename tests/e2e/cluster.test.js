/* cluster.test.js - the gateway on a real Redis Cluster (3 primaries + 3
 * replicas, started by the harness): boards spread over every primary, a
 * manual failover, a primary killed with SIGKILL under ack_replicas = 1, and
 * a board's slot moved to another primary while it is written and watched.
 *
 * Every write carries a req and is sent again with the same req while the
 * gateway answers unavailable (as a client should), so "nothing lost,
 * nothing doubled" is checked exactly: a member's final score equals the sum
 * of its distinct writes. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

/* A write over REST, sent again with the same req while the answer is
 * unavailable (a failover, a slot without its primary yet). Returns the ack
 * and how long it took from the first try. */
async function writeUntilAcked(gw, board, body, deadlineMs = 30000) {
  const t0 = Date.now();
  let tries = 0;
  for (;;) {
    tries++;
    let r;
    try {
      r = await h.http(gw.base, 'POST', `/api/v1/boards/${encodeURIComponent(board)}/scores`, body, { timeoutMs: 10000 });
    } catch (e) {
      r = { body: { op: 'error', code: 'unavailable', message: String(e) } };
    }
    if (r.body && r.body.op === 'ack') return { ack: r.body, tries, ms: Date.now() - t0 };
    if (!r.body || r.body.code !== 'unavailable') throw new Error(`write ${JSON.stringify(body)} to ${board}: ${r.text}`);
    if (Date.now() - t0 > deadlineMs) throw new Error(`write ${JSON.stringify(body)} to ${board}: unavailable for ${deadlineMs} ms`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

/* What one subscription shows: its window from snapshots and deltas, applied
 * as PROTOCOL.md says (a list in rank order: drop the named members, insert
 * each row at its rank, cut to the window's length), exposed as rows
 * (member -> {score, rank}, the rank being the list position), and its feed
 * events. */
function track(conn, sub, size = 10) {
  const view = { rows: new Map(), list: [], snapshots: 0, deltas: 0, events: [], lastDeltaAt: 0 };
  const reindex = () => {
    view.rows = new Map(view.list.map((r, i) => [r.member, { score: r.score, rank: i + 1 }]));
  };
  const apply = (m) => {
    if (m.sub !== sub) return;
    if (m.op === 'snapshot') {
      view.snapshots++;
      view.list = (m.rows || []).map((r) => ({ member: r.member, score: r.score }));
      reindex();
    } else if (m.op === 'delta') {
      view.deltas++;
      view.lastDeltaAt = Date.now();
      const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
      view.list = view.list.filter((r) => !gone.has(r.member));
      for (const r of (m.rows || []).slice().sort((a, b) => a.rank - b.rank)) {
        view.list.splice(r.rank - 1, 0, { member: r.member, score: r.score });
      }
      view.list.length = Math.min(view.list.length, size);
      reindex();
    } else if (m.op === 'event') {
      view.events.push(m);
    }
  };
  for (const m of conn.messages) apply(m);
  conn.ws.setMaxListeners(0);
  conn.ws.on('message', (data) => {
    try { apply(JSON.parse(String(data))); } catch (e) { /* not JSON: not ours */ }
  });
  return view;
}

async function subscribe(conn, board, view) {
  const reply = await conn.request({ op: 'subscribe', board, view }, 10000);
  assert.equal(reply.op, 'snapshot', JSON.stringify(reply));
  return reply.sub;
}

/* The board's top n as Redis orders it (member names only), straight from
 * the primary that owns it. */
async function redisTop(cluster, board, n) {
  const key = `rc:{${board}|}:z`;
  const port = await cluster.owner(key);
  const out = await cluster.cli(port, 'ZREVRANGE', key, 0, n - 1);
  return out ? out.split('\n') : [];
}

/* Waits until the window equals the truth: Redis' order of the top n, and
 * every member's score equal to the sum the test wrote. */
async function windowSettles(cluster, view, board, n, sums, what) {
  let order = [];
  try {
    await h.waitFor(async () => {
      order = await redisTop(cluster, board, n);
      if (order.length !== view.rows.size) return false;
      return order.every((m, i) => {
        const r = view.rows.get(m);
        return r && r.rank === i + 1 && r.score === sums.get(m);
      });
    }, 15000, what);
  } catch (e) {
    const shown = [...view.rows].map(([m, r]) => `${r.rank}:${m}=${r.score}`).join(' ');
    const truth = order.map((m, i) => `${i + 1}:${m}=${sums.get(m)}`).join(' ');
    throw new Error(`${e.message}\n  shown: ${shown}\n  truth: ${truth}\n  (${view.snapshots} snapshots, ${view.deltas} deltas)`);
  }
}

function assertFeed(events, n, what) {
  assert.equal(events.length, n, `${what}: ${events.length} events for ${n} changes`);
  events.forEach((e, i) => assert.equal(e.seq, events[0].seq + i, `${what}: seq ${e.seq} at position ${i}`));
}

test('twenty boards over every primary: scores are the sum of distinct writes, windows and feeds follow', { skip, timeout: 180000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds });
  const primaries = await cluster.primaries();
  // boards until every primary holds at least one, and at least 20 of them
  const boards = [];
  const owners = new Set();
  for (let i = 0; boards.length < 20 || owners.size < primaries.length; i++) {
    const b = `match:c${i}`;
    boards.push(b);
    owners.add(await cluster.owner(`rc:{${b}|}:z`));
  }
  assert.equal(owners.size, primaries.length);

  const viewers = await h.connectWs(t, gw.wsUrl);
  const feeds = await h.connectWs(t, gw.wsUrl);
  const views = new Map();
  for (const b of boards) {
    const window = track(viewers, await subscribe(viewers, b, { top: 10 }));
    const feed = track(feeds, await subscribe(feeds, b, { feed: true }));
    views.set(b, { window, feed });
  }

  const sums = new Map(boards.map((b) => [b, new Map()]));
  const changes = new Map(boards.map((b) => [b, 0]));
  let duplicates = 0;
  const writes = [];
  for (let i = 0; i < 30; i++) {
    for (const b of boards) {
      const member = `p${(i * 7 + b.length) % 12}`;
      const delta = 1 + ((i * 13 + b.length) % 9);
      const req = `w-${b}-${i}`;
      writes.push({ b, body: { member, op: 'incr', delta, req } });
      const s = sums.get(b);
      s.set(member, (s.get(member) || 0) + delta);
      changes.set(b, changes.get(b) + 1);
      if (i % 5 === 0) writes.push({ b, body: { member, op: 'incr', delta, req }, again: true });
    }
  }
  // 8 writers at once; a retried req answers duplicate and changes nothing
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < writes.length) {
      const w = writes[next++];
      const { ack } = await writeUntilAcked(gw, w.b, w.body);
      if (w.again) {
        assert.equal(ack.duplicate, true, `${w.b} ${w.body.req} sent again`);
        duplicates++;
      }
    }
  }));
  assert.ok(duplicates > 0);

  for (const b of boards) {
    const { window, feed } = views.get(b);
    await windowSettles(cluster, window, b, 10, sums.get(b), `the top 10 of ${b} equals the cluster's`);
    await h.waitFor(() => feed.events.length >= changes.get(b), 10000, `the feed of ${b}`);
    assertFeed(feed.events, changes.get(b), b);
    // the feed's events add up to the same sums
    const fromFeed = new Map();
    for (const e of feed.events) fromFeed.set(e.member, e.score);
    for (const [m, s] of sums.get(b)) assert.equal(fromFeed.get(m), s, `${b} ${m} in the feed`);
    // and REST reads route to the right primary too
    for (const [m, s] of sums.get(b)) {
      const r = await h.http(gw.base, 'GET', `/api/v1/boards/${encodeURIComponent(b)}/members/${m}`);
      assert.equal(r.body.score, s, `${b} ${m} over REST`);
    }
  }
});

test('a manual failover under writes: nothing lost or doubled, viewers and feeds carry on', { skip, timeout: 180000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds });
  const board = 'match:failover';
  const primary = await cluster.owner(`rc:{${board}|}:z`);
  const [replica] = await cluster.replicaOf(primary);
  assert.ok(replica, 'the primary has a replica');

  const conn = await h.connectWs(t, gw.wsUrl);
  const window = track(conn, await subscribe(conn, board, { top: 10 }));
  const feed = track(conn, await subscribe(conn, board, { feed: true }));

  const N = 240;
  let failedOverAt = 0;
  let slowest = 0;
  const sums = new Map();
  for (let i = 0; i < N; i++) {
    if (i === 80) {
      failedOverAt = Date.now();
      await cluster.failover(replica);
    }
    const member = `m${i % 6}`;
    const { ms } = await writeUntilAcked(gw, board, { member, op: 'incr', delta: 1, req: `fo-${i}` });
    slowest = Math.max(slowest, ms);
    sums.set(member, (sums.get(member) || 0) + 1);
  }
  assert.ok(failedOverAt > 0);
  t.diagnostic(`slowest write around the failover: ${slowest} ms`);
  assert.equal(await cluster.owner(`rc:{${board}|}:z`), replica, 'the replica serves the board now');

  await windowSettles(cluster, window, board, 10, sums, 'the window after the failover');
  await h.waitFor(() => feed.events.length >= N, 15000, 'the feed after the failover');
  assertFeed(feed.events, N, 'the feed');
  // live again: one more write shows up as a delta, not only through a re-read
  const deltasBefore = window.deltas;
  await writeUntilAcked(gw, board, { member: 'late', op: 'incr', delta: 5, req: 'fo-late' });
  await h.waitFor(() => window.deltas > deltasBefore && window.rows.has('late'), 5000, 'a live delta after the failover');
  await h.waitFor(() => feed.events.length === N + 1, 5000, 'the feed event after the failover');
});

test('a primary killed with SIGKILL under ack_replicas = 1: no write acked as replicated is lost', { skip, timeout: 180000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const config = h.configWith(t, { redis: { ack_replicas: 1, ack_timeout: '500ms' } });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config });
  const board = 'match:killed';
  const primary = await cluster.owner(`rc:{${board}|}:z`);
  const [replica] = await cluster.replicaOf(primary);

  // 70 writes before the kill, 20 after it. Every write after the promotion
  // waits out ack_timeout (the promoted replica has no replica of its own)
  // and proves the same thing: 20 of them, not 130 (65 s of WAITs).
  const BEFORE = 70;
  const AFTER = 20;
  const replicated = [];
  let notReplicated = 0;
  let outage = 0;
  for (let i = 0; i < BEFORE + AFTER; i++) {
    if (i === BEFORE) await cluster.kill(primary, 'SIGKILL');
    // one member per write, so every acked write can be looked for by name
    const { ack, ms } = await writeUntilAcked(gw, board, { member: `k${i}`, op: 'set', value: i + 1, req: `kill-${i}` }, 60000);
    outage = Math.max(outage, ms);
    assert.equal(typeof ack.replicas, 'number', 'the ack says how many replicas have the write');
    if (ack.replicas >= 1) replicated.push(`k${i}`);
    else notReplicated++;
  }
  // before the kill the primary had its replica; after it the promoted
  // replica has none, so later writes are acked with replicas: 0 (the
  // writer is told they are not replicated)
  t.diagnostic(`${replicated.length} writes acked as replicated, ${notReplicated} not; longest write (the outage, node timeout 2 s): ${outage} ms`);
  assert.ok(replicated.length >= 60, `${replicated.length} of the ${BEFORE} writes before the kill acked as replicated`);
  assert.ok(notReplicated > 0, 'writes after the kill are acked as not replicated');
  assert.equal(await cluster.owner(`rc:{${board}|}:z`), replica, 'the replica was promoted');
  for (const m of replicated) {
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/${encodeURIComponent(board)}/members/${m}`);
    assert.equal(r.body.score, Number(m.slice(1)) + 1, `${m} survived the kill`);
  }
});

test("a board's slot moves to another primary under writes and viewers: ASK and MOVED followed, nothing lost", { skip, timeout: 180000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds });
  const board = 'match:moving';
  const key = `rc:{${board}|}:z`;
  const slot = Number(await cluster.cli(cluster.nodes[0].port, 'CLUSTER', 'KEYSLOT', key));
  const from = await cluster.owner(key);
  const to = (await cluster.primaries()).find((p) => p !== from);
  const idOf = async (port) => (await cluster.cli(port, 'CLUSTER', 'MYID')).trim();
  const fromId = await idOf(from);
  const toId = await idOf(to);

  const conn = await h.connectWs(t, gw.wsUrl);
  const window = track(conn, await subscribe(conn, board, { top: 10 }));
  const feed = track(conn, await subscribe(conn, board, { feed: true }));

  const sums = new Map();
  let written = 0;
  let stop = false;
  let slowest = 0;
  const writer = (async () => {
    for (let i = 0; !stop || i < 60; i++) {
      const member = `r${i % 8}`;
      const { ms } = await writeUntilAcked(gw, board, { member, op: 'incr', delta: 2, req: `mv-${i}` });
      slowest = Math.max(slowest, ms);
      sums.set(member, (sums.get(member) || 0) + 2);
      written++;
    }
  })();
  await h.waitFor(() => written >= 20, 10000, 'writes before the move');

  // the move, as redis-cli --cluster reshard does it, one key at a time
  await cluster.cli(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
  await cluster.cli(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
  for (;;) {
    const keys = (await cluster.cli(from, 'CLUSTER', 'GETKEYSINSLOT', slot, 1)).split('\n').filter(Boolean);
    if (keys.length === 0) break;
    await cluster.cli(from, 'MIGRATE', '127.0.0.1', to, keys[0], 0, 5000);
    await new Promise((res) => setTimeout(res, 30)); // writes meet a half-moved slot
  }
  for (const n of await cluster.primaries()) await cluster.cli(n, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
  await cluster.waitOk();
  stop = true;
  await writer;
  assert.equal(await cluster.owner(key), to);
  t.diagnostic(`${written} writes during the move; slowest ${slowest} ms`);

  await windowSettles(cluster, window, board, 10, sums, 'the window after the move');
  await h.waitFor(() => feed.events.length >= written, 15000, 'the feed after the move');
  assertFeed(feed.events, written, 'the feed');
  const metrics = (await h.http(gw.base, 'GET', '/metrics')).text;
  t.diagnostic(metrics.split('\n').filter((l) => /rankcast_redis_(moved|ask|tryagain)/.test(l) && !l.startsWith('#')).join('; '));
});
