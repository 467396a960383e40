/* hostile_boards.test.js - clients that try to make the fan-out expensive
 * (the hostile-clients issue, findings 1 and 2), over real sockets:
 *
 * (a) anonymous connections each subscribe to 64 distinct match:N boards, so
 *     every subscription opens a board: a board with no events costs little
 *     (RSS growth per board is printed and bounded), the subscribe that would
 *     open one board more than max_boards is rate_limited while subscribes to
 *     live boards still work, a viewer from another address keeps getting its
 *     deltas during the attack and while the attackers close (each within
 *     15 s; its p99 is printed), the memory comes back, and SIGTERM still exits 0 within 5 s;
 * (b) stuck readers (raw sockets that do the handshake and then never read)
 *     ask for 64 top-1000 views each: the subscribe snapshots they cannot take
 *     stay bounded per connection, and one that reads again still gets exactly
 *     one reply per subscribe (PROTOCOL.md). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const h = require('./harness');
const { frame, handshake, serverFrames } = require('./wsraw');

const SUBS = 64; // the shipped max_subs_per_conn
// A sanitizer build (RC_SANITIZE=1 bash tests/run) has its own allocator:
// redzones, shadow memory and a quarantine that holds freed memory back. Its
// RSS says nothing about the gateway's, so the memory bounds are printed
// there but asserted only on a normal build.
const SANITIZER = !!process.env.RC_SANITIZE;
/* RssAnon and RssFile of pid in kB: the heap, and the pages of the binary and
 * its libraries (new code paths load more of those: not memory kept). */
function rssParts(pid) {
  const st = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(st)[1]);
  return `anon ${kb('RssAnon')} kB + file ${kb('RssFile')} kB`;
}
const BOARD_BYTES = 3072; // measured ~1,880 bytes per board (connections included) before issue 23's view
// index, due lists and fair-share holders, ~2,050 after; 2,548 on a quiet machine after issue 26's lists and
// issue 27's moments (88b347e), 2,575 to 2,644 under a loaded CI (the old bound, 2,560, failed there);
// 47 KB before the bound

/* Limits that would otherwise stop the attack before it reaches the boards:
 * this test is about what boards and queues cost, not about read rates. */
const OPEN_READS = {
  max_conns_per_ip: 100000,
  conn_read_rate: 1000000, conn_read_burst: 10000000,
  ip_read_rate: 1000000, ip_read_burst: 10000000,
  max_pending: 100000,
  conn_write_rate: 1000000, conn_write_burst: 10000000,
  key_write_rate: 1000000, key_write_burst: 10000000,
};

// The attackers do not offer permessage-deflate: this measures the memory of
// boards and views; lws keeps an inflater per compressing connection, and the
// heap it leaves after a mass close returns less promptly (measured here:
// 15.6-18.3 MB after close with it, 12.6 MB without, from 11.8 MB at start).
function openWs(url, localAddress) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'rankcast.v1', { localAddress, perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const requestAll = h.requestAll;

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/* Write-to-screen latency of a reading viewer of demo top 10, measured until
 * stop() is called: each probe writes a new top score through REST (admin
 * key) and the clock stops when the viewer's delta shows it. A probe that
 * never arrives fails the test. */
function startProbe(gw, viewer, sub) {
  const lat = [];
  let stopped = false;
  let seen = null;
  viewer.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (seen && m.sub === sub && (m.op === 'delta' || m.op === 'snapshot') &&
        m.rows.some((r) => r.member === seen.member && r.score === seen.score)) seen.done();
  });
  const run = (async () => {
    for (let i = 0; !stopped; i++) {
      const member = `probe:${i % 5}`;
      const score = 1000000 + i;
      const arrived = new Promise((resolve) => { seen = { member, score, done: resolve }; });
      const t0 = Date.now();
      const res = await h.http(gw.base, 'POST', '/api/v1/boards/demo/scores', { member, op: 'set', value: score },
        { timeoutMs: 15000 });
      assert.equal(res.status, 200, res.text);
      let timer;
      const late = new Promise((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`probe ${i}: no delta within 15 s`)), 15000);
      });
      try { await Promise.race([arrived, late]); } finally { clearTimeout(timer); }
      lat.push(Date.now() - t0);
      await h.sleep(20);
    }
  })();
  let failed = null;
  run.catch((e) => { failed = e; }); // reported by count() and stop()
  return {
    count() {
      if (failed) throw failed;
      return lat.length;
    },
    halt() { stopped = true; },
    async stop() {
      stopped = true;
      await run;
      const s = lat.slice().sort((a, b) => a - b);
      return { n: s.length, p50: pct(s, 0.5), p99: pct(s, 0.99), max: s.at(-1) };
    },
  };
}

