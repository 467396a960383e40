/* jwt.test.js - JSON Web Tokens wherever an API key is accepted
 * (docs/protocol-additions.md "Tokens", docs/security.md): HS256 with
 * [auth] jwt_secret, RS256 / ES256 with jwt_public_key; scopes, board
 * patterns, exp (required) with the jwt_skew allowance; alg none and the
 * HS256-with-the-public-key confusion refused; the auth op refreshing a
 * WebSocket in place; views stopped with unauthorized when a token expires
 * unrefreshed; REST Bearer and ?token=; `rankcast token`; the audit stream's
 * who = jwt:SUB. Expiry is reached with the test clock, not by waiting.
 * Tokens are made here with node:crypto; RSA and EC keys with openssl. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const h = require('./harness');

function opensslMissing() {
  const r = spawnSync('openssl', ['version']);
  return r.status === 0 ? null : 'openssl is not installed';
}
const skip = h.toolMissing(h.gatewayMissing() || opensslMissing());

const SECRET = 'jwt-e2e-secret-0123456789abcdef0123456789';
const OTHER_SECRET = 'jwt-e2e-other-secret-0123456789abcdef0000';

/* ---- tokens ---------------------------------------------------------------- */

const b64u = (x) => Buffer.from(x).toString('base64url');

/* A compact JWT: alg HS256 (key: the HMAC secret, any string, e.g. a PEM),
 * RS256 / ES256 (key: a private key PEM), or none (no signature). */
function sign(alg, claims, key, extraHeader = {}) {
  const input = `${b64u(JSON.stringify({ alg, typ: 'JWT', ...extraHeader }))}.${b64u(JSON.stringify(claims))}`;
  let sig;
  if (alg === 'HS256') sig = crypto.createHmac('sha256', key).update(input).digest();
  else if (alg === 'RS256') sig = crypto.sign('sha256', Buffer.from(input), key);
  else if (alg === 'ES256') sig = crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  else sig = Buffer.alloc(0);
  return `${input}.${b64u(sig)}`;
}

/* RSA 2048 and EC P-256 key pairs made by openssl in a temp dir. */
function makeKeys(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-jwt-'));
  h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const f = (n) => path.join(dir, n);
  const ossl = (...a) => execFileSync('openssl', a, { stdio: ['ignore', 'pipe', 'pipe'] });
  ossl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', f('rsa.pem'));
  ossl('pkey', '-in', f('rsa.pem'), '-pubout', '-out', f('rsa.pub.pem'));
  ossl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', f('ec.pem'));
  ossl('pkey', '-in', f('ec.pem'), '-pubout', '-out', f('ec.pub.pem'));
  ossl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024', '-out', f('small.pem'));
  ossl('pkey', '-in', f('small.pem'), '-pubout', '-out', f('small.pub.pem'));
  const read = (n) => fs.readFileSync(f(n), 'utf8');
  return {
    dir, rsaPub: f('rsa.pub.pem'), ecPub: f('ec.pub.pem'), smallPub: f('small.pub.pem'), rsaPriv: f('rsa.pem'),
    rsa: read('rsa.pem'), rsaPubPem: read('rsa.pub.pem'), ec: read('ec.pem'),
  };
}

/* ---- helpers ---------------------------------------------------------------- */

/* The gateway's clock: real time plus the offset the test clock was given. */
function clock(gw) {
  let offset = 0;
  return {
    nowS: () => Math.floor((Date.now() + offset) / 1000),
    async shift(ms) {
      offset += ms;
      const r = await h.http(gw.base, 'POST', '/api/v1/debug/clock', { offset_ms: offset });
      assert.equal(r.status, 200, r.text);
    },
  };
}

function assertError(reply, code, re) {
  assert.equal(reply.op, 'error', `expected ${code}, got ${JSON.stringify(reply)}`);
  assert.equal(reply.code, code, JSON.stringify(reply));
  if (re) assert.match(reply.message, re);
}

const incr = (board, member, delta = 1) => ({ op: 'incr', board, member, delta });
const sub = (board, top = 5) => ({ op: 'subscribe', board, view: { top } });
const post = (gw, board, body, opts) => h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, body, opts);

