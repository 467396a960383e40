/* teams.test.js - team boards (PROTOCOL v1.2, docs/teams.md) through the real
 * gateway, on one Redis and on the 3+3 cluster, with the shipped `players`
 * board (teams = squads):
 * - {"op":"team"} over WebSocket and PUT .../members/{m}/team answer
 *   `teamed`; acks of writes to players carry team, team_score, team_rank;
 * - a viewer of squads' top sees a team move when a member scores, and a
 *   feed of squads gets one event per team changed: a move is two
 *   consecutive seqs;
 * - a reader of squads during many concurrent moves never sees half of
 *   one (moves keep the sum over all teams: every state it shows has it);
 * - squads takes no writes, nor team ops;
 * - --check-config refuses teams where they cannot work;
 * - a team board on a periodic source (daily, teams = daily_squads): moves
 *   and writes across a rollover, the new day starting with the old day's
 *   membership and its own sums, the past day keeping its standings (and,
 *   on one Redis, archived with them), on one Redis and on the cluster. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const { sqliteMissing, sql, ROWS_SQL } = require('./sqlite_tool');

const skip = h.toolMissing(h.gatewayMissing());
const skipArchive = h.toolMissing(h.gatewayMissing() || sqliteMissing());

const shape = (rows) => rows.map((r) => `${r.member}=${r.score}`).join(' ');

/* A live top-N view: the rows as snapshot + deltas leave them, and every
 * state it went through. */
async function watchTop(t, gw, board, n) {
  const conn = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await conn.request({ op: 'subscribe', board, view: { top: n } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  const v = { rows: snap.rows, states: [snap.rows], broken: null };
  conn.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.sub !== snap.sub) return;
    if (m.op === 'snapshot') v.rows = m.rows;
    else if (m.op === 'delta') {
      const next = applyDelta(v.rows, m, 1, n);
      if (!next) v.broken = `delta did not apply: ${JSON.stringify(m)}`;
      else v.rows = next;
    } else return;
    v.states.push(v.rows);
  });
  return v;
}

async function watchFeed(t, gw, board) {
  const conn = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await conn.request({ op: 'subscribe', board, view: { feed: true } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  const got = [];
  conn.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.sub === snap.sub && m.op === 'event') got.push(m);
  });
  return got;
}

