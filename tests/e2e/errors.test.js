/* errors.test.js - every error code of PROTOCOL.md, produced on purpose over
 * WebSocket and (where it applies) REST, table-driven. For each row: the
 * exact code (and HTTP status), the request id echoed when there was one,
 * exactly one reply, the connection still usable afterwards (a ping gets a
 * pong, a good write is acked), and Redis left exactly as it was: a refused
 * request writes nothing (no member, no seq bump, no log entry, no req key).
 *
 * Three stacks: the shipped config (bad_request, unknown_board, out_of_range,
 * too_large, internal, unavailable), one with API keys (unauthorized,
 * forbidden) and one with tiny write rates (rate_limited). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());

const READER_KEY = 'reader-secret-e2e-0001';
const MATCHES_KEY = 'matches-secret-e2e-0002';
const LIMITED_KEY = 'limited-secret-e2e-0003';
const WSCONN_KEY = 'wsconn-secret-e2e-0004';
const BAD_KEY = 'no-such-key-e2e-000000';

const zkey = (board) => `rc:{${board}|}:z`;
const long = (n, c = 'x') => c.repeat(n);

/* ---- the shared row runners ------------------------------------------------ */

/* One WebSocket per stack, replaced (and the row failed) if an error closed it. */
function wsPool(t, gw, opts) {
  let c = null;
  return async () => {
    if (!c || c.isClosed) c = await h.connectWs(t, gw.wsUrl, opts);
    return c;
  };
}

/* Sends what a row sends and returns the reply. A row is either
 *   msg: an object (sent with a fresh id; the reply must echo it), or
 *   raw: text or a Buffer (sent as a text frame), or
 *   bin: a Buffer sent as a binary frame.
 * Raw frames cannot carry a usable id, so their reply is the next error. */
async function sendRow(c, row, m) {
  if (row.msg) {
    const msg = typeof row.msg === 'function' ? row.msg(m) : row.msg;
    const reply = await c.request(msg);
    return { reply, id: c.nextId - 1 };
  }
  const raw = typeof row.raw === 'function' ? row.raw(m) : row.raw;
  if (Buffer.isBuffer(raw)) c.sendRaw(raw, { binary: false });
  else c.sendRaw(raw);
  return { reply: await c.next({ op: 'error' }), id: null };
}

/* Runs one WebSocket row: the error, then usability and an unchanged Redis. */
async function wsRow(ctx, row, m) {
  const c = row.conn ? await row.conn(ctx) : await ctx.ws();
  const fp = await ctx.redis.fingerprint();
  const from = c.messages.length;
  const { reply, id } = await sendRow(c, row, m);
  assert.equal(reply.op, 'error', `expected an error, got ${JSON.stringify(reply)}`);
  assert.equal(reply.code, row.code, `wrong code: ${JSON.stringify(reply)}`);
  assert.equal(typeof reply.message, 'string');
  if (id !== null) assert.equal(reply.id, id, 'the error echoes the request id');

  // Still open and answering; exactly one reply to the refused request.
  const pong = await c.request({ op: 'ping' });
  assert.equal(pong.op, 'pong');
  assert.equal(c.isClosed, false);
  if (!row.busy) {
    assert.deepEqual(c.messages.slice(from).map((x) => x.op), ['error', 'pong'],
      'one reply per request, nothing else');
  }
  // Nothing written: the whole keyspace is as it was, and the member absent.
  assert.equal(await ctx.redis.fingerprint(), fp, 'Redis changed after a refused request');
  if (row.member !== false) assert.equal(await ctx.redis.cli('ZSCORE', zkey(row.board || 'demo'), m), '');
  if (ctx.canWrite !== false && row.thenWrite !== false) {
    const ack = await c.request({ op: 'incr', board: 'demo', member: 'user:after-error', delta: 1 });
    assert.equal(ack.op, 'ack', `a good write after the error: ${JSON.stringify(ack)}`);
  }
}

