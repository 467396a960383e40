/* table.js - the live leaderboard table.
 *
 * Rows are keyed by member and moved in place rather than rebuilt, so a CSS
 * highlight runs on exactly the rows a change touched: entered, climbed,
 * dropped, changed score, or merely shifted by someone else's move (fainter).
 * Feed views render as a newest-first list of events instead.
 * Everything from the server goes in through textContent: profile names are
 * user input.
 */
(function (root) {
  'use strict';

  const FEED_ROWS = 50;
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

  function highlightOf(c) {
    if (c.from == null) return 'hl-new';
    if (!c.changed) return 'hl-shift';
    return c.to < c.from ? 'hl-up' : c.to > c.from ? 'hl-down' : 'hl-change';
  }

  class RankTable {
    // table: a <table> with <thead> and <tbody>; empty: an element shown when there are no rows.
    constructor(table, empty) {
      this.thead = table.tHead;
      this.tbody = table.tBodies[0];
      this.empty = empty;
      this.byMember = new Map();
      this.reset(null, { top: 10 });
    }

    // A new subscription: columns follow the board (fields) and the view (feed).
    reset(meta, view) {
      this.feed = !!(view && view.feed);
      this.fields = meta && meta.fields && meta.fields.length ? meta.fields.slice() : null;
      this.center = (view && view.around) || null;
      this.lastEventSeq = null;
      this.byMember.clear();
      this.tbody.textContent = '';
      this.message('Waiting for the first snapshot…');
      this._header();
    }

    message(text) {
      this.empty.textContent = text;
      this.empty.hidden = !text;
    }

    error(err) { this.message(`${err.code}: ${err.message}`); }

    render(view, changes, info) {
      if (this.feed) return this._renderFeed(view, info);
      const rows = view.rows;
      // Boards missing from /api/v1/boards (overlay, offline list) learn their fields from the rows.
      if (!this.fields && rows.length && rows[0].fields) {
        this.fields = Object.keys(rows[0].fields);
        this._header();
        this.byMember.clear(); // rows built for the score column
        this.tbody.textContent = '';
      }
      const quiet = this.byMember.size === 0; // the first fill is not news
      const touched = new Map(changes.map((c) => [c.member, c]));
      const keep = new Set();
      rows.forEach((r, i) => {
        let tr = this.byMember.get(r.member);
        if (!tr) {
          tr = el('tr');
          tr.addEventListener('animationend', () => tr.classList.remove(...HIGHLIGHTS));
          this.byMember.set(r.member, tr);
        }
        keep.add(r.member);
        this._fill(tr, r, quiet ? null : touched.get(r.member));
        if (this.tbody.children[i] !== tr) this.tbody.insertBefore(tr, this.tbody.children[i] || null);
      });
      for (const [m, tr] of this.byMember) {
        if (!keep.has(m)) { tr.remove(); this.byMember.delete(m); }
      }
      this.message(rows.length ? '' : 'No entries on this board yet.');
    }

    _header() {
      const tr = el('tr');
      const cols = this.feed
        ? [['seq', 'num'], ['time', ''], ['member', ''], ['change', 'num'], ['score', 'num'], ['rank', 'num']]
        : [['#', 'rank'], ['name', '']].concat((this.fields || ['score']).map((f) => [f.replace(/_/g, ' '), 'num']));
      for (const [label, cls] of cols) tr.appendChild(el('th', cls, label));
      this.thead.textContent = '';
      this.thead.appendChild(tr);
    }

    // Cells are made once per row and updated in place: recreating them
    // would restart a highlight still running on that row.
    _fill(tr, r, change) {
      if (!tr.cells.length) {
        tr.append(el('td', 'rank'), el('td', 'who'));
        for (const f of this.fields || [null]) tr.appendChild(el('td', f ? 'num' : 'num score'));
      }
      const [rank, who, ...values] = tr.cells;
      const moved = change && change.from != null && change.to != null && change.from !== change.to;
      if (moved || !rank.firstChild) {
        rank.replaceChildren(el('span', 'n', String(r.rank)));
        if (moved) {
          const up = change.to < change.from;
          rank.appendChild(el('span', 'move ' + (up ? 'up' : 'down'), (up ? '▲' : '▼') + Math.abs(change.from - change.to)));
        }
      } else {
        rank.firstChild.textContent = String(r.rank);
      }
      who.replaceChildren(el('span', 'name', r.name || r.member));
      if (r.name) who.appendChild(el('span', 'member', r.member));
      if (this.fields) this.fields.forEach((f, i) => { values[i].textContent = num(r.fields ? r.fields[f] : undefined); });
      else values[0].textContent = num(r.score);
      tr.dataset.member = r.member;
      if (r.rank <= 3) tr.dataset.podium = String(r.rank);
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
