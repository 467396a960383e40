/* rc_vindex.c - windows indexed by the positions they show (contract and
 * the reasoning in rc_vindex.h).
 *
 * The tree is a segment tree over [0, RC_VINDEX_SPAN), built from pointers
 * on demand: a node covers [a, b) and its children [a, mid) and [mid, b). An
 * item [s, e) is linked at its canonical nodes, the highest nodes whose
 * range lies inside [s, e) (at most two per level); exactly one of them
 * contains any position p in [s, e), and each lies on the path from the
 * root to p's leaf, so the stabbing walk down that path meets every item
 * containing p once. Each node also counts the items starting and ending
 * (end - 1) inside its range, which lets a query skip empty subtrees and
 * lets rc_vindex_max_end walk straight to the rightmost end.
 *
 * A node lives while something is linked at or counted in it, or it has a
 * child; adding makes the item's links and every node first and links
 * second, so running out of memory leaves the index as it was.
 *
 * Few items (list mode) sit in ix->list, singly linked (a removal walks at
 * most RC_VINDEX_SMALL items), with no node and no links; the switches between the modes are at the
 * end (to_tree, to_list).
 */
#include "rc_vindex.h"

#include <stdint.h>
#include <stdlib.h>

struct rc_vindex_node {
    struct rc_vindex_node *kid[2];
    struct rc_vindex_link *cover;   /* items whose canonical nodes include this one */
    struct rc_vindex_link *starts;  /* (leaves) items starting at this position */
    size_t nstart, nend;            /* items starting / ending (end - 1) in this node's range */
};

static int node_empty(const struct rc_vindex_node *n)
{
    return !n->kid[0] && !n->kid[1] && !n->cover && !n->starts && !n->nstart && !n->nend;
}

static void link_push(struct rc_vindex_link **head, struct rc_vindex_link *l, struct rc_vindex_item *it)
{
    l->item = it;
    l->next = *head;
    if (*head)
        (*head)->pprev = &l->next;
    l->pprev = head;
    *head = l;
}

static void link_pop(struct rc_vindex_link *l)
{
    *l->pprev = l->next;
    if (l->next)
        l->next->pprev = l->pprev;
    l->next = NULL;
    l->pprev = NULL;
}

/* Makes the canonical nodes of [s, e) under *np (covering [a, b)) and the
 * nodes above them. Returns 0 or -1 (out of memory). */
static int grow_cover(struct rc_vindex_node **np, size_t a, size_t b, size_t s, size_t e)
{
    if (e <= a || b <= s)
        return 0;
    if (!*np && !(*np = calloc(1, sizeof **np)))
        return -1;
    if (s <= a && b <= e)
        return 0;
    size_t mid = a + (b - a) / 2;
    if (grow_cover(&(*np)->kid[0], a, mid, s, e) != 0)
        return -1;
    return grow_cover(&(*np)->kid[1], mid, b, s, e);
}

/* Makes the nodes on the path from *np (covering [a, b)) to position p's leaf. */
static int grow_path(struct rc_vindex_node **np, size_t a, size_t b, size_t p)
{
    for (;;) {
        if (!*np && !(*np = calloc(1, sizeof **np)))
            return -1;
        if (b - a == 1)
            return 0;
        size_t mid = a + (b - a) / 2;
        int right = p >= mid;
        np = &(*np)->kid[right];
        if (right)
            a = mid;
        else
            b = mid;
    }
}

/* Frees the empty nodes on the path to p's leaf, bottom up. */
static void prune_path(struct rc_vindex_node **np, size_t a, size_t b, size_t p)
{
    struct rc_vindex_node *n = *np;
    if (!n)
        return;
    if (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (p < mid)
            prune_path(&n->kid[0], a, mid, p);
        else
            prune_path(&n->kid[1], mid, b, p);
    }
    if (node_empty(n)) {
        free(n);
        *np = NULL;
    }
}

