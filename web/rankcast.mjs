/* rankcast.js - client library for the rankcast wire protocol (docs/protocol.md, v1 to v1.2).
 *
 * One source, two forms: rankcast.mjs is the ES module, rankcast.js the classic
 * script made from it by web/build.mjs (edit rankcast.mjs, then run
 * `node web/build.mjs`). Types: rankcast.d.ts. Package: web/package.json.
 * ES module: import * as Rankcast from 'rankcast'   (npm install ./web, a bundler)
 *            import { Client } from '/rankcast.mjs' (<script type="module">)
 * Browser:   <script src="/rankcast.js"></script> defines the global `Rankcast`.
 * Node:      const Rankcast = require('.../web/rankcast.js') (or import 'rankcast'); Node 20
 *            has no WebSocket of its own, so pass one: { WebSocket: require('ws') }.
 *
 *   const rc = new Rankcast.Client({ token, onState: (state) => ... });
 *   const top = rc.subscribe({ board: 'demo', view: { top: 10 } }, {   // + max_rate: 2 for at most 2 updates/s
 *     onChange(view, changes, info) { ... },  // view.rows is the live window
 *     onEvent(view, event) { ... },           // feed views
 *     onGap(view, gap) { ... },               // feed events were missed ({from, to})
 *     onViewers(view, n) { ... },             // the board's viewer count changed (view.viewers)
 *     onFrozen(view, { frozen, shown, seq }) { ... }, // the board was frozen, revealed or unfrozen
 *     onError(view, err) { ... },             // the subscribe was refused, or the server
 *                                             // stopped the view (err.stopped: its token
 *                                             // expired; rc.auth(newToken) resumes it)
 *   });
 *   const ack = await rc.incr('demo', 'user:101', 50, { req: 'r-1' });
 *   await rc.auth(freshJwt);                  // token refresh in place: { op: 'authed', exp }
 *   top.close();
 *   const boards = await Rankcast.rest({ token }).boards();
 *
 * `changes` lists who moved or changed, for highlights:
 *   [{ member, from, to, changed }]  from/to are ranks, null when absent;
 *   changed: the score, fields, profile or shared place differ (a rank-only shift has false).
 *   A delta adds prev_rank to the changes of the members it carries a row
 *   for: where the member stood on the board before (null: it was not on it),
 *   also for one that came from outside the window (whose from is null).
 *   (A feed event's change has from = its prev_rank.)
 * Shared places (v1.1): subscribe({ board, view, places: 'shared' }) gives every row of
 * view.rows `place` (1, 2, 2, 4: equal points share it) and `tied: true` when shared.
 * Freeze and reveal (admin): await rc.freeze('demo') -> { op: 'frozen', board, seq: S };
 * await rc.reveal('demo', 1) / rc.reveal('demo', 'all') -> { op: 'revealed', board, seq, pending,
 * frozen? (absent once live again), skipped? }; both take { period } as a last argument.
 * A view of a frozen board has view.frozen = S (null when live), and info.frozen in every
 * onChange; the latest snapshot or delta of a window view decides, feed views learn it
 * from their rowless snapshots (onChange info.kind 'status': no restart, no gap).
 * subscribe({ board, view, live: true }) (admin scope) is the live board through a
 * freeze, the caster's preview: view.shown = R is what the audience sees (null when not
 * frozen; also info.shown) and view.pending = view.seq - R the hidden changes.
 * Rankcast.rest(...).freeze(board, { period }), .reveal(board, steps, { period }) and
 * .freezeState(board, { period }) -> { board, frozen, shown, seq, pending } do the same over REST.
 * v1.2: view { members: [M1, ...] } (a friends list) and { team: T_ID } (a team's roster) keep
 * view.rows (the listed members on the board, by rank) and view.absent (those not on it) by
 * the member rule (applyMembers). subscribe({ board, view, replay: { from: { seq } | { time },
 * speed } }) replays from that moment (view.replaying, info.replay) until the server's `live`
 * message (onLive(view, { seq, reset? }): reset when the board went back below what the replay
 * showed, the next snapshot then starts over); a reconnect meanwhile replays on from view.seq.
 * await rc.get(board, view, { period, at: { seq } | { time }, places, live }) -> a snapshot (no sub);
 * await rc.history(board, member, { from, to, step, period }) -> { op: 'history', points };
 * await rc.team(board, member, teamId | null) -> { op: 'teamed', team, seq, team_seq }.
 * Admin: rc.remove(board, member, { block, period }), rc.unblock(board, member),
 * rc.reverse(board, req, { period }), rc.reset(board, { period }); the same over REST.
 * States: connecting -> open -> reconnecting -> open ... ; closed after close().
 * Requests reject with { code, message }: the protocol's codes, plus two of the
 * client's own: "disconnected" (the connection dropped before the reply; a
 * write may or may not have happened, so retry it with the same req) and
 * "timeout".
 */

