/* console.js - the dashboard's console: send a write (incr/set/best/submit),
 * put a member on a team (boards with teams = T: the team op, PROTOCOL v1.2)
 * or look up a member's rank over the WebSocket, and log each reply (the ack,
 * the teamed reply, the rank, or the error) newest first.
 */
(function (root) {
  'use strict';

  const LOG_ROWS = 30;
  const $ = (id) => document.getElementById(id);

  class WriteConsole {
    constructor(client) {
      this.client = client;
      this.board = null;
      this.period = null;
      this.op = $('w-op');
      this.log = $('log');
      this.op.addEventListener('change', () => this._showInputs());
      $('w-req-new').addEventListener('click', () => {
        $('w-req').value = 'dash-' + Math.random().toString(36).slice(2, 10);
      });
      $('write').addEventListener('submit', (e) => { e.preventDefault(); this._write(); });
      $('rank').addEventListener('submit', (e) => { e.preventDefault(); this._rank(); });
      $('team-form').addEventListener('submit', (e) => { e.preventDefault(); this._team(); });
    }

    // The board writes go to; meta (from /api/v1/boards) decides the ops offered.
    setBoard(board, meta, period) {
      this.board = board;
      this.period = period;
      const multi = !!(meta && meta.fields && meta.fields.length);
      const ops = (meta && meta.ops) || (multi ? ['submit'] : ['incr', 'set', 'best']);
      const was = this.op.value;
      this.op.replaceChildren(...ops.map((o) => new Option(o, o)));
      if (ops.includes(was)) this.op.value = was;
      $('team-form').hidden = !(meta && meta.teams);
      if (multi) {
        const example = {};
        meta.fields.forEach((f, i) => { example[f] = i === 0 ? 1 : 0; });
        $('w-fields').placeholder = JSON.stringify(example);
      }
      this._showInputs();
    }

    _showInputs() {
      const submit = this.op.value === 'submit';
      $('w-fields-wrap').hidden = !submit;
      $('w-value-wrap').hidden = submit;
      $('w-value-label').textContent = this.op.value === 'incr' ? 'Delta' : 'Value';
    }

    _write() {
      if (!this.board) return this._local('no board selected');
      const op = this.op.value;
      const msg = { op, board: this.board, member: $('w-member').value.trim() };
      if (op === 'submit') {
        try {
          msg.fields = JSON.parse($('w-fields').value || $('w-fields').placeholder);
        } catch (e) {
          return this._local('fields must be a JSON object: ' + e.message);
        }
      } else {
        const raw = $('w-value').value.trim();
        if (raw === '') return this._local((op === 'incr' ? 'delta' : 'value') + ' is required');
        msg[op === 'incr' ? 'delta' : 'value'] = Number(raw);
      }
      const req = $('w-req').value.trim();
      if (req) msg.req = req;
      this._send(msg);
    }

    // An empty team leaves the member's team (team: null).
    _team() {
      if (!this.board) return this._local('no board selected');
      const team = $('t-team').value.trim();
      this._send({ op: 'team', board: this.board, member: $('t-member').value.trim(), team: team || null });
    }

    _rank() {
      if (!this.board) return this._local('no board selected');
      const msg = { op: 'rank', board: this.board, member: $('r-member').value.trim() };
      if (this.period) msg.period = this.period;
      this._send(msg);
    }

    _send(msg) {
      this.client.request(msg).then(
        (reply) => this._entry(msg, reply, true),
        (err) => this._entry(msg, Object.assign({ op: 'error' }, err), false));
    }

    _local(text) { this._entry(null, { op: 'error', code: 'bad_request', message: text }, false); }

    _entry(msg, reply, ok) {
      const li = document.createElement('li');
      li.className = ok ? 'ok' : 'err';
      const head = document.createElement('div');
      head.className = 'head';
      const time = document.createElement('time');
      time.textContent = new Date().toTimeString().slice(0, 8);
      const what = document.createElement('span');
      what.textContent = msg ? summary(msg) : 'console';
      head.append(time, what);
      const body = document.createElement('code');
      const shown = Object.assign({}, reply);
      delete shown.id; // our own request counter, noise here
      body.textContent = JSON.stringify(shown);
      li.append(head, body);
      this.log.prepend(li);
      while (this.log.children.length > LOG_ROWS) this.log.lastElementChild.remove();
    }
  }

  function summary(m) {
    const v = m.op === 'incr' ? (m.delta >= 0 ? '+' : '') + m.delta
      : m.op === 'submit' ? JSON.stringify(m.fields)
        : m.op === 'rank' ? '' : m.op === 'team' ? '→ ' + (m.team == null ? 'no team' : m.team) : '= ' + m.value;
    return `${m.op} ${m.board} ${m.member} ${v}${m.req ? ' req ' + m.req : ''}`.trim();
  }

  root.WriteConsole = WriteConsole;
})(window);
