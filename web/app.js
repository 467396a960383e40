/* app.js - the dashboard page: reads the query string, lets the user pick a
 * board, a view and a period, and keeps one live subscription on the table.
 *
 * Query params (also what the page writes back, so a link reopens the same
 * view): board, top | offset+limit | around+radius | feed=1, period
 * (current, previous or an id), token, max_rate (passed to the subscribe as
 * is: at most that many updates a second, 1..50; the server refuses other
 * values), places=shared (rows show shared places: T2 when tied). overlay=1
 * shows only the table, on a transparent page, for an OBS browser source,
 * with theme=dark|light|broadcast (index.html applies it before first paint):
 *   /?overlay=1&board=demo&top=10&max_rate=2&places=shared&theme=broadcast
 * A board whose last snapshot/delta says "frozen" gets a FROZEN badge.
 * members=a,b,c (a member list, PROTOCOL v1.2) and team=ID (a team's roster
 * on a board with teams): the overlay shows only those members, live; the
 * dashboard opens them in its Friends and Teams tabs beside the standings.
 * The overlay link uses the "Overlay token" field when filled (a read-only
 * token from `rankcast token --scope read --board demo --ttl 30d`), else
 * this page's own token.
 */
// A module (index.html loads it with type="module"): the client library is the ES module
// web/rankcast.mjs, the one source the classic rankcast.js is made from.
import * as Rankcast from './rankcast.mjs';
import { rankChartDraw } from './rank_chart.js';