const SUBPROTOCOL = 'rankcast.v1';
const noop = () => {};

/* ---- window logic (pure) ------------------------------------------- */

// The ranks a window view holds: top N is 1..N, a page offset+1..offset+limit.
// Around and feed views have no fixed window (null).
function windowOf(view) {
  if (view && view.top != null) return { first: 1, length: view.top };
  if (view && view.limit != null) return { first: (view.offset || 0) + 1, length: view.limit };
  return null;
}

// The delta rule (docs/protocol.md): drop every member named in removed and rows, insert
// the rows in ascending rank at rank - first, cut to length. Returns a new
// list and never mutates the old one (callers diff the two). Returns null
// when the delta cannot belong to this list (a row would land past the end,
// or rows repeat a member or a rank): the view is then out of step with the
// server and must be resubscribed rather than patched into a wrong state.
function applyDelta(list, delta, first, length) {
  const rows = (delta.rows || []).slice().sort((a, b) => a.rank - b.rank);
  const named = new Set(delta.removed || []);
  const inRows = new Set();
  for (const r of rows) {
    if (inRows.has(r.member)) return null;
    inRows.add(r.member);
    named.add(r.member);
  }
  const out = list.filter((r) => !named.has(r.member));
  for (let i = 0; i < rows.length; i++) {
    const pos = rows[i].rank - first;
    if (!(pos >= 0 && pos <= out.length)) return null;
    if (i > 0 && rows[i].rank === rows[i - 1].rank) return null;
    out.splice(pos, 0, rows[i]);
  }
  if (out.length > length) out.length = length;
  // Rows pushed down or pulled up by the inserts keep their data, not their rank.
  return out.map((r, i) => (r.rank === first + i ? r : Object.assign({}, r, { rank: first + i })));
}

// The member-list rule (PROTOCOL.md v1.2, "Member lists"): drop the members named in
// removed (they join absent), replace or insert each row (its member leaves absent), then
// order by rank. Returns { rows, absent }, new lists; the old ones are not mutated.
function applyMembers(list, absent, delta) {
  const gone = new Set(delta.removed || []);
  const byMember = new Map();
  for (const r of list) if (!gone.has(r.member)) byMember.set(r.member, r);
  for (const r of delta.rows || []) byMember.set(r.member, r);
  const rows = Array.from(byMember.values()).sort((a, b) => a.rank - b.rank);
  const out = (absent || []).filter((m) => !byMember.has(m));
  for (const m of gone) if (!byMember.has(m) && !out.includes(m)) out.push(m);
  return { rows, absent: out };
}

// team: a row whose member changed teams (v1.2) is a change even at the same rank and score.
function sameEntry(a, b) {
  return a.score === b.score && a.name === b.name && a.place === b.place && a.tied === b.tied && a.team === b.team &&
    JSON.stringify(a.fields) === JSON.stringify(b.fields);
}

function withoutPrevRank(r) {
  if (!('prev_rank' in r)) return r;
  const o = Object.assign({}, r);
  delete o.prev_rank;
  return o;
}

// Who entered, left, moved or changed between two row lists.
function changesBetween(before, after) {
  const old = new Map(before.map((r) => [r.member, r]));
  const changes = [];
  for (const r of after) {
    const o = old.get(r.member);
    old.delete(r.member);
    if (!o) changes.push({ member: r.member, from: null, to: r.rank, changed: true });
    else if (o.rank !== r.rank || !sameEntry(o, r))
      changes.push({ member: r.member, from: o.rank, to: r.rank, changed: !sameEntry(o, r) });
  }
  for (const o of old.values()) changes.push({ member: o.member, from: o.rank, to: null, changed: false });
  return changes;
}

