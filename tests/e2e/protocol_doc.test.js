/* protocol_doc.test.js - every example of docs/protocol.md, replayed against a
 * real gateway on a real redis-server, in the order the document gives them.
 *
 * The document is the test's input: if the gateway and the document part
 * ways, this fails, naming the example (its line in docs/protocol.md) and the
 * reply that did not match. "How the examples are checked" in
 * docs/protocol.md is the format; in short:
 *
 *   ```conf-example        config text appended to conf/rankcast.conf (the keys)
 *   ```ws-example ATTRS    a WebSocket conversation
 *   ```rest-example ATTRS  HTTP requests and answers
 *
 *   ATTRS: key=NAME (the credential of every connection of the block: a
 *          [key NAME] of the conf-example, "none" or "wrong"), key.LABEL=NAME
 *          (one connection's), limits=k:v,k:v (a gateway whose [limits] are
 *          changed so; started on the same Redis).
 *   LABEL> JSON            send on WebSocket connection LABEL (no label: "ws")
 *   LABEL> raw TEXT        send TEXT as it is (input that is not valid JSON)
 *   LABEL< JSON            the first not yet matched message of LABEL that
 *                          matches (subset of fields; arrays of equal length)
 *   LABEL< close CODE      LABEL is closed by the gateway with CODE
 *   http> METHOD PATH [JSON | raw TEXT]   an HTTP request (in rest-example, no label = http)
 *   http< STATUS [JSON]        its answer, in the order the requests were sent
 *   "$name"                binds to what the gateway sent first, must be equal after;
 *                          in what is sent, replaced by the bound value
 *   "<anything>"           any value (must be present); in what is sent,
 *                          "<repeat C N>" is C repeated N times
 *   # ...                  a comment
 * Consecutive ">" lines are sent back to back before the "<" lines after
 * them are matched. At the end of a block, a message that arrived and that
 * no line matched fails the example (the document left it out). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const DOC = path.join(h.repoRoot, 'docs', 'protocol.md');
const WRONG_TOKEN = 'not-a-key-of-this-gateway-0000';
const WAIT_MS = 10000;   // per expected message: generous, the machine is shared
const SETTLE_MS = 300;   // at the end of a block, for messages the document left out

/* ---- parsing ---------------------------------------------------------------- */

function parseAttrs(words, where) {
  const attrs = { key: 'admin', keys: {}, limits: null };
  for (const w of words) {
    const m = /^(key|key\.[a-z][a-z0-9_]*|limits)=(\S+)$/.exec(w);
    if (!m) throw new Error(`${where}: unknown attribute '${w}'`);
    if (m[1] === 'key') attrs.key = m[2];
    else if (m[1] === 'limits') attrs.limits = m[2];
    else attrs.keys[m[1].slice(4)] = m[2];
  }
  return attrs;
}

function parseJson(text, where) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${where}: not JSON: ${text} (${e.message})`);
  }
}

/* One line of an example block into a step. */
function parseLine(kind, raw, where) {
  const m = /^([a-z][a-z0-9_]*)?([<>]) ?(.*)$/.exec(raw);
  if (!m) throw new Error(`${where}: not a step: ${raw}`);
  const label = m[1] || (kind === 'rest-example' ? 'http' : 'ws');
  const dir = m[2];
  const rest = m[3].trim();
  if (label === 'http') {
    if (dir === '>') {
      const r = /^(GET|POST|PUT|DELETE|HEAD) (\S+)(?: (.+))?$/.exec(rest);
      if (!r) throw new Error(`${where}: an HTTP request is "METHOD PATH [JSON]": ${raw}`);
      if (r[3] !== undefined && r[3].startsWith('raw ')) return { label, dir, method: r[1], path: r[2], rawBody: r[3].slice(4), where };
      return { label, dir, method: r[1], path: r[2], body: r[3] === undefined ? undefined : parseJson(r[3], where), where };
    }
    const r = /^(\d{3})(?: (.+))?$/.exec(rest);
    if (!r) throw new Error(`${where}: an HTTP answer is "STATUS [JSON]": ${raw}`);
    return { label, dir, status: Number(r[1]), body: r[2] === undefined ? undefined : parseJson(r[2], where), where };
  }
  if (dir === '<') {
    const c = /^close (\d+)$/.exec(rest);
    if (c) return { label, dir, close: Number(c[1]), where };
  }
  if (dir === '>' && rest.startsWith('raw ')) return { label, dir, raw: rest.slice(4), where };
  return { label, dir, msg: parseJson(rest, where), where };
}

function parseDoc(text) {
  const lines = text.split('\n');
  const examples = [];
  const conf = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    if (/^```/.test(lines[i]) && !/^```(ws-example|rest-example|conf-example)\b/.test(lines[i])) {
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++);
      continue; // another fenced block: its lines are no headings
    }
    const hm = /^#{1,6} (.*)$/.exec(lines[i]);
    if (hm) heading = hm[1];
    const open = /^```(ws-example|rest-example|conf-example)\b(.*)$/.exec(lines[i]);
    if (!open) continue;
    const kind = open[1];
    const start = i + 1;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push([i + 1, lines[i]]);
    if (i >= lines.length) throw new Error(`docs/protocol.md:${start}: unclosed ${kind} block`);
    if (kind === 'conf-example') {
      conf.push(body.map(([, l]) => l).join('\n'));
      continue;
    }
    const where = `docs/protocol.md:${start}`;
    const attrs = parseAttrs(open[2].trim().split(/\s+/).filter(Boolean), where);
    const steps = body
      .filter(([, l]) => l.trim() && !/^\s*#/.test(l))
      .map(([n, l]) => parseLine(kind, l, `docs/protocol.md:${n}`));
    if (!steps.length) throw new Error(`${where}: an example without steps`);
    examples.push({ kind, line: start, attrs, steps, title: heading });
  }
  return { examples, conf: conf.join('\n') };
}

