/* hot_templates.test.js - boards of a decaying template (heat:*, fade:*)
 * decay like declared hot boards: every write records its board in the
 * template's index (rc:{T}:boards), and the template's job rebuilds each
 * board from its buckets (one gateway at a time per board, by the board's
 * lock) or scales it once per period; boards whose buckets left the window
 * leave the index. The gateway's clock is moved with POST
 * /api/v1/debug/clock ([server] test_clock = on). The last test runs on a
 * 3-primary Redis Cluster: boards on every primary, the index in its own slot. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const HOUR = 3600000;
const T0 = Date.UTC(2030, 0, 7, 0, 10); // 00:10 UTC: early in an hourly bucket
const REBUILD_MS = 200;
const skip = h.toolMissing(h.gatewayMissing());

const HEAT = `[board heat:*]
order = desc
ops = incr
decay = buckets
bucket_span = 1h
window = 4h
weighting = linear
rebuild_every = ${REBUILD_MS}ms
result_ttl = 2s
`;
const FADE = `[board fade:*]
decay = scale
scale_factor = 0.5
scale_every = 1h
tiebreak = none
`;

const config = (t) => h.configWith(t, { server: { test_clock: 'on' }, extra: HEAT + '\n' + FADE });

async function setClock(gw, nowMs) {
  const res = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: nowMs });
  assert.equal(res.status, 200, res.text);
}

async function write(gw, board, member, body) {
  const res = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, Object.assign({ member }, body));
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function top(redis, board) {
  const out = await redis.cli('ZRANGE', `rc:{${board}|}:z`, '0', '9', 'REV', 'WITHSCORES');
  const words = out ? out.split('\n') : [];
  const rows = [];
  for (let i = 0; i + 1 < words.length; i += 2) rows.push([words[i], Number(words[i + 1])]);
  return rows;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

test('boards of a bucket template are rebuilt with decay, each its own, and leave the index when cold', { skip }, async (t) => {
  const { redis, gw } = await h.startStack(t, { config: config(t) });
  await setClock(gw, T0);
  await write(gw, 'heat:a', 'user:old', { op: 'incr', delta: 100 });
  await write(gw, 'heat:b', 'user:x', { op: 'incr', delta: 8 });
  await h.waitFor(async () => same(await top(redis, 'heat:a'), [['user:old', 100]]), 5000, 'heat:a rebuilt');
  await h.waitFor(async () => same(await top(redis, 'heat:b'), [['user:x', 8]]), 5000, 'heat:b rebuilt');
  // both in the template's index, scored by the end of their newest bucket
  const bucketEnd = (Math.floor(T0 / HOUR) + 1) * HOUR;
  assert.equal(await redis.cli('ZSCORE', 'rc:{heat:*}:boards', 'heat:a'), String(bucketEnd));
  assert.equal(await redis.cli('ZSCORE', 'rc:{heat:*}:boards', 'heat:b'), String(bucketEnd));

  // three hours later a newcomer on heat:a gets fewer points than user:old had
  await setClock(gw, T0 + 3 * HOUR);
  await write(gw, 'heat:a', 'user:new', { op: 'incr', delta: 30 });
  await h.waitFor(async () => same(await top(redis, 'heat:a'), [['user:new', 30], ['user:old', 25]]), 5000,
    'user:new above user:old (100 x 1/4)');
  await h.waitFor(async () => same(await top(redis, 'heat:b'), [['user:x', 2]]), 5000, 'heat:b at 1/4 too');
  assert.equal(await redis.cli('ZSCORE', 'rc:{heat:*}:boards', 'heat:a'), String(bucketEnd + 3 * HOUR));
  const rest = await h.http(gw.base, 'GET', '/api/v1/boards/heat:a?top=10');
  assert.deepEqual(rest.body.rows.map((r) => [r.member, r.score, r.rank]), [['user:new', 30, 1], ['user:old', 25, 2]]);
  // the read board has the short TTL of a hot board
  const pttl = Number(await redis.cli('PTTL', 'rc:{heat:a|}:z'));
  assert.ok(pttl > 0 && pttl <= 2000, `PTTL ${pttl}`);

  // one more hour: heat:b has nothing in the window any more and leaves the
  // index; its read board goes (rebuilt empty, or expired)
  await setClock(gw, T0 + 5 * HOUR + HOUR / 2);
  await h.waitFor(async () => (await redis.cli('ZRANGE', 'rc:{heat:*}:boards', 0, -1)) === 'heat:a', 8000,
    'heat:b to leave the index');
  await h.waitFor(async () => (await redis.cli('EXISTS', 'rc:{heat:b|}:z')) === '0', 8000, 'heat:b read board gone');
  await h.waitFor(async () => same(await top(redis, 'heat:a'), [['user:new', 15]]), 5000, 'heat:a at 1/2, user:old gone');
});

test('two gateways: one rebuilds a template board at a time; the other takes over when it dies', { skip }, async (t) => {
  const redis = await h.startRedis(t);
  const cfg = config(t);
  const gw1 = await h.startGateway(t, { redisPort: redis.port, config: cfg });
  const gw2 = await h.startGateway(t, { redisPort: redis.port, config: cfg });
  await write(gw1, 'heat:duo', 'user:a', { op: 'incr', delta: 5 });
  const counter = async () => Number(await redis.cli('GET', 'rc:{heat:duo|}:rebuilds')) || 0;
  const lockPid = async () => {
    const tok = await redis.cli('GET', 'rc:{heat:duo|}:lock');
    return tok ? Number(tok.split(':')[1]) : null;
  };
  await h.waitFor(async () => (await counter()) >= 3, 8000, 'rebuilds to start');
  const owner = await lockPid();
  assert.ok([gw1.pid, gw2.pid].includes(owner), `lock names pid ${owner}`);
  const c0 = await counter();
  const t0 = Date.now();
  await h.waitFor(async () => (await counter()) >= c0 + 10, 30 * REBUILD_MS + 20000, 'ten more rebuilds');
  const perInterval = ((await counter()) - c0) / ((Date.now() - t0) / REBUILD_MS);
  t.diagnostic(`${perInterval.toFixed(2)} rebuilds per interval with two gateways`);
  assert.ok(perInterval < 1.5, `${perInterval} rebuilds per interval: both gateways rebuild`);
  assert.equal(await lockPid(), owner);

  const [dead, survivor] = owner === gw1.pid ? [gw1, gw2] : [gw2, gw1];
  dead.kill('SIGKILL');
  await dead.exited;
  const before = await counter();
  await h.waitFor(async () => (await counter()) > before + 1, 3 * REBUILD_MS + 5000, 'the survivor to rebuild');
  assert.equal(await lockPid(), survivor.pid);
  assert.deepEqual(await top(redis, 'heat:duo'), [['user:a', 5]]);
  // a gateway that stops gives the locks of its template's boards up
  assert.equal((await survivor.stop()).code, 0);
  assert.ok(survivor.stderr.some((l) => /template heat:\*: releasing the rebuild locks it holds of 1 boards/.test(l)));
  assert.equal(await lockPid(), null, 'released at stop, not left to expire');
});

test('boards of a scale template are scaled once per period by several gateways', { skip }, async (t) => {
  const redis = await h.startRedis(t);
  const cfg = config(t);
  const gw1 = await h.startGateway(t, { redisPort: redis.port, config: cfg });
  const gw2 = await h.startGateway(t, { redisPort: redis.port, config: cfg });
  await write(gw1, 'fade:a', 'user:a', { op: 'set', value: 80 });
  await write(gw2, 'fade:b', 'user:b', { op: 'set', value: 6 });
  assert.equal(await redis.cli('ZSCORE', 'rc:{fade:*}:boards', 'fade:a'), '0');
  await h.waitFor(async () => (await redis.cli('EXISTS', 'rc:{fade:a|}:scaled_at', 'rc:{fade:b|}:scaled_at')) === '2',
    5000, 'both schedules to start');
  await h.sleep(1200);
  assert.equal(await redis.cli('ZSCORE', 'rc:{fade:a|}:z', 'user:a'), '80');

  for (const g of [gw1, gw2]) {
    const r = await h.http(g.base, 'POST', '/api/v1/debug/clock', { offset_ms: HOUR + 5000 });
    assert.equal(r.status, 200, r.text);
  }
  await h.waitFor(async () => (await redis.cli('ZSCORE', 'rc:{fade:a|}:z', 'user:a')) === '40', 5000, 'fade:a scaled');
  await h.waitFor(async () => (await redis.cli('ZSCORE', 'rc:{fade:b|}:z', 'user:b')) === '3', 5000, 'fade:b scaled');
  await h.sleep(2500); // both gateways looked again at least twice
  assert.equal(await redis.cli('ZSCORE', 'rc:{fade:a|}:z', 'user:a'), '40');
  assert.equal(await redis.cli('ZSCORE', 'rc:{fade:b|}:z', 'user:b'), '3');
  const lines = [gw1, gw2].flatMap((g) => g.stderr).filter((l) => /board fade:a: scaled by 0\.5\^1$/.test(l));
  assert.equal(lines.length, 1);
});

test('on a Redis Cluster, a bucket template\'s boards on every primary are rebuilt', { skip }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config: config(t) });
  await setClock(gw, T0);
  const primaries = await cluster.primaries();
  const boards = [];
  const owners = new Set();
  for (let i = 0; boards.length < 6 || owners.size < primaries.length; i++) {
    const b = `heat:c${i}`;
    boards.push(b);
    owners.add(await cluster.owner(`rc:{${b}|}:z`));
  }
  for (const [i, b] of boards.entries()) await write(gw, b, 'user:a', { op: 'incr', delta: i + 1 });
  for (const [i, b] of boards.entries()) {
    const at = await cluster.owner(`rc:{${b}|}:z`);
    await h.waitFor(async () => (await cluster.cli(at, 'ZSCORE', `rc:{${b}|}:z`, 'user:a')) === String(i + 1), 8000,
      `${b} rebuilt`);
  }
  const index = 'rc:{heat:*}:boards';
  assert.equal(Number(await cluster.cli(await cluster.owner(index), 'ZCARD', index)), boards.length);
});
