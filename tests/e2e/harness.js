/* harness.js - run a private Redis and the rankcast gateway for end-to-end
 * tests, and talk to them over WebSocket, HTTP and redis-cli.
 *
 * Every start* takes the node:test context `t` and stops what it started when
 * the test ends, even when it fails: last started, first stopped (clients,
 * then the gateway, then its Redis). Whatever is left at process exit (or on
 * SIGINT/SIGTERM) is killed there too. Pass null for `t` to manage the
 * lifetime yourself.
 *
 *   const h = require('./harness');
 *   h.repoRoot                        absolute path of the repository
 *   h.ADMIN_KEY                       the test admin secret: every gateway gets it as
 *                                       RANKCAST_ADMIN_KEY (every scope, every board), and
 *                                       connectWs / http send it unless told otherwise
 *   h.gatewayBin()                    $RANKCAST_BIN or <repo>/build/gateway/rankcast
 *   h.gatewayMissing()                why the gateway cannot run (a string), or null:
 *                                       test('...', { skip: h.gatewayMissing() }, ...)
 *   await h.freePort()                a free loopback port: never 6379, never given twice
 *   h.defer(t, fn)                    runs fn (may be async) when t ends, in reverse order of
 *                                       registration, together with the harness's own cleanup
 *
 *   const redis = await h.startRedis(t, { port?, args?, dir?, password? })
 *     password: the server's --requirepass (give it in args too); redis.cli logs in with it
 *     dir: a data folder of the caller's, kept at stop (restart on the same port
 *     and dir, with --appendonly yes, to keep the data across an outage)
 *     redis.port, redis.pid, redis.dir, redis.output (its log lines)
 *     await redis.cli('ZCARD', 'rc:{demo|}:z')   redis-cli -p PORT ...; stdout, last newline cut
 *     await redis.fingerprint()       every key with its type and value (no TTLs), as one
 *                                       JSON string: equal before and after = nothing written
 *                                       (viewer counts, rc:{B|}:viewers, are left out: the
 *                                       gateways refresh them every 2 s while a board has viewers)
 *     await redis.stop()              (start again on redis.port to simulate an outage)
 *
 *   const gw = await h.startGateway(t, { redisPort, port?, args?, env?, config?, bin?,
 *                                        stateDir?, timeoutMs? (default 10000), healthy? })
 *     Runs `rankcast --config <repo>/conf/rankcast.conf --listen 127.0.0.1:PORT
 *     --redis 127.0.0.1:REDISPORT --state <tmpdir> ...args` from the repo root (the
 *     shipped web_root "web" is relative; opts.cwd: another working directory;
 *     opts.uid, opts.gid: run as that user, as root only)
 *     and resolves once GET /healthz is 200
 *     (healthy: false: once it answers at all, for a gateway that cannot reach Redis).
 *     Its environment is this process's, plus RANKCAST_ADMIN_KEY=h.ADMIN_KEY, plus
 *     opts.env (a null or undefined value there removes that variable:
 *     env: { RANKCAST_ADMIN_KEY: null } starts a gateway without the admin key).
 *     gw.port, gw.pid, gw.base ("http://127.0.0.1:PORT"), gw.wsUrl (".../ws"), gw.stateDir
 *     gw.stderr / gw.stdout           lines so far (RANKCAST_E2E_VERBOSE=1 echoes them)
 *     await gw.waitForLine(/re/, ms)  the first stderr line matching, earlier ones included
 *     gw.exited                       promise of { code, signal }
 *     gw.kill(signal = 'SIGTERM')     sends it, expecting an exit (not reported as a crash)
 *     await gw.stop()                 SIGTERM, wait, SIGKILL after 20 s; resolves { code, signal }
 *     await gw.checkExit()            throws unless it ended with exit 0 (or the test's own
 *                                     gw.kill('SIGKILL')), did not exit mid-test, and printed no
 *                                     sanitizer/leak report; runs by itself when the test ends
 *
 *   const { redis, gw } = await h.startStack(t, gatewayOpts?)
 *
 *   const file = h.configWith(t, { limits: { max_conns: 3 }, auth: { reads: 'key' },
 *                                  'board demo': { log_cap: 10 },
 *                                  'key reader': { secret: '...', scopes: 'read' },
 *                                  extra: '[key w]\nsecret = ...\nscopes = write\n' }, base?)
 *     A copy of the shipped config (or of the file `base`) in a temp dir removed when t
 *     ends. Each property but `extra` names a section by its header text; its keys
 *     replace the same keys in that section in place (a null value deletes the key),
 *     missing keys are added after the section's last key, and a section the file lacks
 *     is appended. `extra` (text) is appended as is. h.editConfig(text, spec) is the
 *     same on a string, without the file.
 *
 *   const c = await h.connectWs(t, gw.wsUrl, { token?, tokenIn?, protocol? (default
 *                                               "rankcast.v1", null for none), headers?,
 *                                               localAddress?, perMessageDeflate? })
 *     token: undefined sends h.ADMIN_KEY, null sends no credentials, a string sends it;
 *     tokenIn: "query" (default: ?token=KEY) or "header" (Authorization: Bearer KEY);
 *     localAddress: the source address to connect from (e.g. "127.0.0.2");
 *     perMessageDeflate: false to not offer it (ws offers it by default; with
 *     RC_E2E_NO_DEFLATE=1 in the environment false is the default)
 *     c.messages                      every message received (parsed JSON; a non-JSON
 *                                       frame shows as { raw: text })
 *     await c.next(pred, ms = 2000)   the first message not yet taken that matches:
 *                                       pred is a function or a { key: value } subset;
 *                                       rejects on timeout or close, listing what came
 *     await c.request(obj, ms)        sends obj with a fresh numeric id, resolves the
 *                                       reply with that id (error replies too: check op)
 *     c.send(obj), c.sendRaw(data, o?) raw: a string or Buffer, sent as is; o goes to ws's
 *                                       send: { binary: false } sends a Buffer as a text frame,
 *                                       { fin: false } sends a fragment
 *     await c.closed                  { code, reason } once the socket closes
 *     await c.close()
 *   A refused handshake rejects connectWs with an Error whose .status is the HTTP status.
 *
 *   await h.http(base, method, path, body?, { token?, headers?, localAddress?, timeoutMs? })
 *                                     -> { status, headers, text, body (JSON or null) }
 *     token as for connectWs (undefined: the admin key, null: none), sent as
 *     Authorization: Bearer; an Authorization in headers wins over token;
 *     localAddress: the source address (then sent with node:http, a fresh
 *     connection per request; headers is a Headers object either way)
 *   h.vmRssKb(pid)                    resident set size in kB (/proc/<pid>/status)
 *   await h.cpuPercent(pid, ms)       CPU use of pid over the next ms, in percent of a core
 *   h.pct(values, p)                  the p-quantile (0..1) of values, NaN when empty
 *   await h.waitFor(fn, ms, what)     polls fn() (may be async) until truthy
 */
