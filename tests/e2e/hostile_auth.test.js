/* hostile_auth.test.js - the gateway logs in to a Redis that needs it
 * (issue 23, "Redis AUTH and ACL users"; docs/security.md):
 * - redis-server --requirepass: writes, a WebSocket snapshot and its delta
 *   work with the password from each of its three sources
 *   (RANKCAST_REDIS_PASSWORD, [redis] password_env, [redis] password_file),
 *   and the password shows in no log line;
 * - a wrong password: the log says AUTH was refused (without either
 *   password), /healthz is 503 saying so, writes answer unavailable, the
 *   gateway keeps retrying and comes up once Redis takes that password;
 * - the password file's rules, at start and in --check-config;
 * - an ACL user built from the command list in docs/security.md: everything
 *   above works, ACL LOG stays empty (nothing was refused), and /healthz says
 *   "keyspace": "missing" until the operator sets notify-keyspace-events;
 * - the command-line export against the password-protected Redis;
 * - --workers 2, and a 3+3 cluster with requirepass and masterauth (a
 *   failover onto a replica the gateway had not met, the CLI export).
 * /healthz is read with the admin key (the detailed fields need it). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

const PASSWORD = 'e2e-requirepass-7f3a9c1d';
const USER_PASSWORD = 'e2e-acl-user-pass-5b2e80aa';

/* redis-server with --requirepass; redis.cli logs in as default. */
function startLockedRedis(t, args = []) {
  return h.startRedis(t, { args: ['--requirepass', PASSWORD, ...args], password: PASSWORD });
}

/* The ACL user of docs/security.md, from its marked block. */
function aclFromDocs(password) {
  const doc = fs.readFileSync(path.join(h.repoRoot, 'docs', 'security.md'), 'utf8');
  const at = doc.indexOf('<!-- rankcast-acl:');
  assert.ok(at >= 0, 'docs/security.md has the rankcast-acl block');
  const m = /```text\n([\s\S]*?)```/.exec(doc.slice(at));
  assert.ok(m, 'a ```text block follows the marker');
  const words = m[1].split(/\s+/).filter(Boolean).map((w) => w.replace('>PASSWORD', '>' + password));
  assert.deepEqual(words.slice(0, 3), ['ACL', 'SETUSER', 'rankcast']);
  return words;
}

async function createAclUser(redis) {
  assert.equal(await redis.cli(...aclFromDocs(USER_PASSWORD)), 'OK');
  await redis.cli('ACL', 'LOG', 'RESET');
}

function tmpFile(t, content, mode) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-pass-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'redis.pass');
  fs.writeFileSync(file, content);
  fs.chmodSync(file, mode);
  return file;
}