async function restRow(ctx, row, m) {
  const req = typeof row.rest === 'function' ? row.rest(m) : row.rest;
  const fp = await ctx.redis.fingerprint();
  const res = await h.http(ctx.gw.base, req.method, req.path, req.body, { token: req.token, headers: req.headers });
  assert.equal(res.status, row.status, `${req.method} ${req.path}: ${res.status} ${res.text}`);
  assert.ok(res.body, `an error body in JSON: ${res.text}`);
  assert.equal(res.body.op, 'error', res.text);
  assert.equal(res.body.code, row.code, res.text);
  assert.match(res.headers.get('content-type') || '', /application\/json/);
  assert.equal(await ctx.redis.fingerprint(), fp, 'Redis changed after a refused request');
  if (row.member !== false) assert.equal(await ctx.redis.cli('ZSCORE', zkey(row.board || 'demo'), m), '');
  if (ctx.canWrite !== false && row.thenWrite !== false) {
    const ok = await h.http(ctx.gw.base, 'POST', '/api/v1/boards/demo/scores',
      { member: 'user:after-error', op: 'incr', delta: 1 });
    assert.equal(ok.status, 200, `a good write after the error: ${ok.text}`);
  }
}

/* Each row is a subtest named "<code> ws|rest: <what>". */
async function runRows(t, ctx, rows) {
  let n = 0;
  for (const row of rows) {
    const m = `user:err${++n}`;
    if (row.setup) await row.setup(ctx, m);
    if (row.msg || 'raw' in row) await t.test(`${row.code} ws: ${row.what}`, () => wsRow(ctx, row, m));
    if (row.rest) await t.test(`${row.code} rest ${row.status}: ${row.what}`, () => restRow(ctx, row, m));
  }
}

const POST = (board, body, token) => ({ method: 'POST', path: `/api/v1/boards/${board}/scores`, body, token });
const incr = (board, member, delta, extra) => Object.assign({ op: 'incr', board, member, delta }, extra);

/* ---- the rows ------------------------------------------------------------------ */

const utf8Bad = (m) => Buffer.concat([
  Buffer.from(`{"op":"incr","board":"demo","member":"${m}","delta":1,"note":"`),
  Buffer.from([0xc3, 0x28, 0xff]), // a broken 2-byte sequence and a byte never valid in UTF-8
  Buffer.from('"}'),
]);

