// The classic <script src="/rankcast.js"> form: a script (no import, no export), using the
// global `Rankcast` that rankcast.d.ts declares (export as namespace Rankcast).
// Type-checked by tests/e2e/rankcast_types.test.js with the rest of tests/types.
const classic = new Rankcast.Client({ onState: (s) => console.log(s) });
classic.subscribe({ board: 'demo', view: { top: 10 } }, {
  onChange(view, changes) { console.log(view.rows.length, changes.length); },
});
Rankcast.rest({ token: 'KEY' }).boards().then((boards) => console.log(boards.map((b) => b.name)));
