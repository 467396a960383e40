/* rc_registry.h - the registry of live boards and their views: who shares
 * what. Pure: no I/O, no clock; the hash seed is a parameter.
 *
 * A board is a (name, period) pair; a view is a window spec on one board
 * plus how it follows the clock (FOLLOW_*). Two viewers share a view when
 * board, normalized spec (with its max_rate) and follows are equal: they are then given the same
 * view id ("sub" in PROTOCOL.md), and the fan-out encodes each delta once for
 * all of them. A view counts its viewers; when the count drops to 0 the
 * caller removes it, and a board without views leaves the registry.
 *
 * Intrusive, like rc_hmap: the caller embeds rc_reg_board / rc_reg_view in
 * its own structs and owns their memory; the registry only links them. Both
 * tables are keyed with a secret (rc_hmap_hash), so names cannot be picked to
 * collide; every operation is O(1) on average whatever the number of boards.
 */
#ifndef RC_REGISTRY_H
#define RC_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "rc_hmap.h"
#include "rc_names.h"
#include "rc_period.h"
#include "rc_proto.h"

#define RC_FOLLOW_NONE 0     /* an explicit period id: stays */
#define RC_FOLLOW_CURRENT 1  /* "current" (or no period): moves to each new period */
#define RC_FOLLOW_PREVIOUS 2 /* "previous": moves along one period behind */

#define RC_VIEW_ID_MAX 24    /* "v" + a counter, with the NUL */

struct rc_reg_view;

struct rc_reg_board {
    struct rc_hnode node;           /* in the registry's board table */
    char name[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];  /* "" for all-time boards */
    struct rc_reg_view *views;      /* its views, newest first */
    unsigned nviews;
};

struct rc_reg_view {
    struct rc_hnode node;           /* in the registry's view table */
    struct rc_reg_view *next, *prev; /* in board->views */
    struct rc_reg_board *board;     /* NULL when not in the registry */
    struct rc_view spec;            /* normalized (rc_registry_view_normalize) */
    int follows;                    /* RC_FOLLOW_* */
    char id[RC_VIEW_ID_MAX];        /* the "sub" every viewer is given; unique per registry */
    unsigned viewers;               /* subscriptions holding it */
};

struct rc_registry {
    struct rc_hash_key key;
    struct rc_hmap boards;
    struct rc_hmap views;
    unsigned long next_id;
};

/* An empty registry with hash seed key. Allocates nothing. */
void rc_registry_init(struct rc_registry *r, struct rc_hash_key key);

/* Frees the tables (not the boards and views: they are the caller's). */
void rc_registry_free(struct rc_registry *r);

/* Live boards in the registry. */
static inline size_t rc_registry_nboards(const struct rc_registry *r)
{
    return r->boards.count;
}

/* Which follow mode a subscribe asks for: boards without periods stay put;
 * no period or "current" follows the current period, "previous" the one
 * before; an explicit id stays. */
int rc_registry_follow_mode(int board_has_periods, const char *requested_period);

/* The canonical form of a spec, the one views are shared by: a top-N is
 * the page at offset 0. */
void rc_registry_view_normalize(struct rc_view *out, const struct rc_view *in);

/* The rows a subscribe to view v reads for its snapshot (top N: N; a page:
 * its limit; around: 2 radius + 1; a feed: 0), what its read budget is
 * charged for (core/rc_auth.h, rc_auth_read_tokens). */
uint64_t rc_registry_view_rows(const struct rc_view *v);

/* 1 when a and b (both normalized) select the same window. */
int rc_registry_view_same(const struct rc_view *a, const struct rc_view *b);

/* The board (name, period), or NULL. */
struct rc_reg_board *rc_registry_board_find(const struct rc_registry *r, const char *name, const char *period);

/* Adds b (borrowed until removed; zeroed by the caller) as (name, period).
 * Returns 0, RC_E_TOO_LARGE when a name does not fit, or RC_E_INTERNAL when
 * the table cannot grow (b is then not added). Does not look for a twin. */
int rc_registry_board_add(struct rc_registry *r, struct rc_reg_board *b, const char *name, const char *period);

/* Removes b (which must hold no views any more). */
void rc_registry_board_remove(struct rc_registry *r, struct rc_reg_board *b);

/* The view of board b with spec (normalized here) and follows, or NULL. */
struct rc_reg_view *rc_registry_view_find(const struct rc_registry *r, const struct rc_reg_board *b,
                                          const struct rc_view *spec, int follows);

/* Adds v (borrowed until removed; zeroed by the caller) to board b with
 * spec (normalized here) and follows, with a fresh id and no viewers.
 * Returns 0, or RC_E_INTERNAL when the view table could not take it: v is
 * then on the board all the same (served), just not found by a later
 * rc_registry_view_find (which then makes a view of its own). */
int rc_registry_view_add(struct rc_registry *r, struct rc_reg_view *v, struct rc_reg_board *b,
                         const struct rc_view *spec, int follows);

/* Removes v from its board and the table; v->board becomes NULL. */
void rc_registry_view_remove(struct rc_registry *r, struct rc_reg_view *v);

/* Moves v, with its id and viewers, onto board nb (period rollover).
 * Returns as rc_registry_view_add. */
int rc_registry_view_move(struct rc_registry *r, struct rc_reg_view *v, struct rc_reg_board *nb);

#endif
