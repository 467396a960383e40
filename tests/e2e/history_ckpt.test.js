/* history_ckpt.test.js - history checkpoints (docs/history.md,
 * "Checkpoints"): a gateway job copies a history = full board's set at a
 * seq C into rc:{B|P}:ck:C in short slices while writes go on, then corrects
 * the copy from the log; a read at a moment undoes from the nearest
 * checkpoint at or after it, so `history_undo_max` bounds the distance to
 * that checkpoint, not to the present.
 *
 * With history_undo_max 40 and a checkpoint every 20 changes, boards get
 * hundreds of changes, each followed by a read of the present (the state
 * after that change, the brute force to compare with). Then `get` at every
 * seq deep in the past equals that state; a moment is refused only when
 * its nearest checkpoint (or the present) is really more than the cap away,
 * with oldest_seq that base minus the cap (checkpoints are EVERY apart, so
 * here none is). The copies are slowed down
 * (RANKCAST_TEST_CKPT_SLICE, RANKCAST_TEST_CKPT_PAUSE_MS) so the writes land
 * while a copy is half done, which the test sees (the build state key) and
 * reads through. Also: after an admin reset (the old history's checkpoints
 * go), after the log is trimmed (history_max: checkpoints older than the
 * log go, moments older than the log are out_of_range with the log's first
 * seq), on a periodic board (checkpoints expire with the period's keys), an
 * asc board, a multi-field board, a team board (players -> squads), a
 * gateway killed mid-copy (another takes over after the lease), and on the
 * 3+3 cluster. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const CAP = 40;
const EVERY = 20;
const ENV = { RANKCAST_TEST_CKPT_SLICE: '25', RANKCAST_TEST_CKPT_PAUSE_MS: '40' };

const rowsOf = (rows) => rows.map((r) => ({ rank: r.rank, member: r.member, score: r.score }));

function rng(seed) {
  let x = seed >>> 0;
  return (n) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
}

function config(t, boards, limits = {}) {
  return h.configWith(t, Object.assign({
    server: { test_clock: 'on' },
    // (reads at every seq, three views each: past the default read budgets)
    limits: Object.assign({ history_undo_max: CAP, history_checkpoint_every: EVERY, conn_read_rate: 1000000,
      conn_read_burst: 10000000, ip_read_rate: 1000000, ip_read_burst: 10000000 }, limits),
  }, boards));
}

async function feed(t, gw, board) {
  const conn = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await conn.request({ op: 'subscribe', board, view: { feed: true } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  const at = new Map();
  conn.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.sub === snap.sub && m.op === 'event') at.set(m.seq, m.at);
  });
  return at;
}

/* The board's key prefix "rc:{B|P}:" (a team board's "rc:{S|P}{T}:"). */
async function prefix(redis, board, source) {
  const tag = source || board;
  const keys = (await redis.cli('KEYS', `rc:{${tag}|*:seq`)).split('\n').filter((k) => k);
  const want = source ? `{${board}}:seq` : '}:seq';
  const k = keys.find((x) => x.endsWith(want) && (source ? true : !x.includes('}{')));
  assert.ok(k, `the seq key of ${board}: ${keys}`);
  return k.slice(0, -3);
}

/* The checkpoints' seqs, ascending. */
async function checkpoints(redis, pre) {
  const out = await redis.cli('ZRANGE', `${pre}ck`, '0', '-1');
  return out.split('\n').filter((x) => x).map((m) => Number(m.split(':')[0]));
}

/* Until no build is under way and none is due (the present is less than
 * EVERY past the newest checkpoint): the checkpoints then stay as they are. */
async function settled(redis, pre, last) {
  await h.waitFor(async () => {
    if ((await redis.cli('EXISTS', `${pre}ckb`)) !== '0') return false;
    const cks = await checkpoints(redis, pre);
    return last - (cks.length ? cks[cks.length - 1] : 0) < EVERY;
  }, 30000, 'the checkpoint job to settle');
  return checkpoints(redis, pre);
}

/* Plays `n` random changes on board through conn (the admin key), reading
 * the present of each board in `watch` after each. Returns, per board, the
 * states by seq (only seqs a change of ours ended on). */
async function play(gw, conn, board, n, { members, seed, op, watch, top = 300, onWrite }) {
  const rnd = rng(seed);
  const states = new Map(watch.map((b) => [b, new Map()]));
  const last = new Map(watch.map((b) => [b, 0]));
  for (let i = 0; i < n; i++) {
    const req = op(i, rnd, members[rnd(members.length)]);
    const reply = await conn.request(req, 15000);
    if (reply.op === 'error') continue; // a member not on the board (remove)
    for (const b of watch) {
      const now = await h.http(gw.base, 'GET', `/api/v1/boards/${b}?top=${top}`);
      assert.equal(now.status, 200, now.text);
      if (now.body.seq === last.get(b)) continue;
      last.set(b, now.body.seq);
      states.get(b).set(now.body.seq, rowsOf(now.body.rows));
    }
    if (onWrite) await onWrite(i, last.get(board), states.get(board));
  }
  return { states, last };
}

/* get at seq s: the state, or out_of_range only when the base the read
 * undoes from (the nearest checkpoint at or after s, else the present) is
 * more than CAP changes away, with oldest_seq = base - CAP. Returns 1 when
 * served. */
