/* caster.js - the caster console (/console.html): several boards side by side,
 * each with freeze / reveal-one / reveal-all, the audience view, the live
 * preview while frozen, and a ticker of moves.
 *
 * Query params: boards=demo,arena (one column each; default demo),
 * top=10 (or one per column: top=10,5), period=current|previous|<id> (one,
 * or one per column), token=KEY (an admin key or JWT: freeze, reveal and the
 * live preview need the admin scope). Each column's picker changes its own
 * board, view and period, and the address is rewritten to match.
 *
 * Per column, one connection with three views: the audience view (top N,
 * exactly what viewers see, frozen or not), the same view with live: true
 * (the caster's preview, a view of its own; its seq - shown is the pending
 * count) and a live feed for the ticker, where moves the audience has not
 * seen yet are marked hidden until a reveal shows them. Freeze and reveal go
 * over it too. A connection per column because one connection holds a view
 * once (subscribing again answers the same sub), and two columns may show
 * the same board. Without the admin scope the live subscriptions are
 * refused: the ticker falls back to the audience feed.
 *
 * The timeline (timeline.js): a range over the board's seqs shows the
 * standings at the seq picked (get at { seq }), and "replay from here" at
 * 1x / 4x / 16x plays the board from there in the overlay preview pane until
 * it rejoins live.
 *
 * Boards with teams (teams = T in their declaration; their rows carry
 * "team"): the tables get a team column, and the column's "+ T" button adds
 * a column for team board T beside it (player standings and team standings
 * side by side, each with its own freeze).
 */
// A module (console.html loads it with type="module"): the client library is the ES module
// web/rankcast.mjs, the one source the classic rankcast.js is made from.
import * as Rankcast from './rankcast.mjs';
import { Timeline } from './timeline.js';