// A feed event against the last seq applied: 'next' to apply, 'old' when
// already seen (a replay overlapping what we hold), 'gap' when events were
// missed (seq grows by exactly one per accepted write).
function feedStep(lastSeq, seq) {
  if (lastSeq == null || seq === lastSeq + 1) return 'next';
  return seq <= lastSeq ? 'old' : 'gap';
}

/* ---- View: one subscription's state (no I/O) ------------------------ */

// Turns the server's messages for one sub into rows (window and around
// views) or events (feed views), and says when it has fallen out of step.
// The Client owns the socket; a View can be driven by hand in tests.
class View {
  constructor(spec, handlers) {
    this.board = spec.board;
    this.view = spec.view;
    this.period = spec.period || null;   // null: the server's default, "current"
    this.places = spec.places || null;   // "shared": rows carry place and tied (v1.1)
    this.keep = spec.keep || 100;        // feed events kept in this.events
    this.maxRate = spec.max_rate != null ? spec.max_rate : null; // window views: at most this many messages a second (v1.1)
    this.live = !!spec.live;             // admin: the live board through a freeze (the caster's preview)
    this.replay = spec.replay || null;   // v1.2: { from: { seq } | { time }, speed }, until the server says live
    this.handlers = handlers || {};
    this.window = windowOf(spec.view);
    const v = spec.view || {};
    this.kind = this.window ? 'window' : v.feed ? 'feed' : v.members || v.team != null ? 'members' : 'around';
    this.sub = null;
    this.rows = [];
    this.absent = [];                    // member lists: the listed members not on the board
    this.events = [];
    this.seq = null;
    this.total = null;
    this.periodId = null;                // the period the server resolved, e.g. "2026-W47"
    this.lastSeq = null;                 // feed: last event seq applied
    this.resumeFrom = null;              // feed: the since.seq of the subscribe in flight
    this.epoch = null;                   // the board's history (epoch) the rows and events belong to
    this.cursor = null;                  // feed of a sharded board: its position per shard (docs/sharded.md)
    this.ready = false;                  // a first snapshot has arrived
    this.viewers = null;                 // open subscriptions to the board on every gateway (v1.1)
    this.frozen = null;                  // the seq S the board is frozen at, null when live
    this.shown = null;                   // live views of a frozen board: the seq R the audience sees
    this.replaying = false;              // a replay is being played (its snapshot came, its live not yet)
    this.gen = 0;                        // bumps on every (re)subscribe; stale replies are dropped
  }

  // The subscribe request (the Client adds the id). A feed view that has
  // seen events asks for the replay of what it missed, in the history it
  // holds (its epoch): after a reset or a lost Redis the server answers a
  // reset snapshot instead of events of another history.
  subscribeMessage() {
    const m = { op: 'subscribe', board: this.board, view: this.view };
    if (this.period) m.period = this.period;
    if (this.places) m.places = this.places;
    if (this.maxRate != null) m.max_rate = this.maxRate; // checked by the server (1..50, not on feeds)
    if (this.live) m.live = true;                         // admin scope only; others get forbidden
    if (this.replay) {
      // a reconnect during a replay goes on from the last seq shown, not from the start
      m.replay = this.seq != null && this.replaying ? Object.assign({}, this.replay, { from: { seq: this.seq } }) : this.replay;
    }
    this.resumeFrom = this.kind === 'feed' ? this.lastSeq : null;
    if (this.resumeFrom != null) {
      m.since = { seq: this.resumeFrom };
      if (this.epoch != null) m.since.epoch = this.epoch;
      if (this.cursor != null) m.since.cursor = this.cursor; // a sharded board resumes exactly from it
    }
    return m;
  }

