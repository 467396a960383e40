// rankcast.d.ts - hand-written types of rankcast.js / rankcast.mjs and of the wire
// protocol it speaks: every op, view, message and callback of docs/protocol.md and the
// contract (PROTOCOL.md) v1, v1.1 and v1.2. Parts of v1.2 that a gateway may not serve yet
// (member lists, rosters, get/at, history, replay/live) are typed from the contract.
//
// Checked by tests/e2e/rankcast_types.test.js: `tsc --strict --noEmit` over
// tests/types/example.ts (every call) and the framework snippets of web/README.md, and
// the names declared here against what the library exports at run time.
// Edit this file with the library (web/rankcast.mjs) and docs/protocol.md.

export as namespace Rankcast;

/* ---- names and values ------------------------------------------------------------ */

/** 1..64 characters of [A-Za-z0-9_.:-]; a template's concrete name (`match:1842`) too. */
export type BoardName = string;
/** 1..128 characters of [A-Za-z0-9_.:@-], a stable id such as `user:101`. */
export type MemberName = string;
/** A request's `id`: any JSON scalar, echoed in the reply. */
export type RequestId = string | number | boolean | null;
/** `current` (the default), `previous`, or a period id (`2026-W47`, `2026-11-21`, ...). */
export type Period = 'current' | 'previous' | (string & {});
/** Field values of a multi-field board (`clears`): name -> integer. */
export type Fields = Record<string, number>;
/** A member's profile: at most 16 string fields, joined into its rows. */
export type Profile = Record<string, string>;
/** The protocol's error codes. */
export type ErrorCode =
  | 'bad_request' | 'unknown_board' | 'unauthorized' | 'forbidden' | 'out_of_range'
  | 'rate_limited' | 'unavailable' | 'too_large' | 'internal';

/* ---- views -------------------------------------------------------------------------- */

/** Ranks 1..N (N <= 1000). */
export interface TopView { top: number }
/** A page: ranks O+1..O+L (L <= 1000). */
export interface PageView { offset?: number; limit: number }
/** The member and up to R neighbours each side (R <= 50, default 5); always sent whole. */
export interface AroundView { around: MemberName; radius?: number }
/** Every accepted change, in order, as `event` messages. */
export interface FeedView { feed: true }
/** v1.2: a friends list, 1..200 distinct members. */
export interface MembersView { members: MemberName[] }
/** v1.2: a team's roster on the source board (its best 200 members). */
export interface RosterView { team: string }
export type WindowView = TopView | PageView;
export type ViewSpec = TopView | PageView | AroundView | FeedView | MembersView | RosterView;
/** What a one-shot `get` reads: any window view or member list. */
export type ReadView = TopView | PageView | AroundView | MembersView | RosterView;

/** v1.2: a moment of a board: right after change `seq`, or at `time` (ms since the epoch). */
export type Moment = { seq: number } | { time: number };
/** v1.2: replay a view from a moment, paced at `speed` (0.25..64) times the original. */
export interface ReplaySpec { from: Moment; speed?: number }
/** Resume point of a feed: the last seq (and epoch, and a sharded board's cursor) held. */
export interface Since { seq: number; epoch?: string; cursor?: string }

/* ---- rows ------------------------------------------------------------------------------- */

export interface Row {
  rank: number;
  member: MemberName;
  score: number;
  /** multi-field boards */
  fields?: Fields;
  /** v1.1 with places: 'shared': the competition rank (1, 2, 2, 4) */
  place?: number;
  /** v1.1: true when the place is shared */
  tied?: boolean;
  /** v1.1, delta rows: where the member stood before (null: not on the board) */
  prev_rank?: number | null;
  /** v1.2: the member's team, on a board with teams */
  team?: string;
  /** profile fields (name, avatar, ...) */
  name?: string;
  [profileField: string]: unknown;
}

/* ---- client to server ------------------------------------------------------------------ */

