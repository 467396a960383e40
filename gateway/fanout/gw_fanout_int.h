/* gw_fanout_int.h - the fan-out's own state, shared by the files of fanout/
 * and by nobody else (the public face is gw_fanout.h).
 *
 * Files, bottom to top (each calls only those before it):
 *   gw_vcount.c   the table of viewer counts, one per board name
 *   gw_rowteam.c  a board with teams: its membership, each row's team
 *   gw_board.c    boards and views in the registry (core/rc_registry), their
 *                 lifetimes, the tick's work list, the event ring, the
 *                 queue of subscribes waiting for their first answer
 *   gw_hold.c     fair shares of max_boards: who holds each board, what a
 *                 full table evicts
 *   gw_reads.c    which read views (around, deep pages) a change event can
 *                 have changed: those read again, the others not
 *   gw_view.c     window views: read, diff, encode once, broadcast
 *   gw_members.c  member lists: the next window from the last read and the
 *                 tracker's entries, without a read
 *   gw_mirror.c   a board's mirror of its top rows: events, reloads, refresh
 *   gw_feed_fault.c test-only faults: lose a feed's event on purpose
 *   gw_feed.c     feed views: deliver events, catch up from the change log,
 *                 fill gaps
 *   gw_frozen.c   freeze and reveal: what a change of a board's freeze does
 *                 to its views and feeds
 *   gw_rollover.c views of "current"/"previous" moving on at a period's end
 *   gw_viewers.c  viewer counts: ours per board name in Redis, everyone's sum
 *   gw_replay.c   replay subscriptions: past moments at a pace, then live
 *   gw_replay_share.c their reads, shared between replays of one view
 *   gw_fanout_tick.c the tick: which boards and which of their views it
 *                 looks at (the views due, the mirror views a change reached)
 *   gw_first.c    a subscribe's first answer, a bounded amount per loop turn
 *   gw_rowteam_load.c a board with teams: its membership read from Redis,
 *                 kept by the team messages on its channel
 *   gw_fanout.c   the public operations: subscribe, hooks, messages
 *
 * Ownership: the fan-out owns boards; a board owns its views; a view owns its
 * last window and its list of subscriptions; a subscription is owned by its
 * view and listed in its connection too (it holds a reference on the
 * connection). A Redis read in flight holds a reference on its view, so a view
 * that lost its last viewer is freed only when its reads are back.
 *
 * Cost (issue 23): what one view costs does not grow with the views beside
 * it. A board files each view once, by what it shows: mirror views (top-N
 * and pages cut from the mirror) in an index by the ranks they show
 * (core/rc_vindex), read views (around, deep pages) and feeds in a list
 * each. A change reaches the mirror views whose ranks it touched (the
 * mirror's touched span), the read views (each reads again) and the feeds;
 * the tick looks at those and at the views on the board's due list (dirty,
 * holding a window back for max_rate, owing a viewer count or a first cut),
 * never at every view. Subscribe and unsubscribe touch their own view only.
 * The rare events walk every view: a reload, a profile change, a freeze,
 * Redis coming back, a rollover. A change event that moves a member (total
 * kept) visits the read views whose ranks it touched, through a second
 * index (gw_reads.c); one that changes total walks them all (each reads).
 */
#ifndef GW_FANOUT_INT_H
#define GW_FANOUT_INT_H

#include <stddef.h>
#include <uv.h>
#include <stdint.h>

#include "fanout/gw_fanout.h"
#include "redis/gw_script.h"
#include "store/gw_read.h"
#include "rc_delta.h"
#include "rc_edge.h"
#include "rc_ksmatch.h"
#include "rc_event.h"
#include "rc_freeze.h"
#include "rc_hmap.h"
#include "rc_mirror.h"
#include "rc_rate.h"
#include "rc_registry.h"
#include "rc_shard.h"
#include "rc_vindex.h"
#include "rc_vtrack.h"
#include "rc_vbatch.h"

#include "fanout/gw_members.h"
#include "fanout/gw_reads.h"
#include "fanout/gw_replay.h"
#include "fanout/gw_vcount.h"
#include "fanout/gw_rowteam.h"
#include "fanout/gw_rowteam_load.h"