'use strict';

const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const WebSocket = require('ws');

const repoRoot = path.resolve(__dirname, '..', '..');
// Every gateway the harness starts gets this as RANKCAST_ADMIN_KEY (a key with
// every scope on every board), and the clients below send it by default, so
// tests that are not about auth need not think about it.
const ADMIN_KEY = 'rankcast-e2e-admin-secret-0123456789';
const verbose = !!process.env.RANKCAST_E2E_VERBOSE;

/* ---- cleanup ------------------------------------------------------------- */

// Children and temp dirs still alive; killed synchronously at exit so a test
// that throws or is interrupted never leaves a redis-server behind.
const live = new Set();

function onExit() {
  for (const item of live) item.killNow();
  live.clear();
}
process.on('exit', onExit);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => { onExit(); process.exit(128 + os.constants.signals[sig]); });
}

function removeDir(dir) {
  try { fs.rmSync(dir, { recursive: true, force: true }); } catch (e) { /* already gone */ }
}

function tmpDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

// node:test runs t.after hooks first-registered first; stopping Redis before
// the gateway that uses it (or removing a dir before its process exits) makes
// noise and flakes, so the harness keeps one last-in-first-out stack per test.
const stacks = new WeakMap();

function defer(t, fn) {
  let stack = stacks.get(t);
  if (!stack) {
    stack = [];
    stacks.set(t, stack);
    t.after(async () => {
      let first = null;
      while (stack.length) {
        try { await stack.pop()(); } catch (e) { first = first || e; }
      }
      if (first) throw first;
    });
  }
  stack.push(fn);
}

/* ---- small utilities ----------------------------------------------------- */

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(fn, ms = 2000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(25);
  }
}

const given = new Set();

async function freePort() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const srv = net.createServer();
      srv.unref();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const p = srv.address().port;
        srv.close(() => resolve(p));
      });
    });
    // 6379 may be someone's real Redis; a port given twice would collide.
    if (port !== 6379 && !given.has(port)) {
      given.add(port);
      return port;
    }
  }
}

// 1 when nothing listens on 127.0.0.1:port now.
function portFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

// A free port whose cluster bus port (port + 10000) is free too.
async function freeClusterPort() {
  for (;;) {
    const port = await freePort();
    if (port + 10000 <= 65535 && (await portFree(port + 10000))) return port;
  }
}

function vmRssKb(pid) {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

// Splits a stream into lines, calling fn for each complete one.
function eachLine(stream, fn) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      fn(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  stream.on('end', () => { if (buf) fn(buf); });
}

// Spawns a child that is tracked for cleanup; resolves `exited` with
// { code, signal } and stops tracking it then.
function spawnTracked(bin, args, opts, dirs) {
  const child = spawn(bin, args, Object.assign({ stdio: ['ignore', 'pipe', 'pipe'] }, opts));
  const item = {
    killNow() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const d of dirs) removeDir(d);
    },
  };
  live.add(item);
  child.exited = new Promise((resolve) => {
    child.on('error', (err) => resolve({ code: null, signal: null, error: err }));
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  child.untrack = () => live.delete(item);
  return child;
}

// SIGTERM, then SIGKILL when the child has not exited within graceMs.
async function terminate(child, graceMs = 5000) {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const res = await child.exited;
    clearTimeout(timer);
    return res;
  }
  return child.exited;
}