test('(a) 6,400 distinct match:N boards: little memory per board, max_boards answered rate_limited, ' +
     'other viewers unaffected, memory back after close', { timeout: 120000 }, async (t) => {
  const CONNS = 100;
  const BOARDS = CONNS * SUBS;
  const MAX_BOARDS = BOARDS + 1; // the attack's boards and the reference viewer's demo
  // ip_board_share 100: this case is about the whole table (each address's
  // share, and what a full table gives up, are (c) and (d)).
  const config = h.configWith(t, { limits: Object.assign({ max_boards: MAX_BOARDS, max_conns: 5000,
    ip_board_share: 100 }, OPEN_READS) });
  const { gw } = await h.startStack(t, { config });

  // The reference viewer, from another source address than the attackers.
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null, localAddress: '127.0.0.2' });
  const first = await viewer.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  assert.equal(first.op, 'snapshot');
  const probe = startProbe(gw, viewer, first.sub);
  h.defer(t, () => probe.halt());
  await h.waitFor(() => probe.count() >= 5, 10000, 'the probe to run');
  const rssBase = h.vmRssKb(gw.pid);

  // The attack: each anonymous connection opens 64 boards nobody else watches.
  const attackers = [];
  t.after(() => attackers.forEach((ws) => ws.terminate()));
  const t0 = Date.now();
  for (let i = 0; i < CONNS; i += 10) {
    await Promise.all(Array.from({ length: 10 }, async (_, k) => {
      const n = i + k;
      const ws = await openWs(gw.wsUrl, `127.0.0.${3 + (n % 8)}`);
      attackers.push(ws);
      const replies = await requestAll(ws, Array.from({ length: SUBS }, (_, j) => ({
        op: 'subscribe', id: j + 1, board: `match:${n}-${j}`, view: { top: 10 } })), 60000);
      for (const r of replies) assert.equal(r.op, 'snapshot', JSON.stringify(r));
    }));
  }
  const attackMs = Date.now() - t0;
  const rssAttack = h.vmRssKb(gw.pid);
  const perBoard = Math.round(((rssAttack - rssBase) * 1024) / BOARDS);
  t.diagnostic(`${BOARDS} boards opened in ${attackMs} ms; gateway RSS ${rssBase} kB -> ${rssAttack} kB: ` +
    `${perBoard} bytes per board (connections included)`);
  if (!SANITIZER) assert.ok(perBoard < BOARD_BYTES, `${perBoard} bytes per board`);

  // One board more than max_boards from an attacker's address (which holds
  // as many as any other: nothing is evicted for it): rate_limited; a live
  // board still opens a view.
  const extra = await h.connectWs(t, gw.wsUrl, { token: null, localAddress: '127.0.0.3' });
  const over = await extra.request({ op: 'subscribe', board: 'match:one-too-many', view: { top: 10 } });
  assert.equal(over.op, 'error');
  assert.equal(over.code, 'rate_limited');
  assert.match(over.message, new RegExp(`max_boards ${MAX_BOARDS}`));
  const live = await extra.request({ op: 'subscribe', board: 'match:7-7', view: { top: 5 } });
  assert.equal(live.op, 'snapshot', JSON.stringify(live));

  // The attackers leave (all at once); the viewer keeps getting its deltas.
  const tClose = Date.now();
  await Promise.all(attackers.map((ws) => new Promise((resolve) => {
    ws.once('close', resolve);
    ws.close(1000);
  })));
  attackers.length = 0;
  // Their boards are gone: a new board opens again.
  await h.waitFor(async () => (await extra.request({ op: 'subscribe', board: 'match:after', view: { top: 10 } }))
    .op === 'snapshot', 20000, 'a new board to open after the attackers closed');
  const closeMs = Date.now() - tClose;
  const n0 = probe.count();
  await h.waitFor(() => probe.count() >= n0 + 10, 20000, 'the probe to go on after the close');
  const lat = await probe.stop();
  t.diagnostic(`reference viewer (127.0.0.2, demo top 10) through the attack and the close: ${lat.n} probes, ` +
    `p50 ${lat.p50} ms p99 ${lat.p99} ms max ${lat.max} ms; the attackers' close took ${closeMs} ms to clear`);
  // (every probe's delta came within 15 s, or the probe failed; the
  // latencies are reported, not bounded: a loaded machine is no failure)

  // The memory comes back.
  let rssAfter = 0;
  const fellBack = () => {
    rssAfter = h.vmRssKb(gw.pid);
    return rssAfter - rssBase < (rssAttack - rssBase) / 2;
  };
  if (!SANITIZER) {
    await h.waitFor(fellBack, 20000, 'RSS to fall back').catch((e) => {
      throw new Error(`${e.message}: base ${rssBase} kB, attack ${rssAttack} kB, now ${rssAfter} kB`);
    });
  } else {
    fellBack();
  }
  t.diagnostic(`RSS after the attackers closed: ${rssAfter} kB`);

  await extra.close();
  await viewer.close();
  const tStop = Date.now();
  const res = await gw.stop();
  const stopMs = Date.now() - tStop;
  t.diagnostic(`SIGTERM to exit: ${stopMs} ms`);
  assert.equal(res.code, 0);
  assert.ok(stopMs < 5000, `stop took ${stopMs} ms`);
});