#define GW_FO_RING_EVENTS 256 /* recent change events kept per board (feed joins, mirror reloads) */
#define GW_FO_RING_FIRST 8    /* events a ring holds when the board's first event arrives */
#define GW_FO_RING_FROZEN 4096 /* ... while the board is frozen: the hidden changes, so that
                                  reveals can say where each row came from (prev_rank) */
#define GW_FO_SHARD_FLUSH_US 5000 /* a sharded board's events go out for their ranks at most this often
                                     between ticks (and at each tick, before its reads) */
#define GW_FO_FEED_QUIET_MS 1000 /* a board's feeds are checked against its seq this long after its last
                                    event (a lost last event shows no gap: gw_feed.c) */
#define GW_FO_FIRST_ROWS_PER_TURN 4096 /* rows of first answers (snapshots, cuts) one loop turn makes:
                                         past them, subscribes wait for the next turns (gw_first.c) */
#define GW_FO_FIRST_US_PER_TURN 4000   /* ... and the time they may take (µs): on a loaded machine 4,096
                                         rows took 20-50 ms, a ping's wait behind them (issue 23) */
#define GW_FO_MIRROR_MAX_ROWS 1000 /* top-N and pages ending within this are cut from the mirror */
_Static_assert(GW_FO_MIRROR_MAX_ROWS + 1 <= RC_VINDEX_SPAN, "mirror views (one row past, with places) fit the index");

#define GW_FO_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

struct gw_view {
    struct rc_reg_view r;        /* in the registry: spec, follows, id, viewers */
    struct gw_fanout *f;
    struct gw_board *board;      /* NULL once detached */
    struct gw_sub *subs;
    struct gw_window *last;      /* what the viewers hold (window views) */
    int64_t stands;              /* the newest seq the viewers hold the board as of (last's, or a later equal window's) */
    unsigned refs;               /* 1 while attached + 1 per read in flight */
    int reading;
    int dirty;                   /* changed since the last read started */
    int force_snapshot;          /* next read goes out as a snapshot (after an outage) */
    int dead;                    /* detached: free when refs drop to 0 */
    /* max_rate (core/rc_rate.h): when the view last sent, and the newest
     * window held back until it may send again (the tick sends it then) */
    struct rc_rate_gate gate;
    struct gw_window *held;
    /* prev_rank (gw_view.c): the board's moves_break when `last` was taken
     * (a read: when it started), and when the read in flight started. */
    uint64_t last_break, read_break;
    int64_t viewers_sent;        /* the viewer count last broadcast to its viewers (window views) */
    /* A sharded board's window whose delta needs change events still out
     * for their ranks (gw_feed_shard.c): held, and tried again as each
     * batch comes back; at the next tick it goes as a snapshot if still
     * unexplained. */
    int await_moves;
    int await_final;
    uint64_t await_tick;         /* f->ticks when it began to wait: the tick that made it waits a tick more */
    int viewers_due;             /* the count changed: tell them (gw_view_tell_viewers) */
    int cut_due;                 /* a new mirror view the mirror could not serve yet: cut it alone */
    int cut_fetched;             /* its profiles were fetched, its cut waits for its viewers' turn */
    unsigned first_queued;       /* its subscriptions waiting in the first-answer queue (gw_first.c) */
    /* A read view (around, deep page): whether a change event can have
     * changed its rows since its last read (core/rc_vtrack.h), so that it
     * reads again only then. */
    struct rc_vtrack trk;
    /* A member list (gw_reads.c, gw_members.c): the window of its last
     * read (base) and its tracker's entries (trk.ent points here); mmoved:
     * events changed the entries since the window last sent, the tick
     * builds the next window from base and entries, without a read. */
    struct gw_window *mbase;
    const struct gw_window *mbase_of; /* the read's window mbase was just copied from (gw_members_as_base) */
    struct rc_vtrack_entry *ment;
    size_t ment_cap;
    int mmoved;
    struct gw_view *mqnext; int mqueued; /* waiting for a build in f->mturn's queue (gw_members.c) */
    struct gw_members_shard *msh; /* a sharded board's list followed by composite (gw_members_shard.h) */
    /* A roster ({"team": T}, gw_rowteam_load.c): the team's members now,
     * packed (core/rc_members.h), read as a member list; roster_ok once
     * known (the board's membership was read). */
    char *roster;
    uint32_t nroster, roster_len;
    int roster_ok;
    /* bumped when the roster changes; a read of an older one is not shown
     * (read_roster_gen: the one the read out was started with) */
    uint32_t roster_gen, read_roster_gen;
    /* Where its board files it (gw_board.c): a mirror view in the board's
     * index by the ranks it shows, any other in the reads or feeds list; a
     * read view also in the board's index of read views (gw_reads.c) by the
     * ranks its tracker depends on while it waits for events. */
    struct rc_vindex_item ix;
    int rfiled;                  /* read view: its tracker follows the board's rix_seq (in rix, or an
                                    around view whose member is absent: kept by every move) */
    int rlazy;                   /* member list judging the board's events from its ring in batches (gw_reads.c) */
    struct gw_view *knext, *kprev;
    /* On its board's due list (or the tick's copy of it), or not. */
    struct gw_view *dnext, *dprev;
    struct gw_view **dlist;
    int recheck;                 /* feed: the log read in flight may predate the channel's
                                    (re-)subscribe: read again when it is back (gw_feed.c) */
};