function run(args, env = {}) {
  return new Promise((resolve) => {
    execFile(h.gatewayBin(), args, { cwd: h.repoRoot, env: Object.assign({}, process.env, env), timeout: 60000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

const health = (gw) => h.http(gw.base, 'GET', '/healthz', undefined, { timeoutMs: 5000 });

/* A write over REST, a viewer's snapshot holding it, more writes as the
 * viewer's delta: the command connection (scripts) and the subscribe
 * connection (change events) both logged in. Leaves user:b 7, user:a 6. */
async function writesAndViews(t, gw, board = 'demo') {
  const first = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, { member: 'user:a', op: 'incr', delta: 5 });
  assert.equal(first.status, 200, first.text);
  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board, view: { top: 10 } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.deepEqual(snap.rows.map((r) => [r.member, r.score]), [['user:a', 5]]);
  const ack = await c.request({ op: 'incr', board, member: 'user:b', delta: 7, req: 'auth-b' });
  assert.equal(ack.op, 'ack', JSON.stringify(ack));
  // on a cluster the board's channel may start after the snapshot: a second snapshot then
  await c.next((m) => (m.op === 'delta' || m.op === 'snapshot') && m.sub === snap.sub && JSON.stringify(m).includes('user:b'), 5000);
  const again = await c.request({ op: 'incr', board, member: 'user:a', delta: 1, req: 'auth-a2' });
  assert.equal(again.op, 'ack', JSON.stringify(again));
  const delta = await c.next((m) => m.op === 'delta' && m.sub === snap.sub && JSON.stringify(m).includes('user:a'), 5000);
  assert.ok(JSON.stringify(delta).includes('"score":6'), JSON.stringify(delta));
  return c;
}

function assertNotLogged(gw, ...secrets) {
  for (const line of [...gw.stderr, ...gw.stdout])
    for (const s of secrets) assert.ok(!line.includes(s), `a log line holds a password: ${line}`);
}

test('requirepass: the password from RANKCAST_REDIS_PASSWORD, password_env or password_file; never logged', { skip, timeout: 120000 }, async (t) => {
  const redis = await startLockedRedis(t);
  const sources = {
    RANKCAST_REDIS_PASSWORD: () => ({ env: { RANKCAST_REDIS_PASSWORD: PASSWORD } }),
    password_env: (t2) => ({
      config: h.configWith(t2, { redis: { password_env: 'RC_E2E_REDIS_PASS' } }),
      env: { RC_E2E_REDIS_PASS: PASSWORD },
    }),
    password_file: (t2) => ({
      config: h.configWith(t2, { redis: { password_file: tmpFile(t2, PASSWORD + '\n', 0o600) } }),
    }),
  };
  for (const [name, opts] of Object.entries(sources)) {
    await t.test(name, async (t2) => {
      await redis.cli('FLUSHALL');
      const gw = await h.startGateway(t2, Object.assign({ redisPort: redis.port }, opts(t2)));
      await writesAndViews(t2, gw);
      await gw.waitForLine(new RegExp(`redis: AUTH with the password from ${name}`));
      const hz = await health(gw);
      assert.equal(hz.status, 200);
      assert.equal(hz.body.ok, true);
      assertNotLogged(gw, PASSWORD);
    });
  }
});

test('a wrong password: AUTH refused in the log and /healthz, writes unavailable, retried until Redis takes it', { skip, timeout: 120000 }, async (t) => {
  const redis = await startLockedRedis(t);
  const wrong = 'e2e-not-the-password-0c9d';
  const gw = await h.startGateway(t, { redisPort: redis.port, env: { RANKCAST_REDIS_PASSWORD: wrong }, healthy: false });
  await gw.waitForLine(/redis down: AUTH refused on the (command|subscribe|write) connection: WRONGPASS/, 10000);
  let hz;
  await h.waitFor(async () => {
    hz = await health(gw);
    return hz.body && hz.body.nodes.length === 1 && hz.body.nodes[0].failures >= 3;
  }, 20000, 'three failed attempts in /healthz');
  assert.equal(hz.status, 503);
  assert.equal(hz.body.ok, false);
  assert.match(hz.body.nodes[0].last_error, /AUTH refused on the (command|subscribe|write) connection: WRONGPASS/);
  assert.match(hz.body.why, /AUTH refused/);
  const w = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member: 'user:x', op: 'incr', delta: 1 });
  assert.equal(w.status, 503);
  assert.equal(w.body.code, 'unavailable');
  assertNotLogged(gw, wrong, PASSWORD);
  assert.ok(!JSON.stringify(hz.body).includes(wrong));

  // The operator fixes Redis' side: the next attempt of the backoff logs in.
  await redis.cli('CONFIG', 'SET', 'requirepass', wrong);
  await h.waitFor(async () => (await health(gw)).status === 200, 20000, '/healthz 200 once Redis takes the password');
  await writesAndViews(t, gw);
});

test('the password file: refused when world-readable, missing, or the password is in the config', { skip, timeout: 60000 }, async (t) => {
  const open = tmpFile(t, PASSWORD + '\n', 0o644);
  const conf = h.configWith(t, { redis: { password_file: open } });
  let r = await run(['--check-config', conf]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /password_file .* is readable by every user \(mode 0644\)/);

  const missing = h.configWith(t, { redis: { password_file: '/nonexistent/rankcast/redis.pass' } });
  r = await run(['--check-config', missing]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /password_file \/nonexistent\/rankcast\/redis.pass cannot be read: No such file/);
  // at start too, before anything listens
  r = await run(['--config', missing, '--listen', `127.0.0.1:${await h.freePort()}`, '--redis',
    `127.0.0.1:${await h.freePort()}`, '--state', fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-state-'))],
  { RANKCAST_REDIS_PASSWORD: '' });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot be read: No such file/);

  const ok = h.configWith(t, { redis: { password_file: tmpFile(t, PASSWORD + '\r\n', 0o440) } });
  r = await run(['--check-config', ok]);
  assert.equal(r.code, 0, r.stderr);

  const inline = h.configWith(t, { redis: { password: PASSWORD } });
  r = await run(['--check-config', inline]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /the Redis password never goes in the config file/);
  assert.ok(!r.stderr.includes(PASSWORD));
});

test('an ACL user with only the documented commands, keys and channels: everything works, nothing refused, keyspace events reported', { skip, timeout: 180000 }, async (t) => {
  const userConfig = (t2, redis = {}) => h.configWith(t2, { redis: Object.assign({ username: 'rankcast' }, redis) });
  // What Redis refused the user, as [command, ...]: only the gateway's one
  // try of CONFIG GET (keyspace_events = on) is expected.
  const refused = async (redis) => (await redis.cli('ACL', 'LOG')).split('\n')
    .filter((l, i, a) => a[i - 1] === 'object');
  const env = { RANKCAST_REDIS_PASSWORD: USER_PASSWORD };

  await t.test('keyspace_events = on, notify-keyspace-events not set: CONFIG GET refused, "keyspace": "missing"', async (t2) => {
    const redis = await startLockedRedis(t2);
    await createAclUser(redis);
    const gw = await h.startGateway(t2, { redisPort: redis.port, config: userConfig(t2), env });
    await writesAndViews(t2, gw);
    await h.waitFor(async () => (await health(gw)).body.keyspace === 'missing', 10000, '/healthz keyspace missing');
    const hz = await health(gw);
    assert.equal(hz.status, 200);
    assert.equal(hz.body.ok, true);
    assert.equal(hz.body.keyspace_events, false);
    await gw.waitForLine(/keyspace notifications are off.*notify-keyspace-events/, 5000);
    assert.deepEqual([...new Set(await refused(redis))], ['config|get'], 'Redis refused nothing else');
    assert.equal(await redis.cli('EXISTS', 'rc:{~probe}:z'), '0');
    const clients = await redis.cli('CLIENT', 'LIST');
    assert.match(clients, /user=rankcast/);
    assertNotLogged(gw, USER_PASSWORD, PASSWORD);
  });

  await t.test('keyspace_events = off, set by the operator: on, and an out-of-band ZADD reaches a viewer', async (t2) => {
    const redis = await startLockedRedis(t2, ['--notify-keyspace-events', 'Kghzxe']);
    await createAclUser(redis);
    const gw = await h.startGateway(t2, { redisPort: redis.port, config: userConfig(t2, { keyspace_events: 'off' }), env });
    const c = await writesAndViews(t2, gw);
    await h.waitFor(async () => (await health(gw)).body.keyspace_events === true, 10000, '/healthz keyspace_events true');
    assert.equal((await health(gw)).body.keyspace, undefined);
    const snap = await c.request({ op: 'subscribe', board: 'laps', view: { top: 5 } });
    await redis.cli('ZADD', 'rc:{laps|}:z', '1', 'user:oob');
    await c.next((m) => m.sub === snap.sub && JSON.stringify(m).includes('user:oob'), 5000);
    // more of what the gateway runs: a queued board, a decaying one, a team board, reads
    for (const [board, body] of [['burst', { member: 'u', op: 'incr', delta: 1 }],
      ['hot', { member: 'u', op: 'incr', delta: 1 }], ['laps', { member: 'u', op: 'best', value: 61000 }],
      ['daily', { member: 'u', op: 'incr', delta: 2 }], ['global', { member: 'u', op: 'incr', delta: 2 }]]) {
      const r = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, body);
      assert.ok(r.status === 200 || r.status === 202, `${board}: ${r.status} ${r.text}`);
    }
    // the queue's consumer (XREADGROUP, its script, XACK) and the decay rebuild (lock, ZUNIONSTORE) ran
    for (const board of ['burst', 'hot']) {
      await h.waitFor(async () => (await h.http(gw.base, 'GET', `/api/v1/boards/${board}?top=3`)).text.includes('"u"'),
        15000, `${board} to show the write`);
    }
    for (const q of ['demo?top=3', 'demo?offset=0&limit=5', 'hot?top=3', 'global?top=3', 'daily?top=3'])
      assert.equal((await h.http(gw.base, 'GET', `/api/v1/boards/${q}`)).status, 200, q);
    assert.deepEqual(await refused(redis), [], 'Redis refused nothing');
  });
});

test('rankcast export against a password-protected Redis', { skip, timeout: 60000 }, async (t) => {
  const redis = await startLockedRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, env: { RANKCAST_REDIS_PASSWORD: PASSWORD } });
  await writesAndViews(t, gw);
  const args = ['export', 'demo', '--format', 'jsonl', '--redis', `127.0.0.1:${redis.port}`];
  let r = await run(args, { RANKCAST_REDIS_PASSWORD: PASSWORD });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l).member), ['user:b', 'user:a']);
  r = await run(args, { RANKCAST_REDIS_PASSWORD: 'e2e-wrong-cli-pass' });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /AUTH refused: WRONGPASS/);
  assert.ok(!r.stderr.includes('e2e-wrong-cli-pass'));
  r = await run(args, { RANKCAST_REDIS_PASSWORD: '' });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /NOAUTH/);
});