function tail(lines, n = 20) {
  return lines.slice(-n).map((l) => '    ' + l).join('\n');
}

/* ---- Redis ---------------------------------------------------------------- */

// One PING over a raw socket: true when Redis answers +PONG.
function pingRedis(port) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    const done = (ok) => { sock.destroy(); resolve(ok); };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    // -NOAUTH: a server started with --requirepass is up too
    sock.on('data', (d) => done(/^(\+PONG|-NOAUTH)/.test(d.toString())));
  });
}

// Every key, its type and its value, sorted, as one JSON text. TTLs are left
// out (they tick); hash fields and set members are sorted so equal data gives
// equal text whatever the insertion order.
const FINGERPRINT_LUA = `
local keys = redis.call('KEYS', '*')
table.sort(keys)
local out = {}
for _, k in ipairs(keys) do
  -- viewer counts (rc:{B|}:viewers) are refreshed by the gateways by themselves
  if not string.match(k, '^rc:{[^}]*}:viewers$') then
    local t = redis.call('TYPE', k).ok
    local v = false
    if t == 'string' then v = redis.call('GET', k)
    elseif t == 'zset' then v = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
    elseif t == 'list' then v = redis.call('LRANGE', k, 0, -1)
    elseif t == 'set' then v = redis.call('SMEMBERS', k); table.sort(v)
    elseif t == 'hash' then
      local h = redis.call('HGETALL', k)
      v = {}
      for i = 1, #h, 2 do v[#v + 1] = h[i] .. '=' .. h[i + 1] end
      table.sort(v)
    elseif t == 'stream' then v = redis.call('XRANGE', k, '-', '+')
    end
    out[#out + 1] = { k, t, v }
  end
end
return cjson.encode(out)
`;

async function startRedis(t, opts = {}) {
  const port = opts.port || (await freePort());
  // opts.dir: the caller's data folder, kept after stop (restart with the same data)
  const dir = opts.dir || tmpDir('rankcast-redis-');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--dir', dir, ...(opts.args || [])];
  const child = spawnTracked('redis-server', args, {}, opts.dir ? [] : [dir]);
  const output = [];
  eachLine(child.stdout, (l) => output.push(l));
  eachLine(child.stderr, (l) => output.push(l));

  const redis = {
    port, dir, output, pid: child.pid, exited: child.exited,
    cli: (...cliArgs) => new Promise((resolve, reject) => {
      // opts.password: the default user's (--requirepass), sent by redis-cli itself
      const env = opts.password ? Object.assign({}, process.env, { REDISCLI_AUTH: opts.password }) : process.env;
      execFile('redis-cli', ['-p', String(port), ...cliArgs.map(String)], { env }, (err, stdout, stderr) => {
        if (err) reject(new Error(`redis-cli ${cliArgs.join(' ')}: ${stderr || err.message}`));
        else resolve(stdout.replace(/\n$/, ''));
      });
    }),
    fingerprint() {
      return redis.cli('EVAL', FINGERPRINT_LUA, '0');
    },
    async stop() {
      const res = await terminate(child);
      child.untrack();
      if (!opts.dir) removeDir(dir);
      return res;
    },
  };
  if (t) defer(t, () => redis.stop());

  let exited = false;
  child.exited.then(() => { exited = true; });
  try {
    await waitFor(async () => exited || (await pingRedis(port)), 5000, `redis-server on port ${port}`);
    if (exited) throw new Error('redis-server exited during start');
  } catch (e) {
    await redis.stop();
    throw new Error(`${e.message}\n${tail(output)}`);
  }
  return redis;
}

/* ---- a Redis Cluster -------------------------------------------------------- */

