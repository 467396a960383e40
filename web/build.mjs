// build.mjs - makes the classic rankcast.js from the one source, rankcast.mjs.
//
//   node web/build.mjs           rewrites web/rankcast.js
//   node web/build.mjs --check   exits 1 when web/rankcast.js is not what the source makes
//
// rankcast.mjs is the ES module (bundlers, <script type="module">, Node's
// import). Pages that load <script src="rankcast.js"> and Node's require()
// get the same code wrapped in a UMD function: the global `Rankcast` in a
// browser, module.exports in CommonJS. The wrapper is all that differs, so
// the two cannot drift: tests/e2e/rankcast_module.test.js fails when the
// committed rankcast.js is not this script's output.
//
// The source's shape is what this relies on, and it refuses anything else:
// a leading block comment, the body, and one closing line
// `export { A, B, ... };` (no other `export` and no `import`).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SOURCE = path.join(here, 'rankcast.mjs');
export const CLASSIC = path.join(here, 'rankcast.js');

export function buildClassic(src) {
  const lines = src.replace(/\n+$/, '').split('\n');
  const end = lines.findIndex((l) => l === ' */');
  if (!lines[0].startsWith('/*') || end < 0) throw new Error('rankcast.mjs must start with its block comment');
  const last = lines[lines.length - 1];
  const m = /^export \{ ([A-Za-z_$][\w$]*(?:, [A-Za-z_$][\w$]*)*) \};$/.exec(last);
  if (!m) throw new Error('rankcast.mjs must end with one line: export { A, B, ... };');
  const body = lines.slice(end + 1, -1);
  const stray = body.findIndex((l) => /^\s*(export|import)\b/.test(l));
  if (stray >= 0) throw new Error(`rankcast.mjs line ${end + 2 + stray}: only the last line may export, and nothing may import`);
  while (body.length && body[0] === '') body.shift();
  while (body.length && body[body.length - 1] === '') body.pop();
  return [
    ...lines.slice(0, end + 1),
    '// GENERATED from rankcast.mjs by web/build.mjs (node web/build.mjs): edit that file, not this one.',
    '(function (root, factory) {',
    '  const api = factory();',
    "  if (typeof module === 'object' && module.exports) module.exports = api;",
    '  else root.Rankcast = api;',
    "})(typeof globalThis !== 'undefined' ? globalThis : this, function () {",
    "  'use strict';",
    '',
    ...body.map((l) => (l === '' ? '' : '  ' + l)),
    '',
    `  return { ${m[1]} };`,
    '});',
    '',
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const want = buildClassic(readFileSync(SOURCE, 'utf8'));
  if (process.argv[2] === '--check') {
    if (readFileSync(CLASSIC, 'utf8') !== want) {
      console.error('web/rankcast.js is stale: run node web/build.mjs');
      process.exit(1);
    }
  } else {
    writeFileSync(CLASSIC, want);
  }
}
