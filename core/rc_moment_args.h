/* rc_moment_args.h - lua/read.lua's kind "moment" (the header comment
 * there): the call that reads a board at past seqs, and its reply decoded
 * into core/rc_moment.h's shapes. Pure. */
#ifndef RC_MOMENT_ARGS_H
#define RC_MOMENT_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "rc_layout.h"
#include "rc_moment.h"
#include "rc_read_args.h"

/* COUNTS and NEAR read a sharded board's other shards (docs/history.md,
 * "Sharded boards"): COUNTS the members ahead of one bound a target, NEAR
 * those ahead of one bound and the rows radius either side of that count. */
enum rc_moment_view { RC_MOMENT_RANGE = 0, RC_MOMENT_AROUND, RC_MOMENT_POINTS, RC_MOMENT_LIST, RC_MOMENT_COUNTS,
                      RC_MOMENT_NEAR };

/* A composite the members ahead of are counted, by composite alone (desc:
 * greater, or equal when inclusive; asc: smaller, or equal); has 0: none
 * (counts 0). */
struct rc_moment_bound {
    int has;
    double c;
    int inclusive;
};

struct rc_moment_req {
    int by_time;               /* targets are times (ms), else seqs */
    int audience;              /* a frozen board's audience: targets stop at the shown seq */
    enum rc_moment_view view;
    int64_t first, count;      /* RANGE */
    const char *member;        /* AROUND, POINTS (borrowed) */
    int64_t radius;            /* AROUND, NEAR */
    const struct rc_moment_bound *bounds; /* COUNTS: one a target; NEAR: one (borrowed) */
    const char *members;       /* LIST: nmembers names, NUL-terminated back to back (rc_view's; borrowed) */
    uint32_t nmembers;
    int64_t undo_max;          /* history_undo_max: the most changes the read may undo, 0 no cap */
    int segmented;             /* POINTS (targets ascending): the reply answers the newest targets one base
                                * serves within undo_max, and the caller asks again for the rest
                                * (docs/history.md, "Rank history at any span") */
    int64_t below;             /* segmented: every target lies at or before this seq (the oldest seq the
                                * previous call showed), 0 none */
    const int64_t *targets;    /* borrowed; 1 for RANGE, AROUND, LIST and NEAR, 1..RC_MOMENT_TARGETS_MAX for
                                * POINTS and COUNTS */
    size_t ntargets;
};

#define RC_MOMENT_TARGETS_MAX 1000

/* The call: keys as read.lua's (rc_read_args.h), argv malloc'ed with its
 * texts (free with rc_moment_args_free). */
struct rc_moment_args {
    char keys[RC_READ_NKEYS][RC_KEY_MAX];
    const char **argv;
    unsigned nargv;
    char (*num)[32];
    char *list;                /* LIST: the names joined by spaces; COUNTS, NEAR: the bounds (owned) */
};

/* The bounds b[0..n) as read.lua takes them, joined by spaces into *text
 * (malloc'ed): "(c" strictly ahead, "c" ahead or equal, "-" none. Returns
 * 0 or -1 (out of memory). */
int rc_moment_args_bounds_text(const struct rc_moment_bound *b, size_t n, char **text);

/* Returns 0, RC_E_BAD_REQUEST (a request the script cannot take) or
 * RC_E_INTERNAL (out of memory). Borrows req->member until freed. */
int rc_moment_args_build(const char *board, const char *period, enum rc_order order, const struct rc_moment_req *req,
                         struct rc_moment_args *out);
void rc_moment_args_free(struct rc_moment_args *a);

/* DEEP: a target more than undo_max changes back; oldest is then the
 * oldest seq the cap lets a read show (the present minus undo_max). */
enum rc_moment_status { RC_MOMENT_OK = 0, RC_MOMENT_BEYOND, RC_MOMENT_GONE, RC_MOMENT_DEEP };

/* One target as the script settled it. */
struct rc_moment_target {
    int64_t seq;
    int has_at;
    int64_t at;
    int has_c;                 /* POINTS: the member's composite at seq */
    double c;
    int64_t ahead;             /* POINTS: present members before it; COUNTS, NEAR: present members ahead of
                                * the target's bound (rc_moment_ahead turns it into the count at seq) */
};

/* A decoded reply; every pointer malloc'ed (rc_moment_args_reply_free), member
 * names borrowed from the reply items. */
struct rc_moment_reply {
    struct rc_read_head head;
    enum rc_moment_status status;
    int64_t oldest;
    int has_oldest_at;              /* GONE, DEEP: the time of change oldest (0: seq 0, or not held) */
    int64_t oldest_at;
    int has_chain;                  /* DEEP: one moment a chain of bounded calls can rebuild
                                     * (core/rc_moment_chain.h): its seq, time and checkpoint */
    int64_t chain_seq;
    int chain_has_at;
    int64_t chain_at;
    int64_t chain_base;
    int64_t smin;
    int redo;                       /* a segmented POINTS read redone from a checkpoint before its targets:
                                     * the changes after target S are rc_moment_args_point_after's */
    int64_t *change_seq;            /* change_seq[i]: the seq of changes[i] */
    struct rc_moment_change *changes; /* after smin, oldest first */
    size_t nchanges;
    struct rc_moment_target *targets;
    size_t ntargets;
    int64_t lo;                     /* RANGE, AROUND, NEAR: present rank (0-based) of rows[0] */
    struct rc_moment_row *rows;
    size_t nrows;
    struct rc_moment_target *listed; /* LIST: per listed member, in the order asked: has_c, c, ahead */
    size_t nlisted;
};

/* Decodes items[0..n) of a call made for view. Returns 0 or RC_E_INTERNAL
 * (another shape, out of memory). */
int rc_moment_args_parse(const struct rc_reply_item *items, size_t n, enum rc_moment_view view,
                         struct rc_moment_reply *out);
void rc_moment_args_reply_free(struct rc_moment_reply *r);
/* The reply items the scripts send: a count (a non-negative integer), and a
 * composite (its text, or "" with has 0; a Lua number passed on as it was).
 * 0, or -1 when the item is not one. */
int rc_moment_args_count_item(const struct rc_reply_item *it, int64_t *v);
int rc_moment_args_comp_item(const struct rc_reply_item *it, int *has, double *c);
/* A window's tail from items[i]: its first rank (lo), then member and
 * composite pairs, into out->lo and out->rows (members borrowed from
 * items). 0, or RC_E_INTERNAL (rows allocated so far freed with out). */
int rc_moment_args_parse_rows(const struct rc_reply_item *items, size_t n, size_t i, struct rc_moment_reply *out);

/* The changes of r after seq s: r->changes + the index returned (they are in
 * seq order). */
size_t rc_moment_args_after(const struct rc_moment_reply *r, int64_t s);

/* The changes to undo from r's base for its target t (a POINTS reply):
 * those after t's seq, or for a redo (changes numbered from the newest
 * target smax up, newest first) those after 2 smax - seq, which are the
 * changes between the checkpoint and t. Returns the index in r->changes. */
size_t rc_moment_args_point_after(const struct rc_moment_reply *r, const struct rc_moment_target *t);

#endif