async function checkSeq(reader, board, s, want, cks, last, top = 300, label = '') {
  const snap = await reader.request({ op: 'get', board, view: { top }, at: { seq: s } }, 15000);
  const base = cks.find((c) => c >= s) ?? last;
  if (snap.op === 'error') {
    assert.equal(snap.code, 'out_of_range', `${label} ${board} seq ${s}: ${JSON.stringify(snap)}`);
    assert.ok(base - s > CAP, `${label} ${board} seq ${s} refused with checkpoint ${base} (${cks}): ${JSON.stringify(snap)}`);
    assert.equal(snap.oldest_seq, base - CAP, `${label} ${board} seq ${s}`);
    return 0;
  }
  assert.equal(snap.at_seq, s, `${label} ${board}: ${JSON.stringify(snap).slice(0, 300)}`);
  assert.deepEqual(rowsOf(snap.rows), want, `${label} ${board} at seq ${s} (checkpoints ${cks})`);
  // an around view and a member list at the same moment (rebuilt from the
  // same checkpoint: their own paths in the script)
  if (want.length) {
    const mid = Math.floor(want.length / 2);
    const who = want[mid].member;
    const ar = await reader.request({ op: 'get', board, view: { around: who, radius: 3 }, at: { seq: s } }, 15000);
    assert.equal(ar.op, 'snapshot', `${label} ${board} around ${who} at seq ${s}: ${JSON.stringify(ar)}`);
    assert.deepEqual(rowsOf(ar.rows), want.slice(Math.max(0, mid - 3), mid + 4), `${label} ${board} around ${who} at seq ${s}`);
    const list = [...new Set([want[0].member, who, want[want.length - 1].member, 'nobody-here'])];
    const ml = await reader.request({ op: 'get', board, view: { members: list }, at: { seq: s } }, 15000);
    assert.equal(ml.op, 'snapshot', `${label} ${board} list at seq ${s}: ${JSON.stringify(ml)}`);
    assert.deepEqual(rowsOf(ml.rows), want.filter((x) => list.includes(x.member)), `${label} ${board} list at seq ${s}`);
  }
  return 1;
}

/* `history` of member over the whole span of the log (times from the feed,
 * `atBy`: seq -> at): every point equals the board at the point's seq (the
 * recorded state, else a `get` at that seq), so a history spanning many
 * times history_undo_max is served, segment by segment, each from its own
 * checkpoint. Returns the points. */
async function checkHistory(reader, board, member, atBy, states, last, label = '', span = {}) {
  const from = span.from ?? atBy.get(1) - 5; const to = span.to ?? atBy.get(last) + 5;
  const step = Math.max(1, Math.ceil((to - from) / 400));
  const hist = await reader.request({ op: 'history', board, member, from, to, step }, 60000);
  assert.equal(hist.op, 'history', `${label} ${board} history of ${member} over seqs 1..${last}: ${JSON.stringify(hist).slice(0, 300)}`);
  assert.equal(hist.points.length, Math.floor((to - from) / step) + 1);
  let prevSeq = -1;
  for (const p of hist.points) {
    let want = 0;
    for (let q = 1; q <= last; q++) if (atBy.get(q) <= p.at) want = q;
    assert.equal(p.seq, want, `${label} history point at ${p.at}`);
    assert.ok(p.seq >= prevSeq);
    prevSeq = p.seq;
    let rows = states.get(p.seq);
    if (!rows) {
      const snap = await reader.request({ op: 'get', board, view: { top: 300 }, at: { seq: p.seq } }, 15000);
      assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
      rows = rowsOf(snap.rows);
    }
    const row = rows.find((x) => x.member === member);
    assert.deepEqual({ score: p.score, rank: p.rank }, row ? { score: row.score, rank: row.rank } : { score: null, rank: null },
      `${label} ${board} history of ${member} at ${p.at} (seq ${p.seq})`);
  }
  return hist.points;
}

const pace = () => h.sleep(8);

/* rankcast_history_chain_reads_total: moments read by a chain (docs/history.md,
 * "A moment no base serves within the cap") */
async function chainReads(gw) {
  const res = await h.http(gw.base, 'GET', '/metrics');
  const m = /^rankcast_history_chain_reads_total (\d+)$/m.exec(res.text);
  assert.ok(m, 'rankcast_history_chain_reads_total missing');
  return Number(m[1]);
} // about the pace of a copy's slices: several checkpoints under writes