const BAD_REQUEST = [
  { what: 'invalid JSON', raw: (m) => `{"op":"incr","board":"demo","member":"${m}","delta":1`,
    rest: (m) => POST('demo', `{"op":"incr","member":"${m}","delta":1`) },
  { what: 'invalid UTF-8 bytes in a text frame', raw: utf8Bad,
    rest: (m) => POST('demo', utf8Bad(m).subarray(0)) },
  { what: 'NaN literal', raw: (m) => `{"op":"incr","board":"demo","member":"${m}","delta":NaN}`,
    rest: (m) => POST('demo', `{"op":"incr","member":"${m}","delta":NaN}`) },
  { what: '-Infinity literal', raw: (m) => `{"op":"incr","board":"demo","member":"${m}","delta":-Infinity}` },
  { what: '1e400 (overflows a double)', raw: (m) => `{"op":"set","board":"demo","member":"${m}","value":1e400}`,
    rest: (m) => POST('demo', `{"op":"set","member":"${m}","value":1e400}`) },
  { what: '2^53+1 (not exact in a double)', raw: (m) => `{"op":"incr","board":"demo","member":"${m}","delta":9007199254740993}`,
    rest: (m) => POST('demo', `{"op":"incr","member":"${m}","delta":9007199254740993}`) },
  { what: '-(2^53+1)', raw: (m) => `{"op":"set","board":"demo","member":"${m}","value":-9007199254740993}` },
  { what: 'a fractional delta', msg: (m) => incr('demo', m, 1.5), rest: (m) => POST('demo', { op: 'incr', member: m, delta: 1.5 }) },
  { what: 'delta as a string', msg: (m) => incr('demo', m, '5'), rest: (m) => POST('demo', { op: 'incr', member: m, delta: '5' }) },
  { what: 'delta null', msg: (m) => incr('demo', m, null) },
  { what: 'board as a number', msg: (m) => ({ op: 'incr', board: 7, member: m, delta: 1 }) },
  { what: 'member as an object', msg: { op: 'incr', board: 'demo', member: { id: 1 }, delta: 1 }, member: false,
    rest: POST('demo', { op: 'incr', member: { id: 1 }, delta: 1 }) },
  { what: 'missing member', msg: { op: 'incr', board: 'demo', delta: 1 }, member: false,
    rest: POST('demo', { op: 'incr', delta: 1 }) },
  { what: 'missing delta', msg: (m) => ({ op: 'incr', board: 'demo', member: m }),
    rest: (m) => POST('demo', { op: 'incr', member: m }) },
  { what: 'missing value on set', msg: (m) => ({ op: 'set', board: 'demo', member: m }) },
  { what: 'missing board', msg: (m) => ({ op: 'incr', member: m, delta: 1 }) },
  { what: 'missing op', msg: (m) => ({ board: 'demo', member: m, delta: 1 }),
    rest: (m) => POST('demo', { member: m, delta: 1 }) },
  { what: 'op not a string', msg: (m) => ({ op: 3, board: 'demo', member: m, delta: 1 }) },
  { what: 'unknown op', msg: (m) => ({ op: 'explode', board: 'demo', member: m, delta: 1 }),
    rest: (m) => POST('demo', { op: 'explode', member: m, delta: 1 }) },
  { what: 'a read op in a REST write body', rest: (m) => POST('demo', { op: 'rank', member: m }) },
  { what: 'oversize member (129 chars)', msg: incr('demo', 'u' + long(128), 1), member: false,
    rest: POST('demo', { op: 'incr', member: 'u' + long(128), delta: 1 }) },
  { what: 'member with a space', msg: incr('demo', 'user one', 1), member: false,
    rest: POST('demo', { op: 'incr', member: 'user one', delta: 1 }) },
  { what: 'oversize board name (65 chars)', msg: (m) => incr('b' + long(64), m, 1) },
  { what: 'req of 65 chars', msg: (m) => incr('demo', m, 1, { req: long(65, 'r') }),
    rest: (m) => POST('demo', { op: 'incr', member: m, delta: 1, req: long(65, 'r') }) },
  { what: 'a JSON array, not an object', raw: '[1,2,3]', rest: POST('demo', '[1,2,3]'), member: false },
  { what: 'a bare string', raw: '"incr"', member: false },
  { what: 'an empty text frame', raw: '', member: false },
  { what: 'a duplicate field', raw: (m) => `{"op":"incr","board":"demo","member":"${m}","delta":1,"delta":2}` },
  { what: '\\u0000 inside a string', raw: (m) => `{"op":"incr","board":"demo","member":"${m}\\u0000x","delta":1}` },
  { what: 'a raw control character inside a string', raw: (m) => `{"op":"incr","board":"demo","member":"${m}\u0001","delta":1}` },
  { what: 'trailing garbage', raw: (m) => `{"op":"incr","board":"demo","member":"${m}","delta":1} x` },
  { what: 'an object as id', raw: (m) => `{"id":{"a":1},"op":"incr","board":"demo","member":"${m}","delta":1}` },
  { what: 'an op the board does not take (set on laps)', msg: (m) => ({ op: 'set', board: 'laps', member: m, value: 1000 }),
    board: 'laps', rest: (m) => POST('laps', { op: 'set', member: m, value: 1000 }) },
  { what: 'incr on a multi-field board', msg: (m) => incr('clears', m, 1), board: 'clears' },
  { what: 'submit with an unknown field', board: 'clears',
    msg: (m) => ({ op: 'submit', board: 'clears', member: m, fields: { clears: 1, bogus: 2 } }),
    rest: (m) => POST('clears', { op: 'submit', member: m, fields: { clears: 1, bogus: 2 } }) },
  { what: 'view top 1001', msg: { op: 'subscribe', board: 'demo', view: { top: 1001 } }, member: false,
    rest: { method: 'GET', path: '/api/v1/boards/demo?top=1001' } },
  { what: 'view top 0', msg: { op: 'subscribe', board: 'demo', view: { top: 0 } }, member: false,
    rest: { method: 'GET', path: '/api/v1/boards/demo?top=0' } },
  { what: 'two view kinds at once', msg: { op: 'subscribe', board: 'demo', view: { top: 5, feed: true } }, member: false },
  { what: 'radius 51', msg: { op: 'subscribe', board: 'demo', view: { around: 'user:1', radius: 51 } }, member: false,
    rest: { method: 'GET', path: '/api/v1/boards/demo?around=user:1&radius=51' } },
  { what: 'unsubscribe of a sub that does not exist', msg: { op: 'unsubscribe', sub: 's999' }, member: false },
  { what: 'a period the board does not have', msg: { op: 'rank', board: 'daily', member: 'user:1', period: 'nonsense' },
    member: false },
  { what: 'a profile that is not an object', member: false,
    rest: { method: 'PUT', path: '/api/v1/members/user:p1/profile', body: '["x"]' } },
].map((r) => Object.assign({ code: 'bad_request', status: 400 }, r));

