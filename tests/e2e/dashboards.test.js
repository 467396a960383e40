/* dashboards.test.js - the Grafana dashboard (conf/grafana/rankcast.json)
 * and the Prometheus alert rules (conf/prometheus/rankcast-alerts.yml) speak
 * of the series the gateway really exports: every rankcast_* name they query
 * is one /metrics serves (scraped with the admin key, as v1.2 closes /metrics
 * to anonymous callers) on a running gateway, one with the shipped config
 * and one worker group (--workers 2, whose supervisor adds the
 * rankcast_worker* families); every family exported appears in the dashboard
 * or in LEFT_OUT. The rules pass `promtool check rules` and their unit tests
 * (`promtool test rules`, conf/prometheus/rankcast-alerts.test.yml); promtool
 * comes with Debian's prometheus package (.ci/install-deps). */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const YAML = require('yaml');
const h = require('./harness');

const DASHBOARD = path.join(h.repoRoot, 'conf', 'grafana', 'rankcast.json');
const ALERTS = path.join(h.repoRoot, 'conf', 'prometheus', 'rankcast-alerts.yml');
const ALERT_TESTS = path.join(h.repoRoot, 'conf', 'prometheus', 'rankcast-alerts.test.yml');

// Families exported that the dashboard leaves out on purpose, with why.
// (None today: every family has a panel.) An entry must be exported and
// must not be in the dashboard, so the list cannot go stale.
const LEFT_OUT = {};

// What the issue asks the alerts to cover, by alert name.
const REQUIRED_ALERTS = ['RankcastRedisDown', 'RankcastDeliveryLag', 'RankcastQueueLagging', 'RankcastWebhookGaveUp'];

const gatewaySkip = h.toolMissing(h.gatewayMissing());
const hasPromtool = spawnSync('sh', ['-c', 'command -v promtool']).status === 0;
const promtoolSkip = h.toolMissing(hasPromtool ? null : 'promtool not found (Debian package prometheus: bash .ci/install-deps)');

/* { families: Map(family -> type), samples: Set(sample names) } of an exposition. */
function parseExposition(text) {
  const families = new Map();
  const samples = new Set();
  for (const line of text.split('\n')) {
    const ty = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (ty) families.set(ty[1], ty[2]);
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? \S+$/.exec(line);
    assert.ok(m, `not an exposition line: ${line}`);
    samples.add(m[1]);
  }
  return { families, samples };
}

/* Every rankcast_* name in a PromQL text. */
function namesIn(expr) {
  return [...String(expr).matchAll(/\brankcast_[a-z0-9_]+/g)].map((m) => m[0]);
}