test('periodic board: get at every seq far past history_undo_max equals the state, while copies run under writes, and after a reset', { skip, timeout: 300000 }, async (t) => {
  const { redis, gw } = await h.startStack(t, {
    config: config(t, { 'board daily': { history: 'full' } }),
    env: ENV,
  });
  await gw.waitForLine(/RANKCAST_TEST_CKPT_PAUSE_MS/, 5000);
  const admin = await h.connectWs(t, gw.wsUrl);
  const reader = await h.connectWs(t, gw.wsUrl, { token: null });
  const atBy = await feed(t, gw, 'daily');
  const members = Array.from({ length: 200 }, (_, i) => `m${i}`);
  let pre = null;
  let midCopy = 0; let midReads = 0;
  const onWrite = async (i, seq, states0) => {
    await pace();
    if (!pre && seq > 0) pre = await prefix(redis, 'daily');
    if (!pre || i % 5 !== 0) return;
    if ((await redis.cli('EXISTS', `${pre}ckb`)) === '1') {
      midCopy++;
      // a read deep in the past while a copy is half done
      const cks = await checkpoints(redis, pre);
      const s = Math.max(1, seq - 3 * CAP);
      if (states0.has(s)) midReads += await checkSeq(reader, 'daily', s, states0.get(s), cks, seq, 300, 'mid-copy');
    }
  };
  // 200 members set (one change each), then random writes and removes
  const r = await play(gw, admin, 'daily', 650, {
    members, seed: 97, watch: ['daily'], onWrite,
    op: (i, rnd, m) => {
      if (i < 200) return { op: 'set', board: 'daily', member: members[i], value: rnd(1000) };
      const k = rnd(10);
      if (k < 5) return { op: 'incr', board: 'daily', member: m, delta: rnd(50) - 10 };
      if (k < 7) return { op: 'set', board: 'daily', member: m, value: rnd(1000) };
      if (k < 8) return { op: 'best', board: 'daily', member: m, value: rnd(1200) };
      return { op: 'remove', board: 'daily', member: m };
    },
  });
  const states = r.states.get('daily');
  const last = r.last.get('daily');
  assert.ok(last > 500, `changes: ${last}`);
  assert.ok(midCopy >= 3, `writes seen while a copy was under way: ${midCopy}`);

  const cks = await settled(redis, pre, last);
  assert.ok(cks.length >= 5, `checkpoints: ${cks}`);
  // the checkpoints expire with the period's keys
  const ttl = Number(await redis.cli('PTTL', `${pre}ck:${cks[0]}`));
  assert.ok(ttl > 0 && Number(await redis.cli('PTTL', `${pre}ck`)) > 0, `PTTL ${ttl}`);
  let served = 0; let deep = 0;
  for (const [s, want] of states) {
    const got = await checkSeq(reader, 'daily', s, want, cks, last);
    if (s < last - CAP) { deep++; served += got; }
  }
  // before the checkpoints, every one of these was refused (history_undo_max);
  // now each is at most EVERY before a checkpoint (they are EVERY apart)
  assert.equal(served, deep, `moments more than ${CAP} back served: ${served} of ${deep} (checkpoints ${cks})`);
  for (let i = 1; i < cks.length; i++) assert.equal(cks[i] - cks[i - 1], EVERY, `checkpoints ${cks}`);
  t.diagnostic(`served ${served} of ${deep} deep moments; ${cks.length} checkpoints; mid-copy writes ${midCopy}, reads ${midReads}`);

  // by time, deep in the past: the seq of the last change at or before it
  await h.waitFor(() => atBy.has(last), 10000, 'the feed');
  let byTime = 0;
  for (let s = 210; s < last - CAP; s += 37) {
    const ms = atBy.get(s);
    if (ms === undefined) continue;
    let want = 0;
    for (let q = 1; q <= last; q++) if (atBy.get(q) <= ms) want = q;
    const snap = await reader.request({ op: 'get', board: 'daily', view: { top: 300 }, at: { time: ms } }, 15000);
    const base = cks.find((c) => c >= want) ?? last;
    if (snap.op === 'error') { assert.ok(base - want > CAP, JSON.stringify(snap)); continue; }
    assert.equal(snap.at_seq, want, `at time ${ms}`);
    assert.deepEqual(rowsOf(snap.rows), states.get(want), `at time ${ms}`);
    byTime++;
  }
  assert.ok(byTime > 3, `deep reads by time served: ${byTime}`);

  // rank history over the whole period (about 16 x history_undo_max): served
  // in segments, each point exact; over WebSocket and REST
  for (const who of ['m3', 'm150']) {
    const pts = await checkHistory(reader, 'daily', who, atBy, states, last);
    assert.ok(pts.some((p) => p.rank !== null) && pts[0].seq < last - 10 * CAP, `${who}: ${pts.length} points`);
  }
  {
    const from = atBy.get(1) - 5; const to = atBy.get(last) + 5; const step = Math.max(1, Math.ceil((to - from) / 400));
    const ws = await reader.request({ op: 'history', board: 'daily', member: 'm7', from, to, step }, 60000);
    const rest = await h.http(gw.base, 'GET', `/api/v1/boards/daily/members/m7/history?from=${from}&to=${to}&step=${step}`, undefined, { token: null });
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(rest.body.points, ws.points);
  }
  // a replay over the whole period (far more than history_undo_max
  // changes): every moment it shows is exact, then it goes live
  {
    const rc = await h.connectWs(t, gw.wsUrl, { token: null });
    const msgs = [];
    rc.ws.on('message', (data) => msgs.push(JSON.parse(String(data))));
    rc.ws.send(JSON.stringify({ op: 'subscribe', id: 1, board: 'daily', view: { top: 10 }, replay: { from: { seq: 100 }, speed: 16 } }));
    await h.waitFor(() => msgs.some((m) => m.op === 'live' || m.op === 'error'), 60000, 'the replay to go live');
    const li = msgs.findIndex((m) => m.op === 'live');
    assert.ok(li > 0, JSON.stringify(msgs.slice(0, 3)).slice(0, 300));
    assert.equal(msgs[0].at_seq, 100);
    for (const m of msgs.slice(0, li)) {
      assert.equal(m.op, 'snapshot', JSON.stringify(m).slice(0, 200));
      if (states.has(m.at_seq)) assert.deepEqual(rowsOf(m.rows), states.get(m.at_seq).slice(0, 10), `replay at seq ${m.at_seq}`);
    }
    assert.ok(li > 3, `replay moments: ${li}`);
  }

  // a reset: a new history; the old one's checkpoints go, its moments are gone
  const reset = await admin.request({ op: 'reset', board: 'daily' }, 15000);
  assert.notEqual(reset.op, 'error', JSON.stringify(reset));
  const r2 = await play(gw, admin, 'daily', 200, {
    members, seed: 5, watch: ['daily'], onWrite: pace,
    op: (i, rnd, m) => (i < 150 ? { op: 'set', board: 'daily', member: members[i], value: rnd(1000) }
      : { op: 'incr', board: 'daily', member: m, delta: rnd(40) }),
  });
  const last2 = r2.last.get('daily');
  const cks2 = await settled(redis, pre, last2);
  assert.ok(cks2.every((c) => c > last), `only the new history's checkpoints: ${cks2} (reset after ${last})`);
  assert.ok(cks2.length >= 3, `new checkpoints: ${cks2}`);
  const old = await reader.request({ op: 'get', board: 'daily', view: { top: 10 }, at: { seq: last - 5 } }, 15000);
  assert.equal(old.code, 'out_of_range', JSON.stringify(old));
  let served2 = 0;
  for (const [s, want] of r2.states.get('daily')) served2 += await checkSeq(reader, 'daily', s, want, cks2, last2, 300, 'after the reset');
  assert.equal(served2, r2.states.get('daily').size, `served after the reset: ${served2}`);
});

