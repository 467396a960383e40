/* replay_tool.js - what the replay tests share (replay_share.test.js,
 * cluster_replay.test.js, replay_restart.test.js): a writer that records the board after each of
 * its changes, replays started on many connections, and the checks that a
 * replay is exact and goes live with no gap and no repeat. */
'use strict';

const assert = require('node:assert/strict');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const rowsOf = (rows) => rows.map((r) => ({ rank: r.rank, member: r.member, score: r.score }));

async function metric(gw, name) {
  const res = await h.http(gw.base, 'GET', '/metrics', undefined, { token: h.ADMIN_KEY });
  assert.equal(res.status, 200, res.text);
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(res.text);
  return m ? Number(m[1]) : null;
}

/* One request, sent again with the same req while it is answered
 * unavailable or fails (a primary failing over, a gateway restarting). */
async function retry(fn, what, deadlineMs = 60000) {
  const t0 = Date.now();
  for (;;) {
    let r;
    try { r = await fn(); } catch (e) { r = { error: e }; }
    if (r && !r.error && !(r.code === 'unavailable' || r.status === 503)) return r;
    if (Date.now() - t0 > deadlineMs) throw new Error(`${what}: still failing after ${deadlineMs} ms: ${r.error || JSON.stringify(r)}`);
    await h.sleep(50);
  }
}

/* The only writer of `board` (one connection, one write at a time): after
 * each change it reads the top `top` over REST, which is then the board at
 * that change's seq (nobody else writes). `states` holds them by seq (0:
 * empty). write(k) makes one change; run() writes until stop(). */
function writer(gw, ws, board, { top = 10, pause = 30, prefix = 'w' } = {}) {
  const states = new Map([[0, []]]);
  const times = new Map();
  let i = 0;
  let stopped = false;
  let running = null;
  const w = {
    states,
    last: 0,
    async write() {
      const k = i++;
      const req = { op: 'incr', board, member: `${prefix}${(k * 7) % 13}`, delta: 1 + ((k * 11) % 29), req: `${prefix}-${k}` };
      const ack = await retry(() => ws.request(req, 15000), `write ${k}`);
      assert.equal(ack.op, 'ack', JSON.stringify(ack));
      const now = await retry(async () => {
        const r = await h.http(gw.base, 'GET', `/api/v1/boards/${board}?top=${top}`);
        return r.status === 200 ? r : { status: 503 };
      }, `read after write ${k}`);
      assert.equal(now.body.seq, ack.seq, 'the only writer: the board stands at its change');
      states.set(ack.seq, rowsOf(now.body.rows));
      times.set(ack.seq, Date.now());
      w.last = ack.seq;
      return ack.seq;
    },
    run() {
      running = (async () => {
        while (!stopped) { await w.write(); await h.sleep(pause); }
      })();
    },
    async stop() { stopped = true; await running; },
  };
  return w;
}

/* n connections each subscribe `view` of board with `replay` at once.
 * Returns each one's messages (all of them, in order). */
async function replays(t, gw, n, board, view, replay) {
  const conns = await Promise.all(Array.from({ length: n }, () => h.connectWs(t, gw.wsUrl, { token: null })));
  const got = conns.map(() => []);
  conns.forEach((c, i) => c.ws.on('message', (d) => got[i].push(JSON.parse(String(d)))));
  conns.forEach((c, i) => c.ws.send(JSON.stringify({ op: 'subscribe', id: 100 + i, board, view, replay })));
  return { conns, got };
}

const isLive = (msgs) => msgs.some((m) => m.op === 'live');

/* A window replay's messages: each moment shown equals the writer's state
 * at its seq, the moments move forward, `live` names the last moment shown,
 * and the live snapshot and deltas after it bring the rows to the state at
 * `last` (the writer's last change). Returns the live seq. */