interface RequestBase { id?: RequestId }
export interface SubscribeRequest extends RequestBase {
  op: 'subscribe'; board: BoardName; view: ViewSpec; period?: Period; since?: Since;
  /** v1.1 */ places?: 'shared';
  /** v1.1: 1..50 messages a second (not on feeds) */ max_rate?: number;
  /** v1.1, admin: the live board through a freeze */ live?: boolean;
  /** v1.2 */ replay?: ReplaySpec;
}
export interface UnsubscribeRequest extends RequestBase { op: 'unsubscribe'; sub: string }
export interface IncrRequest extends RequestBase { op: 'incr'; board: BoardName; member: MemberName; delta: number; req?: string }
export interface SetRequest extends RequestBase { op: 'set'; board: BoardName; member: MemberName; value: number; req?: string }
export interface BestRequest extends RequestBase { op: 'best'; board: BoardName; member: MemberName; value: number; req?: string }
export interface SubmitRequest extends RequestBase { op: 'submit'; board: BoardName; member: MemberName; fields: Fields; req?: string }
export interface RankRequest extends RequestBase { op: 'rank'; board: BoardName; member: MemberName; period?: Period }
export interface PingRequest extends RequestBase { op: 'ping' }
export interface RemoveRequest extends RequestBase { op: 'remove'; board: BoardName; member: MemberName; block?: boolean; period?: Period }
export interface UnblockRequest extends RequestBase { op: 'unblock'; board: BoardName; member: MemberName }
export interface ReverseRequest extends RequestBase { op: 'reverse'; board: BoardName; req: string; period?: Period }
export interface ResetRequest extends RequestBase { op: 'reset'; board: BoardName; period?: Period }
export interface FreezeRequest extends RequestBase { op: 'freeze'; board: BoardName; period?: Period }
export interface RevealRequest extends RequestBase { op: 'reveal'; board: BoardName; period?: Period; steps?: number | 'all' }
export interface AuthRequest extends RequestBase { op: 'auth'; token: string }
/** v1.2 */
export interface TeamRequest extends RequestBase { op: 'team'; board: BoardName; member: MemberName; team: string | null }
/** v1.2 */
export interface GetRequest extends RequestBase {
  op: 'get'; board: BoardName; view: ReadView; period?: Period; at?: Moment; places?: 'shared';
  /** admin: read past a freeze */ live?: boolean;
}
/** v1.2 */
export interface HistoryRequest extends RequestBase {
  op: 'history'; board: BoardName; member: MemberName; period?: Period; from: number; to: number; step: number;
  /** admin: read past a freeze */ live?: boolean;
}
export type ClientRequest =
  | SubscribeRequest | UnsubscribeRequest | IncrRequest | SetRequest | BestRequest | SubmitRequest
  | RankRequest | PingRequest | RemoveRequest | UnblockRequest | ReverseRequest | ResetRequest
  | FreezeRequest | RevealRequest | AuthRequest | TeamRequest | GetRequest | HistoryRequest;
export type RequestOp = ClientRequest['op'];

/* ---- server to client ------------------------------------------------------------------- */

