/* epoch.test.js - resume across resets: every snapshot carries the board's
 * epoch; a resume (`since: {seq, epoch}`) within the same history replays
 * what the viewer missed, and a resume naming an older history (after an
 * admin reset, FLUSHALL, a DEL of the board's set or of its seq from
 * redis-cli, a Redis restart without persistence) answers a snapshot with "reset": true and
 * never replays events of the new history as if they followed the old one,
 * even once the new history's seq has grown past the old one's. A viewer
 * that stays connected through the change is started over the same way. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const EPOCH_RE = /^[0-9a-f]{16}$/;

async function write(ws, member, delta) {
  const r = await ws.request({ op: 'incr', board: 'demo', member, delta }, 10000);
  assert.equal(r.op, 'ack', JSON.stringify(r));
  return r;
}

// Collects what a connection gets for one subscription.
function collect(ws, sub) {
  const got = [];
  ws.ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.sub === sub) got.push(m);
  });
  return got;
}

test('a resume within the same history replays the missed events; v1 since still works; REST carries the epoch',
  async (t) => {
    const { gw } = await h.startStack(t);
    const writer = await h.connectWs(t, gw.wsUrl);
    for (let i = 0; i < 3; i++) await write(writer, `user:${i}`, 10 + i);

    const first = await h.connectWs(t, gw.wsUrl, { token: null });
    const snap = await first.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    assert.match(snap.epoch, EPOCH_RE);
    assert.equal(snap.seq, 3);
    const top = await first.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
    assert.equal(top.epoch, snap.epoch);
    const rest = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=5');
    assert.equal(rest.status, 200);
    assert.equal(rest.body.epoch, snap.epoch);
    first.ws.close();

    await write(writer, 'user:a', 5);
    await write(writer, 'user:b', 6);

    const back = await h.connectWs(t, gw.wsUrl, { token: null });
    const again = await back.request({ op: 'subscribe', board: 'demo', view: { feed: true },
      since: { seq: 3, epoch: snap.epoch } });
    assert.equal(again.op, 'snapshot');
    assert.equal(again.reset, undefined, JSON.stringify(again));
    assert.equal(again.epoch, snap.epoch);
    assert.equal((await back.next({ op: 'event', seq: 4 }, 5000)).member, 'user:a');
    assert.equal((await back.next({ op: 'event', seq: 5 }, 5000)).member, 'user:b');

    // v1: since without an epoch keeps its meaning
    const v1 = await h.connectWs(t, gw.wsUrl, { token: null });
    const old = await v1.request({ op: 'subscribe', board: 'demo', view: { feed: true }, since: { seq: 4 } });
    assert.equal(old.reset, undefined);
    assert.equal((await v1.next({ op: 'event' }, 5000)).seq, 5);

    // a window view resumed with its own epoch: a plain snapshot
    const w = await v1.request({ op: 'subscribe', board: 'demo', view: { top: 3 }, since: { seq: 3, epoch: snap.epoch } });
    assert.equal(w.reset, undefined);
    assert.equal(w.epoch, snap.epoch);
  });

test('since.epoch is checked: a string of at most 32 letters and digits', async (t) => {
  const { gw } = await h.startStack(t);
  const ws = await h.connectWs(t, gw.wsUrl, { token: null });
  for (const epoch of [5, null, 'a-b', 'x'.repeat(33), { id: 'a' }]) {
    const r = await ws.request({ op: 'subscribe', board: 'demo', view: { feed: true }, since: { seq: 1, epoch } });
    assert.equal(r.op, 'error', JSON.stringify({ epoch, r }));
    assert.equal(r.code, 'bad_request');
    assert.match(r.message, /since\.epoch/);
  }
  const ok = await ws.request({ op: 'subscribe', board: 'demo', view: { feed: true }, since: { seq: 0, epoch: '' } });
  assert.equal(ok.op, 'snapshot', JSON.stringify(ok));
});

/* The scenario each way of starting a board's history over goes through:
 * 5 writes (seq 5, epoch E1) seen by a feed and a window, both closed;
 * a viewer of each kind that stays; the change; 8 writes of the new history
 * (its seq past 5); then resumes naming E1. */
