/* table.js - the live leaderboard table.
 *
 * Rows are keyed by member and moved in place rather than rebuilt, so a CSS
 * highlight runs on exactly the rows a change touched: entered, climbed,
 * dropped, changed score, or merely shifted by someone else's move (fainter).
 * Moved rows slide from where they were to their new place (FLIP: measure
 * First, move the node, measure Last, Invert with a transform, Play by
 * letting the transform transition back to none); nothing slides under
 * prefers-reduced-motion. A row whose rank changed shows a marker, ↑N / ↓N
 * places (from the change's prev_rank when the delta gives one) or NEW (a
 * delta's prev_rank null: the member was not on the board), that fades
 * after a few seconds; while it shows, the row carries data-move="up" |
 * "down" | "new" and data-moved="N". Rows only pushed or pulled by someone
 * else's move get a quieter marker (class "shifted"). Rows with a shared place (subscribe
 * with places: 'shared') show it as "T2" when tied.
 * A board with teams (its declaration says teams = T, or its rows carry
 * "team") gets a team column after the name. Member-list views (a friends
 * list, a roster) say so when none of their members is on the board.
 * With opts.onPick(member), each row's name is a button that calls it (the
 * dashboard's team board: a team's roster opens on click or Enter).
 * Feed views render as a newest-first list of events instead.
 * Everything from the server goes in through textContent: profile names are
 * user input.
 */