/* ---- a WebSocket client by hand, to be a reader that never reads ---------- */

/* Connects, does the handshake (no key: reads are open), and stops reading
 * right after the 101: { sock, rest }. */
const openStuck = (port, localAddress) => handshake(port, { localAddress, token: null, pause: true });

/* Reads server frames from a stuck socket once it reads again. */
function readFrames(stuck, onText) {
  const push = serverFrames((f) => { if (f.opcode === 1) onText(f.payload.toString()); });
  stuck.sock.on('data', push);
  push(stuck.rest);
  stuck.sock.resume();
}

test('(b) stuck readers with 64 top-1000 views each: bounded memory per connection, ' +
     'one reply per subscribe once read', { timeout: 120000 }, async (t) => {
  const STUCK = 10;
  const QUEUE = 256 * 1024; // the shipped queue_bytes
  const config = h.configWith(t, { limits: Object.assign({ max_conns: 5000 }, OPEN_READS) });
  const { gw } = await h.startStack(t, { config });

  // 64 boards of 1,000 members each, written through the script.
  const writer = await h.connectWs(t, gw.wsUrl);
  for (let b = 0; b < SUBS; b++) {
    const board = `match:big-${b}`;
    const reqs = Array.from({ length: 1000 }, (_, i) => ({ op: 'set', id: i + 1, board, member: `player:${i}`,
      value: 1000 + i * 7 + b }));
    const replies = await requestAll(writer.ws, reqs, 60000);
    assert.ok(replies.every((r) => r.op === 'ack'), 'every write acknowledged');
  }
  // A reading client holds the same 64 views, so what they cost (windows,
  // mirrors) is paid before the baseline: what is measured is per connection.
  const reader = await h.connectWs(t, gw.wsUrl, { token: null });
  const snaps = await requestAll(reader.ws, Array.from({ length: SUBS }, (_, b) => ({
    op: 'subscribe', id: b + 1, board: `match:big-${b}`, view: { top: 1000 } })), 30000);
  assert.ok(snaps.every((m) => m.op === 'snapshot' && m.rows.length === 1000));
  const snapBytes = Math.max(...snaps.map((m) => JSON.stringify(m).length));
  // The gateway hands freed heap back once a second (base/gw_trim.c): let
  // it give back what the writes left before the baseline, or the stuck
  // readers' cost would hide behind it.
  await h.sleep(2500);
  const rssBase = h.vmRssKb(gw.pid);

  const stuck = [];
  t.after(() => stuck.forEach((s) => s.sock.destroy()));
  for (let i = 0; i < STUCK; i++) {
    const s = await openStuck(gw.port, `127.0.0.${2 + (i % 4)}`);
    stuck.push(s);
    for (let b = 0; b < SUBS; b++)
      s.sock.write(frame(1, JSON.stringify({ op: 'subscribe', id: b + 1, board: `match:big-${b}`, view: { top: 1000 } })));
  }
  // Every subscribe has been handled once the gateway answers a later one.
  const late = await h.connectWs(t, gw.wsUrl, { token: null });
  await h.waitFor(async () => {
    const m = (await h.http(gw.base, 'GET', '/metrics')).text;
    return Number(/^rankcast_subscriptions\{view="top"\} (\d+)$/m.exec(m)[1]) >= (STUCK + 1) * SUBS;
  }, 30000, 'every stuck subscribe to be handled');
  assert.equal((await late.request({ op: 'ping' })).op, 'pong');
  let rssMax = 0;
  for (let i = 0; i < 10; i++) {
    rssMax = Math.max(rssMax, h.vmRssKb(gw.pid));
    await h.sleep(100);
  }
  const perConn = Math.round(((rssMax - rssBase) * 1024) / STUCK);
  const bound = QUEUE + 3 * snapBytes + 64 * 1024;
  t.diagnostic(`${STUCK} stuck readers x ${SUBS} top-1000 views (snapshot ${snapBytes} bytes): gateway RSS ` +
    `${rssBase} kB -> ${rssMax} kB: ${perConn} bytes per stuck connection (bound ${bound})`);
  if (!SANITIZER) assert.ok(perConn < bound, `${perConn} bytes per stuck connection, bound ${bound}`);

  // One of them reads again: exactly one snapshot per subscribe, ids echoed.
  const got = new Map();
  const extra = [];
  let pong = false;
  readFrames(stuck[0], (text) => {
    const m = JSON.parse(text);
    if (m.id === undefined) return; // pushed snapshots and deltas carry no id
    if (m.id === 'barrier' && m.op === 'pong') pong = true;
    else if (m.op !== 'snapshot' || got.has(m.id)) extra.push(m.op === 'snapshot' ? `second reply to ${m.id}` : text.slice(0, 200));
    else got.set(m.id, m);
  });
  await h.waitFor(() => got.size === SUBS, 30000, 'a reply to each of the 64 subscribes');
  // Whatever was owed is out by now: a ping sent after it comes back behind it.
  stuck[0].sock.write(frame(1, JSON.stringify({ op: 'ping', id: 'barrier' })));
  await h.waitFor(() => pong, 10000, 'the pong');
  assert.deepEqual(extra, []);
  for (let b = 0; b < SUBS; b++) {
    assert.equal(got.get(b + 1).board, `match:big-${b}`);
    assert.equal(got.get(b + 1).rows.length, 1000);
  }
});

