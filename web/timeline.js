/* timeline.js - the caster console's timeline for one column (PROTOCOL v1.2:
 * standings at a moment, replay).
 *
 * A range input over the board's seqs (0 to the live seq; its lower end moves
 * up to the log's oldest seq when the gateway answers out_of_range): moving
 * it (drag, arrows, Home/End) reads the standings right after that change
 * with `get` at { seq } and shows them in the "At seq S" pane. Reads go one
 * at a time, always for the latest position, so a fast drag costs one read in
 * flight, not one per pixel. With the admin scope the read passes `live` (a
 * frozen board's moments past what the audience was shown).
 *
 * "Replay from here" at 1x / 4x / 16x subscribes the column's view with
 * replay: { from: { seq: S }, speed } on a connection of its own (one
 * connection holds a window view once) and plays it in the overlay preview
 * pane: the replay's snapshots, then, when the server's `live` comes, the
 * same sub goes on as the live board (the pane says "live since seq N").
 * Stop closes it.
 *
 * State for scripts and tests: the moment pane's data-at-seq (the seq its
 * rows are at), the replay pane's data-state (playing | live | stopped |
 * error) and data-speed.
 */

const SPEEDS = [1, 4, 16];

function clock(ms) {
  return ms == null ? '' : new Date(ms).toTimeString().slice(0, 8);
}

export class Timeline {
  // root: the column's element (holding the .timeline part and the moment and
  // replay panes); ctx: { rc(), connect(), forget(c), sel(), meta(), admin(), liveSeq() }.
  constructor(root, ctx) {
    this.ctx = ctx;
    const q = (s) => root.querySelector(s);
    this.range = q('.timeline input[name="at"]');
    this.out = q('.timeline [data-role="at"]');
    this.nowBtn = q('.timeline [data-role="now"]');
    this.replayState = q('.timeline [data-role="replay-state"]');
    this.stopBtn = q('.timeline [data-role="stop"]');
    this.speedBtns = [...root.querySelectorAll('.timeline [data-speed]')];
    this.momentPane = q('.pane.moment');
    this.momentTitle = q('.pane.moment [data-role="moment-title"]');
    this.replayPane = q('.pane.replay');
    this.replayTitle = q('.pane.replay [data-role="replay-title"]');
    this.momentTable = new RankTable(q('.pane.moment table'), q('.pane.moment .empty'));
    this.replayTable = new RankTable(q('.pane.replay table'), q('.pane.replay .empty'));
    this.range.addEventListener('input', () => this.scrub(Number(this.range.value)));
    this.nowBtn.addEventListener('click', () => this.toNow());
    for (const b of this.speedBtns) b.addEventListener('click', () => this.replay(Number(b.dataset.speed)));
    this.stopBtn.addEventListener('click', () => { this.stopReplay(); this.speedBtns[0].focus(); });
    this.reset();
  }

  // A new selection (board, N, period): back to the present, no replay.
  reset() {
    this.stopReplay();
    this.target = null;      // the seq picked, null: following the present
    this.inFlight = false;
    this.min = 0;
    this.range.min = '0';
    this.range.max = '0';
    this.range.value = '0';
    this.momentPane.hidden = true;
    delete this.momentPane.dataset.atSeq;
    const view = { top: this.ctx.sel().top };
    this.momentTable.reset(this.ctx.meta(), view);
    this.replayTable.reset(this.ctx.meta(), view);
    this.sync();
  }

  // The live seq moved: the range reaches it; following the present, the thumb does too.
  sync() {
    const max = Math.max(this.min, this.ctx.liveSeq() || 0);
    this.range.max = String(max);
    if (this.target == null) this.range.value = String(max);
    this.range.disabled = max <= this.min;
    const at = this.target == null ? max : this.target;
    this.range.setAttribute('aria-valuetext', this.target == null ? `now, seq ${max}` : `seq ${at}`);
    if (this.target == null) this.out.textContent = `now · seq ${max}`;
    this.nowBtn.disabled = this.target == null;
  }

  scrub(seq) {
    this.target = seq;
    this.nowBtn.disabled = false;
    this.out.textContent = `seq ${seq} …`;
    this.range.setAttribute('aria-valuetext', `seq ${seq}`);
    this.read();
  }

