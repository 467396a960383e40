/* gw_join.c - the profile join of a window (gw_join.h): one fetch of the
 * missing profiles, then one reference per row. */
#include "store/gw_join.h"

#include <stdlib.h>

#include "store/gw_profile.h"

struct join {
    struct gw_profiles *p;
    struct gw_window *w;
    gw_join_cb *cb;
    void *privdata;
};

void gw_join_attach(struct gw_profiles *p, struct gw_window *w)
{
    for (size_t i = 0; i < w->n; i++) {
        w->rows[i].profile = gw_profile_get(p, w->rows[i].member);
        gw_profile_ref(w->rows[i].profile);
    }
}

static void on_fetched(void *privdata)
{
    struct join *j = privdata;
    gw_join_attach(j->p, j->w);
    j->cb(j->w, j->privdata);
    free(j);
}

void gw_join_profiles(struct gw_profiles *p, struct gw_window *w, gw_join_cb *cb, void *privdata)
{
    struct join *j = malloc(sizeof *j);
    const char **members = malloc((w->n ? w->n : 1) * sizeof *members);
    if (!j || !members) {
        free(j);
        free(members);
        gw_join_attach(p, w);
        cb(w, privdata);
        return;
    }
    *j = (struct join){p, w, cb, privdata};
    for (size_t i = 0; i < w->n; i++)
        members[i] = w->rows[i].member;
    int rc = gw_profile_fetch(p, members, w->n, on_fetched, j);
    free(members);
    if (rc != 0)
        on_fetched(j); /* Redis is down: rows with what the cache holds */
}
