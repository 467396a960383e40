/* rest_routes.test.js - the REST route table answers every (method, path)
 * exactly as it did before it became a table: status and body for every
 * route with right and wrong methods, bad names, extra and missing segments,
 * the order of its checks (a bad board name before a wrong method, the query
 * before the path), "no such path" vs "no such path for this method", the
 * read-rate token on every API GET and HEAD/GET falling through to files.
 *
 * The expected answers were recorded from the if/else dispatcher the table
 * replaced (ROUTES_RECORD=FILE appends the observed ones to FILE, a JSON line per table).
 * Values that change from run to run (clocks) are masked before comparing. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const WRITER = 'writer-secret-0123456789';
const EXTRA = `
[key writer]
secret = ${WRITER}
scopes = read, write
`;
const RECORD = !!process.env.ROUTES_RECORD;

// Fields whose value is a clock reading or otherwise differs between runs
// (a board's epoch is a random id).
// known: a queue's first measurement may not have answered yet right after start
const VOLATILE = new Set(['now_ms', 'at', 'ts', 'time', 'updated_at', 'uptime_s', 'offset_ms_now', 'node', 'epoch', 'known']);
function mask(v) {
  if (Array.isArray(v)) return v.map(mask);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = VOLATILE.has(k) ? '<masked>' : mask(x);
    return o;
  }
  return v;
}

// One observed answer: "STATUS body" (JSON bodies masked and re-serialised).
async function answer(gw, [method, path, body, token]) {
  const opts = token === undefined ? {} : { token };
  const r = await h.http(gw.base, method, path, body, opts);
  if (r.body !== null && typeof r.body === 'object') return `${r.status} ${JSON.stringify(mask(r.body))}`;
  if (path === '/metrics' || /^\/(index\.html)?(\?|$)/.test(path)) return `${r.status} <${r.headers.get('content-type')}>`;
  return `${r.status} ${r.text}`;
}

async function check(t, gw, rows) {
  const seen = [];
  for (const row of rows) {
    const got = await answer(gw, row);
    seen.push([...row.slice(0, 4), got]);
    if (!RECORD) assert.equal(got, row[4], `${row[0]} ${row[1]}${row[3] !== undefined ? ` (token ${row[3]})` : ''}`);
  }
  if (RECORD) require('node:fs').appendFileSync(process.env.ROUTES_RECORD, JSON.stringify(seen.map((r) => r[4])) + '\n');
}

const A = null; // anonymous: no Authorization header
const BAD_BOARD = '{"op":"error","code":"bad_request","message":"board must be 1..64 characters of [A-Za-z0-9_.:-]"}';
// GET /api/v1/boards with conf/rankcast.conf
const BOARDS = '{"boards":[{"name":"demo","template":false,"order":"desc","period":"none","ops":["incr","set","best"],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":-16777215,"points_max":16777215},{"name":"match:*","template":true,"order":"desc","period":"none","ops":["incr","set","best"],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":-16777215,"points_max":16777215},{"name":"laps","template":false,"order":"asc","period":"none","ops":["best"],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":0,"points_max":3600000},{"name":"clears","template":false,"order":"desc","period":"none","ops":["submit"],"fields":["clears","revives","first_clear_ms"],"decay":"none","write_mode":"direct","shards":1},{"name":"daily","template":false,"order":"desc","period":"day","ops":["incr","set","best"],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":-67108863,"points_max":67108863},{"name":"weekly","template":false,"order":"desc","period":"week","ops":["incr","set","best"],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":-8388607,"points_max":8388607},{"name":"hot","template":false,"order":"desc","period":"none","ops":["incr"],"fields":[],"decay":"buckets","write_mode":"direct","shards":1},{"name":"burst","template":false,"order":"desc","period":"none","ops":["incr"],"fields":[],"decay":"none","write_mode":"queued","shards":1,"points_min":-16777215,"points_max":16777215},{"name":"arena","template":false,"order":"desc","period":"none","ops":["incr","set","best"],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":-8589934591,"points_max":8589934591},{"name":"global","template":false,"order":"desc","period":"none","ops":["incr","set","best"],"fields":[],"decay":"none","write_mode":"direct","shards":8,"points_min":-16777215,"points_max":16777215},{"name":"players","template":false,"order":"desc","period":"none","ops":["incr","set","best"],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":-16777215,"points_max":16777215,"teams":"squads"},{"name":"squads","template":false,"order":"desc","period":"none","ops":[],"fields":[],"decay":"none","write_mode":"direct","shards":1,"points_min":-16777215,"points_max":16777215,"team_of":"players"}]}';

// [method, path, body, token (undefined: the admin key), expected]
const ROUTES = [
  // /healthz, /metrics: anonymous callers get the bare status and no metrics,
  // the admin key the details (PROTOCOL.md v1.2, "Metrics and health")
  ['GET', '/healthz', undefined, A,
    '200 {"ok":true}'],
  ['GET', '/healthz', undefined, undefined,
    '200 {"ok":true,"redis":"up","scripts":"loaded","keyspace_events":true,"mode":"single","nodes":[{"node":"<masked>","up":true,"slots":16384,"reconnects":0,"failures":0,"last_error":""}],"queues":[{"board":"burst","known":"<masked>","length":0,"oldest_age_ms":0,"lag_max_ms":30000,"lagging":false,"consumer":false}]}'],
  ['HEAD', '/healthz', undefined, A,
    '200 '],
  ['POST', '/healthz', '{}', A,
    '200 {"ok":true}'],
  ['POST', '/healthz', '{}', undefined,
    '200 {"ok":true,"redis":"up","scripts":"loaded","keyspace_events":true,"mode":"single","nodes":[{"node":"<masked>","up":true,"slots":16384,"reconnects":0,"failures":0,"last_error":""}],"queues":[{"board":"burst","known":"<masked>","length":0,"oldest_age_ms":0,"lag_max_ms":30000,"lagging":false,"consumer":false}]}'],
  ['GET', '/metrics', undefined, A,
    '401 {"op":"error","code":"unauthorized","message":"this needs an API key with the admin scope (Authorization: Bearer KEY, or ?token=KEY on WebSocket)"}'],
  ['GET', '/metrics', undefined, undefined,
    '200 <text/plain; version=0.0.4>'],
  ['DELETE', '/metrics', undefined, A,
    '401 {"op":"error","code":"unauthorized","message":"this needs an API key with the admin scope (Authorization: Bearer KEY, or ?token=KEY on WebSocket)"}'],
  ['DELETE', '/metrics', undefined, undefined,
    '200 <text/plain; version=0.0.4>'],
  ['GET', '/healthz/x', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  // GET /api/v1/boards
  ['GET', '/api/v1/boards', undefined, A,
    '200 ' + BOARDS],
  ['GET', '/api/v1/boards/', undefined, A,
    '200 ' + BOARDS],
  ['POST', '/api/v1/boards', '{}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['PUT', '/api/v1/boards', '{}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['DELETE', '/api/v1/boards', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['HEAD', '/api/v1/boards', undefined, A,
    '404 '],
  ['GET', '/api/v1/boards?top=5', undefined, A,
    '200 ' + BOARDS],
  ['GET', '/api/v1/boards?top=abc', undefined, A,
    '200 ' + BOARDS],
  // POST /api/v1/boards/{b}/scores
  ['POST', '/api/v1/boards/demo/scores', '{"member":"u1","op":"incr","delta":5,"req":"r-1"}', WRITER,
    '200 {"op":"ack","board":"demo","member":"u1","score":5,"rank":1,"seq":1,"duplicate":false}'],
  ['POST', '/api/v1/boards/demo/scores', '{"member":"u2","op":"incr","delta":3,"req":"r-2"}', WRITER,
    '200 {"op":"ack","board":"demo","member":"u2","score":3,"rank":2,"seq":2,"duplicate":false}'],
  ['POST', '/api/v1/boards/demo/scores', '{"member":"u1","op":"incr","delta":5,"req":"r-1"}', WRITER,
    '200 {"op":"ack","board":"demo","member":"u1","score":5,"rank":1,"seq":2,"duplicate":true}'],
  ['POST', '/api/v1/boards/demo/scores', '{"member":"u1","op":"incr","delta":5}', A,
    '401 {"op":"error","code":"unauthorized","message":"this needs an API key with the write scope (Authorization: Bearer KEY, or ?token=KEY on WebSocket)"}'],
  ['POST', '/api/v1/boards/demo/scores', '', WRITER,
    '400 {"op":"error","code":"bad_request","message":"invalid JSON"}'],
  ['POST', '/api/v1/boards/demo/scores', '[1]', WRITER,
    '400 {"op":"error","code":"bad_request","message":"message must be a JSON object"}'],
  ['POST', '/api/v1/boards/demo/scores', '{"member":"bad member","op":"incr","delta":1}', WRITER,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['POST', '/api/v1/boards/nosuch/scores', '{"member":"u1","op":"incr","delta":1}', WRITER,
    '404 {"op":"error","code":"unknown_board","message":"no board is declared for \'nosuch\'"}'],
  ['POST', '/api/v1/boards/bad!name/scores', '{"member":"u1","op":"incr","delta":1}', WRITER,
    '400 ' + BAD_BOARD],
  ['GET', '/api/v1/boards/demo/scores', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['PUT', '/api/v1/boards/demo/scores', '{}', WRITER,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['DELETE', '/api/v1/boards/demo/scores', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['POST', '/api/v1/boards/demo/scores/x', '{}', WRITER,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['POST', '/api/v1/boards/demo', '{}', WRITER,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  // GET /api/v1/boards/{b}
  ['GET', '/api/v1/boards/demo', undefined, A,
    '200 {"op":"snapshot","board":"demo","seq":2,"total":2,"epoch":"<masked>","rows":[{"rank":1,"member":"u1","score":5},{"rank":2,"member":"u2","score":3}]}'],
  ['GET', '/api/v1/boards/demo?top=1', undefined, A,
    '200 {"op":"snapshot","board":"demo","seq":2,"total":2,"epoch":"<masked>","rows":[{"rank":1,"member":"u1","score":5}]}'],
  ['GET', '/api/v1/boards/demo?offset=1&limit=1', undefined, A,
    '200 {"op":"snapshot","board":"demo","seq":2,"total":2,"epoch":"<masked>","rows":[{"rank":2,"member":"u2","score":3}]}'],
  ['GET', '/api/v1/boards/demo?around=u2&radius=1', undefined, A,
    '200 {"op":"snapshot","board":"demo","seq":2,"total":2,"epoch":"<masked>","rows":[{"rank":1,"member":"u1","score":5},{"rank":2,"member":"u2","score":3}]}'],
  ['GET', '/api/v1/boards/demo?top=0', undefined, A,
    '400 {"op":"error","code":"bad_request","message":"top and limit must be integers 1..1000, offset 0..2147483647"}'],
  ['GET', '/api/v1/boards/demo?around=bad%20m', undefined, A,
    '400 {"op":"error","code":"bad_request","message":"around must be a member name"}'],
  ['GET', '/api/v1/boards/demo?period=' + 'p'.repeat(200), undefined, A,
    '400 {"op":"error","code":"bad_request","message":"period is too long"}'],
  ['GET', '/api/v1/boards/nosuch', undefined, A,
    '404 {"op":"error","code":"unknown_board","message":"no board is declared for \'nosuch\'"}'],
  ['GET', '/api/v1/boards/bad!name', undefined, A,
    '400 ' + BAD_BOARD],
  ['GET', '/api/v1/boards/' + 'b'.repeat(65), undefined, A,
    '400 ' + BAD_BOARD],
  ['PUT', '/api/v1/boards/bad!name', '{}', undefined,
    '400 ' + BAD_BOARD],
  ['DELETE', '/api/v1/boards/bad!name', undefined, undefined,
    '400 ' + BAD_BOARD],
  ['PUT', '/api/v1/boards/demo', '{}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['DELETE', '/api/v1/boards/demo', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['HEAD', '/api/v1/boards/demo', undefined, A,
    '404 '],
  ['GET', '/api/v1/boards/demo/x', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/boards/demo/x/y/z', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/boards/demo/x/y/z/w', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  // GET /api/v1/boards/{b}/members/{m}
  ['GET', '/api/v1/boards/demo/members/u1', undefined, A,
    '200 {"op":"rank","member":"u1","score":5,"rank":1,"total":2}'],
  ['GET', '/api/v1/boards/demo/members/nobody', undefined, A,
    '200 {"op":"rank","member":"nobody","score":null,"rank":null,"total":2}'],
  ['GET', '/api/v1/boards/demo/members/u1?period=' + 'p'.repeat(200), undefined, A,
    '400 {"op":"error","code":"bad_request","message":"period is too long"}'],
  ['GET', '/api/v1/boards/demo/members/bad%20m', undefined, A,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['GET', '/api/v1/boards/demo/members/' + 'm'.repeat(129), undefined, A,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['GET', '/api/v1/boards/bad!name/members/u1', undefined, A,
    '400 ' + BAD_BOARD],
  ['GET', '/api/v1/boards/demo/members', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/boards/demo/members/u1/x', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['POST', '/api/v1/boards/demo/members/u1', '{}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['PUT', '/api/v1/boards/demo/members/u1', '{}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['GET', '/api/v1/boards/demo/blocked/u1', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  // GET/PUT /api/v1/members/{m}/profile
  ['PUT', '/api/v1/members/u1/profile', '{"name":"Ann","avatar":"a.png"}', WRITER,
    '200 {"name":"Ann","avatar":"a.png"}'],
  ['GET', '/api/v1/members/u1/profile', undefined, A,
    '200 {"name":"Ann","avatar":"a.png"}'],
  ['GET', '/api/v1/members/u9/profile', undefined, A,
    '200 {}'],
  ['PUT', '/api/v1/members/u1/profile', '{"name":"Ann"}', A,
    '401 {"op":"error","code":"unauthorized","message":"this needs an API key with the write scope (Authorization: Bearer KEY, or ?token=KEY on WebSocket)"}'],
  ['PUT', '/api/v1/members/u1/profile', 'not json', WRITER,
    '400 {"op":"error","code":"bad_request","message":"invalid JSON"}'],
  ['PUT', '/api/v1/members/u1/profile', '{"name":5}', WRITER,
    '400 {"op":"error","code":"bad_request","message":"profile values must be strings of at most 256 bytes"}'],
  ['POST', '/api/v1/members/u1/profile', '{}', WRITER,
    '400 {"op":"error","code":"bad_request","message":"use GET or PUT"}'],
  ['DELETE', '/api/v1/members/u1/profile', undefined, undefined,
    '400 {"op":"error","code":"bad_request","message":"use GET or PUT"}'],
  ['HEAD', '/api/v1/members/u1/profile', undefined, A,
    '400 '],
  ['GET', '/api/v1/members/bad%20m/profile', undefined, A,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['POST', '/api/v1/members/bad%20m/profile', '{}', WRITER,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['GET', '/api/v1/members/u1/other', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/members/bad%20m/other', undefined, A,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['GET', '/api/v1/members/u1', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/members/u1/profile/x', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/members', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  // admin: DELETE .../members/{m}[?block=1], DELETE .../blocked/{m}, POST reverse/reset
  ['DELETE', '/api/v1/boards/demo/members/u2', undefined, WRITER,
    '403 {"op":"error","code":"forbidden","message":"key \'writer\' lacks the admin scope"}'],
  ['DELETE', '/api/v1/boards/demo/members/u2', undefined, A,
    '401 {"op":"error","code":"unauthorized","message":"this needs an API key with the admin scope (Authorization: Bearer KEY, or ?token=KEY on WebSocket)"}'],
  ['DELETE', '/api/v1/boards/demo/members/u2?block=1', undefined, undefined,
    '200 {"op":"removed","board":"demo","member":"u2","seq":3,"blocked":true}'],
  ['POST', '/api/v1/boards/demo/scores', '{"member":"u2","op":"incr","delta":1}', WRITER,
    '403 {"op":"error","code":"forbidden","message":"member u2 is blocked on this board"}'],
  ['DELETE', '/api/v1/boards/demo/blocked/u2', undefined, undefined,
    '200 {"op":"unblocked","board":"demo","member":"u2","seq":3,"blocked":false}'],
  ['DELETE', '/api/v1/boards/demo/members/bad%20m', undefined, undefined,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['DELETE', '/api/v1/boards/demo/blocked/bad%20m', undefined, undefined,
    '400 {"op":"error","code":"bad_request","message":"member must be 1..128 characters of [A-Za-z0-9_.:@-]"}'],
  ['DELETE', '/api/v1/boards/bad!name/members/u2', undefined, undefined,
    '400 ' + BAD_BOARD],
  ['DELETE', '/api/v1/boards/demo/members', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['DELETE', '/api/v1/boards/demo/blocked', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['DELETE', '/api/v1/boards/demo/members/u2/x', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":"r-1"}', undefined,
    '200 {"op":"reversed","board":"demo","member":"u1","score":0,"rank":1,"seq":4,"req":"r-1"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":"r-1"}', WRITER,
    '403 {"op":"error","code":"forbidden","message":"key \'writer\' lacks the admin scope"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":"never-written"}', undefined,
    '400 {"op":"error","code":"bad_request","message":"no write with that req on this board within its idempotency window"}'],
  ['POST', '/api/v1/boards/demo/reverse', '', undefined,
    '400 {"op":"error","code":"bad_request","message":"req must be the request id (1..64 printable characters) of the write to reverse"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":5}', undefined,
    '400 {"op":"error","code":"bad_request","message":"req must be the request id (1..64 printable characters) of the write to reverse"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":""}', undefined,
    '400 {"op":"error","code":"bad_request","message":"req must be the request id (1..64 printable characters) of the write to reverse"}'],
  ['POST', '/api/v1/boards/demo/reverse', '[1]', undefined,
    '400 {"op":"error","code":"bad_request","message":"message must be a JSON object"}'],
  ['POST', '/api/v1/boards/demo/reverse', '"x"', undefined,
    '400 {"op":"error","code":"bad_request","message":"message must be a JSON object"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":"r-1",', undefined,
    '400 {"op":"error","code":"bad_request","message":"invalid JSON"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":"r-1","req":"r-2"}', undefined,
    '400 {"op":"error","code":"bad_request","message":"duplicate field req"}'],
  ['POST', '/api/v1/boards/demo/reverse', '{"req":"r-2","period":5}', undefined,
    '400 {"op":"error","code":"bad_request","message":"period must be a string"}'],
  ['POST', '/api/v1/boards/demo/reverse', `{"req":"r-2","period":"${'p'.repeat(100)}"}`, undefined,
    '400 {"op":"error","code":"bad_request","message":"period must be a string"}'],
  ['POST', '/api/v1/boards/demo/reset', '{"period":5}', undefined,
    '400 {"op":"error","code":"bad_request","message":"period must be a string"}'],
  ['POST', '/api/v1/boards/demo/reset', '{"req":5}', undefined,
    '200 {"op":"board_reset","board":"demo","seq":5}'],
  ['POST', '/api/v1/boards/demo/reset', '{}', WRITER,
    '403 {"op":"error","code":"forbidden","message":"key \'writer\' lacks the admin scope"}'],
  ['POST', '/api/v1/boards/demo/reset', '', undefined,
    '200 {"op":"board_reset","board":"demo","seq":6}'],
  ['POST', '/api/v1/boards/demo/reset?period=current', '', undefined,
    '200 {"op":"board_reset","board":"demo","seq":7}'],
  ['POST', '/api/v1/boards/demo/reset', '{"period":"current"}', undefined,
    '200 {"op":"board_reset","board":"demo","seq":8}'],
  ['GET', '/api/v1/boards/demo/reset', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['PUT', '/api/v1/boards/demo/reverse', '{}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['DELETE', '/api/v1/boards/demo/reset', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['POST', '/api/v1/boards/demo/reset/x', '{}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path for this method"}'],
  ['POST', '/api/v1/boards/bad!name/reset', '{}', undefined,
    '400 ' + BAD_BOARD],
  // debug clock, test_clock off here
  ['POST', '/api/v1/debug/clock', '{"offset_ms":0}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/debug/clock', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  // other /api paths
  ['GET', '/api/v1/nope', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['POST', '/api/v1/nope', '{}', A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v2/boards', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['POST', '/api/v1', '{}', A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1/boards/demo/members/u1/x/y/z', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/api/v1//boards', undefined, A,
    '200 ' + BOARDS],
  // static files
  ['GET', '/', undefined, A,
    '200 <text/html>'],
  ['HEAD', '/', undefined, A,
    '200 <text/html>'],
  ['GET', '/index.html', undefined, A,
    '200 <text/html>'],
  ['GET', '/no-such-file.txt', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['HEAD', '/no-such-file.txt', undefined, A,
    '404 '],
  ['POST', '/', '{}', A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['PUT', '/index.html', '{}', A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['DELETE', '/index.html', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['GET', '/x/y/z/w', undefined, A,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
];

// test_clock = on: the debug clock answers (admin scope, POST only).
const CLOCK_ROUTES = [
  ['POST', '/api/v1/debug/clock', '{"offset_ms":0}', undefined,
    '200 {"now_ms":"<masked>","offset_ms":0}'],
  ['POST', '/api/v1/debug/clock', '{"offset_ms":0}', WRITER,
    '403 {"op":"error","code":"forbidden","message":"key \'writer\' lacks the admin scope"}'],
  ['POST', '/api/v1/debug/clock', '{"offset_ms":0}', A,
    '401 {"op":"error","code":"unauthorized","message":"this needs an API key with the admin scope (Authorization: Bearer KEY, or ?token=KEY on WebSocket)"}'],
  ['POST', '/api/v1/debug/clock', '{}', undefined,
    '400 {"op":"error","code":"bad_request","message":"give {\\"offset_ms\\": N} or {\\"now_ms\\": T}"}'],
  ['POST', '/api/v1/debug/clock', '', undefined,
    '400 {"op":"error","code":"bad_request","message":"invalid JSON"}'],
  ['POST', '/api/v1/debug/clock', '[1]', undefined,
    '400 {"op":"error","code":"bad_request","message":"message must be a JSON object"}'],
  ['GET', '/api/v1/debug/clock', undefined, undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['PUT', '/api/v1/debug/clock', '{"offset_ms":0}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['POST', '/api/v1/debug/clock/x', '{"offset_ms":0}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
  ['POST', '/api/v1/debug/other', '{"offset_ms":0}', undefined,
    '404 {"op":"error","code":"bad_request","message":"no such path"}'],
];

test('every REST (method, path) answers exactly as recorded', async (t) => {
  const { gw } = await h.startStack(t, { config: h.configWith(t, { extra: EXTRA }) });
  await check(t, gw, ROUTES);
});

test('the debug clock route answers exactly as recorded (test_clock = on)', async (t) => {
  const { gw } = await h.startStack(t, { config: h.configWith(t, { server: { test_clock: 'on' }, extra: EXTRA }) });
  await check(t, gw, CLOCK_ROUTES);
});

// With the address's read bucket empty every API GET is refused first (before
// its path, name or scope is looked at); a POST takes no read token. The
// bucket refills one token a second, so a GET may still find one: each is
// retried until refused, and every answer it gets meanwhile must be its own.
test('every API GET takes a read token, checked before the route; writes take none', async (t) => {
  const config = h.configWith(t, { limits: { ip_read_rate: 1, ip_read_burst: 1 }, extra: EXTRA });
  const { gw } = await h.startStack(t, { config });
  const LIMITED = '429 {"op":"error","code":"rate_limited","message":"too many reads from this address (ip_read_rate 1/s)"}';
  const gets = [
    ['GET', '/api/v1/boards', undefined, A],
    ['GET', '/api/v1/boards/demo', undefined, A],
    ['GET', '/api/v1/boards/bad!name', undefined, A],
    ['GET', '/api/v1/boards/demo/members/u1', undefined, A],
    ['GET', '/api/v1/members/u1/profile', undefined, A],
    ['GET', '/api/v1/nope', undefined, A],
    ['GET', '/api/v1/debug/clock', undefined, undefined],
  ];
  const own = new Map(ROUTES.map((r) => [`${r[0]} ${r[1]} ${r[3]}`, r[4]]));
  for (const row of gets) {
    let got;
    for (let i = 0; i < 20 && (got = await answer(gw, row)) !== LIMITED; i++) {
      const expected = own.get(`${row[0]} ${row[1]} ${row[3]}`);
      if (!RECORD && !/^200 /.test(got)) assert.equal(got, expected, `${row[0]} ${row[1]} before its bucket ran dry`);
    }
    assert.equal(got, LIMITED, `${row[0]} ${row[1]}`);
  }
  // The bucket is dry now, and writes do not touch it.
  for (let i = 0; i < 3; i++) {
    const got = await answer(gw, ['POST', '/api/v1/boards/demo/scores', '{"member":"u1","op":"incr","delta":1}', WRITER]);
    assert.match(got, /^200 \{"op":"ack"/);
  }
  // The static files are not API reads.
  assert.match(await answer(gw, ['GET', '/', undefined, A]), /^200 /);
});

// "Content-Length: 0" is a complete request: lws 4.1 reports the end of an
// empty body for a POST but not for a PUT, which waited for body_timeout
// (10 s) and was then closed without an answer (fetch sends that header for
// a PUT without a body). Found replaying docs/protocol.md.
test('a PUT or POST with Content-Length: 0 is answered at once', async (t) => {
  const { gw } = await h.startStack(t, { config: h.configWith(t, { extra: EXTRA }) });
  const net = require('node:net');
  const raw = (text) => new Promise((resolve, reject) => {
    const s = net.connect(gw.port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => { s.destroy(); reject(new Error(`no answer within 5 s to ${text.split('\r\n')[0]}`)); }, 5000);
    s.on('data', (d) => { out += d; });
    s.on('error', reject);
    s.on('close', () => { clearTimeout(timer); resolve(out); });
    s.write(text);
  });
  const auth = `Authorization: Bearer ${WRITER}\r\n`;
  const cases = [
    ['PUT /api/v1/members/u1/profile', auth, /^HTTP\/1\.1 400 [^]*"message":"invalid JSON"/],
    ['PUT /api/v1/boards/demo', '', /^HTTP\/1\.1 404 [^]*"no such path for this method"/],
    ['PUT /api/v1/members/u1/profile', '', /^HTTP\/1\.1 401 /],
    ['POST /api/v1/boards/demo/scores', auth, /^HTTP\/1\.1 400 [^]*"message":"invalid JSON"/],
  ];
  for (const [line, extra, want] of cases) {
    const out = await raw(`${line} HTTP/1.1\r\nHost: x\r\n${extra}Content-Length: 0\r\n\r\n`);
    assert.match(out, want, line);
  }
  // and through fetch, which sends the header by itself
  const r = await h.http(gw.base, 'PUT', '/api/v1/boards/demo', undefined, { token: null, timeoutMs: 5000 });
  assert.equal(r.status, 404);
});