const UNKNOWN_BOARD = [
  { what: 'a write to an undeclared board', board: 'nosuch', msg: (m) => incr('nosuch', m, 1),
    rest: (m) => POST('nosuch', { op: 'incr', member: m, delta: 1 }) },
  { what: 'board names are case-sensitive', board: 'Demo', msg: (m) => incr('Demo', m, 1),
    rest: (m) => POST('Demo', { op: 'incr', member: m, delta: 1 }) },
  { what: 'subscribe to an undeclared board', member: false, msg: { op: 'subscribe', board: 'nosuch', view: { top: 10 } },
    rest: { method: 'GET', path: '/api/v1/boards/nosuch?top=10' } },
  { what: 'rank on an undeclared board', member: false, msg: { op: 'rank', board: 'nosuch', member: 'user:1' },
    rest: { method: 'GET', path: '/api/v1/boards/nosuch/members/user:1' } },
].map((r) => Object.assign({ code: 'unknown_board', status: 404 }, r));

const OUT_OF_RANGE = [
  { what: 'set above demo\'s 16777215', msg: (m) => ({ op: 'set', board: 'demo', member: m, value: 16777216 }),
    rest: (m) => POST('demo', { op: 'set', member: m, value: 16777216 }) },
  { what: 'set below demo\'s -16777215', msg: (m) => ({ op: 'set', board: 'demo', member: m, value: -16777216 }) },
  { what: 'incr past demo\'s 16777215 (checked in the script)', member: false,
    setup: async (ctx) => {
      const r = await h.http(ctx.gw.base, 'POST', '/api/v1/boards/demo/scores', { op: 'set', member: 'user:near-max', value: 16777000 });
      assert.equal(r.status, 200, r.text);
    },
    msg: incr('demo', 'user:near-max', 1000, { req: 'oor-1' }),
    rest: POST('demo', { op: 'incr', member: 'user:near-max', delta: 216, req: 'oor-2' }) },
  { what: 'best above laps\' points_max 3600000', board: 'laps',
    msg: (m) => ({ op: 'best', board: 'laps', member: m, value: 3600001 }),
    rest: (m) => POST('laps', { op: 'best', member: m, value: 3600001 }) },
  { what: 'best below laps\' points_min 0', board: 'laps', msg: (m) => ({ op: 'best', board: 'laps', member: m, value: -1 }) },
  { what: 'a field past its bits (clears: 16 bits)', board: 'clears',
    msg: (m) => ({ op: 'submit', board: 'clears', member: m, fields: { clears: 65536, revives: 0, first_clear_ms: 1 } }),
    rest: (m) => POST('clears', { op: 'submit', member: m, fields: { clears: 65536, revives: 0, first_clear_ms: 1 } }) },
].map((r) => Object.assign({ code: 'out_of_range', status: 422 }, r));