async function startsOver(t, change, { keepsMembers = false } = {}) {
  const stack = await h.startStack(t);
  const { gw } = stack;
  const writer = await h.connectWs(t, gw.wsUrl);
  for (let i = 0; i < 5; i++) await write(writer, `old:${i}`, 100 + i);

  const gone = await h.connectWs(t, gw.wsUrl, { token: null });
  const feedSnap = await gone.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
  assert.equal(feedSnap.seq, 5);
  const e1 = feedSnap.epoch;
  assert.match(e1, EPOCH_RE);
  gone.ws.close();

  const stay = await h.connectWs(t, gw.wsUrl, { token: null });
  const staySnap = await stay.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
  assert.equal(staySnap.epoch, e1);
  const stayed = collect(stay, staySnap.sub);
  const win = await stay.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  const winGot = collect(stay, win.sub);

  await change(stack);
  const after = [];
  let lastSeq = 0;
  for (let i = 0; i < 8; i++) {
    const ack = await h.waitFor(async () => {
      try {
        return await writer.request({ op: 'incr', board: 'demo', member: `new:${i}`, delta: 1 + i }, 3000);
      } catch (e) {
        return null;
      }
    }, 20000, `write ${i} of the new history`);
    if (ack.op !== 'ack') { i--; await h.sleep(200); continue; } // Redis still coming back
    after.push(ack.seq);
    lastSeq = ack.seq;
  }
  assert.ok(lastSeq > 5, `the new history's seq ${lastSeq} has grown past the old 5`);
  const current = Number(await stack.redis.cli('GET', 'rc:{demo|}:seq'));
  assert.equal(current, lastSeq);

  // A feed resumed with the old epoch: a reset snapshot of the new history, no replay.
  const back = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await back.request({ op: 'subscribe', board: 'demo', view: { feed: true }, since: { seq: 5, epoch: e1 } });
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  assert.equal(snap.reset, true, JSON.stringify(snap));
  assert.match(snap.epoch, EPOCH_RE);
  assert.notEqual(snap.epoch, e1);
  assert.equal(snap.seq, current);
  // Nothing from before: the next event is the next write's, nothing in between.
  await write(writer, 'new:last', 1);
  const ev = await back.next({ op: 'event' }, 5000);
  assert.equal(ev.seq, current + 1, JSON.stringify(back.messages));
  assert.equal(ev.member, 'new:last');

  // The same resume in the new epoch replays (the history goes on).
  const more = await h.connectWs(t, gw.wsUrl, { token: null });
  const cont = await more.request({ op: 'subscribe', board: 'demo', view: { feed: true },
    since: { seq: current, epoch: snap.epoch } });
  assert.equal(cont.reset, undefined, JSON.stringify(cont));
  assert.equal((await more.next({ op: 'event' }, 5000)).seq, current + 1);

  // A window view resumed with the old epoch: reset, rows of the new history
  // only (a deleted seq alone leaves the members: the history of changes
  // starts over, the standings stay).
  const w = await back.request({ op: 'subscribe', board: 'demo', view: { top: 20 }, since: { seq: 5, epoch: e1 } });
  assert.equal(w.reset, true, JSON.stringify(w));
  assert.equal(w.epoch, snap.epoch);
  assert.equal(w.rows.filter((r) => r.member.startsWith('old:')).length, keepsMembers ? 5 : 0);
  assert.equal(w.rows.length, keepsMembers ? 14 : 9);

  // The feed viewer that stayed: started over (a reset snapshot: in the new
  // epoch, or in none when Redis came back empty and the new history's first
  // event then names its epoch), then the new history's events, none of the
  // old one's replayed.
  await h.waitFor(() => stayed.some((m) => m.op === 'event' && m.seq === current + 1), 10000,
    'the staying feed to reach the last write');
  const resetAt = stayed.findLastIndex((m) => m.op === 'snapshot' && m.reset === true);
  assert.ok(resetAt >= 0, JSON.stringify(stayed));
  let known = stayed[resetAt].epoch;
  for (const m of stayed.slice(resetAt + 1)) if (m.epoch) known = m.epoch;
  assert.equal(known, snap.epoch, JSON.stringify(stayed));
  const evs = stayed.slice(resetAt + 1).filter((m) => m.op === 'event');
  assert.ok(evs.every((m) => m.member.startsWith('new:')), JSON.stringify(stayed));
  for (let i = 1; i < evs.length; i++) assert.equal(evs[i].seq, evs[i - 1].seq + 1, JSON.stringify(evs));
  assert.equal(evs.at(-1).seq, current + 1);

  // The window viewer that stayed: a snapshot in the new epoch, and it ends
  // showing the new history only.
  await h.waitFor(() => winGot.some((m) => m.op === 'snapshot' && m.epoch === snap.epoch) ||
    winGot.some((m) => m.op === 'delta' && m.epoch === snap.epoch), 10000, 'the window to learn the new epoch');
  const top = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=20');
  assert.equal(top.body.epoch, snap.epoch);
  assert.equal(top.body.rows.length, keepsMembers ? 14 : 9);
  return { e1, e2: snap.epoch };
}

