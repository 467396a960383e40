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
 * The overlay link uses the "Overlay token" field when filled (a read-only
 * token from `rankcast token --scope read --board demo --ttl 30d`), else
 * this page's own token.
 */
// A module (index.html loads it with type="module"): the client library is the ES module
// web/rankcast.mjs, the one source the classic rankcast.js is made from.
import * as Rankcast from './rankcast.mjs';

(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const token = params.get('token') || undefined;
  const overlay = params.get('overlay') === '1';

  const client = new Rankcast.Client({ token, onState: showState });
  const table = new RankTable($('table'), $('empty'));
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
    return { board: p.get('board') || '', view, period: p.get('period') || 'current', maxRate, places };
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
    if (token) p.set('token', token);
    return p;
  }

  function describe(sel) {
    const v = sel.view;
    const what = v.feed ? 'feed'
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
      const p = toParams(sel);
      history.replaceState(null, '', '?' + p.toString());
      overlayLink(p);
    }

    // The overlay link carries the pasted overlay token (a read-only JWT
    // for the board, from `rankcast token`) instead of this page's own
    // credential, which may be a key that writes.
    function overlayLink(p) {
      const o = new URLSearchParams(p);
      const ot = $('overlay-token').value.trim();
      if (ot) o.set('token', ot);
      o.set('overlay', '1');
      $('overlay-link').href = '?' + o.toString();
    }
    $('overlay-token').addEventListener('input', () => {
      const sel = fromParams(new URLSearchParams(location.search));
      overlayLink(toParams(sel));
    });

    $('pick').addEventListener('submit', (e) => { e.preventDefault(); apply(false); });
    sync();
    apply(true);
  }

  function pickError(text) {
    $('pick-error').textContent = text;
    $('pick-error').hidden = !text;
  }

  function overlayMode() {
    const sel = fromParams(params);
    if (!sel.board) return table.message('overlay: add ?board=NAME&top=10 to the address');
    show(sel, null);
  }

  if (overlay) overlayMode();
  else dashboard();
})();