/* Frees the empty canonical nodes of [s, e) and the empty nodes above them. */
static void prune_cover(struct rc_vindex_node **np, size_t a, size_t b, size_t s, size_t e)
{
    struct rc_vindex_node *n = *np;
    if (!n || e <= a || b <= s)
        return;
    if (!(s <= a && b <= e)) {
        size_t mid = a + (b - a) / 2;
        prune_cover(&n->kid[0], a, mid, s, e);
        prune_cover(&n->kid[1], mid, b, s, e);
    }
    if (node_empty(n)) {
        free(n);
        *np = NULL;
    }
}

static void prune(struct rc_vindex *ix, size_t s, size_t e)
{
    prune_path(&ix->root, 0, RC_VINDEX_SPAN, s);
    prune_path(&ix->root, 0, RC_VINDEX_SPAN, e - 1);
    prune_cover(&ix->root, 0, RC_VINDEX_SPAN, s, e);
}

/* How many canonical nodes [s, e) has under a node covering [a, b). */
static unsigned cover_count(size_t a, size_t b, size_t s, size_t e)
{
    if (e <= a || b <= s)
        return 0;
    if (s <= a && b <= e)
        return 1;
    size_t mid = a + (b - a) / 2;
    return cover_count(a, mid, s, e) + cover_count(mid, b, s, e);
}

/* Links it at its canonical nodes (all made by grow_cover). */
static void link_cover(struct rc_vindex_node *n, size_t a, size_t b, struct rc_vindex_item *it)
{
    if (it->end <= a || b <= it->start)
        return;
    if (it->start <= a && b <= it->end) {
        link_push(&n->cover, &it->u.links[it->nlinks++], it);
        return;
    }
    size_t mid = a + (b - a) / 2;
    link_cover(n->kid[0], a, mid, it);
    link_cover(n->kid[1], mid, b, it);
}

/* Adds d to the start (or end) count of every node on the path to p; with
 * a start and d > 0, links it at p's leaf (its cover links made). */
static void count_path(struct rc_vindex_node *n, size_t p, int start, int d, struct rc_vindex_item *it)
{
    size_t a = 0, b = RC_VINDEX_SPAN;
    for (;;) {
        size_t *c = start ? &n->nstart : &n->nend;
        *c = d > 0 ? *c + 1 : *c - 1;
        if (b - a == 1)
            break;
        size_t mid = a + (b - a) / 2;
        int right = p >= mid;
        n = n->kid[right];
        if (right)
            a = mid;
        else
            b = mid;
    }
    if (start && d > 0)
        link_push(&n->starts, &it->u.links[it->nlinks], it); /* (after the cover links) */
}

void rc_vindex_init(struct rc_vindex *ix)
{
    ix->root = NULL;
    ix->count = 0;
    ix->tree = 0;
}

/* Puts it ([it->start, it->end), set) in the tree. Returns 0 or -1 (out of
 * memory: the tree is as it was). */
static int tree_add(struct rc_vindex *ix, struct rc_vindex_item *it)
{
    size_t s = it->start, e = it->end;
    /* its cover links and its start link, exactly */
    if (!(it->u.links = malloc((cover_count(0, RC_VINDEX_SPAN, s, e) + 1) * sizeof *it->u.links)))
        return -1;
    if (grow_cover(&ix->root, 0, RC_VINDEX_SPAN, s, e) != 0 || grow_path(&ix->root, 0, RC_VINDEX_SPAN, s) != 0 ||
        grow_path(&ix->root, 0, RC_VINDEX_SPAN, e - 1) != 0) {
        prune(ix, s, e);
        free(it->u.links);
        it->u.links = NULL;
        return -1;
    }
    it->nlinks = 0;
    link_cover(ix->root, 0, RC_VINDEX_SPAN, it);
    count_path(ix->root, s, 1, 1, it);
    count_path(ix->root, e - 1, 0, 1, it);
    return 0;
}