export interface Snapshot {
  op: 'snapshot';
  /** the subscribe's (or get's) id, when this snapshot answers it */
  id?: RequestId;
  /** none on REST reads and on get */
  sub?: string;
  board: BoardName;
  /** periodic boards */
  period?: string;
  seq: number;
  total: number;
  rows: Row[];
  /** v1.1: the board's history; changes when it starts over */
  epoch?: string;
  /** a view starting over (a feed that could not be replayed, a board reset) */
  reset?: boolean;
  /** v1.1: open subscriptions to the board */
  viewers?: number;
  /** v1.1: the seq the board is frozen at (absent when live) */
  frozen?: number;
  /** v1.1, live views of a frozen board: the seq the audience sees */
  shown?: number;
  /** sharded feeds: the position per shard */
  cursor?: string;
  /** v1.2 member lists: the listed members not on the board, in the order asked */
  absent?: MemberName[];
  /** v1.2: the first snapshot of a replay */
  replay?: boolean;
  /** v1.2, get with at and replays: the seq shown and that change's time (null at seq 0) */
  at_seq?: number;
  at_time?: number | null;
}
export interface Delta {
  op: 'delta'; sub: string; seq: number; total: number; rows: Row[]; removed: MemberName[];
  viewers?: number; frozen?: number; shown?: number; epoch?: string;
}
export interface FeedEvent {
  op: 'event'; sub: string; seq: number; member: MemberName;
  /** null when the member left the board */
  score: number | null;
  delta?: number;
  rank: number | null;
  prev_rank: number | null;
  /** the change's time, ms since the epoch */
  at: number;
  fields?: Fields;
  epoch?: string;
  cursor?: string;
  /** the composite value stored in Redis (tie-break bits included) */
  c?: string | number;
}
export interface Ack {
  op: 'ack'; id?: RequestId; board: BoardName; member: MemberName;
  /** null on queued boards (acked once queued) */
  score: number | null;
  /** null on queued boards, and on a sharded board when rank_unknown; 0 on a decaying board until counted */
  rank: number | null;
  seq: number | null;
  duplicate: boolean;
  fields?: Fields;
  /** with [redis] ack_replicas: replicas that confirmed (-1: unknown) */
  replicas?: number;
  /** v1.1 queued boards */
  queued?: boolean;
  entry?: string;
  /** sharded boards: the write was applied, its rank could not be read */
  rank_unknown?: boolean;
  /** v1.2, boards with teams: the member's team and its score and rank on the team board */
  team?: string | null;
  team_score?: number | null;
  team_rank?: number | null;
}
export interface RankReply {
  op: 'rank'; id?: RequestId; member: MemberName; score: number | null; rank: number | null; total: number; frozen?: number;
}
export interface Pong { op: 'pong'; id?: RequestId }
export interface Unsubscribed { op: 'unsubscribed'; id?: RequestId; sub: string }
export interface Removed { op: 'removed'; id?: RequestId; board: BoardName; member: MemberName; seq: number; blocked: boolean }
export interface Unblocked { op: 'unblocked'; id?: RequestId; board: BoardName; member: MemberName; seq: number; blocked: false }
export interface Reversed {
  op: 'reversed'; id?: RequestId; board: BoardName; member: MemberName; score: number; rank: number | null; seq: number; req: string;
}
export interface BoardReset { op: 'board_reset'; id?: RequestId; board: BoardName; seq: number }
export interface Frozen { op: 'frozen'; id?: RequestId; board: BoardName; period?: string; seq: number }
export interface Revealed {
  op: 'revealed'; id?: RequestId; board: BoardName; period?: string; seq: number; pending: number;
  /** present while the board stays frozen */
  frozen?: number;
  /** changes one step merged because the change log no longer held them */
  skipped?: number;
}
export interface Authed { op: 'authed'; id?: RequestId; exp: number }
/** v1.2 */
export interface Teamed {
  op: 'teamed'; id?: RequestId; board: BoardName; member: MemberName; team: string | null;
  /** the source board's seq */
  seq: number;
  /** the team board's seq after the change */
  team_seq?: number;
}
/** v1.2: one point of a rank history; score and rank null while off the board */
export interface HistoryPoint { at: number; seq: number; score: number | null; rank: number | null }
/** v1.2 */
export interface HistoryReply {
  op: 'history'; id?: RequestId; board: BoardName; member: MemberName; period?: string; points: HistoryPoint[]; frozen?: number;
}
/** v1.2: a replay reached the present; the same sub goes on live */
export interface LiveMessage { op: 'live'; sub: string; seq: number }
export interface ErrorMessage {
  op: 'error'; id?: RequestId;
  /** the view the server stopped (an expired token, an evicted board) */
  sub?: string;
  code: ErrorCode; message: string;
  /** v1.2, out_of_range of get/history/replay: the oldest seq still shown */
  oldest_seq?: number;
  /** v1.2, with oldest_seq when known: its time, the earliest `at.time` that can be shown (on a sharded board, every shard's) */
  oldest_time?: number;
}
export type ServerMessage =
  | Snapshot | Delta | FeedEvent | Ack | RankReply | Pong | Unsubscribed | Removed | Unblocked
  | Reversed | BoardReset | Frozen | Revealed | Authed | Teamed | HistoryReply | LiveMessage | ErrorMessage;

/** The reply each request op resolves with. */
export interface Replies {
  subscribe: Snapshot; unsubscribe: Unsubscribed; incr: Ack; set: Ack; best: Ack; submit: Ack;
  rank: RankReply; ping: Pong; remove: Removed; unblock: Unblocked; reverse: Reversed;
  reset: BoardReset; freeze: Frozen; reveal: Revealed; auth: Authed; team: Teamed;
  get: Snapshot; history: HistoryReply;
}

