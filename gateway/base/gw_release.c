/* gw_release.c - freeing an owner of libuv handles after their close
 * callbacks and after its last hold (gw_release.h). */
#include "base/gw_release.h"

#include <stdlib.h>

#include <uv.h>

void gw_release_init(struct gw_release *rel, gw_release_free_cb *free_cb, gw_release_busy_cb *busy_cb)
{
    rel->holds = 0;
    rel->stopping = 0;
    rel->free_cb = free_cb;
    rel->busy_cb = busy_cb;
}

void gw_release_hold(struct gw_release *rel)
{
    rel->holds++;
}

int gw_release_check(struct gw_release *rel)
{
    if (!rel->stopping || rel->holds > 0 || (rel->busy_cb && rel->busy_cb(rel)))
        return 0;
    rel->free_cb(rel);
    return 1;
}

int gw_release_drop(struct gw_release *rel)
{
    rel->holds--;
    return gw_release_check(rel);
}

int gw_release_stop(struct gw_release *rel)
{
    rel->stopping = 1;
    return gw_release_check(rel);
}

static void on_closed(uv_handle_t *h)
{
    gw_release_drop(h->data);
}

static void on_closed_free(uv_handle_t *h)
{
    struct gw_release *rel = h->data;
    free(h);
    gw_release_drop(rel);
}

void gw_release_close(struct gw_release *rel, uv_handle_t *h)
{
    h->data = rel;
    uv_close(h, on_closed);
}

void gw_release_close_free(struct gw_release *rel, uv_handle_t *h)
{
    h->data = rel;
    uv_close(h, on_closed_free);
}