static void tree_remove(struct rc_vindex *ix, struct rc_vindex_item *it)
{
    for (unsigned i = 0; i <= it->nlinks; i++)
        link_pop(&it->u.links[i]); /* (the cover links and the start link) */
    count_path(ix->root, it->start, 1, -1, it);
    count_path(ix->root, it->end - 1, 0, -1, it);
    prune(ix, it->start, it->end);
    free(it->u.links);
    it->u.links = NULL;
    it->nlinks = 0;
}

/* Calls fn for every item in the tree under n, once each (through the
 * start lists: every item is in exactly one); fn may free the item's links
 * without unlinking them (rc_vindex_free), or take nothing (to_list). */
static void tree_each(struct rc_vindex_node *n, void (*fn)(struct rc_vindex_item *, void *), void *arg)
{
    if (!n || !n->nstart)
        return;
    for (struct rc_vindex_link *l = n->starts, *next; l; l = next) {
        next = l->next; /* (fn may free the links, l among them) */
        fn(l->item, arg);
    }
    tree_each(n->kid[0], fn, arg);
    tree_each(n->kid[1], fn, arg);
}

/* The items of a switch between the modes (at most RC_VINDEX_SMALL + 1). */
struct batch {
    struct rc_vindex_item *it[RC_VINDEX_SMALL + 1];
    size_t n;
};

static void batch_put(struct rc_vindex_item *it, void *arg)
{
    struct batch *bt = arg;
    bt->it[bt->n++] = it;
}

static void list_push(struct rc_vindex *ix, struct rc_vindex_item *it)
{
    it->u.next = ix->list;
    ix->list = it;
}

/* List mode to tree mode, with it ([it->start, it->end) set) added. Returns
 * 0 or -1 (out of memory: back in list mode, as it was, without it). */
static int to_tree(struct rc_vindex *ix, struct rc_vindex_item *it)
{
    struct batch bt = {.n = 0};
    for (struct rc_vindex_item *x = ix->list; x; x = x->u.next)
        batch_put(x, &bt);
    batch_put(it, &bt);
    ix->list = NULL;
    for (size_t i = 0; i < bt.n; i++) {
        if (tree_add(ix, bt.it[i]) == 0)
            continue;
        while (i > 0)
            tree_remove(ix, bt.it[--i]);
        for (size_t j = bt.n - 1; j-- > 0;)
            list_push(ix, bt.it[j]); /* (in the order it was) */
        it->u.next = NULL;
        return -1;
    }
    ix->tree = 1;
    return 0;
}

/* Tree mode to list mode (the few items left; frees every node and link,
 * so it needs no memory). */
static void to_list(struct rc_vindex *ix)
{
    struct batch bt = {.n = 0};
    tree_each(ix->root, batch_put, &bt);
    for (size_t i = 0; i < bt.n; i++)
        tree_remove(ix, bt.it[i]);
    ix->tree = 0;
    ix->list = NULL; /* (root, NULL by now: the same word) */
    for (size_t i = 0; i < bt.n; i++)
        list_push(ix, bt.it[i]);
}

static void mark_out(struct rc_vindex_item *it, void *arg)
{
    (void)arg;
    free(it->u.links);
    it->u.links = NULL;
    it->nlinks = 0;
    it->in = 0;
}

static void free_nodes(struct rc_vindex_node *n)
{
    if (!n)
        return;
    free_nodes(n->kid[0]);
    free_nodes(n->kid[1]);
    free(n);
}

void rc_vindex_free(struct rc_vindex *ix)
{
    if (ix->tree) {
        tree_each(ix->root, mark_out, NULL);
        free_nodes(ix->root);
    } else {
        for (struct rc_vindex_item *x = ix->list, *next; x; x = next) {
            next = x->u.next;
            x->u.next = NULL;
            x->in = 0;
        }
    }
    rc_vindex_init(ix);
}

