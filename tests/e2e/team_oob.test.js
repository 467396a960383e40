/* team_oob.test.js - a team membership changed outside rankcast (redis-cli
 * HSET/HDEL/DEL on rc:{B|}:tm, docs/teams.md "Changes made outside
 * rankcast") reaches the rows' "team" and the rosters of the source board's
 * live viewers, without a reconnect: the gateway hears the hash's keyspace
 * notifications, and one that no team message of lua/write.lua explains
 * reads the membership again (roster viewers get a fresh snapshot). Team
 * ops made through rankcast read nothing more. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const TM = 'rc:{players|}:tm';

async function watch(t, gw, view) {
  const c = await h.connectWs(t, gw.wsUrl, { token: null });
  const v = { rows: [], absent: [], total: -1, snapshots: 0 };
  let sub = null;
  c.ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (sub === null || m.sub !== sub) return;
    if (m.op === 'snapshot') {
      v.rows = m.rows; v.absent = m.absent || []; v.total = m.total; v.snapshots++;
    } else if (m.op === 'delta') {
      const gone = new Set([...(m.removed || []), ...(m.rows || []).map((r) => r.member)]);
      v.rows = v.rows.filter((r) => !gone.has(r.member)).concat(m.rows || []).sort((a, b) => a.rank - b.rank);
      if (m.total !== undefined && view.team === undefined) v.total = m.total;
    }
  });
  const snap = await c.request({ op: 'subscribe', board: 'players', view }, 10000);
  assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
  sub = snap.sub;
  v.rows = snap.rows; v.absent = snap.absent || []; v.total = snap.total;
  return v;
}

const roster = (v) => `${v.total}: ${v.rows.map((r) => r.member).join(',')} | ${[...v.absent].sort().join(',')}`;
const teams = (v) => v.rows.map((r) => `${r.member}=${r.team || '-'}`).join(' ');

async function hgetalls(redis) {
  const s = await redis.cli('INFO', 'commandstats');
  const m = /cmdstat_hgetall:calls=(\d+)/.exec(s);
  return m ? Number(m[1]) : 0;
}

/* The count once the reads an out-of-band change caused are all done (the
 * view shows the change after its first read; the rows' teams may read a
 * moment later): the same over three reads 300 ms apart. */
async function settled(count) {
  let last = await count();
  for (let same = 0; same < 3;) {
    await h.sleep(300);
    const now = await count();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

test('a membership changed with redis-cli reaches rows and rosters without a reconnect', { skip, timeout: 60000 }, async (t) => {
  const { redis, gw } = await h.startStack(t);
  const w = await h.connectWs(t, gw.wsUrl);
  for (const [member, delta] of [['ann', 30], ['bob', 20], ['cat', 10]])
    assert.equal((await w.request({ op: 'incr', board: 'players', member, delta }, 10000)).op, 'ack');
  for (const member of ['ann', 'bob'])
    assert.equal((await w.request({ op: 'team', board: 'players', member, team: 'red' }, 10000)).op, 'teamed');
  const r = await watch(t, gw, { team: 'red' });
  const top = await watch(t, gw, { top: 10 });
  assert.equal(roster(r), '2: ann,bob | ');
  assert.equal(teams(top), 'ann=red bob=red cat=-');

  // an operator puts cat on red by hand (and keeps the count, as write.lua does)
  await redis.cli('HSET', TM, 'cat', 'red');
  await redis.cli('HINCRBY', TM, '#red', '1');
  await h.waitFor(() => roster(r) === '3: ann,bob,cat | ', 10000, `cat in the roster (${roster(r)})`);
  await h.waitFor(() => teams(top) === 'ann=red bob=red cat=red', 10000, `cat's row on red (${teams(top)})`);

  // and takes ann off by hand
  await redis.cli('HDEL', TM, 'ann');
  await h.waitFor(() => roster(r) === '2: bob,cat | ', 10000, `ann out of the roster (${roster(r)})`);
  await h.waitFor(() => teams(top) === 'ann=- bob=red cat=red', 10000, `ann's row on no team (${teams(top)})`);

  // the whole membership deleted
  await redis.cli('DEL', TM);
  await h.waitFor(() => roster(r) === '0:  | ', 10000, `an empty roster (${roster(r)})`);
  await h.waitFor(() => teams(top) === 'ann=- bob=- cat=-', 10000, `no teams on rows (${teams(top)})`);

  // team ops through rankcast are explained by their own messages: no
  // membership read for them (each read is one HGETALL)
  const before = await settled(() => hgetalls(redis));
  for (let i = 0; i < 30; i++) {
    const member = ['ann', 'bob', 'cat', 'dan'][i % 4];
    const team = ['red', 'blue', null][i % 3];
    assert.equal((await w.request({ op: 'team', board: 'players', member, team }, 10000)).op, 'teamed');
  }
  await h.sleep(500);
  assert.equal(await hgetalls(redis), before, 'team ops through rankcast read the membership again');
  // and the roster is right after them
  const tm = (await redis.cli('HGETALL', TM)).split('\n');
  const red = [];
  for (let i = 0; i + 1 < tm.length; i += 2) if (!tm[i].startsWith('#') && tm[i + 1] === 'red') red.push(tm[i]);
  await h.waitFor(() => [...r.rows.map((x) => x.member), ...r.absent].sort().join(',') === red.sort().join(','), 10000,
    `the roster after team ops (${roster(r)} vs ${red})`);
});

test('on the 3+3 cluster too: a membership changed with redis-cli reaches a roster; team ops read nothing', { skip, timeout: 120000 }, async (t) => {
  const cluster = await h.startCluster(t, { primaries: 3, replicas: 1 });
  const gw = await h.startGateway(t, { redis: cluster.seeds });
  const w = await h.connectWs(t, gw.wsUrl);
  for (const [member, delta] of [['ann', 30], ['bob', 20], ['cat', 10]])
    assert.equal((await w.request({ op: 'incr', board: 'players', member, delta }, 10000)).op, 'ack');
  assert.equal((await w.request({ op: 'team', board: 'players', member: 'ann', team: 'red' }, 10000)).op, 'teamed');
  const r = await watch(t, gw, { team: 'red' });
  assert.equal(roster(r), '1: ann | ');
  const port = await cluster.owner(TM);
  await cluster.cli(port, 'HSET', TM, 'cat', 'red');
  await h.waitFor(() => roster(r) === '2: ann,cat | ', 15000, `cat in the roster (${roster(r)})`);
  const stats = async () => {
    const s = await cluster.cli(port, 'INFO', 'commandstats');
    const m = /cmdstat_hgetall:calls=(\d+)/.exec(s);
    return m ? Number(m[1]) : 0;
  };
  const before = await settled(stats);
  for (let i = 0; i < 20; i++) {
    const team = ['red', 'blue', null][i % 3];
    assert.equal((await w.request({ op: 'team', board: 'players', member: ['bob', 'dan'][i % 2], team }, 10000)).op, 'teamed');
  }
  await h.sleep(500);
  assert.equal(await stats(), before, 'team ops through rankcast read the membership again');
});
