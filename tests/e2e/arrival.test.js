/* arrival.test.js - tiebreak = arrival through the real gateway: writes over
 * WebSocket to the shipped `arena` board (all-time, desc, tiebreak =
 * arrival), random incr/set/best with few distinct values so most points are
 * tied; a viewer of the top 20, rebuilt from snapshot and deltas, a fresh
 * snapshot and the REST read all show the board ordered by (points desc,
 * arrival asc) computed here, and every ack's rank is the member's place in
 * that order. A board with 1 tie bit answers the third arrival at a held
 * value out_of_range over WS and REST and changes nothing. On a Redis Cluster
 * the counters sit in the board's slot and ties follow arrival there too. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const skip = h.toolMissing(h.gatewayMissing());
const BOARD = 'arena';
const MEMBERS = 12;
const WRITES = 240;

// xorshift: a fixed sequence, so a failure can be replayed
let seed = 0x2545f491;
function rnd(n) {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed % n;
}

/* The reference board: points, and the arrival counter when reached. */
class Reference {
  constructor() { this.m = new Map(); this.clock = 0; }
  apply(w) {
    const cur = this.m.get(w.member);
    let p;
    if (w.op === 'incr') p = (cur ? cur.points : 0) + w.delta;
    else if (w.op === 'set') p = w.value;
    else p = !cur || w.value > cur.points ? w.value : cur.points;
    if (!cur || cur.points !== p) this.m.set(w.member, { points: p, arrival: ++this.clock });
    return p;
  }
  order() {
    return [...this.m.entries()]
      .sort((a, b) => b[1].points - a[1].points || a[1].arrival - b[1].arrival)
      .map(([member, v]) => ({ member, score: v.points }));
  }
}

const shape = (rows) => rows.map((r) => `${r.member}=${r.score}`).join(' ');

