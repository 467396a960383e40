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
 *   h.gatewayBin()                    $RANKCAST_BIN or <repo>/build/gateway/rankcast
 *   h.gatewayMissing()                why the gateway cannot run (a string), or null:
 *                                       test('...', { skip: h.gatewayMissing() }, ...)
 *   await h.freePort()                a free loopback port: never 6379, never given twice
 *   h.defer(t, fn)                    runs fn (may be async) when t ends, in reverse order of
 *                                       registration, together with the harness's own cleanup
 *
 *   const redis = await h.startRedis(t, { port?, args? })
 *     redis.port, redis.pid, redis.dir, redis.output (its log lines)
 *     await redis.cli('ZCARD', 'rc:{demo|}:z')   redis-cli -p PORT ...; stdout, last newline cut
 *     await redis.stop()              (start again on redis.port to simulate an outage)
 *
 *   const gw = await h.startGateway(t, { redisPort, port?, args?, env?, config?, bin?,
 *                                        stateDir?, timeoutMs? (default 10000) })
 *     Runs `rankcast --config <repo>/conf/rankcast.conf --listen 127.0.0.1:PORT
 *     --redis 127.0.0.1:REDISPORT --state <tmpdir> ...args` from the repo root (the
 *     shipped web_root "web" is relative) and resolves once GET /healthz is 200.
 *     gw.port, gw.pid, gw.base ("http://127.0.0.1:PORT"), gw.wsUrl (".../ws"), gw.stateDir
 *     gw.stderr / gw.stdout           lines so far (RANKCAST_E2E_VERBOSE=1 echoes them)
 *     await gw.waitForLine(/re/, ms)  the first stderr line matching, earlier ones included
 *     gw.exited                       promise of { code, signal }
 *     await gw.stop()                 SIGTERM, wait, SIGKILL after 5 s; resolves { code, signal }
 *
 *   const { redis, gw } = await h.startStack(t, gatewayOpts?)
 *
 *   const c = await h.connectWs(t, gw.wsUrl, { token?, protocol? (default "rankcast.v1",
 *                                               null for none), headers? })
 *     c.messages                      every message received (parsed JSON; a non-JSON
 *                                       frame shows as { raw: text })
 *     await c.next(pred, ms = 2000)   the first message not yet taken that matches:
 *                                       pred is a function or a { key: value } subset;
 *                                       rejects on timeout or close, listing what came
 *     await c.request(obj, ms)        sends obj with a fresh numeric id, resolves the
 *                                       reply with that id (error replies too: check op)
 *     c.send(obj), c.sendRaw(data)    raw: a string or Buffer, sent as is
 *     await c.closed                  { code, reason } once the socket closes
 *     await c.close()
 *   A refused handshake rejects connectWs with an Error whose .status is the HTTP status.
 *
 *   await h.http(base, method, path, body?, { token?, headers? })
 *                                     -> { status, headers, text, body (JSON or null) }
 *   h.vmRssKb(pid)                    resident set size in kB (/proc/<pid>/status)
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
    sock.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

async function startRedis(t, opts = {}) {
  const port = opts.port || (await freePort());
  const dir = tmpDir('rankcast-redis-');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--dir', dir, ...(opts.args || [])];
  const child = spawnTracked('redis-server', args, {}, [dir]);
  const output = [];
  eachLine(child.stdout, (l) => output.push(l));
  eachLine(child.stderr, (l) => output.push(l));

  const redis = {
    port, dir, output, pid: child.pid, exited: child.exited,
    cli: (...cliArgs) => new Promise((resolve, reject) => {
      execFile('redis-cli', ['-p', String(port), ...cliArgs.map(String)], (err, stdout, stderr) => {
        if (err) reject(new Error(`redis-cli ${cliArgs.join(' ')}: ${stderr || err.message}`));
        else resolve(stdout.replace(/\n$/, ''));
      });
    }),
    async stop() {
      const res = await terminate(child);
      child.untrack();
      removeDir(dir);
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

/* ---- the gateway ------------------------------------------------------------ */

function gatewayBin() {
  return process.env.RANKCAST_BIN || path.join(repoRoot, 'build', 'gateway', 'rankcast');
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
  if (!opts.redisPort) throw new Error('startGateway: redisPort is required');
  const port = opts.port || (await freePort());
  const ownState = !opts.stateDir;
  const stateDir = opts.stateDir || tmpDir('rankcast-state-');
  const args = [
    '--config', opts.config || path.join(repoRoot, 'conf', 'rankcast.conf'),
    '--listen', `127.0.0.1:${port}`,
    '--redis', `127.0.0.1:${opts.redisPort}`,
    '--state', stateDir,
    ...(opts.args || []),
  ];
  const child = spawnTracked(opts.bin || gatewayBin(), args, {
    cwd: repoRoot,
    env: Object.assign({}, process.env, opts.env),
  }, ownState ? [stateDir] : []);

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
  child.exited.then((res) => {
    exitInfo = res;
    // A crash mid-test is the likeliest cause of the failure that follows.
    if (started && !stopping) {
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
    async stop() {
      stopping = true;
      const res = await terminate(child);
      child.untrack();
      if (ownState) removeDir(stateDir);
      return res;
    },
  };
  if (t) defer(t, () => gw.stop());

  const timeoutMs = opts.timeoutMs || 10000;
  try {
    await waitFor(async () => {
      if (exitInfo) throw new Error(`rankcast exited during start: ${JSON.stringify(exitInfo)}`);
      try {
        const res = await fetch(base + '/healthz', { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        return res.status === 200;
      } catch (e) {
        return false; // not listening yet
      }
    }, timeoutMs, `GET ${base}/healthz to answer 200`);
  } catch (e) {
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

  sendRaw(data) { this.ws.send(data); }

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

function connectWs(t, url, opts = {}) {
  let u = url;
  if (opts.token) u += (u.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(opts.token);
  const protocol = opts.protocol === null ? undefined : opts.protocol || 'rankcast.v1';
  const ws = new WebSocket(u, protocol, { headers: opts.headers });
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

async function http(base, method, urlPath, body, opts = {}) {
  const headers = Object.assign({}, opts.headers);
  if (opts.token) headers.Authorization = 'Bearer ' + opts.token;
  let payload;
  if (body !== undefined && body !== null) {
    payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    if (!headers['Content-Type']) headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(base + urlPath, { method, headers, body: payload, signal: AbortSignal.timeout(opts.timeoutMs || 5000) });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* not JSON: text has it */ }
  return { status: res.status, headers: res.headers, text, body: json };
}

module.exports = {
  repoRoot, defer, gatewayBin, gatewayMissing, freePort, startRedis, startGateway, startStack,
  connectWs, http, vmRssKb, waitFor, sleep,
};