test('a trimmed log (history_max): checkpoints older than the log go, moments before it are out_of_range with its first seq, the rest are served', { skip, timeout: 240000 }, async (t) => {
  const { redis, gw } = await h.startStack(t, {
    config: config(t, { 'board demo': { history: 'full', history_max: 150 } }),
    env: ENV,
  });
  const admin = await h.connectWs(t, gw.wsUrl);
  const reader = await h.connectWs(t, gw.wsUrl, { token: null });
  const members = Array.from({ length: 150 }, (_, i) => `u${i}`);
  const r = await play(gw, admin, 'demo', 450, {
    members, seed: 3, watch: ['demo'], onWrite: pace,
    op: (i, rnd, m) => (i < 150 ? { op: 'set', board: 'demo', member: members[i], value: rnd(500) }
      : { op: 'incr', board: 'demo', member: m, delta: rnd(30) - 5 }),
  });
  const last = r.last.get('demo');
  const pre = 'rc:{demo|}:';
  const cks = await settled(redis, pre, last);
  const first = JSON.parse(await redis.cli('LINDEX', `${pre}log`, '0')).seq;
  assert.equal(first, last - 149, 'the log keeps history_max changes');
  assert.ok(cks.length >= 2 && cks.every((c) => c >= first), `checkpoints ${cks}, log from ${first}`);
  // an all-time board's checkpoints do not expire (the build's lease is not theirs)
  for (const c of cks) assert.equal(await redis.cli('PTTL', `${pre}ck:${c}`), '-1', `PTTL of checkpoint ${c}`);
  const gone = await reader.request({ op: 'get', board: 'demo', view: { top: 10 }, at: { seq: first - 1 } }, 15000);
  assert.equal(gone.code, 'out_of_range', JSON.stringify(gone));
  assert.equal(gone.oldest_seq, first);
  let served = 0;
  for (const [s, want] of r.states.get('demo')) {
    if (s < first) continue;
    served += await checkSeq(reader, 'demo', s, want, cks, last, 300, 'trimmed');
  }
  assert.ok(served > 100, `served ${served}`);
});

test('asc, multi-field and team boards: get at every seq past history_undo_max equals the state', { skip, timeout: 300000 }, async (t) => {
  const { redis, gw } = await h.startStack(t, {
    config: config(t, {
      'board laps': { history: 'full' },
      'board clears': { history: 'full' },
    }),
    env: ENV,
  });
  const admin = await h.connectWs(t, gw.wsUrl);
  const reader = await h.connectWs(t, gw.wsUrl, { token: null });
  const members = Array.from({ length: 140 }, (_, i) => `p${i}`);
  const teams = ['red', 'blue', 'green', 'gold'];
  const runs = [
    ['laps', ['laps'], (i, rnd, m) => ({ op: 'best', board: 'laps', member: i < 140 ? members[i] : m, value: 1000 + rnd(100000) })],
    ['clears', ['clears'], (i, rnd, m) => ({ op: 'submit', board: 'clears', member: i < 140 ? members[i] : m,
      fields: { clears: rnd(300), revives: rnd(100), first_clear_ms: rnd(1000000) } })],
    ['players', ['players', 'squads'], (i, rnd, m) => {
      if (i < 140) return { op: 'set', board: 'players', member: members[i], value: rnd(800) };
      if (i < 280 || rnd(4) === 0) return { op: 'team', board: 'players', member: i < 280 ? members[i - 140] : m, team: teams[rnd(4)] };
      return { op: 'incr', board: 'players', member: m, delta: rnd(40) - 10 };
    }],
  ];
  for (const [board, watch, op] of runs) {
    const r = await play(gw, admin, board, 420, { members, seed: board.length * 11, watch, op, onWrite: pace });
    for (const b of watch) {
      const last = r.last.get(b);
      const pre = await prefix(redis, b, b === 'squads' ? 'players' : null);
      const cks = await settled(redis, pre, last);
      let served = 0; let deep = 0;
      for (const [s, want] of r.states.get(b)) {
        const got = await checkSeq(reader, b, s, want, cks, last, 300, b);
        if (s < last - CAP) { deep++; served += got; }
      }
      t.diagnostic(`${b}: ${last} changes, checkpoints ${cks.length}, served ${served} of ${deep} deep`);
      assert.equal(served, deep, `${b}: served ${served} of ${deep}`);
    }
  }
});