  // Applies one server message addressed to this view. Returns false when
  // the view is out of step and must be resubscribed.
  apply(msg) {
    if (msg.viewers != null && (msg.op === 'snapshot' || msg.op === 'delta')) this._viewers(msg.viewers);
    if (msg.op === 'snapshot') return this._snapshot(msg);
    if (msg.op === 'delta' && this.window) return this._delta(msg);
    if (msg.op === 'delta' && this.kind === 'members') return this._members(msg);
    if (msg.op === 'event' && this.kind === 'feed') return this._event(msg);
    if (msg.op === 'live') return this._live(msg);
    return true; // nothing this view uses (around views are always snapshots)
  }

  // Live views of a frozen board: the hidden changes (what a reveal of "all" would show).
  get pending() {
    return this.frozen != null && this.shown != null && this.seq != null ? Math.max(0, this.seq - this.shown) : null;
  }

  // The latest snapshot or delta says whether the board is frozen: `frozen` present is
  // frozen at S, absent is live. Fires onFrozen when that (or the shown seq) changed.
  _frozenFrom(m) {
    const frozen = m.frozen != null ? m.frozen : null;
    const shown = frozen != null && m.shown != null ? m.shown : null;
    if (frozen === this.frozen && shown === this.shown) return;
    this.frozen = frozen;
    this.shown = shown;
    this._call('onFrozen', { frozen, shown, seq: m.seq != null ? m.seq : this.seq });
  }

  _snapshot(s) {
    // A feed view gets a snapshot without rows, in the stream, when its board is frozen,
    // revealed or unfrozen: it only says so (no gap, no restart, the events held stay).
    if (this.kind === 'feed' && this.ready && this.resumeFrom == null && !s.reset && s.id == null &&
        !(s.rows && s.rows.length)) return this._feedStatus(s);
    const before = this.rows;
    this.rows = s.rows || [];
    this.absent = s.absent || [];
    this.seq = s.seq;
    if (s.replay) this.replaying = true;
    this.total = s.total;
    if (s.period != null) this.periodId = s.period;
    if (s.epoch != null) this.epoch = s.epoch;
    if (s.cursor != null) this.cursor = s.cursor;
    if (this.kind === 'feed') {
      // A resume that the server could replay continues from since; the
      // replayed events follow this snapshot. Anything else starts over.
      if (this.resumeFrom != null && !s.reset) this.lastSeq = Math.min(this.resumeFrom, s.seq);
      else this.lastSeq = s.seq;
      this.resumeFrom = null;
    }
    this.ready = true;
    this._frozenFrom(s);
    const info = { kind: 'snapshot', reset: !!s.reset, viewers: this.viewers };
    if (this.replaying) info.replay = true;
    this._emit(changesBetween(before, this.rows), info);
    return true;
  }

  // lastSeq stays: at the unfreeze the snapshot comes at the live seq and the events the
  // view was not given follow it (as after a resume); a seq they skip is a gap as ever.
  _feedStatus(s) {
    if (s.total != null) this.total = s.total;
    if (s.epoch != null) this.epoch = s.epoch;
    this._frozenFrom(s);
    this._emit([], { kind: 'status', viewers: this.viewers });
    return true;
  }

  _delta(d) {
    const next = applyDelta(this.rows, d, this.window.first, this.window.length);
    if (!next) return false;
    const before = this.rows;
    // prev_rank belongs to this delta: the changes carry it, the rows held do not
    this.rows = next.map(withoutPrevRank);
    this.seq = d.seq;
    if (d.epoch != null) this.epoch = d.epoch; // the board's history began with this change
    if (d.total != null) this.total = d.total;
    const prev = new Map();
    for (const r of d.rows || []) if (r.prev_rank !== undefined) prev.set(r.member, r.prev_rank);
    const changes = changesBetween(before, this.rows);
    for (const c of changes) if (prev.has(c.member)) c.prev_rank = prev.get(c.member);
    this._frozenFrom(d);
    this._emit(changes, { kind: 'delta', viewers: this.viewers });
    return true;
  }

