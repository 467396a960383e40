/* history.js - the seeded PRNG and the JSONL history shared by the chaos run
 * (tests/chaos/chaos.js) and its checker (tests/chaos/checker.js).
 *
 * Every line of a history is one JSON object with `t` (ms since the run
 * began) and `k` (its kind):
 *   meta    { seed, mode, seconds, boards, tbits }  first line (tbits: each board's tie-break width T)
 *   open    { c, gw }        client c connected to gateway gw
 *   close   { c }            client c's socket closed (or failed to open)
 *   send    { c, m }         client c sent message m
 *   recv    { c, m }         client c received message m
 *   fault   { kind, phase: start|end, target }
 *   epoch   { phase: down|up }  a Redis lost its data (restart without persistence)
 *   period  { board, period } writes to board from now on land in that period
 *   quiet   { n }            writers paused, faults over, views settled
 *   truth   { c, sub, board, view, places, period, snap }  the true window at a quiet point
 *   teamtruth { board, teams, tm, players, squads }  at a quiet point: the membership hash from Redis,
 *           the source board's and the team board's REST reads (every row)
 *   final   { board, period, rows }  the board as read at the end (every member), through gateway 1's REST API
 *   redisfinal { key, board, period, rows: [[member, composite]] }  a sorted set as read from Redis itself at the end
 *   end     { }
 */
'use strict';

const fs = require('node:fs');

// mulberry32: small, fast, and the same sequence for the same seed everywhere.
function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
    // an independent stream for one component, so that one component's
    // choices do not shift when another makes more or fewer of them
    fork: (salt) => prng((seed ^ Math.imul(salt + 1, 0x9E3779B1)) >>> 0),
  };
}

function recorder(file) {
  const fd = fs.openSync(file, 'w');
  const t0 = performance.now();
  return {
    now: () => Math.round((performance.now() - t0) * 10) / 10,
    write(obj) {
      obj.t = Math.round((performance.now() - t0) * 10) / 10;
      fs.writeSync(fd, JSON.stringify(obj) + '\n');
    },
    close() { fs.closeSync(fd); },
  };
}

function readHistory(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

module.exports = { prng, recorder, readHistory };