// A real cluster of opts.primaries primaries with opts.replicas replicas
// each (opts.password: requirepass and masterauth on every node), on free loopback ports, formed by redis-cli --cluster create and
// stopped with the test. The object answers questions about the live
// topology (asked of the nodes themselves, never remembered):
//   seeds                 "127.0.0.1:P1,127.0.0.1:P2,..." for --redis
//   nodes                 [{ port, redis }] (redis: what startRedis returns)
//   cli(port, ...args)    redis-cli on one node
//   primaries()           ports of the primaries that own slots now
//   owner(key)            port of the primary that owns the key's slot
//   replicaOf(port)       ports of that primary's replicas
//   failover(port)        CLUSTER FAILOVER on a replica; waits until it is a primary
//   kill(port, signal)    signals one node (SIGKILL: no clean stop)
//   waitOk(ms)            until every live node says cluster_state:ok and agrees on the slots
async function startCluster(t, opts = {}) {
  const primaries = opts.primaries || 3;
  const replicas = opts.replicas === undefined ? 1 : opts.replicas;
  const nodeTimeout = opts.nodeTimeoutMs || 2000;
  const count = primaries * (1 + replicas);
  const nodes = [];
  for (let i = 0; i < count; i++) {
    // A node also listens on its cluster bus port (port + 10000): that one
    // must be free too, and another process (a test suite run beside this
    // one) may take it between the check and the start: then another port.
    let redis;
    for (let attempt = 1; !redis; attempt++) {
      const port = await freeClusterPort();
      try {
        redis = await startRedis(t, {
          port,
          password: opts.password,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
            '--cluster-node-timeout', String(nodeTimeout), '--cluster-require-full-coverage', 'yes',
            ...(opts.password ? ['--requirepass', opts.password, '--masterauth', opts.password] : []),
            ...(opts.args || [])],
        });
      } catch (e) {
        if (attempt >= 5 || !/Address already in use|Failed listening/.test(e.message)) throw e;
      }
    }
    nodes.push({ port: redis.port, redis });
  }
  const byPort = new Map(nodes.map((n) => [n.port, n]));
  // opts.password: every node's requirepass and masterauth; redis-cli logs in with it
  const cliEnv = opts.password ? Object.assign({}, process.env, { REDISCLI_AUTH: opts.password }) : process.env;
  const cli = (port, ...args) => new Promise((resolve, reject) => {
    execFile('redis-cli', ['-p', String(port), ...args.map(String)], { timeout: 10000, env: cliEnv }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli -p ${port} ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout.replace(/\n$/, ''));
    });
  });
  const alive = () => nodes.filter((n) => !n.dead);
  // CLUSTER NODES as seen by one live node: [{ id, port, primary, of, slots: [[a, b]], failed }]
  const topology = async () => {
    let lastErr = null;
    for (const n of alive()) {
      try {
        const text = await cli(n.port, 'CLUSTER', 'NODES');
        return text.split('\n').filter(Boolean).map((line) => {
          const f = line.split(' ');
          const port = Number(/:(\d+)@/.exec(f[1])[1]);
          const slots = f.slice(8).filter((s) => /^\d/.test(s)).map((s) => {
            const [a, b] = s.split('-').map(Number);
            return [a, b === undefined ? a : b];
          });
          return { id: f[0], port, primary: f[2].includes('master'), of: f[3], slots, failed: /fail/.test(f[2]) };
        });
      } catch (e) { lastErr = e; }
    }
    throw lastErr || new Error('no live cluster node');
  };
  const cluster = {
    nodes,
    seeds: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    cli,
    async primaries() {
      return (await topology()).filter((n) => n.primary && !n.failed && n.slots.length).map((n) => n.port);
    },
    async owner(key) {
      const live = alive()[0];
      const slot = Number(await cli(live.port, 'CLUSTER', 'KEYSLOT', key));
      const owner = (await topology()).find((n) => n.primary && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b));
      return owner ? owner.port : null;
    },
    async replicaOf(port) {
      const topo = await topology();
      const p = topo.find((n) => n.port === port);
      return topo.filter((n) => !n.primary && n.of === p.id && !n.failed).map((n) => n.port);
    },
    async failover(port) {
      await cli(port, 'CLUSTER', 'FAILOVER');
      await waitFor(async () => /role:master/.test(await cli(port, 'INFO', 'replication')), 15000, `node ${port} to become a primary`);
      await cluster.waitOk();
    },
    kill(port, signal = 'SIGKILL') {
      const n = byPort.get(port);
      n.dead = true;
      process.kill(n.redis.pid, signal);
      return n.redis.exited;
    },
    async waitOk(ms = 30000) {
      await waitFor(async () => {
        try {
          const views = [];
          for (const n of alive()) {
            if (!/cluster_state:ok/.test(await cli(n.port, 'CLUSTER', 'INFO'))) return false;
            const slots = await cli(n.port, 'CLUSTER', 'SLOTS');
            views.push(slots.split('\n').filter((l) => /^\d+$/.test(l)).length);
          }
          // every live node has a primary for every slot range in its map
          return views.length > 0;
        } catch (e) { return false; }
      }, ms, 'cluster_state:ok on every live node');
      // and every primary that serves slots is known to be one by all
      await waitFor(async () => {
        try {
          const seen = [];
          for (const n of alive()) {
            const text = await cli(n.port, 'CLUSTER', 'NODES');
            seen.push(text.split('\n').filter((l) => / (myself,)?master /.test(l) && !/fail/.test(l) && /\d+-\d+/.test(l))
              .map((l) => l.split(' ')[1]).sort().join(','));
          }
          return seen.every((s) => s === seen[0]);
        } catch (e) { return false; }
      }, ms, 'every live node agrees on the primaries');
    },
  };

  const createArgs = ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`),
    '--cluster-replicas', String(replicas), '--cluster-yes'];
  await new Promise((resolve, reject) => {
    execFile('redis-cli', createArgs, { timeout: 60000, env: cliEnv }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli ${createArgs.join(' ')}: ${stderr || err.message}\n${stdout}`));
      else resolve();
    });
  });
  await cluster.waitOk();
  // replicas in sync, so a failover or a kill has a replica to promote
  if (replicas > 0) {
    await waitFor(async () => {
      const topo = await topology();
      if (topo.filter((n) => !n.primary).length !== primaries * replicas) return false;
      for (const n of topo.filter((x) => !x.primary)) {
        if (!/master_link_status:up/.test(await cli(n.port, 'INFO', 'replication'))) return false;
      }
      return true;
    }, 30000, 'every replica in sync');
  }
  return cluster;
}

