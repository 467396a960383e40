/* cluster_seeds.test.js - `--redis` seed lists that are partly or wholly
 * wrong, and what /healthz and /metrics say about the nodes (real
 * redis-servers and a real 3+3 cluster, started here through the harness):
 * - seeds where nothing listens: the gateway runs, answers /healthz 503 with
 *   why, keeps retrying (the failure counters in /metrics grow), never crashes;
 * - a plain redis-server among a cluster's seeds: named in the log and in
 *   /healthz's warning, left out; the cluster serves writes and reads;
 * - a host name that does not resolve, with good seeds (served through them)
 *   and alone (503 with why, retrying, alive);
 * - a healthy cluster: /healthz lists the primaries up with every slot, and
 *   /metrics has the cluster counters and one series per node.
 * Every gateway started here must exit cleanly (exit 0, no sanitizer report). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

/* A gateway on a seed list that may never become healthy: the harness's
 * startGateway waits for /healthz 200, so this one is spawned here and waited
 * for until /healthz answers at all. Stopped with the test, which then
 * checks it ended cleanly and had not exited before. */
async function spawnGateway(t, redis) {
  const port = await h.freePort();
  const stateDir = require('node:fs').mkdtempSync(path.join(require('node:os').tmpdir(), 'rankcast-state-'));
  const env = Object.assign({}, process.env, {
    ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'quarantine_size_mb=8:detect_leaks=1',
    RANKCAST_ADMIN_KEY: h.ADMIN_KEY,
  });
  const child = h.spawnTracked(h.gatewayBin(), ['--config', path.join(h.repoRoot, 'conf', 'rankcast.conf'),
    '--listen', `127.0.0.1:${port}`, '--redis', redis, '--state', stateDir], { cwd: h.repoRoot, env }, [stateDir]);
  const stderr = [];
  h.eachLine(child.stderr, (l) => stderr.push(l));
  h.eachLine(child.stdout, () => {});
  let exited = null;
  child.exited.then((res) => { exited = res; });
  const gw = {
    base: `http://127.0.0.1:${port}`,
    stderr,
    alive: () => exited === null,
    waitForLine: (re, ms) => h.waitFor(() => stderr.find((l) => re.test(l)), ms, `a log line matching ${re}`),
  };
  h.defer(t, async () => {
    const crashed = exited !== null;
    const res = await h.terminate(child, 20000);
    child.untrack();
    const problems = h.exitProblems(res, stderr, { crashed });
    assert.deepEqual(problems, [], `rankcast on ${redis}: ${problems.join('; ')}\n${stderr.slice(-30).join('\n')}`);
  });
  await h.waitFor(async () => {
    if (exited) throw new Error(`rankcast exited during start: ${JSON.stringify(exited)}\n${stderr.join('\n')}`);
    try {
      return (await health(gw)).body !== null;
    } catch (e) {
      return false; // not listening yet
    }
  }, 20000, `GET ${gw.base}/healthz to answer`);
  return gw;
}

async function health(gw) {
  return h.http(gw.base, 'GET', '/healthz', undefined, { timeoutMs: 5000 });
}

async function metrics(gw) {
  const r = await h.http(gw.base, 'GET', '/metrics', undefined, { timeoutMs: 5000 });
  assert.equal(r.status, 200);
  return r.text;
}

/* The value of one series (name and, optionally, its node label), or
 * undefined when it is not there. */
function series(text, name, node) {
  const want = node === undefined ? name : `${name}{node="${node}"}`;
  for (const line of text.split('\n')) {
    const i = line.lastIndexOf(' ');
    if (i > 0 && line.slice(0, i) === want) return Number(line.slice(i + 1));
  }
  return undefined;
}

/* A /healthz answer keeps the fields single-Redis clients read. */
function assertClassicFields(body) {
  assert.equal(typeof body.ok, 'boolean');
  assert.ok(body.redis === 'up' || body.redis === 'down');
  assert.ok(body.scripts === 'loaded' || body.scripts === 'unknown');
  assert.equal(typeof body.keyspace_events, 'boolean');
  assert.ok(Array.isArray(body.nodes));
}

/* A write through REST (resent with its req while a slot is unavailable)
 * and the board read back holding it. */
