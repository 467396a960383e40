/* gw_ws_drain.c - pushing lws 4.1 to inflate the rest of a compressed
 * message (gw_ws_drain.h).
 *
 * lws 4.1 inflates a compressed message 1 KiB at a time; what is left after
 * a read is "drained" by forced service, which under libuv runs once per
 * idle turn and then stops (lws_uv_idle stops its idle handle whatever is
 * left): a message inflating past about 3 KiB stalled until some other
 * socket event, however long that took. So while a compressed message is
 * incomplete, an idle handle of ours services that connection again
 * (lws_service_fd with POLLIN, which drains before it reads) until the
 * message is whole. The handle exists only while there is something to
 * push: made at the first push, closed once the list is empty.
 */
#include "serve/gw_ws_drain.h"

#include <uv.h>
#include <libwebsockets.h>


#include <stdlib.h>

#include "gw_app.h"

struct gw_ws_drain {
    uv_idle_t idle;
    struct gw_app *app;
    struct lws **wsi;   /* connections to service again at the next idle turn */
    size_t n, cap;
    int closing;        /* uv_close was called: freed in its callback */
};

static void drain_closed(uv_handle_t *h)
{
    struct gw_ws_drain *d = h->data;
    free(d->wsi);
    free(d);
}

/* Nothing left to push: the handle goes (made again when needed). */
static void drain_release(struct gw_app *app)
{
    struct gw_ws_drain *d = app->ws_drain;
    if (!d || d->n || d->closing)
        return;
    d->closing = 1;
    app->ws_drain = NULL;
    uv_close((uv_handle_t *)&d->idle, drain_closed);
}

static void on_drain_idle(uv_idle_t *h)
{
    struct gw_ws_drain *d = h->data;
    struct gw_app *app = d->app;
    /* Take the list: servicing may add the same connections back. */
    struct lws **list = d->wsi;
    size_t n = d->n;
    d->wsi = NULL;
    d->n = d->cap = 0;
    for (size_t i = 0; i < n; i++) {
        struct lws_pollfd pfd = {lws_get_socket_fd(list[i]), LWS_POLLIN, LWS_POLLIN};
        if (pfd.fd >= 0 && app->lws)
            (void)lws_service_fd(app->lws, &pfd);
    }
    free(list);
    drain_release(app);
}

void gw_ws_drain_push(struct gw_app *app, struct lws *wsi)
{
    struct gw_ws_drain *d = app->ws_drain;
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d)
            return; /* the next socket event drains it instead */
        d->app = app;
        d->idle.data = d;
        uv_idle_init(app->loop, &d->idle);
        uv_idle_start(&d->idle, on_drain_idle);
        app->ws_drain = d;
    }
    for (size_t i = 0; i < d->n; i++)
        if (d->wsi[i] == wsi)
            return;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        struct lws **w = realloc(d->wsi, cap * sizeof *w);
        if (!w)
            return;
        d->wsi = w;
        d->cap = cap;
    }
    d->wsi[d->n++] = wsi;
}

void gw_ws_drain_forget(struct gw_app *app, struct lws *wsi)
{
    struct gw_ws_drain *d = app->ws_drain;
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        if (d->wsi[i] == wsi)
            d->wsi[i--] = d->wsi[--d->n];
    drain_release(app);
}

