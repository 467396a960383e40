/* metrics.test.js - /metrics speaks the Prometheus text format and its
 * counters follow what happens; /healthz says whether Redis is reachable. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

/* name{labels} -> value, from the text exposition format. */
function parse(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    assert.ok(m, `not an exposition line: ${line}`);
    out.set(m[1], Number(m[2]));
  }
  return out;
}

test('/metrics counts connections, subscriptions, writes, errors, deltas and round trips', async (t) => {
  const { gw } = await h.startStack(t);
  let r = await h.http(gw.base, 'GET', '/metrics');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/plain/);
  const before = parse(r.text);
  for (const name of ['rankcast_redis_up', 'rankcast_connections', 'rankcast_subscriptions{view="top"}',
    'rankcast_writes_total{op="incr"}', 'rankcast_errors_total{code="bad_request"}', 'rankcast_deltas_sent_total',
    'rankcast_snapshots_sent_total', 'rankcast_bytes_sent_total', 'rankcast_queue_drops_total',
    'rankcast_redis_reconnects_total', 'rankcast_script_rtt_seconds_count', 'rankcast_script_rtt_seconds_bucket{le="+Inf"}'])
    assert.ok(before.has(name), `missing ${name}`);
  assert.equal(before.get('rankcast_redis_up'), 1);

  const c = await h.connectWs(t, gw.wsUrl);
  const snap = await c.request({ op: 'subscribe', board: 'demo', view: { top: 10 } });
  await c.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
  for (let i = 0; i < 5; i++) await c.request({ op: 'incr', board: 'demo', member: `user:${i}`, delta: 10 + i });
  await c.request({ op: 'incr', board: 'nope', member: 'x', delta: 1 });
  await c.next({ op: 'delta', sub: snap.sub });

  r = await h.http(gw.base, 'GET', '/metrics');
  const after = parse(r.text);
  assert.equal(after.get('rankcast_connections'), 1);
  assert.equal(after.get('rankcast_subscriptions{view="top"}'), 1);
  assert.equal(after.get('rankcast_subscriptions{view="feed"}'), 1);
  assert.equal(after.get('rankcast_writes_total{op="incr"}') - before.get('rankcast_writes_total{op="incr"}'), 5);
  assert.equal(after.get('rankcast_errors_total{code="unknown_board"}'), 1);
  assert.ok(after.get('rankcast_deltas_sent_total') >= 6); // 5 feed events + at least one delta
  assert.ok(after.get('rankcast_bytes_sent_total') > before.get('rankcast_bytes_sent_total'));
  assert.equal(after.get('rankcast_script_rtt_seconds_count'), 5);
  assert.equal(after.get('rankcast_script_rtt_seconds_bucket{le="+Inf"}'), 5);

  await c.close();
  await h.waitFor(async () => parse((await h.http(gw.base, 'GET', '/metrics')).text).get('rankcast_connections') === 0,
    2000, 'the closed connection to be counted out');
  const end = parse((await h.http(gw.base, 'GET', '/metrics')).text);
  assert.equal(end.get('rankcast_subscriptions{view="top"}'), 0);
});
