// Standings at a moment, replay and rank history in the pages (PROTOCOL v1.2),
// in a real Chromium against a real gateway and Redis (harness startStack):
//  1. the caster console's timeline: moving the range with the keyboard to
//     seq S shows the standings at S, and they equal a REST `at_seq=S` read
//     (checked at two seqs); frozen, the admin console reads moments past
//     the freeze (`live`), as REST `&live=1` does;
//  2. "replay from here" at 16x from a scrubbed moment plays in the overlay
//     preview and ends live (the pane says live once the server's `live`
//     came); a write after that shows in the same pane;
//  3. the dashboard: picking a member's name opens the rank-over-time chart,
//     whose points (the SVG's circles and the points table) are exactly the
//     non-null points of a REST history read over the same span and step.
// Screenshots: tests/artifacts/timeline-*.png.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const chromium = require('./chromium.js');

const { requireE2e } = chromium;
const h = requireE2e('./harness.js');

const ARTIFACTS = path.join(h.repoRoot, 'tests', 'artifacts');
const WAIT = 20000; // generous: two shared cores

function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  return errors;
}

async function write(gw, board, member, body) {
  const res = await h.http(gw.base, 'POST', `/api/v1/boards/${board}/scores`, Object.assign({ member }, body));
  assert.equal(res.status, 200, `write to ${board} answered ${res.status}: ${res.text}`);
  return res.body;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const col = (board) => `.col[data-board="${board}"]`;

// A pane's rows as "rank member score" (the rank cell's number, the score as shown).
function paneRows(page, sel) {
  return page.$$eval(`${sel} tbody tr[data-member]`,
    (trs) => trs.map((tr) => `${tr.querySelector('.rank .n').textContent} ${tr.dataset.member} ${tr.cells[tr.cells.length - 1].textContent}`));
}
const restRows = (rows) => rows.map((r) => `${r.rank} ${r.member} ${r.score}`);

async function waitRows(page, sel, want, what) {
  try {
    await page.waitForFunction(({ sel, want }) => {
      const got = [...document.querySelectorAll(`${sel} tbody tr[data-member]`)]
        .map((tr) => `${tr.querySelector('.rank .n').textContent} ${tr.dataset.member} ${tr.cells[tr.cells.length - 1].textContent}`);
      return JSON.stringify(got) === JSON.stringify(want);
    }, { sel, want }, { timeout: WAIT });
  } catch (e) {
    assert.fail(`${what}: ${sel} never showed ${JSON.stringify(want)}; it shows ${JSON.stringify(await paneRows(page, sel))}`);
  }
}

async function seeded(gw) {
  // small scores: the tables show them without thousands separators
  const acks = [];
  acks.push(await write(gw, 'demo', 'user:a', { op: 'set', value: 100 }));
  acks.push(await write(gw, 'demo', 'user:b', { op: 'set', value: 50 }));
  acks.push(await write(gw, 'demo', 'user:c', { op: 'set', value: 80 }));
  acks.push(await write(gw, 'demo', 'user:b', { op: 'incr', delta: 100 }));  // b 2 -> 1
  acks.push(await write(gw, 'demo', 'user:c', { op: 'incr', delta: 200 }));  // c 2 -> 1
  acks.push(await write(gw, 'demo', 'user:d', { op: 'set', value: 90 }));
  return acks;
}

async function openConsole(t, gw) {
  const context = await chromium.launch(t, { viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${gw.base}/console.html?boards=demo&top=10&token=${encodeURIComponent(h.ADMIN_KEY)}`);
  await page.waitForFunction(() => document.getElementById('conn').dataset.state === 'open', null, { timeout: WAIT });
  return { page, errors };
}

// Moves the range with the keyboard: Home (seq 0), then one ArrowRight per seq.
async function scrubTo(page, seq) {
  const range = `${col('demo')} .timeline input[name="at"]`;
  await page.focus(range);
  await page.keyboard.press('Home');
  for (let i = 0; i < seq; i++) await page.keyboard.press('ArrowRight');
  assert.equal(await page.inputValue(range), String(seq));
  await page.waitForSelector(`${col('demo')} .pane.moment[data-at-seq="${seq}"]`, { timeout: WAIT });
}

test('console timeline: the standings at a scrubbed seq equal a REST at_seq read',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 150000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const acks = await seeded(gw);
    const last = acks[acks.length - 1].seq;
    const { page, errors } = await openConsole(t, gw);
    const range = `${col('demo')} .timeline input[name="at"]`;
    await page.waitForFunction(({ sel, last }) => document.querySelector(sel).max === String(last),
      { sel: range, last }, { timeout: WAIT });
    assert.equal(await page.isVisible(`${col('demo')} .pane.moment`), false, 'no moment pane before a scrub');
    assert.equal(await page.getAttribute(range, 'aria-valuetext'), `now, seq ${last}`);

    for (const seq of [acks[2].seq, acks[4].seq]) {
      await scrubTo(page, seq);
      const rest = await h.http(gw.base, 'GET', `/api/v1/boards/demo?top=10&at_seq=${seq}`);
      assert.equal(rest.status, 200, rest.text);
      assert.equal(rest.body.at_seq, seq);
      const want = restRows(rest.body.rows);
      assert.ok(want.length >= 3, `the read at seq ${seq} has rows: ${rest.text}`);
      await waitRows(page, `${col('demo')} .pane.moment`, want, `scrubbed to seq ${seq}`);
      assert.match(await page.textContent(`${col('demo')} .pane.moment h3`), new RegExp(`At seq ${seq}\\b`));
      assert.match(await page.getAttribute(range, 'aria-valuetext'), new RegExp(`^seq ${seq}\\b`));
    }
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'timeline-scrub.png') });

    // Now returns to the present: the pane goes, the thumb follows the live seq
    await page.click(`${col('demo')} .timeline [data-role="now"]`);
    await page.waitForSelector(`${col('demo')} .pane.moment`, { state: 'hidden', timeout: WAIT });
    const more = await write(gw, 'demo', 'user:e', { op: 'set', value: 10 });
    await page.waitForFunction(({ sel, seq }) => document.querySelector(sel).value === String(seq),
      { sel: range, seq: more.seq }, { timeout: WAIT });

    // frozen: a write after the freeze is a moment the audience has not seen; the
    // admin console's range reaches it (End) and reads it as REST &live=1 does
    const frozen = await h.http(gw.base, 'POST', '/api/v1/boards/demo/freeze', {});
    assert.equal(frozen.status, 200, frozen.text);
    const hidden = await write(gw, 'demo', 'user:f', { op: 'set', value: 777 });
    await page.waitForFunction(({ sel, seq }) => document.querySelector(sel).max === String(seq),
      { sel: range, seq: hidden.seq }, { timeout: WAIT });
    await page.focus(range);
    await page.keyboard.press('Home'); // the thumb is at the present already: End alone moves nothing
    await page.keyboard.press('End');
    await page.waitForSelector(`${col('demo')} .pane.moment[data-at-seq="${hidden.seq}"]`, { timeout: WAIT });
    const live = await h.http(gw.base, 'GET', `/api/v1/boards/demo?top=10&at_seq=${hidden.seq}&live=1`);
    assert.equal(live.status, 200, live.text);
    assert.equal(live.body.rows[0].member, 'user:f');
    await waitRows(page, `${col('demo')} .pane.moment`, restRows(live.body.rows), 'a moment past the freeze');
    assert.deepEqual(errors, []);
  });

test('console timeline: replay from a scrubbed moment at 16x ends live; later writes show',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 150000 }, async (t) => {
    const { gw } = await h.startStack(t);
    const acks = await seeded(gw);
    const last = acks[acks.length - 1].seq;
    const { page, errors } = await openConsole(t, gw);
    const range = `${col('demo')} .timeline input[name="at"]`;
    await page.waitForFunction(({ sel, last }) => document.querySelector(sel).max === String(last),
      { sel: range, last }, { timeout: WAIT });
    await scrubTo(page, acks[1].seq);

    const pane = `${col('demo')} .pane.replay`;
    assert.equal(await page.isVisible(pane), false, 'no preview before a replay');
    // every state the preview takes, from the click on, and its first rows
    await page.evaluate(() => {
      window.replayStates = [];
      window.replayFirstRows = null;
      const tbody = document.querySelector('.pane.replay tbody');
      new MutationObserver(() => {
        if (window.replayFirstRows || !tbody.rows.length) return;
        window.replayFirstRows = [...tbody.rows].map((tr) =>
          `${tr.querySelector('.rank .n').textContent} ${tr.dataset.member} ${tr.cells[tr.cells.length - 1].textContent}`);
      }).observe(tbody, { childList: true, subtree: true, characterData: true });
      const seen = () => {
        const p = document.querySelector('.pane.replay');
        const s = p.dataset.state;
        if (s && window.replayStates[window.replayStates.length - 1] !== s) window.replayStates.push(s);
      };
      new MutationObserver(seen).observe(document.querySelector('.pane.replay'), { attributes: true });
    });
    await page.click(`${col('demo')} .timeline [data-speed="16"]`);
    await page.waitForSelector(`${pane}[data-state="live"]`, { timeout: WAIT });
    assert.deepEqual(await page.evaluate(() => window.replayStates), ['playing', 'live']);
    // the replay started at the moment scrubbed to
    const start = await h.http(gw.base, 'GET', `/api/v1/boards/demo?top=10&at_seq=${acks[1].seq}`);
    assert.deepEqual(await page.evaluate(() => window.replayFirstRows), restRows(start.body.rows));
    assert.equal(await page.getAttribute(pane, 'data-speed'), '16');
    assert.match(await page.textContent(`${col('demo')} .timeline [data-role="replay-state"]`), /live since seq \d+/);
    const now = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=10');
    assert.equal(now.status, 200, now.text);
    await waitRows(page, pane, restRows(now.body.rows), 'the replay reached the present');

    // the same view goes on live: a write shows in the preview
    await write(gw, 'demo', 'user:z', { op: 'set', value: 999 });
    const after = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=10');
    assert.equal(after.body.rows[0].member, 'user:z');
    await waitRows(page, pane, restRows(after.body.rows), 'a write after the replay');
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'timeline-replay.png') });

    await page.click(`${col('demo')} .timeline [data-role="stop"]`);
    await page.waitForSelector(pane, { state: 'hidden', timeout: WAIT });
    assert.deepEqual(errors, []);
  });

test('dashboard: a member\'s rank chart has the points of the history reply',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 150000 }, async (t) => {
    const { gw } = await h.startStack(t);
    // spaced over more than one step of the chart's "last minute" (600 ms a point),
    // so user:b's rank differs between points
    await write(gw, 'demo', 'user:a', { op: 'set', value: 100 });
    await write(gw, 'demo', 'user:b', { op: 'set', value: 50 });   // b 2
    await sleep(1500);
    await write(gw, 'demo', 'user:b', { op: 'incr', delta: 100 }); // b 1
    await sleep(1500);
    await write(gw, 'demo', 'user:c', { op: 'set', value: 500 });  // b 2
    await sleep(1500); // the chart's span ends a second before the page's clock

    const context = await chromium.launch(t);
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${gw.base}/?board=demo&top=10`);
    const name = '#table tbody tr[data-member="user:b"] button.pick-row';
    await page.waitForSelector(name, { timeout: WAIT });
    assert.equal(await page.isVisible('#chart-wrap'), false);
    await page.focus(name);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#chart-wrap', { state: 'visible', timeout: WAIT });
    await page.selectOption('#chart-span', '60000');
    await page.waitForFunction(() => {
      const svg = document.getElementById('chart');
      return svg.dataset.member === 'user:b' && svg.dataset.step === '600' && svg.querySelectorAll('circle').length > 0;
    }, null, { timeout: WAIT });

    const drawn = await page.evaluate(() => {
      const svg = document.getElementById('chart');
      return {
        from: Number(svg.dataset.from), to: Number(svg.dataset.to), step: Number(svg.dataset.step),
        circles: [...svg.querySelectorAll('circle')].map((c) => ({
          at: Number(c.dataset.at), seq: Number(c.dataset.seq), rank: Number(c.dataset.rank), score: Number(c.dataset.score),
          cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')),
        })),
        tableRows: document.querySelectorAll('#chart-points tbody tr').length,
      };
    });
    const res = await h.http(gw.base, 'GET',
      `/api/v1/boards/demo/members/${encodeURIComponent('user:b')}/history?from=${drawn.from}&to=${drawn.to}&step=${drawn.step}`);
    assert.equal(res.status, 200, res.text);
    const points = res.body.points;
    assert.equal(drawn.tableRows, points.length, 'the points table lists every point');
    const ranked = points.filter((p) => p.rank != null);
    assert.deepEqual(drawn.circles.map(({ at, seq, rank, score }) => ({ at, seq, rank, score })),
      ranked.map(({ at, seq, rank, score }) => ({ at, seq, rank, score })));
    assert.deepEqual([...new Set(ranked.map((p) => p.rank))].sort(), [1, 2], 'b was 2nd, 1st, then 2nd again');
    // later points to the right; rank 1 above rank 2
    for (let i = 1; i < drawn.circles.length; i++) assert.ok(drawn.circles[i].cx > drawn.circles[i - 1].cx);
    const y1 = drawn.circles.find((c) => c.rank === 1).cy;
    const y2 = drawn.circles.find((c) => c.rank === 2).cy;
    assert.ok(y1 < y2, `rank 1 (y ${y1}) is drawn above rank 2 (y ${y2})`);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'timeline-chart.png'), fullPage: true });

    await page.click('#chart-close');
    await page.waitForSelector('#chart-wrap', { state: 'hidden', timeout: WAIT });
    assert.deepEqual(errors, []);
  });