  toNow() {
    this.target = null;
    this.momentPane.hidden = true;
    delete this.momentPane.dataset.atSeq;
    this.sync();
  }

  // One read in flight; when it returns, the latest position is read if it moved meanwhile.
  async read() {
    if (this.inFlight || this.target == null) return;
    const seq = this.target;
    const sel = this.ctx.sel();
    this.inFlight = true;
    try {
      const snap = await this.ctx.rc().get(sel.board, { top: sel.top }, {
        at: { seq }, period: sel.period === 'current' ? null : sel.period, live: this.ctx.admin() || undefined,
      });
      if (this.target === seq && this.ctx.sel() === sel) this.showMoment(snap);
    } catch (err) {
      if (this.target === seq) this.momentError(err, seq);
    } finally {
      this.inFlight = false;
    }
    if (this.target != null && this.target !== seq && this.ctx.sel() === sel) this.read();
  }

  showMoment(snap) {
    this.momentPane.hidden = false;
    this.momentPane.dataset.atSeq = String(snap.at_seq);
    const when = snap.at_time != null ? ` · ${clock(snap.at_time)}` : '';
    this.momentTitle.textContent = `At seq ${snap.at_seq}${when}`;
    this.out.textContent = `seq ${snap.at_seq}${when}`;
    this.range.setAttribute('aria-valuetext', `seq ${snap.at_seq}${when}`);
    // the rows as they were: a table of their own, no moves drawn between moments
    this.momentTable.render({ rows: snap.rows || [], total: snap.total, seq: snap.at_seq }, [], { kind: 'snapshot' });
  }

  momentError(err, seq) {
    if (err.code === 'out_of_range' && err.oldest_seq != null && err.oldest_seq > this.min) {
      // the log no longer holds it: the range starts at the oldest moment it holds
      this.min = err.oldest_seq;
      this.range.min = String(this.min);
      this.out.textContent = `seq ${seq} is no longer kept (oldest: ${this.min})`;
      this.sync();
      return;
    }
    this.out.textContent = `seq ${seq}: ${err.code}: ${err.message}`;
  }

  /* ---- replay from the moment picked, in the overlay preview ---- */

  replay(speed) {
    this.stopReplay();
    const sel = this.ctx.sel();
    const from = this.target == null ? Number(this.range.value) : this.target;
    this.rcReplay = this.ctx.connect();
    this.replayPane.hidden = false;
    this.replayPane.dataset.speed = String(speed);
    this.setReplay('playing', `replaying from seq ${from} at ${speed}x`);
    this.replayTable.reset(this.ctx.meta(), { top: sel.top });
    this.replayView = this.rcReplay.subscribe({
      board: sel.board, view: { top: sel.top }, period: sel.period === 'current' ? null : sel.period,
      replay: { from: { seq: from }, speed },
    }, {
      onChange: (v, changes, info) => {
        this.replayTable.render(v, changes, info);
        this.replayTitle.textContent = v.replaying ? `Replay · seq ${v.seq} · ${speed}x` : `Live · seq ${v.seq}`;
      },
      onLive: (v, info) => this.setReplay('live', `live since seq ${info.seq}`),
      onError: (v, err) => { this.replayTable.error(err); this.setReplay('error', `${err.code}: ${err.message}`); },
    });
    this.stopBtn.disabled = false;
  }

  setReplay(state, text) {
    this.replayPane.dataset.state = state;
    this.replayState.textContent = text;
    for (const b of this.speedBtns) b.setAttribute('aria-pressed', String(state === 'playing' && b.dataset.speed === this.replayPane.dataset.speed));
  }

  // Closes the replay (its connection too) and hides the preview.
  stopReplay() {
    if (this.replayView) this.replayView.close();
    if (this.rcReplay) this.ctx.forget(this.rcReplay);
    this.replayView = null;
    this.rcReplay = null;
    this.stopBtn.disabled = true;
    this.replayPane.hidden = true;
    delete this.replayPane.dataset.state;
    this.replayState.textContent = '';
    for (const b of this.speedBtns) b.setAttribute('aria-pressed', 'false');
  }
}

export { SPEEDS };