/* ---- values: placeholders, matching ------------------------------------------ */

const isAny = (v) => typeof v === 'string' && /^<.*>$/.test(v);
const isVar = (v) => typeof v === 'string' && /^\$[A-Za-z_][A-Za-z0-9_]*$/.test(v);

/* What is sent: variables replaced by their values, "<repeat C N>" expanded. */
function fill(v, vars, where) {
  if (Array.isArray(v)) return v.map((x) => fill(x, vars, where));
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = fill(x, vars, where);
    return o;
  }
  if (isVar(v)) {
    if (!vars.has(v)) throw new Error(`${where}: ${v} is used before the gateway sent it`);
    return vars.get(v);
  }
  const rep = typeof v === 'string' && /^<repeat (.) (\d+)>$/.exec(v);
  if (rep) return rep[1].repeat(Number(rep[2]));
  if (isAny(v)) throw new Error(`${where}: "${v}" cannot be sent`);
  return v;
}

function fillPath(p, vars, where) {
  return p.replace(/\$[A-Za-z_][A-Za-z0-9_]*/g, (name) => {
    if (!vars.has(name)) throw new Error(`${where}: ${name} is used before the gateway sent it`);
    return encodeURIComponent(String(vars.get(name)));
  });
}

/* Whether actual matches expected; bindings go to `bound` (committed by the
 * caller only when the whole message matched). Returns null or a reason. */
