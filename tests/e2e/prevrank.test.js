/* prevrank.test.js - prev_rank on delta rows (docs/protocol.md, "Where a
 * member came from"), end to end: a real redis-server, the real gateway,
 * real WebSocket clients.
 *
 * The truth is rebuilt from the writes' acks alone: every write is a `set`
 * to a value no other write uses (so no two members ever tie), each ack
 * carries the seq it made, and replaying the acked writes in seq order gives
 * every member's rank at every seq (checked against each ack's own rank).
 * A delta row's prev_rank must then be, exactly:
 * - its rank at the seq the viewer last held, when the viewer held it;
 * - else its rank just before its first write in the delta, when it wrote;
 * - else its rank at the seq the viewer last held (it was shifted in);
 * - null when it was not on the board then. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const rnd = (n) => Math.floor(Math.random() * n);

/* Every write of a board, from its acks; values never repeat. */
class Truth {
  constructor() {
    this.acks = []; // {seq, member, score, rank}
    this.used = new Set();
  }

  freshValue(max = 16000000) { // within match:*'s score range
    for (;;) {
      const v = 1 + rnd(max);
      if (!this.used.has(v)) {
        this.used.add(v);
        return v;
      }
    }
  }

  record(ack) {
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    this.acks.push({ seq: ack.seq, member: ack.member, score: ack.score, rank: ack.rank });
  }

  /* Answers queries [{seq, member, set(rank)}] (rank at that seq, 0 when
   * absent) by one replay in seq order; checks every ack's rank on the way. */
  answer(queries) {
    const acks = this.acks.slice().sort((a, b) => a.seq - b.seq);
    acks.forEach((a, i) => assert.equal(a.seq, i + 1, 'acked seqs run 1, 2, 3, ... (one change per write)'));
    const qs = queries.slice().sort((a, b) => a.seq - b.seq);
    const score = new Map();
    const rankOf = (m) => {
      if (!score.has(m)) return 0;
      const s = score.get(m);
      let r = 1;
      for (const v of score.values()) if (v > s) r++;
      return r;
    };
    let qi = 0;
    for (let seq = 0; seq <= acks.length; seq++) {
      if (seq > 0) {
        const a = acks[seq - 1];
        score.set(a.member, a.score);
        assert.equal(rankOf(a.member), a.rank, `replayed rank of ${a.member} at seq ${seq}`);
      }
      while (qi < qs.length && qs[qi].seq === seq) qs[qi].set(rankOf(qs[qi++].member));
    }
    assert.equal(qi, qs.length, 'every query is at a seq that was acked');
  }

  firstWriteIn(member, s0, s1) {
    let first = null;
    for (const a of this.acks)
      if (a.member === member && a.seq > s0 && a.seq <= s1 && (first === null || a.seq < first)) first = a.seq;
    return first;
  }
}

/* One subscription; every delta is kept with what the viewer held before. */
class Viewer {
  constructor(conn, board, view) {
    Object.assign(this, { conn, board, view, rows: null, seq: null, deltas: [], snapshots: 0, broken: null });
    this.first = view.top ? 1 : view.offset + 1;
    this.length = view.top || view.limit;
  }

  async start() {
    const snap = await this.conn.request({ op: 'subscribe', board: this.board, view: this.view }, 10000);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    this.sub = snap.sub;
    this.rows = snap.rows;
    this.seq = snap.seq;
    this.conn.ws.on('message', (data) => this.onMessage(JSON.parse(data.toString())));
  }

  onMessage(m) {
    if (m.sub !== this.sub) return;
    if (m.op === 'snapshot') {
      this.snapshots++;
      this.rows = m.rows;
      this.seq = m.seq;
    } else if (m.op === 'delta') {
      this.deltas.push({ s0: this.seq, s1: m.seq, held: new Set(this.rows.map((r) => r.member)), msg: m });
      const next = applyDelta(this.rows, m, this.first, this.length);
      if (!next) this.broken = `delta did not apply: ${JSON.stringify(m)}`;
      else this.rows = next;
      this.seq = m.seq;
    }
  }

  /* Every delta row against the truth. Returns counts for the report. */
  check(truth) {
    assert.equal(this.broken, null);
    const queries = [];
    const counts = { rows: 0, fromOutside: 0, isNull: 0 };
    for (const d of this.deltas) {
      for (const row of d.msg.rows) {
        assert.ok('prev_rank' in row, `delta row without prev_rank: ${JSON.stringify(d.msg)}`);
        counts.rows++;
        let at = d.s0;
        if (!d.held.has(row.member)) {
          counts.fromOutside++;
          const w = truth.firstWriteIn(row.member, d.s0, d.s1);
          if (w !== null) at = w - 1;
        }
        if (row.prev_rank === null) counts.isNull++;
        const want = { seq: at, member: row.member };
        want.set = (r) => {
          const expected = r === 0 ? null : r;
          if (row.prev_rank !== expected)
            assert.fail(`${JSON.stringify(this.view)}: ${row.member} prev_rank ${row.prev_rank}, want ${expected}` +
              ` (its rank at seq ${at}; delta ${d.s0}..${d.s1}, held it: ${d.held.has(row.member)})\n` +
              `  ${JSON.stringify(d.msg)}`);
        };
        queries.push(want);
      }
    }
    truth.answer(queries);
    return counts;
  }
}

