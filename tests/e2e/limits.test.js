/* limits.test.js - the gateway's protective limits ([limits] in the config):
 * max_frame (a bigger WebSocket message closes with 1009; fragments count
 * together), binary floods (each binary frame is a bad_request, the 9th
 * closes with 1008), max_subs_per_conn (too_large, the connection stays
 * usable), max_conns (the next handshake is refused until a slot frees), and
 * the listen address: 127.0.0.1 must not also be served on [::1]. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const h = require('./harness');

const skip = h.toolMissing(h.gatewayMissing());
const ZKEY = 'rc:{demo|}:z';
const MAX_FRAME = 64 * 1024; // the shipped default, set explicitly below so a change there does not break this
const frameConfig = (t) => h.configWith(t, { limits: { max_frame: '64k' } });

/* A JSON text of exactly `size` bytes: obj plus a "pad" string filling it up. */
function padded(obj, size) {
  const bare = JSON.stringify(Object.assign({}, obj, { pad: '' }));
  assert.ok(size >= bare.length);
  return JSON.stringify(Object.assign({}, obj, { pad: 'x'.repeat(size - bare.length) }));
}

async function closedWith(c, code, ms = 3000) {
  const timer = new Promise((_, reject) => setTimeout(() => reject(new Error(`not closed within ${ms} ms`)), ms));
  const res = await Promise.race([c.closed, timer]);
  assert.equal(res.code, code, `close code ${res.code} (${res.reason})`);
  return res;
}

test('max_frame: a message of exactly 64k is served, one byte more closes with 1009 and writes nothing',
  { skip, timeout: 30000 }, async (t) => {
    const { redis, gw } = await h.startStack(t, { config: frameConfig(t) });
    const c = await h.connectWs(t, gw.wsUrl);
    const exact = padded({ op: 'incr', board: 'demo', member: 'user:exact', delta: 7, id: 'exact' }, MAX_FRAME);
    assert.equal(Buffer.byteLength(exact), MAX_FRAME);
    c.sendRaw(exact);
    const ack = await c.next({ id: 'exact' });
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    assert.equal(ack.score, 7);

    const fp = await redis.fingerprint();
    const over = padded({ op: 'incr', board: 'demo', member: 'user:over', delta: 7, id: 'over' }, MAX_FRAME + 1);
    c.sendRaw(over);
    await closedWith(c, 1009);
    assert.equal(c.messages.some((m) => m.id === 'over'), false, 'the oversize message was not answered');
    assert.equal(await redis.cli('ZSCORE', ZKEY, 'user:over'), '');
    assert.equal(await redis.fingerprint(), fp);

    // The gateway is fine: a new connection works.
    const again = await h.connectWs(t, gw.wsUrl);
    assert.equal((await again.request({ op: 'ping' })).op, 'pong');
    // and the close is counted (docs/security.md: every budget has its metric)
    const m = (await h.http(gw.base, 'GET', '/metrics')).text;
    assert.match(m, /^rankcast_ws_closes_total\{reason="too_large"\} 1$/m);
  });

test('max_frame counts a fragmented message as a whole; fragments under the limit reassemble',
  { skip, timeout: 30000 }, async (t) => {
    const { redis, gw } = await h.startStack(t, { config: frameConfig(t) });
    const c = await h.connectWs(t, gw.wsUrl);
    // Under the limit, in three fragments: one message, one reply.
    const text = padded({ op: 'incr', board: 'demo', member: 'user:frag', delta: 3, id: 'frag' }, 40000);
    c.sendRaw(text.slice(0, 10), { fin: false });
    c.sendRaw(text.slice(10, 30000), { fin: false });
    c.sendRaw(text.slice(30000), { fin: true });
    const ack = await c.next({ id: 'frag' });
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');

    // Over the limit in fragments that are each small: closed with 1009.
    const big = padded({ op: 'incr', board: 'demo', member: 'user:bigfrag', delta: 3, id: 'bigfrag' }, MAX_FRAME + 1000);
    const step = 16 * 1024;
    for (let i = 0; i < big.length; i += step)
      c.sendRaw(big.slice(i, i + step), { fin: i + step >= big.length });
    await closedWith(c, 1009);
    assert.equal(await redis.cli('ZSCORE', ZKEY, 'user:bigfrag'), '');
  });

test('binary frames: each is a bad_request; more than 8 close the connection with 1008',
  { skip, timeout: 30000 }, async (t) => {
    const { redis, gw } = await h.startStack(t);
    const c = await h.connectWs(t, gw.wsUrl);
    const fp = await redis.fingerprint();
    // Valid JSON, but binary: refused all the same.
    const frame = Buffer.from(JSON.stringify({ op: 'incr', board: 'demo', member: 'user:bin', delta: 1 }));
    for (let i = 1; i <= 8; i++) {
      c.sendRaw(frame, { binary: true });
      const err = await c.next({ op: 'error' });
      assert.equal(err.code, 'bad_request', JSON.stringify(err));
    }
    // Eight is tolerated: the connection still serves.
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');
    assert.equal(c.isClosed, false);
    c.sendRaw(frame, { binary: true });
    await closedWith(c, 1008);
    assert.equal(c.messages.filter((m) => m.op === 'error').length, 8);
    assert.equal(await redis.cli('ZSCORE', ZKEY, 'user:bin'), '');
    assert.equal(await redis.fingerprint(), fp);
  });

