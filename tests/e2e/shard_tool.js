/* shard_tool.js - what the tests of sharded boards share: which shard holds
 * a member (core/rc_shard.c, rc_shard_of: FNV-1a, 32 bits, of the member's
 * bytes, modulo S), and `rankcast ...args` run to its end (export, import). */
'use strict';

const h = require('./harness');

function shardOf(member, shards) {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(member, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return hash % shards;
}

/* Runs `rankcast ...args` with input (or nothing) on stdin: { code, stdout, stderr }. */
function runTool(args, input) {
  return new Promise((resolve, reject) => {
    const child = h.spawnTracked(h.gatewayBin(), args, { cwd: h.repoRoot, stdio: ['pipe', 'pipe', 'pipe'] }, []);
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      child.untrack();
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
    child.stdin.on('error', () => {}); // a tool that exits before reading it all
    child.stdin.end(input);
  });
}

module.exports = { shardOf, runTool };