/* The family a sample name belongs to (histogram suffixes dropped when the base is a histogram). */
function familyOf(name, families) {
  if (families.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return families.get(base) === 'histogram' ? base : name;
}

/* [{where, expr}] of every query of the dashboard (panels, rows' panels, variables). */
function dashboardQueries(dash) {
  const out = [];
  const walk = (panels, where) => {
    for (const p of panels || []) {
      for (const t of p.targets || []) out.push({ where: `${where} > ${p.title} (${t.refId})`, expr: t.expr });
      walk(p.panels, `${where} > ${p.title}`);
    }
  };
  walk(dash.panels, 'panels');
  for (const v of (dash.templating && dash.templating.list) || []) {
    const q = typeof v.query === 'object' && v.query ? v.query.query : v.query;
    if (v.type === 'query') out.push({ where: `variable ${v.name}`, expr: q });
  }
  return out;
}

function alertRules() {
  const doc = YAML.parse(fs.readFileSync(ALERTS, 'utf8'));
  return doc.groups.flatMap((g) => g.rules);
}

test('the dashboard is a Grafana dashboard: unique panel ids, every target a PromQL query on the datasource variable', () => {
  const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'));
  assert.equal(dash.uid, 'rankcast');
  assert.ok(Number.isInteger(dash.schemaVersion));
  const ds = dash.templating.list.find((v) => v.type === 'datasource');
  assert.ok(ds && ds.query === 'prometheus', 'a Prometheus datasource variable');
  const ids = new Set();
  const walk = (panels) => {
    for (const p of panels || []) {
      assert.ok(!ids.has(p.id), `panel id ${p.id} twice`);
      ids.add(p.id);
      assert.ok(p.gridPos && p.gridPos.w > 0 && p.gridPos.h > 0, `${p.title}: gridPos`);
      for (const t of p.targets || []) {
        assert.ok(t.refId && t.expr, `${p.title}: a target without refId or expr`);
        assert.equal(t.datasource.uid, `\${${ds.name}}`, `${p.title}: target datasource`);
      }
      walk(p.panels);
    }
  };
  walk(dash.panels);
  assert.ok(ids.size >= 10, `${ids.size} panels`);
});

test('the dashboard and the alert rules query only series /metrics exports, and the dashboard shows every exported family',
  { skip: gatewaySkip, timeout: 120000 }, async (t) => {
    const redis = await h.startRedis(t);
    const single = await h.startGateway(t, { redisPort: redis.port });
    const group = await h.startGateway(t, { redisPort: redis.port, args: ['--workers', '2'] });
    // a first connection and write, so that nothing is exported only once used
    const c = await h.connectWs(t, single.wsUrl);
    await c.request({ op: 'subscribe', board: 'demo', view: { top: 3 } });
    await c.request({ op: 'incr', board: 'demo', member: 'user:1', delta: 1 });
    await c.close();

    const scrape = async (gw) => {
      const r = await h.http(gw.base, 'GET', '/metrics'); // the admin key (harness default)
      assert.equal(r.status, 200, r.text);
      return r.text;
    };
    await h.waitFor(async () => /^rankcast_worker_up\{[^}]*\} 1$/m.test(await scrape(group)) &&
      ((await scrape(group)).match(/^rankcast_worker_up\{[^}]*\} 1$/gm) || []).length === 2, 10000, 'both workers in /metrics');
    const anon = await h.http(single.base, 'GET', '/metrics', undefined, { token: null });
    assert.equal(anon.status, 401, 'v1.2: /metrics needs the admin key');

    const families = new Map();
    const samples = new Set();
    for (const gw of [single, group]) {
      const e = parseExposition(await scrape(gw));
      for (const [k, v] of e.families) families.set(k, v);
      for (const s of e.samples) samples.add(s);
    }
    assert.ok(families.has('rankcast_redis_up') && families.has('rankcast_worker_up') && families.has('rankcast_queue_length'),
      `families scraped: ${[...families.keys()]}`);

    // every name queried is exported
    const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'));
    const shown = new Set();
    for (const q of dashboardQueries(dash)) {
      for (const n of namesIn(q.expr)) {
        assert.ok(samples.has(n), `dashboard ${q.where}: ${n} is not exported by /metrics`);
        shown.add(familyOf(n, families));
      }
    }
    const rules = alertRules();
    for (const r of rules) {
      assert.ok(namesIn(r.expr).length > 0, `alert ${r.alert}: no rankcast_* series in ${r.expr}`);
      for (const n of namesIn(r.expr)) assert.ok(samples.has(n), `alert ${r.alert}: ${n} is not exported by /metrics`);
    }
    for (const a of REQUIRED_ALERTS) assert.ok(rules.some((r) => r.alert === a), `no alert ${a}`);

    // every family exported is shown, or left out on purpose
    const missing = [...families.keys()].filter((f) => !shown.has(f) && !(f in LEFT_OUT));
    assert.deepEqual(missing, [], 'exported families neither in conf/grafana/rankcast.json nor in LEFT_OUT');
    for (const f of Object.keys(LEFT_OUT)) {
      assert.ok(families.has(f), `LEFT_OUT ${f} is not exported any more: drop it`);
      assert.ok(!shown.has(f), `LEFT_OUT ${f} is in the dashboard: drop it from LEFT_OUT`);
    }
  });