test('a sharded board by time: each shard undoes from its own checkpoints, so moments far past history_undo_max are served', { skip, timeout: 300000 }, async (t) => {
  const { redis, gw } = await h.startStack(t, { config: config(t, { 'board global': { history: 'full' } }), env: ENV });
  const ws = await h.connectWs(t, gw.wsUrl);
  const rnd = rng(23);
  const states = [];
  for (let i = 0; i < 560; i++) {
    const ack = await ws.request({ op: 'incr', board: 'global', member: `g${rnd(120)}`, delta: rnd(50) + 1 }, 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    const now = await h.http(gw.base, 'GET', '/api/v1/boards/global?top=50');
    states.push({ ms: Date.now(), seq: now.body.seq, rows: now.body.rows });
    await h.sleep(3);
  }
  const last = states[states.length - 1].seq;
  // every shard's job settled: each shard B#i is a board of its own here
  for (let i = 0; i < 8; i++) {
    const pre = `rc:{global#${i}|}:`;
    const seq = Number(await redis.cli('GET', `${pre}seq`));
    await settled(redis, pre, seq);
  }
  let deep = 0;
  for (const st of states.slice(0, states.length - 8 * CAP)) {
    const snap = await ws.request({ op: 'get', board: 'global', view: { top: 50 }, at: { time: st.ms } }, 10000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    assert.equal(snap.at_seq, st.seq, 'the sum of the shards\' seqs');
    assert.deepEqual(snap.rows, st.rows, `global at ${st.ms}`);
    deep++;
  }
  assert.ok(deep > 200 && last - states[0].seq > 8 * CAP, `deep moments ${deep}`);
  // rank history over the whole span (each shard's far more than the cap):
  // read in chunks, every point what a get at its time shows
  const who = states[states.length - 1].rows[0].member;
  const from = states[0].ms; const to = states[states.length - 1].ms;
  const step = Math.max(1, Math.ceil((to - from) / 150));
  const hist = await ws.request({ op: 'history', board: 'global', member: who, from, to, step }, 60000);
  assert.equal(hist.op, 'history', JSON.stringify(hist).slice(0, 300));
  assert.equal(hist.points.length, Math.floor((to - from) / step) + 1);
  let ranked = 0;
  for (const p of hist.points) {
    const snap = await ws.request({ op: 'get', board: 'global', view: { top: 50 }, at: { time: p.at } }, 10000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    assert.equal(p.seq, snap.at_seq, `history seq at ${p.at}`);
    const row = snap.rows.find((x) => x.member === who);
    if (row) { assert.deepEqual({ score: p.score, rank: p.rank }, { score: row.score, rank: row.rank }, `${who} at ${p.at}`); ranked++; }
    else assert.ok(p.rank === null || p.rank > 50, `${who} at ${p.at}: ${JSON.stringify(p)}`);
  }
  assert.ok(ranked > 50, `points in the top 50: ${ranked}`);

  // each shard's newest interval while its copy waits (another builder
  // holds every shard's lease): its middle is more than the cap from both
  // bases, and is read by a chain per shard, each moment exact
  for (let i = 0; i < 8; i++) {
    const pre = `rc:{global#${i}|}:`;
    await redis.cli('HSET', `${pre}ckb`, 'owner', 'someone-else', 'c', '0', 'epoch', 'x', 'cursor', '0');
    await redis.cli('PEXPIRE', `${pre}ckb`, '120000');
  }
  const chained0 = await chainReads(gw);
  const later = [];
  for (let i = 0; i < 100; i++) {
    for (let k = 0; k < 9; k++) {
      const ack = await ws.request({ op: 'incr', board: 'global', member: `g${rnd(120)}`, delta: rnd(50) + 1 }, 10000);
      assert.equal(ack.op, 'ack', JSON.stringify(ack));
    }
    await h.sleep(2);
    const now = await h.http(gw.base, 'GET', '/api/v1/boards/global?top=50');
    later.push({ ms: Date.now(), seq: now.body.seq, rows: now.body.rows });
    await h.sleep(2);
  }
  for (const st of later) {
    const snap = await ws.request({ op: 'get', board: 'global', view: { top: 50 }, at: { time: st.ms } }, 10000);
    assert.equal(snap.op, 'snapshot', `the newest interval at ${st.ms}: ${JSON.stringify(snap)}`);
    assert.equal(snap.at_seq, st.seq, 'the sum of the shards\' seqs');
    assert.deepEqual(snap.rows, st.rows, `global at ${st.ms}`);
    const who2 = st.rows[20].member;
    const ar = await ws.request({ op: 'get', board: 'global', view: { around: who2, radius: 3 }, at: { time: st.ms } }, 10000);
    assert.equal(ar.op, 'snapshot', JSON.stringify(ar));
    assert.deepEqual(ar.rows.map((r) => r.member), st.rows.slice(17, 24).map((r) => r.member), `around ${who2} at ${st.ms}`);
    const list = [st.rows[0].member, who2, 'nobody-here'];
    const ml = await ws.request({ op: 'get', board: 'global', view: { members: list }, at: { time: st.ms } }, 10000);
    assert.equal(ml.op, 'snapshot', JSON.stringify(ml));
    assert.deepEqual(ml.rows.map((r) => [r.member, r.rank, r.score]), st.rows.filter((r) => list.includes(r.member)).map((r) => [r.member, r.rank, r.score]));
  }
  {
    const who3 = later[later.length - 1].rows[0].member;
    const f = later[0].ms; const to3 = later[later.length - 1].ms;
    const hist3 = await ws.request({ op: 'history', board: 'global', member: who3, from: f, to: to3, step: Math.max(1, Math.ceil((to3 - f) / 40)) }, 60000);
    assert.equal(hist3.op, 'history', JSON.stringify(hist3).slice(0, 300));
    for (const p of hist3.points) {
      const snap = await ws.request({ op: 'get', board: 'global', view: { top: 50 }, at: { time: p.at } }, 10000);
      assert.equal(p.seq, snap.at_seq, `history seq at ${p.at}`);
      const row = snap.rows.find((x) => x.member === who3);
      if (row) assert.deepEqual({ score: p.score, rank: p.rank }, { score: row.score, rank: row.rank }, `${who3} at ${p.at}`);
    }
  }
  assert.ok(await chainReads(gw) > chained0, 'moments of the newest intervals read by a chain');
  for (let i = 0; i < 8; i++) await redis.cli('DEL', `rc:{global#${i}|}:ckb`);
});

test('a gateway killed mid-copy: its build expires with its lease, another gateway builds on, and every moment is exact', { skip, timeout: 300000 }, async (t) => {
  const redis = await h.startRedis(t);
  const cfg = config(t, { 'board demo': { history: 'full' } });
  const gw1 = await h.startGateway(t, { redisPort: redis.port, config: cfg, env: ENV });
  const admin1 = await h.connectWs(t, gw1.wsUrl);
  const members = Array.from({ length: 150 }, (_, i) => `r${i}`);
  const pre = 'rc:{demo|}:';
  const op = (i, rnd, m) => (i < 150 ? { op: 'set', board: 'demo', member: members[i], value: rnd(600) }
    : { op: 'incr', board: 'demo', member: m, delta: rnd(30) - 5 });
  const r1 = await play(gw1, admin1, 'demo', 200, { members, seed: 41, watch: ['demo'], onWrite: pace, op });
  // one write at a time until a copy is under way, then stop at once
  let owner = '';
  for (let i = 0; i < 300 && !owner; i++) {
    const r = await play(gw1, admin1, 'demo', 1, { members, seed: 1000 + i, watch: ['demo'], op: (j, rnd, m) => op(200 + i, rnd, m) });
    for (const [k, v] of r.states.get('demo')) r1.states.get('demo').set(k, v);
    owner = (await redis.cli('HGET', `${pre}ckb`, 'owner')) || '';
  }
  assert.notEqual(owner, '', 'a copy under way');
  // killed (a clean stop lets the copy run on while the gateway drains)
  gw1.kill('SIGKILL');
  await gw1.exited;
  const left = await redis.cli('HGET', `${pre}ckb`, 'owner');
  const gw2 = await h.startGateway(t, { redisPort: redis.port, config: cfg, env: ENV });
  const admin2 = await h.connectWs(t, gw2.wsUrl);
  const r2 = await play(gw2, admin2, 'demo', 150, { members, seed: 43, watch: ['demo'], onWrite: pace, op: (i, rnd, m) => op(200 + i, rnd, m) });
  const last = r2.last.get('demo');
  t.diagnostic(`the stopped gateway's build ${left === owner ? 'was left to its lease' : 'had ended'}`);
  const cks = await h.waitFor(async () => {
    await h.sleep(300);
    if ((await redis.cli('EXISTS', `${pre}ckb`)) !== '0') return false;
    const c = await checkpoints(redis, pre);
    return last - c[c.length - 1] < EVERY ? c : false;
  }, 90000, 'the second gateway to take over after the lease');
  for (let i = 1; i < cks.length; i++) assert.equal(cks[i] - cks[i - 1], EVERY, `checkpoints ${cks}`);
  const reader = await h.connectWs(t, gw2.wsUrl, { token: null });
  const states = new Map([...r1.states.get('demo'), ...r2.states.get('demo')]);
  let served = 0;
  for (const [s, want] of states) served += await checkSeq(reader, 'demo', s, want, cks, last, 300, 'after the takeover');
  assert.equal(served, states.size);
});

test('on the 3+3 cluster: the checkpoints live in the board\'s slot, and get at every seq past history_undo_max equals the state', { skip, timeout: 300000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds, config: config(t, { 'board demo': { history: 'full' } }), env: ENV });
  const admin = await h.connectWs(t, gw.wsUrl);
  const reader = await h.connectWs(t, gw.wsUrl, { token: null });
  const atBy = await feed(t, gw, 'demo');
  const members = Array.from({ length: 150 }, (_, i) => `c${i}`);
  const r = await play(gw, admin, 'demo', 330, {
    members, seed: 17, watch: ['demo'], onWrite: pace,
    op: (i, rnd, m) => (i < 150 ? { op: 'set', board: 'demo', member: members[i], value: rnd(700) }
      : { op: 'incr', board: 'demo', member: m, delta: rnd(30) - 5 }),
  });
  const last = r.last.get('demo');
  const pre = 'rc:{demo|}:';
  const port = await cluster.owner(`${pre}seq`);
  const node = { cli: (...a) => cluster.cli(port, ...a) };
  const cks = await settled(node, pre, last);
  assert.ok(cks.length >= 5, `checkpoints ${cks}`);
  let served = 0; let deep = 0;
  for (const [s, want] of r.states.get('demo')) {
    const got = await checkSeq(reader, 'demo', s, want, cks, last, 300, 'cluster');
    if (s < last - CAP) { deep++; served += got; }
  }
  assert.equal(served, deep, `served ${served} of ${deep} on the cluster`);
  // rank history over the whole span, in segments, on the cluster
  await h.waitFor(() => atBy.has(last), 10000, 'the feed');
  await checkHistory(reader, 'demo', 'c9', atBy, r.states.get('demo'), last, 'cluster');
});

/* EVALSHA calls Redis has answered so far (INFO commandstats). */
async function evalshaCalls(redis) {
  const m = /cmdstat_evalsha:calls=(\d+)/.exec(await redis.cli('INFO', 'commandstats'));
  return m ? Number(m[1]) : 0;
}

test('the checkpoint job calls Redis only for a board that changed, one gateway of two takes each checkpoint, and a template\'s boards get them', { skip, timeout: 120000 }, async (t) => {
  const redis = await h.startRedis(t);
  const cfg = config(t, { 'board demo': { history: 'full' }, 'board match:*': { history: 'full' } });
  const gw = await h.startGateway(t, { redisPort: redis.port, config: cfg });
  const gw2 = await h.startGateway(t, { redisPort: redis.port, config: cfg });
  const conns = [await h.connectWs(t, gw.wsUrl), await h.connectWs(t, gw2.wsUrl)];
  const pre = 'rc:{demo|}:';
  let n = 0;
  const write = async (k) => {
    for (let i = 0; i < k; i++, n++) {
      const a = await conns[n % 2].request({ op: 'set', board: 'demo', member: `m${n % 30}`, value: n }, 15000);
      assert.notEqual(a.op, 'error', JSON.stringify(a));
    }
  };
  await write(2 * EVERY + 5);
  await h.waitFor(async () => (await checkpoints(redis, pre)).length >= 2, 15000, 'two checkpoints');
  // quiet: no write, no reader; the job used to call every 100 ms per board
  // in each gateway (about 60 calls in these 3 s)
  await h.sleep(1500);
  const c0 = await evalshaCalls(redis);
  await h.sleep(3000);
  const idle = (await evalshaCalls(redis)) - c0;
  assert.ok(idle <= 4, `EVALSHA calls in 3 s of a quiet board: ${idle}`);
  // a change is heard, and the next checkpoint follows without polling
  await write(EVERY);
  await h.waitFor(async () => (await checkpoints(redis, pre)).length >= 3, 15000, 'the third checkpoint');
  // each seq's checkpoint taken once, by one gateway: EVERY apart, one key each
  const cks = await settled(redis, pre, n);
  assert.deepEqual(cks, cks.map((_, i) => (i + 1) * EVERY), `checkpoints ${cks}`);
  for (const c of cks) assert.equal(await redis.cli('EXISTS', `${pre}ck:${c}`), '1');

  // a template's board (match:*) gets checkpoints once a change to it is
  // heard: every moment far past the cap is served, exact
  const ms = Array.from({ length: 20 }, (_, i) => `p${i}`);
  const r = await play(gw, conns[0], 'match:7', 4 * EVERY + 10, {
    members: ms, seed: 3, watch: ['match:7'],
    op: (i, rnd, m) => ({ op: 'set', board: 'match:7', member: i < 20 ? ms[i] : m, value: rnd(500) }),
  });
  const last = r.last.get('match:7');
  const mcks = await settled(redis, 'rc:{match:7|}:', last);
  assert.ok(mcks.length >= 3, `match:7's checkpoints: ${mcks}`);
  const reader = await h.connectWs(t, gw2.wsUrl, { token: null });
  let deep = 0;
  for (const [sq, want] of r.states.get('match:7')) {
    if (sq >= last - CAP) continue;
    assert.equal(await checkSeq(reader, 'match:7', sq, want, mcks, last, 300, 'template'), 1);
    deep++;
  }
  assert.ok(deep > 2 * EVERY, `deep moments of match:7: ${deep}`);
});

test('--check-config checks history_checkpoint_every', { skip }, () => {
  const { spawnSync } = require('node:child_process');
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const base = fs.readFileSync(path.join(__dirname, '..', '..', 'conf', 'rankcast.conf'), 'utf8');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-ckpt-'));
  const file = path.join(dir, 'c.conf');
  try {
    for (const [limits, ok] of [[{ history_checkpoint_every: 'auto' }, true], [{ history_checkpoint_every: 'off' }, true],
      [{ history_checkpoint_every: 5000 }, true], [{ history_checkpoint_every: 9 }, false],
      [{ history_checkpoint_every: 'often' }, false], [{ history_undo_max: 100, history_checkpoint_every: 101 }, false]]) {
      fs.writeFileSync(file, h.editConfig(base, { limits }));
      const res = spawnSync(h.gatewayBin(), ['--check-config', file], { encoding: 'utf8' });
      assert.equal(res.status === 0, ok, `${JSON.stringify(limits)}: ${res.stdout}${res.stderr}`);
      if (!ok) assert.match(res.stdout + res.stderr, /history_checkpoint_every/);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/* A read that must be served (the fix of issue 27's gap): as checkSeq with
 * the moment its own base, so a refusal fails with the reply. */
const mustServe = (reader, board, s, want, last, label) => checkSeq(reader, board, s, want, [s], last, 300, label);

test('a moment farther than history_undo_max from every checkpoint (a gap, or the newest interval while its copy waits) is served exactly: get, REST, by time, history and a replay', { skip, timeout: 180000 }, async (t) => {
  // (the old rule refused such a moment out_of_range with oldest_seq the
  // later base minus the cap, while older moments were served: an untrue
  // oldest_seq. Now it is redone from the checkpoint before it (or undone
  // from the one after it) in several calls of at most the cap each. The
  // gap is made by deleting checkpoints' keys, which the reads then skip as
  // gone; the newest interval's by holding the build lease, as a gateway
  // copying slowly would)
  const { redis, gw } = await h.startStack(t, { config: config(t, { 'board daily': { history: 'full' } }), env: ENV });
  const admin = await h.connectWs(t, gw.wsUrl);
  const reader = await h.connectWs(t, gw.wsUrl, { token: null });
  const atBy = await feed(t, gw, 'daily');
  const members = Array.from({ length: 50 }, (_, i) => `m${i}`);
  const op = (i, rnd, m) => (i < 50 ? { op: 'set', board: 'daily', member: members[i], value: rnd(1000) }
    : rnd(9) === 0 ? { op: 'remove', board: 'daily', member: m } : { op: 'incr', board: 'daily', member: m, delta: rnd(50) + 1 });
  const r = await play(gw, admin, 'daily', 300, { members, seed: 5, watch: ['daily'], onWrite: () => pace(), op });
  const states = r.states.get('daily');
  const last = r.last.get('daily');
  const pre = await prefix(redis, 'daily');
  let cks = await settled(redis, pre, last);
  // keep the first checkpoint past 60 and the first one at least 3 x CAP after it
  const c0 = cks.find((c) => c >= 60);
  const c4 = cks.find((c) => c >= c0 + 3 * CAP);
  assert.ok(c0 && c4, `checkpoints: ${cks}`);
  for (const c of cks) if (c > c0 && c < c4) await redis.cli('DEL', `${pre}ck:${c}`);
  cks = cks.filter((c) => c <= c0 || c >= c4);
  let gap = 0;
  for (const [s, want] of states) {
    if (s <= c0 || s >= c4) continue;
    gap += await mustServe(reader, 'daily', s, want, last, 'in the gap');
  }
  assert.ok(gap > 2 * CAP, `moments in the gap ${c0}..${c4} served: ${gap}`);
  // REST and by time, in the middle of the gap (more than the cap from both)
  const mid = c0 + Math.floor((c4 - c0) / 2);
  assert.ok(mid - c0 > CAP && c4 - mid > CAP);
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/daily?top=300&at_seq=${mid}`, undefined, { token: null });
  assert.equal(rest.status, 200, rest.text);
  assert.deepEqual(rowsOf(rest.body.rows), states.get(mid));
  await h.waitFor(() => atBy.has(last), 10000, 'the feed');
  {
    let want = 0;
    for (let q = 1; q <= last; q++) if (atBy.get(q) <= atBy.get(mid)) want = q;
    const snap = await reader.request({ op: 'get', board: 'daily', view: { top: 300 }, at: { time: atBy.get(mid) } }, 15000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    assert.equal(snap.at_seq, want);
    assert.deepEqual(rowsOf(snap.rows), states.get(want));
  }
  // a history across the gap: every point exact
  const pts = await checkHistory(reader, 'daily', 'm3', atBy, states, last, 'across the gap', { from: atBy.get(c0) - 1, to: atBy.get(c4) + 1 });
  assert.ok(pts.some((p) => p.seq > c0 + CAP && p.seq < c4 - CAP), `points in the gap's middle: ${pts.length}`);
  // a replay starting in the middle of the gap: exact, then live
  {
    const rc = await h.connectWs(t, gw.wsUrl, { token: null });
    const msgs = [];
    rc.ws.on('message', (data) => msgs.push(JSON.parse(String(data))));
    rc.ws.send(JSON.stringify({ op: 'subscribe', id: 1, board: 'daily', view: { top: 10 }, replay: { from: { seq: mid }, speed: 64 } }));
    await h.waitFor(() => msgs.some((m) => m.op === 'live' || m.op === 'error'), 60000, 'the replay to go live');
    const li = msgs.findIndex((m) => m.op === 'live');
    assert.ok(li > 0, JSON.stringify(msgs.slice(0, 3)).slice(0, 300));
    assert.equal(msgs[0].at_seq, mid);
    for (const m of msgs.slice(0, li)) {
      assert.equal(m.op, 'snapshot', JSON.stringify(m).slice(0, 200));
      if (states.has(m.at_seq)) assert.deepEqual(rowsOf(m.rows), states.get(m.at_seq).slice(0, 10), `replay at seq ${m.at_seq}`);
    }
  }

  // the newest interval while its copy waits (another builder holds the
  // lease): the moments in its middle are served too
  const newest = cks[cks.length - 1];
  await redis.cli('HSET', `${pre}ckb`, 'owner', 'someone-else', 'c', String(newest + EVERY), 'epoch', 'x', 'cursor', '0');
  await redis.cli('PEXPIRE', `${pre}ckb`, '120000');
  const r2 = await play(gw, admin, 'daily', 3 * CAP + 20, { members, seed: 11, watch: ['daily'], onWrite: () => pace(), op: (i, rnd, m) => op(i + 50, rnd, m) });
  const last2 = r2.last.get('daily');
  const held = await checkpoints(redis, pre);
  assert.equal(held[held.length - 1], newest, `no checkpoint while the lease is held: ${held}`);
  let newer = 0;
  for (const [s, want] of r2.states.get('daily')) {
    if (s - newest > CAP && last2 - s > CAP) newer += await mustServe(reader, 'daily', s, want, last2, 'the newest interval');
  }
  assert.ok(newer > 10, `moments in the newest interval's middle served: ${newer} (checkpoint ${newest}, present ${last2})`);
  assert.ok(await chainReads(gw) > 2 * CAP, 'the moments past the cap from both bases were read by chains');
  await redis.cli('DEL', `${pre}ckb`);
});

