// web/rankcast.d.ts checked three ways, with no gateway:
//  1. installed as a web app installs it (`npm install ./web` into a fresh project),
//     `tsc --strict --noEmit` (bundler resolution, and nodenext for tests/types) over tests/types (example.ts makes every call and handles
//     every message; classic.ts uses the global of the classic script) and the framework
//     snippets of web/README.md (each ```ts / ```tsx block with `file=`); the same
//     project then imports and requires the package with Node;
//  2. a deliberate drift (one call taken out of rankcast.d.ts) fails that tsc run, so
//     the check is not vacuous;
//  3. the names rankcast.d.ts declares are the library's: module exports, Client and
//     View methods, rest()'s calls (both ways), declared properties present at run
//     time; and every op docs/protocol.md shows is typed.
// typescript and @types/react are pinned in tests/e2e/package-lock.json (npm ci).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const web = path.join(root, 'web');
const typesDir = path.join(root, 'tests/types');
const tsc = path.join(__dirname, 'node_modules/typescript/bin/tsc');
const dts = fs.readFileSync(path.join(web, 'rankcast.d.ts'), 'utf8');
const Rankcast = require('../../web/rankcast.js');

const TSCONFIG = {
  compilerOptions: {
    strict: true, noEmit: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler',
    lib: ['ES2022', 'DOM'], jsx: 'react-jsx', skipLibCheck: false, types: ['react'],
  },
  include: ['*.ts', 'snippets/*', 'stubs/*.d.ts'],
};

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 180000 });
  return { status: r.status, out: (r.stdout || '') + (r.stderr || '') + (r.error ? String(r.error) : '') };
}

// The ```ts file=NAME / ```tsx file=NAME blocks of web/README.md.
function snippets() {
  const md = fs.readFileSync(path.join(web, 'README.md'), 'utf8');
  const out = [];
  for (const m of md.matchAll(/^```tsx? file=([\w.-]+)\n([\s\S]*?)^```$/gm)) out.push({ file: m[1], text: m[2] });
  return out;
}

// A project as a web app has it: package.json, then the types and snippets beside it.
function project(t, installRankcast) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankcast-types-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  installRankcast(dir);
  // @types/react from the pinned install (the app would have it in its own node_modules)
  fs.symlinkSync(path.join(__dirname, 'node_modules/@types'), path.join(dir, 'node_modules/@types'));
  for (const f of fs.readdirSync(typesDir)) if (f.endsWith('.ts')) fs.copyFileSync(path.join(typesDir, f), path.join(dir, f));
  fs.cpSync(path.join(typesDir, 'stubs'), path.join(dir, 'stubs'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'snippets'));
  for (const s of snippets()) fs.writeFileSync(path.join(dir, 'snippets', s.file), s.text);
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  // a Node app's resolution too (package.json exports read the Node way)
  const node = { compilerOptions: Object.assign({}, TSCONFIG.compilerOptions, { module: 'nodenext', moduleResolution: 'nodenext' }),
    include: ['example.ts'] }; // (classic.ts is a script: a type=module project has none)
  fs.writeFileSync(path.join(dir, 'tsconfig.node.json'), JSON.stringify(node, null, 2));
  return dir;
}

const npmInstall = (dir) => {
  const r = run('npm', ['install', '--offline', '--no-audit', '--no-fund', web], dir);
  assert.equal(r.status, 0, 'npm install ./web failed:\n' + r.out);
};

test('README has the React, Vue and Svelte snippets the check extracts', () => {
  assert.deepEqual(snippets().map((s) => s.file).sort(), ['react.tsx', 'svelte.ts', 'vue.ts']);
});

test('npm install ./web, then tsc --strict --noEmit over every call, the classic global and the README snippets',
  { timeout: 240000 }, (t) => {
    const dir = project(t, npmInstall);
    const linked = fs.realpathSync(path.join(dir, 'node_modules/rankcast'));
    assert.equal(linked, fs.realpathSync(web), 'npm install ./web links the folder');
    const r = run(process.execPath, [tsc, '-p', dir], dir);
    assert.equal(r.status, 0, 'tsc --strict failed:\n' + r.out);
    const rn = run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.node.json')], dir);
    assert.equal(rn.status, 0, 'tsc --strict (moduleResolution nodenext) failed:\n' + rn.out);
    // the installed package loads in Node both ways, with the same exports
    const esm = run(process.execPath, ['--input-type=module', '-e',
      "import * as R from 'rankcast'; console.log(Object.keys(R).sort().join())"], dir);
    const cjs = run(process.execPath, ['-e', "console.log(Object.keys(require('rankcast')).sort().join())"], dir);
    assert.equal(esm.status, 0, esm.out);
    assert.equal(cjs.status, 0, cjs.out);
    assert.equal(esm.out.trim(), Object.keys(Rankcast).sort().join());
    assert.equal(cjs.out.trim(), esm.out.trim());
  });