test('promtool accepts the alert rules and their unit tests pass', { skip: promtoolSkip, timeout: 60000 }, () => {
  for (const args of [['check', 'rules', ALERTS], ['test', 'rules', ALERT_TESTS]]) {
    const res = spawnSync('promtool', args, { encoding: 'utf8', timeout: 50000 });
    assert.equal(res.status, 0, `promtool ${args.join(' ')}:\n${res.stdout}\n${res.stderr}`);
    assert.match(res.stdout + res.stderr, /SUCCESS/);
  }
});

/* The Prometheus block of README.md "Run it in production", as a person
 * pastes it: with its paths moved to a temporary directory (and a 1 s
 * scrape interval, so the test need not wait 1 minute), promtool accepts
 * it, and a real Prometheus run on it scrapes a gateway with the admin key
 * from the key file and evaluates the shipped rules. */
function readmePrometheusBlock() {
  const readme = fs.readFileSync(path.join(h.repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Run it in production'));
  const m = /```yaml\n([\s\S]*?job_name: rankcast[\s\S]*?)```/.exec(section);
  assert.ok(m, 'README.md "Run it in production" has a ```yaml block with job_name: rankcast');
  return m[1];
}

test('the README\'s Prometheus config passes promtool and a real Prometheus scrapes the gateway with it',
  { skip: gatewaySkip || promtoolSkip || h.toolMissing(spawnSync('sh', ['-c', 'command -v prometheus']).status === 0 ? null : 'prometheus not found (bash .ci/install-deps)'),
    timeout: 120000 }, async (t) => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'rankcast-prom-'));
    h.defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
    const { gw } = await h.startStack(t);
    fs.writeFileSync(path.join(dir, 'rankcast.key'), h.ADMIN_KEY + '\n'); // as `echo "$KEY" | tee` writes it
    fs.copyFileSync(ALERTS, path.join(dir, 'rankcast-alerts.yml'));
    const block = readmePrometheusBlock()
      .replace('/etc/prometheus/rankcast.key', path.join(dir, 'rankcast.key'))
      .replace("'127.0.0.1:8080'", `'127.0.0.1:${gw.port}'`);
    assert.ok(block.includes(path.join(dir, 'rankcast.key')) && block.includes(String(gw.port)), block);
    const config = path.join(dir, 'prometheus.yml');
    fs.writeFileSync(config, 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n' + block);
    const check = spawnSync('promtool', ['check', 'config', config], { encoding: 'utf8', timeout: 50000 });
    assert.equal(check.status, 0, `promtool check config:\n${check.stdout}\n${check.stderr}`);

    const port = await h.freePort();
    const prom = h.spawnTracked('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`], { cwd: dir }, []);
    const log = [];
    h.eachLine(prom.stderr, (l) => log.push(l));
    h.defer(t, async () => { await h.terminate(prom); prom.untrack(); });
    const api = async (q) => {
      try {
        const r = await fetch(`http://127.0.0.1:${port}${q}`, { signal: AbortSignal.timeout(2000) });
        return r.ok ? (await r.json()).data : null;
      } catch (e) {
        return null;
      }
    };
    let target = null;
    await h.waitFor(async () => {
      const d = await api('/api/v1/targets');
      target = d && d.activeTargets.find((x) => x.labels.job === 'rankcast');
      return target && target.health === 'up';
    }, 30000, `Prometheus to scrape the gateway (target: ${JSON.stringify(target)})\n${log.slice(-10).join('\n')}`);
    await h.waitFor(async () => {
      const d = await api('/api/v1/query?query=rankcast_redis_up');
      return d && d.result.length === 1 && d.result[0].value[1] === '1';
    }, 15000, 'rankcast_redis_up = 1 in Prometheus');
    const rules = await api('/api/v1/rules');
    const names = rules.groups.flatMap((g) => g.rules.map((r) => r.name));
    for (const a of REQUIRED_ALERTS) assert.ok(names.includes(a), `Prometheus loaded ${a}: ${names}`);
  });