function checkWindow(msgs, states, from, top, last, who) {
  const first = msgs[0];
  assert.equal(first.op, 'snapshot', `${who}: ${JSON.stringify(first)}`);
  assert.equal(first.replay, true, who);
  assert.equal(first.at_seq, from, who);
  const li = msgs.findIndex((m) => m.op === 'live');
  assert.ok(li > 0, `${who}: went live`);
  let prev = -1;
  for (const m of msgs.slice(0, li)) {
    assert.equal(m.op, 'snapshot', `${who}: ${JSON.stringify(m)}`);
    assert.equal(m.sub, first.sub, `${who}: one sub`);
    assert.equal(m.replay, true, who);
    assert.ok(m.at_seq > prev, `${who}: moments move forward: ${m.at_seq} after ${prev}`);
    assert.deepEqual(rowsOf(m.rows), states.get(m.at_seq), `${who}: replay at seq ${m.at_seq}`);
    prev = m.at_seq;
  }
  const live = msgs[li];
  assert.equal(live.sub, first.sub, who);
  assert.equal(live.seq, prev, `${who}: live at the last moment shown`);
  const after = msgs.slice(li + 1).filter((m) => m.sub === first.sub);
  assert.equal(after[0].op, 'snapshot', `${who}: ${JSON.stringify(after[0])}`);
  assert.equal(after[0].replay, undefined, who);
  assert.ok(after[0].seq >= live.seq || states.has(after[0].seq), who);
  // the live window is the board at the live seq or later (a window no
  // change reached since keeps its older label: its rows are those)
  assert.deepEqual(rowsOf(after[0].rows), states.get(Math.max(after[0].seq, live.seq)), `${who}: the live snapshot`);
  let rows = after[0].rows;
  for (const m of after.slice(1)) {
    if (m.op === 'snapshot') rows = m.rows;
    else if (m.op === 'delta') rows = applyDelta(rows, m, 1, top);
    assert.ok(rows, `${who}: a delta that applies`);
  }
  assert.deepEqual(rowsOf(rows), states.get(last), `${who}: live, the rows reach the last change ${last}`);
  return live.seq;
}

/* The live rows of a window replay's messages (after live), or null. */
function liveRows(msgs, top) {
  const li = msgs.findIndex((m) => m.op === 'live');
  if (li < 0) return null;
  let rows = null;
  for (const m of msgs.slice(li + 1)) {
    if (m.op === 'snapshot') rows = m.rows;
    else if (m.op === 'delta' && rows) rows = applyDelta(rows, m, 1, top);
  }
  return rows && rowsOf(rows);
}

/* A feed replay's messages: its events, replayed then live, are every
 * change after `from` up to `last` once, in seq order, each as the
 * reference feed got it. Returns the live seq. */
function checkFeed(msgs, events, from, last, who) {
  const first = msgs[0];
  assert.equal(first.op, 'snapshot', `${who}: ${JSON.stringify(first)}`);
  assert.equal(first.replay, true, who);
  assert.equal(first.at_seq, from, who);
  const li = msgs.findIndex((m) => m.op === 'live');
  assert.ok(li > 0, `${who}: went live`);
  const replayed = msgs.slice(1, li);
  assert.ok(replayed.every((m) => m.op === 'event'), `${who}: only events before live`);
  const live = msgs[li];
  assert.equal(live.seq, replayed.length ? replayed[replayed.length - 1].seq : from, `${who}: live at the last event replayed`);
  const after = msgs.slice(li + 1).filter((m) => m.sub === first.sub);
  assert.equal(after[0].op, 'snapshot', `${who}: ${JSON.stringify(after[0])}`);
  const evs = [...replayed, ...after.filter((m) => m.op === 'event')];
  assert.deepEqual(evs.map((m) => m.seq), Array.from({ length: last - from }, (_, i) => from + 1 + i), `${who}: no gap, no repeat`);
  for (const m of evs) {
    const { sub, ...rest } = m;
    assert.deepEqual(rest, events.get(m.seq), `${who}: event ${m.seq} as it went out live`);
  }
  return live.seq;
}

/* A live feed of board: its events by seq (sub left out). */
async function referenceFeed(t, gw, board) {
  const events = new Map();
  const feed = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await feed.request({ op: 'subscribe', board, view: { feed: true } }, 15000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  feed.ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.op === 'event' && m.sub === snap.sub) { delete m.sub; events.set(m.seq, m); }
  });
  return events;
}

/* get at_seq of the top `top` of board at seqs 0, 7, 14, ... up to last, and at last. */
async function moments(ws, last, top = 10, board = 'demo') {
  const out = new Map();
  const seqs = [];
  for (let s = 0; s < last; s += 7) seqs.push(s);
  seqs.push(last);
  for (const s of seqs) {
    const snap = await retry(() => ws.request({ op: 'get', board, view: { top }, at: { seq: s } }, 15000), `get at ${s}`);
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    assert.equal(snap.at_seq, s, JSON.stringify(snap));
    out.set(s, { rows: snap.rows, at_time: snap.at_time });
  }
  return out;
}

module.exports = { moments, rowsOf, metric, retry, writer, replays, isLive, checkWindow, liveRows, checkFeed, referenceFeed };