struct gw_sub {
    struct gw_sub *vnext, *vprev; /* in view->subs */
    struct gw_sub *cnext;         /* in conn->subs */
    struct gw_view *view;
    struct gw_conn *conn;         /* a reference */
    char *id_json;                /* pending subscribe's id, echoed in its snapshot */
    int pending;                  /* no snapshot sent yet */
    int needs_snapshot;           /* its connection lagged: deltas wait for a fresh snapshot */
    int has_since;                /* feed: resume point */
    int64_t since;
    int64_t cursor;               /* feed: last seq delivered */
    /* The epoch (core/rc_epoch.h) of the history this viewer holds: the
     * since.epoch it resumed with while pending (when has_epoch), then the
     * epoch of what it was last sent. */
    int has_epoch;
    char epoch[RC_EPOCH_MAX + 1];
    /* A sharded board's feed (gw_feed_shard.c): per shard the last change
     * delivered (or, while pending with has_since, the resume point);
     * malloc'd, NULL until known. */
    struct rc_shard_cursor *vec;
    int keyed;                    /* its connection presented a key (gw_hold.c) */
    /* A feed viewer past a gap (core/rc_feedgap.h), pending until the log
     * fills it: answered by the missing events alone, no snapshot, when
     * the log still holds them (else a reset snapshot). */
    int gapfill;
    /* Waiting for its first answer in f's queue (gw_first.c). */
    struct gw_sub *qnext, *qprev;
    int queued;
    /* A replay in progress (gw_replay.c): the view sends it nothing (its
     * snapshots stay owed) until the replay reaches the present. */
    struct gw_replay *replay;
    /* A replay went live (gw_replay.c): a feed's at `since` is answered
     * only by a log read at that seq or past it; a window's snapshot is
     * labelled where the view stands, never below the live seq. */
    int after_replay;
};

/* What a sharded board (decl->shards > 1) has besides a board's state: its
 * shards' change events waiting for their global ranks (gw_feed_shard.c),
 * and the batches out for them. */
struct gw_board_shards {
    struct rc_event *spend;
    size_t nspend, spend_cap;
    struct gw_board *sfnext;     /* on f->sflush: events wait to be sent for ranks */
    int sfqueued;
    struct gw_sbatch *sb_head, *sb_tail; /* batches out for ranks, oldest first (delivered in order) */
    int64_t rseq[RC_SHARDS_MAX]; /* shard j's events through rseq[j] judged for every filed list (gw_reads.c; -1: none yet) */
};

