/* gw_window.c - the window of rows a read gives (gw_read.h): freeing and
 * copying it, filling it from a read (head, rows with decoded composite
 * scores, shared places), and handing its rows to the encoders in place.
 * Apart from gw_read.c so that both read paths (Redis, store/gw_read.c; the
 * archive, store/gw_archive_read.c) use it without calling each other. */
#include "store/gw_read.h"

#include <stdlib.h>
#include <string.h>

#include "rc_codec.h"
#include "rc_err.h"
#include "rc_places.h"
#include "rc_score.h"
#include "store/gw_profile.h"

void gw_window_free(struct gw_window *w)
{
    if (!w)
        return;
    if (w->holds) {
        w->holds--; /* (a window borrowing from it still needs it) */
        return;
    }
    for (size_t i = 0; i < w->n && !w->base; i++) {
        if (!w->members)
            free(w->rows[i].member);
        gw_profile_unref(w->rows[i].profile);
    }
    free(w->members);
    free(w->rows); /* (row_id too: same allocation) */
    free(w->shard_seq);
    free(w->listed_seq);
    gw_window_free(w->base);
    free(w);
}

struct gw_window *gw_window_hold(struct gw_window *w)
{
    w->holds++;
    return w;
}

struct gw_window *gw_window_borrowing(struct gw_window *base, size_t n, size_t **row_ids)
{
    _Static_assert(sizeof(struct rc_row) % _Alignof(size_t) == 0, "row ids follow the rows");
    struct gw_window *w = calloc(1, sizeof *w);
    struct rc_row *rows = n <= SIZE_MAX / (sizeof *rows + sizeof **row_ids)
                              ? malloc((n ? n : 1) * (sizeof *rows + sizeof **row_ids))
                              : NULL;
    if (!w || !rows) {
        free(w);
        free(rows);
        return NULL;
    }
    w->seq = base->seq;
    w->total = base->total;
    w->first_rank = base->first_rank;
    memcpy(w->epoch, base->epoch, sizeof w->epoch);
    w->freeze = base->freeze;
    w->found = base->found;
    w->rows = rows;
    w->row_id = *row_ids = (size_t *)(void *)(rows + n);
    w->base = gw_window_hold(base);
    return w;
}

void gw_window_truncate(struct gw_window *w, size_t n)
{
    for (size_t i = n; i < w->n && !w->base; i++) { /* (borrowed rows are base's to free) */
        if (!w->members)
            free(w->rows[i].member);
        gw_profile_unref(w->rows[i].profile);
    }
    if (n < w->n)
        w->n = n;
}

int gw_window_copy(struct gw_window *dst, const struct gw_window *src)
{
    *dst = *src;
    dst->shard_seq = NULL;
    dst->listed_seq = NULL;
    dst->nshards = 0;
    dst->members = NULL; /* each copied member is the row's own */
    dst->base = NULL;    /* (and so is each profile reference) */
    dst->row_id = NULL;
    dst->holds = 0;
    dst->rows = calloc(src->n ? src->n : 1, sizeof *dst->rows);
    if (!dst->rows)
        return -1;
    if (src->shard_seq && (dst->shard_seq = malloc(src->nshards * sizeof *dst->shard_seq)) != NULL) {
        memcpy(dst->shard_seq, src->shard_seq, src->nshards * sizeof *dst->shard_seq);
        dst->nshards = src->nshards;
        if (src->listed_seq && (dst->listed_seq = malloc(src->nshards * sizeof *dst->listed_seq)) != NULL)
            memcpy(dst->listed_seq, src->listed_seq, src->nshards * sizeof *dst->listed_seq);
    }
    for (size_t i = 0; i < src->n; i++) {
        dst->rows[i] = src->rows[i];
        dst->rows[i].member = strdup(src->rows[i].member);
        gw_profile_ref(dst->rows[i].profile);
        if (!dst->rows[i].member) {
            dst->n = i + 1;
            return -1;
        }
    }
    return 0;
}

void gw_window_set_head(struct gw_window *w, const struct rc_read_head *head)
{
    w->seq = head->seq;
    w->total = head->total;
    w->first_rank = head->first_rank;
    memcpy(w->epoch, head->epoch, sizeof w->epoch);
    w->freeze = head->freeze;
}

int gw_window_set_rows(const struct rc_board *b, struct gw_window *w, const struct rc_read_row *rows, size_t n)
{
    w->rows = calloc(n ? n : 1, sizeof *w->rows);
    for (size_t i = 0; w->rows && i < n; i++) {
        struct rc_row *row = &w->rows[w->n];
        if (!(row->member = strdup(rows[i].member)))
            break;
        w->n++;
        row->c = rows[i].c;
        gw_window_decode_score(b, row->c, &row->score, row->fields, &row->nfields);
    }
    return w->rows && w->n == n ? 0 : RC_E_INTERNAL;
}

static int by_rank(const void *a, const void *b)
{
    const struct rc_row *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

void gw_window_sort_by_rank(struct gw_window *w)
{
    if (w->n > 1) /* (rows may be NULL while none: qsort's pointer must not be) */
        qsort(w->rows, w->n, sizeof *w->rows, by_rank);
}

int gw_window_set_ranked_rows(const struct rc_board *b, struct gw_window *w, const struct rc_read_row *rows,
                              const int64_t *ranks, size_t n)
{
    int rc = gw_window_set_rows(b, w, rows, n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        w->rows[i].rank = ranks[i];
    gw_window_sort_by_rank(w);
    return 0;
}

int gw_window_set_mirror_rows(const struct rc_board *b, struct gw_window *w, const struct rc_mirror_row *rows,
                              size_t n)
{
    size_t bytes = 1;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(rows[i].member) + 1;
    char *at = w->members = malloc(bytes);
    if (!at)
        return RC_E_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        struct rc_row *r = &w->rows[i];
        size_t len = strlen(rows[i].member) + 1;
        r->member = memcpy(at, rows[i].member, len);
        at += len;
        r->c = rows[i].c;
        gw_window_decode_score(b, r->c, &r->score, r->fields, &r->nfields);
    }
    w->n = n;
    return 0;
}

int gw_window_fill_places(const struct rc_board *b, struct gw_window *w, int64_t above, int next_tied)
{
    double *c = malloc((w->n ? w->n : 1) * sizeof *c);
    int64_t *place = malloc((w->n ? w->n : 1) * sizeof *place);
    unsigned char *tied = malloc(w->n ? w->n : 1);
    int rc = c && place && tied ? 0 : RC_E_INTERNAL;
    if (!rc) {
        for (size_t i = 0; i < w->n; i++)
            c[i] = w->rows[i].c;
        rc_places_fill(rc_places_unit(b), c, w->n, w->first_rank, above, next_tied, place, tied);
        for (size_t i = 0; i < w->n; i++) {
            w->rows[i].place = place[i];
            w->rows[i].tied = tied[i];
        }
    }
    free(c);
    free(place);
    free(tied);
    return rc;
}

/* Kept for its callers (fan-out); the decoding itself is core/rc_score. */
void gw_window_decode_score(const struct rc_board *b, double c, double *score, int64_t *fields, unsigned *nfields)
{
    rc_score_decode(&b->layout, b->decay.kind, c, score, fields, nfields);
}

struct rc_rows_out gw_window_rows_out(const struct gw_window *w, const struct rc_board *b)
{
    return (struct rc_rows_out){.rows = w->rows, .n = w->n, .first_rank = w->first_rank, .layout = &b->layout};
}