/* ---- the library ------------------------------------------------------------------------ */

/** How a request failed: a protocol code, or the client's own disconnected / timeout. */
export interface RequestError {
  code: ErrorCode | 'disconnected' | 'timeout'; message: string;
  /** out_of_range of a `get` at a moment or a `history`: the oldest seq the log holds */
  oldest_seq?: number;
  /** with oldest_seq when known: the earliest `at.time` that can be shown (what a sharded board can be asked) */
  oldest_time?: number;
}
/** A view's error: the subscribe was refused, or (stopped) the server stopped the view. */
export interface ViewError { code: ErrorCode; message: string; stopped?: boolean }
/** A REST call's failure: the HTTP status and the error object (http_STATUS without one). */
export interface RestError { status: number; code: ErrorCode | `http_${number}`; message: string }

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';
export interface StateInfo { attempt?: number; delay?: number }

/** Who entered, left, moved or changed (for highlights). */
export interface Change {
  member: MemberName;
  /** ranks; null when absent */
  from: number | null;
  to: number | null;
  /** the score, fields, profile or shared place differ (a rank-only shift has false) */
  changed: boolean;
  /** deltas: where the member stood on the whole board before (null: not on it) */
  prev_rank?: number | null;
}
export interface ChangeInfo {
  kind: 'snapshot' | 'delta' | 'event' | 'status';
  /** snapshots: the view started over */
  reset?: boolean;
  viewers?: number | null;
  /** the seq the board is frozen at, null when live */
  frozen: number | null;
  /** live views: what the audience sees */
  shown?: number | null;
  /** v1.2: part of a replay (before the server's live) */
  replay?: boolean;
}
export interface FrozenInfo { frozen: number | null; shown: number | null; seq: number | null }
export interface Gap { from: number; to: number }

export interface ViewHandlers {
  onChange?(view: View, changes: Change[], info: ChangeInfo): void;
  onEvent?(view: View, event: FeedEvent): void;
  onGap?(view: View, gap: Gap): void;
  onViewers?(view: View, viewers: number): void;
  onFrozen?(view: View, state: FrozenInfo): void;
  onError?(view: View, err: ViewError): void;
  /** v1.2: a replay reached the present */
  /** reset: the board went back below what the replay showed (changes lost); the next snapshot starts over */
  onLive?(view: View, info: { seq: number; reset?: boolean }): void;
}

export interface SubscribeSpec {
  board: BoardName;
  view: ViewSpec;
  period?: Period;
  places?: 'shared';
  max_rate?: number;
  live?: boolean;
  replay?: ReplaySpec;
  /** feed events kept in view.events (default 100) */
  keep?: number;
}

/** One subscription's state. The Client owns the socket; a View can be driven by hand. */
export class View {
  constructor(spec: SubscribeSpec, handlers?: ViewHandlers);
  readonly board: BoardName;
  readonly view: ViewSpec;
  readonly period: Period | null;
  readonly places: 'shared' | null;
  readonly keep: number;
  readonly maxRate: number | null;
  readonly live: boolean;
  readonly replay: ReplaySpec | null;
  handlers: ViewHandlers;
  readonly window: { first: number; length: number } | null;
  readonly kind: 'window' | 'feed' | 'around' | 'members';
  /** the subscription id while subscribed */
  readonly sub: string | null;
  /** the live rows (window, around and member-list views) */
  readonly rows: Row[];
  /** v1.2 member lists: the listed members not on the board */
  readonly absent: MemberName[];
  /** feed views: the last `keep` events */
  readonly events: FeedEvent[];
  readonly seq: number | null;
  readonly total: number | null;
  /** the period the server resolved, e.g. 2026-W47 */
  readonly periodId: string | null;
  readonly lastSeq: number | null;
  readonly epoch: string | null;
  readonly cursor: string | null;
  /** a first snapshot has arrived */
  readonly ready: boolean;
  readonly viewers: number | null;
  readonly frozen: number | null;
  readonly shown: number | null;
  /** live views of a frozen board: seq - shown */
  readonly pending: number | null;
  /** v1.2: a replay is playing */
  readonly replaying: boolean;
  /** the subscribe message this view sends (the Client adds the id) */
  subscribeMessage(): SubscribeRequest;
  /** Applies one server message; false when the view is out of step (resubscribe). */
  apply(msg: ServerMessage): boolean;
  close(): void;
}