struct gw_board {
    struct rc_reg_board r;       /* in the registry: name, period, views (live boards only) */
    struct gw_board *next, *prev; /* f->all: every live board */
    struct gw_board *wnext, *wprev; /* on a work list (f->work, or the tick's) */
    struct gw_board **wlist;     /* that list, or NULL */
    struct rc_edge edge;         /* when it last went out: a change finding it quiet goes at once */
    struct gw_fanout *f;
    const struct rc_board *decl;
    struct rc_event *ring;       /* recent events: NULL until the first, grows to GW_FO_RING_EVENTS */
    size_t ring_cap, ring_len, ring_head; /* oldest at ring_head */
    unsigned refs;               /* reloads and profile fetches in flight */
    int dead;                    /* no views left: free when refs drop to 0 */
    /* the mirror of the top rows, for top-N and page views */
    struct gw_rowteam *rt;       /* a board with teams: its membership (gw_rowteam.c), else NULL */
    struct rc_mirror mirror;
    int mirror_on;               /* some view is served from the mirror */
    int loading;                 /* a reload is in flight */
    int load_void;               /* the mirror went off while it was: its answer is not kept */
    int stale;                   /* needs a reload (gap, change made outside the script) */
    int changed;                 /* mirror changed since its views were last refreshed */
    int fetching;                /* profiles for its views are being fetched */
    struct rc_ksmatch ks;        /* keyspace "zadd"s against script events (core/rc_ksmatch.h) */
    /* A sharded board: its shards' events that came while the mirror's
     * reload was out, to apply after it (gw_mirror.c); NULL otherwise. */
    struct gw_raced *raced;
    /* Bumped whenever the board changed in a way its events do not tell
     * (a change made outside the scripts): the ring's moves no longer
     * explain the ranks across it (prev_rank, gw_view.c). */
    uint64_t moves_break;
    /* Epochs (core/rc_epoch.h): the history the ring's events belong to
     * (known once a read or an event told it), and the mirror's. */
    int epoch_known;
    char epoch[RC_EPOCH_MAX + 1];
    char mirror_epoch[RC_EPOCH_MAX + 1];
    /* Freeze and reveal (core/rc_freeze.h, gw_frozen.c): the newest state
     * heard (events, reads), and the one its views and feeds were last
     * moved to (what they follow now); freeze_due while they differ. */
    struct rc_freeze freeze;
    struct rc_freeze freeze_was;
    int freeze_due;
    /* A sharded board (decl->shards > 1): its shards' change events waiting
     * for their global ranks (gw_rank_shard.c), and whether a batch is out. */
    struct gw_board_shards *sh;  /* NULL unless sharded: allocated with the board */
    /* Its views filed by what they show (gw_board.c): see the banner. */
    struct rc_vindex vix;        /* mirror views, by the ranks they show */
    int vix_lost;                /* an add ran out of memory: refreshes walk every view */
    struct gw_view *reads;       /* around views and deep pages */
    /* Read views waiting for events, by the ranks a move must touch to
     * change them (gw_reads.c): a move visits only those it reaches. */
    struct rc_vindex rix;
    int64_t rix_seq;             /* the events through this were judged for every filed read view (-1: none yet) */
    int rix_lost;                /* an add ran out of memory: every event walks every read view */
    size_t nrfiled;              /* its read views with rfiled set (a move spares those it misses) */
    size_t nreads, nlazy;        /* its read views, and those with rlazy set */
    int64_t lazy_behind;         /* events its lazy member lists have not judged yet (0: none) */
    int64_t lazy_seq;            /* the ring's newest seq when its lazy lists last caught up (gw_reads_batch.c) */
    struct gw_view *feeds;
    struct gw_view *due;         /* views the next tick must look at */
    int refresh_all;             /* the next mirror refresh cuts every mirror view (profiles, freeze) */
    /* the viewer count of its name (gw_viewers.c), shared by its periods */
    struct gw_vcount *vc;
    struct gw_board *vcnext, *vcprev; /* in vc->boards */
    /* who holds it (gw_hold.c): its viewers, those with a key, those from
     * its holder's address; held alone (on f->alone, counted in the
     * holder's share) or guarded (declared, or a keyed viewer) */
    struct gw_holder *holder;
    unsigned nsubs, keyed, hsubs;
    int alone, guarded;
    struct gw_board *anext, *aprev; /* on f->alone_head..alone_tail */
    /* Feeds (gw_feed.c, gw_feed_shard.c): when the last event reached
     * them, and whether they are still to be checked against the board's
     * seq once it is quiet (2: while a delivery is under way). */
    int64_t feed_heard_us;
    int feed_check_due;
};

/* One board name's viewer count (gw_viewers.c): its open subscriptions on
 * this gateway (any view, any period) and the other gateways' sum. */