/* ---- fair shares of max_boards (hostile-clients issue round 2) ------------- */

const SMALL_TABLE = 40; // max_boards in (c) and (d): the default ip_board_share (10 %) is 4 boards

/* Opens `n` boards match:PREFIX-0.. on an anonymous connection from `ip`;
 * returns the connection and its replies. */
async function openBoards(t, gw, ip, prefix, n) {
  const ws = await h.connectWs(t, gw.wsUrl, { token: null, localAddress: ip, perMessageDeflate: false });
  const replies = [];
  for (let i = 0; i < n; i++)
    replies.push(await ws.request({ op: 'subscribe', board: `match:${prefix}-${i}`, view: { top: 10 } }));
  return { ws, replies };
}

test('(c) one address holds at most ip_board_share of max_boards: its next new board is rate_limited, ' +
     'another address still opens boards', { timeout: 60000 }, async (t) => {
  const config = h.configWith(t, { limits: Object.assign({ max_boards: SMALL_TABLE, max_conns: 5000 }, OPEN_READS) });
  const { gw } = await h.startStack(t, { config });
  const a = await openBoards(t, gw, '127.0.0.3', 'a', 4);
  for (const r of a.replies) assert.equal(r.op, 'snapshot', JSON.stringify(r));
  // The fifth board of this address, on this connection or another one: refused.
  const over = await a.ws.request({ op: 'subscribe', board: 'match:a-4', view: { top: 10 } });
  assert.equal(over.op, 'error', JSON.stringify(over));
  assert.equal(over.code, 'rate_limited');
  assert.match(over.message, /ip_board_share 10% of max_boards 40/);
  const a2 = await openBoards(t, gw, '127.0.0.3', 'a2', 1);
  assert.equal(a2.replies[0].code, 'rate_limited', JSON.stringify(a2.replies[0]));
  // A board that lives already is joined, whoever holds it.
  assert.equal((await a2.ws.request({ op: 'subscribe', board: 'match:a-0', view: { top: 5 } })).op, 'snapshot');
  // Another address opens its own boards while the table has room.
  const b = await openBoards(t, gw, '127.0.0.4', 'b', 4);
  for (const r of b.replies) assert.equal(r.op, 'snapshot', JSON.stringify(r));
  // A board the address let go of gives its share back.
  const subA = a.replies[3].sub;
  assert.equal((await a.ws.request({ op: 'unsubscribe', sub: subA })).op, 'unsubscribed');
  assert.equal((await a.ws.request({ op: 'subscribe', board: 'match:a-5', view: { top: 10 } })).op, 'snapshot');
});

