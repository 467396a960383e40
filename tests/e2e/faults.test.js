/* faults.test.js - Redis goes away and comes back while writers and viewers
 * are connected (a real redis-server, stopped and restarted on the same port
 * with its append-only file): nothing acknowledged is lost, nothing counts
 * twice, and every viewer ends up showing what Redis holds. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const SCALE = 2 ** 29; // demo's tie-break bits
const AOF = ['--appendonly', 'yes', '--appendfsync', 'always'];

function dataDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-faults-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function redisScores(redis) {
  const out = (await redis.cli('ZRANGE', 'rc:{demo|}:z', '0', '-1', 'WITHSCORES')).split('\n');
  const m = new Map();
  for (let i = 0; i + 1 < out.length; i += 2) m.set(out[i], Math.floor(Number(out[i + 1]) / SCALE));
  return m;
}

/* INFO commandstats/errorstats as { 'cmdstat_script|load': { calls: 3, ... }, 'errorstat_NOSCRIPT': { count: 2 } }. */
async function infoStats(redis) {
  const out = await redis.cli('INFO', 'all');
  const stats = {};
  for (const line of out.split(/\r?\n/)) {
    const m = /^((?:cmdstat|errorstat)_[^:]+):(.*)$/.exec(line);
    if (!m) continue;
    stats[m[1]] = Object.fromEntries(m[2].split(',').map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
  }
  return stats;
}
const statOf = (stats, name, field) => (stats[name] ? stats[name][field] : 0) || 0;

async function redisTop(redis, n) {
  const out = (await redis.cli('ZRANGE', 'rc:{demo|}:z', '0', String(n - 1), 'REV', 'WITHSCORES')).split('\n');
  const rows = [];
  for (let i = 0; i + 1 < out.length; i += 2) rows.push(`${out[i]}=${Math.floor(Number(out[i + 1]) / SCALE)}`);
  return rows.join(' ');
}

test('Redis outage: writes answer unavailable, then everything recovers (reconnect backoff capped at reconnect_max = 2 s)', { timeout: 60000 }, async (t) => {
  const dir = dataDir(t);
  let redis = await h.startRedis(t, { dir, args: AOF });
  const port = redis.port;
  const gw = await h.startGateway(t, { redisPort: port });

  const viewer = await h.connectWs(t, gw.wsUrl);
  const snap = await viewer.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  const feed = await viewer.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
  let rows = snap.rows;
  let snapshots = 0;
  const events = [];
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub === snap.sub && m.op === 'delta') rows = applyDelta(rows, m, 1, 10);
    if (m.sub === snap.sub && m.op === 'snapshot') { rows = m.rows; snapshots++; }
    if (m.sub === feed.sub && m.op === 'event') events.push(m.seq);
  });

  const writer = await h.connectWs(t, gw.wsUrl);
  const acked = new Map(); // member -> sum of acknowledged deltas
  const unknown = new Map(); // member -> sum of deltas whose fate the outage hid
  let unavailable = 0;
  let n = 0;
  const write = async () => {
    const member = `user:${n % 15}`;
    const delta = 1 + (n % 7);
    const r = await writer.request({ op: 'incr', board: 'demo', member, delta, req: `o-${n++}` }, 5000);
    if (r.op === 'ack') acked.set(member, (acked.get(member) || 0) + delta);
    else {
      assert.equal(r.code, 'unavailable', JSON.stringify(r));
      unavailable++;
      // "connection lost before the write was answered": it may have happened
      if (/lost/.test(r.message)) unknown.set(member, (unknown.get(member) || 0) + delta);
    }
    return r;
  };

  for (let i = 0; i < 150; i++) await write();
  await redis.stop();
  const downAt = Date.now();
  // While it is down: writes refused at once, health says so.
  for (let i = 0; i < 20; i++) await write();
  assert.ok(unavailable >= 20);
  assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 503);
  const rest = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:x', op: 'incr', delta: 1 });
  assert.equal(rest.status, 503);
  assert.equal(rest.body.code, 'unavailable');
  await h.sleep(700);

  redis = await h.startRedis(t, { port, dir, args: AOF });
  const upAt = Date.now();
  // The backoff is capped at reconnect_max (2 s, with jitter below it): the
  // next attempt after Redis is back comes within that, plus the connect,
  // the script reload and the write itself on a loaded 2-core machine.
  await h.waitFor(async () => (await write()).op === 'ack', 15000, 'a write to succeed again');
  const recovered = Date.now() - upAt;
  t.diagnostic(`outage ${upAt - downAt} ms; first acknowledged write ${recovered} ms after Redis came back`);
  assert.ok(recovered < 2000 + 5000, `first acknowledged write ${recovered} ms after Redis came back (backoff cap 2 s)`);
  assert.equal((await h.http(gw.base, 'GET', '/healthz')).status, 200);
  for (let i = 0; i < 100; i++) await write();

  // Nothing acknowledged is missing (and nothing beyond what may have landed).
  const have = await redisScores(redis);
  for (const [member, sum] of acked) {
    const got = have.get(member) || 0;
    assert.ok(got >= sum && got <= sum + (unknown.get(member) || 0), `${member}: redis ${got}, acked ${sum}`);
  }
  // Viewers: a fresh snapshot after the outage, then a window equal to Redis.
  await h.waitFor(() => snapshots >= 1, 10000, 'the post-outage snapshot');
  await h.waitFor(async () => rows.map((r) => `${r.member}=${r.score}`).join(' ') === await redisTop(redis, 10), 10000,
    'the viewer to match Redis');
  // The feed saw every seq once, in order (replayed from the log after the outage).
  const seq = Number(await redis.cli('GET', 'rc:{demo|}:seq'));
  await h.waitFor(() => events.at(-1) === seq, 10000, 'the feed to catch up');
  assert.deepEqual(events, Array.from({ length: seq }, (_, i) => i + 1));
});