test('a capped log: the timeline starts at the oldest seq kept, the chart at the oldest moment kept',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 150000 }, async (t) => {
    const config = h.configWith(t, { 'board demo': { log_cap: 5 } });
    const { gw } = await h.startStack(t, { config });
    let ack;
    for (let i = 1; i <= 12; i++) ack = await write(gw, 'demo', `user:${i % 4}`, { op: 'incr', delta: i });
    assert.equal(ack.seq, 12); // the log holds seqs 8..12
    await sleep(1500); // the chart's span ends a second before the page's clock

    const { page, errors } = await openConsole(t, gw);
    const range = `${col('demo')} .timeline input[name="at"]`;
    await page.waitForFunction((sel) => document.querySelector(sel).max === '12', range, { timeout: WAIT });
    await page.focus(range);
    await page.keyboard.press('Home'); // seq 0: out_of_range, oldest_seq 8
    await page.waitForFunction((sel) => document.querySelector(sel).min === '8', range, { timeout: WAIT });
    assert.match(await page.textContent(`${col('demo')} .timeline [data-role="at"]`), /no longer kept \(oldest: 8\)/);
    await page.keyboard.press('ArrowRight');
    await page.waitForSelector(`${col('demo')} .pane.moment[data-at-seq="9"]`, { timeout: WAIT });
    const rest = await h.http(gw.base, 'GET', '/api/v1/boards/demo?top=10&at_seq=9');
    assert.equal(rest.status, 200, rest.text);
    await waitRows(page, `${col('demo')} .pane.moment`, restRows(rest.body.rows), 'the first seq after the oldest');

    const dash = await page.context().newPage();
    const dashErrors = watchErrors(dash);
    await dash.goto(`${gw.base}/?board=demo&top=10`);
    const name = '#table tbody tr[data-member="user:1"] button.pick-row';
    await dash.waitForSelector(name, { timeout: WAIT });
    await dash.click(name);
    await dash.waitForFunction(() => document.getElementById('chart').querySelectorAll('circle').length > 0, null, { timeout: WAIT });
    const svg = await dash.evaluate(() => Object.assign({}, document.getElementById('chart').dataset));
    const [from, to, step] = [Number(svg.from), Number(svg.to), Number(svg.step)];
    assert.ok(to - from < 300000, `the chart starts after the span's start (from ${from}, to ${to})`);
    const res = await h.http(gw.base, 'GET', `/api/v1/boards/demo/members/user%3A1/history?from=${from}&to=${to}&step=${step}`);
    assert.equal(res.status, 200, res.text);
    const early = await h.http(gw.base, 'GET', `/api/v1/boards/demo/members/user%3A1/history?from=${to - 300000}&to=${to}&step=${step}`);
    assert.equal(early.status, 422, `the whole span is out of range: ${early.text}`);
    const circles = await dash.$$eval('#chart circle', (cs) => cs.map((c) => ({ at: Number(c.dataset.at), rank: Number(c.dataset.rank) })));
    assert.deepEqual(circles, res.body.points.filter((p) => p.rank != null).map(({ at, rank }) => ({ at, rank })));
    assert.deepEqual(errors, []);
    assert.deepEqual(dashErrors, []);
  });