export interface ClientOptions {
  /** default: ws(s)://this page's host/ws */
  url?: string;
  /** an API key or a JWT, sent as ?token= */
  token?: string;
  /** the WebSocket class (Node 20: require('ws')) */
  WebSocket?: unknown;
  /** first reconnect delay, ms (doubled per failure) */
  minDelay?: number;
  /** reconnect delay cap, ms */
  maxDelay?: number;
  /** per-request reply timeout, ms */
  timeout?: number;
  onState?: (state: ConnectionState, info: StateInfo) => void;
  /** server errors that answer no request */
  onError?: (err: ViewError) => void;
  /** false: call connect() yourself */
  connect?: boolean;
}

export interface WriteOptions { req?: string }
export interface PeriodOptions { period?: Period }
export interface GetOptions {
  period?: Period; at?: Moment; places?: 'shared';
  /** admin: read past a freeze (the caster's live view) */
  live?: boolean;
}
export interface HistoryOptions { from: number; to: number; step: number; period?: Period }

/** Requests a caller sends through request(): the Client adds the id. */
export type RequestMessage = ClientRequest extends infer R ? (R extends RequestBase ? Omit<R, 'id'> : never) : never;

export class Client {
  constructor(opts?: ClientOptions);
  readonly state: ConnectionState;
  readonly url: string;
  readonly token: string | undefined;
  readonly views: Set<View>;
  onState: (state: ConnectionState, info: StateInfo) => void;
  onError: (err: ViewError) => void;
  connect(): void;
  close(): void;
  /** Sends any request; resolves with its reply, rejects with a RequestError. */
  request<M extends RequestMessage>(msg: M, onReply?: (reply: Replies[M['op']]) => void): Promise<Replies[M['op']]>;
  subscribe(spec: SubscribeSpec, handlers?: ViewHandlers): View;
  unsubscribe(view: View): void;
  incr(board: BoardName, member: MemberName, delta: number, o?: WriteOptions): Promise<Ack>;
  set(board: BoardName, member: MemberName, value: number, o?: WriteOptions): Promise<Ack>;
  best(board: BoardName, member: MemberName, value: number, o?: WriteOptions): Promise<Ack>;
  submit(board: BoardName, member: MemberName, fields: Fields, o?: WriteOptions): Promise<Ack>;
  rank(board: BoardName, member: MemberName, period?: Period): Promise<RankReply>;
  ping(): Promise<Pong>;
  /** admin */
  freeze(board: BoardName, o?: PeriodOptions): Promise<Frozen>;
  /** admin; 'all' unfreezes */
  reveal(board: BoardName, steps: number | 'all', o?: PeriodOptions): Promise<Revealed>;
  /** admin */
  remove(board: BoardName, member: MemberName, o?: PeriodOptions & { block?: boolean }): Promise<Removed>;
  unblock(board: BoardName, member: MemberName): Promise<Unblocked>;
  reverse(board: BoardName, req: string, o?: PeriodOptions): Promise<Reversed>;
  reset(board: BoardName, o?: PeriodOptions): Promise<BoardReset>;
  /** v1.2, write scope; null leaves the team */
  team(board: BoardName, member: MemberName, team: string | null): Promise<Teamed>;
  /** v1.2: a one-shot read, now or at a moment */
  get(board: BoardName, view: ReadView, o?: GetOptions): Promise<Snapshot>;
  /** v1.2 */
  history(board: BoardName, member: MemberName, o: HistoryOptions): Promise<HistoryReply>;
  /** Replaces the connection's credentials in place (a fresh JWT); stopped views resume. */
  auth(token: string): Promise<Authed>;
}

/* ---- REST ---------------------------------------------------------------------------------- */

