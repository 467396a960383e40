/* openapi.test.js - docs/openapi.yaml describes the REST API the gateway
 * serves: it passes `redocly lint` (@redocly/cli, pinned in the lockfile);
 * its operations are exactly the rows of the route table
 * (gateway/serve/gw_http_routes.c) plus any contract marked
 * "x-rankcast-served: false"; and every served route, called on a real
 * gateway over a real redis-server, answers with a status the document
 * lists for it and a body its schema accepts (ajv, JSON Schema 2020-12 as
 * OpenAPI 3.1 uses), for successes and errors alike (401, 403, 404, 400,
 * 413, 422, 429 and, with Redis stopped, 503); a body the gateway took
 * must match the operation's request schema too.
 *
 * NOT_SERVED lists the contract the gateway does not serve yet (empty since
 * member lists, rosters, moments and rank history landed); each entry is
 * probed, and the test fails once one is served, so that the entry (and its
 * mark in the document) comes off and its calls are added here. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const YAML = require('yaml');
const Ajv2020 = require('ajv/dist/2020');
const h = require('./harness');

const DOC_FILE = path.join(h.repoRoot, 'docs', 'openapi.yaml');
const ROUTES_FILE = path.join(h.repoRoot, 'gateway', 'serve', 'gw_http_routes.c');
const doc = YAML.parse(fs.readFileSync(DOC_FILE, 'utf8'));
const skip = h.toolMissing(h.gatewayMissing());

const SCORER = 'openapi-scorer-secret-0123456789';
const READER = 'openapi-reader-secret-0123456789';
const KEYS = `
[key scorer]
secret = ${SCORER}
scopes = read, write
boards = demo, match:*, players

[key reader]
secret = ${READER}
scopes = read
`;
const WRONG = 'no-such-key-0123456789';
const ANON = null;

/* The contract not served yet: a probe per entry, true once served. Keyed
 * "METHOD /path" (an operation) or "GET /api/v1/boards/{board}?NAME=" (a
 * query parameter), as marked "x-rankcast-served: false" in the document.
 * Empty: everything the document describes is served. */
const NOT_SERVED = {};

const METHODS = ['get', 'put', 'post', 'delete', 'head', 'patch', 'options'];

/* [{method, path, op, served}] of the document. */
function docOperations() {
  const out = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      if (!item[m]) continue;
      out.push({ method: m.toUpperCase(), path: p, op: item[m], served: item[m]['x-rankcast-served'] !== false });
    }
  }
  return out;
}

/* "METHOD /path/{board}/..." of every row of the route table. RM_ANY rows
 * (/healthz, /metrics) answer any method: the document describes their GET. */
function routeTable() {
  const src = fs.readFileSync(ROUTES_FILE, 'utf8');
  const table = /static const struct route routes\[\] = \{([\s\S]*?)\n\};/.exec(src);
  assert.ok(table, `no routes[] table in ${ROUTES_FILE}`);
  const rows = [];
  for (const m of table[1].matchAll(/\{\s*(RM_[A-Z_| ]+),\s*"([^"]+)"/g)) {
    const p = m[2].replace('{b}', '{board}').replace('{m}', '{member}');
    for (const bit of m[1].split('|').map((s) => s.trim())) {
      rows.push(`${bit === 'RM_ANY' ? 'GET' : bit.slice(3)} ${p}`);
    }
  }
  assert.ok(rows.length >= 15, `routes[] parsed to ${rows.length} rows`);
  return rows;
}

function pointerEscape(s) {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/* The document's operation for a concrete request path (query left off). */
function operationFor(method, urlPath) {
  const bare = urlPath.split('?')[0];
  for (const o of docOperations()) {
    if (o.method !== method) continue;
    const re = new RegExp('^' + o.path.replace(/\{[a-z]+\}/g, '[^/]+') + '$');
    if (re.test(bare)) return o;
  }
  return null;
}

function makeValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(Object.assign({}, doc, { $id: 'openapi' }));
  const cache = new Map();
  return (pointer) => {
    if (!cache.has(pointer)) cache.set(pointer, ajv.compile({ $ref: `openapi#${pointer}` }));
    return cache.get(pointer);
  };
}

