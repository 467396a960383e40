/* security_doc.test.js - docs/security.md lists every budget the gateway
 * has, so that the list cannot drift from the code (issue 23, "docs/security.md
 * lists each budget"):
 *  - every key of [limits] in the key table (core/rc_conf_table.c), and the
 *    budget keys of other sections named below, appears in the table "The
 *    budgets" (what happens past it);
 *  - and has a row in "Every budget: its key, default and metric" whose
 *    default is the one conf/rankcast.conf gives, and whose metrics are
 *    series the gateway exports (their names and label values are in
 *    gateway/base/gw_metrics.c, error codes in core/rc_err.c), or says why
 *    there is none;
 *  - the key table and conf/rankcast.conf's [limits] name the same keys.
 * Reads files only: no gateway, no Redis. */
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');

/* Budgets outside [limits]: [board] keys documented in conf/rankcast.conf's
 * comment block as "KEY  ..., default VALUE". */
const BOARD_BUDGETS = ['queue_max'];

function limitsKeysOfTable() {
  return [...read('core/rc_conf_table.c').matchAll(/\{SEC_LIMITS, K_\w+, "(\w+)"/g)].map((m) => m[1]);
}

/* [limits] of conf/rankcast.conf: key -> value as written. */
function limitsOfConf() {
  const out = new Map();
  let inLimits = false;
  for (const line of read('conf/rankcast.conf').split('\n')) {
    const sec = /^\[([^\]]+)\]/.exec(line);
    if (sec) { inLimits = sec[1] === 'limits'; continue; }
    const kv = /^([a-z_]+)\s*=\s*(\S+)\s*$/.exec(line);
    if (inLimits && kv) out.set(kv[1], kv[2]);
  }
  return out;
}

function boardDefault(key) {
  const m = new RegExp('^#\\s+' + key + '\\s.*default (\\S+?),', 'm').exec(read('conf/rankcast.conf'));
  return m ? m[1] : undefined;
}

/* The table rows of the section whose heading matches re. */
function tableRows(doc, re) {
  const lines = doc.split('\n');
  const at = lines.findIndex((l) => re.test(l));
  assert.ok(at >= 0, `docs/security.md has a heading matching ${re}`);
  const rows = [];
  let i = at + 1;
  while (i < lines.length && !lines[i].startsWith('|')) i++;
  for (; i < lines.length && lines[i].startsWith('|'); i++) rows.push(lines[i]);
  return rows.slice(2); // the header and its rule
}

test('docs/security.md lists every budget key with what happens past it, its default and its metric', () => {
  const doc = read('docs/security.md');
  const table = limitsKeysOfTable();
  const conf = limitsOfConf();
  assert.ok(table.length >= 20, `the key table's [limits] keys were found (${table.length})`);
  assert.deepEqual([...conf.keys()].sort(), [...table].sort(),
    'conf/rankcast.conf [limits] and core/rc_conf_table.c name the same keys');
  const defaults = new Map(conf);
  for (const k of BOARD_BUDGETS) {
    const d = boardDefault(k);
    assert.ok(d, `conf/rankcast.conf documents ${k}'s default`);
    defaults.set(k, d);
  }

  const budgets = tableRows(doc, /^## The budgets$/).join('\n');
  const metricsSrc = read('gateway/base/gw_metrics.c');
  const codeNames = read('core/rc_err.c'); // rankcast_errors_total's code label values
  const glance = new Map();
  for (const row of tableRows(doc, /^### Every budget: its key, default and metric$/)) {
    const m = /^\|\s*`([a-z_]+)`\s*\|\s*`([^`]*)`\s*\|(.*)\|\s*$/.exec(row);
    assert.ok(m, `a row of the key table reads | \`key\` | \`default\` | metrics |: ${row}`);
    glance.set(m[1], { def: m[2], metrics: m[3] });
  }
  const missing = [];
  for (const [key, def] of defaults) {
    if (!budgets.includes('`' + key + '`')) missing.push(`${key}: not in "The budgets"`);
    const g = glance.get(key);
    if (!g) { missing.push(`${key}: no row in "Every budget: its key, default and metric"`); continue; }
    if (g.def !== def) missing.push(`${key}: default \`${g.def}\` in the doc, ${def} in conf/rankcast.conf`);
    const series = [...g.metrics.matchAll(/`(rankcast_[a-z_]+)(\{[a-z_]+="([a-z_]+)"\})?`/g)];
    if (series.length === 0 && !/\bnone\b/.test(g.metrics)) missing.push(`${key}: no metric, and no "none" saying why`);
    for (const s of series) {
      if (!metricsSrc.includes(`"${s[1]}"`)) missing.push(`${key}: ${s[1]} is not a series gw_metrics.c exports`);
      if (s[3] && !metricsSrc.includes(`"${s[3]}"`) && !codeNames.includes(`"${s[3]}"`)) {
        missing.push(`${key}: label value ${s[3]} is not in gw_metrics.c or core/rc_err.c`);
      }
    }
  }
  for (const key of glance.keys()) {
    if (!defaults.has(key)) missing.push(`${key}: listed in the doc but no such budget key`);
  }
  assert.deepEqual(missing, []);
});

/* The documented ACL user (docs/security.md, the block after
 * "rankcast-acl") allows every command a Lua script of lua/ calls: Redis
 * checks each redis.call against the user, so a command a script gains must
 * reach the block too (hostile_auth.test.js finds it only when its run
 * happens to reach that script: the checkpoint job's ZSCAN, for one). */
test('the documented ACL user allows every command the scripts of lua/ call', () => {
  const doc = read('docs/security.md');
  const at = doc.indexOf('rankcast-acl');
  assert.ok(at >= 0, 'the rankcast-acl block');
  const block = doc.slice(at, doc.indexOf('```', doc.indexOf('```', at) + 3));
  const allowed = new Set([...block.matchAll(/\+([a-z|]+)/g)].map((m) => m[1].split('|')[0]));
  const missing = [];
  for (const f of fs.readdirSync(path.join(root, 'lua')).filter((x) => x.endsWith('.lua'))) {
    for (const m of read(`lua/${f}`).matchAll(/redis\.p?call\('([A-Za-z]+)'/g)) {
      const cmd = m[1].toLowerCase();
      if (!allowed.has(cmd) && !missing.includes(`${cmd} (${f})`)) missing.push(`${cmd} (${f})`);
    }
  }
  assert.deepEqual(missing, [], 'commands the scripts call that the documented ACL user is not allowed');
});
