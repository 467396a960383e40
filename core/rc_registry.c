/* rc_registry.c - boards and shared views (see rc_registry.h). */
#include "rc_registry.h"

#include <stdio.h>
#include <string.h>

#include "rc_err.h"
#include "rc_members.h"

void rc_registry_init(struct rc_registry *r, struct rc_hash_key key)
{
    memset(r, 0, sizeof *r);
    r->key = key;
    rc_hmap_init(&r->boards, 0);
    rc_hmap_init(&r->views, 0);
}

void rc_registry_free(struct rc_registry *r)
{
    rc_hmap_free(&r->boards);
    rc_hmap_free(&r->views);
}

int rc_registry_follow_mode(int board_has_periods, const char *requested_period)
{
    if (!board_has_periods)
        return RC_FOLLOW_NONE;
    if (!requested_period || !requested_period[0] || strcmp(requested_period, "current") == 0)
        return RC_FOLLOW_CURRENT;
    if (strcmp(requested_period, "previous") == 0)
        return RC_FOLLOW_PREVIOUS;
    return RC_FOLLOW_NONE;
}

void rc_registry_view_normalize(struct rc_view *out, const struct rc_view *in)
{
    *out = *in;
    if (out->kind == RC_VIEW_TOP)
        out->offset = 0;
}

uint64_t rc_registry_view_rows(const struct rc_view *v)
{
    switch (v->kind) {
    case RC_VIEW_TOP:
    case RC_VIEW_PAGE:
        return v->limit;
    case RC_VIEW_AROUND:
        return 2 * (uint64_t)v->radius + 1;
    case RC_VIEW_MEMBERS:
        return v->nmembers;
    case RC_VIEW_TEAM:
        return RC_MEMBERS_MAX;
    default:
        return 0;
    }
}

int rc_registry_view_same(const struct rc_view *a, const struct rc_view *b)
{
    return a->kind == b->kind && a->offset == b->offset && a->limit == b->limit && a->radius == b->radius &&
           a->places == b->places && a->max_rate == b->max_rate && a->live == b->live && strcmp(a->around, b->around) == 0 &&
           a->nmembers == b->nmembers && a->members_len == b->members_len &&
           (a->members_len == 0 || memcmp(a->members, b->members, a->members_len) == 0);
}

/* ---- boards ----------------------------------------------------------------- */

struct board_key {
    const char *name, *period;
};

static uint64_t board_hash(const struct rc_registry *r, const char *name, const char *period)
{
    /* name and period with a separator no name may contain */
    char buf[RC_BOARD_MAX + 1 + RC_PERIOD_ID_MAX];
    size_t n = strnlen(name, RC_BOARD_MAX), p = strnlen(period, RC_PERIOD_ID_MAX - 1);
    memcpy(buf, name, n);
    buf[n] = '|';
    memcpy(buf + n + 1, period, p);
    return rc_hmap_hash(&r->key, buf, n + 1 + p);
}

static int board_eq(const struct rc_hnode *node, const void *key)
{
    const struct rc_reg_board *b = (const struct rc_reg_board *)node;
    const struct board_key *k = key;
    return strcmp(b->name, k->name) == 0 && strcmp(b->period, k->period) == 0;
}

struct rc_reg_board *rc_registry_board_find(const struct rc_registry *r, const char *name, const char *period)
{
    struct board_key k = {name, period};
    return (struct rc_reg_board *)rc_hmap_find(&r->boards, board_hash(r, name, period), board_eq, &k);
}

int rc_registry_board_add(struct rc_registry *r, struct rc_reg_board *b, const char *name, const char *period)
{
    size_t n = strlen(name), p = strlen(period);
    if (n >= sizeof b->name || p >= sizeof b->period)
        return RC_E_TOO_LARGE;
    memcpy(b->name, name, n + 1);
    memcpy(b->period, period, p + 1);
    b->views = NULL;
    b->nviews = 0;
    return rc_hmap_insert(&r->boards, &b->node, board_hash(r, name, period));
}

void rc_registry_board_remove(struct rc_registry *r, struct rc_reg_board *b)
{
    rc_hmap_remove(&r->boards, &b->node);
}

/* ---- views ------------------------------------------------------------------ */

struct view_key {
    const struct rc_reg_board *board;
    const struct rc_view *spec;
    int follows;
};

static uint64_t view_hash(const struct rc_registry *r, const struct view_key *k)
{
    unsigned char buf[sizeof k->board + 6 * sizeof(uint32_t) + RC_MEMBER_MAX + 1];
    uint32_t ints[6] = {(uint32_t)k->spec->kind, k->spec->offset, k->spec->limit, k->spec->radius,
                        (uint32_t)k->follows, k->spec->max_rate};
    size_t n = strnlen(k->spec->around, RC_MEMBER_MAX);
    memcpy(buf, &k->board, sizeof k->board);
    memcpy(buf + sizeof k->board, ints, sizeof ints);
    memcpy(buf + sizeof k->board + sizeof ints, k->spec->around, n);
    uint64_t h = rc_hmap_hash(&r->key, buf, sizeof k->board + sizeof ints + n);
    if (k->spec->members_len) /* a member list: its names, in the order asked */
        h ^= rc_hmap_hash(&r->key, k->spec->members, k->spec->members_len) * 0x9e3779b97f4a7c15ull;
    return h;
}

static int view_eq(const struct rc_hnode *node, const void *key)
{
    const struct rc_reg_view *v = (const struct rc_reg_view *)node;
    const struct view_key *k = key;
    return v->board == k->board && v->follows == k->follows && rc_registry_view_same(&v->spec, k->spec);
}

struct rc_reg_view *rc_registry_view_find(const struct rc_registry *r, const struct rc_reg_board *b,
                                          const struct rc_view *spec, int follows)
{
    struct rc_view norm;
    rc_registry_view_normalize(&norm, spec);
    struct view_key k = {b, &norm, follows};
    return (struct rc_reg_view *)rc_hmap_find(&r->views, view_hash(r, &k), view_eq, &k);
}

/* Links v (v->board, spec and follows set) into its board and the table. */
static int view_link(struct rc_registry *r, struct rc_reg_view *v)
{
    struct rc_reg_board *b = v->board;
    struct view_key k = {b, &v->spec, v->follows};
    int rc = rc_hmap_insert(&r->views, &v->node, view_hash(r, &k)); /* failed: remove finds nothing */
    v->prev = NULL;
    v->next = b->views;
    if (b->views)
        b->views->prev = v;
    b->views = v;
    b->nviews++;
    return rc;
}

int rc_registry_view_add(struct rc_registry *r, struct rc_reg_view *v, struct rc_reg_board *b,
                         const struct rc_view *spec, int follows)
{
    rc_registry_view_normalize(&v->spec, spec);
    v->follows = follows;
    v->board = b;
    v->viewers = 0;
    snprintf(v->id, sizeof v->id, "v%lu", ++r->next_id);
    return view_link(r, v);
}

void rc_registry_view_remove(struct rc_registry *r, struct rc_reg_view *v)
{
    struct rc_reg_board *b = v->board;
    if (!b)
        return;
    rc_hmap_remove(&r->views, &v->node);
    if (v->prev)
        v->prev->next = v->next;
    else
        b->views = v->next;
    if (v->next)
        v->next->prev = v->prev;
    v->next = v->prev = NULL;
    v->board = NULL;
    b->nviews--;
}

int rc_registry_view_move(struct rc_registry *r, struct rc_reg_view *v, struct rc_reg_board *nb)
{
    rc_registry_view_remove(r, v);
    v->board = nb;
    return view_link(r, v);
}
