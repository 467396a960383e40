/* benchlib.js - what the Node benchmark clients (tests/bench/*.js) share:
 * their command line and the CPU counters of the processes they measure.
 *
 *   const { arg, cpuTicks } = require('./benchlib');
 *   arg(name, def)     the value after --name on the command line, or def
 *   cpuTicks(pid)      utime + stime of pid so far, in clock ticks (1/hz s),
 *                      from /proc/PID/stat */
'use strict';

const fs = require('node:fs');

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
}

// Fields counted after the ")" of the process name (which may hold spaces).
function cpuTicks(pid) {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

module.exports = { arg, cpuTicks };
