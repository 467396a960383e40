// Member lists and team boards (PROTOCOL v1.2) in the pages, in a real
// Chromium against a real gateway and Redis, on the shipped `players` board
// (teams = squads):
//  1. the dashboard's Friends tab: the listed members live with board-wide
//     ranks, absent ones listed; a rank shift caused by someone not listed,
//     a listed member overtaking another and an absent one arriving all show
//     without a reload; a new list typed in the box replaces it. Its Teams
//     tab: squads live, a team's roster on click (members without points
//     listed), a member's write moves its team's row and its roster row, a
//     member moved between teams moves both teams and both rosters; the
//     console's team form puts a member on a team; tabs work by keyboard;
//  2. the overlay with &members= (only those members, live) and &team= (the
//     roster, live), without the team column and without tabs;
//  3. the caster console: a team column on players, "+ squads" adds the team
//     board's column beside it, and a write moves the team's row there.
// Every wait is a condition with a generous deadline (two shared cores).
// Screenshots: tests/artifacts/friends-*.png, teams-*.png.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const chromium = require('./chromium.js');

const { requireE2e } = chromium;
const h = requireE2e('./harness.js');

const ARTIFACTS = path.join(h.repoRoot, 'tests', 'artifacts');
const WAIT = 15000;

function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  return errors;
}

async function incr(gw, member, delta) {
  const res = await h.http(gw.base, 'POST', '/api/v1/boards/players/scores', { member, op: 'incr', delta });
  assert.equal(res.status, 200, `incr ${member} answered ${res.status}: ${res.text}`);
  return res.body;
}

async function join(gw, member, team) {
  const res = await h.http(gw.base, 'PUT', `/api/v1/boards/players/members/${encodeURIComponent(member)}/team`, { team });
  assert.equal(res.status, 200, `team ${member} ${team} answered ${res.status}: ${res.text}`);
  assert.equal(res.body.op, 'teamed');
}

// red: ann 10 + bob 20 = 30; blue: cat 30 + dan 5 = 35; eve 50 has no team.
// players: eve 1, cat 2, bob 3, ann 4, dan 5; squads: blue 1, red 2.
async function seed(gw) {
  for (const [m, team] of [['ann', 'red'], ['bob', 'red'], ['cat', 'blue'], ['dan', 'blue']]) await join(gw, m, team);
  for (const [m, d] of [['ann', 10], ['bob', 20], ['cat', 30], ['dan', 5], ['eve', 50]]) await incr(gw, m, d);
}

// Runs in the page: a table's rows as "member rank score" (the rank cell without its
// move marker), in order; with want, whether they are exactly want.
function rowsIn({ sel, want }) {
  const got = [...document.querySelectorAll(`${sel} tbody tr[data-member]`)].map((tr) =>
    `${tr.dataset.member} ${tr.cells[0].querySelector('.n').textContent} ${tr.cells[tr.cells.length - 1].textContent}`);
  return want === undefined ? got : JSON.stringify(got) === JSON.stringify(want);
}

async function waitRows(page, sel, want, what) {
  try {
    await page.waitForFunction(rowsIn, { sel, want }, { timeout: WAIT });
  } catch (err) {
    const got = await page.evaluate(rowsIn, { sel });
    assert.fail(`${what}: ${sel} shows ${JSON.stringify(got)}, want ${JSON.stringify(want)} (${err.message.split('\n')[0]})`);
  }
}