(function (root) {
  'use strict';

  const FEED_ROWS = 50;
  const SLIDE_ROWS = 200; // bigger windows jump: measuring them all per update costs more than it shows
  const HIGHLIGHTS = ['hl-new', 'hl-up', 'hl-down', 'hl-change', 'hl-shift'];
  const fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

  function num(v) { return v == null ? '' : typeof v === 'number' ? fmt.format(v) : String(v); }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  // Restarts a highlight animation even when the same class is still applied.
  function flash(tr, cls) {
    tr.classList.remove(...HIGHLIGHTS);
    void tr.offsetWidth; // forces a style flush so the animation starts over
    tr.classList.add(cls);
  }

  function reducedMotion() {
    return !!(root.matchMedia && root.matchMedia('(prefers-reduced-motion: reduce)').matches);
  }

  // What a row's marker says about a change: how many places it moved, from
  // the delta's prev_rank (where the member stood on the whole board, also
  // for one that came from outside the window) or else the rank it had in
  // the window; NEW when the delta says it was not on the board. Null: no
  // marker (no move, or a newcomer the server said nothing about).
  function moveOf(c) {
    if (!c || c.to == null) return null;
    const from = c.prev_rank !== undefined ? c.prev_rank : c.from;
    if (from == null) return c.prev_rank === null ? { kind: 'new', n: null } : null;
    if (from === c.to) return null;
    // shifted: only pushed or pulled by others' moves (not in the delta's rows)
    const shifted = c.prev_rank === undefined && !c.changed;
    return from > c.to ? { kind: 'up', n: from - c.to, shifted } : { kind: 'down', n: c.to - from, shifted };
  }

  function placeOf(r) {
    return r.place != null ? (r.tied ? 'T' : '') + r.place : String(r.rank);
  }

  function highlightOf(c) {
    if (c.from == null) return 'hl-new';
    if (!c.changed) return 'hl-shift';
    return c.to < c.from ? 'hl-up' : c.to > c.from ? 'hl-down' : 'hl-change';
  }

  class RankTable {
    // table: a <table> with <thead> and <tbody>; empty: an element shown when there are no rows;
    // opts: { onPick(member) } makes each name a button (see the top comment);
    // pickTitle(member): the button's title (default "show M's roster").
    constructor(table, empty, opts) {
      this.thead = table.tHead;
      this.tbody = table.tBodies[0];
      this.empty = empty;
      this.onPick = (opts && opts.onPick) || null;
      this.pickTitle = (opts && opts.pickTitle) || ((m) => `show ${m}'s roster`);
      this.byMember = new Map();
      this.reset(null, { top: 10 });
    }

    // A new subscription: columns follow the board (fields) and the view (feed).
    reset(meta, view) {
      this.feed = !!(view && view.feed);
      this.fields = meta && meta.fields && meta.fields.length ? meta.fields.slice() : null;
      this.center = (view && view.around) || null;
      this.teams = !!(meta && meta.teams);
      this.list = !!(view && (view.members || view.team != null)); // a member list or a roster
      this.lastEventSeq = null;
      this.filled = false;
      this.byMember.clear();
      this.tbody.textContent = '';
      this.message('Waiting for the first snapshot…');
      this._header();
    }

    message(text) {
      this.empty.textContent = text;
      this.empty.hidden = !text;
      this.empty.classList.remove('is-error');
    }

    // An error shows on the overlay too (its other messages do not).
    error(err) {
      this.message(`${err.code}: ${err.message}`);
      this.empty.classList.add('is-error');
    }

    render(view, changes, info) {
      if (this.feed) return this._renderFeed(view, info);
      const rows = view.rows;
      // Boards missing from /api/v1/boards (overlay, offline list) learn their fields from the rows.
      if (!this.fields && rows.length && rows[0].fields) {
        this.fields = Object.keys(rows[0].fields);
        this._rebuild(); // rows built for the score column
      }
      // Boards whose declaration was not read (the overlay) learn about teams from the rows.
      if (!this.teams && rows.some((r) => r.team != null)) {
        this.teams = true;
        this._rebuild();
      }
      const quiet = !this.filled; // the first fill is not news (an empty board's first row is)
      this.filled = true;
      const slide = !quiet && rows.length <= SLIDE_ROWS && !reducedMotion();
      const first = slide ? this._positions() : null;
      const touched = new Map(changes.map((c) => [c.member, c]));
      const keep = new Set();
      rows.forEach((r, i) => {
        let tr = this.byMember.get(r.member);
        if (!tr) {
          tr = el('tr');
          tr.addEventListener('animationend', (e) => {
            if (e.animationName === 'mark-fade') this._unmark(tr, e.target);
            else tr.classList.remove(...HIGHLIGHTS);
          });
          this.byMember.set(r.member, tr);
        }
        keep.add(r.member);
        this._fill(tr, r, quiet ? null : touched.get(r.member));
        if (this.tbody.children[i] !== tr) this.tbody.insertBefore(tr, this.tbody.children[i] || null);
      });
      for (const [m, tr] of this.byMember) {
        if (!keep.has(m)) { tr.remove(); this.byMember.delete(m); }
      }
      if (slide) this._slide(first);
      this.message(rows.length ? '' : this.list ? 'None of them is on the board yet.' : 'No entries on this board yet.');
    }

    // The columns changed: rows are made again with the new cells.
    _rebuild() {
      this._header();
      this.byMember.clear();
      this.tbody.textContent = '';
    }

    // Where each row is on screen now (with any slide still under way).
    _positions() {
      const at = new Map();
      for (const [m, tr] of this.byMember) at.set(m, tr.getBoundingClientRect().top);
      return at;
    }

    // FLIP: every row that was on screen starts where it was (a transform
    // undoing the move) and transitions to its new place; rows new to the
    // table fade in from a little below. All reads, then all writes, then
    // one reflow: one layout per update, not one per row.
    _slide(first) {
      const rows = [...this.byMember];
      for (const [, tr] of rows) { tr.style.transition = 'none'; tr.style.transform = ''; tr.style.opacity = ''; }
      const moves = [];
      for (const [m, tr] of rows) {
        const was = first.get(m);
        const box = tr.getBoundingClientRect();
        if (was === undefined) moves.push([tr, Math.round(box.height / 2), true]);
        else if (Math.round(was - box.top) !== 0) moves.push([tr, Math.round(was - box.top), false]);
      }
      for (const [tr, dy, entering] of moves) {
        if (entering) tr.style.opacity = '0';
        tr.style.transform = `translateY(${dy}px)`;
      }
      void this.tbody.offsetHeight; // the inverted positions become the transition's start
      for (const [, tr] of rows) tr.style.transition = '';
      for (const [tr] of moves) { tr.style.transform = ''; tr.style.opacity = ''; }
    }

    // The fade of a row's marker ended: the marker and its attributes go.
    _unmark(tr, marker) {
      if (marker.parentNode) marker.remove();
      if (tr.querySelector('.move')) return; // a newer marker replaced it
      delete tr.dataset.move;
      delete tr.dataset.moved;
    }

    _header() {
      const tr = el('tr');
      const cols = this.feed
        ? [['seq', 'num'], ['time', ''], ['member', ''], ['change', 'num'], ['score', 'num'], ['rank', 'num']]
        : [['#', 'rank'], ['name', '']].concat(this.teams ? [['team', 'team']] : [],
          (this.fields || ['score']).map((f) => [f.replace(/_/g, ' '), 'num']));
      for (const [label, cls] of cols) tr.appendChild(el('th', cls, label));
      this.thead.textContent = '';
      this.thead.appendChild(tr);
    }

    // Cells are made once per row and updated in place: recreating them
    // would restart a highlight still running on that row.
    _fill(tr, r, change) {
      if (!tr.cells.length) {
        tr.append(el('td', 'rank'), el('td', 'who'));
        if (this.teams) tr.appendChild(el('td', 'team'));
        for (const f of this.fields || [null]) tr.appendChild(el('td', f ? 'num' : 'num score'));
      }
      const [rank, who, ...rest] = tr.cells;
      const values = this.teams ? rest.slice(1) : rest;
      if (this.teams) rest[0].textContent = r.team == null ? '' : r.team;
      const move = moveOf(change);
      if (move || !rank.firstChild) {
        rank.replaceChildren(el('span', 'n', placeOf(r)));
        if (move) {
          const text = move.kind === 'new' ? 'NEW' : (move.kind === 'up' ? '↑' : '↓') + move.n;
          rank.appendChild(el('span', 'move ' + move.kind + (move.shifted ? ' shifted' : ''), text));
          tr.dataset.move = move.kind;
          if (move.n != null) tr.dataset.moved = String(move.n);
          else delete tr.dataset.moved;
        }
      } else {
        rank.firstChild.textContent = placeOf(r);
      }
      if (this.onPick) {
        // made once per row: replacing it on every update would take the keyboard focus away
        let b = who.firstChild;
        if (!b) {
          b = el('button', 'name pick-row');
          b.type = 'button';
          b.addEventListener('click', () => this.onPick(tr.dataset.member));
          who.appendChild(b);
        }
        b.textContent = r.name || r.member;
        b.title = this.pickTitle(r.member);
      } else {
        who.replaceChildren(el('span', 'name', r.name || r.member));
      }
      if (r.name) who.appendChild(el('span', 'member', r.member));
      if (this.fields) this.fields.forEach((f, i) => { values[i].textContent = num(r.fields ? r.fields[f] : undefined); });
      else values[0].textContent = num(r.score);
      tr.dataset.member = r.member;
      const podium = r.place != null ? r.place : r.rank;
      if (podium <= 3) tr.dataset.podium = String(podium);
      else delete tr.dataset.podium;
      tr.classList.toggle('me', r.member === this.center);
      if (change) flash(tr, highlightOf(change));
    }

    _renderFeed(view, info) {
      if (info.kind === 'snapshot') {
        if (info.reset) this.tbody.prepend(this._note(`history not replayable: resumed at seq ${view.seq}`));
        if (!this.tbody.children.length) for (const e of view.events) this.tbody.prepend(this._eventRow(e, false));
      } else if (info.kind === 'event') {
        const e = view.events[view.events.length - 1];
        if (e && e.seq !== this.lastEventSeq) this.tbody.prepend(this._eventRow(e, true));
      }
      while (this.tbody.children.length > FEED_ROWS) this.tbody.lastElementChild.remove();
      this.message(this.tbody.children.length ? '' : `Waiting for changes (board at seq ${view.seq})…`);
    }

    _eventRow(e, fresh) {
      this.lastEventSeq = e.seq;
      const tr = el('tr');
      const at = new Date(e.at);
      const when = e.at ? at.toTimeString().slice(0, 8) + '.' + String(at.getMilliseconds()).padStart(3, '0') : '';
      const d = typeof e.delta === 'number' ? e.delta : null;
      const ranks = e.prev_rank == null ? `→ ${num(e.rank)}` : `${num(e.prev_rank)} → ${num(e.rank)}`;
      tr.append(el('td', 'num', String(e.seq)), el('td', 'time', when), el('td', 'who', e.member),
        el('td', 'num ' + (d > 0 ? 'pos' : d < 0 ? 'neg' : ''), d == null ? '' : (d > 0 ? '+' : '') + num(d)),
        el('td', 'num score', num(e.score)), el('td', 'num', ranks));
      if (fresh) flash(tr, 'hl-new');
      return tr;
    }

    _note(text) {
      const tr = el('tr', 'note');
      const td = el('td', '', text);
      td.colSpan = 6;
      tr.appendChild(td);
      return tr;
    }
  }

  root.RankTable = RankTable;
})(window);