test('(d) a full table gives way: a board held by one address is evicted for a new address, ' +
     'demo and a keyed viewer\'s board are never refused', { timeout: 60000 }, async (t) => {
  const config = h.configWith(t, { limits: Object.assign({ max_boards: SMALL_TABLE, max_conns: 5000 }, OPEN_READS) });
  const { gw } = await h.startStack(t, { config });
  // A keyed viewer's board, and an anonymous one from a second address beside it.
  const keyed = await h.connectWs(t, gw.wsUrl, { localAddress: '127.0.0.2', perMessageDeflate: false });
  const kfirst = await keyed.request({ op: 'subscribe', board: 'match:keyed', view: { top: 10 } });
  assert.equal(kfirst.op, 'snapshot');
  // Ten addresses fill the rest of the table, each up to its share.
  const holders = [];
  for (let i = 0; holders.length * 4 < SMALL_TABLE - 1; i++) {
    const n = Math.min(4, SMALL_TABLE - 1 - holders.length * 4);
    const o = await openBoards(t, gw, `127.0.0.${3 + i}`, `h${i}`, n);
    for (const r of o.replies) assert.equal(r.op, 'snapshot', JSON.stringify(r));
    holders.push(o);
  }
  const evictions = () => holders.flatMap((o) => o.ws.messages.filter((m) => m.op === 'error' && m.sub));

  // New addresses still open boards: each takes the place of a board held by one address.
  for (let i = 0; i < 12; i++) {
    const o = await openBoards(t, gw, `127.0.1.${1 + i}`, `new${i}`, 1);
    assert.equal(o.replies[0].op, 'snapshot', `new address ${i}: ${JSON.stringify(o.replies[0])}`);
  }
  await h.waitFor(() => evictions().length >= 12, 5000, 'an eviction per new board');
  for (const e of evictions()) {
    assert.equal(e.code, 'rate_limited', JSON.stringify(e));
    assert.match(e.message, /evicted/);
  }
  // The evicted viewers' subscriptions are gone: their address may open boards again.
  const victim = holders.find((o) => o.ws.messages.some((m) => m.op === 'error' && m.sub));
  const unsub = await victim.ws.request({ op: 'unsubscribe', sub: evictions().find((e) =>
    victim.ws.messages.includes(e)).sub });
  assert.equal(unsub.op, 'error', 'the evicted view is no subscription any more');

  // A declared board, from yet another anonymous address, with the table full.
  const d = await h.connectWs(t, gw.wsUrl, { token: null, localAddress: '127.0.2.1', perMessageDeflate: false });
  const demo = await d.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  assert.equal(demo.op, 'snapshot', JSON.stringify(demo));
  // A keyed viewer opens a new board with the table full.
  const k2 = await keyed.request({ op: 'subscribe', board: 'match:keyed-2', view: { top: 10 } });
  assert.equal(k2.op, 'snapshot', JSON.stringify(k2));
  // ... and its boards were never evicted.
  assert.deepEqual(keyed.messages.filter((m) => m.op === 'error'), []);
  assert.deepEqual(d.messages.filter((m) => m.op === 'error'), []);
});