const TOO_LARGE = [
  { what: 'a subscribe beyond max_subs_per_conn (64)', member: false, busy: true,
    conn: async (ctx) => {
      const c = await h.connectWs(null, ctx.gw.wsUrl);
      h.defer(ctx.t, () => c.close());
      for (let i = 0; i < 64; i++) {
        const s = await c.request({ op: 'subscribe', board: 'demo', view: { top: 1 + i } });
        assert.equal(s.op, 'snapshot', JSON.stringify(s));
      }
      return c;
    },
    msg: { op: 'subscribe', board: 'demo', view: { top: 100 } } },
  { what: 'a REST body over max_frame (64k)', rest: (m) => POST('demo', { op: 'incr', member: m, delta: 1, pad: long(70000) }) },
].map((r) => Object.assign({ code: 'too_large', status: 413 }, r));

// A board whose sorted set is not a sorted set: every Redis call on it fails
// with WRONGTYPE. A match:* board so the rows above keep a healthy demo.
const BROKEN = 'match:broken';
const INTERNAL = [
  { what: 'a write to a board whose key has the wrong type (WRONGTYPE)', board: BROKEN, member: false,
    setup: async (ctx) => assert.equal(await ctx.redis.cli('SET', zkey(BROKEN), 'not a zset'), 'OK'),
    msg: (m) => incr(BROKEN, m, 5, { req: 'broken-ws' }),
    rest: (m) => POST(BROKEN, { op: 'incr', member: m, delta: 5, req: 'broken-rest' }) },
  { what: 'a rank on that board', board: BROKEN, member: false, msg: { op: 'rank', board: BROKEN, member: 'user:1' },
    rest: { method: 'GET', path: `/api/v1/boards/${BROKEN}/members/user:1` } },
].map((r) => Object.assign({ code: 'internal', status: 500 }, r));

/* ---- the tests ------------------------------------------------------------------- */

test('bad_request, unknown_board, out_of_range, too_large, internal: WS and REST', { skip, timeout: 60000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const ctx = { t, redis, gw, ws: wsPool(t, gw) };
  // Something on the board, so "unchanged" is not just "empty".
  for (const [member, value] of [['user:a', 10], ['user:b', 20]]) {
    const r = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { op: 'set', member, value, req: `seed-${member}` });
    assert.equal(r.status, 200, r.text);
  }
  const rows = [...BAD_REQUEST, ...UNKNOWN_BOARD, ...OUT_OF_RANGE, ...TOO_LARGE, ...INTERNAL];
  await runRows(t, ctx, rows);
  // The one shared connection took every error row and is the first one still.
  const c = await ctx.ws();
  const shared = rows.filter((r) => (r.msg || 'raw' in r) && !r.conn).length;
  assert.equal(c.messages.filter((x) => x.op === 'error').length, shared);
  assert.equal(await redis.cli('GET', zkey(BROKEN)), 'not a zset');
});