test('--workers 2: every worker logs in', { skip, timeout: 60000 }, async (t) => {
  const redis = await startLockedRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, args: ['--workers', '2'],
    env: { RANKCAST_REDIS_PASSWORD: PASSWORD } });
  await writesAndViews(t, gw);
  // two workers, each with its command and subscribe connections, all logged in
  await h.waitFor(async () => (await redis.cli('CLIENT', 'LIST')).split('\n')
    .filter((l) => /user=default/.test(l) && !/cmd=client\|list/.test(l)).length >= 4, 10000, 'four gateway connections');
  const pids = new Set(gw.stderr.map((l) => /rankcast\[(\d+)\] info redis up/.exec(l)).filter(Boolean).map((m) => m[1]));
  assert.equal(pids.size, 2, 'both workers reached Redis');
  assertNotLogged(gw, PASSWORD);
});

/* A write retried while a failover leaves its slot without a primary for a moment. */
async function writeUntilAcked(gw, board, body) {
  let last;
  await h.waitFor(async () => {
    last = await h.http(gw.base, 'POST', `/api/v1/boards/${encodeURIComponent(board)}/scores`, body);
    return last.status === 200;
  }, 30000, `a write to ${board} to be acked`);
  return last.body;
}

test('a 3+3 cluster with requirepass and masterauth: every primary, a failover onto a replica, the CLI', { skip, timeout: 240000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1, password: PASSWORD });
  const gw = await h.startGateway(t, { redis: cluster.seeds, env: { RANKCAST_REDIS_PASSWORD: PASSWORD } });
  const primaries = await cluster.primaries();
  const boards = [];
  const owners = new Set();
  for (let i = 0; owners.size < primaries.length; i++) {
    const b = `match:a${i}`;
    const o = await cluster.owner(`rc:{${b}|}:z`);
    if (!owners.has(o)) boards.push(b);
    owners.add(o);
  }
  for (const b of boards) await writesAndViews(t, gw, b);

  // the replica of one board's primary takes over: the gateway meets it
  // through the slot map or MOVED and logs in there too
  const board = boards[0];
  const [replica] = await cluster.replicaOf(await cluster.owner(`rc:{${board}|}:z`));
  await cluster.failover(replica);
  await writeUntilAcked(gw, board, { member: 'user:c', op: 'incr', delta: 1 });
  await h.waitFor(async () => (await health(gw)).body.nodes.some((n) => n.node.endsWith(`:${replica}`) && n.up),
    20000, 'the promoted replica up in /healthz');
  const hz = await health(gw);
  assert.equal(hz.status, 200);
  for (const n of hz.body.nodes) assert.ok(!/AUTH|NOAUTH/.test(n.last_error), JSON.stringify(n));

  const r = await run(['export', board, '--format', 'jsonl', '--redis', cluster.seeds],
    { RANKCAST_REDIS_PASSWORD: PASSWORD });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l).member).sort(), ['user:a', 'user:b', 'user:c']);
  assertNotLogged(gw, PASSWORD);
});

