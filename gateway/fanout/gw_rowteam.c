/* gw_rowteam.c - the "team" of each row of a board with teams (PROTOCOL
 * v1.2, docs/teams.md): the fan-out keeps the board's membership (member ->
 * team id, from rc:{B|}:tm, then every team message of lua/write.lua's op
 * team) and writes each window's rows' team before it is diffed and sent.
 * Team ids are interned per board (freed with it), so a row's team is a
 * pointer that stays valid in every window the board's views hold, and
 * equal ids are equal pointers. Loading and the messages: gw_rowteam_load.c. */
#include "fanout/gw_rowteam.h"

#include "fanout/gw_fanout_int.h"

#include <stdlib.h>
#include <string.h>

struct gw_rowteam_name {
    struct rc_hnode node;
    struct gw_rowteam_name *all;
    char id[];
};

struct gw_rowteam_entry {
    struct rc_hnode node;
    struct gw_rowteam_entry *all;
    const char *team;
    char member[];
};

static int name_eq(const struct rc_hnode *n, const void *key)
{
    return strcmp(((const struct gw_rowteam_name *)(const void *)n)->id, key) == 0;
}

static int entry_eq(const struct rc_hnode *n, const void *key)
{
    return strcmp(((const struct gw_rowteam_entry *)(const void *)n)->member, key) == 0;
}

struct gw_rowteam *gw_rowteam_new(struct rc_hash_key key)
{
    struct gw_rowteam *rt = calloc(1, sizeof *rt);
    if (!rt)
        return NULL;
    rt->key = key;
    rc_hmap_init(&rt->names, 16);
    rc_hmap_init(&rt->members, 16);
    return rt;
}

void gw_rowteam_clear(struct gw_rowteam *rt)
{
    for (struct gw_rowteam_entry *e = rt->entries, *next; e; e = next) {
        next = e->all;
        free(e);
    }
    rt->entries = NULL;
    rc_hmap_free(&rt->members);
    rc_hmap_init(&rt->members, 16);
}

void gw_rowteam_free(struct gw_rowteam *rt)
{
    if (!rt)
        return;
    gw_rowteam_clear(rt);
    rc_hmap_free(&rt->members);
    for (struct gw_rowteam_name *n = rt->names_all, *next; n; n = next) {
        next = n->all;
        free(n);
    }
    rc_hmap_free(&rt->names);
    free(rt);
}

/* The interned copy of team id t, or NULL (out of memory). */
static const char *intern(struct gw_rowteam *rt, const char *t)
{
    size_t len = strlen(t);
    uint64_t h = rc_hmap_hash(&rt->key, t, len);
    struct gw_rowteam_name *n = (struct gw_rowteam_name *)(void *)rc_hmap_find(&rt->names, h, name_eq, t);
    if (n)
        return n->id;
    if (!(n = malloc(sizeof *n + len + 1)))
        return NULL;
    memcpy(n->id, t, len + 1);
    if (rc_hmap_insert(&rt->names, &n->node, h) != 0) {
        free(n);
        return NULL;
    }
    n->all = rt->names_all;
    rt->names_all = n;
    return n->id;
}

int gw_rowteam_set(struct gw_rowteam *rt, const char *member, const char *team)
{
    size_t len = strlen(member);
    uint64_t h = rc_hmap_hash(&rt->key, member, len);
    struct gw_rowteam_entry *e = (struct gw_rowteam_entry *)(void *)rc_hmap_find(&rt->members, h, entry_eq, member);
    if (!team[0]) {
        if (e)
            e->team = NULL; /* (the entry stays: a member that leaves often joins again) */
        return 0;
    }
    const char *t = intern(rt, team);
    if (!t)
        return RC_E_INTERNAL;
    if (e) {
        e->team = t;
        return 0;
    }
    if (!(e = malloc(sizeof *e + len + 1)))
        return RC_E_INTERNAL;
    memcpy(e->member, member, len + 1);
    e->team = t;
    if (rc_hmap_insert(&rt->members, &e->node, h) != 0) {
        free(e);
        return RC_E_INTERNAL;
    }
    e->all = rt->entries;
    rt->entries = e;
    return 0;
}

const char *gw_rowteam_of(const struct gw_rowteam *rt, const char *member)
{
    if (!rt)
        return NULL;
    const struct gw_rowteam_entry *e = (const struct gw_rowteam_entry *)(const void *)rc_hmap_find(
        &rt->members, rc_hmap_hash(&rt->key, member, strlen(member)), entry_eq, member);
    return e ? e->team : NULL;
}

void gw_rowteam_fill(const struct gw_board *b, struct gw_window *w)
{
    if (!b || !b->rt || !w)
        return;
    for (size_t i = 0; i < w->n; i++)
        w->rows[i].team = gw_rowteam_of(b->rt, w->rows[i].member);
}

int gw_rowteam_ks_pending(const struct gw_rowteam *rt)
{
    return rt && rc_ksteam_pending(&rt->ks);
}

int gw_rowteam_on(const struct gw_rowteam *rt, const char *member, const char *team)
{
    const char *t = gw_rowteam_of(rt, member);
    return t && strcmp(t, team) == 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int gw_rowteam_roster(const struct gw_rowteam *rt, const char *team, char **out, uint32_t *n, uint32_t *len)
{
    size_t k = 0, bytes = 0, cap = 16;
    const char **names = malloc(cap * sizeof *names);
    *out = NULL;
    *n = *len = 0;
    if (!names)
        return RC_E_INTERNAL;
    for (const struct gw_rowteam_entry *e = rt->entries; e; e = e->all) {
        if (!e->team || strcmp(e->team, team) != 0)
            continue;
        if (k == cap) {
            const char **more = realloc(names, 2 * cap * sizeof *names);
            if (!more) {
                free(names);
                return RC_E_INTERNAL;
            }
            names = more;
            cap *= 2;
        }
        names[k++] = e->member;
        bytes += strlen(e->member) + 1;
    }
    if (k) {
        qsort(names, k, sizeof *names, str_cmp);
        char *p = *out = malloc(bytes);
        if (!p) {
            free(names);
            return RC_E_INTERNAL;
        }
        for (size_t i = 0; i < k; i++) {
            size_t l = strlen(names[i]) + 1;
            memcpy(p, names[i], l);
            p += l;
        }
    }
    free(names);
    *n = (uint32_t)k;
    *len = (uint32_t)bytes;
    return 0;
}
