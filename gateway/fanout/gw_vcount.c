/* gw_vcount.c - the table of viewer counts, one per board name (struct
 * gw_vcount): found by name, tied to the live boards of that name, freed
 * when nothing needs it any more. What the counts are and how they travel
 * through Redis is gw_viewers.c. */
#include "fanout/gw_vcount.h"

#include <uv.h>

#include "fanout/gw_fanout_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "rc_err.h"
#include "rc_lua.h"

static int vc_eq(const struct rc_hnode *n, const void *key)
{
    return strcmp(GW_FO_CONTAINER(n, struct gw_vcount, node)->name, key) == 0;
}

static uint64_t name_hash(const struct gw_fanout *f, const char *name)
{
    return rc_hmap_hash(&f->vkey, name, strlen(name));
}

struct gw_vcount *gw_vcount_find(const struct gw_fanout *f, const char *name)
{
    struct rc_hnode *n = rc_hmap_find(&f->vmap, name_hash(f, name), vc_eq, name);
    return n ? GW_FO_CONTAINER(n, struct gw_vcount, node) : NULL;
}

void gw_vcount_init(struct gw_fanout *f)
{
    uint64_t seed[4] = {0, 0, 0, 0};
    if (uv_random(NULL, NULL, seed, sizeof seed, 0, NULL) != 0) {
        seed[0] = (uint64_t)gw_clock_mono_us();
        seed[1] = (uint64_t)gw_now_ms(f->app);
        seed[2] = (uint64_t)uv_os_getpid() << 20 ^ seed[0];
        seed[3] = seed[1] ^ (uint64_t)(uintptr_t)f;
    }
    f->vkey = (struct rc_hash_key){seed[0], seed[1]};
    rc_hmap_init(&f->vmap, 16);
    snprintf(f->vid, sizeof f->vid, "%016" PRIx64 "%016" PRIx64, seed[2], seed[3]);
    gw_script_init(&f->vscript, rc_lua_viewers);
}

static void vc_free(struct gw_fanout *f, struct gw_vcount *vc)
{
    if (f->vcursor == vc)
        f->vcursor = vc->next;
    rc_hmap_remove(&f->vmap, &vc->node);
    if (vc->prev)
        vc->prev->next = vc->next;
    else
        f->vall = vc->next;
    if (vc->next)
        vc->next->prev = vc->prev;
    free(vc);
}

/* Frees vc when nothing needs it any more. */
void gw_vcount_maybe_free(struct gw_fanout *f, struct gw_vcount *vc)
{
    if (!vc->boards && !vc->inflight && (vc->published == 0 || f->vstopping))
        vc_free(f, vc);
}

void gw_vcount_free(struct gw_fanout *f)
{
    while (f->vall)
        vc_free(f, f->vall);
    rc_hmap_free(&f->vmap);
}

int gw_vcount_attach(struct gw_fanout *f, struct gw_board *b)
{
    struct gw_vcount *vc = gw_vcount_find(f, b->r.name);
    if (!vc) {
        vc = calloc(1, sizeof *vc);
        if (!vc)
            return RC_E_INTERNAL;
        snprintf(vc->name, sizeof vc->name, "%s", b->r.name);
        if (rc_hmap_insert(&f->vmap, &vc->node, name_hash(f, vc->name)) != 0) {
            free(vc);
            return RC_E_INTERNAL;
        }
        vc->next = f->vall;
        if (f->vall)
            f->vall->prev = vc;
        f->vall = vc;
    }
    b->vc = vc;
    b->vcprev = NULL;
    b->vcnext = vc->boards;
    if (vc->boards)
        vc->boards->vcprev = b;
    vc->boards = b;
    return 0;
}

void gw_vcount_detach(struct gw_fanout *f, struct gw_board *b)
{
    struct gw_vcount *vc = b->vc;
    if (!vc)
        return;
    if (b->vcprev)
        b->vcprev->vcnext = b->vcnext;
    else
        vc->boards = b->vcnext;
    if (b->vcnext)
        b->vcnext->vcprev = b->vcprev;
    b->vc = NULL;
    b->vcnext = b->vcprev = NULL;
    gw_vcount_maybe_free(f, vc);
}

int64_t gw_vcount_shown(const struct gw_board *b)
{
    return b->vc ? b->vc->others + b->vc->local : 0;
}
