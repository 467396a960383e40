// web/rankcast.js and web/rankcast.mjs are one library: the ES module is the source,
// the classic script is web/build.mjs's output, committed. This fails when the committed
// rankcast.js is stale, when the forms export different things, when the classic file no
// longer defines the global `Rankcast` in a plain script, when web/package.json's
// version leaves the project's, and (with a gateway) when /rankcast.mjs is not served
// with a JavaScript type (browsers refuse a module script otherwise).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { pathToFileURL } = require('node:url');
const h = require('./harness');

const root = path.resolve(__dirname, '../..');
const web = path.join(root, 'web');
const classicText = fs.readFileSync(path.join(web, 'rankcast.js'), 'utf8');

test('the committed rankcast.js is what node web/build.mjs makes from rankcast.mjs', async () => {
  const { buildClassic } = await import(pathToFileURL(path.join(web, 'build.mjs')).href);
  const want = buildClassic(fs.readFileSync(path.join(web, 'rankcast.mjs'), 'utf8'));
  assert.ok(classicText === want, 'web/rankcast.js is stale: run node web/build.mjs and commit it');
});

test('the build refuses a source it would wrap wrongly', async () => {
  const { buildClassic } = await import(pathToFileURL(path.join(web, 'build.mjs')).href);
  assert.throws(() => buildClassic('/* x\n */\nconst a = 1;\n'), /must end with one line: export/);
  assert.throws(() => buildClassic('/* x\n */\nexport const b = 2;\nconst a = 1;\nexport { a };\n'), /only the last line may export/);
  assert.throws(() => buildClassic("/* x\n */\nimport y from 'y';\nconst a = 1;\nexport { a };\n"), /nothing may import/);
});

test('ES module, require() and the classic script export the same library', async () => {
  const esm = await import(pathToFileURL(path.join(web, 'rankcast.mjs')).href);
  const cjs = require('../../web/rankcast.js');
  assert.deepEqual(Object.keys(esm).sort(), Object.keys(cjs).sort());
  // a classic <script>: no module, no exports; the global is the library
  const sandbox = {};
  vm.runInNewContext(classicText, sandbox, { filename: 'rankcast.js' });
  assert.ok(sandbox.Rankcast, 'the classic script defines the global Rankcast');
  assert.deepEqual(Object.keys(sandbox.Rankcast).sort(), Object.keys(esm).sort());
  // the same code: the same answers
  const list = [{ rank: 1, member: 'a', score: 3 }, { rank: 2, member: 'b', score: 2 }];
  const delta = { rows: [{ rank: 1, member: 'c', score: 9 }], removed: ['b'] };
  for (const lib of [cjs, sandbox.Rankcast]) assert.deepEqual(JSON.stringify(lib.applyDelta(list, delta, 1, 2)), JSON.stringify(esm.applyDelta(list, delta, 1, 2)));
  assert.equal(esm.SUBPROTOCOL, cjs.SUBPROTOCOL);
});

test("web/package.json: the project's version, exports for import, require and types", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(web, 'package.json'), 'utf8'));
  const cmake = fs.readFileSync(path.join(root, 'CMakeLists.txt'), 'utf8');
  assert.equal(pkg.version, /project\(rankcast VERSION ([0-9.]+)/.exec(cmake)[1]);
  assert.equal(pkg.name, 'rankcast');
  assert.deepEqual(pkg.exports['.'], { types: './rankcast.d.ts', import: './rankcast.mjs', require: './rankcast.js' });
  assert.equal(pkg.types, './rankcast.d.ts');
  for (const f of pkg.files) assert.ok(fs.existsSync(path.join(web, f)), f);
});

test('the gateway serves rankcast.mjs as JavaScript, and the pages load it as a module',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 60000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const mjs = await h.http(gw.base, 'GET', '/rankcast.mjs', undefined, { token: null });
    assert.equal(mjs.status, 200);
    assert.match(mjs.headers.get('content-type'), /^text\/javascript\b/);
    assert.equal(mjs.text, fs.readFileSync(path.join(web, 'rankcast.mjs'), 'utf8'));
    const js = await h.http(gw.base, 'GET', '/rankcast.js', undefined, { token: null });
    assert.match(js.headers.get('content-type'), /javascript/);
    for (const [page, entry] of [['/', 'app.js'], ['/console.html', 'caster.js']]) {
      const html = (await h.http(gw.base, 'GET', page, undefined, { token: null })).text;
      assert.ok(html.includes(`<script type="module" src="${entry}"></script>`), `${page} loads ${entry} as a module`);
      assert.ok(!html.includes('rankcast.js'), `${page} loads no copy of the classic script`);
      const code = (await h.http(gw.base, 'GET', '/' + entry, undefined, { token: null })).text;
      assert.match(code, /^import \* as Rankcast from '\.\/rankcast\.mjs';$/m, `${entry} imports the module`);
    }
  });