struct gw_vcount {
    struct rc_hnode node;        /* in f->vmap, by name */
    struct gw_vcount *next, *prev; /* f->vall */
    char name[RC_BOARD_MAX + 1];
    struct gw_board *boards;     /* the live boards of this name here */
    int64_t local;               /* open subscriptions here */
    int64_t others;              /* the other gateways' sum, as last read */
    int64_t published;           /* what our field in Redis says (0: none) */
    unsigned inflight;           /* script calls in flight (each holds it alive) */
};

struct gw_fanout {
    struct gw_app *app;
    struct rc_registry reg;      /* live boards (count <= max_boards, gw_hold.c) and attached views */
    struct gw_board *all;        /* live boards, for the rare walks over all of them */
    struct gw_board *work;       /* boards the next tick must look at */
    struct gw_board *soon;       /* boards whose change found them quiet: looked at after this loop turn's I/O */
    struct gw_board *sflush;     /* sharded boards with events to rank (gw_feed_shard.c) */
    int64_t sflushed_us;         /* when they were last sent (at most every GW_FO_SHARD_FLUSH_US, and every tick) */
    uint64_t ticks;              /* ticks run (numbers the tick periods, core/rc_edge.h) */
    int64_t rollover_at;         /* the rollover walks the boards when the clock reaches this */
    int64_t rollover_from;       /* ... or goes back before this (test clock) */
    /* viewer counts (gw_viewers.c) */
    struct rc_hmap vmap;         /* struct gw_vcount by board name */
    struct rc_hash_key vkey;
    struct gw_vcount *vall;
    struct gw_vcount *vcursor;   /* the pass in progress goes on from here (NULL: done) */
    struct gw_script vscript;    /* lua/viewers.lua */
    char vid[33];                /* this process's field name in the hashes */
    int64_t vnext_ms;            /* the next refresh pass (monotonic ms) */
    int vstopping;
    struct rc_delta_scratch delta; /* the delta rule's memory, kept from one view's delta to the next (gw_view.c) */
    struct gw_view **reached;    /* the read views an event reached (gw_reads.c), kept from one event to the next */
    size_t reached_cap;
    struct rc_vbatch vbatch;     /* a board's run of events for its lazy lists (gw_reads_batch.c), kept between runs */
    struct rc_vbatch_ev *vbev;   /* ... and the run's events as it takes them */
    size_t vbev_cap;
    /* fair shares of the board table (gw_hold.c) */
    struct rc_hmap hmap;         /* struct gw_holder by address */
    struct gw_board *alone_head, *alone_tail; /* boards held alone, longest held first */
    unsigned nguarded;           /* boards declared or with a keyed viewer */
    int64_t feed_checked_us;     /* the last pass over quiet boards' feeds (gw_feed_check_quiet) */
    /* first answers spread over loop turns (gw_first.c) */
    uv_idle_t first_idle;
    int first_on;                /* first_idle is open */
    size_t first_rows;           /* rows answered this turn (renewed after each turn's I/O) */
    int64_t first_us;            /* time spent answering them this turn (µs) */
    struct gw_sub *first_head, *first_tail; /* subscriptions waiting for their turn, oldest first */
    struct gw_members_turn mturn; /* member lists' builds per loop turn (gw_members.h) */
    struct gw_replay *replays;   /* replays in progress (gw_replay.c) */
    struct gw_replay_read *replay_reads; /* their reads, shared (gw_replay_share.c) */
    /* Drops subscription s (gw_fanout.c): the upward call of a replay that
     * failed to start (gw_replay.c is below gw_fanout.c) */
    void (*drop_sub)(struct gw_fanout *f, struct gw_sub *s);
    /* The tick's look at a board's team membership notifications
     * (gw_rowteam_load_tick, set by gw_fanout.c: the tick is below it) */
    void (*tick_teams)(struct gw_board *b);
};

static inline struct gw_view *gw_fo_first_view(const struct gw_board *b)
{
    return b->r.views ? GW_FO_CONTAINER(b->r.views, struct gw_view, r) : NULL;
}

static inline struct gw_view *gw_fo_view_next(const struct gw_view *v)
{
    return v->r.next ? GW_FO_CONTAINER(v->r.next, struct gw_view, r) : NULL;
}

/* ---- gw_board.c ---------------------------------------------------------- */

struct gw_board *gw_board_find(struct gw_fanout *f, const char *name, const char *period);
/* The live board `name` in `period`, created (without views) when missing.
 * NULL when out of memory, or *over_cap = 1 when creating it would take the
 * live boards past max_boards (only when enforce_cap). */