async function waitAbsent(page, sel, want, what) {
  try {
    await page.waitForFunction(({ sel, want }) => {
      const wrap = document.querySelector(sel + '-wrap');
      const got = wrap.hidden ? [] : [...document.querySelectorAll(`${sel} li`)].map((li) => li.dataset.member);
      return JSON.stringify(got) === JSON.stringify(want);
    }, { sel, want }, { timeout: WAIT });
  } catch (err) {
    const got = await page.$$eval(`${sel} li`, (lis) => lis.map((li) => li.dataset.member));
    assert.fail(`${what}: ${sel} lists ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

test('dashboard: the Friends tab follows a member list live; the Teams tab shows squads and a roster live',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 180000 }, async (t) => {
    const { gw } = await h.startStack(t);
    await seed(gw);
    const context = await chromium.launch(t);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const page = await context.newPage();
    const errors = watchErrors(page);

    // with the admin key: the console's team form writes
    await page.goto(`${gw.base}/?board=players&top=10&members=ann,cat,zed&token=${encodeURIComponent(h.ADMIN_KEY)}`);
    await page.waitForFunction(() => document.getElementById('conn').dataset.state === 'open', null, { timeout: WAIT });
    // the address's members= opens the Friends tab
    await page.waitForSelector('#pane-friends:not([hidden])', { timeout: WAIT });
    assert.equal(await page.getAttribute('#tab-friends', 'aria-selected'), 'true');
    assert.equal(await page.inputValue('#friends'), 'ann, cat, zed');
    await waitRows(page, '#friends-table', ['cat 2 30', 'ann 4 10'], 'first snapshot');
    await waitAbsent(page, '#friends-absent', ['zed'], 'first snapshot');
    // players declares teams: the team column shows
    assert.deepEqual(await page.$$eval('#friends-table thead th', (ths) => ths.map((th) => th.textContent)),
      ['#', 'name', 'team', 'score']);
    assert.equal(await page.textContent('#friends-table tr[data-member="ann"] td.team'), 'red');

    await incr(gw, 'dan', 100); // not listed: shifts cat and ann down one place
    await waitRows(page, '#friends-table', ['cat 3 30', 'ann 5 10'], 'a rank shift by another member');
    await incr(gw, 'ann', 100); // ann passes everyone, cat included
    await waitRows(page, '#friends-table', ['ann 1 110', 'cat 4 30'], 'a listed member overtakes another');
    assert.equal(await page.getAttribute('#friends-table tr[data-member="ann"]', 'data-move'), 'up');
    await incr(gw, 'zed', 1); // the absent member arrives
    await waitRows(page, '#friends-table', ['ann 1 110', 'cat 4 30', 'zed 6 1'], 'an absent member scores');
    await waitAbsent(page, '#friends-absent', [], 'an absent member scores');
    await page.screenshot({ path: path.join(ARTIFACTS, 'friends-dashboard.png'), fullPage: true });

    // a new list from the box, and the address follows
    await page.fill('#friends', 'bob nobody');
    await page.click('#friends-form button[type="submit"]');
    await waitRows(page, '#friends-table', ['bob 5 20'], 'a list typed in the box');
    await waitAbsent(page, '#friends-absent', ['nobody'], 'a list typed in the box');
    assert.equal(new URL(page.url()).searchParams.get('members'), 'bob,nobody');
    assert.match(await page.getAttribute('#friends-overlay', 'href'), /overlay=1.*members=bob%2Cnobody|members=bob%2Cnobody.*overlay=1/);

    // Teams: red = ann 110 + bob 20 = 130, blue = cat 30 + dan 105 = 135
    assert.equal(await page.isVisible('#tab-teams'), true);
    await page.click('#tab-teams');
    await waitRows(page, '#teams-table', ['blue 1 135', 'red 2 130'], 'the team board');
    assert.equal(await page.isHidden('#roster'), true);
    // keyboard: the arrows move between tabs; the picked team's button takes Enter
    await page.focus('#tab-teams');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getAttribute('#tab-friends', 'aria-selected'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-friends');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getAttribute('#tab-teams', 'aria-selected'), 'true');
    await page.focus('#teams-table tr[data-member="red"] button.pick-row');
    await page.keyboard.press('Enter');
    await waitRows(page, '#roster-table', ['ann 1 110', 'bob 5 20'], 'red\'s roster');
    assert.equal(new URL(page.url()).searchParams.get('team'), 'red');
    assert.equal(await page.getAttribute('#teams-table tr[data-member="red"] button.pick-row', 'aria-pressed'), 'true');

    await incr(gw, 'bob', 12); // red 142 passes blue; bob passes cat on players
    await waitRows(page, '#teams-table', ['red 1 142', 'blue 2 135'], 'a member\'s write moves its team');
    await waitRows(page, '#roster-table', ['ann 1 110', 'bob 4 32'], 'the writer\'s roster row');

    await join(gw, 'fay', 'red'); // a member without points: listed under the roster
    await waitAbsent(page, '#roster-absent', ['fay'], 'a member without points joins');
    await join(gw, 'cat', 'red'); // blue 105, red 172: both teams move at once
    await waitRows(page, '#teams-table', ['red 1 172', 'blue 2 105'], 'a member moved between teams');
    await waitRows(page, '#roster-table', ['ann 1 110', 'bob 4 32', 'cat 5 30'], 'the moved member joins the roster');
    await page.click('#teams-table tr[data-member="blue"] button.pick-row');
    await waitRows(page, '#roster-table', ['dan 2 105'], 'blue\'s roster after the move');
    // the console's team form (shown on a board with teams) puts gus on blue
    assert.equal(await page.isVisible('#team-form'), true);
    await page.fill('#t-member', 'gus');
    await page.fill('#t-team', 'blue');
    await page.click('#team-form button[type="submit"]');
    await waitAbsent(page, '#roster-absent', ['gus'], 'a member put on blue from the console');
    assert.match(await page.textContent('#log li.ok code'), /"op":"teamed".*"team":"blue"/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'teams-dashboard.png'), fullPage: true });

    // a board without teams hides the tab (and the Standings tab comes back)
    await page.selectOption('#board', 'demo');
    await page.click('#pick button[type="submit"]');
    await page.waitForSelector('#tab-teams[hidden]', { state: 'attached', timeout: WAIT });
    assert.equal(await page.getAttribute('#tab-board', 'aria-selected'), 'true');
    assert.equal(new URL(page.url()).searchParams.get('team'), null);
    assert.equal(await page.isHidden('#team-form'), true);
    assert.deepEqual(errors, []);
  });

test('overlay: &members= shows only those members live, &team= a team\'s roster live',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 120000 }, async (t) => {
    const { gw } = await h.startStack(t);
    await seed(gw);
    const context = await chromium.launch(t, { viewport: { width: 1280, height: 720 } });
    fs.mkdirSync(ARTIFACTS, { recursive: true });

    const friends = await context.newPage();
    const friendsErrors = watchErrors(friends);
    await friends.goto(`${gw.base}/?overlay=1&board=players&members=ann,cat,zed&theme=broadcast`);
    await waitRows(friends, '#table', ['cat 2 30', 'ann 4 10'], 'members overlay');
    for (const chrome of ['.bar', '.picker', '.console', '.tabs', '#table td.team']) {
      assert.equal(await friends.isHidden(chrome), true, chrome);
    }
    await incr(gw, 'dan', 100);
    await waitRows(friends, '#table', ['cat 3 30', 'ann 5 10'], 'members overlay: a rank shift by another');
    await incr(gw, 'ann', 100);
    await waitRows(friends, '#table', ['ann 1 110', 'cat 4 30'], 'members overlay: ann passes cat');
    await friends.screenshot({ path: path.join(ARTIFACTS, 'friends-overlay.png'), omitBackground: true });

    const roster = await context.newPage();
    const rosterErrors = watchErrors(roster);
    await roster.goto(`${gw.base}/?overlay=1&board=players&team=red`);
    await waitRows(roster, '#table', ['ann 1 110', 'bob 5 20'], 'roster overlay');
    await incr(gw, 'bob', 200);
    await waitRows(roster, '#table', ['bob 1 220', 'ann 2 110'], 'roster overlay: bob passes ann');
    await join(gw, 'cat', 'red');
    await waitRows(roster, '#table', ['bob 1 220', 'ann 2 110', 'cat 5 30'], 'roster overlay: cat joins red');
    assert.equal(await roster.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgba(0, 0, 0, 0)');

    assert.deepEqual(friendsErrors, []);
    assert.deepEqual(rosterErrors, []);
  });

test('caster console: players gets a team column; "+ squads" adds the team board beside it, live',
  { skip: h.toolMissing(h.gatewayMissing()), timeout: 120000 }, async (t) => {
    const { gw } = await h.startStack(t);
    await seed(gw);
    const context = await chromium.launch(t, { viewport: { width: 1440, height: 900 } });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${gw.base}/console.html?boards=players,demo&top=10&token=${encodeURIComponent(h.ADMIN_KEY)}`);

    const players = '.col[data-board="players"] .pane.audience table';
    await waitRows(page, players, ['eve 1 50', 'cat 2 30', 'bob 3 20', 'ann 4 10', 'dan 5 5'], 'players');
    assert.deepEqual(await page.$$eval(`${players} thead th`, (ths) => ths.map((th) => th.textContent)),
      ['#', 'name', 'team', 'score']);
    assert.deepEqual(await page.$$eval(`${players} tbody td.team`, (tds) => tds.map((td) => td.textContent)),
      ['', 'blue', 'red', 'red', 'blue']);
    assert.equal(await page.isHidden('.col[data-board="demo"] [data-role="add-team"]'), true);

    await page.click('.col[data-board="players"] [data-role="add-team"]');
    const squads = '.col[data-board="squads"] .pane.audience table';
    await waitRows(page, squads, ['blue 1 35', 'red 2 30'], 'squads');
    // beside its source, on screen and in the address
    assert.deepEqual(await page.$$eval('.col', (cols) => cols.map((c) => c.dataset.board)), ['players', 'squads', 'demo']);
    assert.equal(new URL(page.url()).searchParams.get('boards'), 'players,squads,demo');

    await incr(gw, 'ann', 15); // red 45 passes blue; ann passes bob
    await waitRows(page, squads, ['red 1 45', 'blue 2 35'], 'squads after a member\'s write');
    await waitRows(page, players, ['eve 1 50', 'cat 2 30', 'ann 3 25', 'bob 4 20', 'dan 5 5'], 'players after the write');
    await join(gw, 'ann', 'blue'); // a move: red 20, blue 60
    await waitRows(page, squads, ['blue 1 60', 'red 2 20'], 'squads after a move');
    await page.waitForFunction((sel) => document.querySelector(sel).textContent === 'blue',
      `${players} tr[data-member="ann"] td.team`, { timeout: WAIT });
    await page.screenshot({ path: path.join(ARTIFACTS, 'teams-console.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });
