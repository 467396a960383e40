/* gw_view.c - window views (top-N, pages, around): a fresh window is diffed
 * against what the viewers hold, encoded once, and the same refcounted
 * buffer is queued to every viewer; reads of views the mirror does not
 * cover go to Redis (lua/read.lua) here. */
#include "fanout/gw_fanout_int.h"

#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "net/gw_conn.h"
#include "net/gw_msg.h"
#include "rc_diff.h"

static const char *period_field(const struct gw_board *b)
{
    return b->decl->period.kind == RC_PERIOD_NONE ? NULL : b->r.period;
}

/* Encodes window w of view v as a snapshot (id_json may be NULL). */
char *gw_fo_encode_snapshot(const struct gw_view *v, const struct gw_window *w, const char *id_json, int reset)
{
    struct rc_out_row *rows = malloc((w->n ? w->n : 1) * sizeof *rows);
    struct rc_field_value *fv = malloc((w->n ? w->n : 1) * RC_MAX_FIELDS * sizeof *fv);
    char *json = NULL;
    if (rows && fv) {
        gw_window_out_rows(w, v->board->decl, rows, fv);
        json = rc_encode_snapshot_epoch(id_json, v->r.id, v->board->r.name, period_field(v->board), w->seq,
                                        w->total, rows, w->n, reset, w->epoch);
        json = rc_encode_add_viewers(json, gw_fo_viewers_shown(v->board));
    }
    free(rows);
    free(fv);
    return json;
}

/* Queues a snapshot of s's view (its current window) to s, carrying the
 * subscribe's id when s still owes that reply. Returns 0 when it is queued
 * (or cannot be made: out of memory is answered as an error instead), -1
 * when the connection's queue refused it: it stays owed (s->id_json kept)
 * and goes out from gw_fanout_resync_conn as the queue drains. */
int gw_fo_send_owed_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    /* a resume that named another history than the board's: say so */
    int reset = s->has_since && s->has_epoch && strcmp(s->epoch, s->view->last->epoch) != 0;
    struct gw_msg *msg = gw_msg_take(gw_fo_encode_snapshot(s->view, s->view->last, s->id_json, reset));
    if (!msg) {
        gw_conn_reply(s->conn, rc_encode_error(s->id_json, RC_E_INTERNAL, "out of memory"));
    } else if (gw_conn_send_owed(s->conn, msg) != 0) {
        gw_msg_unref(msg);
        return -1;
    } else {
        f->app->metrics.snapshots_sent++;
    }
    gw_msg_unref(msg);
    free(s->id_json);
    s->id_json = NULL;
    s->has_since = 0;
    s->has_epoch = 1;
    memcpy(s->epoch, s->view->last->epoch, sizeof s->epoch);
    return 0;
}

/* Answers a pending subscription with the view's current window; later
 * deltas are diffs from it. A reader too far behind to take it now gets it
 * when its queue drains, deltas held back until then. */
void gw_fo_send_first_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    s->pending = 0;
    s->needs_snapshot = gw_fo_send_owed_snapshot(f, s) != 0;
}

/* Queues msg to every live (non-pending) viewer of v. */
static void broadcast(struct gw_view *v, struct gw_msg *msg, uint64_t *counter)
{
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (s->pending || s->needs_snapshot)
            continue;
        gw_conn_send(s->conn, msg, 1);
        (*counter)++;
    }
}

static uint64_t profile_hash(const struct gw_row *r)
{
    return r->profile ? r->profile->hash : 0;
}

struct name_idx {
    const char *member;
    size_t i;
};

static int name_cmp(const void *a, const void *b)
{
    return strcmp(((const struct name_idx *)a)->member, ((const struct name_idx *)b)->member);
}

/* The delta from old to new as JSON, or NULL when viewers need nothing
 * (*nothing = 1) or on OOM (*nothing = 0). Rows whose profile changed are
 * resent too, although their score did not move. */
static char *encode_delta(const struct gw_view *v, const struct gw_window *old, const struct gw_window *nw,
                          int *nothing)
{
    struct rc_wrow *o = malloc((old->n + 1) * sizeof *o), *n = malloc((nw->n + 1) * sizeof *n);
    struct name_idx *by_name = malloc((old->n + 1) * sizeof *by_name);
    unsigned char *send = calloc(nw->n + 1, 1);
    struct rc_out_row *all = malloc((nw->n + 1) * sizeof *all), *rows = malloc((nw->n + 1) * sizeof *rows);
    struct rc_field_value *fv = malloc((nw->n + 1) * RC_MAX_FIELDS * sizeof *fv);
    const char **removed = malloc((old->n + 1) * sizeof *removed);
    struct rc_delta d = {0};
    char *json = NULL;
    size_t nrows = 0;
    *nothing = 0;
    if (!o || !n || !by_name || !send || !all || !rows || !fv || !removed)
        goto cleanup;
    for (size_t i = 0; i < old->n; i++) {
        o[i] = (struct rc_wrow){old->rows[i].member, old->rows[i].c};
        by_name[i] = (struct name_idx){old->rows[i].member, i};
    }
    for (size_t i = 0; i < nw->n; i++)
        n[i] = (struct rc_wrow){nw->rows[i].member, nw->rows[i].c};
    if (rc_window_diff(o, old->n, n, nw->n, &d) != 0)
        goto cleanup;
    for (size_t i = 0; i < d.nrows; i++)
        send[d.rows[i]] = 1;
    qsort(by_name, old->n, sizeof *by_name, name_cmp);
    for (size_t j = 0; j < nw->n; j++) {
        struct name_idx key = {nw->rows[j].member, 0};
        struct name_idx *hit = send[j] ? NULL : bsearch(&key, by_name, old->n, sizeof *by_name, name_cmp);
        if (hit && profile_hash(&old->rows[hit->i]) != profile_hash(&nw->rows[j]))
            send[j] = 1;
    }
    gw_window_out_rows(nw, v->board->decl, all, fv);
    for (size_t j = 0; j < nw->n; j++)
        if (send[j])
            rows[nrows++] = all[j];
    for (size_t i = 0; i < d.nremoved; i++)
        removed[i] = old->rows[d.removed[i]].member;
    if (nrows == 0 && d.nremoved == 0 && old->total == nw->total) {
        *nothing = 1;
        goto cleanup;
    }
    json = rc_encode_delta(v->r.id, nw->seq, nw->total, rows, nrows, removed, d.nremoved);
cleanup:
    rc_delta_free(&d);
    free(o);
    free(n);
    free(by_name);
    free(send);
    free(all);
    free(rows);
    free(fv);
    free(removed);
    return json;
}

static int windows_equal(const struct gw_window *a, const struct gw_window *b)
{
    if (a->n != b->n || a->first_rank != b->first_rank || a->total != b->total)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->rows[i].c != b->rows[i].c || strcmp(a->rows[i].member, b->rows[i].member) != 0 ||
            profile_hash(&a->rows[i]) != profile_hash(&b->rows[i]))
            return 0;
    return 1;
}

/* A fresh window for v arrived: tell the live viewers what changed, answer the
 * pending ones, and keep it as what they all hold now. */