test('a cluster with the documented ACL user: every primary, sharded channels, nothing refused but CONFIG GET', { skip, timeout: 240000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 0, password: PASSWORD });
  const acl = aclFromDocs(USER_PASSWORD);
  for (const n of cluster.nodes) {
    assert.equal(await cluster.cli(n.port, ...acl), 'OK');
    await cluster.cli(n.port, 'ACL', 'LOG', 'RESET');
  }
  const config = h.configWith(t, { redis: { username: 'rankcast' } });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config, env: { RANKCAST_REDIS_PASSWORD: USER_PASSWORD } });
  const boards = [];
  const owners = new Set();
  for (let i = 0; owners.size < 3; i++) {
    const b = `match:u${i}`;
    const o = await cluster.owner(`rc:{${b}|}:z`);
    if (!owners.has(o)) boards.push(b);
    owners.add(o);
  }
  for (const b of boards) await writesAndViews(t, gw, b);
  const r = await run(['export', boards[0], '--format', 'jsonl', '--config', config, '--redis', cluster.seeds],
    { RANKCAST_REDIS_PASSWORD: USER_PASSWORD });
  assert.equal(r.code, 0, r.stderr);
  for (const n of cluster.nodes) {
    const objects = (await cluster.cli(n.port, 'ACL', 'LOG')).split('\n').filter((l, i, a) => a[i - 1] === 'object');
    assert.deepEqual([...new Set(objects)].filter((o) => o !== 'config|get'), [], `node ${n.port} refused the user`);
  }
  assertNotLogged(gw, USER_PASSWORD, PASSWORD);
});