int rc_vindex_add(struct rc_vindex *ix, struct rc_vindex_item *it, size_t start, size_t end)
{
    if (it->in)
        return -1;
    if (start > RC_VINDEX_SPAN - 1)
        start = RC_VINDEX_SPAN - 1;
    if (end > RC_VINDEX_SPAN)
        end = RC_VINDEX_SPAN;
    if (end <= start)
        end = start + 1;
    it->start = (unsigned short)start;
    it->end = (unsigned short)end;
    it->nlinks = 0;
    it->u.next = NULL;
    if (ix->tree) {
        if (tree_add(ix, it) != 0)
            return -1;
    } else if (ix->count >= RC_VINDEX_SMALL) {
        if (to_tree(ix, it) != 0)
            return -1;
    } else {
        list_push(ix, it);
    }
    it->in = 1;
    ix->count++;
    return 0;
}

void rc_vindex_remove(struct rc_vindex *ix, struct rc_vindex_item *it)
{
    if (!it->in)
        return;
    if (ix->tree) {
        tree_remove(ix, it);
    } else {
        struct rc_vindex_item **p = &ix->list;
        while (*p != it)
            p = &(*p)->u.next;
        *p = it->u.next;
        it->u.next = NULL;
    }
    it->in = 0;
    ix->count--;
    if (ix->tree && ix->count <= RC_VINDEX_SMALL_LOW)
        to_list(ix);
}

static size_t report(const struct rc_vindex_link *l, rc_vindex_visit_fn *fn, void *arg)
{
    size_t n = 0;
    while (l) {
        const struct rc_vindex_link *next = l->next;
        fn(l->item, arg);
        n++;
        l = next;
    }
    return n;
}

/* Reports the items starting in [s, e) under n (covering [a, b)). */
static size_t starts_in(const struct rc_vindex_node *n, size_t a, size_t b, size_t s, size_t e,
                        rc_vindex_visit_fn *fn, void *arg)
{
    if (!n || !n->nstart || e <= a || b <= s)
        return 0;
    if (b - a == 1)
        return report(n->starts, fn, arg);
    size_t mid = a + (b - a) / 2;
    return starts_in(n->kid[0], a, mid, s, e, fn, arg) + starts_in(n->kid[1], mid, b, s, e, fn, arg);
}

size_t rc_vindex_each(const struct rc_vindex *ix, size_t lo, size_t hi, rc_vindex_visit_fn *fn, void *arg)
{
    if (lo >= RC_VINDEX_SPAN || hi < lo)
        return 0;
    if (hi > RC_VINDEX_SPAN - 1)
        hi = RC_VINDEX_SPAN - 1;
    size_t count = 0, a = 0, b = RC_VINDEX_SPAN;
    if (!ix->tree) {
        /* few items: the ones that meet [lo, hi], and only those */
        for (struct rc_vindex_item *x = ix->list, *next; x; x = next) {
            next = x->u.next;
            if (x->start <= hi && x->end > lo) {
                fn(x, arg);
                count++;
            }
        }
        return count;
    }
    /* the items containing lo: on the path to its leaf */
    for (const struct rc_vindex_node *n = ix->root; n;) {
        count += report(n->cover, fn, arg);
        if (b - a == 1)
            break;
        size_t mid = a + (b - a) / 2;
        int right = lo >= mid;
        n = n->kid[right];
        if (right)
            a = mid;
        else
            b = mid;
    }
    /* the items starting after lo, up to hi */
    return count + starts_in(ix->root, 0, RC_VINDEX_SPAN, lo + 1, hi + 1, fn, arg);
}

size_t rc_vindex_max_end(const struct rc_vindex *ix)
{
    if (!ix->tree) {
        size_t max = 0;
        for (const struct rc_vindex_item *x = ix->list; x; x = x->u.next)
            if (x->end > max)
                max = x->end;
        return max;
    }
    const struct rc_vindex_node *n = ix->root;
    if (!n || !n->nend)
        return 0;
    size_t a = 0, b = RC_VINDEX_SPAN;
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (n->kid[1] && n->kid[1]->nend) {
            n = n->kid[1];
            a = mid;
        } else {
            n = n->kid[0];
            b = mid;
        }
    }
    return a + 1;
}