async function teamOps(t, gw) {
  const ws = await h.connectWs(t, gw.wsUrl);
  // a member with points joins: its team enters squads with them
  let ack = await ws.request({ op: 'incr', board: 'players', member: 'ann', delta: 5 }, 10000);
  assert.equal(ack.op, 'ack', JSON.stringify(ack));
  assert.equal(ack.team, null, JSON.stringify(ack));
  assert.equal(ack.team_score, null);
  assert.equal(ack.team_rank, null);

  const top = await watchTop(t, gw, 'squads', 10);
  const feed = await watchFeed(t, gw, 'squads');

  const joined = await ws.request({ op: 'team', board: 'players', member: 'ann', team: 'red' }, 10000);
  assert.deepEqual(Object.assign({}, joined, { id: undefined }),
    { op: 'teamed', id: undefined, board: 'players', member: 'ann', team: 'red', seq: ack.seq, team_seq: 1 });
  // REST: the same object
  const rest = await h.http(gw.base, 'PUT', '/api/v1/boards/players/members/bob/team', { team: 'blue' });
  assert.equal(rest.status, 200, rest.text);
  assert.equal(rest.body.op, 'teamed');
  assert.equal(rest.body.team, 'blue');
  assert.equal(rest.body.member, 'bob');
  const bad = await h.http(gw.base, 'PUT', '/api/v1/boards/players/members/bob/team', { team: 5 });
  assert.equal(bad.status, 400, bad.text);

  // writes: the ack carries the team's sum and rank on squads
  ack = await ws.request({ op: 'incr', board: 'players', member: 'bob', delta: 7 }, 10000);
  assert.equal(ack.team, 'blue', JSON.stringify(ack));
  assert.equal(ack.team_score, 7);
  assert.equal(ack.team_rank, 1);
  ack = await ws.request({ op: 'incr', board: 'players', member: 'cat', delta: 4 }, 10000);
  assert.equal(ack.team, null);
  await ws.request({ op: 'team', board: 'players', member: 'cat', team: 'red' }, 10000);
  ack = await ws.request({ op: 'set', board: 'players', member: 'ann', value: 2 }, 10000);
  assert.equal(ack.team, 'red', JSON.stringify(ack));
  assert.equal(ack.team_score, 6); // 2 + cat's 4
  assert.equal(ack.team_rank, 2);  // blue has 7
  // the top view of squads moves when a member scores
  await h.waitFor(() => top.broken || shape(top.rows) === 'blue=7 red=6', 10000, 'squads top: blue=7 red=6');
  ack = await ws.request({ op: 'incr', board: 'players', member: 'cat', delta: 10 }, 10000);
  assert.equal(ack.team_score, 16);
  assert.equal(ack.team_rank, 1);
  await h.waitFor(() => top.broken || shape(top.rows) === 'red=16 blue=7', 10000, 'squads top: red=16 blue=7');
  assert.equal(top.broken, null, top.broken);

  // a move: both teams change, at two consecutive seqs of squads
  const before = feed.length;
  const moved = await ws.request({ op: 'team', board: 'players', member: 'cat', team: 'blue' }, 10000);
  assert.equal(moved.op, 'teamed', JSON.stringify(moved));
  await h.waitFor(() => feed.length >= before + 2, 10000, 'the move on the feed');
  const [a, b] = feed.slice(before);
  assert.equal(b.seq, a.seq + 1, JSON.stringify([a, b]));
  assert.equal(moved.team_seq, b.seq);
  assert.deepEqual([a.member, a.score, b.member, b.score], ['red', 2, 'blue', 21]);
  // the last member leaves: its team goes from squads
  const left = await h.http(gw.base, 'PUT', '/api/v1/boards/players/members/ann/team', { team: null });
  assert.equal(left.body.team, null, left.text);
  await h.waitFor(() => top.broken || shape(top.rows) === 'blue=21', 10000, 'squads top: blue=21');
  const snap = await h.http(gw.base, 'GET', '/api/v1/boards/squads?top=10');
  assert.equal(shape(snap.body.rows), 'blue=21');
  // feeds stay one event per seq, from the start
  feed.forEach((e, i) => assert.equal(e.seq, feed[0].seq + i));

  // squads takes no writes, nor team ops
  for (const w of [{ op: 'incr', delta: 1 }, { op: 'set', value: 1 }, { op: 'best', value: 1 }, { op: 'team', team: 'x' }]) {
    const r = await ws.request(Object.assign({ board: 'squads', member: 'blue' }, w), 10000);
    assert.equal(r.op, 'error', JSON.stringify(r));
    assert.equal(r.code, 'bad_request');
  }
  const rw = await h.http(gw.base, 'POST', '/api/v1/boards/squads/scores', { op: 'incr', member: 'blue', delta: 1 });
  assert.equal(rw.status, 400, rw.text);
  // a board without teams refuses the op
  const nt = await ws.request({ op: 'team', board: 'demo', member: 'x', team: 'y' }, 10000);
  assert.equal(nt.code, 'bad_request', JSON.stringify(nt));
}

/* Members with points move between teams from several connections at once;
 * a viewer of all teams must only ever see states where the teams' sums add
 * up to the members' total (half a move would not). */
async function concurrentMoves(t, gw) {
  const ws = await h.connectWs(t, gw.wsUrl);
  const TEAMS = ['t0', 't1', 't2', 't3'];
  const MEMBERS = 16;
  // teams already on squads (the cluster test runs teamOps first) count too
  const start = await h.http(gw.base, 'GET', '/api/v1/boards/squads?top=10');
  let total = start.body.rows.reduce((s, r) => s + r.score, 0);
  for (let i = 0; i < MEMBERS; i++) {
    await ws.request({ op: 'team', board: 'players', member: `m${i}`, team: TEAMS[i % 4] }, 10000);
    const ack = await ws.request({ op: 'set', board: 'players', member: `m${i}`, value: 10 + i * 3 }, 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    total += 10 + i * 3;
  }
  const top = await watchTop(t, gw, 'squads', 10);
  const feed = await watchFeed(t, gw, 'squads');
  await h.waitFor(() => top.rows.reduce((s, r) => s + r.score, 0) === total, 10000, 'all teams on the view');
  top.states = [top.rows]; // from here on, every state must hold the whole total
  const movers = [];
  for (let c = 0; c < 4; c++) movers.push(await h.connectWs(t, gw.wsUrl));
  let seed = 7;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const MOVES = 400;
  const jobs = movers.map(async (conn, c) => {
    for (let k = 0; k < MOVES / movers.length; k++) {
      const r = await conn.request({ op: 'team', board: 'players', member: `m${(c * 4 + rnd(4))}`, team: TEAMS[rnd(4)] }, 10000);
      assert.equal(r.op, 'teamed', JSON.stringify(r));
    }
  });
  await Promise.all(jobs);
  const rest = await h.http(gw.base, 'GET', '/api/v1/boards/squads?top=10');
  const want = shape(rest.body.rows);
  await h.waitFor(() => top.broken || shape(top.rows) === want, 15000, 'the viewer to catch up');
  assert.equal(top.broken, null, top.broken);
  assert.equal(rest.body.rows.reduce((s, r) => s + r.score, 0), total);
  for (const st of top.states) {
    assert.equal(st.reduce((s, r) => s + r.score, 0), total, `a state with half a move: ${shape(st)}`);
  }
  assert.ok(top.states.length >= 2, `the viewer saw ${top.states.length} states`);
  // the feed: gapless; a move's events come in consecutive pairs (same at)
  await h.waitFor(() => feed.length > 0 && feed[feed.length - 1].seq === rest.body.seq, 15000, 'the feed to catch up');
  feed.forEach((e, i) => assert.equal(e.seq, feed[0].seq + i));
}

/* daily (period = day at +08:00) with a team board: the config of the
 * periodic tests. */
const PERIODIC = { server: { test_clock: 'on' }, 'board daily': { teams: 'daily_squads' } };
const D1 = '2026-11-22';
const D2 = '2026-11-23';

async function setClock(gw, iso) {
  const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse(iso) });
  assert.equal(r.status, 200, r.text);
}