test('drift fails the check: rankcast.d.ts without history(), or a wrong argument type in the example',
  { timeout: 240000 }, (t) => {
    const dir = project(t, (d) => {
      // the package as installed, with one call left out of its declarations
      const pkg = path.join(d, 'node_modules/rankcast');
      fs.mkdirSync(pkg, { recursive: true });
      for (const f of ['package.json', 'rankcast.mjs', 'rankcast.js']) fs.copyFileSync(path.join(web, f), path.join(pkg, f));
      const cut = dts.replace(/^ {2}history\(board.*\n/m, '');
      assert.notEqual(cut, dts, 'the Client history() line to cut is in rankcast.d.ts');
      fs.writeFileSync(path.join(pkg, 'rankcast.d.ts'), cut);
    });
    const r = run(process.execPath, [tsc, '-p', dir], dir);
    assert.notEqual(r.status, 0, 'tsc passed with history() missing from the declarations');
    assert.match(r.out, /example\.ts\(\d+,\d+\): error TS2339: Property 'history' does not exist on type 'Client'/);

    // and a mistake in a caller: a string where the delta is a number
    const dir2 = project(t, npmInstall);
    fs.appendFileSync(path.join(dir2, 'example.ts'), "\nrc.incr('demo', 'user:101', '50');\n");
    const r2 = run(process.execPath, [tsc, '-p', dir2], dir2);
    assert.notEqual(r2.status, 0, 'tsc passed a string delta');
    assert.match(r2.out, /error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'/);
  });

/* ---- declarations against the library ------------------------------------------- */

// Member names declared in `export class NAME {` / `export interface NAME {` of rankcast.d.ts.
function declared(kind, name) {
  const m = new RegExp(`^export ${kind} ${name}\\b[^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(dts);
  assert.ok(m, `rankcast.d.ts declares ${kind} ${name}`);
  const methods = new Set();
  const props = new Set();
  for (const line of m[1].split('\n')) {
    const d = /^ {2}(?:readonly )?([A-Za-z_$][\w$]*)(\??)\s*([(<:])/.exec(line);
    if (!d || d[1] === 'constructor') continue;
    (d[3] === ':' ? props : methods).add(d[1]);
  }
  return { methods, props };
}

// Public methods of a class at run time (getters are properties).
function runtimeMethods(proto) {
  return new Set(Object.getOwnPropertyNames(proto).filter((n) => n !== 'constructor' && !n.startsWith('_') &&
    typeof Object.getOwnPropertyDescriptor(proto, n).value === 'function'));
}

const sorted = (set) => Array.from(set).sort();

test('rankcast.d.ts declares what the library exports, no more and no less', () => {
  const exported = new Set();
  for (const m of dts.matchAll(/^export (?:function|const|class) ([A-Za-z_$][\w$]*)/gm)) exported.add(m[1]);
  assert.deepEqual(sorted(exported), Object.keys(Rankcast).sort());

  const client = declared('class', 'Client');
  assert.deepEqual(sorted(client.methods), sorted(runtimeMethods(Rankcast.Client.prototype)), 'Client methods');
  const c = new Rankcast.Client({ url: 'ws://localhost:1/ws', connect: false });
  for (const p of client.props) assert.ok(p in c, `Client has ${p}`);

  const view = declared('class', 'View');
  assert.deepEqual(sorted(view.methods), sorted(runtimeMethods(Rankcast.View.prototype)), 'View methods');
  const v = new Rankcast.View({ board: 'demo', view: { top: 3 } });
  for (const p of view.props) assert.ok(p in v, `View has ${p}`);

  const restDecl = declared('interface', 'RestClient');
  assert.deepEqual(sorted(restDecl.methods), Object.keys(Rankcast.rest({ base: 'http://x' })).sort(), 'rest() calls');

  // every handler the View calls is declared in ViewHandlers
  const src = fs.readFileSync(path.join(web, 'rankcast.mjs'), 'utf8');
  const called = new Set(Array.from(src.matchAll(/_call\('(on\w+)'/g), (m) => m[1]));
  assert.deepEqual(sorted(declared('interface', 'ViewHandlers').methods), sorted(called), 'view callbacks');
});

// Ops the docs show only as input the gateway refuses.
const NOT_OPS = new Set(['fly', 'add']);

test('every op docs/protocol.md shows (and the v1.2 contract adds) has its type in rankcast.d.ts', () => {
  const doc = fs.readFileSync(path.join(root, 'docs/protocol.md'), 'utf8');
  const ops = new Set(Array.from(doc.matchAll(/"op":"([a-z_]+)"/g), (m) => m[1]).filter((op) => !NOT_OPS.has(op)));
  // PROTOCOL.md v1.2: one-shot reads, rank history and the end of a replay
  for (const op of ['get', 'history', 'live', 'team', 'teamed']) ops.add(op);
  const typed = new Set(Array.from(dts.matchAll(/\bop: '([a-z_]+)'/g), (m) => m[1]));
  assert.deepEqual(sorted(ops).filter((op) => !typed.has(op)), [], 'ops without a type');
  assert.ok(ops.size >= 30, `found ${ops.size} ops in docs/protocol.md`);
});