/* ---- the gateway ------------------------------------------------------------ */

function gatewayBin() {
  return process.env.RANKCAST_BIN || path.join(repoRoot, 'build', 'gateway', 'rankcast');
}

// What a sanitizer (ASan, UBSan, LeakSanitizer) prints when it finds something.
const SANITIZER_REPORT = /runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer|WARNING: ThreadSanitizer/;

// The reasons a gateway's end is not clean ([] when it is): see checkExit.
function exitProblems(res, stderrLines, { crashed = false, killedOnPurpose = false } = {}) {
  const problems = [];
  if (crashed) problems.push(`it exited mid-test: ${JSON.stringify(res)}`);
  else if (res.error) problems.push(`spawn error: ${res.error.message}`);
  else if (killedOnPurpose && res.signal === 'SIGKILL') { /* the test's own SIGKILL */ }
  else if (res.code !== 0) problems.push(`exit ${JSON.stringify(res)}, expected code 0`);
  const report = stderrLines.find((l) => SANITIZER_REPORT.test(l));
  if (report) problems.push(`sanitizer report: ${report.trim()}`);
  return problems;
}

// A test skips (exit 0) when a tool it needs is missing, except in CI
// (CI=true), where a missing tool is a broken runner and must fail: this
// returns the reason to skip, or false, and throws in CI.
function inCI() {
  return process.env.CI === 'true' || process.env.CI === '1';
}
function toolMissing(reason) {
  if (!reason) return false;
  if (inCI()) throw new Error(`CI=${process.env.CI}: a needed tool is missing, failing instead of skipping: ${reason}`);
  return reason;
}

function gatewayMissing() {
  const bin = gatewayBin();
  try {
    fs.accessSync(bin, fs.constants.X_OK);
    return null;
  } catch (e) {
    return `gateway binary not found at ${bin} (build it, or set RANKCAST_BIN)`;
  }
}

async function startGateway(t, opts = {}) {
  // opts.redis: an address list as --redis takes it (a cluster's seeds);
  // opts.redisPort: one plain redis-server on loopback.
  if (!opts.redisPort && !opts.redis) throw new Error('startGateway: redisPort or redis is required');
  const port = opts.port || (await freePort());
  const ownState = !opts.stateDir;
  const stateDir = opts.stateDir || tmpDir('rankcast-state-');
  const args = [
    '--config', opts.config || path.join(repoRoot, 'conf', 'rankcast.conf'),
    '--listen', `127.0.0.1:${port}`,
    '--redis', opts.redis || `127.0.0.1:${opts.redisPort}`,
    '--state', stateDir,
    ...(opts.args || []),
  ];
  // A sanitizer build of the gateway keeps freed memory in quarantine (256 MB
  // by default), which would swamp the memory bounds the tests assert; a small
  // quarantine still catches use-after-free. Ignored by normal builds.
  const sanitizer = { ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'quarantine_size_mb=8:detect_leaks=1' };
  const env = Object.assign({}, process.env, sanitizer, { RANKCAST_ADMIN_KEY: ADMIN_KEY }, opts.env);
  for (const k of Object.keys(env)) if (env[k] === null || env[k] === undefined) delete env[k];
  const spawnOpts = { cwd: opts.cwd || repoRoot, env };
  if (opts.uid !== undefined) Object.assign(spawnOpts, { uid: opts.uid, gid: opts.gid });
  const child = spawnTracked(opts.bin || gatewayBin(), args, spawnOpts, ownState ? [stateDir] : []);

  const stderr = [];
  const stdout = [];
  const lineWaiters = new Set();
  eachLine(child.stderr, (l) => {
    stderr.push(l);
    if (verbose) process.stderr.write(`[rankcast:${port}] ${l}\n`);
    for (const w of lineWaiters) if (w.re.test(l)) w.done(l);
  });
  eachLine(child.stdout, (l) => {
    stdout.push(l);
    if (verbose) process.stderr.write(`[rankcast:${port} out] ${l}\n`);
  });

  let started = false;
  let stopping = false;
  let exitInfo = null;
  let crashed = false;      // exited while the test did not ask it to
  let killedOnPurpose = false; // the test sent SIGKILL itself (gw.kill('SIGKILL'))
  child.exited.then((res) => {
    exitInfo = res;
    // A crash mid-test is the likeliest cause of the failure that follows;
    // printed now, and the test fails on it at the end (checkExit).
    if (started && !stopping) {
      crashed = true;
      console.error(`rankcast (port ${port}) exited unexpectedly: ${JSON.stringify(res)}\n${tail(stderr)}`);
    }
  });

  const base = `http://127.0.0.1:${port}`;
  const gw = {
    port, base, stateDir, stderr, stdout, pid: child.pid, exited: child.exited, args,
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    waitForLine(re, ms = 2000) {
      const seen = stderr.find((l) => re.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const w = {
          re,
          done: (l) => { clearTimeout(w.timer); lineWaiters.delete(w); resolve(l); },
        };
        w.timer = setTimeout(() => {
          lineWaiters.delete(w);
          reject(new Error(`no stderr line matching ${re} within ${ms} ms\n${tail(stderr)}`));
        }, ms);
        lineWaiters.add(w);
      });
    },
    // Sends a signal the test expects the gateway to exit on (so its exit is
    // not reported as a crash); await gw.exited for { code, signal }.
    // SIGKILL is the only signal after which a non-zero exit is accepted, and
    // only when the test sends it itself, here.
    kill(signal = 'SIGTERM') {
      stopping = true;
      if (signal === 'SIGKILL' || signal === 9) killedOnPurpose = true;
      child.kill(signal);
    },
    async stop() {
      stopping = true;
      // A sanitizer build runs its leak check at exit: give it time before
      // SIGKILL (which checkExit then reports as a failure).
      const res = await terminate(child, 20000);
      child.untrack();
      if (ownState) removeDir(stateDir);
      return res;
    },
    // Throws unless the gateway ended well: exit 0 (or the SIGKILL the test
    // sent itself), no crash mid-test, no sanitizer or leak report on stderr.
    async checkExit() {
      const res = await child.exited;
      const problems = exitProblems(res, stderr, { crashed, killedOnPurpose });
      if (problems.length) {
        throw new Error(`rankcast (port ${port}) did not end cleanly: ${problems.join('; ')}\n${tail(stderr, 40)}`);
      }
      return res;
    },
  };
  let startFailed = false;
  if (t) {
    defer(t, async () => {
      await gw.stop();
      if (!startFailed) await gw.checkExit();
    });
  }

  const timeoutMs = opts.timeoutMs || 10000;
  try {
    await waitFor(async () => {
      if (exitInfo) throw new Error(`rankcast exited during start: ${JSON.stringify(exitInfo)}`);
      try {
        // A connection that closes after the answer (agent: false): a pooled
        // keep-alive socket would count against max_conns(_per_ip) in tests.
        const res = await httpFrom(undefined, base + '/healthz', 'GET', {}, undefined, 1000);
        return res.res.status === 200 || opts.healthy === false;
      } catch (e) {
        return false; // not listening yet
      }
    }, timeoutMs, `GET ${base}/healthz to answer 200`);
  } catch (e) {
    startFailed = true; // reported here, with its stderr; no second report at the end
    await gw.stop();
    throw new Error(`${e.message}\n  command: ${gw.args.join(' ')}\n  stderr:\n${tail(stderr)}`);
  }
  started = true;
  return gw;
}