/* Team ops and writes on daily across the end of D1 (midnight at +08:00):
 * D2 starts with D1's membership and sums of its own, D1 keeps its
 * standings, rows of each day show that day's teams, a live viewer rolls
 * over to D2's membership. REST only for the checks: it runs on the
 * cluster too. */
async function periodicTeams(t, gw) {
  await setClock(gw, '2026-11-22T15:59:00.000Z'); // a minute before D1 ends
  const ws = await h.connectWs(t, gw.wsUrl);
  const req = async (o) => {
    const r = await ws.request(o, 10000);
    assert.notEqual(r.op, 'error', JSON.stringify(r));
    return r;
  };
  const squads = async (p) => shape((await h.http(gw.base, 'GET', `/api/v1/boards/daily_squads?top=10&period=${p}`)).body.rows);
  const rowsOf = async (p) => (await h.http(gw.base, 'GET', `/api/v1/boards/daily?top=100&period=${p}`)).body.rows;
  for (const [m, team] of [['ann', 'red'], ['bob', 'red'], ['cid', 'blue']]) await req({ op: 'team', board: 'daily', member: m, team });
  await req({ op: 'incr', board: 'daily', member: 'ann', delta: 10 });
  await req({ op: 'incr', board: 'daily', member: 'bob', delta: 20 });
  let ack = await req({ op: 'incr', board: 'daily', member: 'cid', delta: 5 });
  assert.deepEqual([ack.team, ack.team_score, ack.team_rank], ['blue', 5, 2]);
  await req({ op: 'incr', board: 'daily', member: 'dan', delta: 7 }); // no team
  const moved = await req({ op: 'team', board: 'daily', member: 'bob', team: 'blue' }); // bob's 20 go along
  assert.equal(moved.team, 'blue');
  assert.equal(await squads(D1), 'blue=25 red=10');

  // a viewer of daily's current day: rows with their teams
  const conn = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await conn.request({ op: 'subscribe', board: 'daily', view: { top: 10 } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.equal(snap.period, D1);
  const view = { rows: snap.rows, period: snap.period };
  conn.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.sub !== snap.sub) return;
    if (m.op === 'snapshot') { view.rows = m.rows; view.period = m.period || view.period; }
    else if (m.op === 'delta') view.rows = applyDelta(view.rows, m, 1, 10) || view.rows;
  });
  const teamsOf = (rows) => rows.map((r) => `${r.member}:${r.team || '-'}`).sort().join(' ');
  assert.equal(teamsOf(snap.rows), 'ann:red bob:blue cid:blue dan:-');
  // and a roster of red on the current day
  const rsnap = await conn.request({ op: 'subscribe', board: 'daily', view: { team: 'red' } }, 15000);
  assert.equal(rsnap.op, 'snapshot', JSON.stringify(rsnap));
  assert.deepEqual(rsnap.rows.map((r) => r.member), ['ann']);
  const roster = { rows: rsnap.rows, period: rsnap.period };
  conn.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.sub !== rsnap.sub) return;
    if (m.op === 'snapshot') { roster.rows = m.rows; roster.period = m.period || roster.period; }
    else if (m.op === 'delta') roster.rows = applyDelta(roster.rows, m, 1, 200) || roster.rows;
  });

  // D1 ends
  await setClock(gw, '2026-11-22T16:00:01.000Z');
  ack = await req({ op: 'incr', board: 'daily', member: 'ann', delta: 3 });
  assert.deepEqual([ack.team, ack.team_score, ack.team_rank], ['red', 3, 1], 'D2 starts with D1 membership, sums of its own');
  await req({ op: 'team', board: 'daily', member: 'eve', team: 'red' });
  ack = await req({ op: 'incr', board: 'daily', member: 'eve', delta: 4 });
  assert.deepEqual([ack.team, ack.team_score], ['red', 7]);
  ack = await req({ op: 'incr', board: 'daily', member: 'bob', delta: 6 }); // still on blue, from D1's move
  assert.deepEqual([ack.team, ack.team_score, ack.team_rank], ['blue', 6, 2]);
  await req({ op: 'team', board: 'daily', member: 'ann', team: 'blue' }); // ann's 3 of D2 move
  await req({ op: 'incr', board: 'daily', member: 'dan', delta: 1 });
  assert.equal(await squads(D2), 'blue=9 red=4');
  assert.equal(await squads(D1), 'blue=25 red=10', 'the past day keeps its standings');
  // each day's rows show that day's teams; every sum is exact
  assert.equal(teamsOf(await rowsOf(D1)), 'ann:red bob:blue cid:blue dan:-');
  const d2 = await rowsOf(D2);
  assert.equal(teamsOf(d2), 'ann:blue bob:blue dan:- eve:red');
  const sums = {};
  for (const r of d2) if (r.team) sums[r.team] = (sums[r.team] || 0) + r.score;
  assert.deepEqual(sums, { blue: 9, red: 4 });
  // the viewer rolled over to D2 and shows D2's teams
  await h.waitFor(() => view.period === D2 && teamsOf(view.rows) === 'ann:blue bob:blue dan:- eve:red', 15000,
    'the viewer on D2 with its teams').catch((e) => {
    throw new Error(`${e.message}: ${view.period} ${teamsOf(view.rows)}`);
  });
  // the roster viewer too: red on D2 is eve alone (ann moved to blue)
  await h.waitFor(() => roster.period === D2 && roster.rows.map((r) => r.member).join() === 'eve', 15000,
    'the roster on D2').catch((e) => { throw new Error(`${e.message}: ${roster.period} ${JSON.stringify(roster.rows)}`); });
  // a REST roster of D2 (cid has no points in D2: absent)
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/daily?team=blue&period=${D2}`);
  assert.equal(rest.status, 200, rest.text);
  assert.deepEqual([rest.body.rows.map((r) => r.member), rest.body.absent, rest.body.total],
    [['bob', 'ann'], ['cid'], 3], rest.text);
  // a roster at a moment of D2 reads D2's membership log: until its change
  // 2, ann was still on red and eve had joined (without points yet)
  const at1 = await h.http(gw.base, 'GET', `/api/v1/boards/daily?team=red&period=${D2}&at_seq=1`);
  assert.equal(at1.status, 200, at1.text);
  assert.deepEqual([at1.body.rows.map((r) => r.member), at1.body.absent], [['ann'], ['eve']], at1.text);
}

test('team ops, acks, top and feed of squads on one Redis', { skip, timeout: 120000 }, async (t) => {
  const { gw } = await h.startStack(t);
  await teamOps(t, gw);
});

test('a reader of squads never sees half of a move, on one Redis', { skip, timeout: 120000 }, async (t) => {
  const { gw } = await h.startStack(t);
  await concurrentMoves(t, gw);
});

test('team boards on the 3+3 cluster: ops, acks, views and atomic moves', { skip, timeout: 240000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config: h.configWith(t, PERIODIC) });
  await teamOps(t, gw);
  await concurrentMoves(t, gw);
  // admin ops and the rebuild tool in the source's slot on the cluster
  const before = (await h.http(gw.base, 'GET', '/api/v1/boards/squads?top=10')).body.rows;
  const m0 = (await h.http(gw.base, 'GET', '/api/v1/boards/players/members/m0')).body;
  const rm = await h.http(gw.base, 'DELETE', '/api/v1/boards/players/members/m0');
  assert.equal(rm.status, 200, rm.text);
  const after = (await h.http(gw.base, 'GET', '/api/v1/boards/squads?top=10')).body.rows;
  const total = (rows) => rows.reduce((s, r) => s + r.score, 0);
  assert.equal(total(after), total(before) - m0.score);
  const r = spawnSync(h.gatewayBin(), ['teams', 'rebuild', 'players', '--redis', cluster.seeds],
    { encoding: 'utf8', env: Object.assign({}, process.env, { RANKCAST_ADMIN_KEY: undefined }), cwd: h.repoRoot });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /squads recomputed: 0 teams changed/); // the sums were exact
  // a team board on a periodic source: writes and moves across a rollover
  await periodicTeams(t, gw);
});

test('a team board on a periodic source across a rollover, archived with the day and sent by webhook, on one Redis',
  { skip: skipArchive, timeout: 120000 }, async (t) => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-teams-'));
    h.defer(t, () => fs.rmSync(stateDir, { recursive: true, force: true }));
    // a webhook receiver: every archived period's POST (docs/webhooks.md)
    const hooks = [];
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => { hooks.push(JSON.parse(Buffer.concat(chunks).toString('utf8'))); res.writeHead(200).end('ok'); });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    h.defer(t, () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
    const config = h.configWith(t, Object.assign({
      webhook: { url: `http://127.0.0.1:${server.address().port}/hook`, secret: 'hook-secret-0123456789abcdef', top: 3 },
    }, PERIODIC));
    const redis = await h.startRedis(t);
    const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
    await periodicTeams(t, gw);
    // each day has its own membership in its own tag; D1's expires with
    // D1's keys once D2 was started from it, D2's (the latest) does not
    assert.equal(await redis.cli('HGET', `rc:{daily|${D1}}:tm`, 'ann'), 'red');
    assert.equal(await redis.cli('HGET', `rc:{daily|${D2}}:tm`, 'ann'), 'blue');
    assert.equal(await redis.cli('HGET', `rc:{daily|${D2}}:tm`, 'cid'), 'blue');
    const zTtl = Number(await redis.cli('PTTL', `rc:{daily|${D1}}:z`));
    const tmTtl = Number(await redis.cli('PTTL', `rc:{daily|${D1}}:tm`));
    // (the same end, told from two clock readings: the test clock jumped a minute between)
    assert.ok(tmTtl > 0 && Math.abs(zTtl - tmTtl) < 120000, `D1 membership PTTL ${tmTtl}, its keys' ${zTtl}`);
    assert.equal(await redis.cli('PTTL', `rc:{daily|${D2}}:tm`), '-1');
    // the team board's keys expire with the day's
    assert.ok(Number(await redis.cli('PTTL', `rc:{daily|${D2}}{daily_squads}:z`)) > 0);
    // the archived day holds the team standings too
    await gw.waitForLine(/archived daily_squads 2026-11-22: 2 rows$/, 15000);
    const tz = (await redis.cli('ZRANGE', `rc:{daily|${D1}}{daily_squads}:z`, 0, -1, 'REV', 'WITHSCORES')).split('\n');
    const db = path.join(stateDir, 'archive.sqlite3');
    assert.deepEqual(sql(db, ROWS_SQL('daily_squads', D1)),
      [{ rank: 1, member: tz[0], c: Number(tz[1]) }, { rank: 2, member: tz[2], c: Number(tz[3]) }]);
    assert.deepEqual([tz[0], tz[2]], ['blue', 'red']);
    // ... and its webhook carries them
    await h.waitFor(() => hooks.find((b) => b.board === 'daily_squads' && b.period === D1), 15000, 'the webhook of daily_squads');
    assert.deepEqual(hooks.find((b) => b.board === 'daily_squads' && b.period === D1),
      { board: 'daily_squads', period: D1, total: 2, rows: [{ rank: 1, member: 'blue', score: 25 }, { rank: 2, member: 'red', score: 10 }] });
    // the rebuild tool on a period: the sums were exact
    const env = Object.assign({}, process.env, { RANKCAST_ADMIN_KEY: undefined });
    const r = spawnSync(h.gatewayBin(), ['teams', 'rebuild', 'daily', '--period', D2, '--config', h.configWith(t, PERIODIC),
      '--redis', `127.0.0.1:${redis.port}`], { encoding: 'utf8', env, cwd: h.repoRoot });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /daily_squads recomputed: 0 teams changed/);

    // two gateways write the first writes of D3 at once: D3's membership is
    // copied once (the seed refuses a second copy), every write applied
    const gw2 = await h.startGateway(t, { redisPort: redis.port, config, stateDir });
    const D3 = '2026-11-24';
    await setClock(gw, '2026-11-23T16:00:01.000Z');
    await setClock(gw2, '2026-11-23T16:00:01.000Z');
    const wss = [await h.connectWs(t, gw.wsUrl), await h.connectWs(t, gw2.wsUrl)];
    const acks = await Promise.all(['ann', 'bob', 'cid', 'eve', 'dan', 'ann', 'bob', 'eve'].map((member, i) =>
      wss[i % 2].request({ op: 'incr', board: 'daily', member, delta: i + 1 }, 10000)));
    for (const a of acks) assert.equal(a.op, 'ack', JSON.stringify(a));
    const started = (g) => g.stderr.filter((l) => l.includes(`period ${D3}'s team membership started`)).length;
    // (the line is logged before the write goes again, but stderr may come after the ack)
    await h.waitFor(() => started(gw) + started(gw2) >= 1, 5000, 'the copy logged');
    await h.sleep(200);
    assert.equal(started(gw) + started(gw2), 1, 'one copy of the membership');
    const d2tm = await redis.cli('HGETALL', `rc:{daily|${D2}}:tm`);
    assert.equal(await redis.cli('HGETALL', `rc:{daily|${D3}}:tm`), d2tm, 'D3 starts as D2 ended');
    // ann 1+6, bob 2+7, cid 3 (blue); eve 4+8 (red); dan 5 (none)
    assert.equal(shape((await h.http(gw2.base, 'GET', `/api/v1/boards/daily_squads?top=10&period=${D3}`)).body.rows), 'blue=19 red=12');

    // D4 has no write: D5 starts from D3's membership (the board's pointer)
    await setClock(gw, '2026-11-25T16:00:01.000Z');
    const ack = await wss[0].request({ op: 'incr', board: 'daily', member: 'cid', delta: 2 }, 10000);
    assert.deepEqual([ack.team, ack.team_score], ['blue', 2], JSON.stringify(ack));
    assert.equal(await redis.cli('HGETALL', 'rc:{daily|2026-11-26}:tm'), d2tm);
    assert.equal(await redis.cli('EXISTS', 'rc:{daily|2026-11-25}:tm'), '0');

    // a membership changed with redis-cli on the current day reaches the rows
    const v = await h.connectWs(t, gw.wsUrl, { token: null });
    const snap = await v.request({ op: 'subscribe', board: 'daily', view: { top: 10 } }, 15000);
    // (the write may not have reached this gateway's view of the day yet: its
    // snapshot is then of the seq before, and the write comes as a delta)
    if (!snap.rows.length)
      await v.next((m) => m.op === 'delta' && m.sub === snap.sub && (m.rows || []).some((row) => row.member === 'cid'), 10000);
    else
      assert.deepEqual(snap.rows.map((row) => [row.member, row.team]), [['cid', 'blue']]);
    await redis.cli('HSET', 'rc:{daily|2026-11-26}:tm', 'cid', 'green');
    await v.next((m) => m.op === 'delta' && m.rows.some((row) => row.member === 'cid' && row.team === 'green'), 10000);

    // rankcast import writes the current day (the real clock): its first row
    // starts the day's membership from the latest (D5's, through the pointer)
    const today = new Date(Date.now() + 8 * 3600 * 1000).toISOString().slice(0, 10);
    const csv = path.join(stateDir, 'in.csv');
    fs.writeFileSync(csv, 'member,score\ncid,5\nann,2\n');
    const im = spawnSync(h.gatewayBin(), ['import', 'daily', csv, '--quiet', '--config', config, '--redis', `127.0.0.1:${redis.port}`],
      { encoding: 'utf8', env, cwd: h.repoRoot });
    assert.equal(im.status, 0, im.stderr);
    assert.equal(await redis.cli('HGET', `rc:{daily|${today}}:tm`, 'cid'), 'green');
    await setClock(gw, new Date().toISOString());
    assert.equal(shape((await h.http(gw.base, 'GET', `/api/v1/boards/daily_squads?top=10&period=${today}`)).body.rows), 'green=5 blue=2');

    // a rebuild of D4 (finished, never written) seeds a copy that expires
    // with D4's keys and moves no pointer: the latest stays today's
    const pointer = await redis.cli('GET', 'rc:{daily|}:tmp');
    assert.match(pointer, new RegExp(` ${today}$`));
    const rb = spawnSync(h.gatewayBin(), ['teams', 'rebuild', 'daily', '--period', '2026-11-25', '--config', config,
      '--redis', `127.0.0.1:${redis.port}`], { encoding: 'utf8', env, cwd: h.repoRoot });
    assert.equal(rb.status, 0, rb.stderr);
    assert.equal(await redis.cli('HGET', 'rc:{daily|2026-11-25}:tm', 'cid'), 'blue');
    assert.ok(Number(await redis.cli('PTTL', 'rc:{daily|2026-11-25}:tm')) > 0);
    assert.equal(await redis.cli('GET', 'rc:{daily|}:tmp'), pointer);
    assert.equal(await redis.cli('PTTL', `rc:{daily|${today}}:tm`), '-1');
    // an admin remove on the periodic source keeps its day's sums exact
    const rm = await h.http(gw.base, 'DELETE', '/api/v1/boards/daily/members/cid');
    assert.equal(rm.status, 200, rm.text);
    assert.equal(shape((await h.http(gw.base, 'GET', `/api/v1/boards/daily_squads?top=10&period=${today}`)).body.rows), 'blue=2 green=0');
  });

