/* gw_release.h - the one release idiom of an object that owns libuv handles
 * and is held by work in flight (STYLE.md, libuv: "memory of a handle freed
 * only after its close callback"). The owner embeds a struct gw_release and
 * counts in it every open handle and every other hold (a command sent and
 * not answered, a lookup running); it asks to go with gw_release_stop, and
 * its free callback runs once, when it asked and the last hold is given back
 * (and its busy callback, if any, says nothing else holds it).
 *
 * Used by redis/gw_node_link (timers, a lookup, two hiredis contexts),
 * jobs/gw_webhook_http (libcurl's polls and timer) and jobs/gw_job (the
 * background jobs' timers and commands). */
#ifndef GW_RELEASE_H
#define GW_RELEASE_H

#include <uv.h>

struct gw_release;
/* Frees the owner (which embeds rel); called once. */
typedef void gw_release_free_cb(struct gw_release *rel);
/* 1 while the owner is held by something the count does not see (e.g. a
 * hiredis context that still has to call back), else 0. */
typedef int gw_release_busy_cb(const struct gw_release *rel);

struct gw_release {
    unsigned holds;               /* open handles and other holds */
    int stopping;                 /* the owner asked to go */
    gw_release_free_cb *free_cb;
    gw_release_busy_cb *busy_cb;  /* NULL: only the count holds it */
};

void gw_release_init(struct gw_release *rel, gw_release_free_cb *free_cb, gw_release_busy_cb *busy_cb);

/* One more hold (a handle opened, a command sent). */
void gw_release_hold(struct gw_release *rel);

/* Gives a hold back. Returns 1 when that freed the owner (touch nothing of
 * it any more), else 0. */
int gw_release_drop(struct gw_release *rel);

/* The owner asks to go: freed now when nothing holds it (returns 1), else
 * by the last gw_release_drop or gw_release_check. */
int gw_release_stop(struct gw_release *rel);

/* After the busy callback's answer may have changed: frees the owner when it
 * is stopping and nothing holds it. Returns 1 when freed. */
int gw_release_check(struct gw_release *rel);

/* Closes h, which holds one hold of rel, and gives the hold back in its close
 * callback (h->data is rel from now on). */
void gw_release_close(struct gw_release *rel, uv_handle_t *h);

/* The same, and frees h in its close callback (h is the start of a block
 * from malloc). */
void gw_release_close_free(struct gw_release *rel, uv_handle_t *h);

#endif