async function startStack(t, gatewayOpts = {}) {
  const redis = await startRedis(t);
  const gw = await startGateway(t, Object.assign({ redisPort: redis.port }, gatewayOpts));
  return { redis, gw };
}

/* ---- config files ---------------------------------------------------------- */

const SECTION_RE = /^\s*\[([^\]]*)\]\s*(?:[#;].*)?$/;
const KEY_RE = /^\s*([A-Za-z0-9_]+)\s*=/;
const sectionName = (s) => s.trim().replace(/\s+/g, ' ');

// See the API comment: replaces keys in place, adds missing keys after the
// section's last key, appends missing sections, then `extra`.
function editConfig(text, spec = {}) {
  const lines = text.split('\n');
  const sections = new Map(); // name -> { headerAt, lastKeyAt }
  let current = null;
  lines.forEach((line, i) => {
    const sm = SECTION_RE.exec(line);
    if (sm) {
      current = sectionName(sm[1]);
      if (!sections.has(current)) sections.set(current, { headerAt: i, lastKeyAt: i });
      return;
    }
    if (current && KEY_RE.test(line)) sections.get(current).lastKeyAt = i;
  });
  const fmt = (k, v) => `${k} = ${v}`;
  const replaced = new Map(); // line index -> new text (null: drop)
  const added = new Map();    // line index -> lines to insert after it
  const appended = [];
  for (const [rawName, keys] of Object.entries(spec)) {
    if (rawName === 'extra') continue;
    const name = sectionName(rawName);
    const sec = sections.get(name);
    if (!sec) {
      appended.push('', `[${name}]`);
      for (const [k, v] of Object.entries(keys || {})) if (v !== null && v !== undefined) appended.push(fmt(k, v));
      continue;
    }
    // The section runs from its header to the next header.
    let end = lines.length;
    for (let i = sec.headerAt + 1; i < lines.length; i++) if (SECTION_RE.test(lines[i])) { end = i; break; }
    for (const [k, v] of Object.entries(keys || {})) {
      let at = -1;
      for (let i = sec.headerAt + 1; i < end; i++) {
        const km = KEY_RE.exec(lines[i]);
        if (km && km[1] === k) { at = i; break; }
      }
      if (at >= 0) replaced.set(at, v === null || v === undefined ? null : fmt(k, v));
      else if (v !== null && v !== undefined) {
        if (!added.has(sec.lastKeyAt)) added.set(sec.lastKeyAt, []);
        added.get(sec.lastKeyAt).push(fmt(k, v));
      }
    }
  }
  const out = [];
  lines.forEach((line, i) => {
    if (replaced.has(i)) { if (replaced.get(i) !== null) out.push(replaced.get(i)); } else out.push(line);
    if (added.has(i)) out.push(...added.get(i));
  });
  let result = out.join('\n');
  if (appended.length) result = result.replace(/\n*$/, '\n') + appended.join('\n') + '\n';
  if (spec.extra) result = result.replace(/\n*$/, '\n') + '\n' + spec.extra.replace(/\n*$/, '\n');
  return result;
}

function configWith(t, spec = {}, base = path.join(repoRoot, 'conf', 'rankcast.conf')) {
  const dir = tmpDir('rankcast-conf-');
  const file = path.join(dir, 'rankcast.conf');
  fs.writeFileSync(file, editConfig(fs.readFileSync(base, 'utf8'), spec));
  const item = { killNow: () => removeDir(dir) };
  live.add(item);
  const cleanup = () => { live.delete(item); removeDir(dir); };
  if (t) defer(t, cleanup);
  return file;
}

/* ---- WebSocket client --------------------------------------------------------- */

function toPredicate(pred) {
  if (typeof pred === 'function') return pred;
  return (m) => Object.keys(pred).every((k) => m[k] === pred[k]);
}

class WsClient {
  constructor(ws) {
    this.ws = ws;
    this.messages = [];
    this.queue = [];     // received and not yet taken by next()
    this.waiters = [];
    this.nextId = 1;
    this.isClosed = false;
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.isClosed = true;
        resolve({ code, reason: reason.toString() });
        this._pump();
      });
    });
    ws.on('message', (data) => {
      let msg;
      try { msg = JSON.parse(data.toString()); } catch (e) { msg = { raw: data.toString() }; }
      this.messages.push(msg);
      this.queue.push(msg);
      this._pump();
    });
  }

  next(pred, ms = 2000) {
    return new Promise((resolve, reject) => {
      const w = { match: toPredicate(pred), resolve, reject, pred };
      w.timer = setTimeout(() => this._fail(w, `within ${ms} ms`), ms);
      this.waiters.push(w);
      this._pump();
    });
  }

  request(obj, ms = 2000) {
    const id = this.nextId++;
    this.send(Object.assign({}, obj, { id }));
    return this.next((m) => m.id === id, ms);
  }

  send(obj) { this.ws.send(JSON.stringify(obj)); }

  sendRaw(data, opts) {
    if (opts) this.ws.send(data, opts);
    else this.ws.send(data);
  }

  async close() {
    if (this.isClosed) return this.closed;
    this.ws.close(1000);
    const timer = setTimeout(() => this.ws.terminate(), 2000);
    const res = await this.closed;
    clearTimeout(timer);
    return res;
  }

  _pump() {
    for (const w of this.waiters.slice()) {
      const i = this.queue.findIndex(w.match);
      if (i >= 0) {
        const [m] = this.queue.splice(i, 1);
        this._drop(w);
        w.resolve(m);
      } else if (this.isClosed) {
        this._fail(w, 'before the socket closed');
      }
    }
  }

  _drop(w) {
    clearTimeout(w.timer);
    this.waiters.splice(this.waiters.indexOf(w), 1);
  }

  _fail(w, when) {
    this._drop(w);
    const what = typeof w.pred === 'function' ? w.pred.toString() : JSON.stringify(w.pred);
    const last = this.messages.slice(-5).map((m) => JSON.stringify(m)).join('\n    ');
    w.reject(new Error(`no message matching ${what} ${when}; last received:\n    ${last || '(none)'}`));
  }
}