async function setScore(c, board, truth, member, value) {
  const ack = await c.request({ op: 'set', board, member, value, req: `r${truth.acks.length}-${rnd(1e9)}` }, 10000);
  truth.record(ack);
  return ack;
}

/* Sends writes [{member, value}] on c without waiting between them (they
 * usually land within one tick), then records their acks. */
async function burst(c, board, truth, writes) {
  const pending = writes.map((w) => c.request({ op: 'set', board, member: w.member, value: w.value,
    req: `b${rnd(1e12)}` }, 10000));
  const acks = await Promise.all(pending);
  acks.forEach((a) => truth.record(a));
  return acks;
}

/* A new member at the very top: every window view's rows change (so each
 * gets a delta and reaches its seq). */
async function finalWrite(c, board, truth) {
  return setScore(c, board, truth, 'final', 16000001);
}

/* Waits until viewer v holds seq (deltas and snapshots up to it arrived). */
const reach = (v, seq) => h.waitFor(() => v.seq >= seq, 15000, `viewer ${JSON.stringify(v.view)} to reach seq ${seq}`);

const rowOf = (v, member) => {
  for (let i = v.deltas.length - 1; i >= 0; i--) {
    const r = v.deltas[i].msg.rows.find((x) => x.member === member);
    if (r) return r;
  }
  return null;
};

test('a member jumping from 57 into a top 10 arrives with prev_rank 57; new ones with null', { timeout: 60000 },
  async (t) => {
    const { gw } = await h.startStack(t);
    const board = 'match:prev1';
    const truth = new Truth();
    const c = await h.connectWs(t, gw.wsUrl);
    // 60 members, m0 lowest (rank 60) .. m59 highest (rank 1)
    for (let i = 0; i < 60; i++) await setScore(c, board, truth, `m${i}`, 1000 + i * 10);
    const v = new Viewer(await h.connectWs(t, gw.wsUrl), board, { top: 10 });
    await v.start();
    const page = new Viewer(await h.connectWs(t, gw.wsUrl), board, { offset: 10, limit: 10 });
    await page.start();

    // m3 stands at 57 (m0..m2 below it)
    let ack = await setScore(c, board, truth, 'm3', 100000);
    assert.equal(ack.rank, 1);
    await reach(v, ack.seq);
    assert.deepEqual(rowOf(v, 'm3') && [rowOf(v, 'm3').rank, rowOf(v, 'm3').prev_rank], [1, 57]);

    // a member new on the board
    ack = await setScore(c, board, truth, 'newcomer', 99999);
    assert.equal(ack.rank, 2);
    await reach(v, ack.seq);
    assert.deepEqual([rowOf(v, 'newcomer').rank, rowOf(v, 'newcomer').prev_rank], [2, null]);

    // inside the window: m56 at 6 (m3, newcomer, m59..m57 above) moves up to 3
    ack = await setScore(c, board, truth, 'm56', 99998);
    assert.equal(ack.rank, 3);
    await reach(v, ack.seq);
    assert.deepEqual([rowOf(v, 'm56').rank, rowOf(v, 'm56').prev_rank], [3, 6]);

    // two moves of one member in one delta: the rank before its first move.
    // (Both writes usually land in one tick; tried until they do.)
    let together = false;
    for (let attempt = 0; attempt < 8 && !together; attempt++) {
      const m = `m${10 + attempt}`; // at 50 - attempt: a first move still outside the top 10, then to 1
      const before = v.deltas.length;
      truth.used.add(1201 + attempt);
      const acks = await burst(c, board, truth, [{ member: m, value: 1201 + attempt },
        { member: m, value: truth.freshValue(1e6) + 200000 }]);
      await reach(v, acks[1].seq);
      const mine = v.deltas.slice(before).filter((d) => d.msg.rows.some((r) => r.member === m));
      assert.equal(mine.length, 1, 'it entered the top 10 once');
      if (mine[0].s0 < acks[0].seq) {
        together = true;
        // ranks before the first write, from the truth
        truth.answer([{ seq: acks[0].seq - 1, member: m,
          set: (r) => assert.equal(mine[0].msg.rows.find((x) => x.member === m).prev_rank, r) }]);
      }
    }
    assert.ok(together, 'two writes of one member landed in one delta at least once in 8 tries');
    ack = await finalWrite(c, board, truth);
    await reach(v, ack.seq);
    await reach(page, ack.seq);

    for (const x of [v, page]) {
      const counts = x.check(truth);
      t.diagnostic(`${JSON.stringify(x.view)}: ${counts.rows} rows (${counts.fromOutside} from outside the window, ` +
        `${counts.isNull} null), ${x.deltas.length} deltas, ${x.snapshots} snapshots after the first`);
      assert.equal(x.snapshots, 0, 'no fallback snapshot: the ring held every move');
    }
  });