test('unavailable: Redis stopped, nothing is written or replayed later, /healthz is 503', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const c = await h.connectWs(t, gw.wsUrl);
  assert.equal((await c.request(incr('demo', 'user:before', 1))).op, 'ack');
  await redis.stop();
  await h.waitFor(async () => (await h.http(gw.base, 'GET', '/healthz')).status === 503, 5000, '/healthz to say 503');

  const ws = [
    ['incr', incr('demo', 'user:down1', 5, { req: 'down-1' })],
    ['set', { op: 'set', board: 'demo', member: 'user:down2', value: 5 }],
    ['submit', { op: 'submit', board: 'clears', member: 'user:down3', fields: { clears: 1, revives: 0, first_clear_ms: 9 } }],
    ['rank', { op: 'rank', board: 'demo', member: 'user:before' }],
  ];
  for (const [what, msg] of ws) {
    await t.test(`unavailable ws: ${what}`, async () => {
      const reply = await c.request(msg, 5000);
      assert.equal(reply.op, 'error', JSON.stringify(reply));
      assert.equal(reply.code, 'unavailable', JSON.stringify(reply));
      assert.equal((await c.request({ op: 'ping' })).op, 'pong');
    });
  }
  const rest = [
    ['POST a write', POST('demo', { op: 'incr', member: 'user:down4', delta: 5, req: 'down-4' })],
    ['PUT a profile', { method: 'PUT', path: '/api/v1/members/user:down5/profile', body: { name: 'Down' } }],
    ['GET a window', { method: 'GET', path: '/api/v1/boards/demo?top=5' }],
  ];
  for (const [what, r] of rest) {
    await t.test(`unavailable rest 503: ${what}`, async () => {
      const res = await h.http(gw.base, r.method, r.path, r.body);
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body && res.body.code, 'unavailable', res.text);
    });
  }
  const health = await h.http(gw.base, 'GET', '/healthz');
  assert.equal(health.status, 503);
  assert.equal(health.body.ok, false);

  // Redis back (empty: no persistence): the refused writes must not have
  // been queued and replayed on reconnect.
  const again = await h.startRedis(t, { port: redis.port });
  await h.waitFor(async () => (await h.http(gw.base, 'GET', '/healthz')).status === 200, 10000, '/healthz 200 again');
  const ack = await c.request(incr('demo', 'user:after', 3), 5000);
  assert.equal(ack.op, 'ack', JSON.stringify(ack));
  assert.equal(ack.seq, 1, 'the first write on the fresh Redis is seq 1: nothing was replayed');
  for (const m of ['user:down1', 'user:down2', 'user:down4'])
    assert.equal(await again.cli('ZSCORE', zkey('demo'), m), '', `${m} was written after all`);
  assert.equal(await again.cli('ZSCORE', zkey('clears'), 'user:down3'), '');
  assert.equal(await again.cli('EXISTS', 'rc:profile:user:down5'), '0');
  assert.equal(await again.cli('EXISTS', 'rc:{demo|}:req:down-1'), '0');
});

const AUTH_CONFIG = {
  'key reader': { secret: READER_KEY, scopes: 'read' },
  'key matches': { secret: MATCHES_KEY, scopes: 'read, write', boards: 'match:*' },
};