async function hsStack(t) {
  const config = h.configWith(t, {
    server: { test_clock: 'on' },
    auth: { reads: 'key', jwt_secret: SECRET, jwt_skew: '20s' },
  });
  // (the test clock beside a JWT secret needs RANKCAST_ALLOW_TEST_CLOCK=1:
  // moving the clock moves token expiry)
  const s = await h.startStack(t, { config, env: { RANKCAST_ALLOW_TEST_CLOCK: '1' } });
  return { ...s, config, clk: clock(s.gw) };
}

async function auditEntries(redis) {
  const out = (await redis.cli('XRANGE', 'rc:audit', '-', '+')).split('\n');
  const entries = [];
  for (let i = 0; i < out.length; i++) {
    if (out[i] === 'who') entries.push({ who: out[i + 1] });
    else if (entries.length && ['op', 'board', 'member', 'req', 'seq'].includes(out[i])) entries.at(-1)[out[i]] = out[i + 1];
  }
  return entries;
}

/* ---- HS256 ------------------------------------------------------------------- */

test('HS256 tokens: scopes, boards, exp and skew, bad signatures, alg none, REST', { skip, timeout: 60000 }, async (t) => {
  const { redis, gw, clk } = await hsStack(t);
  const hs = (claims, key = SECRET) => sign('HS256', { exp: clk.nowS() + 600, ...claims }, key);

  await t.test('scope read reads its board and is forbidden to write', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ sub: 'viewer', scope: 'read', boards: ['demo'] }) });
    assert.equal((await c.request(sub('demo'))).op, 'snapshot');
    assertError(await c.request(sub('laps')), 'forbidden'); // not its board (reads = key)
    const fp = await redis.fingerprint();
    assertError(await c.request(incr('demo', 'user:ro')), 'forbidden');
    assert.equal(await redis.fingerprint(), fp);
  });

  await t.test('scope write writes; without read it may not subscribe (reads = key); not admin', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ scope: 'write' }), tokenIn: 'header' });
    const a = await c.request(incr('demo', 'user:w', 7));
    assert.equal(a.op, 'ack', JSON.stringify(a));
    assert.equal(a.score, 7);
    assertError(await c.request(sub('demo')), 'forbidden');
    assertError(await c.request({ op: 'reset', board: 'match:9' }), 'forbidden');
  });

  await t.test('scope admin may run admin operations', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ scope: 'admin write' }) });
    assert.equal((await c.request(incr('match:9', 'user:a', 3))).op, 'ack');
    const r = await c.request({ op: 'reset', board: 'match:9' });
    assert.equal(r.op, 'board_reset', JSON.stringify(r));
  });

  await t.test('boards limit a token to its patterns', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ scope: 'read write', boards: ['match:*'] }) });
    assert.equal((await c.request(incr('match:5', 'user:m'))).op, 'ack');
    const fp = await redis.fingerprint();
    assertError(await c.request(incr('demo', 'user:m')), 'forbidden', /does not cover board 'demo'/);
    assertError(await c.request(sub('laps')), 'forbidden');
    assert.equal(await redis.fingerprint(), fp);
  });

  await t.test('expired beyond the skew, bad signature, alg none, no exp: unauthorized, nothing written', async () => {
    const now = clk.nowS();
    const cases = [
      [hs({ scope: 'write', exp: now - 60 }), /expired/],
      [hs({ scope: 'write' }, OTHER_SECRET), /signature/],
      [sign('none', { scope: 'write', exp: now + 600 }, null), /algorithm 'none' is refused/],
      [sign('HS256', { scope: 'write' }, SECRET), /no exp/],
      [hs({ scope: 'write' }).replace(/\.[^.]*$/, '.'), /signature/], // signature stripped
      [sign('HS384', { scope: 'write', exp: now + 600 }, SECRET), /algorithm 'HS384' is refused/],
    ];
    const fp = await redis.fingerprint();
    for (const [tok, re] of cases) {
      const c = await h.connectWs(t, gw.wsUrl, { token: tok });
      assertError(await c.request(incr('demo', 'user:bad')), 'unauthorized', re);
      assertError(await c.request(sub('demo')), 'unauthorized', re);
      assert.ok(!JSON.stringify(c.messages).includes(tok.split('.')[2] || '~'), 'the token shows in a reply');
      const rest = await post(gw, 'demo', { op: 'incr', member: 'user:bad', delta: 1 }, { token: tok });
      assert.equal(rest.status, 401, rest.text);
      assert.match(rest.body.message, re);
    }
    assert.equal(await redis.fingerprint(), fp);
  });

  await t.test('a token expired within jwt_skew still counts', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ scope: 'write', exp: clk.nowS() - 5 }) });
    assert.equal((await c.request(incr('demo', 'user:skew'))).op, 'ack');
  });

  await t.test('REST: Authorization: Bearer JWT and ?token=JWT', async () => {
    const tok = hs({ scope: 'read write', boards: ['demo'] });
    const a = await post(gw, 'demo', { op: 'incr', member: 'user:rest', delta: 2 }, { token: tok });
    assert.equal(a.status, 200, a.text);
    const b = await h.http(gw.base, 'POST', `/api/v1/boards/demo/scores?token=${tok}`,
      { op: 'incr', member: 'user:rest', delta: 3 }, { token: null });
    assert.equal(b.status, 200, b.text);
    assert.equal(b.body.score, 5);
    const g = await h.http(gw.base, 'GET', `/api/v1/boards/demo?top=3&token=${tok}`, null, { token: null });
    assert.equal(g.status, 200, g.text);
    const l = await h.http(gw.base, 'GET', '/api/v1/boards/laps?top=3', null, { token: tok });
    assert.equal(l.status, 403, l.text);
    const n = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=3', null, { token: null });
    assert.equal(n.status, 401, n.text); // reads = key
  });

  await t.test('token writes land in the audit stream as jwt:SUB', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ sub: 'overlay-7', scope: 'write' }) });
    assert.equal((await c.request({ ...incr('demo', 'user:aud', 4), req: 'aud-1' })).op, 'ack');
    const rest = await post(gw, 'demo', { op: 'set', member: 'user:aud2', value: 9 },
      { token: hs({ sub: 'svc@tools', scope: 'write' }) });
    assert.equal(rest.status, 200, rest.text);
    const admin = await h.connectWs(t, gw.wsUrl, { token: hs({ sub: 'caster', scope: 'admin' }) });
    assert.equal((await admin.request({ op: 'reset', board: 'match:9' })).op, 'board_reset');
    await h.waitFor(async () => (await auditEntries(redis)).length >= 3, 5000, 'audit entries');
    const log = (await auditEntries(redis)).map((e) => `${e.who} ${e.op} ${e.board} ${e.member || ''}`.trim());
    assert.ok(log.includes('jwt:overlay-7 incr demo user:aud'), log.join('\n'));
    assert.ok(log.includes('jwt:svc@tools set demo user:aud2'), log.join('\n'));
    assert.ok(log.some((l) => l.startsWith('jwt:caster reset match:9')), log.join('\n'));
    const e = (await auditEntries(redis)).find((x) => x.who === 'jwt:overlay-7');
    assert.equal(e.req, 'aud-1');
    // API-key writes are not audited
    assert.ok(!log.some((l) => l.startsWith('env-admin incr')), log.join('\n'));
  });
});