function mismatch(expected, actual, vars, bound, at = '') {
  if (isVar(expected)) {
    const known = vars.has(expected) ? vars.get(expected) : bound.get(expected);
    if (actual === undefined) return `${at || 'value'}: missing (${expected})`;
    if (known === undefined) {
      bound.set(expected, actual);
      return null;
    }
    return JSON.stringify(known) === JSON.stringify(actual) ? null
      : `${at}: ${JSON.stringify(actual)} is not ${expected} = ${JSON.stringify(known)}`;
  }
  if (isAny(expected)) return actual === undefined ? `${at}: missing` : null;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${at}: ${JSON.stringify(actual)} is not an array`;
    if (actual.length !== expected.length) return `${at}: ${actual.length} entries, the document shows ${expected.length}`;
    for (let i = 0; i < expected.length; i++) {
      const r = mismatch(expected[i], actual[i], vars, bound, `${at}[${i}]`);
      if (r) return r;
    }
    return null;
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return `${at}: ${JSON.stringify(actual)} is not an object`;
    for (const [k, x] of Object.entries(expected)) {
      const r = mismatch(x, actual[k], vars, bound, at ? `${at}.${k}` : k);
      if (r) return r;
    }
    return null;
  }
  return expected === actual ? null : `${at}: ${JSON.stringify(actual)}, the document shows ${JSON.stringify(expected)}`;
}

/* ---- the gateways --------------------------------------------------------------- */

/* The secrets of the conf-example's [key NAME] sections. */
function keysOf(confText) {
  const keys = new Map();
  let name = null;
  for (const line of confText.split('\n')) {
    const sec = /^\[key ([^\]]+)\]/.exec(line.trim());
    if (sec) { name = sec[1]; continue; }
    if (/^\[/.test(line.trim())) { name = null; continue; }
    const s = /^secret\s*=\s*(\S+)/.exec(line.trim());
    if (name && s) keys.set(name, s[1]);
  }
  return keys;
}

function tokenFor(name, keys, where) {
  if (name === 'none') return null;
  if (name === 'wrong') return WRONG_TOKEN;
  if (!keys.has(name)) throw new Error(`${where}: no [key ${name}] in the conf-example block`);
  return keys.get(name);
}

/* ---- replaying one example ---------------------------------------------------------- */

async function replay(t, ex, ctx) {
  const gw = await ctx.gatewayFor(ex.attrs.limits);
  const vars = new Map();
  const conns = new Map();
  const http = { pending: [], answers: [] };
  const keyOf = (label) => ex.attrs.keys[label] || ex.attrs.key;

  async function conn(label, where) {
    if (!conns.has(label)) {
      const c = await h.connectWs(null, gw.wsUrl, { token: tokenFor(keyOf(label), ctx.keys, where), tokenIn: 'header' });
      c.matched = new Set();
      conns.set(label, c);
    }
    return conns.get(label);
  }

  async function expectMessage(step) {
    const c = await conn(step.label, step.where);
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      let reasons = [];
      for (let i = 0; i < c.messages.length; i++) {
        if (c.matched.has(i)) continue;
        const bound = new Map();
        const r = mismatch(step.msg, c.messages[i], vars, bound);
        if (!r) {
          c.matched.add(i);
          for (const [k, v] of bound) vars.set(k, v);
          return;
        }
        reasons.push(`${JSON.stringify(c.messages[i])}\n      (${r})`);
      }
      if (Date.now() > deadline || c.isClosed) {
        assert.fail(`${step.where}: ${step.label} received no message matching\n    ${JSON.stringify(step.msg)}\n` +
          `  unmatched messages received:\n    ${reasons.join('\n    ') || '(none)'}`);
      }
      await h.sleep(20);
    }
  }

  async function expectClose(step) {
    const c = await conn(step.label, step.where);
    const res = await Promise.race([c.closed, h.sleep(WAIT_MS).then(() => null)]);
    assert.ok(res, `${step.where}: ${step.label} was not closed within ${WAIT_MS} ms`);
    assert.equal(res.code, step.close, `${step.where}: close code`);
  }

  async function expectHttp(step) {
    assert.ok(http.answers.length, `${step.where}: an HTTP answer without a request before it`);
    const got = await http.answers.shift();
    const bound = new Map();
    const r = got.status !== step.status ? `status ${got.status}, the document shows ${step.status}`
      : step.body === undefined ? null : mismatch(step.body, got.body, vars, bound);
    assert.equal(r, null, `${step.where}: ${got.request}\n  answered ${got.status} ${got.text}\n  (${r})`);
    for (const [k, v] of bound) vars.set(k, v);
  }

  try {
    for (const step of ex.steps) {
      if (step.dir === '>' && step.label === 'http') {
        const p = fillPath(step.path, vars, step.where);
        const body = step.rawBody !== undefined ? step.rawBody
          : step.body === undefined ? undefined : fill(step.body, vars, step.where);
        const token = tokenFor(keyOf('http'), ctx.keys, step.where);
        const request = `${step.method} ${p}`;
        // sent one after the other: answers come back in the order sent
        const res = await h.http(gw.base, step.method, p, body, { token, timeoutMs: WAIT_MS });
        http.answers.push(Object.assign(res, { request }));
      } else if (step.dir === '>') {
        const c = await conn(step.label, step.where);
        if (step.raw !== undefined) c.sendRaw(step.raw);
        else c.send(fill(step.msg, vars, step.where));
      } else if (step.label === 'http') {
        await expectHttp(step);
      } else if (step.close !== undefined) {
        await expectClose(step);
      } else {
        await expectMessage(step);
      }
    }
    assert.equal(http.answers.length, 0, `docs/protocol.md:${ex.line}: an HTTP request whose answer the document does not show`);
    // Whatever arrived and matched no line: the document left it out. (An
    // example without a WebSocket has nothing that could still arrive: every
    // HTTP answer was matched above.)
    if (conns.size) await h.sleep(SETTLE_MS);
    for (const [label, c] of conns) {
      // a delta that only tells a new viewer count may come at any moment ("About the examples")
      const countOnly = (m) => m.op === 'delta' && Number.isInteger(m.viewers) && Array.isArray(m.rows) &&
        m.rows.length === 0 && Array.isArray(m.removed) && m.removed.length === 0;
      const extra = c.messages.filter((m, i) => !c.matched.has(i) && !countOnly(m));
      assert.deepEqual(extra, [], `docs/protocol.md:${ex.line}: ${label} received messages the example does not show`);
    }
  } finally {
    for (const c of conns.values()) await c.close();
  }
  return vars;
}

/* ---- the test --------------------------------------------------------------------- */

test('docs/protocol.md: every example, replayed against a real gateway', { skip, timeout: 300000 }, async (t) => {
  const text = fs.readFileSync(DOC, 'utf8');
  const { examples, conf } = parseDoc(text);

  // The document must hold the examples it promises; an empty or truncated
  // one, or a parser that stopped recognizing the blocks, fails here.
  assert.ok(examples.length > 20, `only ${examples.length} examples found in docs/protocol.md`);
  assert.ok(conf.trim(), 'no conf-example block in docs/protocol.md');
  const sent = new Set();
  const codes = new Set();
  const routes = new Set();
  const shown = new Set(); // v1.2: views, moments and REST query parameters the examples send
  for (const ex of examples) {
    for (const s of ex.steps) {
      if (s.msg && s.dir === '>') sent.add(s.msg.op);
      if (s.msg && s.dir === '>' && s.msg.view) {
        for (const k of ['members', 'team', 'top', 'feed']) {
          if (s.msg.view[k] === undefined) continue;
          shown.add(`${s.msg.op} ${k}`);
          if (s.msg.replay) shown.add(`replay ${k}`);
        }
      }
      if (s.msg && s.dir === '>' && s.msg.at) for (const k of Object.keys(s.msg.at)) shown.add(`${s.msg.op} at.${k}`);
      if (s.method) for (const k of new URLSearchParams(s.path.replace(/^[^?]*\??/, '')).keys()) shown.add(`?${k}`);
      if (s.msg && s.dir === '<' && s.msg.op === 'error') codes.add(s.msg.code);
      if (s.body && s.dir === '<' && s.body.op === 'error') codes.add(s.body.code);
      if (s.method) routes.add(`${s.method} ${s.path.replace(/\?.*/, '').replace(/(boards|members|blocked)\/[^/]+/g, '$1/_')}`);
    }
  }
  for (const op of ['subscribe', 'unsubscribe', 'incr', 'set', 'best', 'submit', 'rank', 'ping',
    'remove', 'unblock', 'reverse', 'reset']) assert.ok(sent.has(op), `no example sends op ${op}`);
  for (const code of ['bad_request', 'unknown_board', 'unauthorized', 'forbidden', 'out_of_range',
    'rate_limited', 'too_large']) assert.ok(codes.has(code), `no example shows error ${code}`);
  for (const r of ['GET /api/v1/boards', 'GET /api/v1/boards/_', 'POST /api/v1/boards/_/scores',
    'GET /api/v1/boards/_/members/_', 'PUT /api/v1/members/_/profile', 'GET /api/v1/members/_/profile',
    'DELETE /api/v1/boards/_/members/_', 'DELETE /api/v1/boards/_/blocked/_', 'POST /api/v1/boards/_/reverse',
    'POST /api/v1/boards/_/reset', 'GET /healthz', 'GET /api/v1/boards/_/members/_/history',
    'PUT /api/v1/boards/_/members/_/team']) assert.ok(routes.has(r), `no example of ${r}`);
  // v1.2 (issues 26 and 27): member lists, rosters, get, at_seq/at, replay and history have examples here
  for (const op of ['get', 'history', 'team']) assert.ok(sent.has(op), `no example sends op ${op}`);
  for (const x of ['subscribe members', 'subscribe team', 'get members', 'get top', 'get at.seq', 'get at.time',
    'replay top', 'replay members', 'replay feed', '?members', '?team', '?at_seq', '?at', '?from'])
    assert.ok(shown.has(x), `no example shows ${x}`);

  const keys = keysOf(conf);
  const redis = await h.startRedis(t);
  // the secret docs/protocol.md names in "Tokens (JWT)"; its example token is signed with it
  const DOC_JWT_SECRET = 'doc-jwt-secret-0123456789abcdef-0123';
  assert.ok(text.includes(DOC_JWT_SECRET), 'docs/protocol.md no longer names the JWT secret of its examples');
  const gateways = new Map();
  const ctx = {
    keys,
    async gatewayFor(limits) {
      const id = limits || '';
      if (!gateways.has(id)) {
        const spec = { extra: conf };
        if (limits) spec.limits = Object.fromEntries(limits.split(',').map((kv) => kv.split(':')));
        const config = h.configWith(t, spec);
        // the conf-example declares every key, the admin one included
        gateways.set(id, await h.startGateway(t, { redisPort: redis.port, config, env: { RANKCAST_ADMIN_KEY: null, RANKCAST_JWT_SECRET: DOC_JWT_SECRET } }));
      }
      return gateways.get(id);
    },
  };
  for (const ex of examples) {
    await t.test(`line ${ex.line}: ${ex.title}`, async (st) => { await replay(st, ex, ctx); });
  }
});

/* The checking rules themselves, without a gateway: a matcher that let
 * everything through would make the replay above pass whatever the gateway
 * said. */
test('the example matcher refuses what the document does not show', () => {
  const vars = new Map();
  const ok = (e, a) => { const b = new Map(); const r = mismatch(e, a, vars, b); if (!r) for (const [k, v] of b) vars.set(k, v); return r; };
  assert.equal(ok({ op: 'ack', score: 5 }, { op: 'ack', score: 5, rank: 1 }), null, 'extra fields are fine');
  assert.match(ok({ op: 'ack', score: 5 }, { op: 'ack', score: 6 }), /score: 6, the document shows 5/);
  assert.match(ok({ op: 'ack', score: 5 }, { op: 'ack' }), /score/);
  assert.match(ok({ rows: [] }, { rows: [{ rank: 1 }] }), /1 entries, the document shows 0/);
  assert.match(ok({ rows: [{ rank: 1 }] }, { rows: [{ rank: 2 }] }), /rows\[0\]\.rank/);
  assert.match(ok({ removed: ['a'] }, { removed: 'a' }), /not an array/);
  assert.equal(ok({ at: '<ms>' }, { at: 123 }), null);
  assert.match(ok({ at: '<ms>' }, {}), /at: missing/);
  assert.equal(ok({ sub: '$s' }, { sub: 'v1' }), null);
  assert.equal(vars.get('$s'), 'v1');
  assert.equal(ok({ sub: '$s' }, { sub: 'v1' }), null);
  assert.match(ok({ sub: '$s' }, { sub: 'v2' }), /is not \$s/);
  // a binding is kept only when the whole message matched
  assert.match(ok({ sub: '$t', seq: 1 }, { sub: 'v3', seq: 2 }), /seq/);
  assert.equal(vars.has('$t'), false);
  assert.equal(ok(null, null), null);
  assert.match(ok(null, 0), /document shows null/);
  assert.match(ok(0, false), /document shows 0/);

  const doc = [
    '# T', '```conf-example', '[key a]', 'secret = s-0123456789abcdef', '```',
    '## Sub', '```ws-example key=a limits=max_frame:256',
    '# a comment, not a heading', 'v> {"op":"ping","id":1}', 'v< {"op":"pong","id":1}', '> raw [1]', '< close 1008', '```',
    '```js', '# not a heading either', '```',
    '```rest-example key=none', '> GET /healthz', '< 200 {"ok":true}', '> POST /x raw {', '< 400', '```',
  ].join('\n');
  const { examples, conf } = parseDoc(doc);
  assert.equal(examples.length, 2);
  assert.match(conf, /\[key a\]/);
  assert.equal(examples[0].title, 'Sub');
  assert.equal(examples[1].title, 'Sub');
  assert.deepEqual(examples[0].attrs, { key: 'a', keys: {}, limits: 'max_frame:256' });
  assert.deepEqual(examples[0].steps.map((x) => [x.label, x.dir]), [['v', '>'], ['v', '<'], ['ws', '>'], ['ws', '<']]);
  assert.equal(examples[0].steps[2].raw, '[1]');
  assert.equal(examples[0].steps[3].close, 1008);
  assert.deepEqual(examples[1].steps.map((x) => [x.label, x.method || x.status]), [['http', 'GET'], ['http', 200], ['http', 'POST'], ['http', 400]]);
  assert.equal(examples[1].steps[2].rawBody, '{');
  assert.throws(() => parseDoc('```ws-example\n> {not json}\n```'), /not JSON/);
  assert.throws(() => parseDoc('```ws-example colour=red\n> {}\n```'), /unknown attribute/);
  assert.throws(() => parseDoc('```ws-example\n> {}\n'), /unclosed/);
  assert.throws(() => parseDoc('```ws-example\n# only a comment\n```'), /without steps/);
});