test('SCRIPT FLUSH during a stream of writes: no write fails, the scripts are reloaded', { timeout: 60000 }, async (t) => {
  // Writes back to back for as long as the flushes take: far above the shipped write rates.
  const config = h.configWith(t, { limits: { conn_write_rate: 1000000, conn_write_burst: 10000000,
    key_write_rate: 1000000, key_write_burst: 10000000 } });
  const { redis, gw } = await h.startStack(t, { config });
  const c = await h.connectWs(t, gw.wsUrl);
  const sha = (await redis.cli('SCRIPT', 'LOAD', fs.readFileSync(path.join(h.repoRoot, 'lua', 'write.lua'), 'utf8'))).trim();
  const before = await infoStats(redis);

  // Writes go on until every flush has landed, so each flush meets writes in flight.
  let writing = true;
  let flushesDuringWrites = 0;
  let flushing = true;
  const flusher = (async () => {
    for (let i = 0; i < 10; i++) {
      await h.sleep(30);
      await redis.cli('SCRIPT', 'FLUSH');
      if (writing) flushesDuringWrites++;
    }
    flushing = false;
  })();
  let total = 0;
  const batch = async () => {
    const replies = [];
    for (let k = 0; k < 50; k++) replies.push(c.request({ op: 'incr', board: 'demo', member: `user:${k % 9}`, delta: 1 }));
    for (const r of await Promise.all(replies)) {
      assert.equal(r.op, 'ack', JSON.stringify(r));
      total++;
    }
  };
  while (flushing) await batch();
  await batch(); // after the last flush: needs the script loaded again
  writing = false;
  await flusher;
  assert.equal(flushesDuringWrites, 10);

  // The gateway met NOSCRIPT and loaded the script again (Redis's own counts).
  const after = await infoStats(redis);
  const noscript = statOf(after, 'errorstat_NOSCRIPT', 'count') - statOf(before, 'errorstat_NOSCRIPT', 'count');
  const loads = statOf(after, 'cmdstat_script|load', 'calls') - statOf(before, 'cmdstat_script|load', 'calls');
  t.diagnostic(`${total} writes, ${flushesDuringWrites} flushes during them, ${noscript} NOSCRIPT replies, ${loads} SCRIPT LOADs`);
  assert.ok(noscript >= 1, `no NOSCRIPT reply during ${flushesDuringWrites} flushes`);
  assert.ok(loads >= 1, 'the gateway never loaded the script again');
  assert.equal((await redis.cli('SCRIPT', 'EXISTS', sha)).trim(), '1', 'write.lua is not loaded after the flushes');
  const sum = [...(await redisScores(redis)).values()].reduce((a, b) => a + b, 0);
  assert.equal(sum, total);
});