  // A member list's delta carries the whole row of every listed member that changed.
  _members(d) {
    const before = this.rows;
    const next = applyMembers(this.rows, this.absent, d);
    this.rows = next.rows.map(withoutPrevRank);
    // absent keeps the order the list was asked in (a roster's has none: as they left)
    const asked = Array.isArray(this.view.members) ? this.view.members : null;
    this.absent = asked ? next.absent.sort((a, b) => asked.indexOf(a) - asked.indexOf(b)) : next.absent;
    this.seq = d.seq;
    if (d.epoch != null) this.epoch = d.epoch;
    if (d.total != null) this.total = d.total;
    const changes = changesBetween(before, this.rows);
    for (const r of d.rows || []) {
      const c = changes.find((x) => x.member === r.member);
      if (c && r.prev_rank !== undefined) c.prev_rank = r.prev_rank;
    }
    this._frozenFrom(d);
    this._emit(changes, { kind: 'delta', viewers: this.viewers });
    return true;
  }

  // The replay reached the present: the same sub goes on as a live view.
  _live(msg) {
    this.replaying = false;
    this.replay = null;
    // reset: the board went back below what the replay showed (changes
    // lost, docs/history.md): the next snapshot starts the view over (a
    // feed's too, whose seqs after it name other changes)
    if (msg.reset) this.ready = false;
    this._call('onLive', msg.reset ? { seq: msg.seq, reset: true } : { seq: msg.seq });
    return true;
  }

  _event(e) {
    const step = feedStep(this.lastSeq, e.seq);
    if (step === 'old') return true;
    if (step === 'gap') {
      this._call('onGap', { from: this.lastSeq + 1, to: e.seq - 1 });
      return false; // resubscribing with since = lastSeq replays the gap
    }
    this.lastSeq = this.seq = e.seq;
    if (e.epoch != null) this.epoch = e.epoch; // the board's history began with this event
    if (e.cursor != null) this.cursor = e.cursor;
    this.events.push(e);
    if (this.events.length > this.keep) this.events.shift();
    this._call('onEvent', e);
    const prev = e.prev_rank == null ? null : e.prev_rank;
    this._emit([{ member: e.member, from: prev, to: e.rank == null ? null : e.rank, changed: true }],
      { kind: 'event' });
    return true;
  }

  // A count comes in snapshots, and in deltas when it changed (a delta
  // without rows when nothing else did).
  _viewers(n) {
    if (n === this.viewers) return;
    this.viewers = n;
    this._call('onViewers', n);
  }

  _emit(changes, info) {
    if (this.replaying && info.kind !== 'snapshot') info.replay = true;
    info.frozen = this.frozen;
    if (this.live) info.shown = this.shown;
    this._call('onChange', changes, info);
  }

  _call(name, a, b) {
    const fn = this.handlers[name];
    if (fn) fn(this, a, b);
  }

  close() { if (this.client) this.client.unsubscribe(this); }
}

/* ---- Client: the connection ----------------------------------------- */

function withPeriod(msg, o) {
  if (o && o.period != null && o.period !== '') msg.period = o.period;
  return msg;
}