test('arena: viewers, snapshots, REST and acks follow (points desc, arrival asc)', { skip, timeout: 120000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await viewer.request({ op: 'subscribe', board: BOARD, view: { top: 20 } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  let rows = snap.rows;
  let broken = null;
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub !== snap.sub) return;
    if (m.op === 'snapshot') rows = m.rows;
    else if (m.op === 'delta') {
      const next = applyDelta(rows, m, 1, 20);
      if (!next) broken = `delta did not apply: ${JSON.stringify(m)}`;
      else rows = next;
    }
  });

  const writer = await h.connectWs(t, gw.wsUrl);
  const ref = new Reference();
  for (let i = 0; i < WRITES; i++) {
    const member = `p${rnd(MEMBERS)}`;
    const k = rnd(10);
    const w = k < 4 ? { op: 'incr', member, delta: rnd(3) - 1 }
      : k < 7 ? { op: 'set', member, value: rnd(5) }
        : { op: 'best', member, value: rnd(5) };
    // one write at a time: the order of the acks is the order of arrival
    const ack = await writer.request(Object.assign({ board: BOARD }, w), 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    const p = ref.apply(w);
    assert.equal(ack.score, p, JSON.stringify({ w, ack }));
    const place = ref.order().findIndex((r) => r.member === member) + 1;
    assert.equal(ack.rank, place, JSON.stringify({ i, w, ack, ref: shape(ref.order()) }));
  }
  const want = ref.order().slice(0, 20);
  // many ties: the test means something only if equal points are common
  assert.ok(new Set(want.map((r) => r.score)).size < want.length - 3, shape(want));

  await h.waitFor(() => broken || shape(rows) === shape(want), 20000, 'the viewer to catch up');
  assert.equal(broken, null, broken);
  assert.equal(shape(rows), shape(want));

  const fresh = await h.connectWs(t, gw.wsUrl, { token: null });
  const again = await fresh.request({ op: 'subscribe', board: BOARD, view: { top: 20 } });
  assert.equal(shape(again.rows), shape(want));

  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}?top=20`);
  assert.equal(rest.status, 200);
  assert.equal(shape(rest.body.rows), shape(want));
});

test('a value out of arrivals answers out_of_range over WS and REST and changes nothing', { skip, timeout: 60000 }, async (t) => {
  const config = h.configWith(t, { 'board duel': { order: 'desc', ops: 'incr, set, best', tiebreak: 'arrival', tiebreak_bits: 1 } });
  const redis = await h.startRedis(t);
  const gw = await h.startGateway(t, { redisPort: redis.port, config });
  const ws = await h.connectWs(t, gw.wsUrl);
  for (const member of ['a', 'b']) {
    const ack = await ws.request({ op: 'set', board: 'duel', member, value: 7 }, 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
  }
  const no = await ws.request({ op: 'set', board: 'duel', member: 'c', value: 7 }, 10000);
  assert.equal(no.op, 'error', JSON.stringify(no));
  assert.equal(no.code, 'out_of_range');
  assert.match(no.message, /arrivals/);
  const rest = await h.http(gw.base, 'POST', '/api/v1/boards/duel/scores', { member: 'c', op: 'incr', delta: 7 });
  assert.equal(rest.status, 422, JSON.stringify(rest.body));
  const board = await h.http(gw.base, 'GET', '/api/v1/boards/duel?top=10');
  assert.equal(shape(board.body.rows), 'a=7 b=7');
  // b leaves 7, a still holds it: still spent; a leaves too: 7 takes arrivals again
  assert.equal((await ws.request({ op: 'set', board: 'duel', member: 'b', value: 8 }, 10000)).op, 'ack');
  assert.equal((await ws.request({ op: 'set', board: 'duel', member: 'c', value: 7 }, 10000)).op, 'error');
  assert.equal((await ws.request({ op: 'incr', board: 'duel', member: 'a', delta: 2 }, 10000)).op, 'ack');
  assert.equal((await ws.request({ op: 'set', board: 'duel', member: 'c', value: 7 }, 10000)).op, 'ack');
  assert.equal((await ws.request({ op: 'set', board: 'duel', member: 'd', value: 9 }, 10000)).op, 'ack');
  const after = await h.http(gw.base, 'GET', '/api/v1/boards/duel?top=10');
  assert.equal(shape(after.body.rows), 'a=9 d=9 b=8 c=7');
});

test('on a Redis Cluster the counters live in the board\'s slot: ties still follow arrival', { skip, timeout: 120000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 0 });
  const gw = await h.startGateway(t, { redis: cluster.seeds });
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await viewer.request({ op: 'subscribe', board: BOARD, view: { top: 10 } }, 10000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  const ws = await h.connectWs(t, gw.wsUrl);
  const ref = new Reference();
  const writes = [
    { op: 'set', member: 'k', value: 3 }, { op: 'incr', member: 'j', delta: 3 },
    { op: 'best', member: 'i', value: 3 }, { op: 'set', member: 'h', value: 4 },
    { op: 'incr', member: 'k', delta: 1 }, { op: 'set', member: 'j', value: 3 },
  ];
  for (const w of writes) {
    const ack = await ws.request(Object.assign({ board: BOARD }, w), 10000);
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    ref.apply(w);
  }
  const want = shape(ref.order());
  assert.equal(want, 'h=4 k=4 j=3 i=3');
  const rest = await h.http(gw.base, 'GET', `/api/v1/boards/${BOARD}?top=10`);
  assert.equal(shape(rest.body.rows), want);
  // the counters' key is in the set's slot, on the set's node
  const owner = await cluster.owner('rc:{arena|}:z');
  assert.equal(await cluster.cli(owner, 'HGET', 'rc:{arena|}:arr', 'h:4'), '2');
  assert.equal(await cluster.cli(owner, 'HGET', 'rc:{arena|}:arr', 'a:3'), '3');
});

test('rankcast import writes rows in file order: equal points keep the file\'s order', { skip, timeout: 120000 }, async (t) => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { execFile } = require('node:child_process');
  const redis = await h.startRedis(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-arrival-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const N = 300;
  const lines = ['member,score'];
  for (let i = 0; i < N; i++) lines.push(`m:${(i * 37) % N},${(i * 13) % 4}`); // 4 values, 75 ties each
  const file = path.join(dir, 'ties.csv');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const res = await new Promise((resolve) => {
    execFile(h.gatewayBin(), ['import', BOARD, file, '--redis', `127.0.0.1:${redis.port}`],
      { cwd: h.repoRoot, timeout: 60000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stderr }));
  });
  assert.equal(res.code, 0, res.stderr);
  assert.doesNotMatch(res.stderr, /runtime error:|ERROR: (Address|Leak)Sanitizer/);
  const want = lines.slice(1).map((l, i) => ({ member: l.split(',')[0], score: Number(l.split(',')[1]), i }))
    .sort((a, b) => b.score - a.score || a.i - b.i).map((r) => r.member);
  const got = (await redis.cli('ZRANGE', 'rc:{arena|}:z', '0', '-1', 'REV')).split('\n');
  assert.deepEqual(got, want);
});