struct gw_board *gw_board_get(struct gw_fanout *f, const struct rc_board *decl, const char *name,
                                 const char *period, int enforce_cap, int *over_cap);
void gw_board_maybe_free(struct gw_fanout *f, struct gw_board *b);
void gw_board_unref(struct gw_board *b);
void gw_board_wake(struct gw_board *b);
void gw_board_work_remove(struct gw_board *b);
void gw_board_set_stale(struct gw_board *b);
void gw_board_view_set_dirty(struct gw_view *v);
/* A change to b: its read views read again on the next tick. */
void gw_board_mark_reads_dirty(struct gw_board *b);
/* Puts v on its board's due list (once) and wakes the board. */
void gw_board_view_due(struct gw_view *v);
void gw_board_view_undue(struct gw_view *v);
/* The first-answer queue (gw_first.c): s waits at its end (counted in
 * rankcast_first_answers_deferred_total); out of it (a no-op when not in:
 * also when s goes). */
void gw_board_first_queue(struct gw_fanout *f, struct gw_sub *s);
void gw_board_first_unqueue(struct gw_fanout *f, struct gw_sub *s);
/* New mirror view v may be cut now (the tick, a profile fetch's answer): 1,
 * counted in this turn's share; else 0, and its pending viewers wait in the
 * queue (their turn cuts it). */
/* Whether this turn's share of first answers (rows and time) has room left. */
int gw_board_first_share_left(const struct gw_fanout *f);
int gw_board_first_may_cut(struct gw_fanout *f, struct gw_view *v);
/* Moves v (out of its old board's files) onto board nb (rollover). */
void gw_board_view_refile(struct gw_view *v, struct gw_board *nb);
/* 1 for a top-N or page the mirror can hold (whether or not it is served
 * from it now: see gw_board_view_uses_mirror). */
int gw_board_view_mirror_shaped(const struct gw_view *v);
const struct rc_event *gw_board_ring_at(const struct gw_board *b, size_t i);
void gw_board_follow_epoch(struct gw_board *b, const char *epoch);
/* A read of (epoch, seq) came back: follows its epoch unless it predates the
 * ring's new history (gw_board.c). 1: followed, 0: predates. */
int gw_board_follow_read(struct gw_board *b, const char *epoch, int64_t seq);
void gw_board_ring_push(struct gw_board *b, const struct rc_event *ev);
/* Keeps only the newest n events of the ring (a thawed board gives back
 * what it held while frozen, once the ring fills). */
void gw_board_ring_shrink(struct gw_board *b, size_t n);
struct gw_view *gw_board_view_get(struct gw_fanout *f, struct gw_board *b, const struct rc_view *spec, int follows);
void gw_board_view_unref(struct gw_view *v);
struct gw_board *gw_board_view_detach(struct gw_fanout *f, struct gw_view *v);
int gw_board_view_uses_mirror(const struct gw_view *v);
/* A read or an event told the board's freeze state: kept when newer, and
 * the board is due a transition (gw_frozen_apply) when its views follow
 * another state. */
void gw_board_heard_freeze(struct gw_board *b, const struct rc_freeze *fr);
/* 1 when v shows the audience's board while the board is frozen (its
 * viewers see the frozen state; an admin's live view does not). */
int gw_board_view_held(const struct gw_view *v);

/* ---- gw_hold.c ----------------------------------------------------------- */

void gw_hold_init(struct gw_fanout *f);
void gw_hold_free(struct gw_fanout *f);
/* s (linked in a view of b) now counts on b / s (unlinked) no longer does. */
void gw_hold_join(struct gw_fanout *f, struct gw_board *b, struct gw_sub *s);
void gw_hold_leave(struct gw_fanout *f, struct gw_board *b, const struct gw_sub *s);
/* b's views changed wholesale (a rollover moved one): count them again. */
void gw_hold_recount(struct gw_fanout *f, struct gw_board *b);
/* How many boards one address may hold alone. */
unsigned gw_hold_share(const struct gw_fanout *f);
/* May connection c open a new board of decl? 0: yes, after *evict (when
 * not NULL) has been evicted; RC_E_RATE_LIMITED: no, msg (cap bytes) says
 * why. Borrows everything. */
