/* members_backlog.test.js - member lists of a busy board follow its
 * change events and never read Redis again, also when the gateway reads
 * its Redis connection in pieces (issue 26, bench case M: at 2,000
 * writes/s lists read Redis about once per list per second).
 *
 * The script's own ZADD shows as a keyspace "zadd" just before its change
 * event; under load a tick may run between the two (the event is in the
 * connection's next read). The rule was "a zadd pending at two ticks in a
 * row was made outside the scripts", a different zadd each time: the
 * board's own writes were taken for changes made outside, and every member
 * list read Redis again (core/rc_ksmatch.h). Here gateway A holds the list
 * viewers and is stopped (SIGSTOP) while gateway B writes to the same Redis;
 * when A goes on, the writes wait for it in its socket in hundreds of reads,
 * with ticks among them. Its lists must stay exact and read nothing. A
 * ZADD made outside (redis-cli) is still seen and read once per list. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const TB = 2 ** 29; // match:*: 1 s tie-break slots over 3650 d (docs/score-layout.md)
const zkey = (board) => `rc:{${board}|}:z`;
const rnd = (n) => Math.floor(Math.random() * n);

async function metric(gw, re) {
  const m = await h.http(gw.base, 'GET', '/metrics', null, { headers: { Authorization: 'Bearer ' + h.ADMIN_KEY } });
  const x = re.exec(m.text);
  return x ? Number(x[1]) : 0;
}
const listReads = (gw) => metric(gw, /^rankcast_view_reads_total\{view="members"\} (\d+)$/m);

/* member -> [rank, score] from Redis. */
async function truth(redis, board) {
  const out = (await redis.cli('ZRANGE', zkey(board), '0', '-1', 'REV', 'WITHSCORES')).split('\n').filter((x) => x !== '');
  const by = new Map();
  for (let i = 0; i + 1 < out.length; i += 2) by.set(out[i], [i / 2 + 1, Math.floor(Number(out[i + 1]) / TB)]);
  return by;
}

/* A list viewer that applies deltas by member (PROTOCOL v1.2). */
async function listViewer(t, gw, board, members) {
  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board, view: { members } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  const v = { members, rows: new Map(snap.rows.map((r) => [r.member, r])) };
  c.ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.sub !== snap.sub) return;
    if (m.op === 'snapshot') v.rows = new Map(m.rows.map((r) => [r.member, r]));
    if (m.op !== 'delta') return;
    for (const x of m.removed || []) v.rows.delete(x);
    for (const r of m.rows) v.rows.set(r.member, r);
  });
  return v;
}

async function settle(redis, board, viewers, what) {
  let last = '';
  try {
    await h.waitFor(async () => {
      const by = await truth(redis, board);
      last = '';
      for (const v of viewers) {
        for (const m of v.members) {
          const r = v.rows.get(m), w = by.get(m);
          if (!w !== !r || (r && (r.rank !== w[0] || r.score !== w[1])))
            last += `\n  ${m}: want ${JSON.stringify(w)} got ${r ? `[${r.rank},${r.score}]` : 'none'}`;
        }
      }
      return last === '';
    }, 30000, what);
  } catch (e) {
    throw new Error(`${e.message}${last.slice(0, 2000)}`);
  }
}

test('member lists of a busy board read nothing while the gateway catches up on its Redis connection; a ZADD made outside still reads', { timeout: 180000 }, async (t) => {
  const redis = await h.startRedis(t);
  const a = await h.startGateway(t, { redisPort: redis.port }); // the viewers'
  // the writers': 1,500 writes in flight at once
  const limits = { conn_write_rate: '100000', conn_write_burst: '100000', max_pending: '2000' };
  const b = await h.startGateway(t, { redisPort: redis.port, config: h.configWith(t, { limits }) });
  const board = 'match:2626';
  const all = Array.from({ length: 400 }, (_, i) => `b:${i}`);
  const w = await h.connectWs(t, b.wsUrl);
  const filled = await h.requestAll(w.ws, all.map((m, i) => ({ id: `f${i}`, op: 'set', board, member: m, value: 1000 + rnd(200) })), 30000);
  assert.ok(filled.every((m) => m.op === 'ack'), JSON.stringify(filled.find((m) => m.op !== 'ack')));
  const viewers = [];
  for (let i = 0; i < 20; i++) {
    const list = new Set();
    while (list.size < 20) list.add(all[rnd(all.length)]);
    viewers.push(await listViewer(t, a, board, [...list]));
  }
  await settle(redis, board, viewers, 'lists exact before the writes');
  const reads0 = await listReads(a);
  let n = 0;
  const perRound = [];
  for (let round = 0; round < 6; round++) {
    process.kill(a.pid, 'SIGSTOP'); // (its Redis PING gives up after 3 s: stopped well under that)
    let acks;
    try {
      acks = await h.requestAll(w.ws, Array.from({ length: 1500 }, () =>
        ({ id: `w${n++}`, op: 'incr', board, member: all[rnd(all.length)], delta: 1 + rnd(9) })), 30000, { cork: true });
    } finally {
      process.kill(a.pid, 'SIGCONT');
    }
    assert.ok(acks.every((m) => m.op === 'ack'), JSON.stringify(acks.find((m) => m.op !== 'ack')));
    await settle(redis, board, viewers, `lists exact after round ${round}`);
    perRound.push((await listReads(a)) - reads0);
  }
  const reads = (await listReads(a)) - reads0;
  if (reads !== 0) {
    // what the viewers' gateway saw, to tell a reason from a bug
    const m = await h.http(a.base, 'GET', '/metrics', null, { headers: { Authorization: 'Bearer ' + h.ADMIN_KEY } });
    const seen = m.text.split('\n').filter((l) => /^rankcast_(view_reads|feed_gaps|redis_reconnects|redis_failures|keyspace_events|list_builds|deltas_sent|snapshots_sent)/.test(l));
    assert.fail(`member-list reads during 9,000 writes heard in bursts: ${reads} (after each round: ${JSON.stringify(perRound)})\n` +
      `${seen.join('\n')}\nthe viewers' gateway said:\n${a.stderr.slice(-30).join('\n')}`);
  }
  // a ZADD made outside the scripts: no event tells what it did, so each list reads
  await redis.cli('ZADD', zkey(board), String(5000 * TB), viewers[0].members[0]);
  await h.waitFor(async () => (await listReads(a)) - reads0 >= viewers.length, 20000, 'every list read after the ZADD');
  await h.waitFor(() => viewers[0].rows.get(viewers[0].members[0]).score === 5000, 20000, 'the ZADD shows');
});
