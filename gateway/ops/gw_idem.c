/* gw_idem.c - idempotency records per writer (see gw_idem.h): one entry per
 * writer name in the project's hash table (core/rc_hmap), listed once more
 * for a sweep that looks at one entry per take and forgets it when it
 * counts nothing and no write of it is in flight. */
#include "ops/gw_idem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "rc_hmap.h"
#include "rc_idem.h"

struct gw_idem_writer {
    struct rc_hnode node;               /* in t->map; first member */
    struct gw_idem_writer *next, *prev; /* in t->all, the sweep's ring */
    struct rc_idem_count ct;
    unsigned inflight;                  /* holds not yet kept or given back */
    char name[];
};

struct gw_idem {
    struct rc_hmap map;
    struct rc_hash_key seed;
    struct gw_idem_writer *all;         /* the sweep looks at all, then moves on */
    uint64_t cap;
    int64_t window_ms;
};

static int name_eq(const struct rc_hnode *n, const void *key)
{
    return strcmp(((const struct gw_idem_writer *)(const void *)n)->name, key) == 0;
}

void gw_idem_floor_warning(const struct rc_conf *c, char *out, size_t cap)
{
    uint64_t floor = rc_idem_floor(c);
    out[0] = '\0';
    if (c->idem_max_per_key && c->idem_max_per_key < floor)
        snprintf(out, cap,
                 "[limits] idempotency_max_per_key %u is below the %" PRIu64 " records a key writing at "
                 "key_write_rate %u (burst %u) counts within the longest idempotency_window (%" PRId64
                 " s): such a writer will be refused rate_limited; leave it auto or raise it unless you "
                 "mean to bound Redis memory below what the rate allows",
                 c->idem_max_per_key, floor, c->key_write_rate, c->key_write_burst, rc_idem_window_ms(c) / 1000);
}

struct gw_idem *gw_idem_new(const struct gw_app *app)
{
    char warn[512];
    struct gw_idem *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->seed = (struct rc_hash_key){uv_hrtime(), (uint64_t)(uintptr_t)t};
    t->cap = rc_idem_cap(app->conf);
    t->window_ms = rc_idem_window_ms(app->conf);
    rc_hmap_init(&t->map, 16);
    gw_idem_floor_warning(app->conf, warn, sizeof warn);
    if (warn[0])
        gw_log_warn("%s", warn);
    return t;
}

static void unlink_writer(struct gw_idem *t, struct gw_idem_writer *w)
{
    rc_hmap_remove(&t->map, &w->node);
    if (w->next == w) {
        t->all = NULL;
    } else {
        w->prev->next = w->next;
        w->next->prev = w->prev;
        if (t->all == w)
            t->all = w->next;
    }
    free(w);
}

void gw_idem_free(struct gw_idem *t)
{
    if (!t)
        return;
    while (t->all)
        unlink_writer(t, t->all);
    rc_hmap_free(&t->map);
    free(t);
}

/* One step of the sweep: forget the writer under the hand if it counts
 * nothing, else move the hand on. */
static void sweep_one(struct gw_idem *t, const struct gw_idem_writer *keep, int64_t now_ms)
{
    struct gw_idem_writer *w = t->all;
    if (!w)
        return;
    if (w != keep && w->inflight == 0 && rc_idem_live(&w->ct, t->window_ms, now_ms) == 0)
        unlink_writer(t, w);
    else
        t->all = w->next;
}

static struct gw_idem_writer *writer(struct gw_idem *t, const char *name)
{
    uint64_t h = rc_hmap_hash(&t->seed, name, strlen(name));
    struct gw_idem_writer *w = (struct gw_idem_writer *)(void *)rc_hmap_find(&t->map, h, name_eq, name);
    if (w)
        return w;
    size_t n = strlen(name) + 1;
    if (!(w = calloc(1, sizeof *w + n)))
        return NULL;
    memcpy(w->name, name, n);
    if (rc_hmap_insert(&t->map, &w->node, h) != 0) {
        free(w);
        return NULL;
    }
    if (t->all) {
        w->next = t->all;
        w->prev = t->all->prev;
        w->prev->next = w;
        t->all->prev = w;
    } else {
        w->next = w->prev = w;
        t->all = w;
    }
    return w;
}

int gw_idem_take(struct gw_idem *t, const struct gw_caller *who, int64_t now_ms, struct gw_idem_hold *hold,
                 struct rc_error *err)
{
    char name[RC_JWT_SUB_MAX + RC_KEY_NAME_MAX + 8];
    hold->w = NULL;
    if (!t || !who->key)
        return 0; /* writes need a key or a token: no table, no count (tests without a server) */
    if (who->token)
        snprintf(name, sizeof name, "jwt%s%s", who->token->sub[0] ? ":" : "", who->token->sub);
    else
        snprintf(name, sizeof name, "key:%s", who->key->name);
    struct gw_idem_writer *w = writer(t, name);
    if (!w)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    sweep_one(t, w, now_ms);
    if (!rc_idem_take(&w->ct, t->cap, t->window_ms, now_ms, &hold->slot))
        return rc_err_set(err, RC_E_RATE_LIMITED,
                            "%s '%s' holds %" PRIu64 " idempotency records, its cap (idempotency_max_per_key): "
                            "nothing was written; writes with a req (and to queued boards) are taken again as "
                            "its older records expire (idempotency_window)",
                            who->token ? "token" : "key", who->token ? name : who->key->name, t->cap);
    w->inflight++;
    hold->w = w;
    return 0;
}

void gw_idem_keep(struct gw_idem *t, struct gw_idem_hold *hold)
{
    (void)t;
    if (hold->w)
        hold->w->inflight--;
    hold->w = NULL;
}

void gw_idem_give_back(struct gw_idem *t, struct gw_idem_hold *hold)
{
    (void)t;
    if (hold->w) {
        rc_idem_give_back(&hold->w->ct, hold->slot);
        hold->w->inflight--;
    }
    hold->w = NULL;
}