function defaultUrl() {
  if (typeof location === 'undefined') throw new Error('Rankcast.Client: no url given');
  return (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + '/ws';
}

class Client {
  constructor(opts) {
    opts = opts || {};
    this.baseUrl = opts.url || defaultUrl();
    this._setToken(opts.token);
    this.WebSocket = opts.WebSocket || (typeof WebSocket !== 'undefined' ? WebSocket : null);
    this.minDelay = opts.minDelay || 250;     // first reconnect delay (ms), doubled per failure
    this.maxDelay = opts.maxDelay || 10000;   // backoff cap (ms)
    this.timeout = opts.timeout || 10000;     // per-request reply timeout (ms)
    this.onState = opts.onState || noop;
    this.onError = opts.onError || noop;      // server errors that answer no request
    this.state = 'closed';
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.stopped = true;
    this.nextId = 1;
    this.pending = new Map();  // id -> request waiting to be sent or answered
    this.views = new Set();
    // sub -> the Set of this client's views the server answered with it: two
    // views of the same window on one connection are one server view (the
    // second subscribe is answered with the same sub), and both follow it
    this.bySub = new Map();
    if (opts.connect !== false) this.connect();
  }

  connect() {
    if (this.ws) return;
    this.stopped = false;
    clearTimeout(this.timer);
    this.timer = null;
    this._setState(this.attempt ? 'reconnecting' : 'connecting', { attempt: this.attempt });
    let ws;
    try {
      ws = new this.WebSocket(this.url, SUBPROTOCOL);
    } catch (e) {
      this._dropped();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (ws !== this.ws) return;
      this.attempt = 0;
      this._setState('open', {});
      for (const v of this.views) this._sendSubscribe(v);
      for (const p of this.pending.values()) if (!p.sent) this._transmit(p);
    };
    ws.onmessage = (ev) => { if (ws === this.ws) this._receive(ev.data); };
    ws.onclose = () => { if (ws === this.ws) this._dropped(); };
    ws.onerror = noop; // onclose follows and does the work
  }

  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = null;
    this.attempt = 0;
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000);
    this._failPending(true);
    this._setState('closed', {});
  }

  // Sends a request and resolves with the reply; an error reply rejects.
  // Requests made while the connection is down wait for it (until timeout).
  request(msg, onReply) {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const p = { msg: Object.assign({}, msg, { id }), resolve, reject, onReply, sent: false };
      p.timer = setTimeout(() => {
        this.pending.delete(id);
        reject({ code: 'timeout', message: 'no reply within ' + this.timeout + ' ms' });
      }, this.timeout);
      this.pending.set(id, p);
      if (this.state === 'open') this._transmit(p);
    });
  }

  subscribe(spec, handlers) {
    const v = new View(spec, handlers);
    v.client = this;
    this.views.add(v);
    if (this.state === 'open') this._sendSubscribe(v);
    return v;
  }

  unsubscribe(v) {
    this.views.delete(v);
    v.gen++;
    this._detach(v);
  }

  // Takes v off its sub; the last view of a sub unsubscribes it.
  _detach(v) {
    if (v.sub == null) return;
    const set = this.bySub.get(v.sub);
    if (set) set.delete(v);
    if (!set || set.size === 0) {
      this.bySub.delete(v.sub);
      if (this.state === 'open') this.request({ op: 'unsubscribe', sub: v.sub }).catch(noop);
    }
    v.sub = null;
  }

  incr(board, member, delta, o) { return this.request(Object.assign({ op: 'incr', board, member, delta }, o)); }
  set(board, member, value, o) { return this.request(Object.assign({ op: 'set', board, member, value }, o)); }
  best(board, member, value, o) { return this.request(Object.assign({ op: 'best', board, member, value }, o)); }
  submit(board, member, fields, o) { return this.request(Object.assign({ op: 'submit', board, member, fields }, o)); }
  rank(board, member, period) {
    return this.request(Object.assign({ op: 'rank', board, member }, period ? { period } : {}));
  }
  ping() { return this.request({ op: 'ping' }); }

  // Admin: freezes a board's audience views at its current seq; resolves { op: 'frozen', board, seq }.
  freeze(board, o) { return this.request(withPeriod({ op: 'freeze', board }, o)); }
  // Admin: shows the next `steps` hidden changes (a number, or 'all': unfreezes);
  // resolves { op: 'revealed', board, seq, pending, frozen? , skipped? }.
  reveal(board, steps, o) { return this.request(withPeriod({ op: 'reveal', board, steps }, o)); }

  // Admin: a member leaves the board ({ block: true } also refuses its later writes); { period }.
  remove(board, member, o) {
    const m = withPeriod({ op: 'remove', board, member }, o);
    if (o && o.block) m.block = true;
    return this.request(m);
  }
  unblock(board, member) { return this.request({ op: 'unblock', board, member }); }
  // Admin: takes back the single-field write with that req.
  reverse(board, req, o) { return this.request(withPeriod({ op: 'reverse', board, req }, o)); }
  reset(board, o) { return this.request(withPeriod({ op: 'reset', board }, o)); }

  // v1.2: puts a member on a team of the board's team board (null: leaves); write scope.
  team(board, member, team) { return this.request({ op: 'team', board, member, team: team == null ? null : team }); }
  // v1.2: a one-shot read (no subscription): o = { period, at: { seq } | { time }, places, live }
  // (live: admin, reads past a freeze as the caster's live view does).
  get(board, view, o) {
    const m = withPeriod({ op: 'get', board, view }, o);
    if (o && o.at) m.at = o.at;
    if (o && o.places) m.places = o.places;
    if (o && o.live) m.live = true;
    return this.request(m);
  }
  // v1.2: a member's score and rank from o.from to o.to every o.step ms; o.period.
  history(board, member, o) {
    return this.request(withPeriod({ op: 'history', board, member, from: o.from, to: o.to, step: o.step }, o));
  }

  // Replaces the connection's credentials with a fresh token (a JWT) in
  // place: views go on, reconnects use it. Resolves with the gateway's
  // { op: 'authed', exp } (exp in seconds); views that had stopped because
  // the old token expired are subscribed again.
  auth(token) {
    this._setToken(token);
    return this.request({ op: 'auth', token }).then((reply) => {
      for (const v of this.views) if (v.sub == null && this.state === 'open') this._sendSubscribe(v);
      return reply;
    });
  }

  _setToken(token) {
    this.token = token || undefined;
    this.url = this.baseUrl;
    if (token) this.url += (this.url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token);
  }

  _setState(state, info) {
    // Repeated 'reconnecting' reports carry each new attempt and delay.
    if (this.state === state && state !== 'reconnecting') return;
    this.state = state;
    this.onState(state, info);
  }

  _transmit(p) {
    p.sent = true;
    this.ws.send(JSON.stringify(p.msg));
  }

  // Rejects requests whose reply can no longer come: those already sent
  // (their connection is gone) or, when closing for good, all of them.
  _failPending(all) {
    for (const [id, p] of this.pending) {
      if (!p.sent && !all) continue;
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject({ code: 'disconnected', message: 'the connection closed before the reply' });
    }
  }

  _dropped() {
    this.ws = null;
    this._failPending(false);
    for (const v of this.views) v.sub = null;
    this.bySub.clear();
    if (this.stopped) return this._setState('closed', {});
    const cap = Math.min(this.maxDelay, this.minDelay * Math.pow(2, this.attempt));
    // Jitter: a gateway restart drops every client at once; they must not all return at once.
    const delay = Math.round(cap / 2 + Math.random() * cap / 2);
    this.attempt++;
    this._setState('reconnecting', { attempt: this.attempt, delay });
    this.timer = setTimeout(() => { this.timer = null; this.connect(); }, delay);
  }

  _sendSubscribe(v) {
    const gen = ++v.gen;
    const onReply = (snap) => {
      // Handled synchronously: the sub's first delta may follow in the same read.
      if (gen !== v.gen || !this.views.has(v)) {
        // closed or resubscribed meanwhile (unless another view holds the sub)
        if (!this.bySub.has(snap.sub)) this.request({ op: 'unsubscribe', sub: snap.sub }).catch(noop);
        return;
      }
      v.sub = snap.sub;
      if (!this.bySub.has(snap.sub)) this.bySub.set(snap.sub, new Set());
      this.bySub.get(snap.sub).add(v);
      v.apply(snap);
    };
    this.request(v.subscribeMessage(), onReply).catch((err) => {
      if (err.code !== 'disconnected' && gen === v.gen) v._call('onError', err);
    });
  }

  // Starts a view over when its state can no longer be patched.
  _resync(v) {
    this._detach(v);
    if (this.state === 'open') this._sendSubscribe(v);
  }

  _receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch (e) { return; }
    if (!msg || typeof msg !== 'object') return;
    const p = msg.id != null ? this.pending.get(msg.id) : undefined;
    if (p) {
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.op === 'error') {
        const err = { code: msg.code, message: msg.message };
        if (msg.oldest_seq != null) err.oldest_seq = msg.oldest_seq; // out_of_range: the oldest moment kept
        if (msg.oldest_time != null) err.oldest_time = msg.oldest_time; // and the earliest time to ask (sharded boards)
        return p.reject(err);
      }
      if (p.onReply) p.onReply(msg);
      return p.resolve(msg);
    }
    if (msg.op === 'error' && msg.sub != null) {
      // The server stopped one view (its token expired or no longer covers
      // the board): it stays listed, idle, until auth() brings a token.
      const set = this.bySub.get(msg.sub);
      if (!set) return this.onError({ code: msg.code, message: msg.message });
      this.bySub.delete(msg.sub);
      for (const sv of set) {
        sv.sub = null;
        sv.gen++;
        sv._call('onError', { code: msg.code, message: msg.message, stopped: true });
      }
      return undefined;
    }
    if (msg.op === 'error') return this.onError({ code: msg.code, message: msg.message });
    const set = msg.sub != null ? this.bySub.get(msg.sub) : undefined;
    for (const v of set ? Array.from(set) : []) if (!v.apply(msg)) this._resync(v);
  }
}