test('--check-config refuses teams where they cannot work, with FILE:LINE', { skip }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-teams-'));
  const cases = [
    ['period = day', null], // a period's membership lives in its own tag (docs/teams.md)
    ['shards = 2', /:4: teams cannot be combined with shards/],
    ['write_mode = queued', /:4: teams cannot be combined with write_mode = queued/],
    ['order = desc', null],
  ];
  try {
    for (const [line, re] of cases) {
      const file = path.join(dir, 'c.conf');
      fs.writeFileSync(file, `[board p]\ntiebreak = none\n${line}\nteams = s\n`);
      const r = spawnSync(h.gatewayBin(), ['--check-config', file], { encoding: 'utf8' });
      if (re) {
        assert.equal(r.status, 1, r.stdout + r.stderr);
        assert.match(r.stderr + r.stdout, re);
      } else {
        assert.equal(r.status, 0, r.stdout + r.stderr);
      }
    }
    const file = path.join(dir, 'd.conf');
    fs.writeFileSync(file, '[board p]\ntiebreak = none\nteams = s\n[board s]\n');
    const r = spawnSync(h.gatewayBin(), ['--check-config', file], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /d\.conf:4: board 's' is the team board of line 3's teams/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/* Admin ops on players keep squads exact; on squads they are refused; an
 * out-of-band ZADD on players is undone in squads only by `rankcast teams
 * rebuild`; an import writes through the write script (sums follow); a reset
 * of players empties squads. */
test('admin ops, import and teams rebuild keep squads exact; squads refuses admin ops', { skip, timeout: 120000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const ws = await h.connectWs(t, gw.wsUrl);
  const squads = async () => shape((await h.http(gw.base, 'GET', '/api/v1/boards/squads?top=10')).body.rows);
  for (const [m, team] of [['ann', 'red'], ['bob', 'red'], ['cid', 'blue']]) {
    const r = await ws.request({ op: 'team', board: 'players', member: m, team }, 10000);
    assert.equal(r.op, 'teamed', JSON.stringify(r));
  }
  await ws.request({ op: 'incr', board: 'players', member: 'ann', delta: 5, req: 'r-1' }, 10000);
  await ws.request({ op: 'incr', board: 'players', member: 'bob', delta: 3 }, 10000);
  await ws.request({ op: 'incr', board: 'players', member: 'cid', delta: 4 }, 10000);
  assert.equal(await squads(), 'red=8 blue=4');
  // reverse on the source: red loses ann's 5
  const rev = await h.http(gw.base, 'POST', '/api/v1/boards/players/reverse', { req: 'r-1' });
  assert.equal(rev.status, 200, rev.text);
  assert.equal(await squads(), 'blue=4 red=3');
  // remove on the source: red keeps its members, loses bob's 3
  const rm = await h.http(gw.base, 'DELETE', '/api/v1/boards/players/members/bob');
  assert.equal(rm.status, 200, rm.text);
  assert.equal(await squads(), 'blue=4 red=0');
  // the same ops on squads are refused
  for (const [method, p, body] of [['POST', 'reset', {}], ['POST', 'reverse', { req: 'r-1' }], ['DELETE', 'members/red', undefined]]) {
    const r = await h.http(gw.base, method, `/api/v1/boards/squads/${p}`, body);
    assert.equal(r.status, 400, `${method} ${p}: ${r.text}`);
  }
  // import: through the write script, so the sums follow row by row
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-teams-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const csv = path.join(dir, 'in.csv');
  fs.writeFileSync(csv, 'member,score\nann,10\ncid,1\n');
  const env = Object.assign({}, process.env, { RANKCAST_ADMIN_KEY: undefined });
  let r = spawnSync(h.gatewayBin(), ['import', 'players', csv, '--quiet', '--redis', `127.0.0.1:${redis.port}`], { encoding: 'utf8', env, cwd: h.repoRoot });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(await squads(), 'red=10 blue=1');
  // out of band: redis-cli ZADD cannot move squads; teams rebuild does
  const ann = Number(await redis.cli('ZSCORE', 'rc:{players|}:z', 'ann'));
  const scale = 2 ** 29; // players: 1s over 3650d of tie-break, 29 bits (as demo)
  await redis.cli('ZADD', 'rc:{players|}:z', String(ann + 20 * scale), 'ann'); // ann 10 -> 30
  assert.equal(await squads(), 'red=10 blue=1');
  const feed = await watchFeed(t, gw, 'squads');
  r = spawnSync(h.gatewayBin(), ['teams', 'rebuild', 'players', '--redis', `127.0.0.1:${redis.port}`], { encoding: 'utf8', env, cwd: h.repoRoot });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /team board squads recomputed: 1 teams changed/);
  assert.equal(await squads(), 'red=30 blue=1');
  await h.waitFor(() => feed.length === 1, 10000, 'the rebuild on the feed');
  assert.deepEqual([feed[0].member, feed[0].score], ['red', 30]);
  r = spawnSync(h.gatewayBin(), ['teams', 'rebuild', 'demo', '--redis', `127.0.0.1:${redis.port}`], { encoding: 'utf8', env, cwd: h.repoRoot });
  assert.equal(r.status, 2, r.stderr);
  // a reset of the source resets its teams
  const reset = await h.http(gw.base, 'POST', '/api/v1/boards/players/reset', {});
  assert.equal(reset.status, 200, reset.text);
  assert.equal(await squads(), '');
  const ack = await ws.request({ op: 'incr', board: 'players', member: 'cid', delta: 2 }, 10000);
  assert.deepEqual([ack.team, ack.team_score, ack.team_rank], ['blue', 2, 1]);
  assert.equal(await squads(), 'blue=2');
});

/* squads serves the views of any board through the existing fan-out: a top
 * view's deltas carry prev_rank, an around view of a team, a page, shared
 * places for tied teams and a max_rate view all follow a member's write. */
test('squads serves top (prev_rank), around, page, shared places and max_rate views', { skip, timeout: 120000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const ws = await h.connectWs(t, gw.wsUrl);
  for (let i = 1; i <= 5; i++) {
    await ws.request({ op: 'team', board: 'players', member: `p${i}`, team: `t${i}` }, 10000);
    const a = await ws.request({ op: 'set', board: 'players', member: `p${i}`, value: 100 - i * 10 }, 10000);
    assert.equal(a.team_rank, i, JSON.stringify(a));
  }
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const views = {};
  const deltas = [];
  for (const [name, sub] of [
    ['top', { view: { top: 3 } }],
    ['around', { view: { around: 't3', radius: 1 } }],
    ['page', { view: { offset: 1, limit: 2 } }],
    ['places', { view: { top: 5 }, places: 'shared' }],
    ['slow', { view: { top: 5 }, max_rate: 2 }],
  ]) {
    const s = await viewer.request(Object.assign({ op: 'subscribe', board: 'squads' }, sub), 10000);
    assert.equal(s.op, 'snapshot', JSON.stringify(s));
    views[s.sub] = { name, rows: s.rows };
  }
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    const v = views[m.sub];
    if (!v) return;
    if (m.op === 'snapshot') v.rows = m.rows;
    else if (m.op === 'delta') {
      if (v.name === 'top') deltas.push(m);
      const next = applyDelta(v.rows, m, v.name === 'page' ? 2 : 1, v.name === 'top' ? 3 : 5);
      if (next) v.rows = next;
    }
  });
  const by = (name) => Object.values(views).find((v) => v.name === name);
  // t5 (50) jumps to the top: p5 50 -> 200
  const ack = await ws.request({ op: 'incr', board: 'players', member: 'p5', delta: 150 }, 10000);
  assert.deepEqual([ack.team, ack.team_score, ack.team_rank], ['t5', 200, 1]);
  await h.waitFor(() => shape(by('top').rows) === 't5=200 t1=90 t2=80', 10000, 'top 3 of squads');
  const d = deltas.find((m) => m.rows.some((r) => r.member === 't5'));
  assert.equal(d.rows.find((r) => r.member === 't5').prev_rank, 5, JSON.stringify(d));
  await h.waitFor(() => shape(by('slow').rows) === 't5=200 t1=90 t2=80 t3=70 t4=60', 10000, 'the max_rate view');
  const around = await h.http(gw.base, 'GET', '/api/v1/boards/squads?around=t3&radius=1');
  assert.equal(around.status, 200, around.text);
  assert.equal(shape(around.body.rows), 't2=80 t3=70 t4=60');
  // t4 ties t3 at 70: shared places
  await ws.request({ op: 'incr', board: 'players', member: 'p4', delta: 10 }, 10000);
  await h.waitFor(() => {
    const r = by('places').rows;
    return r.length === 5 && r[3].place === 4 && r[4].place === 4 && r[3].tied && r[4].tied;
  }, 10000, 'shared places of t3 and t4');
  const page = await h.http(gw.base, 'GET', '/api/v1/boards/squads?offset=1&limit=2');
  assert.equal(page.status, 200, page.text);
  assert.equal(shape(page.body.rows), 't1=90 t2=80');
  await h.waitFor(() => shape(by('page').rows) === 't1=90 t2=80', 10000, 'the page view');
});
