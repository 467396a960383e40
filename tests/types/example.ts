// A typed example that makes every call of rankcast.js (web/rankcast.d.ts) and handles
// every message of the protocol, v1 to v1.2. tests/e2e/rankcast_types.test.js runs
// `tsc --strict --noEmit` over it with the package installed as a web app would
// (npm install ./web); it is type-checked, never run. The @ts-expect-error lines are
// mistakes the types must refuse: one that stops failing fails the check.
import * as Rankcast from 'rankcast';
import {
  Client, View, rest, applyDelta, applyMembers, changesBetween, feedStep, windowOf, SUBPROTOCOL,
  type Ack, type Change, type ChangeInfo, type ClientRequest, type ServerMessage, type Snapshot,
  type SubscribeSpec, type ViewSpec, type RequestError, type RestError, type Row,
} from 'rankcast';

const proto: 'rankcast.v1' = SUBPROTOCOL;

const rc = new Client({
  url: 'wss://scores.example.com/ws', token: 'KEY', minDelay: 250, maxDelay: 10000, timeout: 10000, connect: false,
  onState(state, info) { if (state === 'reconnecting') console.log(info.attempt, info.delay); },
  onError(err) { console.log(err.code, err.message); },
});
rc.connect();
const st: 'connecting' | 'open' | 'reconnecting' | 'closed' = rc.state;

function draw(rows: Row[], changes: Change[], info: ChangeInfo): void {
  for (const r of rows) console.log(r.rank, r.member, r.score, r.name, r.place, r.tied, r.fields?.clears, r.team, r['avatar']);
  for (const c of changes) console.log(c.member, c.from, c.to, c.changed, c.prev_rank);
  console.log(info.kind, info.reset, info.viewers, info.frozen, info.shown, info.replay);
}

// every view kind, with every subscribe option
const specs: SubscribeSpec[] = [
  { board: 'demo', view: { top: 10 }, places: 'shared', max_rate: 2 },
  { board: 'demo', view: { offset: 20, limit: 10 }, period: 'previous' },
  { board: 'demo', view: { around: 'user:101', radius: 5 } },
  { board: 'demo', view: { feed: true }, keep: 50 },
  { board: 'daily', view: { top: 3 }, period: '2026-11-21' },
  { board: 'demo', view: { top: 10 }, live: true },
  { board: 'demo', view: { members: ['user:101', 'user:102'] } },            // v1.2 friends
  { board: 'players', view: { team: 'red' } },                                // v1.2 roster
  { board: 'demo', view: { top: 10 }, replay: { from: { seq: 120 }, speed: 4 } },
  { board: 'demo', view: { feed: true }, replay: { from: { time: 1763769600123 }, speed: 0.25 } },
];
const views: View[] = specs.map((spec) => rc.subscribe(spec, {
  onChange(view, changes, info) { draw(view.rows, changes, info); },
  onEvent(view, e) { console.log(view.events.length, e.seq, e.member, e.score, e.delta, e.rank, e.prev_rank, e.at, e.cursor); },
  onGap(view, gap) { console.log(gap.from, gap.to, view.lastSeq); },
  onViewers(view, n) { console.log(n === view.viewers); },
  onFrozen(view, s) { console.log(s.frozen, s.shown, s.seq, view.pending); },
  onError(view, err) { if (err.stopped) rc.auth('fresh-jwt'); console.log(view.board, err.code); },
  onLive(view, info) { console.log(info.seq, view.replaying); },
}));
const top = views[0];
const kind: 'window' | 'feed' | 'around' | 'members' = top.kind;
console.log(top.sub, top.kind, top.window?.first, top.seq, top.total, top.periodId, top.epoch, top.cursor, top.ready,
  top.frozen, top.shown, top.absent, top.maxRate, top.live, top.replay?.speed, top.subscribeMessage().op);
top.close();
rc.unsubscribe(views[1]);