/* ---- REST helpers ---------------------------------------------------- */

// Board and member names only hold [A-Za-z0-9_.:@-], all legal in a URL
// path, so ':' and '@' go unescaped (match:1842, not match%3A1842).
function pathPart(s) {
  return encodeURIComponent(String(s)).replace(/%3A/gi, ':').replace(/%40/g, '@');
}

// A list (members=a,b) is joined by commas, each name percent-encoded.
function query(params) {
  const parts = [];
  for (const k of Object.keys(params || {})) {
    const v = params[k];
    if (Array.isArray(v)) parts.push(k + '=' + v.map((x) => encodeURIComponent(x)).join(','));
    else if (v != null && v !== '') parts.push(k + '=' + encodeURIComponent(v));
  }
  return parts.length ? '?' + parts.join('&') : '';
}

// { base: 'http://host:port' (default: this page's origin), token }.
function rest(opts) {
  opts = opts || {};
  const base = (opts.base || '') + '/api/v1';
  async function call(method, path, body) {
    const headers = {};
    if (opts.token) headers.Authorization = 'Bearer ' + opts.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      throw { status: res.status, code: (data && data.code) || 'http_' + res.status,
        message: (data && data.message) || res.statusText };
    }
    return data;
  }
  return {
    boards: () => call('GET', '/boards').then((d) => d.boards),
    board: (board, params) => call('GET', '/boards/' + pathPart(board) + query(params)),
    write: (board, body) => call('POST', '/boards/' + pathPart(board) + '/scores', body),
    stats: (board, period) => call('GET', '/boards/' + pathPart(board) + '/stats' + query({ period })),
    rank: (board, member, period) =>
      call('GET', '/boards/' + pathPart(board) + '/members/' + pathPart(member) + query({ period })),
    profile: (member) => call('GET', '/members/' + pathPart(member) + '/profile'),
    setProfile: (member, profile) => call('PUT', '/members/' + pathPart(member) + '/profile', profile),
    // Freeze and reveal (admin): o = { period }.
    freeze: (board, o) => call('POST', '/boards/' + pathPart(board) + '/freeze' + query({ period: o && o.period }), {}),
    reveal: (board, steps, o) =>
      call('POST', '/boards/' + pathPart(board) + '/reveal' + query({ period: o && o.period }), { steps }),
    // { board, frozen: S|null, shown: R|null, seq, pending }
    freezeState: (board, o) => call('GET', '/boards/' + pathPart(board) + '/freeze' + query({ period: o && o.period })),
    // Admin: o = { block, period } / { period }.
    remove: (board, member, o) => call('DELETE', '/boards/' + pathPart(board) + '/members/' + pathPart(member) +
      query({ block: o && o.block ? 1 : null, period: o && o.period })),
    unblock: (board, member) => call('DELETE', '/boards/' + pathPart(board) + '/blocked/' + pathPart(member)),
    reverse: (board, req, o) => call('POST', '/boards/' + pathPart(board) + '/reverse', withPeriod({ req }, o)),
    reset: (board, o) => call('POST', '/boards/' + pathPart(board) + '/reset', withPeriod({}, o)),
    // v1.2: team membership (null leaves) and rank history ({ from, to, step, period }).
    team: (board, member, team) =>
      call('PUT', '/boards/' + pathPart(board) + '/members/' + pathPart(member) + '/team', { team: team == null ? null : team }),
    history: (board, member, o) => call('GET', '/boards/' + pathPart(board) + '/members/' + pathPart(member) + '/history' +
      query({ from: o.from, to: o.to, step: o.step, period: o.period })),
  };
}

export { SUBPROTOCOL, Client, View, rest, windowOf, applyDelta, applyMembers, changesBetween, feedStep };
