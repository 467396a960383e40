/* rc_vindex.h - an index of windows by the positions they show, so that a
 * change to some positions finds exactly the windows it touches (the
 * fan-out's mirror views, gateway/fanout/gw_mirror.c; issue 23: a view's
 * cost must not grow with the views beside it).
 *
 * An item is a half-open interval [start, end) of positions in
 * [0, RC_VINDEX_SPAN). rc_vindex_each(lo, hi) reports every item with
 * start <= hi and end > lo, each once, and no other: the items containing lo
 * (a stabbing query down a segment tree over the positions: an item is
 * linked at the O(log SPAN) nodes that cover it exactly) and the items that
 * start in (lo, hi] (kept in lists at their start's leaf, found through
 * per-node counts). Adding and removing an item costs O(log SPAN), and a
 * query O(log SPAN + the items reported), whatever the items beside them.
 * The largest end (what a mirror must hold) is found in O(log SPAN) too.
 *
 * Small indexes (issue 24: 6,400 boards of one top-10 view each must cost
 * little memory): while it holds few items, the index keeps them in a plain
 * list and a query scans it (at most RC_VINDEX_SMALL items: a constant),
 * with no tree node at all. It builds the tree when an add passes
 * RC_VINDEX_SMALL items and drops it, back to the list, when removes bring
 * it down to RC_VINDEX_SMALL_LOW (the gap between the two keeps adds and
 * removes at the boundary from rebuilding each time; each switch costs
 * O(RC_VINDEX_SMALL log SPAN) and needs as many adds or removes since the
 * last one, so adding and removing stay O(log SPAN) amortised).
 *
 * Intrusive, like rc_hmap: the caller embeds struct rc_vindex_item in its
 * own struct and owns its memory; the index allocates only its tree nodes
 * and, in tree mode, one array of links per item (one per canonical node
 * and one at its start's leaf, exactly; created on demand and freed when
 * unused). Pure: no I/O.
 */
#ifndef RC_VINDEX_H
#define RC_VINDEX_H

#include <stddef.h>

/* 15 bits: the fan-out's read views (around views, deep pages) are filed by
 * their ranks too (gateway/fanout/gw_reads.c), exactly up to rank 32,768;
 * a mirror view's tree is no bigger for it (its items sit under [0, 1024):
 * five more nodes, shared, above them). Under 16: an item keeps its ends in
 * unsigned short. */
#define RC_VINDEX_BITS 15
#define RC_VINDEX_SPAN ((size_t)1 << RC_VINDEX_BITS) /* positions 0 .. SPAN-1 */
#define RC_VINDEX_LINKS (2 * RC_VINDEX_BITS)         /* nodes one interval is linked at, at most */
#define RC_VINDEX_SMALL 8                            /* items held as a list, at most */
#define RC_VINDEX_SMALL_LOW (RC_VINDEX_SMALL / 2)    /* a tree goes back to a list at this many */

struct rc_vindex_item;
struct rc_vindex_node;

struct rc_vindex_link {
    struct rc_vindex_link *next, **pprev;
    struct rc_vindex_item *item;
};

/* (in every view of every board: kept small, 16 bytes) */
struct rc_vindex_item {
    union {
        struct rc_vindex_item *next;  /* list mode: the next item of the index's list */
        struct rc_vindex_link *links; /* tree mode (allocated): links[0 .. nlinks-1] at its canonical
                                         nodes, links[nlinks] in its start leaf's list */
    } u;
    unsigned short start, end;       /* as indexed (clamped to the span); set by rc_vindex_add */
    unsigned char in;                /* 1 while in an index */
    unsigned char nlinks;            /* its canonical nodes in tree mode (0 in list mode) */
};

/* (in every board: 16 bytes) */
struct rc_vindex {
    union {
        struct rc_vindex_node *root; /* tree mode */
        struct rc_vindex_item *list; /* list mode: the items */
    };
    unsigned count;                  /* items held */
    unsigned tree;                   /* 1 in tree mode */
};

/* Called for each item a query reports; it must not change the index. */
typedef void rc_vindex_visit_fn(struct rc_vindex_item *it, void *arg);

void rc_vindex_init(struct rc_vindex *ix);
/* Frees the nodes and links; the items are the caller's (they are left
 * marked out). */
void rc_vindex_free(struct rc_vindex *ix);

/* Adds it as [start, end): end is clamped to SPAN, start to SPAN - 1, and an
 * empty interval is taken as [start, start + 1). Returns 0, or -1 when out of
 * memory (it is then not in the index; the index is unchanged, in the mode
 * it was) or when it is in an index already. */
int rc_vindex_add(struct rc_vindex *ix, struct rc_vindex_item *it, size_t start, size_t end);
/* Takes it out (a no-op when it is not in). */
void rc_vindex_remove(struct rc_vindex *ix, struct rc_vindex_item *it);

/* Calls fn for each item with start <= hi and end > lo (lo <= hi; hi may be
 * SIZE_MAX), once each, in no set order. Returns how many it reported. */
size_t rc_vindex_each(const struct rc_vindex *ix, size_t lo, size_t hi, rc_vindex_visit_fn *fn, void *arg);

/* The largest end of the items held (0 when empty). */
size_t rc_vindex_max_end(const struct rc_vindex *ix);

#endif