test('many concurrent writers: every delta row\'s prev_rank is the truth', { timeout: 120000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const board = 'match:prev2';
  const truth = new Truth();
  const MEMBERS = 80;
  const setup = await h.connectWs(t, gw.wsUrl);
  for (let i = 0; i < MEMBERS; i++) await setScore(setup, board, truth, `u${i}`, truth.freshValue());
  const views = [{ top: 10 }, { top: 3 }, { offset: 10, limit: 10 }, { offset: 40, limit: 15 }];
  const viewers = [];
  for (const view of views) {
    const v = new Viewer(await h.connectWs(t, gw.wsUrl), board, view);
    await v.start();
    viewers.push(v);
  }
  const writer = async (n) => {
    const c = await h.connectWs(t, gw.wsUrl);
    for (let i = 0; i < 300; i += 10) {
      const writes = [];
      for (let k = 0; k < 10; k++) {
        // mostly members already there, some new ones (prev_rank null)
        const member = rnd(12) === 0 ? `new${n}-${i + k}` : `u${rnd(MEMBERS)}`;
        writes.push({ member, value: truth.freshValue() });
      }
      await burst(c, board, truth, writes);
    }
    await c.close();
  };
  await Promise.all([writer(0), writer(1), writer(2), writer(3)]);
  const last = (await finalWrite(setup, board, truth)).seq;
  for (const v of viewers) await reach(v, last);
  for (const v of viewers) {
    const counts = v.check(truth);
    t.diagnostic(`${JSON.stringify(v.view)}: ${counts.rows} rows (${counts.fromOutside} from outside the window, ` +
      `${counts.isNull} null), ${v.deltas.length} deltas, ${v.snapshots} fallback snapshots`);
    assert.ok(counts.fromOutside > 0, 'some rows came from outside the window');
  }
});

test('a page past the mirror (read from Redis) carries prev_rank too', { timeout: 120000 }, async (t) => {
  const { gw } = await h.startStack(t);
  const board = 'match:prev3';
  const truth = new Truth();
  const c = await h.connectWs(t, gw.wsUrl);
  // 1010 members; the page of ranks 1001..1010 is past the mirror's 1000 rows
  for (let i = 0; i < 1010; i += 50) {
    const writes = [];
    for (let k = i; k < i + 50 && k < 1010; k++) writes.push({ member: `p${k}`, value: 100000 + k * 100 });
    writes.forEach((w) => truth.used.add(w.value));
    await burst(c, board, truth, writes);
  }
  truth.used.add(5);
  truth.used.add(6);
  const v = new Viewer(await h.connectWs(t, gw.wsUrl), board, { offset: 1000, limit: 10 });
  await v.start();
  // p0..p9 hold ranks 1010..1001, p10 1000. A new member with the lowest
  // score so far comes in at 1011, below the page; p5 jumps from 1005 to the
  // top (out of the page), which pushes p10 down into it from 1000; p500 (at
  // 511 once p5 passed it) drops into the page at 1010.
  let ack = await setScore(c, board, truth, 'low', 5);
  await reach(v, ack.seq);
  ack = await setScore(c, board, truth, 'p5', 9999999);
  await reach(v, ack.seq);
  ack = await setScore(c, board, truth, 'p500', 6);
  await reach(v, ack.seq);
  assert.equal(v.snapshots, 0, `no fallback snapshot; deltas: ${JSON.stringify(v.deltas.map((d) => d.msg))}`);
  assert.equal(rowOf(v, 'low'), null);
  assert.deepEqual([rowOf(v, 'p10').rank, rowOf(v, 'p10').prev_rank], [1001, 1000]);
  assert.deepEqual([rowOf(v, 'p500').rank, rowOf(v, 'p500').prev_rank], [1010, 511]);
  // then some random moves across the page, one at a time
  for (let i = 0; i < 40; i++) {
    const member = `p${rnd(30)}`;
    await setScore(c, board, truth, member, rnd(2) ? truth.freshValue(99000) : truth.freshValue(1e6) + 1e6);
  }
  ack = await finalWrite(c, board, truth);
  await reach(v, ack.seq);
  const counts = v.check(truth);
  t.diagnostic(`${counts.rows} rows (${counts.fromOutside} from outside the page), ${v.deltas.length} deltas, ` +
    `${v.snapshots} fallback snapshots`);
  assert.ok(counts.fromOutside > 0);
});

