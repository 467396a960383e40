/* export_import.test.js - `rankcast export` and `rankcast import` against a
 * real redis-server (and a real 3-primary Redis Cluster), next to a running
 * gateway whose REST reads are the reference: an export shows what a REST
 * read shows (ranks, scores or fields, profile names), in CSV and in JSON
 * Lines, over more rows than one page; an archived period comes out of the
 * SQLite archive; an import is loaded through the write script and a rerun
 * changes nothing; a bad row stops the import at its line with nothing after
 * it written. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const SANITIZER_REPORT = /runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer/;

/* Starts `rankcast ...args`: { stdin, done }, done resolving to { code,
 * stdout, stderr } at its end (rejecting on a sanitizer report). */
function cliStart(args, { redis, config, state, env, hold } = {}) {
  const full = [...args];
  if (redis) full.push('--redis', redis);
  if (config) full.push('--config', config);
  if (state) full.push('--state', state);
  // tracked by the harness: killed at exit if a failed test leaves it running
  const child = h.spawnTracked(h.gatewayBin(), full, {
    cwd: h.repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: Object.assign({}, process.env, { ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1' }, env),
  }, []);
  const run = {};
  const done = new Promise((resolve, reject) => {
    const out = [];
    const err = [];
    // hold: stdout is not read until run.release(); the tool blocks once the pipe is full
    if (hold) run.release = () => child.stdout.on('data', (d) => out.push(d));
    else child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      child.untrack();
      const res = { code, signal, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
      if (SANITIZER_REPORT.test(res.stderr)) reject(new Error(`rankcast ${full.join(' ')}: sanitizer report\n${res.stderr}`));
      else resolve(res);
    });
  });
  run.stdin = child.stdin;
  run.stdout = child.stdout;
  run.done = done;
  return run;
}

/* Runs `rankcast ...args` to its end with input (or nothing) on stdin. */
function cli(args, opts = {}) {
  const run = cliStart(args, opts);
  run.stdin.on('error', () => {}); // a tool that exits before reading it all
  run.stdin.end(opts.input);
  return run.done;
}

function tmpFile(t, name, text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-import-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/* A CSV export -> objects keyed by the header's columns (no quoted cells in these tests). */
function parseCsv(text) {
  const lines = text.split('\n').filter((l) => l !== '');
  const cols = lines[0].split(',');
  return lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}
const parseJsonl = (text) => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

/* Every row of a board as REST shows it, in pages of 1000. */
async function restRows(gw, board, query = '') {
  const rows = [];
  for (let offset = 0; ; offset += 1000) {
    const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?offset=${offset}&limit=1000${query}`);
    assert.equal(r.status, 200, r.text);
    rows.push(...r.body.rows);
    if (r.body.rows.length < 1000) return { rows, seq: r.body.seq, total: r.body.total };
  }
}

/* A REST row as an export's JSON Lines row shows it (profile fields other than name left out). */
const asExported = (r) => {
  const o = { rank: r.rank, member: r.member, score: r.score };
  if (r.fields) o.fields = r.fields;
  if (r.name !== undefined) o.name = r.name;
  return o;
};

const write = (gw, board, body) => h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, body);

test('export shows a single-field and a multi-field board as REST reads do, in csv and jsonl', { skip, timeout: 120000 },
  async (t) => {
    const { redis, gw } = await h.startStack(t);
    const seeds = `127.0.0.1:${redis.port}`;
    for (const [member, delta] of [['user:a', 30], ['user:b', 50], ['user:c', 50], ['user:d', -10], ['user:e', 70]]) {
      assert.equal((await write(gw, 'demo', { member, op: 'incr', delta })).status, 200);
    }
    for (const [member, fields] of [['p1', { clears: 5, revives: 1, first_clear_ms: 1500 }],
      ['p2', { clears: 5, revives: 0, first_clear_ms: 2500 }], ['p3', { clears: 7, revives: 3, first_clear_ms: 99 }]]) {
      assert.equal((await write(gw, 'clears', { member, op: 'submit', fields })).status, 200);
    }
    await h.http(gw.base, 'PUT', '/api/v1/members/user:b/profile', { name: 'Bea', avatar: 'b.png' });
    await h.http(gw.base, 'PUT', '/api/v1/members/p2/profile', { name: 'Pat' });

    for (const board of ['demo', 'clears']) {
      const rest = await restRows(gw, board);
      const jsonl = await cli(['export', board, '--format', 'jsonl'], { redis: seeds });
      assert.equal(jsonl.code, 0, jsonl.stderr);
      assert.equal(jsonl.stderr, '');
      assert.deepEqual(parseJsonl(jsonl.stdout), rest.rows.map(asExported), board);

      const csv = await cli(['export', board], { redis: seeds }); // csv is the default
      assert.equal(csv.code, 0, csv.stderr);
      const fields = board === 'clears' ? ['clears', 'revives', 'first_clear_ms'] : ['score'];
      assert.equal(csv.stdout.split('\n')[0], ['rank', 'member', ...fields, 'name'].join(','));
      assert.deepEqual(parseCsv(csv.stdout), rest.rows.map((r) => Object.fromEntries([
        ['rank', String(r.rank)], ['member', r.member],
        ...fields.map((f) => [f, String(r.fields ? r.fields[f] : r.score)]), ['name', r.name || '']])), board);
    }
    // (user:b and user:c reach 50 in the same second or not: demo's tie-break is 1 s; REST agreed either way)
    const demo = parseJsonl((await cli(['export', 'demo', '--format', 'jsonl'], { redis: seeds })).stdout);
    assert.deepEqual(demo.map((r) => r.score), [70, 50, 50, 30, -10]);
    assert.deepEqual([demo[0].member, demo[3].member, demo[4].member], ['user:e', 'user:a', 'user:d']);
    assert.equal(demo.find((r) => r.member === 'user:b').name, 'Bea');

    // the command line's mistakes: exit 2, with the reason
    for (const [args, says] of [
      [['export', 'nosuch'], /no board is declared for 'nosuch'/],
      [['export', 'demo', '--format', 'xml'], /--format must be csv or jsonl/],
      [['export', 'demo', '--period', 'previous'], /board demo has no periods/],
      [['export', 'daily', '--period', '2026-13-01'], /period '2026-13-01' is not a day period/],
      [['export'], /usage: rankcast export/],
      [['import', 'hot', '/dev/null'], /hot board/],
      [['import', 'demo', '/dev/null', '--period', 'previous'], /--period is for export/],
    ]) {
      const r = await cli(args, { redis: seeds });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, says);
      assert.equal(r.stdout, '');
    }
    // [redis] ack_replicas: the import waits for replicas as acks do, and says when too few confirmed
    const acked = h.configWith(t, { redis: { ack_replicas: 1, ack_timeout: '100ms' } });
    const wf = tmpFile(t, 'w.csv', 'member,score\nw:1,1\nw:2,2\n');
    const wr = await cli(['import', 'match:w', wf], { redis: seeds, config: acked });
    assert.equal(wr.code, 0, wr.stderr);
    assert.match(wr.stderr, /lines 2\.\.3: written, 0 of 1 replicas confirmed within 100 ms/);
    assert.equal(await redis.cli('ZCARD', 'rc:{match:w|}:z'), '2');

    // RANKCAST_REDIS as for the gateway (a flag would beat it)
    const viaEnv = await cli(['export', 'demo', '--format', 'jsonl'], { env: { RANKCAST_REDIS: seeds } });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.deepEqual(parseJsonl(viaEnv.stdout), demo);

    // Redis unreachable: exit 3
    const down = await cli(['export', 'demo'], { redis: `127.0.0.1:${await h.freePort()}` });
    assert.equal(down.code, 3, down.stderr);
    assert.match(down.stderr, /Connection refused/);
  });

test('2,500 rows: import in batches, export in pages, a round trip, and a rerun that changes nothing',
  { skip, timeout: 180000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const seeds = `127.0.0.1:${redis.port}`;
    const N = 2500;
    // distinct scores, so the order does not hang on tie-break times
    const lines = ['member,score,name'];
    for (let i = 0; i < N; i++) lines.push(`m:${i},${(i * 7919) % 100003 - 50000},${i % 3 === 0 ? `Name ${i}` : ''}`);
    const file = tmpFile(t, 'big.csv', lines.join('\n') + '\n');

    const first = await cli(['import', 'demo', file], { redis: seeds });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, new RegExp(`${N} rows written with set: ${N} changed the board, 0 left it as it was, 0 were duplicates`));
    assert.equal(await redis.cli('ZCARD', 'rc:{demo|}:z'), String(N));
    assert.equal(await redis.cli('GET', 'rc:{demo|}:seq'), String(N));
    assert.equal(await redis.cli('HGET', 'rc:profile:m:3', 'name'), 'Name 3');

    // the export: every row once, ranks 1..N, equal to the REST pages
    const rest = await restRows(gw, 'demo');
    assert.equal(rest.rows.length, N);
    const out = await cli(['export', 'demo', '--format', 'jsonl'], { redis: seeds });
    assert.equal(out.code, 0, out.stderr);
    const rows = parseJsonl(out.stdout);
    assert.deepEqual(rows.map((r) => r.rank), Array.from({ length: N }, (_, i) => i + 1));
    assert.deepEqual(rows, rest.rows.map(asExported));
    const byMember = new Map(rows.map((r) => [r.member, r]));
    for (let i = 0; i < N; i += 97) {
      assert.equal(byMember.get(`m:${i}`).score, (i * 7919) % 100003 - 50000);
      assert.equal(byMember.get(`m:${i}`).name, i % 3 === 0 ? `Name ${i}` : undefined);
    }

    // a rerun: every row a duplicate, nothing in Redis changes (seq, rows, markers, profiles)
    const before = await redis.fingerprint();
    const again = await cli(['import', 'demo', file], { redis: seeds });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`${N} rows written with set: 0 changed the board, 0 left it as it was, ${N} were duplicates`));
    assert.equal(await redis.fingerprint(), before);

    // a write between two pages of an export: the export says it is not one snapshot
    const wide = ['member,score,name'];
    for (let i = 0; i < 12000; i++) wide.push(`w:${i},${i},${'N'.repeat(40)}${i}`);
    assert.equal((await cli(['import', 'match:wide', tmpFile(t, 'wide.csv', wide.join('\n'))], { redis: seeds })).code, 0);
    const held = cliStart(['export', 'match:wide'], { redis: seeds, hold: true });
    held.stdin.end();
    // rows arrive once the first page is read; the rest wait on the full pipe
    await h.waitFor(() => held.stdout.readableLength > 0, 15000, 'the first rows of the export');
    assert.equal((await write(gw, 'match:wide', { member: 'w:new', op: 'set', value: 5 })).status, 200);
    held.release();
    const heldRes = await held.done;
    assert.equal(heldRes.code, 0, heldRes.stderr);
    assert.match(heldRes.stderr, /board match:wide changed while it was read \(seq 12000 to 12001\): the pages of 1000 rows are each consistent/);

    // round trip: the CSV export loads into another board and exports the same
    const csv = await cli(['export', 'demo'], { redis: seeds });
    assert.equal(csv.code, 0, csv.stderr);
    const copyFile = tmpFile(t, 'copy.csv', csv.stdout);
    const load = await cli(['import', 'match:copy', copyFile], { redis: seeds });
    assert.equal(load.code, 0, load.stderr);
    const copy = await cli(['export', 'match:copy'], { redis: seeds });
    assert.equal(copy.code, 0, copy.stderr);
    assert.equal(copy.stdout, csv.stdout);
    // a viewer of the board sees the imported rows arrive (the script's change events)
    const viewer = await h.connectWs(t, gw.wsUrl);
    const snap = await viewer.request({ op: 'subscribe', board: 'match:live', view: { top: 3 } });
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    const live = tmpFile(t, 'live.csv', 'member,score\nl:1,10\nl:2,30\nl:3,20\nl:4,5\n');
    assert.equal((await cli(['import', 'match:live', live], { redis: seeds })).code, 0);
    let top = [];
    await h.waitFor(async () => {
      const r = await h.http(gw.base, 'GET', '/api/v1/boards/match:live?top=3');
      top = r.body.rows.map((x) => x.member);
      return top.length === 3;
    }, 10000, 'the imported rows in a REST read');
    assert.deepEqual(top, ['l:2', 'l:3', 'l:1']);
    await viewer.next((m) => m.op === 'delta' && m.rows.some((x) => x.member === 'l:2' && x.rank === 1), 10000);

    // ... and from stdin, as JSON Lines
    const viaStdin = await cli(['import', 'match:copy2', '-', '--format', 'jsonl'], { redis: seeds, input: out.stdout });
    assert.equal(viaStdin.code, 0, viaStdin.stderr);
    assert.equal((await cli(['export', 'match:copy2', '--format', 'jsonl'], { redis: seeds })).stdout, out.stdout);
  });

test('a bad row stops the import at its line: the rows before it are written, none after', { skip, timeout: 120000 },
  async (t) => {
    const { redis, gw } = await h.startStack(t);
    const seeds = `127.0.0.1:${redis.port}`;
    const members = async () => (await redis.cli('ZRANGE', 'rc:{demo|}:z', 0, -1)).split('\n').filter(Boolean).sort();
    const expect = (from, to) => Array.from({ length: to - from }, (_, i) => `m:${from + i}`).sort();

    // line 600 (row 599) of 1,000: past the first batch, in the middle of the third
    const lines = ['member,score'];
    for (let i = 0; i < 1000; i++) lines.push(`m:${i},${i === 598 ? '12.5' : i}`);
    const file = tmpFile(t, 'bad.csv', lines.join('\n') + '\n');
    const r = await cli(['import', 'demo', file], { redis: seeds });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /line 600: bad_request: score '12.5' is not an integer/);
    assert.deepEqual(await members(), expect(0, 598));

    // a value outside the board's range: refused before Redis is asked, same rule
    await redis.cli('DEL', 'rc:{laps|}:z');
    const laps = tmpFile(t, 'laps.csv', 'member,score\ncar:1,81000\ncar:2,3600001\ncar:3,82000\n');
    const lr = await cli(['import', 'laps', laps], { redis: seeds });
    assert.equal(lr.code, 1, lr.stderr);
    assert.match(lr.stderr, /line 3: out_of_range: score 3600001 is outside this board's range 0..3600000/);
    assert.equal(await redis.cli('ZRANGE', 'rc:{laps|}:z', 0, -1), 'car:1');

    // fixed and run again: the rows already there are duplicates, the rest go in
    lines[599] = 'm:598,598';
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const fixed = await cli(['import', 'demo', file], { redis: seeds });
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.match(fixed.stderr, /1000 rows written with set: 402 changed the board, 0 left it as it was, 598 were duplicates/);
    assert.deepEqual(await members(), expect(0, 1000));

    // a member an admin blocked: refused by the board's blocklist at its line
    const del = await h.http(gw.base, 'DELETE', '/api/v1/boards/match:blk/members/m:5?block=1');
    assert.equal(del.status, 200, del.text);
    const blk = tmpFile(t, 'blk.jsonl', Array.from({ length: 10 }, (_, i) => JSON.stringify({ member: `m:${i}`, score: i })).join('\n'));
    const br = await cli(['import', 'match:blk', blk], { redis: seeds });
    assert.equal(br.code, 1, br.stderr);
    assert.match(br.stderr, /line 6: forbidden: member m:5 is blocked on this board/);
    assert.deepEqual((await redis.cli('ZRANGE', 'rc:{match:blk|}:z', 0, -1)).split('\n').sort(), expect(0, 5));

    // a header that names a column the board lacks: line 1, nothing written
    const hdr = tmpFile(t, 'hdr.csv', 'member,points\nx,1\n');
    const hr = await cli(['import', 'match:hdr', hdr], { redis: seeds });
    assert.equal(hr.code, 1, hr.stderr);
    assert.match(hr.stderr, /line 1: header: column 2: unknown column 'points'/);
    assert.equal(await redis.cli('EXISTS', 'rc:{match:hdr|}:z'), '0');
  });

test('a periodic board: import writes the current period; an archived period exports from the archive',
  { skip, timeout: 120000 }, async (t) => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-export-'));
    h.defer(t, () => fs.rmSync(stateDir, { recursive: true, force: true }));
    const config = h.configWith(t, { server: { test_clock: 'on' } });
    const redis = await h.startRedis(t);
    const seeds = `127.0.0.1:${redis.port}`;
    const gw = await h.startGateway(t, { redisPort: redis.port, config, stateDir });

    // import into daily (its current period by the wall clock), then export it
    const file = tmpFile(t, 'daily.csv', 'member,score\nd:1,5\nd:2,9\n');
    const imp = await cli(['import', 'daily', file], { redis: seeds, config });
    assert.equal(imp.code, 0, imp.stderr);
    const period = /to period (\S+):/.exec(imp.stderr)[1];
    assert.equal(await redis.cli('ZCARD', `rc:{daily|${period}}:z`), '2');
    const cur = await cli(['export', 'daily', '--period', period], { redis: seeds, config });
    assert.equal(cur.stdout, 'rank,member,score,name\n1,d:2,9,\n2,d:1,5,\n');

    // a member blocked on the board (its list for every period) before this
    // week's first write: the import's first row seeds the week's blocklist
    // from it, and the blocked member's row stops the import
    await redis.cli('SADD', 'rc:{weekly|}:blocked', 'w:bad');
    const wf = tmpFile(t, 'weekly.csv', 'member,score\nw:ok,5\nw:bad,9\nw:after,1\n');
    const wr = await cli(['import', 'weekly', wf], { redis: seeds, config });
    assert.equal(wr.code, 1, wr.stderr);
    assert.match(wr.stderr, /line 3: forbidden: member w:bad is blocked on this board/);
    const week = /to period (\S+):/.exec(wr.stderr)[1];
    assert.equal(await redis.cli('ZRANGE', `rc:{weekly|${week}}:z`, 0, -1), 'w:ok');
    assert.deepEqual((await redis.cli('SMEMBERS', `rc:{weekly|${week}}:blocked`)).split('\n').sort(), ['', 'w:bad']);

    // a day archived by the gateway (its test clock: 2 s before local midnight at +08:00)
    const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { now_ms: Date.parse('2026-11-22T15:59:58.000Z') });
    assert.equal(r.status, 200, r.text);
    for (const [member, delta] of [['user:a', 30], ['user:b', 50], ['user:c', 50], ['user:d', 10]]) {
      assert.equal((await write(gw, 'daily', { member, op: 'incr', delta })).status, 200);
    }
    await h.http(gw.base, 'PUT', '/api/v1/members/user:b/profile', { name: 'Bea' });
    const fromRedis = (await restRows(gw, 'daily', '&period=2026-11-22')).rows.map(asExported);
    const live = await cli(['export', 'daily', '--period', '2026-11-22', '--format', 'jsonl'], { redis: seeds, config, state: stateDir });
    assert.deepEqual(parseJsonl(live.stdout), fromRedis);
    await gw.waitForLine(/archived daily 2026-11-22: 4 rows$/, 15000);
    // the keys expire (here: deleted): the export reads the archive
    await redis.cli('DEL', 'rc:{daily|2026-11-22}:z', 'rc:{daily|2026-11-22}:seq', 'rc:{daily|2026-11-22}:log');
    const archived = await cli(['export', 'daily', '--period', '2026-11-22', '--format', 'jsonl'], { redis: seeds, config, state: stateDir });
    assert.equal(archived.code, 0, archived.stderr);
    assert.deepEqual(parseJsonl(archived.stdout), fromRedis);
    assert.equal(parseJsonl(archived.stdout)[0].name, 'Bea');
    // the gateway's REST read of the archive agrees
    assert.deepEqual((await restRows(gw, 'daily', '&period=2026-11-22')).rows.map(asExported), fromRedis);
    // a day neither in Redis nor archived: a header and no rows, said on stderr
    const none = await cli(['export', 'daily', '--period', '2026-10-01'], { redis: seeds, config, state: stateDir });
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, 'rank,member,score,name\n');
    assert.match(none.stderr, /does not hold it: no rows/);
  });

test('cluster: export and import against 3 primaries (rows, names and the blocklist on other nodes)',
  { skip, timeout: 180000 }, async (t) => {
    const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
    const gw = await h.startGateway(t, { redis: cluster.seeds });
    // one seed only: the rest of the cluster is found from its slot map
    const seed = cluster.seeds.split(',')[0];
    const lines = ['member,score,name'];
    for (let i = 0; i < 1200; i++) lines.push(`c:${i},${i * 3},${i % 2 ? `N${i}` : ''}`);
    const file = tmpFile(t, 'cl.csv', lines.join('\n') + '\n');
    for (const board of ['demo', 'daily', 'match:7']) {
      const r = await cli(['import', board, file], { redis: seed });
      assert.equal(r.code, 0, `${board}: ${r.stderr}`);
      assert.match(r.stderr, /1200 rows written with set(?: to period \S+)?: 1200 changed the board/);
      // the period the rows went to (daily), read back by name: a day may end meanwhile
      const p = (/to period (\S+):/.exec(r.stderr) || [])[1];
      const rest = await restRows(gw, board, p ? `&period=${p}` : '');
      assert.equal(rest.rows.length, 1200);
      const out = await cli(['export', board, '--format', 'jsonl', ...(p ? ['--period', p] : [])], { redis: seed });
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(parseJsonl(out.stdout), rest.rows.map(asExported), board);
      const again = await cli(['import', board, file], { redis: seed });
      assert.match(again.stderr, /0 changed the board, 0 left it as it was, 1200 were duplicates/);
      assert.equal((await restRows(gw, board, p ? `&period=${p}` : '')).seq, rest.seq);
    }
    // profile names landed on every primary
    const owners = new Set();
    for (const i of [1, 3, 5, 7, 9, 11, 13]) owners.add(await cluster.owner(`rc:profile:c:${i}`));
    assert.ok(owners.size > 1, 'profiles spread over the primaries');
    // a multi-field board
    const cf = tmpFile(t, 'clears.csv', 'member,clears,revives,first_clear_ms\nq1,5,1,1500\nq2,7,0,20\n');
    assert.equal((await cli(['import', 'clears', cf], { redis: seed })).code, 0);
    const ce = await cli(['export', 'clears'], { redis: seed });
    assert.equal(ce.stdout, 'rank,member,clears,revives,first_clear_ms,name\n1,q2,7,0,20,\n2,q1,5,1,1500,\n');

    // A slot being migrated: its owner answers ASK for a key it does not
    // hold, and the tools follow it (ASKING, then the command on the target).
    let member = null;
    let slot = null;
    for (let i = 0; !member; i++) {
      const key = `rc:profile:ask:${i}`;
      const from = await cluster.owner(key);
      slot = Number(await cluster.cli(from, 'CLUSTER', 'KEYSLOT', key));
      if (Number(await cluster.cli(from, 'CLUSTER', 'COUNTKEYSINSLOT', slot)) === 0) member = { name: `ask:${i}`, key, from };
    }
    const to = (await cluster.primaries()).find((p) => p !== member.from);
    const idOf = async (port) => cluster.cli(port, 'CLUSTER', 'MYID');
    assert.equal(await cluster.cli(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', await idOf(member.from)), 'OK');
    assert.equal(await cluster.cli(member.from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', await idOf(to)), 'OK');
    const askFile = tmpFile(t, 'ask.csv', `member,score,name\n${member.name},77,Asked\n`);
    const ar = await cli(['import', 'match:ask', askFile], { redis: seed });
    assert.equal(ar.code, 0, ar.stderr);
    assert.match(ar.stderr, /1 profile names set/);
    const ae = await cli(['export', 'match:ask'], { redis: seed });
    assert.equal(ae.stdout, `rank,member,score,name\n1,${member.name},77,Asked\n`);
    // the migration ends: the name is on the target, not on the old owner
    for (const port of [to, member.from]) assert.equal(await cluster.cli(port, 'CLUSTER', 'SETSLOT', slot, 'NODE', await idOf(to)), 'OK');
    assert.equal(await cluster.cli(to, 'HGET', member.key, 'name'), 'Asked');
    assert.equal(await cluster.cli(member.from, 'CLUSTER', 'COUNTKEYSINSLOT', slot), '0');
    await cluster.waitOk();

    // A board's slot moves while an import reads its stdin: the next batch
    // goes to the old owner by the map read at start, which answers MOVED;
    // the import follows it to the new owner and reads the map again.
    const board = 'match:moving';
    const zkey = `rc:{${board}|}:z`;
    const bslot = Number(await cluster.cli(cluster.nodes[0].port, 'CLUSTER', 'KEYSLOT', zkey));
    const bfrom = await cluster.owner(zkey);
    const bto = (await cluster.primaries()).find((p) => p !== bfrom);
    const run = cliStart(['import', board, '-', '--format', 'jsonl'], { redis: seed });
    h.defer(t, () => run.stdin.end()); // a failed step below leaves it waiting for its input
    const row = (i) => JSON.stringify({ member: `mv:${i}`, score: i }) + '\n';
    run.stdin.write(Array.from({ length: 256 }, (_, i) => row(i)).join('')); // one whole batch
    await h.waitFor(async () => (await cluster.cli(bfrom, 'ZCARD', zkey)) === '256', 15000, 'the first batch written');
    await cluster.cli(bto, 'CLUSTER', 'SETSLOT', bslot, 'IMPORTING', await idOf(bfrom));
    await cluster.cli(bfrom, 'CLUSTER', 'SETSLOT', bslot, 'MIGRATING', await idOf(bto));
    for (;;) {
      const keys = (await cluster.cli(bfrom, 'CLUSTER', 'GETKEYSINSLOT', bslot, 100)).split('\n').filter(Boolean);
      if (keys.length === 0) break;
      await cluster.cli(bfrom, 'MIGRATE', '127.0.0.1', bto, '', 0, 5000, 'KEYS', ...keys);
    }
    for (const n of await cluster.primaries()) await cluster.cli(n, 'CLUSTER', 'SETSLOT', bslot, 'NODE', await idOf(bto));
    await cluster.waitOk();
    assert.equal(await cluster.owner(zkey), bto);
    run.stdin.end(Array.from({ length: 100 }, (_, i) => row(256 + i)).join(''));
    const moved = await run.done;
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stderr, /356 rows written with set: 356 changed the board/);
    assert.equal(await cluster.cli(bto, 'ZCARD', zkey), '356');
    const me = parseJsonl((await cli(['export', board, '--format', 'jsonl'], { redis: seed })).stdout);
    assert.deepEqual(me.map((r) => r.member), Array.from({ length: 356 }, (_, i) => `mv:${355 - i}`));
  });