int gw_hold_admit(struct gw_fanout *f, const struct rc_board *decl, const struct gw_conn *c,
                     struct gw_board **evict, char *msg, size_t cap);

/* ---- gw_view.c ----------------------------------------------------------- */

/* The messages of view v (core/rc_proto.h); cursor: a sharded feed's
 * position (NULL: none), epoch: the event that began the board's history
 * (NULL: not it). */
char *gw_view_encode_snapshot(const struct gw_view *v, const struct gw_window *w, const char *id_json, int reset,
                            const char *cursor);
char *gw_view_encode_event(const struct gw_view *v, const struct rc_event *ev, const char *epoch, const char *cursor);
/* A pending feed viewer's snapshot msg (taken; NULL: out of memory, the
 * viewer is answered all the same) as an owed reply, the viewer then
 * answered in history `epoch`. Returns 0, or -1 when its queue refused it
 * (the viewer stays pending). */
int gw_view_feed_answer(struct gw_fanout *f, struct gw_sub *s, struct gw_msg *msg, const char *epoch);
int gw_view_send_owed_snapshot(struct gw_fanout *f, struct gw_sub *s);
void gw_view_send_first_snapshot(struct gw_fanout *f, struct gw_sub *s);
void gw_view_update(struct gw_fanout *f, struct gw_view *v, struct gw_window *w);
void gw_view_read_fail_pending(struct gw_view *v, int code);
void gw_view_read(struct gw_view *v);
void gw_view_send_held(struct gw_fanout *f, struct gw_view *v, int64_t now_us);
/* A batch of a sharded board's events was ranked: a window waiting for its
 * moves (await_moves) is tried again. */
void gw_view_moves_ranked(struct gw_fanout *f, struct gw_view *v);

/* ---- gw_members.c -------------------------------------------------------- */

/* Member list v's entries changed (mmoved): its next window, built from
 * its last read and the entries, goes out (gw_view_update) now, or, past
 * this loop turn's share, from the queue in a later turn (gw_members.h). */
void gw_members_build(struct gw_view *v);

/* ---- gw_mirror.c --------------------------------------------------------- */

void gw_mirror_board_want(struct gw_board *b);
/* Cuts the mirror views the mirror's touched span reaches (every one after
 * a load or with refresh_all) and sends what changed. */
void gw_mirror_board_refresh(struct gw_board *b, int may_fetch);
/* Cuts new mirror view v alone from the mirror (a subscribe): its missing
 * profiles fetched first. When the mirror cannot serve it now, v is left
 * due (cut_due) and the board woken. */
void gw_mirror_cut_one(struct gw_board *b, struct gw_view *v);
void gw_mirror_apply(struct gw_board *b, const struct rc_event *ev);
/* Around view v (not frozen for its audience, no shared places) cut from
 * its board's mirror when the mirror is exact and holds the member, its
 * window and every row's profile in the cache: the window sent as a read's
 * would be, and 1; else 0 and the caller reads Redis. */
int gw_mirror_around(struct gw_view *v);
/* A read view's window, fresh: cut from the mirror when gw_mirror_around
 * can, else read (gw_view_read). */
void gw_mirror_view_read_or_cut(struct gw_view *v);
/* A change event of a sharded board's shard (ev->shard set) as it arrives,
 * before its ranks are read: applied to the mirror, or kept for after the
 * reload in flight. */
void gw_mirror_shard_event(struct gw_board *b, const struct rc_event *ev);
void gw_mirror_board_reload(struct gw_board *b);

/* ---- gw_rank_shard.c ----------------------------------------------------- */

/* Makes the ranks of events[0..n) (change events of sharded board b's
 * shards, each with its shard set) global, in place (docs/sharded.md,
 * "Feeds"). Takes events (malloc'd; freed after cb). Returns 0: cb runs
 * once (with 0 and cseq[i * S + j]: the seq of shard j its count of event i's new composite was read at, -1: none;
 * or the RC_E_* of a failed read: ranks untouched, cseq NULL), possibly before this returns; or RC_E_INTERNAL
 * (out of memory: events not taken, cb not called). */
typedef void gw_shard_resolve_cb(int code, struct rc_event *events, size_t n, const int64_t *cseq, void *privdata);
int gw_rank_shard_resolve(struct gw_board *b, struct rc_event *events, size_t n, gw_shard_resolve_cb *cb,
                        void *privdata);