(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const token = params.get('token') || undefined;
  const overlay = params.get('overlay') === '1';

  const client = new Rankcast.Client({ token, onState: showState });
  let pickMember = null; // the dashboard: a name picked in the table opens its rank chart
  const table = new RankTable($('table'), $('empty'), overlay ? undefined : {
    onPick: (m) => { if (pickMember) pickMember(m); },
    pickTitle: (m) => `show ${m}'s rank over time`,
  });
  let live = null; // the View on screen

  function showState(state, info) {
    document.documentElement.dataset.conn = state;
    const label = state === 'reconnecting' && info.delay
      ? `reconnecting in ${(info.delay / 1000).toFixed(1)} s` : state;
    $('conn').dataset.state = state;
    $('conn').lastElementChild.textContent = label;
  }

  /* ---- selections <-> query params ---- */

  function fromParams(p) {
    const int = (k, d) => {
      const v = parseInt(p.get(k), 10);
      return Number.isFinite(v) ? v : d;
    };
    let view;
    if (p.get('feed') === '1' || p.get('feed') === 'true') view = { feed: true };
    else if (p.has('around')) view = { around: p.get('around'), radius: int('radius', 5) };
    else if (p.has('limit') || p.has('offset')) view = { offset: int('offset', 0), limit: int('limit', 25) };
    else view = { top: int('top', 10) };
    // max_rate goes to the server untouched (a number when it reads as one),
    // so a bad value is refused there and shown, never silently changed.
    const rate = p.get('max_rate');
    const maxRate = rate === null || rate === '' ? null : (Number.isFinite(Number(rate)) ? Number(rate) : rate);
    // places=shared: every row gets its shared place (1, 2, 2, 4) and tied.
    const places = p.get('places') === 'shared' ? 'shared' : null;
    const members = p.has('members') ? namesOf(p.get('members')) : null;
    const team = p.get('team') || null;
    return { board: p.get('board') || '', view, period: p.get('period') || 'current', maxRate, places, members, team };
  }

  // A typed or linked list of member names: commas or spaces between them, each once.
  function namesOf(text) {
    return Array.from(new Set(String(text || '').split(/[\s,]+/).filter(Boolean)));
  }

  // The overlay shows the member list or the roster the address names instead of the window.
  function overlayView(sel) {
    if (sel.members) return Object.assign({}, sel, { view: { members: sel.members } });
    if (sel.team) return Object.assign({}, sel, { view: { team: sel.team } });
    return sel;
  }

  function toParams(sel) {
    const p = new URLSearchParams();
    p.set('board', sel.board);
    const v = sel.view;
    if (v.feed) p.set('feed', '1');
    else if (v.around != null) { p.set('around', v.around); p.set('radius', v.radius); }
    else if (v.limit != null) { p.set('offset', v.offset); p.set('limit', v.limit); }
    else p.set('top', v.top);
    if (sel.period !== 'current') p.set('period', sel.period);
    if (sel.maxRate != null) p.set('max_rate', sel.maxRate);
    if (sel.places) p.set('places', sel.places);
    if (sel.members && sel.members.length) p.set('members', sel.members.join(','));
    if (sel.team) p.set('team', sel.team);
    if (token) p.set('token', token);
    return p;
  }

  function describe(sel) {
    const v = sel.view;
    const what = v.feed ? 'feed'
      : v.members ? `${v.members.length} ${v.members.length === 1 ? 'member' : 'members'}`
      : v.team != null ? `team ${v.team}`
      : v.around != null ? `around ${v.around} ±${v.radius}`
        : v.limit != null ? `ranks ${v.offset + 1}–${v.offset + v.limit}` : `top ${v.top}`;
    return [sel.board, what].concat(sel.period !== 'current' ? [sel.period] : []).join(' · ');
  }

  /* ---- the live view ---- */

  function show(sel, meta) {
    if (live) live.close();
    table.reset(meta, sel.view);
    $('title').textContent = describe(sel);
    $('stats').textContent = '';
    showFrozen(null);
    live = client.subscribe(
      { board: sel.board, view: sel.view, period: sel.period === 'current' ? null : sel.period, max_rate: sel.maxRate,
        places: sel.places },
      {
        onChange: (v, changes, info) => { table.render(v, changes, info); showStats(v); showFrozen(frozenOf(v, info)); },
        onViewers: (v) => showStats(v),
        onFrozen: (v, f) => showFrozen(f && f.frozen != null ? f.frozen : null), // libraries that report it
        onError: (v, err) => table.error(err),
      });
  }

  // The seq a frozen board shows, or null when it is live: the latest
  // snapshot/delta says (its "frozen"), as the library reports it (info or
  // view; a library without freeze support reports neither: never frozen).
  function frozenOf(v, info) {
    const f = info && info.frozen !== undefined ? info.frozen : v.frozen;
    return f === undefined || f === null || f === false ? null : f;
  }

  function showFrozen(seq) {
    const badge = $('frozen');
    badge.hidden = seq == null;
    badge.title = seq == null ? '' : `standings frozen at seq ${seq}`;
  }

  function showStats(v) {
    const parts = [];
    if (v.periodId) parts.push('period ' + v.periodId);
    if (v.total != null) parts.push(v.total + (v.total === 1 ? ' member' : ' members'));
    if (v.seq != null) parts.push('seq ' + v.seq);
    if (v.viewers != null) parts.push(v.viewers + (v.viewers === 1 ? ' viewer' : ' viewers'));
    $('stats').textContent = parts.join(' · ');
  }

  /* ---- friends and teams (PROTOCOL v1.2: member lists, rosters) ---- */

  const TABS = ['board', 'friends', 'teams'];
  const TEAMS_TOP = 25; // the team tab's window on board T

  // The WAI-ARIA tabs pattern: one tab in the Tab order, arrows move between tabs.
  function selectTab(name) {
    for (const t of TABS) {
      const on = t === name;
      $('tab-' + t).setAttribute('aria-selected', String(on));
      $('tab-' + t).tabIndex = on ? 0 : -1;
      $('pane-' + t).hidden = !on;
    }
  }

  function wireTabs() {
    for (const t of TABS) $('tab-' + t).addEventListener('click', () => selectTab(t));
    document.querySelector('.tabs').addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      const shown = TABS.filter((t) => !$('tab-' + t).hidden);
      const at = shown.findIndex((t) => $('tab-' + t).getAttribute('aria-selected') === 'true');
      const next = shown[(at + (e.key === 'ArrowRight' ? 1 : shown.length - 1)) % shown.length];
      selectTab(next);
      $('tab-' + next).focus();
    });
  }

  // One live member-list view (friends, a roster): its table, and the listed
  // members not on the board under it (ids PREFIX-table, -empty, -absent, -absent-wrap).
  class ListPane {
    constructor(prefix, opts) {
      this.table = new RankTable($(prefix + '-table'), $(prefix + '-empty'), opts);
      this.absentWrap = $(prefix + '-absent-wrap');
      this.absentList = $(prefix + '-absent');
      this.view = null;
    }

    // spec: the subscribe; onStats(view) after each change.
    show(spec, meta, onStats) {
      this.close();
      this.table.reset(meta, spec.view);
      this.showAbsent([]);
      this.view = client.subscribe(spec, {
        onChange: (v, changes, info) => {
          this.table.render(v, changes, info);
          this.showAbsent(v.absent || []);
          if (onStats) onStats(v);
        },
        onError: (v, err) => this.table.error(err),
      });
    }

    showAbsent(list) {
      this.absentWrap.hidden = !list.length;
      this.absentList.replaceChildren(...list.map((m) => {
        const li = document.createElement('li');
        li.textContent = m; // member names are user input
        li.dataset.member = m;
        return li;
      }));
    }

    clear(text) {
      this.close();
      this.table.reset(null, { members: [] });
      this.table.message(text);
      this.showAbsent([]);
    }

    close() {
      if (this.view) this.view.close();
      this.view = null;
    }
  }

  /* ---- the picker ---- */

  // The declaration a board name falls under: exact, else the longest template.
  function metaFor(boards, name) {
    let best = boards.find((b) => !b.template && b.name === name) || null;
    for (const b of boards) {
      const prefix = b.name.slice(0, -1);
      if (b.template && name.startsWith(prefix) && name.length > prefix.length &&
          (!best || (best.template && prefix.length > best.name.length - 1))) best = b;
    }
    return best;
  }

  function boardInfo(meta) {
    if (!meta) return '';
    const parts = [meta.order === 'asc' ? 'lowest first' : 'highest first'];
    if (meta.period && meta.period !== 'none') parts.push('period: ' + meta.period);
    if (meta.decay && meta.decay !== 'none') parts.push('decay: ' + meta.decay);
    if (meta.fields && meta.fields.length) parts.push('fields: ' + meta.fields.join(', '));
    if (meta.ops) parts.push('ops: ' + meta.ops.join(', '));
    return parts.join(' · ');
  }

  async function dashboard() {
    const consoleUi = new WriteConsole(client);
    const want = fromParams(params);
    let current = null;           // { sel, meta } on screen
    let friends = want.members || [];
    let roster = want.team;       // the team whose roster shows, null for none
    const friendsPane = new ListPane('friends');
    const rosterPane = new ListPane('roster');
    const teamsTable = new RankTable($('teams-table'), $('teams-empty'), { onPick: (id) => { roster = id; showRoster(); writeUrl(); } });
    let teamsView = null;
    wireTabs();
    $('friends').value = friends.join(', ');
    let boards = null;
    try {
      boards = await Rankcast.rest({ token }).boards();
    } catch (err) {
      pickError(`Board list unavailable (${err.code}: ${err.message}). Type a board name.`);
    }

    const select = $('board');
    let meta = null;
    if (boards && boards.length) {
      for (const b of boards) select.add(new Option(b.template ? `${b.name} (template)` : b.name, b.name));
      meta = want.board && metaFor(boards, want.board);
      if (want.board && !meta) pickError(`No board is declared as "${want.board}".`);
      meta = meta || boards.find((b) => b.name === 'demo') || boards.find((b) => !b.template) || boards[0];
      select.value = meta.name;
      if (meta.template && want.board !== meta.name) $('concrete').value = want.board;
    } else {
      boards = null;
      select.hidden = true;
      $('board-free').hidden = false;
      $('board-free').value = want.board || 'demo';
    }

    const v = want.view;
    $('kind').value = v.feed ? 'feed' : v.around != null ? 'around' : v.limit != null ? 'page' : 'top';
    if (v.top != null) $('top').value = v.top;
    if (v.limit != null) { $('offset').value = v.offset; $('limit').value = v.limit; }
    if (v.around != null) { $('around').value = v.around; $('radius').value = v.radius; }
    const knownPeriod = want.period === 'current' || want.period === 'previous';
    $('period').value = knownPeriod ? want.period : 'id';
    if (!knownPeriod) $('period-id').value = want.period;

    const selectedMeta = () => (boards ? boards.find((b) => b.name === select.value) : null);
    function sync() {
      const m = selectedMeta();
      $('concrete-wrap').hidden = !(m && m.template);
      if (m && m.template) $('concrete').placeholder = m.name.slice(0, -1) + '1842';
      $('board-info').textContent = boardInfo(m);
      // Without the board list the period picker stays: any board might be periodic.
      $('period-wrap').hidden = !!m && (!m.period || m.period === 'none');
      $('period-id').hidden = $('period').value !== 'id';
      for (const row of document.querySelectorAll('[data-kind]')) row.hidden = row.dataset.kind !== $('kind').value;
    }
    for (const id of ['board', 'kind', 'period']) $(id).addEventListener('change', sync);

    function read() {
      const m = selectedMeta();
      let board = m ? m.name : $('board-free').value.trim();
      if (m && m.template) {
        board = $('concrete').value.trim();
        const prefix = m.name.slice(0, -1);
        if (!board.startsWith(prefix) || board.length === prefix.length) {
          throw new Error(`${m.name} is a template: type a board name such as ${prefix}1842`);
        }
      }
      if (!board) throw new Error('type a board name');
      const n = (id) => parseInt($(id).value, 10);
      const kind = $('kind').value;
      const view = kind === 'feed' ? { feed: true }
        : kind === 'around' ? { around: $('around').value.trim(), radius: n('radius') }
          : kind === 'page' ? { offset: n('offset'), limit: n('limit') } : { top: n('top') };
      if (kind === 'around' && !view.around) throw new Error('type the member to centre on');
      let period = 'current';
      if (!$('period-wrap').hidden) period = $('period').value === 'id' ? $('period-id').value.trim() || 'current' : $('period').value;
      // places=shared has no control here: it stays as the address gave it.
      return { sel: { board, view, period, places: want.places }, meta: m };
    }

    // initial: the selection the URL asked for, whose notices must stay visible.
    function apply(initial) {
      let picked;
      try {
        picked = read();
      } catch (err) {
        return pickError(err.message);
      }
      const { sel, meta: m } = picked;
      if (boards && !initial) pickError('');
      show(sel, m);
      consoleUi.setBoard(sel.board, m, sel.period === 'current' ? null : sel.period);
      if (current && current.sel.board !== sel.board) roster = null; // another board's teams
      current = { sel, meta: m };
      // an open rank chart follows the board and period picked, for the same member
      if (charted) { charted = { member: charted.member, board: sel.board, period: periodOf(sel) }; drawChart(); }
      showFriends();
      showTeams();
      writeUrl();
    }

    // The address: the standings' selection, the friends followed and the roster shown.
    function writeUrl() {
      const sel = current.sel;
      history.replaceState(null, '', '?' + toParams(Object.assign({}, sel, { members: friends, team: roster })).toString());
      overlayLink($('overlay-link'), toParams(sel));
      $('friends-overlay').hidden = !friends.length;
      if (friends.length) overlayLink($('friends-overlay'), toParams(Object.assign({}, sel, { members: friends })));
      if (roster) overlayLink($('roster-overlay'), toParams(Object.assign({}, sel, { team: roster })));
    }

    const periodOf = (sel) => (sel.period === 'current' ? null : sel.period);

    function showFriends() {
      const { sel, meta: m } = current;
      $('friends-title').textContent = friends.length ? `${friends.length} ${friends.length === 1 ? 'member' : 'members'} on ${sel.board}` : sel.board;
      if (!friends.length) return friendsPane.clear('Type member names and press Follow to see them live.');
      friendsPane.show({ board: sel.board, view: { members: friends }, period: periodOf(sel), places: sel.places }, m);
    }

    $('friends-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const names = namesOf($('friends').value);
      const bad = names.length > 200 ? 'at most 200 members' : '';
      $('friends-error').textContent = bad;
      $('friends-error').hidden = !bad;
      if (bad || !current) return;
      friends = names;
      showFriends();
      writeUrl();
    });

    // The Teams tab shows while the board picked declares teams = T.
    function showTeams() {
      const { sel, meta: m } = current;
      const team = m && m.teams;
      $('tab-teams').hidden = !team;
      if (teamsView) teamsView.close();
      teamsView = null;
      if (!team) {
        rosterPane.close();
        roster = null;
        if ($('tab-teams').getAttribute('aria-selected') === 'true') selectTab('board');
        return;
      }
      $('teams-title').textContent = `${team} · team standings`;
      $('teams-stats').textContent = '';
      teamsTable.reset((boards && boards.find((b) => b.name === team)) || null, { top: TEAMS_TOP });
      teamsView = client.subscribe({ board: team, view: { top: TEAMS_TOP }, period: periodOf(sel), places: sel.places }, {
        onChange: (v, changes, info) => {
          teamsTable.render(v, changes, info);
          markPicked();
          $('teams-stats').textContent = [v.total != null ? `${v.total} ${v.total === 1 ? 'team' : 'teams'}` : '',
            v.seq != null ? 'seq ' + v.seq : ''].filter(Boolean).join(' · ');
        },
        onError: (v, err) => teamsTable.error(err),
      });
      showRoster();
    }

    // The team whose roster shows is marked in the team table (and for screen readers).
    function markPicked() {
      for (const tr of $('teams-table').tBodies[0].rows) {
        const on = tr.dataset.member === roster;
        tr.classList.toggle('picked', on);
        const b = tr.querySelector('.pick-row');
        if (b) b.setAttribute('aria-pressed', String(on));
      }
    }

    function showRoster() {
      const { sel, meta: m } = current;
      $('roster').hidden = !roster;
      markPicked();
      if (!roster) return rosterPane.close();
      $('roster-title').textContent = `team ${roster} on ${sel.board}`;
      $('roster-stats').textContent = '';
      rosterPane.show({ board: sel.board, view: { team: roster }, period: periodOf(sel), places: sel.places }, m, (v) => {
        $('roster-stats').textContent = v.total != null ? `${v.total} ${v.total === 1 ? 'member' : 'members'}` : '';
      });
    }

    // The overlay link carries the pasted overlay token (a read-only JWT
    // for the board, from `rankcast token`) instead of this page's own
    // credential, which may be a key that writes.
    function overlayLink(a, p) {
      const o = new URLSearchParams(p);
      const ot = $('overlay-token').value.trim();
      if (ot) o.set('token', ot);
      o.set('overlay', '1');
      a.href = '?' + o.toString();
    }
    $('overlay-token').addEventListener('input', () => { if (current) writeUrl(); });

    $('pick').addEventListener('submit', (e) => { e.preventDefault(); apply(false); });
    sync();
    /* ---- a member's rank over time (history, PROTOCOL v1.2) ---- */

    let charted = null; // { member, board, period } the chart shows, null when closed
    let chartGen = 0;   // a reply to an older ask is dropped
    async function drawChart() {
      if (!charted) return;
      const gen = ++chartGen;
      const span = Number($('chart-span').value);
      // the gateway refuses a `to` past its clock: a second of margin for the two clocks
      const to = Date.now() - 1000;
      let from = to - span;
      const step = Math.max(1, Math.ceil(span / 100));
      const ask = (f) => client.history(charted.board, charted.member, { from: f, to, step, period: charted.period });
      $('chart-title').textContent = `${charted.member}: rank over time on ${charted.board}`;
      $('chart-desc').textContent = 'loading…';
      let reply;
      try {
        try {
          reply = await ask(from);
        } catch (err) {
          if (err.code !== 'out_of_range' || err.oldest_seq == null) throw err;
          // the log no longer reaches back that far: start at the oldest moment it holds
          const oldest = await client.get(charted.board, { top: 1 }, { at: { seq: err.oldest_seq }, period: charted.period });
          if (oldest.at_time == null || oldest.at_time > to) throw err;
          from = to - Math.floor((to - oldest.at_time) / step) * step;
          reply = await ask(from);
        }
      } catch (err) {
        if (gen !== chartGen) return;
        $('chart').replaceChildren();
        $('chart-desc').textContent = `history: ${err.code}: ${err.message}`;
        return;
      }
      if (gen !== chartGen) return;
      $('chart-desc').textContent = rankChartDraw($('chart'), $('chart-points'), reply, { from, to, step });
      $('chart').dataset.member = charted.member;
    }
    pickMember = (member) => {
      const sel = current.sel;
      charted = { member, board: sel.board, period: periodOf(sel) };
      $('chart-wrap').hidden = false;
      drawChart();
      $('chart-span').focus();
    };
    $('chart-span').addEventListener('change', drawChart);
    $('chart-refresh').addEventListener('click', drawChart);
    $('chart-close').addEventListener('click', () => {
      const member = charted && charted.member;
      charted = null;
      chartGen++;
      $('chart-wrap').hidden = true;
      // back to the name that opened it
      const b = member && [...document.querySelectorAll('#table tbody tr')].find((tr) => tr.dataset.member === member);
      if (b && b.querySelector('button')) b.querySelector('button').focus();
    });

    apply(true);
    if (roster && !$('tab-teams').hidden) selectTab('teams');
    else if (want.members) selectTab('friends');
  }

  function pickError(text) {
    $('pick-error').textContent = text;
    $('pick-error').hidden = !text;
  }

  function overlayMode() {
    const sel = fromParams(params);
    if (!sel.board) return table.message('overlay: add ?board=NAME&top=10 to the address');
    show(overlayView(sel), null);
  }

  if (overlay) overlayMode();
  else dashboard();
})();