/* ---- refresh and expiry on a WebSocket ------------------------------------------ */

test('WebSocket: auth refreshes in place; an unrefreshed token stops views and writes', { skip, timeout: 60000 }, async (t) => {
  const { gw, redis, clk } = await hsStack(t);
  const hs = (claims) => sign('HS256', { scope: 'read write', ...claims }, SECRET);
  const writer = await h.connectWs(t, gw.wsUrl); // the admin key: never expires

  await t.test('a refresh before exp keeps the subscription past the old exp', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ exp: clk.nowS() + 60 }) });
    const snap = await c.request(sub('demo'));
    assert.equal(snap.op, 'snapshot', JSON.stringify(snap));
    const exp2 = clk.nowS() + 3600;
    const authed = await c.request({ op: 'auth', token: hs({ exp: exp2 }) });
    assert.deepEqual({ op: authed.op, exp: authed.exp }, { op: 'authed', exp: exp2 });
    await clk.shift(120 * 1000); // past the first token's exp + skew
    await h.sleep(2500);          // more than one expiry sweep
    assert.ok(!c.messages.some((m) => m.op === 'error' && m.sub === snap.sub), JSON.stringify(c.messages));
    assert.equal((await writer.request(incr('demo', 'user:keep', 1000))).op, 'ack');
    await c.next((m) => m.op === 'delta' && m.sub === snap.sub && m.rows.some((r) => r.member === 'user:keep'), 5000);
    assert.equal((await c.request(incr('demo', 'user:keep2'))).op, 'ack');
  });

  await t.test('no refresh: at exp every view gets unauthorized with its sub and stops; writes refused', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ exp: clk.nowS() + 60 }) });
    const s1 = await c.request(sub('demo'));
    const s2 = await c.request({ op: 'subscribe', board: 'demo', view: { feed: true } });
    assert.equal(s1.op, 'snapshot');
    assert.equal(s2.op, 'snapshot');
    await clk.shift(120 * 1000);
    const e1 = await c.next((m) => m.op === 'error' && m.sub === s1.sub, 10000);
    const e2 = await c.next((m) => m.op === 'error' && m.sub === s2.sub, 10000);
    assertError(e1, 'unauthorized', /expired/);
    assertError(e2, 'unauthorized', /expired/);
    const fp = await redis.fingerprint();
    assertError(await c.request(incr('demo', 'user:late')), 'unauthorized', /expired/);
    assertError(await c.request(sub('demo')), 'unauthorized', /expired/);
    assert.equal(await redis.fingerprint(), fp);
    // the stopped views get nothing more
    const seen = c.messages.length;
    assert.equal((await writer.request(incr('demo', 'user:after', 5000))).op, 'ack');
    await h.sleep(1000);
    assert.deepEqual(c.messages.slice(seen).filter((m) => m.sub === s1.sub || m.sub === s2.sub), []);
    // a fresh token brings it back
    const authed = await c.request({ op: 'auth', token: hs({ exp: clk.nowS() + 600 }) });
    assert.equal(authed.op, 'authed', JSON.stringify(authed));
    assert.equal((await c.request(incr('demo', 'user:back'))).op, 'ack');
    assert.equal((await c.request(sub('demo'))).op, 'snapshot');
  });

  await t.test('a narrower token drops the views it no longer covers, keeps the rest', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ exp: clk.nowS() + 600, boards: ['demo', 'laps'] }) });
    const sd = await c.request(sub('demo'));
    const sl = await c.request(sub('laps'));
    assert.equal(sl.op, 'snapshot', JSON.stringify(sl));
    const authed = await c.request({ op: 'auth', token: hs({ exp: clk.nowS() + 600, boards: ['demo'] }) });
    assert.equal(authed.op, 'authed');
    const e = await c.next((m) => m.op === 'error' && m.sub === sl.sub, 5000);
    assertError(e, 'forbidden', /does not cover/);
    assert.ok(!c.messages.some((m) => m.op === 'error' && m.sub === sd.sub));
    assert.equal((await writer.request(incr('demo', 'user:narrow', 9000))).op, 'ack');
    await c.next((m) => m.op === 'delta' && m.sub === sd.sub && m.rows.some((r) => r.member === 'user:narrow'), 5000);
    assertError(await c.request(incr('laps', 'user:narrow')), 'forbidden');
  });

  await t.test('a bad auth changes nothing; auth without a JWT is bad_request', async () => {
    const c = await h.connectWs(t, gw.wsUrl, { token: hs({ exp: clk.nowS() + 600, boards: ['demo'] }) });
    const sd = await c.request(sub('demo'));
    assertError(await c.request({ op: 'auth', token: sign('HS256', { scope: 'admin', exp: clk.nowS() + 600 }, OTHER_SECRET) }),
      'unauthorized', /signature/);
    assertError(await c.request({ op: 'auth', token: sign('none', { scope: 'admin', exp: clk.nowS() + 600 }) }),
      'unauthorized', /none/);
    assertError(await c.request({ op: 'auth' }), 'bad_request');
    assertError(await c.request({ op: 'auth', token: 'not-a-jwt' }), 'bad_request');
    assert.equal((await c.request(incr('demo', 'user:still'))).op, 'ack');
    assertError(await c.request({ op: 'reset', board: 'demo' }), 'forbidden');
    assert.ok(!c.messages.some((m) => m.op === 'error' && m.sub === sd.sub));
  });
});