/* ---- gw_feed_shard.c ----------------------------------------------------- */

/* A change event of shard `shard` of sharded board b (seq: the shard's):
 * its global ranks are read (the events of one loop turn together, sent by
 * gw_feed_shard_flush), then it is kept in the ring (prev_rank of deltas) and
 * delivered to b's feeds, in arrival order. */
void gw_feed_shard_event(struct gw_board *b, unsigned shard, const struct rc_event *ev);
/* Sends the rank reads of the events waiting (one batch per board). */
void gw_feed_shard_flush(struct gw_fanout *f);
/* Answers the pending viewers of feed v of a sharded board from its shards'
 * change logs: a snapshot, then what each missed since its cursor. */
void gw_feed_shard_catch_up(struct gw_view *v);

/* ---- gw_feed.c ----------------------------------------------------------- */

void gw_feed_deliver(struct gw_fanout *f, struct gw_view *v, const struct rc_event *ev);
void gw_feed_catch_up(struct gw_view *v);
/* Moves v's viewers on through the board's ring up to what they may see;
 * a viewer the ring cannot take there (its next event is older than the
 * ring) is caught up from the log (with a snapshot first). */
void gw_feed_advance(struct gw_fanout *f, struct gw_view *v);
/* Every viewer of feed v gets a snapshot (no id, no rows) of the board as
 * it may see it now, then what it missed: the catch-up of a resume. */
void gw_feed_resnapshot(struct gw_view *v);
/* v's channel was (re-)subscribed (or Redis came back, or the board went
 * quiet): events may have been lost meanwhile, the last ones too. Every
 * viewer is checked against the board's log and seq at the next tick: given
 * the events it missed alone when the log holds them in its history, else a
 * reset snapshot (a sharded board's: a snapshot, then what each shard's log
 * adds); a read in flight is done again once back. */
void gw_feed_recheck(struct gw_view *v);
/* From the tick: the feeds of boards quiet for GW_FO_FEED_QUIET_MS since
 * their last event are checked once against the log (the event that went
 * missing may have been the last). */
void gw_feed_check_quiet(struct gw_fanout *f);

/* ---- gw_frozen.c --------------------------------------------------------- */

/* Moves b's views and feeds to the freeze state it heard last (when due). */
void gw_frozen_apply(struct gw_fanout *f, struct gw_board *b);
/* What b knows of its freeze may be stale (Redis came back, possibly
 * without its data; the board's history started over; its set changed
 * outside the scripts): the next read's state is taken whatever its version,
 * and every view reads again. */
void gw_frozen_recheck(struct gw_board *b);

/* ---- gw_viewers.c -------------------------------------------------------- */

/* Each board name's count is written and read every [server] viewers_every
 * (2 s unless set); a gateway's count holds 5/2 of that without a refresh
 * (5 s): a pass late by a tick or a slow Redis does not drop it. */
#define GW_VIEWERS_BATCH 256     /* counts a tick refreshes at most (a pass spreads over ticks) */

/* The refresh pass, from the tick (does something every [server] viewers_every). */
void gw_viewers_tick(struct gw_fanout *f);

/* ---- gw_view.c (viewer counts) ------------------------------------------- */

/* A delta without rows carrying the new count to v's viewers, when it is not
 * what they were last told. */
void gw_view_tell_viewers(struct gw_fanout *f, struct gw_view *v);

/* ---- gw_first.c ---------------------------------------------------------- */

/* Answers new subscription s (pending) now, or queues it for a later loop
 * turn when this turn has answered its share of rows or others wait. */
void gw_first_answer(struct gw_fanout *f, struct gw_sub *s);
/* After each turn's I/O: renews the share, and works through the queue in
 * the next turns while some wait. */
void gw_first_kick(struct gw_fanout *f);

/* ---- gw_fanout_tick.c ---------------------------------------------------- */

/* A change event reached b: looked at after this loop turn's I/O when it
 * finds b quiet (core/rc_edge.h). */
void gw_fanout_tick_edge_maybe(struct gw_fanout *f, struct gw_board *b);

/* ---- gw_rollover.c ------------------------------------------------------- */

void gw_rollover_run(struct gw_fanout *f);

#endif