// undefined: the admin key; null: no credentials; a string: that one.
const tokenOf = (token) => (token === undefined ? ADMIN_KEY : token);

function connectWs(t, url, opts = {}) {
  let u = url;
  const token = tokenOf(opts.token);
  const headers = Object.assign({}, opts.headers);
  if (token !== null && opts.tokenIn === 'header') headers.Authorization = 'Bearer ' + token;
  else if (token !== null) u += (u.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token);
  const protocol = opts.protocol === null ? undefined : opts.protocol || 'rankcast.v1';
  const wsOpts = { headers };
  if (opts.localAddress) wsOpts.localAddress = opts.localAddress;
  // ws offers permessage-deflate unless told not to (its default: true);
  // RC_E2E_NO_DEFLATE=1 makes "not" the default, to run a test file's
  // clients on the plain send path (gathered frames, docs/gateway.md)
  if (opts.perMessageDeflate !== undefined) wsOpts.perMessageDeflate = opts.perMessageDeflate;
  else if (process.env.RC_E2E_NO_DEFLATE === '1') wsOpts.perMessageDeflate = false;
  const ws = new WebSocket(u, protocol, wsOpts);
  const client = new WsClient(ws);
  if (t) defer(t, () => client.close());
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', (err) => {
      const m = /Unexpected server response: (\d+)/.exec(err.message);
      if (m) err.status = Number(m[1]);
      reject(err);
    });
  });
}