/* ---- memory given back (hostile-clients issue round 2) --------------------- */

test('(e) 128 distinct top-N views and 256 deep pages on a 5,000-member board: RSS returns close to ' +
     'its start after the attackers close', { timeout: 180000 }, async (t) => {
  // (Small enough that the work of each new view, O(views on the board)
  // today, and the page reads ahead of the health check stay well within
  // the deadlines: this case is about the memory they leave behind.)
  const CONNS = 4;
  const MEMBERS = 5000;
  const config = h.configWith(t, { limits: Object.assign({ max_conns: 5000 }, OPEN_READS) });
  const { gw } = await h.startStack(t, { config });
  const board = 'match:views';
  const writer = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: false });
  for (let i = 0; i < MEMBERS; i += 1000) {
    const replies = await requestAll(writer.ws, Array.from({ length: 1000 }, (_, k) => ({ op: 'set', id: k + 1, board,
      member: `player:${i + k}`, value: 100000 + (i + k) * 13 })), 60000);
    assert.ok(replies.every((r) => r.op === 'ack'), 'every write acknowledged');
  }
  // A viewer that stays, so the board and its mirror are paid before the baseline.
  const viewer = await h.connectWs(t, gw.wsUrl, { token: null, localAddress: '127.0.0.2', perMessageDeflate: false });
  assert.equal((await viewer.request({ op: 'subscribe', board, view: { top: 10 } })).op, 'snapshot');
  const rssBase = h.vmRssKb(gw.pid);
  const partsBase = rssParts(gw.pid);

  const attackers = [];
  t.after(() => attackers.forEach((ws) => ws.terminate()));
  const run = async (what, conns, view) => {
    for (let n = 0; n < conns; n++) {
      const ws = await openWs(gw.wsUrl, `127.0.0.${3 + n}`);
      attackers.push(ws);
      const replies = await requestAll(ws, Array.from({ length: SUBS }, (_, j) => ({
        op: 'subscribe', id: j + 1, board, view: view(n * SUBS + j) })), 120000);
      for (const r of replies) assert.equal(r.op, 'snapshot', `${what}: ${JSON.stringify(r).slice(0, 200)}`);
    }
  };
  const t0 = Date.now();
  await run('top-N', CONNS / 2, (k) => ({ top: 1000 - k }));
  const t1 = Date.now();
  await run('deep page', CONNS, (k) => ({ offset: 1000 + ((k * 61) % (MEMBERS - 1000)), limit: 1000 }));
  t.diagnostic(`top-N views opened in ${t1 - t0} ms, deep pages in ${Date.now() - t1} ms`);
  const rssPeak = h.vmRssKb(gw.pid);

  await Promise.all(attackers.map((ws) => new Promise((resolve) => {
    ws.once('close', resolve);
    ws.close(1000);
  })));
  attackers.length = 0;
  // Every view is gone once the gateway counts only the viewer's.
  await h.waitFor(async () => {
    const m = (await h.http(gw.base, 'GET', '/metrics')).text;
    return Number(/^rankcast_subscriptions\{view="top"\} (\d+)$/m.exec(m)[1]) === 1 &&
      Number(/^rankcast_subscriptions\{view="page"\} (\d+)$/m.exec(m)[1]) === 0;
  }, 30000, 'the attackers\' views to go');
  // A generous bound relative to the start (not a timing): the windows,
  // reads and queues of 384 views are handed back, not kept by malloc.
  // Under a sanitizer (RC_SANITIZE) the quarantine holds freed memory back,
  // so the bound is printed there but not asserted.
  const bound = rssBase + 16 * 1024;
  let rssAfter = 0;
  const back = () => { rssAfter = h.vmRssKb(gw.pid); return rssAfter <= bound; };
  if (!SANITIZER) {
    await h.waitFor(back, 20000, 'RSS to come back').catch((e) => {
      throw new Error(`${e.message}: start ${rssBase} kB, peak ${rssPeak} kB, now ${rssAfter} kB (bound ${bound} kB)`);
    });
  } else {
    back();
  }
  t.diagnostic(`${(CONNS / 2) * SUBS} top-N views + ${CONNS * SUBS} deep pages on ${MEMBERS} members: gateway RSS ` +
    `${rssBase} kB at start (${partsBase}), ${rssPeak} kB at the peak, ${rssAfter} kB after the close ` +
    `(${rssParts(gw.pid)}; bound ${bound} kB)`);
  assert.equal((await viewer.request({ op: 'ping' })).op, 'pong');
});