test('after an admin reset a resume with the old epoch starts over', { timeout: 60000 }, async (t) => {
  await startsOver(t, async ({ gw }) => {
    const admin = await h.connectWs(t, gw.wsUrl);
    const r = await admin.request({ op: 'reset', board: 'demo' });
    assert.equal(r.op, 'board_reset', JSON.stringify(r));
  });
});

test('after FLUSHALL a resume with the old epoch starts over', { timeout: 60000 }, async (t) => {
  await startsOver(t, async ({ redis }) => {
    assert.equal(await redis.cli('FLUSHALL'), 'OK');
  });
});

test('after a DEL of the board key from redis-cli a resume with the old epoch starts over', { timeout: 60000 },
  async (t) => {
    await startsOver(t, async ({ redis }) => {
      assert.equal(await redis.cli('DEL', 'rc:{demo|}:z'), '1');
    });
  });

test('after a DEL of the board\'s seq from redis-cli a resume with the old epoch starts over', { timeout: 60000 },
  async (t) => {
    await startsOver(t, async ({ redis }) => {
      assert.equal(await redis.cli('DEL', 'rc:{demo|}:seq'), '1');
    }, { keepsMembers: true });
  });

test('after a Redis restart without persistence a resume with the old epoch starts over', { timeout: 90000 },
  async (t) => {
    await startsOver(t, async (stack) => {
      const port = stack.redis.port;
      await stack.redis.stop();
      stack.redis = await h.startRedis(t, { port });
      // empty (a viewer count the gateway may already have written back aside)
      const keys = (await stack.redis.cli('KEYS', '*')).split('\n').filter((k) => k && !k.endsWith(':viewers'));
      assert.deepEqual(keys, []);
    });
  });

test('removing the last member keeps the history: a resume replays', async (t) => {
  const { gw } = await h.startStack(t);
  const writer = await h.connectWs(t, gw.wsUrl);
  await write(writer, 'only:1', 3);
  const v = await h.connectWs(t, gw.wsUrl, { token: null });
  const snap = await v.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
  v.ws.close();
  const r = await writer.request({ op: 'remove', board: 'demo', member: 'only:1' });
  assert.equal(r.op, 'removed', JSON.stringify(r));
  await write(writer, 'only:2', 4);
  const back = await h.connectWs(t, gw.wsUrl, { token: null });
  const again = await back.request({ op: 'subscribe', board: 'demo', view: { feed: true },
    since: { seq: snap.seq, epoch: snap.epoch } });
  assert.equal(again.reset, undefined, JSON.stringify(again));
  assert.equal(again.epoch, snap.epoch);
  assert.equal((await back.next({ op: 'event', seq: snap.seq + 2 }, 5000)).member, 'only:2');
});