async function writeAndRead(gw, board, member, delta) {
  let ack = null;
  await h.waitFor(async () => {
    const r = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`,
      { member, op: 'incr', delta, req: `seeds-${member}` }, { timeoutMs: 10000 });
    if (r.body && r.body.op === 'ack') ack = r.body;
    else if (!r.body || r.body.code !== 'unavailable') throw new Error(`write to ${board}: ${r.status} ${r.text}`);
    return ack;
  }, 30000, `a write to ${board} acknowledged`);
  assert.equal(ack.score, delta, JSON.stringify(ack));
  const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}/members/${member}`, undefined, { timeoutMs: 10000 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.score, delta, r.text);
}

test('seeds where nothing listens: /healthz 503 says why, retries counted, the gateway lives', { skip, timeout: 120000 }, async (t) => {
  const ports = [await h.freePort(), await h.freePort(), await h.freePort()];
  const names = ports.map((p) => `127.0.0.1:${p}`);
  const gw = await spawnGateway(t, names.join(','));

  await gw.waitForLine(new RegExp(`redis down: connect to 127\\.0\\.0\\.1:${ports[0]} .*failed`), 30000);
  const first = await h.waitFor(async () => {
    const r = await health(gw);
    return r.body && r.body.nodes.length === 3 && r.body.nodes.every((n) => n.last_error) ? r : null;
  }, 30000, 'every seed in /healthz with its error');
  assert.equal(first.status, 503);
  assertClassicFields(first.body);
  assert.equal(first.body.ok, false);
  assert.equal(first.body.redis, 'down');
  assert.equal(first.body.mode, 'unknown');
  assert.match(first.body.why, /no seed answered/);
  for (const name of names) {
    assert.ok(first.body.why.includes(name), `${name} in why: ${first.body.why}`);
    const n = first.body.nodes.find((x) => x.node === name);
    assert.ok(n, `${name} in nodes: ${JSON.stringify(first.body.nodes)}`);
    assert.equal(n.up, false);
    assert.match(n.last_error, /connect to .* failed/);
  }

  // It keeps trying: the failure counters grow, and the process is still there.
  const m0 = await metrics(gw);
  assert.equal(series(m0, 'rankcast_redis_up'), 0);
  assert.equal(series(m0, 'rankcast_redis_nodes'), 3);
  const total0 = series(m0, 'rankcast_redis_failures_total');
  const node0 = series(m0, 'rankcast_redis_node_failures_total', names[1]);
  assert.ok(total0 >= 3, m0);
  assert.ok(node0 >= 1, m0);
  assert.equal(series(m0, 'rankcast_redis_node_up', names[1]), 0);
  await h.waitFor(async () => {
    const m = await metrics(gw);
    return series(m, 'rankcast_redis_failures_total') >= total0 + 3 &&
      series(m, 'rankcast_redis_node_failures_total', names[1]) > node0;
  }, 30000, 'more failed attempts counted');
  assert.ok(gw.alive(), 'the gateway is still running');
  assert.equal((await health(gw)).status, 503);
});

test('a host name that does not resolve, alone: /healthz says why, retries, the gateway lives', { skip, timeout: 120000 }, async (t) => {
  const gw = await spawnGateway(t, 'no-such-host.invalid:7000');
  await gw.waitForLine(/redis down: cannot resolve no-such-host\.invalid/, 30000);
  const r = await h.waitFor(async () => {
    const x = await health(gw);
    return x.body && /cannot resolve/.test(x.body.why || '') ? x : null;
  }, 30000, '/healthz to say why');
  assert.equal(r.status, 503);
  assertClassicFields(r.body);
  assert.equal(r.body.ok, false);
  assert.match(r.body.why, /no-such-host\.invalid:7000/);
  assert.deepEqual(r.body.nodes.map((n) => n.node), ['no-such-host.invalid:7000']);
  const m0 = await metrics(gw);
  const f0 = series(m0, 'rankcast_redis_node_failures_total', 'no-such-host.invalid:7000');
  assert.ok(f0 >= 1, m0);
  await h.waitFor(async () => series(await metrics(gw), 'rankcast_redis_node_failures_total',
    'no-such-host.invalid:7000') > f0, 30000, 'more failed lookups counted');
  assert.ok(gw.alive(), 'the gateway is still running');
});

test('seed lists on a real cluster', { skip, timeout: 300000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });

  await t.test('a plain redis-server among the seeds: named in the log and the warning, left out', async (t) => {
    const plain = await h.startRedis(t);
    const plainName = `127.0.0.1:${plain.port}`;
    const gw = await h.startGateway(t, { redis: `${plainName},${cluster.seeds}`, timeoutMs: 60000 });
    await gw.waitForLine(new RegExp(`seed 127\\.0\\.0\\.1:${plain.port} is not a cluster node`), 30000);
    const r = await h.waitFor(async () => {
      const x = await health(gw);
      return x.body && x.body.ok && x.body.warning && !x.body.nodes.some((n) => n.node === plainName) ? x : null;
    }, 30000, '/healthz with the warning, healthy, without the plain node');
    assert.equal(r.status, 200);
    assertClassicFields(r.body);
    assert.equal(r.body.mode, 'cluster');
    assert.ok(r.body.warning.includes(plainName), r.body.warning);
    assert.equal(r.body.why, undefined);
    await writeAndRead(gw, 'demo', 'plain-seed', 7);
    assert.equal(await plain.cli('DBSIZE'), '0', 'nothing written to the plain server');
  });

  await t.test('a host name that does not resolve, with good seeds: logged, served through the others', async (t) => {
    const gw = await h.startGateway(t, { redis: `no-such-host.invalid:7000,${cluster.seeds}`, timeoutMs: 60000 });
    await gw.waitForLine(/redis down: cannot resolve no-such-host\.invalid/, 30000);
    const r = await health(gw);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.mode, 'cluster');
    await writeAndRead(gw, 'demo', 'bad-host-seed', 3);
  });

  await t.test('a healthy cluster: /healthz lists the primaries and every slot, /metrics one series per node', async (t) => {
    const gw = await h.startGateway(t, { redis: cluster.seeds, timeoutMs: 60000 });
    const primaries = (await cluster.primaries()).map((p) => `127.0.0.1:${p}`).sort();
    assert.equal(primaries.length, 3);
    const r = await h.waitFor(async () => {
      const x = await health(gw);
      if (!x.body || !x.body.ok) return null;
      const serving = x.body.nodes.filter((n) => n.slots > 0);
      return serving.length === 3 && serving.every((n) => n.up) ? x : null;
    }, 30000, '/healthz with three primaries up');
    assert.equal(r.status, 200);
    assertClassicFields(r.body);
    assert.equal(r.body.ok, true);
    assert.equal(r.body.redis, 'up');
    assert.equal(r.body.scripts, 'loaded');
    assert.equal(r.body.mode, 'cluster');
    assert.equal(r.body.why, undefined);
    assert.equal(r.body.warning, undefined);
    const serving = r.body.nodes.filter((n) => n.slots > 0);
    assert.deepEqual(serving.map((n) => n.node).sort(), primaries);
    assert.equal(serving.reduce((s, n) => s + n.slots, 0), 16384);
    for (const n of serving) assert.equal(typeof n.last_error, 'string');

    await writeAndRead(gw, 'demo', 'healthy', 11);
    const m = await metrics(gw);
    assert.equal(series(m, 'rankcast_redis_up'), 1);
    for (const name of ['rankcast_redis_moved_total', 'rankcast_redis_ask_total', 'rankcast_redis_tryagain_total',
      'rankcast_redis_clusterdown_total', 'rankcast_redis_failures_total']) {
      assert.ok(series(m, name) >= 0, `${name} in /metrics`);
      assert.match(m, new RegExp(`# TYPE ${name} counter`));
    }
    assert.ok(series(m, 'rankcast_redis_slot_map_refreshes_total') >= 1, m);
    assert.ok(series(m, 'rankcast_redis_nodes') >= 3, m);
    assert.match(m, /# TYPE rankcast_redis_nodes gauge/);
    let slots = 0;
    for (const p of primaries) {
      assert.equal(series(m, 'rankcast_redis_node_up', p), 1, `${p} up in\n${m}`);
      assert.ok(series(m, 'rankcast_redis_node_reconnects_total', p) >= 0, m);
      assert.ok(series(m, 'rankcast_redis_node_failures_total', p) >= 0, m);
      slots += series(m, 'rankcast_redis_node_slots', p);
    }
    assert.equal(slots, 16384);
  });
});