test('(f) 200 connections that each sent one 60 KB message: their read buffers are not kept while they ' +
     'stay open', { timeout: 60000 }, async (t) => {
  const CONNS = 200;
  const config = h.configWith(t, { limits: Object.assign({ max_conns: 5000 }, OPEN_READS) });
  const { gw } = await h.startStack(t, { config });
  const conns = [];
  t.after(() => conns.forEach((ws) => ws.terminate()));
  for (let i = 0; i < CONNS; i++) conns.push(await openWs(gw.wsUrl, `127.0.0.${3 + (i % 8)}`));
  await Promise.all(conns.map((ws) => requestAll(ws, [{ op: 'ping', id: 1 }], 10000)));
  const rssBase = h.vmRssKb(gw.pid);
  // One big message each (a ping padded with an unknown field: answered,
  // whatever it says), then silence with the socket open.
  const pad = 'x'.repeat(60000);
  const replies = await Promise.all(conns.map((ws) => requestAll(ws, [{ op: 'ping', id: 2, pad }], 20000)));
  assert.equal(replies.length, CONNS);
  // Kept, the buffers would be 200 x 64 KB = 12.8 MB; the bound is a quarter of that.
  const bound = rssBase + (CONNS * 64) / 4;
  let rssAfter = 0;
  const back = () => { rssAfter = h.vmRssKb(gw.pid); return rssAfter <= bound; };
  if (!SANITIZER) { // (a sanitizer's quarantine holds freed memory: printed only)
    await h.waitFor(back, 10000, 'RSS to stay within the bound').catch((e) => {
      throw new Error(`${e.message}: ${rssBase} kB before, ${rssAfter} kB after (bound ${bound} kB)`);
    });
  } else {
    back();
  }
  t.diagnostic(`${CONNS} connections, one 60 KB message each, still open: gateway RSS ${rssBase} kB -> ${rssAfter} kB`);
});