/* ---- RS256, ES256 and algorithm confusion ------------------------------------------ */

test('RS256 and ES256: good tokens work; HS256 forged with the public key, alg none and the other alg are refused',
  { skip, timeout: 60000 }, async (t) => {
    const keys = makeKeys(t);
    const exp = () => Math.floor(Date.now() / 1000) + 600;
    const claims = () => ({ sub: 'idp-user', scope: 'write', exp: exp() });

    const rs = await h.startStack(t, { config: h.configWith(t, { auth: { jwt_public_key: keys.rsaPub } }) });
    const fp = await rs.redis.fingerprint();
    const refused = [
      ['HS256 signed with the RSA public key PEM as its secret', sign('HS256', claims(), keys.rsaPubPem), /HS256 tokens are not accepted/],
      ['alg none', sign('none', claims()), /none/],
      ['ES256 against an RSA key', sign('ES256', claims(), keys.ec), /ES256 tokens are not accepted/],
      ['RS256 by another key', sign('RS256', claims(), crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey), /signature/],
    ];
    for (const [what, tok, re] of refused) {
      const c = await h.connectWs(t, rs.gw.wsUrl, { token: tok });
      const r = await c.request(incr('demo', 'user:forged'));
      assertError(r, 'unauthorized', re);
      const rest = await post(rs.gw, 'demo', { op: 'incr', member: 'user:forged', delta: 1 }, { token: tok });
      assert.equal(rest.status, 401, `${what}: ${rest.text}`);
    }
    assert.equal(await rs.redis.fingerprint(), fp);
    const good = await h.connectWs(t, rs.gw.wsUrl, { token: sign('RS256', claims(), keys.rsa), tokenIn: 'header' });
    assert.equal((await good.request(incr('demo', 'user:rs'))).op, 'ack');
    const rest = await post(rs.gw, 'demo', { op: 'incr', member: 'user:rs', delta: 1 }, { token: sign('RS256', claims(), keys.rsa) });
    assert.equal(rest.status, 200, rest.text);

    // a gateway with no token keys says so
    const none = await h.startStack(t);
    const nc = await h.connectWs(t, none.gw.wsUrl, { token: sign('HS256', claims(), SECRET) });
    assertError(await nc.request(incr('demo', 'user:none')), 'unauthorized', /tokens \(JWT\) are not accepted here/);
    assertError(await nc.request({ op: 'auth', token: sign('HS256', claims(), SECRET) }), 'unauthorized', /not accepted/);

    const es = await h.startStack(t, { config: h.configWith(t, { auth: { jwt_public_key: keys.ecPub } }) });
    const ok = await h.connectWs(t, es.gw.wsUrl, { token: sign('ES256', claims(), keys.ec) });
    assert.equal((await ok.request(incr('demo', 'user:es'))).op, 'ack');
    const bad = await h.connectWs(t, es.gw.wsUrl, { token: sign('RS256', claims(), keys.rsa) });
    assertError(await bad.request(incr('demo', 'user:es')), 'unauthorized', /RS256 tokens are not accepted/);
    const hsbad = await h.connectWs(t, es.gw.wsUrl, { token: sign('HS256', claims(), fs.readFileSync(keys.ecPub, 'utf8')) });
    assertError(await hsbad.request(incr('demo', 'user:es')), 'unauthorized', /HS256 tokens are not accepted/);
  });

/* ---- rankcast token and --check-config ------------------------------------------------ */

function runBin(args, env = {}) {
  const r = spawnSync(h.gatewayBin(), args, { cwd: h.repoRoot, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('rankcast token prints a token that verifies and works against the gateway', { skip, timeout: 60000 }, async (t) => {
  const { gw, redis, config } = await hsStack(t);
  const r = runBin(['token', '--scope', 'read', '--board', 'demo', '--ttl', '30d', '--sub', 'obs-overlay'],
    { RANKCAST_JWT_SECRET: SECRET });
  assert.equal(r.code, 0, r.err);
  const tok = r.out.trim();
  const [head, body, sig] = tok.split('.');
  assert.equal(b64u(crypto.createHmac('sha256', SECRET).update(`${head}.${body}`).digest()), sig);
  assert.equal(JSON.parse(Buffer.from(head, 'base64url')).alg, 'HS256');
  const claims = JSON.parse(Buffer.from(body, 'base64url'));
  assert.equal(claims.scope, 'read');
  assert.deepEqual(claims.boards, ['demo']);
  assert.equal(claims.sub, 'obs-overlay');
  const ttl = claims.exp - Date.now() / 1000;
  assert.ok(ttl > 30 * 86400 - 120 && ttl <= 30 * 86400 + 5, `exp ${claims.exp}`);

  const c = await h.connectWs(t, gw.wsUrl, { token: tok });
  assert.equal((await c.request(sub('demo'))).op, 'snapshot');
  assertError(await c.request(sub('laps')), 'forbidden');
  const fp = await redis.fingerprint();
  assertError(await c.request(incr('demo', 'user:obs')), 'forbidden');
  assert.equal(await redis.fingerprint(), fp);

  // the config's secret, without the environment
  const r2 = runBin(['token', '--scope', 'write', '--ttl', '1h', '--config', config], { RANKCAST_JWT_SECRET: '' });
  assert.equal(r2.code, 0, r2.err);
  const w = await h.connectWs(t, gw.wsUrl, { token: r2.out.trim() });
  const wr = await w.request({ op: 'best', board: 'laps', member: 'user:cfg', value: 61000 });
  assert.equal(wr.op, 'ack', JSON.stringify(wr));

  // no secret anywhere; bad arguments
  const shipped = path.join(h.repoRoot, 'conf', 'rankcast.conf');
  const r3 = runBin(['token', '--scope', 'read', '--ttl', '1h', '--config', shipped], { RANKCAST_JWT_SECRET: '' });
  assert.equal(r3.code, 1);
  assert.match(r3.err, /no secret to sign with/);
  assert.equal(r3.out, '');
  const r4 = runBin(['token', '--scope', 'reed', '--ttl', '1h'], { RANKCAST_JWT_SECRET: SECRET });
  assert.equal(r4.code, 1);
  assert.match(r4.err, /--scope/);
  const r5 = runBin(['token', '--scope', 'read', '--ttl', 'forever'], { RANKCAST_JWT_SECRET: SECRET });
  assert.equal(r5.code, 1);
  assert.match(r5.err, /--ttl/);
  const r6 = runBin(['token', '--scope', 'read', '--ttl', '1h'], { RANKCAST_JWT_SECRET: 'short' });
  assert.equal(r6.code, 1);
  assert.match(r6.err, /RANKCAST_JWT_SECRET must be 32\.\.256 bytes/);
});

test('--check-config checks the token settings and the key file', { skip, timeout: 60000 }, async (t) => {
  const keys = makeKeys(t);
  const check = (auth) => runBin(['--check-config', h.configWith(t, { auth })]);
  assert.equal(check({ jwt_public_key: keys.rsaPub, jwt_secret: SECRET }).code, 0);
  assert.equal(check({ jwt_public_key: keys.ecPub }).code, 0);
  const cases = [
    [{ jwt_secret: 'short-secret' }, /jwt_secret must be 32\.\.256 printable characters/],
    [{ jwt_public_key: path.join(keys.dir, 'missing.pem') }, /jwt_public_key .*missing\.pem: No such file/],
    [{ jwt_public_key: keys.rsaPriv }, /is not a PEM public key/],
    [{ jwt_public_key: keys.smallPub }, /RSA key of 1024 bits \(at least 2048\)/],
    [{ jwt_skew: '1h' }, /jwt_skew must be a duration/],
  ];
  for (const [auth, re] of cases) {
    const r = check(auth);
    assert.equal(r.code, 1, JSON.stringify(auth));
    assert.match(r.err, re);
  }
  // the gateway refuses to start with the same mistake
  const redis = await h.startRedis(t);
  const bad = h.configWith(t, { auth: { jwt_public_key: keys.rsaPriv } });
  await assert.rejects(h.startGateway(t, { redisPort: redis.port, config: bad, timeoutMs: 5000 }));
});

test('test_clock = on: warned at every start, shown by /healthz, refused beside a JWT secret or public key ' +
     'unless RANKCAST_ALLOW_TEST_CLOCK=1', { skip, timeout: 60000 }, async (t) => {
  const keys = makeKeys(t);
  const redis = await h.startRedis(t);
  const deny = { RANKCAST_ALLOW_TEST_CLOCK: null };
  // Alone: it starts, says so in its log and in /healthz.
  const alone = await h.startGateway(t, { redisPort: redis.port, env: deny,
    config: h.configWith(t, { server: { test_clock: 'on' } }) });
  await alone.waitForLine(/test_clock = on/, 5000);
  const health = await h.http(alone.base, 'GET', '/healthz');
  assert.equal(health.body.test_clock, true, health.text);
  await alone.stop();
  // Off (the shipped config): no such field.
  const off = await h.startGateway(t, { redisPort: redis.port, env: deny });
  assert.equal((await h.http(off.base, 'GET', '/healthz')).body.test_clock, undefined);
  assert.ok(!off.stderr.some((l) => /test_clock/.test(l)), off.stderr.join('\n'));
  await off.stop();
  // Beside a JWT secret (file or environment) or a public key: refused, naming the variable.
  for (const [auth, env] of [[{ jwt_secret: SECRET }, {}], [{}, { RANKCAST_JWT_SECRET: SECRET }],
    [{ jwt_public_key: keys.rsaPub }, {}]]) {
    const config = h.configWith(t, { server: { test_clock: 'on' }, auth });
    await assert.rejects(h.startGateway(t, { redisPort: redis.port, config, env: { ...deny, ...env }, timeoutMs: 5000 }),
      (e) => {
        assert.match(e.message, /test_clock = on with a JWT (secret|public key): refused/, e.message);
        assert.match(e.message, /RANKCAST_ALLOW_TEST_CLOCK=1/, e.message);
        return true;
      }, JSON.stringify({ auth, env }));
    // ... and allowed with RANKCAST_ALLOW_TEST_CLOCK=1 (tests), still with the warning.
    const gw = await h.startGateway(t, { redisPort: redis.port, config, env: { ...env, RANKCAST_ALLOW_TEST_CLOCK: '1' } });
    await gw.waitForLine(/test_clock = on/, 5000);
    await gw.stop();
  }
});

/* ---- web/rankcast.js with tokens ------------------------------------------------------- */

test('rankcast.js: connects with a token, reports a view the server stopped, auth() resumes it', { skip, timeout: 60000 }, async (t) => {
  const Rankcast = require('../../web/rankcast.js');
  const WebSocket = require('ws');
  const { gw, clk } = await hsStack(t);
  const hs = (exp) => sign('HS256', { scope: 'read', boards: ['demo'], exp }, SECRET);
  const writer = await h.connectWs(t, gw.wsUrl);
  const rc = new Rankcast.Client({ url: gw.wsUrl, token: hs(clk.nowS() + 60), WebSocket, timeout: 8000 });
  h.defer(t, () => rc.close());
  const errors = [];
  const v = rc.subscribe({ board: 'demo', view: { top: 5 } }, { onError: (view, err) => errors.push(err) });
  await h.waitFor(() => v.sub != null, 5000, 'the first snapshot');
  await clk.shift(120 * 1000);
  await h.waitFor(() => errors.length > 0, 10000, 'the stopped view');
  assert.deepEqual({ code: errors[0].code, stopped: errors[0].stopped }, { code: 'unauthorized', stopped: true });
  assert.equal(v.sub, null);
  const authed = await rc.auth(hs(clk.nowS() + 600));
  assert.equal(authed.op, 'authed');
  await h.waitFor(() => v.sub != null, 5000, 'the view resubscribed');
  assert.equal((await writer.request(incr('demo', 'user:js', 7777))).op, 'ack');
  await h.waitFor(() => v.rows.some((r) => r.member === 'user:js'), 5000, 'the write in the view');
  assert.ok(rc.url.includes(encodeURIComponent(rc.token)), 'reconnects use the fresh token');
});