/* Follows a $ref of the document to its target and pointer. */
function deref(node, pointer) {
  while (node && node.$ref) {
    assert.ok(node.$ref.startsWith('#/'), `only local refs: ${node.$ref}`);
    pointer = node.$ref.slice(1);
    node = pointer.split('/').slice(1).reduce((n, k) => n[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return { node, pointer };
}

/* Calls one route and checks its answer against the document: the status is
 * one the operation lists, the content type one it lists for that status,
 * and a JSON body valid against that schema. Returns the answer. */
async function call(gw, schemaOf, seen, method, urlPath, body, token, want) {
  const r = await h.http(gw.base, method, urlPath, body, token === undefined ? {} : { token });
  const what = `${method} ${urlPath} (${token === undefined ? 'admin' : token === null ? 'no key' : 'key'})`;
  if (want !== undefined) assert.equal(r.status, want, `${what}: ${r.status} ${r.text}`);
  const o = operationFor(method, urlPath);
  assert.ok(o, `${what}: no operation in docs/openapi.yaml`);
  const base = `/paths/${pointerEscape(o.path)}/${method.toLowerCase()}/responses`;
  assert.ok(o.op.responses[String(r.status)], `${what}: status ${r.status} is not documented (${r.text})`);
  const { node: resp, pointer } = deref(o.op.responses[String(r.status)], `${base}/${r.status}`);
  const type = (r.headers.get('content-type') || '').split(';')[0].trim();
  assert.ok(resp.content && resp.content[type], `${what}: content type ${type} not documented for ${r.status}`);
  if (type === 'application/json') {
    const validate = schemaOf(`${pointer}/content/${pointerEscape(type)}/schema`);
    assert.ok(validate(r.body), `${what}: ${r.text}\n  does not match the document: ${JSON.stringify(validate.errors, null, 1)}`);
  }
  // what the gateway took, the document's request schema takes too
  if (r.status < 300 && body !== undefined && typeof body === 'object' && o.op.requestBody) {
    const rb = `/paths/${pointerEscape(o.path)}/${method.toLowerCase()}/requestBody/content/application~1json/schema`;
    const validate = schemaOf(rb);
    assert.ok(validate(body), `${what}: the body the gateway took, ${JSON.stringify(body)}, does not match the document's request schema: ${JSON.stringify(validate.errors)}`);
  }
  const key = `${o.method} ${o.path}`;
  if (!seen.has(key)) seen.set(key, new Set());
  seen.get(key).add(r.status);
  return r;
}

test('docs/openapi.yaml passes redocly lint (recommended rules, no warnings)', (t) => {
  const bin = path.join(__dirname, 'node_modules', '.bin', 'redocly');
  const res = spawnSync(bin, ['lint', DOC_FILE], {
    encoding: 'utf8',
    timeout: 120000,
    // no telemetry or update check: CI reaches no such host
    env: Object.assign({}, process.env, { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' }),
  });
  const out = `${res.stdout}\n${res.stderr}`;
  assert.equal(res.status, 0, `redocly lint failed:\n${out}`);
  assert.match(out, /Your API description is valid/);
  assert.doesNotMatch(out, /You have \d+ warning/, out);
});

test('docs/openapi.yaml has an operation for every route of the route table, and only those and the ones marked not served yet', () => {
  const rows = new Set(routeTable());
  const ops = docOperations();
  const served = new Set(ops.filter((o) => o.served).map((o) => `${o.method} ${o.path}`));
  const unserved = ops.filter((o) => !o.served).map((o) => `${o.method} ${o.path}`);
  for (const r of rows) assert.ok(served.has(r), `route ${r} of gw_http_routes.c is not in docs/openapi.yaml`);
  for (const s of served) assert.ok(rows.has(s), `docs/openapi.yaml describes ${s}, which the route table has not`);
  for (const u of unserved) {
    assert.ok(!rows.has(u), `${u} is in the route table: drop its x-rankcast-served: false`);
    assert.ok(u in NOT_SERVED, `${u} is marked not served in docs/openapi.yaml but not in NOT_SERVED`);
  }
  // query parameters marked not served, likewise
  const get = doc.paths['/api/v1/boards/{board}'].get;
  for (const p of get.parameters.filter((x) => x['x-rankcast-served'] === false)) {
    assert.ok(`GET /api/v1/boards/{board}?${p.name}=` in NOT_SERVED, `?${p.name}= is marked not served but not in NOT_SERVED`);
  }
  for (const k of Object.keys(NOT_SERVED)) {
    const q = /\?([a-z_]+)=$/.exec(k);
    if (q) assert.ok(get.parameters.some((x) => x.name === q[1] && x['x-rankcast-served'] === false), `${k}: no such unserved parameter in the document`);
    else assert.ok(unserved.includes(k), `${k}: not an unserved operation of the document`);
  }
});

test('every served route answers as docs/openapi.yaml says, success and errors, on a real gateway', { skip, timeout: 120000 }, async (t) => {
  const redis = await h.startRedis(t);
  const config = h.configWith(t, { server: { test_clock: 'on' }, extra: KEYS });
  const gw = await h.startGateway(t, { redisPort: redis.port, config });
  const schemaOf = makeValidator();
  const seen = new Map();
  const c = (method, urlPath, body, token, want) => call(gw, schemaOf, seen, method, urlPath, body, token, want);
  const B = '/api/v1/boards';

  // the contract not served yet: still not served
  for (const [what, probe] of Object.entries(NOT_SERVED)) {
    assert.equal(await probe(gw), false, `${what} is served now: take it out of NOT_SERVED (and its x-rankcast-served: false in docs/openapi.yaml) and add its calls here`);
  }

  // health and metrics
  await c('GET', '/healthz', undefined, ANON, 200);
  const health = await c('GET', '/healthz', undefined, undefined, 200);
  assert.ok(health.body.nodes && health.body.queues && health.body.test_clock, health.text);
  await c('GET', '/metrics', undefined, undefined, 200);
  await c('GET', '/metrics', undefined, ANON, 401);
  await c('GET', '/metrics', undefined, READER, 403);

  // the board list
  await c('GET', B, undefined, ANON, 200);
  await c('GET', B, undefined, WRONG, 401);

  // writes: every op, idempotency, queued, multi-field, team boards
  await c('POST', `${B}/match:1/scores`, { member: 'user:1', op: 'incr', delta: 5, req: 'oa-1' }, SCORER, 200);
  const dup = await c('POST', `${B}/match:1/scores`, { member: 'user:1', op: 'incr', delta: 5, req: 'oa-1' }, SCORER, 200);
  assert.equal(dup.body.duplicate, true);
  await c('POST', `${B}/match:1/scores`, { member: 'user:2', op: 'set', value: 30 }, SCORER, 200);
  await c('POST', `${B}/match:1/scores`, { member: 'user:3', op: 'best', value: 20 }, SCORER, 200);
  await c('POST', `${B}/laps/scores`, { member: 'user:1', op: 'best', value: 61000 }, undefined, 200);
  const sub = await c('POST', `${B}/clears/scores`, { member: 'user:1', op: 'submit', fields: { clears: 2, revives: 1, first_clear_ms: 900 } }, undefined, 200);
  assert.ok(sub.body.fields, sub.text);
  const q = await c('POST', `${B}/burst/scores`, { member: 'user:1', op: 'incr', delta: 1 }, undefined, 200);
  assert.equal(q.body.queued, true, q.text);
  await c('POST', `${B}/match:1/scores`, { member: 'user:1', op: 'add', delta: 1 }, SCORER, 400);
  await c('POST', `${B}/match:1/scores`, '{"member":"user:1","op":"incr","delta":1', SCORER, 400);
  await c('POST', `${B}/match:1/scores`, { member: 'user:1', op: 'incr', delta: 1 }, ANON, 401);
  await c('POST', `${B}/match:1/scores`, { member: 'user:1', op: 'incr', delta: 1 }, READER, 403);
  await c('POST', `${B}/nope/scores`, { member: 'user:1', op: 'incr', delta: 1 }, undefined, 404);
  await c('POST', `${B}/demo/scores`, { member: 'user:1', op: 'set', value: 99999999 }, SCORER, 422);
  await c('POST', `${B}/demo/scores`, { member: 'user:1', op: 'incr', delta: 1, pad: 'x'.repeat(70000) }, SCORER, 413);

  // teams
  await c('PUT', `${B}/players/members/user:1/team`, { team: 'red' }, SCORER, 200);
  const teamAck = await c('POST', `${B}/players/scores`, { member: 'user:1', op: 'incr', delta: 7 }, SCORER, 200);
  assert.equal(teamAck.body.team, 'red', teamAck.text);
  await c('PUT', `${B}/players/members/user:1/team`, { team: null }, SCORER, 200);
  await c('PUT', `${B}/demo/members/user:1/team`, { team: 'red' }, undefined, 400);
  await c('PUT', `${B}/players/members/user:1/team`, { team: 'red' }, ANON, 401);

  // reads
  await c('GET', `${B}/match:1?top=2`, undefined, ANON, 200);
  await c('GET', `${B}/match:1?offset=1&limit=5`, undefined, ANON, 200);
  await c('GET', `${B}/match:1?around=user:1&radius=1`, undefined, ANON, 200);
  await c('GET', `${B}/match:1?top=3&places=shared`, undefined, ANON, 200);
  await c('GET', `${B}/clears?top=3`, undefined, ANON, 200);
  await c('GET', `${B}/daily?top=3`, undefined, ANON, 200);
  await c('GET', `${B}/players?top=3`, undefined, ANON, 200);
  // v1.2 member lists: rows by board-wide rank, absent in the order asked
  const list = await c('GET', `${B}/match:1?members=user:nobody,user:2,user:1`, undefined, ANON, 200);
  assert.deepEqual(list.body.rows.map((r) => [r.member, r.rank]), [['user:2', 1], ['user:1', 3]], list.text);
  assert.deepEqual(list.body.absent, ['user:nobody'], list.text);
  await c('GET', `${B}/match:1?members=user:1,,user:2`, undefined, ANON, 400);
  await c('GET', `${B}/match:1?members=user:1,user:1`, undefined, ANON, 400);
  await c('GET', `${B}/match:1?members=${Array.from({ length: 201 }, (_, i) => `u${i}`).join(',')}`, undefined, ANON, 400);
  const long = Array.from({ length: 100 }, (_, i) => `user:${String(i).padStart(80, '0')}`).join(',');
  const big = await c('GET', `${B}/match:1?members=${long}`, undefined, ANON, 413);
  assert.equal(big.body.code, 'too_large', big.text);
  // v1.2 rosters on the shipped players board (teams = squads): rows with
  // "team", absent the members without points
  await c('PUT', `${B}/players/members/user:1/team`, { team: 'blue' }, SCORER, 200);
  await c('PUT', `${B}/players/members/user:5/team`, { team: 'blue' }, SCORER, 200);
  const roster = await c('GET', `${B}/players?team=blue`, undefined, ANON, 200);
  assert.deepEqual(roster.body.rows.map((r) => [r.member, r.team]), [['user:1', 'blue']], roster.text);
  assert.deepEqual(roster.body.absent, ['user:5'], roster.text);
  assert.equal(roster.body.total, 2, roster.text);
  const teamRows = await c('GET', `${B}/players?top=3`, undefined, ANON, 200);
  assert.equal(teamRows.body.rows.find((r) => r.member === 'user:1').team, 'blue', teamRows.text);
  await c('GET', `${B}/players?team=bad!team`, undefined, ANON, 400);
  await c('GET', `${B}/match:1?team=blue`, undefined, ANON, 400);
  // v1.2 moments: at_seq and at on match:1 after its three writes above
  const head = await c('GET', `${B}/match:1/stats`, undefined, ANON, 200);
  assert.equal(head.body.seq, 3, head.text);
  const atSeq = await c('GET', `${B}/match:1?top=3&at_seq=2`, undefined, ANON, 200);
  assert.equal(atSeq.body.at_seq, 2, atSeq.text);
  assert.equal(atSeq.body.seq, 2, atSeq.text);
  assert.equal(atSeq.body.total, 2, atSeq.text);
  assert.equal(typeof atSeq.body.at_time, 'number', atSeq.text);
  const atZero = await c('GET', `${B}/match:1?top=3&at_seq=0`, undefined, ANON, 200);
  assert.equal(atZero.body.at_time, null, atZero.text);
  assert.deepEqual(atZero.body.rows, [], atZero.text);
  const atNow = await c('GET', `${B}/match:1?offset=0&limit=5&at=${Date.now()}`, undefined, ANON, 200);
  assert.equal(atNow.body.at_seq, 3, atNow.text);
  await c('GET', `${B}/match:1?around=user:1&radius=1&at_seq=1`, undefined, ANON, 200);
  await c('GET', `${B}/match:1?top=3&at_seq=99`, undefined, ANON, 400);
  await c('GET', `${B}/match:1?top=3&at=${Date.now() + 3600e3}`, undefined, ANON, 400);
  await c('GET', `${B}/match:1?top=3&at_seq=1&at=1`, undefined, ANON, 400);
  await c('GET', `${B}/match:1?top=3&at_seq=-1`, undefined, ANON, 400);
  const listThen = await c('GET', `${B}/match:1?members=user:1,nobody&at_seq=1`, undefined, ANON, 200);
  assert.deepEqual(listThen.body.absent, ['nobody'], listThen.text);
  assert.equal(listThen.body.at_seq, 1, listThen.text);
  // a roster at a moment (docs/history.md, "Rosters at a moment")
  const rosterThen = await c('GET', `${B}/players?team=blue&at_seq=1`, undefined, ANON, 200);
  assert.equal(rosterThen.body.at_seq, 1, rosterThen.text);
  assert.equal(rosterThen.body.total, 2, rosterThen.text);
  await c('GET', `${B}/hot?top=3&at_seq=0`, undefined, ANON, 400);
  // a finished period whose keys are gone holds no moment: out_of_range, oldest_seq 0
  const gone = await c('GET', `${B}/daily?top=3&period=2026-01-05&at_seq=3`, undefined, ANON, 422);
  assert.equal(gone.body.code, 'out_of_range', gone.text);
  assert.equal(gone.body.oldest_seq, 0, gone.text);
  // v1.2 rank history: 11 points up to now, the last one the present
  const to = Date.now();
  const hist = await c('GET', `${B}/match:1/members/user:1/history?from=${to - 10000}&to=${to}&step=1000`, undefined, ANON, 200);
  assert.equal(hist.body.points.length, 11, hist.text);
  assert.deepEqual(hist.body.points[10], { at: to, seq: 3, score: 5, rank: 3 }, hist.text);
  await c('GET', `${B}/match:1/members/user:1/history?from=0&to=${to}`, undefined, ANON, 400);
  await c('GET', `${B}/match:1/members/user:1/history?from=0&to=5000&step=1`, undefined, ANON, 400);
  await c('GET', `${B}/match:1/members/user:1/history?from=${to}&to=${to + 3600e3}&step=3600000`, undefined, ANON, 400);
  await c('GET', `${B}/match:1/members/bad!name/history?from=0&to=1&step=1`, undefined, ANON, 400);
  await c('GET', `${B}/nope/members/user:1/history?from=0&to=1&step=1`, undefined, ANON, 404);
  await c('GET', `${B}/match:1/members/user:1/history?from=0&to=1&step=1`, undefined, WRONG, 401);
  await c('GET', `${B}/match:1/members/user:1/history?from=0&to=1&step=1&live=1`, undefined, READER, 403);
  const old = Date.UTC(2026, 0, 5, 1);
  const goneHist = await c('GET', `${B}/daily/members/user:1/history?period=2026-01-05&from=${old}&to=${old + 1000}&step=1000`, undefined, ANON, 422);
  assert.equal(goneHist.body.oldest_seq, 0, goneHist.text);
  await c('GET', `${B}/match:1?top=0`, undefined, ANON, 400);
  await c('GET', `${B}/bad!name`, undefined, ANON, 400);
  await c('GET', `${B}/nope`, undefined, ANON, 404);
  await c('GET', `${B}/match:1`, undefined, WRONG, 401);
  await c('GET', `${B}/match:1?top=3&live=1`, undefined, READER, 403);
  await c('GET', `${B}/match:1/members/user:2`, undefined, ANON, 200);
  await c('GET', `${B}/match:1/members/user:999`, undefined, ANON, 200);
  await c('GET', `${B}/match:1/members/bad!name`, undefined, ANON, 400);
  await c('GET', `${B}/nope/members/user:1`, undefined, ANON, 404);
  await c('GET', `${B}/match:1/members/user:1`, undefined, WRONG, 401);
  await c('GET', `${B}/match:1/stats`, undefined, ANON, 200);
  await c('GET', `${B}/daily/stats`, undefined, ANON, 200);
  await c('GET', `${B}/nope/stats`, undefined, ANON, 404);
  await c('GET', `${B}/daily/stats?period=2026-1-5`, undefined, ANON, 400);

  // profiles
  await c('PUT', '/api/v1/members/user:2/profile', { name: 'PlayerTwo', avatar: 'https://example.com/2.png' }, SCORER, 200);
  await c('GET', '/api/v1/members/user:2/profile', undefined, ANON, 200);
  await c('GET', '/api/v1/members/user:7/profile', undefined, ANON, 200);
  const joined = await c('GET', `${B}/match:1?top=1`, undefined, ANON, 200);
  assert.equal(joined.body.rows[0].name, 'PlayerTwo', joined.text);
  await c('PUT', '/api/v1/members/user:2/profile', { Name: 'x' }, SCORER, 400);
  await c('PUT', '/api/v1/members/user:2/profile', { name: 'x' }, ANON, 401);
  await c('PUT', '/api/v1/members/user:2/profile', { name: 'x' }, READER, 403);
  await c('GET', '/api/v1/members/bad!name/profile', undefined, ANON, 400);
  await c('GET', '/api/v1/members/user:2/profile', undefined, WRONG, 401);

  // admin: reverse, remove and block, unblock, freeze, reveal, reset
  await c('POST', `${B}/match:1/reverse`, { req: 'oa-1' }, undefined, 200);
  await c('POST', `${B}/match:1/reverse`, {}, undefined, 400);
  await c('POST', `${B}/match:1/reverse`, { req: 'oa-1' }, SCORER, 403);
  await c('DELETE', `${B}/match:1/members/user:3?block=1`, undefined, undefined, 200);
  await c('POST', `${B}/match:1/scores`, { member: 'user:3', op: 'incr', delta: 1 }, SCORER, 403);
  await c('DELETE', `${B}/match:1/members/user:3`, undefined, SCORER, 403);
  await c('DELETE', `${B}/match:1/members/user:3`, undefined, ANON, 401);
  await c('DELETE', `${B}/nope/members/user:3`, undefined, undefined, 404);
  await c('DELETE', `${B}/match:1/blocked/user:3`, undefined, undefined, 200);
  await c('DELETE', `${B}/match:1/blocked/user:3`, undefined, SCORER, 403);
  await c('DELETE', `${B}/match:1/blocked/bad!name`, undefined, undefined, 400);
  await c('POST', `${B}/match:1/freeze`, undefined, undefined, 200);
  await c('POST', `${B}/match:1/scores`, { member: 'user:4', op: 'incr', delta: 100 }, SCORER, 200);
  const frozen = await c('GET', `${B}/match:1?top=3`, undefined, ANON, 200);
  assert.ok(frozen.body.frozen !== undefined, frozen.text);
  await c('GET', `${B}/match:1?top=3&live=1`, undefined, undefined, 200);
  await c('GET', `${B}/match:1/members/user:4`, undefined, ANON, 200);
  const state = await c('GET', `${B}/match:1/freeze`, undefined, undefined, 200);
  assert.equal(state.body.pending, 1, state.text);
  await c('GET', `${B}/match:1/freeze`, undefined, READER, 403);
  await c('POST', `${B}/hot/freeze`, undefined, undefined, 400);
  await c('POST', `${B}/match:1/freeze`, undefined, SCORER, 403);
  await c('POST', `${B}/match:1/reveal`, { steps: 1 }, undefined, 200);
  await c('POST', `${B}/match:1/reveal`, { steps: 'all' }, undefined, 200);
  await c('POST', `${B}/match:1/reveal`, { steps: 0 }, undefined, 400);
  await c('POST', `${B}/match:1/reveal`, { steps: 1 }, ANON, 401);
  await c('GET', `${B}/match:1/freeze`, undefined, undefined, 200);
  await c('POST', `${B}/match:1/reset`, undefined, undefined, 200);
  await c('POST', `${B}/match:1/reset`, { period: 'current' }, undefined, 200);
  await c('POST', `${B}/match:1/reset`, undefined, SCORER, 403);
  await c('POST', `${B}/nope/reset`, undefined, undefined, 404);

  // the test clock (this gateway runs with test_clock = on)
  await c('POST', '/api/v1/debug/clock', { offset_ms: 0 }, undefined, 200);
  await c('POST', '/api/v1/debug/clock', { later: 1 }, undefined, 400);
  await c('POST', '/api/v1/debug/clock', { offset_ms: 0 }, SCORER, 403);

  // read budget: a second gateway allowing one read per second and address
  const tight = h.configWith(t, { limits: { ip_read_rate: 1, ip_read_burst: 1 }, extra: KEYS });
  const gw2 = await h.startGateway(t, { redisPort: redis.port, config: tight });
  const c2 = (method, urlPath) => call(gw2, schemaOf, seen, method, urlPath, undefined, ANON);
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await c2('GET', `${B}/demo?top=1`)).status);
  assert.ok(statuses.includes(429), `no 429 in ${statuses}`);
  await gw2.stop();

  // Redis gone: 503 for health, reads, writes
  await redis.stop();
  await h.waitFor(async () => (await h.http(gw.base, 'GET', '/healthz', undefined, { token: ANON })).status === 503,
    10000, '/healthz to answer 503 with Redis stopped');
  await c('GET', '/healthz', undefined, ANON, 503);
  const down = await c('GET', '/healthz', undefined, undefined, 503);
  assert.equal(down.body.redis, 'down', down.text);
  await c('GET', `${B}/demo?top=3`, undefined, ANON, 503);
  await c('POST', `${B}/demo/scores`, { member: 'user:1', op: 'incr', delta: 1 }, SCORER, 503);
  await c('GET', `${B}/demo/members/user:1`, undefined, ANON, 503);
  await c('GET', `${B}/demo?top=3&at_seq=0`, undefined, ANON, 503);
  await c('GET', `${B}/demo/members/user:1/history?from=0&to=1&step=1`, undefined, ANON, 503);
  await c('GET', '/api/v1/members/user:2/profile', undefined, ANON, 503);

  // every served operation was called, with a success and an error
  for (const o of docOperations().filter((x) => x.served)) {
    const key = `${o.method} ${o.path}`;
    const got = seen.get(key);
    assert.ok(got, `${key} was never called`);
    assert.ok([...got].some((s) => s < 300), `${key}: no success checked (${[...got]})`);
    assert.ok([...got].some((s) => s >= 400), `${key}: no error checked (${[...got]})`);
  }
});