async function everyCall(): Promise<void> {
  const a: Ack = await rc.incr('demo', 'user:101', 50, { req: 'r-1' });
  console.log(a.score, a.rank, a.seq, a.duplicate, a.queued, a.entry, a.replicas, a.rank_unknown, a.team, a.team_score, a.team_rank);
  await rc.set('demo', 'user:102', 70);
  await rc.best('laps', 'user:101', 61250, { req: 'lap-9' });
  const sub = await rc.submit('clears', 'user:101', { clears: 5, revives: 1, first_clear_ms: 1500 });
  console.log(sub.fields?.clears);
  const r = await rc.rank('demo', 'user:101', 'current');
  const n: number | null = r.rank;
  console.log(n, r.score, r.total);
  await rc.ping();
  const fz = await rc.freeze('demo', { period: 'current' });
  const rv = await rc.reveal('demo', 1);
  const all = await rc.reveal('demo', 'all', { period: '2026-W47' });
  console.log(fz.seq, rv.pending, rv.frozen, rv.skipped, all.seq);
  const rm = await rc.remove('demo', 'user:102', { block: true, period: 'current' });
  const ub = await rc.unblock('demo', 'user:102');
  const rs = await rc.reverse('demo', 'r-1', { period: 'current' });
  const br = await rc.reset('demo');
  console.log(rm.blocked, ub.blocked, rs.req, rs.score, br.seq);
  const tm = await rc.team('players', 'user:101', 'red');
  await rc.team('players', 'user:101', null);
  console.log(tm.team, tm.seq, tm.team_seq);
  const past: Snapshot = await rc.get('demo', { top: 10 }, { at: { seq: 42 }, places: 'shared' });
  await rc.get('demo', { members: ['user:101'] }, { at: { time: 1763769600123 }, period: 'previous' });
  console.log(past.at_seq, past.at_time, past.absent, past.replay);
  const h = await rc.history('demo', 'user:101', { from: 0, to: 60000, step: 1000, period: 'current' });
  for (const p of h.points) console.log(p.at, p.seq, p.score, p.rank);
  const authed = await rc.auth('fresh-jwt');
  console.log(authed.exp);

  // the generic request: the reply's type follows the op
  const pong = await rc.request({ op: 'ping' });
  const snap = await rc.request({ op: 'subscribe', board: 'demo', view: { top: 3 }, since: { seq: 5, epoch: 'e1', cursor: 'c' } },
    (reply) => console.log(reply.sub));
  const unsub = await rc.request({ op: 'unsubscribe', sub: snap.sub ?? '' });
  console.log(pong.op, unsub.sub);

  try {
    await rc.incr('demo', 'user:101', 1);
  } catch (e) {
    const err = e as RequestError;
    if (err.code === 'disconnected' || err.code === 'rate_limited') console.log(err.message);
  }

  const api = Rankcast.rest({ base: 'http://localhost:8080', token: 'KEY' });
  const boards = await api.boards();
  for (const b of boards) console.log(b.name, b.template, b.order, b.ops, b.fields, b.write_mode, b.shards, b.teams, b.team_of);
  const s = await api.board('demo', { top: 10, period: 'current', places: 'shared' });
  await api.board('demo', { offset: 10, limit: 10, live: 1 });
  await api.board('demo', { around: 'user:101', radius: 2 });
  await api.board('demo', { members: ['user:101', 'user:102'] });
  await api.board('players', { team: 'red' });
  await api.board('demo', { top: 3, at_seq: 7 });
  await api.board('demo', { top: 3, at: 1763769600123 });
  console.log(s.rows.length, s.seq, s.total, s.frozen);
  await api.write('demo', { member: 'user:101', op: 'incr', delta: 5, req: 'x' });
  await api.write('demo', { member: 'user:101', op: 'set', value: 5 });
  await api.write('clears', { member: 'user:101', op: 'submit', fields: { clears: 1 } });
  const stats = await api.stats('demo', 'current');
  console.log(stats.viewers, stats.total, stats.seq);
  await api.rank('demo', 'user:101');
  const prof = await api.profile('user:101');
  await api.setProfile('user:101', { name: 'PlayerOne', avatar: 'https://example.com/p1.png' });
  console.log(prof['name']);
  await api.freeze('demo');
  await api.reveal('demo', 'all', { period: 'current' });
  const fs = await api.freezeState('demo');
  console.log(fs.frozen, fs.shown, fs.seq, fs.pending);
  await api.remove('demo', 'user:102', { block: true });
  await api.unblock('demo', 'user:102');
  await api.reverse('demo', 'r-1');
  await api.reset('demo', { period: 'previous' });
  await api.team('players', 'user:101', 'blue');
  await api.history('demo', 'user:101', { from: 0, to: 1000, step: 100 });
  try {
    await rest().board('nope');
  } catch (e) {
    console.log((e as RestError).status);
  }
}