test('unauthorized and forbidden: WS and REST', { skip, timeout: 30000 }, async (t) => {
  const { redis, gw } = await h.startStack(t, { config: h.configWith(t, AUTH_CONFIG) });
  const anon = wsPool(t, gw, { token: null });
  const bad = wsPool(t, gw, { token: BAD_KEY });
  const reader = wsPool(t, gw, { token: READER_KEY });
  const matches = wsPool(t, gw, { token: MATCHES_KEY });
  const ctx = { t, redis, gw };
  const on = (pool) => ({ conn: pool, thenWrite: false });
  const UNAUTHORIZED = [
    { what: 'a write without a key', ...on(anon), msg: (m) => incr('demo', m, 1),
      rest: (m) => POST('demo', { op: 'incr', member: m, delta: 1 }, null) },
    { what: 'a submit without a key', ...on(anon), board: 'clears',
      msg: (m) => ({ op: 'submit', board: 'clears', member: m, fields: { clears: 1 } }) },
    { what: 'a write with a bad key', ...on(bad), msg: (m) => incr('demo', m, 1, { req: 'bad-key-ws' }),
      rest: (m) => POST('demo', { op: 'incr', member: m, delta: 1, req: 'bad-key-rest' }, BAD_KEY) },
    { what: 'a write with Basic credentials instead of a bearer key',
      rest: (m) => ({ ...POST('demo', { op: 'set', member: m, value: 1 }),
        headers: { Authorization: 'Basic ' + Buffer.from(`admin:${h.ADMIN_KEY}`).toString('base64') } }) },
    { what: 'an open read (subscribe / GET) with a bad key', ...on(bad), member: false,
      msg: { op: 'subscribe', board: 'demo', view: { top: 5 } },
      rest: { method: 'GET', path: '/api/v1/boards/demo?top=5', token: BAD_KEY } },
    { what: 'an open rank with a bad key', ...on(bad), member: false, msg: { op: 'rank', board: 'demo', member: 'user:1' },
      rest: { method: 'GET', path: '/api/v1/boards/demo/members/user:1', token: BAD_KEY } },
    { what: 'a profile write without a key', member: false,
      rest: { method: 'PUT', path: '/api/v1/members/user:p2/profile', body: { name: 'P' }, token: null } },
  ].map((r) => Object.assign({ code: 'unauthorized', status: 401 }, r));
  const FORBIDDEN = [
    { what: 'a read-only key writes', ...on(reader), msg: (m) => incr('demo', m, 1, { req: 'ro-ws' }),
      rest: (m) => POST('demo', { op: 'incr', member: m, delta: 1, req: 'ro-rest' }, READER_KEY) },
    { what: 'a read-only key writes a profile', member: false,
      rest: { method: 'PUT', path: '/api/v1/members/user:p3/profile', body: { name: 'P' }, token: READER_KEY } },
    { what: 'a match:* key writes demo', ...on(matches), msg: (m) => ({ op: 'set', board: 'demo', member: m, value: 3 }),
      rest: (m) => POST('demo', { op: 'set', member: m, value: 3 }, MATCHES_KEY) },
    { what: 'a match:* key writes laps', ...on(matches), board: 'laps',
      msg: (m) => ({ op: 'best', board: 'laps', member: m, value: 3 }) },
  ].map((r) => Object.assign({ code: 'forbidden', status: 403 }, r));
  await runRows(t, ctx, [...UNAUTHORIZED, ...FORBIDDEN]);
  // After all that, each connection still does what its key allows.
  assert.equal((await (await anon()).request({ op: 'subscribe', board: 'demo', view: { top: 3 } })).op, 'snapshot');
  assert.equal((await (await reader()).request({ op: 'rank', board: 'demo', member: 'user:1' })).op, 'rank');
  assert.equal((await (await matches()).request(incr('match:7', 'user:1', 1))).op, 'ack');
  assert.equal(await redis.cli('EXISTS', 'rc:profile:user:p2', 'rc:profile:user:p3'), '0');
});