/* ---- HTTP ------------------------------------------------------------------- */

// One request with node:http from a given source address (fetch cannot pick
// one); a fresh connection, closed after the reply.
function httpFrom(localAddress, url, method, headers, payload, timeoutMs) {
  const nodeHttp = require('node:http');
  return new Promise((resolve, reject) => {
    const req = nodeHttp.request(url, { method, headers, localAddress, agent: false, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const hdrs = new Headers();
        for (const [k, v] of Object.entries(res.headers)) hdrs.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ res: { status: res.statusCode, headers: hdrs }, text: Buffer.concat(chunks).toString() });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no reply within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function http(base, method, urlPath, body, opts = {}) {
  const headers = Object.assign({}, opts.headers);
  const token = tokenOf(opts.token);
  const hasAuth = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
  if (token !== null && !hasAuth) headers.Authorization = 'Bearer ' + token;
  let payload;
  if (body !== undefined && body !== null) {
    payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    if (!headers['Content-Type']) headers['Content-Type'] = 'application/json';
  }
  let res;
  let text;
  if (opts.localAddress) ({ res, text } = await httpFrom(opts.localAddress, base + urlPath, method, headers, payload, opts.timeoutMs || 5000));
  else {
    res = await fetch(base + urlPath, { method, headers, body: payload, signal: AbortSignal.timeout(opts.timeoutMs || 5000) });
    text = await res.text();
  }
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* not JSON: text has it */ }
  return { status: res.status, headers: res.headers, text, body: json };
}

/* ---- process measurements (for the flood tests) --------------------------- */

const CLK_TCK = (() => {
  try { return Number(require('node:child_process').execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch (e) { return 100; }
})();

function cpuTicks(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/* CPU use of process pid over the next ms milliseconds, in percent of a core. */
async function cpuPercent(pid, ms = 1000) {
  const t0 = process.hrtime.bigint();
  const c0 = cpuTicks(pid);
  await sleep(ms);
  return (100 * (cpuTicks(pid) - c0)) / CLK_TCK / (Number(process.hrtime.bigint() - t0) / 1e9);
}

/* The p-quantile (0..1) of arr, NaN when empty. */
function pct(arr, p) {
  const s = arr.slice().sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * p))] : NaN;
}

/* Sends every request in one TCP write (corked) on c (a connectWs client)
 * with ids prefix-0.., and resolves with the replies in id order once each
 * has one (within ms). With once, waits 100 ms more and asserts each got
 * exactly one (a duplicate would show up right behind). Only a client
 * without permessage-deflate writes synchronously: ws compresses every
 * message (on zlib's thread pool) when the server keeps context takeover,
 * and they then go out over several writes. */
async function burst(c, reqs, prefix, { ms = 10000, once = true } = {}) {
  const ids = reqs.map((_, i) => `${prefix}-${i}`);
  const sock = c.ws._socket;
  sock.cork();
  reqs.forEach((r, i) => c.send(Object.assign({}, r, { id: ids[i] })));
  sock.uncork();
  const want = new Set(ids);
  await waitFor(() => c.messages.filter((m) => want.has(m.id)).length >= ids.length, ms,
    `${ids.length} replies to ${prefix}`);
  if (!once) return ids.map((id) => c.messages.find((m) => m.id === id));
  await sleep(100);
  const replies = ids.map((id) => c.messages.filter((m) => m.id === id));
  replies.forEach((r, i) => {
    if (r.length !== 1) throw new Error(`request ${ids[i]} got ${r.length} replies: ${JSON.stringify(r)}`);
  });
  return replies.map((r) => r[0]);
}

/* Sends reqs (each with its own id) on ws (a `ws` WebSocket), in one TCP
 * write when cork, and resolves every reply (by id, in reqs' order) once
 * all are in; rejects after ms. Replies without a wanted id are ignored. */
function requestAll(ws, reqs, ms, { cork = false } = {}) {
  return new Promise((resolve, reject) => {
    const want = new Map(reqs.map((r) => [r.id, null]));
    let left = reqs.length;
    const timer = setTimeout(() => reject(new Error(`${left} of ${reqs.length} replies missing after ${ms} ms`)), ms);
    const onMsg = (data) => {
      const m = JSON.parse(data.toString());
      if (!want.has(m.id) || want.get(m.id) !== null) return;
      want.set(m.id, m);
      if (--left === 0) {
        clearTimeout(timer);
        ws.off('message', onMsg);
        resolve([...want.values()]);
      }
    };
    ws.on('message', onMsg);
    if (cork) ws._socket.cork();
    for (const r of reqs) ws.send(JSON.stringify(r));
    if (cork) ws._socket.uncork();
  });
}

module.exports = {
  exitProblems, spawnTracked, terminate, eachLine, toolMissing, inCI, repoRoot, ADMIN_KEY, configWith, editConfig, defer, gatewayBin, gatewayMissing, freePort, startRedis, startCluster, startGateway, startStack,
  connectWs, http, vmRssKb, waitFor, sleep, cpuPercent, pct, burst, requestAll,
};
