/* gw_read_past.c - a read of a past period whose keys are gone from Redis
 * (expired `keep` periods after it ended) answered from the archive in the
 * same shape (docs/periods.md, "Reading periods"). Shared by gw_read.c and
 * gw_read_shard.c: a sharded board's archive holds the merged standings
 * under the board's own name. */
#include <stdlib.h>
#include <string.h>

#include "store/gw_archive_read.h"
#include "store/gw_read_int.h"
#include "store/gw_store.h"
#include "rc_err.h"
#include "rc_period.h"

int gw_read_past_and_gone(const struct gw_store *s, const struct rc_board *b, const char *period,
                          const struct gw_window *w)
{
    struct rc_period now;
    if (b->period.kind == RC_PERIOD_NONE || w->seq != 0 || w->total != 0)
        return 0;
    return rc_period_at(&b->period, gw_store_now_ms(s), &now) == 0 && strcmp(now.id, period) != 0;
}

struct fallback {
    struct gw_window *empty; /* what Redis said, for when the archive has nothing */
    gw_read_cb *cb;
    void *privdata;
};

static void on_archive(int code, struct gw_window *w, void *privdata)
{
    struct fallback *fb = privdata;
    if (code == RC_E_NOT_FOUND) {
        fb->cb(0, fb->empty, fb->privdata);
    } else {
        gw_window_free(fb->empty);
        fb->cb(code, w, fb->privdata);
    }
    free(fb);
}

int gw_read_past_try_archive(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                        const struct gw_read_spec *spec, struct gw_window *empty, gw_read_cb *cb, void *privdata)
{
    struct fallback *fb = malloc(sizeof *fb);
    if (!fb)
        return -1;
    *fb = (struct fallback){empty, cb, privdata};
    if (gw_archive_read(s, b, board, period, spec, on_archive, fb) != 0) {
        free(fb);
        return -1;
    }
    return 0;
}