void gw_fo_view_update(struct gw_fanout *f, struct gw_view *v, struct gw_window *w)
{
    struct gw_metrics *m = &f->app->metrics;
    int64_t shown = gw_fo_viewers_shown(v->board);
    if (v->last) {
        char *json = NULL;
        int nothing = 0;
        /* Epochs: a history that began on a board without one goes on from
         * the empty board the viewers hold (the message names the new
         * epoch); any other change of epoch started the board over. */
        int began = !v->last->epoch[0] && w->epoch[0];
        int over = !began && strcmp(v->last->epoch, w->epoch) != 0;
        if (v->force_snapshot || over || v->r.spec.kind == RC_VIEW_AROUND) {
            if (v->force_snapshot || over || began || !windows_equal(v->last, w))
                json = gw_fo_encode_snapshot(v, w, NULL, over);
            else
                nothing = 1;
            if (json) {
                struct gw_msg *msg = gw_msg_take(json);
                if (msg) {
                    broadcast(v, msg, &m->snapshots_sent);
                    v->viewers_sent = shown;
                }
                gw_msg_unref(msg);
                json = NULL;
            }
        } else {
            json = encode_delta(v, v->last, w, &nothing);
            uint64_t *counter = &m->deltas_sent;
            if (began && nothing) { /* nothing to show, but the epoch to tell */
                json = gw_fo_encode_snapshot(v, w, NULL, 0);
                counter = &m->snapshots_sent;
            } else if (began) {
                json = rc_encode_add_epoch(json, w->epoch);
            }
            if (json && !(began && nothing) && shown != v->viewers_sent)
                json = rc_encode_add_viewers(json, shown); /* deltas carry the count when it changed */
            struct gw_msg *msg = gw_msg_take(json);
            if (msg) {
                broadcast(v, msg, counter);
                v->viewers_sent = shown;
            }
            gw_msg_unref(msg);
        }
        (void)nothing;
        gw_window_free(v->last);
    } else {
        v->viewers_sent = shown; /* what the first snapshots below say */
    }
    v->force_snapshot = 0;
    v->last = w;
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        if (s->pending)
            gw_fo_send_first_snapshot(f, s);
}

void gw_fo_view_tell_viewers(struct gw_fanout *f, struct gw_view *v)
{
    v->viewers_due = 0;
    if (!v->board || !v->last || v->r.spec.kind == RC_VIEW_FEED)
        return;
    int64_t shown = gw_fo_viewers_shown(v->board);
    if (shown == v->viewers_sent)
        return;
    struct gw_msg *msg = gw_msg_take(
        rc_encode_add_viewers(rc_encode_delta(v->r.id, v->last->seq, v->last->total, NULL, 0, NULL, 0), shown));
    if (!msg)
        return; /* out of memory: the next message carries it */
    broadcast(v, msg, &f->app->metrics.deltas_sent);
    gw_msg_unref(msg);
    v->viewers_sent = shown;
}

void gw_fo_fail_pending(struct gw_view *v, int code)
{
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (!s->pending || !s->id_json)
            continue;
        /* Stays subscribed: it gets its snapshot once Redis is back. */
        gw_conn_reply(s->conn, rc_encode_error(s->id_json, code, "Redis is unreachable; the snapshot follows "
                                                                 "when it is back"));
        free(s->id_json);
        s->id_json = NULL;
    }
}

static void on_view_read(int code, struct gw_window *w, void *privdata)
{
    struct gw_view *v = privdata;
    v->reading = 0;
    if (v->dead)
        gw_window_free(w);
    else if (code == 0)
        gw_fo_view_update(v->f, v, w);
    else
        gw_fo_fail_pending(v, code);
    gw_fo_view_unref(v);
}

/* Starts a consistent read of v's window. */
void gw_fo_view_read(struct gw_view *v)
{
    struct gw_board *b = v->board;
    struct gw_app *app = v->f->app;
    if (v->dead || v->reading || v->r.spec.kind == RC_VIEW_FEED || gw_fo_view_uses_mirror(v))
        return;
    struct gw_read_spec spec = {0};
    if (v->r.spec.kind == RC_VIEW_AROUND) {
        spec.kind = GW_READ_AROUND;
        spec.member = v->r.spec.around;
        spec.radius = v->r.spec.radius;
    } else {
        spec.kind = GW_READ_RANGE;
        spec.first = v->r.spec.offset;
        spec.count = v->r.spec.limit;
    }
    v->dirty = 0;
    v->refs++;
    v->reading = 1;
    int rc = gw_read(&app->store, b->decl, b->r.name, b->r.period, &spec, on_view_read, v);
    if (rc) {
        v->reading = 0;
        gw_fo_view_set_dirty(v); /* retried when Redis is back */
        v->refs--;
        gw_fo_fail_pending(v, rc);
    }
}