test('a change made outside the scripts: a snapshot, then exact prev_rank again', { timeout: 60000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const board = 'match:prev4';
  const zkey = `rc:{${board}|}:z`;
  const SCALE = 2 ** 29; // match:*'s tie-break bits: points * 2^29 (+ slot)
  const c = await h.connectWs(t, gw.wsUrl);
  for (let i = 0; i < 30; i++) { // o0 (1000) .. o29 (1290)
    const ack = await c.request({ op: 'set', board, member: `o${i}`, value: 1000 + i * 10, req: `o${i}` });
    assert.equal(ack.op, 'ack');
  }
  const steps = [
    // top 10: cli-top-0 goes to 1, cli-mid-0 to 3; then o0 jumps from the bottom to 2
    { view: { top: 10 }, write: { member: 'o0', value: 50000 }, rank: 2 },
    // ranks 3..12: cli-mid-1 lands at 5; then o1 jumps from the bottom to 4
    { view: { offset: 2, limit: 10 }, write: { member: 'o1', value: 1295 }, rank: 4 },
  ];
  for (const [k, step] of steps.entries()) {
    const v = new Viewer(await h.connectWs(t, gw.wsUrl), board, step.view);
    await v.start();
    // redis-cli puts a member at the top and one in the window: no change
    // event tells where anyone came from, so the viewer gets a snapshot
    await redis.cli('ZADD', zkey, String((60000 + k) * SCALE), `cli-top-${k}`,
      String((1285 + k) * SCALE), `cli-mid-${k}`);
    await h.waitFor(() => v.snapshots === 1, 15000, 'a snapshot after the out-of-band change');
    assert.ok(v.rows.some((r) => r.member === `cli-mid-${k}`), JSON.stringify(v.rows));
    assert.equal(v.deltas.filter((d) => d.msg.rows.some((r) => r.member.startsWith('cli-'))).length, 0,
      'no delta row for a member only the out-of-band change moved');
    // then a script write: prev_rank counts the out-of-band members too
    const before = Number(await redis.cli('ZREVRANK', zkey, step.write.member)) + 1;
    const ack = await c.request(Object.assign({ op: 'set', board, req: `j${k}` }, step.write));
    assert.equal(ack.rank, step.rank, JSON.stringify(ack));
    await reach(v, ack.seq);
    const row = rowOf(v, step.write.member);
    assert.deepEqual([row.rank, row.prev_rank], [step.rank, before]);
    assert.equal(v.snapshots, 1, 'a delta again once the events explain the moves');
  }
});

test('a decaying board: a held member\'s prev_rank in a delta, one from outside comes as a snapshot',
  { timeout: 60000 }, async (t) => {
    const config = h.configWith(t, { 'board hot': { rebuild_every: '200ms', result_ttl: '5s' } });
    const { gw } = await h.startStack(t, { config });
    const incr = async (member, delta) => {
      const res = await h.http(gw.base, 'POST', '/api/v1/boards/hot/scores', { member, op: 'incr', delta });
      assert.equal(res.status, 200, res.text);
    };
    for (const [m, d] of [['a', 50], ['b', 40], ['c', 30], ['d', 20], ['e', 10]]) await incr(m, d);
    const c = await h.connectWs(t, gw.wsUrl);
    await h.waitFor(async () => {
      const r = await h.http(gw.base, 'GET', '/api/v1/boards/hot?top=5');
      return r.status === 200 && r.body.rows && r.body.rows.length === 5;
    }, 15000, 'the first rebuild');
    const v = new Viewer(c, 'hot', { top: 3 });
    await v.start();
    assert.deepEqual(v.rows.map((r) => r.member), ['a', 'b', 'c']);
    // c (held at 3) goes to the top at the next rebuild: a delta row, prev_rank 3
    await incr('c', 100);
    await h.waitFor(() => v.rows[0].member === 'c', 15000, 'c at the top');
    const dc = v.deltas.find((d) => d.msg.rows.some((r) => r.member === 'c'));
    assert.ok(dc, `a delta for c (snapshots ${v.snapshots})`);
    assert.equal(dc.msg.rows.find((r) => r.member === 'c').prev_rank, 3);
    // e (at 5, outside) jumps to the top: a rebuild says not from where, so a snapshot
    await incr('e', 1000);
    await h.waitFor(() => v.rows[0].member === 'e', 15000, 'e at the top');
    assert.equal(v.snapshots, 1, 'a snapshot brought e in');
    assert.ok(!v.deltas.some((d) => d.msg.rows.some((r) => r.member === 'e')), 'no delta row guessed e\'s prev_rank');
    assert.deepEqual(v.rows.map((r) => r.member), ['e', 'c', 'a']);
  });
