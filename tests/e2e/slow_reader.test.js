/* slow_reader.test.js - a viewer that stops reading while writes go on must
 * not cost the gateway unbounded memory nor hold back other viewers; when it
 * reads again it gets one fresh snapshot equal to Redis (PROTOCOL.md: the
 * server may send a snapshot instead of deltas after a slow reader). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const h = require('./harness');
const { applyDelta } = require('../../web/rankcast.js');

const SCALE = 2 ** 29;

/* The shipped config with a small per-connection queue, so the test need
 * not push megabytes before the gateway calls the reader slow. */
function smallQueueConfig(t) {
  const text = fs.readFileSync(path.join(h.repoRoot, 'conf/rankcast.conf'), 'utf8')
    .replace(/^queue_bytes = .*$/m, 'queue_bytes = 64k');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rc-conf-')), 'rankcast.conf');
  fs.writeFileSync(file, text);
  t.after(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  return file;
}

async function subscribeTop(c, n) {
  const snap = await c.request({ op: 'subscribe', board: 'demo', view: { top: n } });
  assert.equal(snap.op, 'snapshot');
  const v = { rows: snap.rows, snapshots: 0, deltas: 0, sub: snap.sub };
  c.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub !== v.sub) return;
    if (m.op === 'snapshot') { v.rows = m.rows; v.snapshots++; }
    if (m.op === 'delta') { v.rows = applyDelta(v.rows, m, 1, n); v.deltas++; }
  });
  return v;
}

async function redisTop(redis, n) {
  const out = (await redis.cli('ZRANGE', 'rc:{demo|}:z', '0', String(n - 1), 'REV', 'WITHSCORES')).split('\n');
  const rows = [];
  for (let i = 0; i + 1 < out.length; i += 2) rows.push(`${out[i]}=${Math.floor(Number(out[i + 1]) / SCALE)}`);
  return rows.join(' ');
}
const shape = (rows) => rows.map((r) => `${r.member}=${r.score}`).join(' ');

test('a stalled reader stays bounded, others keep up, and it resyncs with a snapshot', { timeout: 120000 }, async (t) => {
  const { redis, gw } = await h.startStack(t, { config: smallQueueConfig(t) });
  const N = 1000;
  // A big board so each delta of a top-1000 view is large.
  for (let i = 0; i < 1500; i += 100) {
    const batch = [];
    for (let k = i; k < i + 100; k++)
      batch.push(h.http(gw.base, 'POST', '/api/v1/boards/demo/scores',
        { member: `user:${k}`, op: 'set', value: k * 3 }));
    await Promise.all(batch);
  }
  // No permessage-deflate for the stalled connection: compressed, the same
  // views shrink many times and the stall might never fill the queue.
  const slow = await h.connectWs(t, gw.wsUrl, { perMessageDeflate: false });
  const slowView = await subscribeTop(slow, N);
  // Around views are sent whole on every change: 50 of them with radius 50
  // push hundreds of kB per tick, enough to fill the kernel's socket buffers
  // and then the gateway's queue.
  for (let i = 0; i < 50; i++) {
    const r = await slow.request({ op: 'subscribe', board: 'demo', view: { around: `user:${i * 30}`, radius: 50 } });
    assert.equal(r.op, 'snapshot');
  }
  const fast = await h.connectWs(t, gw.wsUrl);
  const fastView = await subscribeTop(fast, N);
  const writer = await h.connectWs(t, gw.wsUrl);

  // Stop reading: the kernel buffers fill, then the gateway's queue. Writes go
  // on until the gateway has dropped the stalled queue (a condition, not a
  // fixed amount of traffic: a slow machine just takes more rounds).
  slow.ws._socket.pause();
  const rssBefore = h.vmRssKb(gw.pid);
  let rssMax = rssBefore;
  const queueDrops = async () => {
    const metrics = (await h.http(gw.base, 'GET', '/metrics', null, { headers: { Authorization: `Bearer ${h.ADMIN_KEY}` } })).text;
    return Number(/^rankcast_queue_drops_total (\d+)/m.exec(metrics)[1]);
  };
  let drops = 0;
  let rounds = 0;
  const deadline = Date.now() + 60000;
  while (drops < 1) {
    assert.ok(Date.now() < deadline, `the stalled reader was not detected as slow after ${rounds} rounds of writes`);
    const batch = [];
    for (let k = 0; k < 50; k++)
      batch.push(writer.request({ op: 'incr', board: 'demo', member: `user:${Math.floor(Math.random() * 1500)}`,
        delta: Math.floor(Math.random() * 4000) }, 10000));
    await Promise.all(batch);
    rounds++;
    await h.sleep(20);
    rssMax = Math.max(rssMax, h.vmRssKb(gw.pid));
    if (rounds % 10 === 0) drops = await queueDrops();
  }
  // The fast viewer is current while the slow one is stalled.
  await h.waitFor(async () => shape(fastView.rows) === await redisTop(redis, N), 10000, 'the fast viewer to match Redis');
  assert.ok(fastView.deltas > 0);
  t.diagnostic(`gateway RSS ${rssBefore} kB -> max ${rssMax} kB while the reader was stalled; ` +
    `queue drops ${drops} after ${rounds} rounds of 50 writes`);
  assert.ok(rssMax - rssBefore < 64 * 1024, `RSS grew by ${rssMax - rssBefore} kB`);

  // Reading again: the backlog is gone, a snapshot equal to Redis arrives.
  const snapshotsBefore = slowView.snapshots;
  slow.ws._socket.resume();
  await h.waitFor(() => slowView.snapshots > snapshotsBefore, 15000, 'the resync snapshot');
  await h.waitFor(async () => shape(slowView.rows) === await redisTop(redis, N), 10000, 'the slow viewer to match Redis');
});