// Every message the server sends, told apart by op (the never check fails when a
// message type is added to ServerMessage and not handled here).
function handle(m: ServerMessage): string {
  switch (m.op) {
    case 'snapshot': return `${m.sub} ${m.board} ${m.period} ${m.seq} ${m.total} ${m.rows.length} ${m.epoch} ${m.reset} ${m.viewers} ${m.frozen} ${m.shown} ${m.cursor} ${m.absent} ${m.replay} ${m.at_seq} ${m.at_time}`;
    case 'delta': return `${m.sub} ${m.seq} ${m.total} ${m.rows[0]?.prev_rank} ${m.removed.join()} ${m.viewers} ${m.frozen} ${m.shown}`;
    case 'event': return `${m.sub} ${m.seq} ${m.member} ${m.score} ${m.delta} ${m.rank} ${m.prev_rank} ${m.at} ${m.fields} ${m.epoch} ${m.cursor}`;
    case 'ack': return `${m.id} ${m.board} ${m.member} ${m.score} ${m.rank} ${m.seq} ${m.duplicate}`;
    case 'rank': return `${m.member} ${m.score} ${m.rank} ${m.total}`;
    case 'pong': return `${m.id}`;
    case 'unsubscribed': return m.sub;
    case 'removed': return `${m.board} ${m.member} ${m.seq} ${m.blocked}`;
    case 'unblocked': return `${m.board} ${m.member} ${m.seq} ${m.blocked}`;
    case 'reversed': return `${m.board} ${m.member} ${m.score} ${m.rank} ${m.seq} ${m.req}`;
    case 'board_reset': return `${m.board} ${m.seq}`;
    case 'frozen': return `${m.board} ${m.seq}`;
    case 'revealed': return `${m.board} ${m.seq} ${m.pending} ${m.frozen} ${m.skipped}`;
    case 'authed': return `${m.exp}`;
    case 'teamed': return `${m.board} ${m.member} ${m.team} ${m.seq} ${m.team_seq}`;
    case 'history': return `${m.board} ${m.member} ${m.points.length}`;
    case 'live': return `${m.sub} ${m.seq}`;
    case 'error': return `${m.id} ${m.sub} ${m.code} ${m.message} ${m.oldest_seq}`;
    default: { const unhandled: never = m; return unhandled; }
  }
}

// Every request op, as a client would build them by hand.
const requests: ClientRequest[] = [
  { op: 'subscribe', id: 1, board: 'demo', view: { top: 10 }, period: 'current', since: { seq: 3 }, places: 'shared', max_rate: 5, live: false },
  { op: 'unsubscribe', id: 'u', sub: 's1' },
  { op: 'incr', id: 2.5, board: 'demo', member: 'user:101', delta: -3, req: 'r' },
  { op: 'set', board: 'demo', member: 'user:101', value: 3 },
  { op: 'best', board: 'laps', member: 'user:101', value: 3 },
  { op: 'submit', board: 'clears', member: 'user:101', fields: { clears: 1 } },
  { op: 'rank', id: null, board: 'demo', member: 'user:101', period: 'previous' },
  { op: 'ping', id: true },
  { op: 'remove', board: 'demo', member: 'user:101', block: true, period: 'current' },
  { op: 'unblock', board: 'demo', member: 'user:101' },
  { op: 'reverse', board: 'demo', req: 'r' },
  { op: 'reset', board: 'demo', period: 'current' },
  { op: 'freeze', board: 'demo' },
  { op: 'reveal', board: 'demo', steps: 'all' },
  { op: 'auth', token: 'jwt' },
  { op: 'team', board: 'players', member: 'user:101', team: null },
  { op: 'get', board: 'demo', view: { around: 'user:101' }, at: { time: 0 } },
  { op: 'history', board: 'demo', member: 'user:101', from: 0, to: 10, step: 1, live: true },
];

// the pure helpers
const rows: Row[] = [{ rank: 1, member: 'a', score: 3 }];
const next = applyDelta(rows, { rows: [{ rank: 1, member: 'b', score: 5, prev_rank: null }], removed: [] }, 1, 10);
const listed = applyMembers(rows, ['c'], { rows: [], removed: ['a'] });
console.log(next?.length, listed.absent, changesBetween(rows, next ?? []), feedStep(null, 1), windowOf({ top: 3 })?.length);
const hand = new View({ board: 'demo', view: { top: 3 } }, {});
console.log(hand.apply({ op: 'snapshot', sub: 's1', board: 'demo', seq: 0, total: 0, rows: [] }));

// mistakes the types refuse
// @ts-expect-error delta is a number
rc.incr('demo', 'user:101', '50');
// @ts-expect-error steps is a number or 'all'
rc.reveal('demo', 'some');
// @ts-expect-error a view needs one of its kinds' keys
const badView: ViewSpec = { tpo: 10 };
// @ts-expect-error places is 'shared' or absent
rc.subscribe({ board: 'demo', view: { top: 3 }, places: 'dense' });
// @ts-expect-error a feed is not a one-shot read
rc.get('demo', { feed: true });
// @ts-expect-error history needs from, to and step
rc.history('demo', 'user:101', { from: 0 });
// @ts-expect-error no such op
rc.request({ op: 'fly' });
// @ts-expect-error the reply of a rank request is a RankReply, whose rank may be null
rc.request({ op: 'rank', board: 'demo', member: 'm' }).then((reply) => { const k: number = reply.rank; return k; });
// @ts-expect-error an unknown handler name
rc.subscribe({ board: 'demo', view: { top: 3 } }, { onChnage() {} });

export { everyCall, handle, requests, proto, st, badView, kind };