test('rate_limited: per connection and per key, over WS and REST; nothing written', { skip, timeout: 30000 }, async (t) => {
  const BURST_CONN = 3;
  const BURST_KEY = 5;
  const config = h.configWith(t, {
    limits: { conn_write_rate: 1, conn_write_burst: BURST_CONN, key_write_rate: 1, key_write_burst: BURST_KEY },
    'key limited': { secret: LIMITED_KEY, scopes: 'read, write' },
    'key wsconn': { secret: WSCONN_KEY, scopes: 'read, write' },
  });
  const { redis, gw } = await h.startStack(t, { config });

  // Pipelined so every write lands within a few ms: at 1 write/s the bucket
  // cannot refill in between. On a loaded machine it may take longer: the
  // buckets then refill (at most) one token per whole second that passed,
  // measured around the burst, and the expectations allow exactly that.
  const refills = (t0) => Math.floor((Date.now() - t0) / 1000);
  const burst = async (c, n, prefix) => Promise.all(
    Array.from({ length: n }, (_, i) => c.request(incr('demo', `user:${prefix}${i}`, 1, { req: `${prefix}${i}` }))));

  await t.test('rate_limited ws: the connection bucket (burst 3) runs dry', async () => {
    // Its own key, so the key bucket (5) is not what runs dry here.
    const c = await h.connectWs(t, gw.wsUrl, { token: WSCONN_KEY });
    const t0 = Date.now();
    const replies = await burst(c, BURST_CONN + 2, 'conn');
    const extra = refills(t0); // 0 unless the machine stalled for a second
    const acked = replies.filter((r) => r.op === 'ack');
    const limited = replies.filter((r) => r.op === 'error');
    assert.ok(acked.length >= BURST_CONN && acked.length <= BURST_CONN + extra, JSON.stringify(replies));
    assert.ok(limited.length >= 2 - extra, JSON.stringify(replies));
    assert.ok(limited.every((r) => r.code === 'rate_limited'), JSON.stringify(replies));
    // The refused ones wrote nothing; the connection is still fine.
    replies.forEach((r, i) => { r.idx = i; });
    for (const r of limited) {
      assert.equal(await redis.cli('ZSCORE', zkey('demo'), `user:conn${r.idx}`), '');
      assert.equal(await redis.cli('EXISTS', `rc:{demo|}:req:conn${r.idx}`), '0');
    }
    assert.equal(await redis.cli('GET', 'rc:{demo|}:seq'), String(acked.length));
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
    assert.equal((await c.request({ op: 'subscribe', board: 'demo', view: { top: 3 } })).op, 'snapshot');
    assert.equal(c.isClosed, false);
  });

  await t.test('rate_limited rest 429: the key bucket (burst 5) runs dry', async () => {
    const seqBefore = Number(await redis.cli('GET', 'rc:{demo|}:seq'));
    const t0 = Date.now();
    const res = await Promise.all(Array.from({ length: BURST_KEY + 1 }, (_, i) =>
      h.http(gw.base, 'POST', '/api/v1/boards/demo/scores',
        { op: 'incr', member: `user:key${i}`, delta: 1, req: `key${i}` }, { token: LIMITED_KEY })));
    const ok = res.filter((r) => r.status === 200).length;
    const extra = refills(t0);
    const texts = res.map((r) => r.text).join('\n');
    if (extra === 0) assert.equal(ok, BURST_KEY, texts);
    else assert.ok(ok >= BURST_KEY && ok <= BURST_KEY + extra, texts);
    const refused = res.filter((r) => r.status !== 200);
    assert.ok(refused.every((r) => r.status === 429 && r.body.code === 'rate_limited'), texts);
    assert.equal(Number(await redis.cli('GET', 'rc:{demo|}:seq')), seqBefore + ok);
    for (const r of refused) assert.equal(await redis.cli('ZSCORE', zkey('demo'), `user:key${res.indexOf(r)}`), '');

    // The same key over a fresh WebSocket: the bucket is the key's, not the
    // connection's. The bucket may have refilled since (one token per second
    // passed): BURST_KEY + 1 pipelined writes still run it dry.
    const c = await h.connectWs(t, gw.wsUrl, { token: LIMITED_KEY });
    const t1 = Date.now();
    const wsReplies = await Promise.all(Array.from({ length: BURST_KEY + 1 }, (_, i) =>
      c.request(incr('demo', `user:key-ws${i}`, 1))));
    const wsAcked = wsReplies.filter((r) => r.op === 'ack').length;
    assert.ok(wsAcked <= Math.min(BURST_KEY, refills(t0)) + refills(t1), JSON.stringify(wsReplies));
    const wsRefused = wsReplies.map((r, i) => [r, i]).filter(([r]) => r.op !== 'ack');
    assert.ok(wsRefused.length >= 1 && wsRefused.every(([r]) => r.code === 'rate_limited'), JSON.stringify(wsReplies));
    for (const [, i] of wsRefused) assert.equal(await redis.cli('ZSCORE', zkey('demo'), `user:key-ws${i}`), '');
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
    // Another key (the admin key, untouched so far) is not held back.
    const other = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { op: 'incr', member: 'user:admin', delta: 1 });
    assert.equal(other.status, 200, other.text);
  });
});