export interface RestOptions {
  /** http://host:port (default: this page's origin) */
  base?: string;
  token?: string;
}
/** GET /api/v1/boards: a declaration. */
export interface BoardInfo {
  name: string;
  template: boolean;
  order?: 'asc' | 'desc';
  period?: string;
  ops?: Array<'incr' | 'set' | 'best' | 'submit'>;
  fields?: string[];
  decay?: string;
  write_mode?: 'direct' | 'queued';
  shards?: number;
  points_min?: number;
  points_max?: number;
  /** v1.2: the team board this board feeds */
  teams?: string;
  /** v1.2: on a team board, its source */
  team_of?: string;
}
export interface BoardQuery {
  top?: number;
  offset?: number;
  limit?: number;
  around?: MemberName;
  radius?: number;
  /** v1.2 */
  members?: MemberName[];
  /** v1.2: a team's roster (boards with teams) */
  team?: string;
  period?: Period;
  places?: 'shared';
  /** admin: 1 for the live board through a freeze */
  live?: 0 | 1;
  /** v1.2 */
  at_seq?: number;
  /** v1.2, ms since the epoch */
  at?: number;
}
/** A snapshot over REST: no sub, no id. */
export type RestSnapshot = Omit<Snapshot, 'sub' | 'id'>;
export type RestWrite =
  | { member: MemberName; op: 'incr'; delta: number; req?: string }
  | { member: MemberName; op: 'set' | 'best'; value: number; req?: string }
  | { member: MemberName; op: 'submit'; fields: Fields; req?: string };
export interface BoardStats { board: BoardName; period?: string; viewers: number; total: number; seq: number }
export interface FreezeState { board: BoardName; period?: string; frozen: number | null; shown: number | null; seq: number; pending: number }

export interface RestClient {
  boards(): Promise<BoardInfo[]>;
  board(board: BoardName, params?: BoardQuery): Promise<RestSnapshot>;
  write(board: BoardName, body: RestWrite): Promise<Omit<Ack, 'id'>>;
  stats(board: BoardName, period?: Period): Promise<BoardStats>;
  rank(board: BoardName, member: MemberName, period?: Period): Promise<Omit<RankReply, 'id'>>;
  profile(member: MemberName): Promise<Profile>;
  setProfile(member: MemberName, profile: Profile): Promise<Profile>;
  freeze(board: BoardName, o?: PeriodOptions): Promise<Omit<Frozen, 'id'>>;
  reveal(board: BoardName, steps: number | 'all', o?: PeriodOptions): Promise<Omit<Revealed, 'id'>>;
  freezeState(board: BoardName, o?: PeriodOptions): Promise<FreezeState>;
  remove(board: BoardName, member: MemberName, o?: PeriodOptions & { block?: boolean }): Promise<Omit<Removed, 'id'>>;
  unblock(board: BoardName, member: MemberName): Promise<Omit<Unblocked, 'id'>>;
  reverse(board: BoardName, req: string, o?: PeriodOptions): Promise<Omit<Reversed, 'id'>>;
  reset(board: BoardName, o?: PeriodOptions): Promise<Omit<BoardReset, 'id'>>;
  /** v1.2 */
  team(board: BoardName, member: MemberName, team: string | null): Promise<Omit<Teamed, 'id'>>;
  /** v1.2 */
  history(board: BoardName, member: MemberName, o: HistoryOptions): Promise<Omit<HistoryReply, 'id'>>;
}
/** REST calls (rejects with a RestError). */
export function rest(opts?: RestOptions): RestClient;

/* ---- pure helpers ----------------------------------------------------------------------- */

export const SUBPROTOCOL: 'rankcast.v1';
/** The ranks a window view holds (null: around, feed and member-list views). */
export function windowOf(view: ViewSpec | null | undefined): { first: number; length: number } | null;
/** The delta rule; null when the delta cannot belong to the list. */
export function applyDelta(list: readonly Row[], delta: Pick<Delta, 'rows' | 'removed'>, first: number, length: number): Row[] | null;
/** v1.2: the member-list rule. */
export function applyMembers(
  list: readonly Row[], absent: readonly MemberName[] | null | undefined, delta: Pick<Delta, 'rows' | 'removed'>,
): { rows: Row[]; absent: MemberName[] };
export function changesBetween(before: readonly Row[], after: readonly Row[]): Change[];
/** Where a feed event stands against the last seq applied. */
export function feedStep(lastSeq: number | null, seq: number): 'next' | 'old' | 'gap';