(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const token = params.get('token') || undefined;
  const TICKER_ROWS = 40;

  const api = Rankcast.rest({ token });
  let boards = null;        // the declarations from /api/v1/boards, null when unavailable
  const columns = [];

  // The header shows the worst state of every column's connections.
  const states = new Map(); // client -> [state, info]
  const RANK = { closed: 0, reconnecting: 1, connecting: 2, open: 3 };
  function connect() {
    const c = new Rankcast.Client({ token, connect: false });
    c.onState = (state, info) => { states.set(c, [state, info]); showState(); };
    c.connect();
    return c;
  }
  function forget(c) {
    c.close();
    states.delete(c);
    showState();
  }
  function showState() {
    let worst = null;
    for (const s of states.values()) if (!worst || RANK[s[0]] < RANK[worst[0]]) worst = s;
    const [state, info] = worst || ['closed', {}];
    document.documentElement.dataset.conn = state;
    const label = state === 'reconnecting' && info.delay ? `reconnecting in ${(info.delay / 1000).toFixed(1)} s` : state;
    $('conn').dataset.state = state;
    $('conn').lastElementChild.textContent = label;
  }

  function notice(text) {
    $('notice').textContent = text;
    $('notice').hidden = !text;
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  const fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });
  const num = (v) => (typeof v === 'number' ? fmt.format(v) : v == null ? '' : String(v));

  // The declaration a board name falls under: exact, else the longest template.
  function metaFor(name) {
    if (!boards) return null;
    let best = boards.find((b) => !b.template && b.name === name) || null;
    for (const b of boards) {
      const prefix = b.name.slice(0, -1);
      if (b.template && name.startsWith(prefix) && name.length > prefix.length &&
          (!best || (best.template && prefix.length > best.name.length - 1))) best = b;
    }
    return best;
  }

  const periodic = (meta) => !meta || (meta.period && meta.period !== 'none');
  const decaying = (meta) => !!(meta && meta.decay && meta.decay !== 'none');

  /* ---- one column: one board ------------------------------------------- */

  class Column {
    constructor(sel) {
      this.root = $('column').content.firstElementChild.cloneNode(true);
      const q = (s) => this.root.querySelector(s);
      this.form = q('.pick');
      this.part = {
        badge: q('[data-role="badge"]'), seqs: q('[data-role="seqs"]'), pending: q('[data-role="pending"]'),
        msg: q('[data-role="msg"]'), livePane: q('.pane.live'), ticker: q('.ticker ol'),
        tickerHint: q('[data-role="ticker-hint"]'), addTeam: q('[data-role="add-team"]'),
      };
      this.part.addTeam.addEventListener('click', () => {
        const team = this.meta && this.meta.teams;
        if (!team) return;
        const c = addColumn({ board: team, top: this.sel.top, period: this.sel.period });
        this.root.after(c.root); // beside its source, on screen and in the address
        columns.splice(columns.indexOf(c), 1);
        columns.splice(columns.indexOf(this) + 1, 0, c);
        writeUrl();
      });
      this.buttons = {};
      for (const b of this.root.querySelectorAll('[data-act]')) {
        this.buttons[b.dataset.act] = b;
        b.addEventListener('click', () => this.act(b.dataset.act));
      }
      this.audienceTable = new RankTable(q('.pane.audience table'), q('.pane.audience .empty'));
      this.liveTable = new RankTable(q('.pane.live table'), q('.pane.live .empty'));
      this.form.addEventListener('submit', (e) => {
        e.preventDefault();
        const next = this.read();
        if (next) { this.show(next); writeUrl(); }
      });
      this.form.elements.period.addEventListener('change', () => this.syncPicker());
      this.form.elements.board.addEventListener('change', () => this.syncPicker());
      q('.remove').addEventListener('click', () => removeColumn(this));
      this.rc = connect();
      this.views = [];
      this.sel = sel;
      this.meta = metaFor(sel.board);
      this.timeline = new Timeline(this.root, {
        rc: () => this.rc, connect, forget, sel: () => this.sel, meta: () => this.meta,
        admin: () => !!(this.live && this.live.ready && !this.liveError),
        liveSeq: () => this.liveSeq(),
      });
      this.fill(sel);
      this.show(sel);
    }

    fill(sel) {
      const f = this.form.elements;
      f.board.value = sel.board;
      f.top.value = sel.top;
      const known = sel.period === 'current' || sel.period === 'previous';
      f.period.value = known ? sel.period : 'id';
      f['period-id'].value = known ? '' : sel.period;
      this.syncPicker();
    }

    syncPicker() {
      const f = this.form.elements;
      const meta = metaFor(f.board.value.trim());
      this.form.querySelector('.period').hidden = !periodic(meta);
      this.form.querySelector('.period-id').hidden = !periodic(meta) || f.period.value !== 'id';
    }

    read() {
      const f = this.form.elements;
      const board = f.board.value.trim();
      const top = parseInt(f.top.value, 10);
      if (!board) return this.say('type a board name', 'err');
      if (!(top >= 1)) return this.say('top must be 1 or more', 'err');
      let period = 'current';
      if (periodic(metaFor(board))) period = f.period.value === 'id' ? f['period-id'].value.trim() || 'current' : f.period.value;
      return { board, top, period };
    }

    // (Re)subscribes the column's three views for a selection.
    show(sel) {
      this.close();
      this.sel = sel;
      this.meta = metaFor(sel.board);
      this.root.dataset.board = sel.board;
      this.busy = false;
      this.liveError = null;
      this.lastReply = null;
      const period = sel.period === 'current' ? null : sel.period;
      const view = { top: sel.top };
      this.audienceTable.reset(this.meta, view);
      this.liveTable.reset(this.meta, view);
      this.part.ticker.textContent = '';
      this.say('');
      if (boards && !this.meta) this.say(`no board is declared as "${sel.board}"`, 'err');
      const team = this.meta && this.meta.teams;
      this.part.addTeam.hidden = !team;
      this.part.addTeam.textContent = team ? `+ ${team}` : '';
      this.part.addTeam.title = team ? `add a column for team board ${team}` : '';
      const update = () => this.update();

      this.audience = this.rc.subscribe({ board: sel.board, view, period }, {
        onChange: (v, changes, info) => { this.audienceTable.render(v, changes, info); update(); },
        onFrozen: update,
        onError: (v, err) => { this.audienceTable.error(err); update(); },
      });
      this.live = this.rc.subscribe({ board: sel.board, view, period, live: true }, {
        onChange: (v, changes, info) => { this.liveError = null; this.liveTable.render(v, changes, info); update(); },
        onFrozen: update,
        onError: (v, err) => { this.liveError = err; this.liveTable.error(err); update(); },
      });
      this.views = [this.audience, this.live];
      this.feedSubscribe(true);
      this.timeline.reset();
      this.update();
    }

    // The newest seq the column knows: the live view's (admin), else the audience's.
    liveSeq() {
      const l = this.live && !this.liveError && this.live.seq != null ? this.live.seq : null;
      const a = this.audience && this.audience.seq != null ? this.audience.seq : null;
      return Math.max(l || 0, a || 0);
    }

    // The ticker follows the live feed (admin), else the audience feed.
    feedSubscribe(live) {
      const sel = this.sel;
      this.part.tickerHint.textContent = live ? 'as written; hidden ones wait for a reveal' : 'as the audience sees them';
      this.feed = this.rc.subscribe(
        { board: sel.board, view: { feed: true }, period: sel.period === 'current' ? null : sel.period, live, keep: TICKER_ROWS },
        {
          onEvent: (v, e) => this.tick(e),
          onFrozen: () => this.markTicker(),
          onError: (v, err) => {
            if (live && (err.code === 'forbidden' || err.code === 'unauthorized' || err.code === 'bad_request')) {
              v.close();
              this.views = this.views.filter((x) => x !== v);
              return this.feedSubscribe(false);
            }
            this.part.tickerHint.textContent = `${err.code}: ${err.message}`;
          },
        });
      this.views.push(this.feed);
    }

    close() {
      for (const v of this.views) v.close();
      this.views = [];
    }

    destroy() {
      this.timeline.stopReplay();
      this.close();
      forget(this.rc);
      this.root.remove();
    }

    /* ---- the ticker ---- */

    tick(e) {
      const prev = e.prev_rank == null ? 'new' : e.prev_rank;
      const rank = e.rank == null ? 'out' : e.rank;
      const dir = e.prev_rank == null ? 'new' : e.rank == null ? 'down'
        : e.rank < e.prev_rank ? 'up' : e.rank > e.prev_rank ? 'down' : 'same';
      const li = el('li', 'move-' + dir);
      li.dataset.seq = e.seq;
      li.dataset.member = e.member;
      const at = e.at ? new Date(e.at).toTimeString().slice(0, 8) : '';
      const d = typeof e.delta === 'number' ? (e.delta > 0 ? '+' : '') + num(e.delta) : '';
      li.append(el('span', 'time', at), ' ', el('span', 'who', e.name || e.member), ' ',
        el('span', 'ranks', `${prev} → ${rank}`), ' ', el('span', 'delta', d), ' ',
        el('span', 'score', num(e.score)), el('span', 'tag'));
      const list = this.part.ticker;
      list.prepend(li);
      while (list.children.length > TICKER_ROWS) list.lastElementChild.remove();
      this.markTicker();
    }

    // Live feed moves past what the audience sees are hidden; the next one a
    // reveal shows is marked next; a hidden one that a reveal shows flashes.
    markTicker() {
      const f = this.feed;
      const shown = f && f.live && f.frozen != null ? f.shown : null;
      for (const li of this.part.ticker.children) {
        const seq = Number(li.dataset.seq);
        const state = shown == null || seq <= shown ? 'shown' : seq === shown + 1 ? 'next' : 'hidden';
        if (li.dataset.state === state) continue;
        const was = li.dataset.state;
        li.dataset.state = state;
        li.lastElementChild.textContent = state === 'shown' ? '' : state;
        if (state === 'shown' && (was === 'hidden' || was === 'next')) {
          li.classList.remove('revealed');
          void li.offsetWidth;
          li.classList.add('revealed');
        }
      }
    }

    /* ---- freeze / reveal ---- */

    async act(kind) {
      if (this.busy) return;
      const board = this.sel.board;
      const o = { period: this.sel.period === 'current' ? null : this.sel.period };
      this.busy = true;
      this.update();
      try {
        if (kind === 'freeze') {
          const r = await this.rc.freeze(board, o);
          this.say(`frozen at seq ${r.seq}`, 'ok');
        } else {
          const r = await this.rc.reveal(board, kind === 'reveal-one' ? 1 : 'all', o);
          this.lastReply = r;
          const skipped = r.skipped ? ` (${r.skipped} merged: no longer in the change log)` : '';
          this.say(r.frozen != null ? `revealed up to seq ${r.seq}, ${r.pending} pending${skipped}`
            : `live again at seq ${r.seq}${skipped}`, 'ok');
        }
      } catch (err) {
        this.say(`${kind}: ${err.code}: ${err.message}`, 'err');
      } finally {
        this.busy = false;
        this.update();
      }
    }

    say(text, cls) {
      this.part.msg.textContent = text;
      this.part.msg.className = 'msg' + (cls ? ' ' + cls : '');
      return null;
    }

    // Everything derived from the views: the frozen marker, seqs, pending, buttons, panes.
    update() {
      const a = this.audience;
      const l = this.live;
      const frozen = a && a.frozen != null ? a.frozen : l && l.frozen != null ? l.frozen : null;
      const isFrozen = frozen != null;
      this.root.dataset.frozen = String(isFrozen);
      this.part.badge.textContent = isFrozen ? `frozen at seq ${frozen}` : 'live';
      const seqs = [];
      if (a && a.seq != null) seqs.push(`audience seq ${a.seq}`);
      if (l && l.seq != null && !this.liveError) seqs.push(`live seq ${l.seq}`);
      if (a && a.periodId) seqs.push(a.periodId);
      this.part.seqs.textContent = seqs.join(' · ');

      let pending = 0;
      if (l && !this.liveError && l.pending != null) pending = l.pending;
      else if (isFrozen && this.lastReply && this.lastReply.pending != null) pending = this.lastReply.pending;
      this.part.pending.firstElementChild.textContent = String(pending);
      this.part.pending.dataset.count = String(pending);
      this.part.pending.hidden = !isFrozen;

      const admin = !this.liveError;
      const decay = decaying(this.meta);
      this.buttons.freeze.disabled = this.busy || isFrozen || decay || !admin;
      this.buttons['reveal-one'].disabled = this.busy || !isFrozen || !admin || pending === 0;
      this.buttons['reveal-all'].disabled = this.busy || !isFrozen || !admin;
      this.buttons.freeze.title = decay ? 'decaying boards cannot be frozen'
        : !admin ? 'needs a token with the admin scope (?token=KEY)' : 'freeze what the audience sees at the current seq';
      this.part.livePane.hidden = !isFrozen;
      this.markTicker();
      this.timeline.sync();
    }
  }

  /* ---- columns and the address ----------------------------------------- */

  function addColumn(sel) {
    const c = new Column(sel);
    columns.push(c);
    $('columns').appendChild(c.root);
    return c;
  }

  function removeColumn(c) {
    c.destroy();
    columns.splice(columns.indexOf(c), 1);
    writeUrl();
  }

  function writeUrl() {
    const p = new URLSearchParams(location.search);
    p.set('boards', columns.map((c) => c.sel.board).join(','));
    const tops = columns.map((c) => c.sel.top);
    p.set('top', tops.every((t) => t === tops[0]) ? String(tops[0] || 10) : tops.join(','));
    const periods = columns.map((c) => c.sel.period);
    if (periods.every((x) => x === 'current')) p.delete('period');
    else p.set('period', periods.every((x) => x === periods[0]) ? periods[0] : periods.join(','));
    history.replaceState(null, '', '?' + p.toString());
  }

  function fromParams() {
    const list = (k) => (params.get(k) || '').split(',').map((s) => s.trim()).filter(Boolean);
    const names = list('boards').length ? list('boards') : list('board').length ? list('board') : ['demo'];
    const tops = list('top').map((t) => parseInt(t, 10));
    const periods = list('period');
    const at = (arr, i, d) => (arr.length ? arr[Math.min(i, arr.length - 1)] : d);
    return names.map((board, i) => ({ board, top: at(tops, i, 10) >= 1 ? at(tops, i, 10) : 10, period: at(periods, i, 'current') }));
  }

  async function start() {
    try {
      boards = await api.boards();
      const dl = $('board-names');
      for (const b of boards) if (!b.template) dl.appendChild(new Option(b.name));
    } catch (err) {
      notice(`Board list unavailable (${err.code}: ${err.message}); board names are used as typed.`);
    }
    if (!token) notice('Freeze, reveal and the live preview need an admin token: open this page with ?token=KEY.');
    for (const sel of fromParams()) addColumn(sel);
    writeUrl();
    $('add').addEventListener('submit', (e) => {
      e.preventDefault();
      const board = $('add-board').value.trim();
      if (!board) return;
      const top = columns.length ? columns[columns.length - 1].sel.top : 10;
      addColumn({ board, top, period: 'current' });
      $('add-board').value = '';
      writeUrl();
    });
  }

  start();
})();