test('max_subs_per_conn: the next subscribe is too_large, the connection and its subscriptions carry on',
  { skip, timeout: 30000 }, async (t) => {
    const config = h.configWith(t, { limits: { max_subs_per_conn: 3 } });
    const { gw } = await h.startStack(t, { config });
    const c = await h.connectWs(t, gw.wsUrl);
    const subs = [];
    for (const view of [{ top: 5 }, { feed: true }, { offset: 0, limit: 3 }]) {
      const snap = await c.request({ op: 'subscribe', board: 'demo', view });
      assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
      subs.push(snap.sub);
    }
    const refused = await c.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
    assert.equal(refused.op, 'error');
    assert.equal(refused.code, 'too_large', JSON.stringify(refused));
    assert.equal(typeof refused.id, 'number');
    assert.equal((await c.request({ op: 'ping' })).op, 'pong');

    // The three subscriptions still deliver.
    const ack = await c.request({ op: 'incr', board: 'demo', member: 'user:s', delta: 4 });
    assert.equal(ack.op, 'ack', JSON.stringify(ack));
    await c.next((m) => m.sub === subs[1] && m.op === 'event' && m.member === 'user:s');
    await c.next((m) => m.sub === subs[0] && (m.op === 'delta' || m.op === 'snapshot'));

    // A freed slot can be used again; the limit still holds after it.
    assert.equal((await c.request({ op: 'unsubscribe', sub: subs[2] })).op, 'unsubscribed');
    assert.equal((await c.request({ op: 'subscribe', board: 'demo', view: { top: 1 } })).op, 'snapshot');
    assert.equal((await c.request({ op: 'subscribe', board: 'demo', view: { top: 2 } })).code, 'too_large');
    // The limit is per connection.
    const other = await h.connectWs(t, gw.wsUrl);
    assert.equal((await other.request({ op: 'subscribe', board: 'demo', view: { top: 2 } })).op, 'snapshot');
  });

test('max_conns: with max_conns = 3 the 4th WebSocket handshake is refused, and a slot frees when one closes',
  { skip, timeout: 30000 }, async (t) => {
    const config = h.configWith(t, { limits: { max_conns: 3 } });
    const { gw } = await h.startStack(t, { config });
    const conns = [];
    // Every socket counts from accept: retry while the harness's own HTTP
    // check (closed after its answer) may still be open on the gateway's side.
    for (let i = 0; i < 3; i++) {
      conns.push(await h.waitFor(() => h.connectWs(t, gw.wsUrl).catch(() => null), 3000, `connection ${i + 1}`));
    }
    await assert.rejects(h.connectWs(null, gw.wsUrl), 'the 4th handshake is refused');
    // Refused, not accepted and then dropped: the three are unaffected.
    for (const c of conns) assert.equal((await c.request({ op: 'ping' })).op, 'pong');
    await assert.rejects(h.connectWs(null, gw.wsUrl), 'still refused while three are open');

    await conns[0].close();
    const fourth = await h.waitFor(() => h.connectWs(null, gw.wsUrl).catch(() => null), 3000,
      'a handshake to succeed once a slot is free');
    h.defer(t, () => fourth.close());
    assert.equal((await fourth.request({ op: 'ping' })).op, 'pong');
    await assert.rejects(h.connectWs(null, gw.wsUrl), 'full again');
  });

/* Whether this machine has an IPv6 loopback at all (bindable ::1). */
function hasIpv6Loopback() {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(0, '::1', () => srv.close(() => resolve(true)));
  });
}

function tcpConnect(host, port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    sock.setTimeout(2000, () => { sock.destroy(); resolve('timeout'); });
    sock.once('connect', () => { sock.destroy(); resolve('connected'); });
    sock.once('error', (e) => resolve(e.code));
  });
}

test('listening on 127.0.0.1 does not also serve [::1] on the same port', { skip, timeout: 30000 }, async (t) => {
  if (!(await hasIpv6Loopback())) {
    if (h.inCI()) assert.fail('CI: this machine has no IPv6 loopback (::1 cannot be bound); the test cannot run');
    t.skip('this machine has no IPv6 loopback (::1 cannot be bound)');
    return;
  }
  const { gw } = await h.startStack(t);
  assert.equal(await tcpConnect('127.0.0.1', gw.port), 'connected');
  assert.equal(await tcpConnect('::1', gw.port), 'ECONNREFUSED');
  await assert.rejects(h.connectWs(null, `ws://[::1]:${gw.port}/ws`));
});