test('retries: every write sent 3 times through 2 gateways while Redis restarts counts once', { timeout: 90000 }, async (t) => {
  const dir = dataDir(t);
  let redis = await h.startRedis(t, { dir, args: AOF });
  const port = redis.port;
  const gws = [await h.startGateway(t, { redisPort: port }), await h.startGateway(t, { redisPort: port })];
  const conns = [];
  for (const gw of gws) for (let i = 0; i < 2; i++) conns.push(await h.connectWs(t, gw.wsUrl));

  const WRITES = 400;
  const want = new Map();
  const done = new Set();
  const deltaOf = (i) => 1 + (i % 5);
  const memberOf = (i) => `user:${i % 25}`;
  for (let i = 0; i < WRITES; i++) want.set(memberOf(i), (want.get(memberOf(i)) || 0) + deltaOf(i));

  // Three copies of each write, at once, on different connections of both gateways.
  const sendAll = async (ids) => {
    await Promise.all(ids.map(async (i) => {
      const copies = [0, 1, 2].map((k) => conns[(i + k) % conns.length].request(
        { op: 'incr', board: 'demo', member: memberOf(i), delta: deltaOf(i), req: `r-${i}` }, 10000));
      const replies = await Promise.all(copies);
      if (replies.some((r) => r.op === 'ack')) done.add(i);
      // unavailable (the outage), or rate_limited when a retry burst passes
      // max_pending on a connection: either way nothing was written
      else for (const r of replies) assert.ok(['unavailable', 'rate_limited'].includes(r.code), JSON.stringify(r));
    }));
  };
  const ids = Array.from({ length: WRITES }, (_, i) => i);
  // Phases, so the outage is always met: 120 writes with Redis up; 80 sent
  // while it stops; 80 while it is down (none can be acknowledged); the rest
  // after it is back. Then every unanswered write is retried, same req.
  await sendAll(ids.slice(0, 120)); // (a few may be rate_limited by max_pending: retried below)
  assert.ok(done.size > 0, 'no write acknowledged before the outage');
  const stopping = redis.stop();
  await sendAll(ids.slice(120, 200));
  await stopping;
  await sendAll(ids.slice(200, 280));
  const metOutage = ids.slice(120, 280).filter((i) => !done.has(i)).length;
  assert.ok(ids.slice(200, 280).every((i) => !done.has(i)), 'a write was acknowledged while Redis was down');
  redis = await h.startRedis(t, { port, dir, args: AOF });
  await sendAll(ids.slice(280));
  t.diagnostic(`${metOutage} of ${WRITES} writes met the outage (not acknowledged on the first try)`);
  assert.ok(metOutage >= 80);
  await h.waitFor(async () => {
    const missing = ids.filter((i) => !done.has(i));
    if (missing.length) await sendAll(missing);
    return done.size === WRITES;
  }, 30000, 'every write to be acknowledged');

  // Every write is acknowledged now, so Redis holds each exactly once.
  const have = await redisScores(redis);
  for (const [member, sum] of want) assert.equal(have.get(member), sum, member);
});
