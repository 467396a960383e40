/* rc_moment_args.c - read.lua's "moment" call and reply (see
 * rc_moment_args.h). */
#include "rc_moment_args.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_err.h"
#include "rc_keys.h"
#include "rc_members.h"

int rc_moment_args_bounds_text(const struct rc_moment_bound *b, size_t n, char **text)
{
    char *t = malloc(n * 28 + 1), *p = t;
    if (!t)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ' ';
        if (!b[i].has)
            p += sprintf(p, "-");
        else
            p += sprintf(p, "%s%.17g", b[i].inclusive ? "" : "(", b[i].c);
    }
    *p = '\0';
    *text = t;
    return 0;
}

int rc_moment_args_build(const char *board, const char *period, enum rc_order order, const struct rc_moment_req *req,
                         struct rc_moment_args *out)
{
    static const char *const suffix[RC_READ_NKEYS] = {"z", "seq", "log", "epoch", "frz", "fz"};
    static const char *const views[] = {"range", "around", "points", "list", "counts", "near"};
    int by_bound = req->view == RC_MOMENT_COUNTS || req->view == RC_MOMENT_NEAR;
    memset(out, 0, sizeof *out);
    if (req->ntargets < 1 || req->ntargets > RC_MOMENT_TARGETS_MAX ||
        (req->view != RC_MOMENT_POINTS && req->view != RC_MOMENT_COUNTS && req->ntargets != 1) ||
        (unsigned)req->view > RC_MOMENT_NEAR || (req->view == RC_MOMENT_LIST && (!req->members || !req->nmembers)) ||
        (by_bound && !req->bounds) ||
        ((req->view == RC_MOMENT_AROUND || req->view == RC_MOMENT_POINTS) && (!req->member || !req->member[0])) ||
        req->first < 0 || req->count < 0 || req->radius < 0 || req->undo_max < 0 || req->below < 0 ||
        (req->segmented && req->view != RC_MOMENT_POINTS))
        return RC_E_BAD_REQUEST;
    for (int i = 0; i < RC_READ_NKEYS; i++)
        if (rc_keys_board(out->keys[i], RC_KEY_MAX, board, period, suffix[i], NULL))
            return RC_E_INTERNAL;
    size_t n = 9 + req->ntargets;
    out->argv = malloc(n * sizeof *out->argv);
    out->num = malloc((3 + req->ntargets) * sizeof *out->num);
    if (!out->argv || !out->num) {
        rc_moment_args_free(out);
        return RC_E_INTERNAL;
    }
    const char **a = out->argv;
    a[0] = "moment";
    a[1] = order == RC_ORDER_DESC ? "desc" : "asc";
    a[2] = "1"; /* the live set: the rebuild undoes the present */
    a[3] = req->by_time ? "time" : "seq";
    a[4] = req->audience ? "1" : "0";
    a[5] = views[req->view];
    if (req->view == RC_MOMENT_RANGE) {
        snprintf(out->num[0], 32, "%" PRId64, req->first);
        snprintf(out->num[1], 32, "%" PRId64, req->count);
        a[6] = out->num[0];
        a[7] = out->num[1];
    } else if (req->view == RC_MOMENT_LIST) {
        /* member names hold no space (rc_names.h): the script splits on it */
        size_t len;
        if (!(out->list = rc_members_dup(req->members, req->nmembers, &len))) {
            rc_moment_args_free(out);
            return RC_E_INTERNAL;
        }
        for (size_t i = 0; i + 1 < len; i++)
            if (out->list[i] == '\0')
                out->list[i] = ' ';
        a[6] = out->list;
        a[7] = "";
    } else if (by_bound) {
        if (rc_moment_args_bounds_text(req->bounds, req->view == RC_MOMENT_NEAR ? 1 : req->ntargets, &out->list)) {
            rc_moment_args_free(out);
            return RC_E_INTERNAL;
        }
        snprintf(out->num[1], 32, "%" PRId64, req->radius);
        a[6] = out->list;
        a[7] = req->view == RC_MOMENT_NEAR ? out->num[1] : "";
    } else {
        snprintf(out->num[1], 32, "%" PRId64, req->radius);
        a[6] = req->member;
        a[7] = req->view == RC_MOMENT_AROUND ? out->num[1] : "";
        if (req->segmented) {
            snprintf(out->num[0], 32, "%" PRId64, req->below);
            a[7] = out->num[0];
        }
    }
    snprintf(out->num[2], 32, "%" PRId64, req->undo_max);
    a[8] = out->num[2];
    for (size_t i = 0; i < req->ntargets; i++) {
        snprintf(out->num[3 + i], 32, "%" PRId64, req->targets[i]);
        a[9 + i] = out->num[3 + i];
    }
    out->nargv = (unsigned)n;
    return 0;
}

void rc_moment_args_free(struct rc_moment_args *a)
{
    free(a->argv);
    free(a->num);
    free(a->list);
    a->argv = NULL;
    a->num = NULL;
    a->list = NULL;
}

int rc_moment_args_count_item(const struct rc_reply_item *it, int64_t *v)
{
    if (!it->is_int || it->integer < 0)
        return -1;
    *v = it->integer;
    return 0;
}

int rc_moment_args_comp_item(const struct rc_reply_item *it, int *has, double *c)
{
    if (it->is_int) { /* a Lua number the script passed on as it was */
        *has = 1;
        *c = (double)it->integer;
        return 0;
    }
    if (!it->str)
        return -1;
    *has = it->str[0] != '\0';
    if (!*has)
        return 0;
    char *end;
    errno = 0;
    *c = strtod(it->str, &end);
    return *end || !isfinite(*c) ? -1 : 0;
}

int rc_moment_args_parse(const struct rc_reply_item *items, size_t n, enum rc_moment_view view,
                         struct rc_moment_reply *out)
{
    memset(out, 0, sizeof *out);
    if (rc_read_args_head_parse(items, n, &out->head) || n < RC_READ_HEAD + 2)
        return RC_E_INTERNAL;
    size_t i = RC_READ_HEAD;
    const struct rc_reply_item *st = &items[i++];
    if (st->is_int || !st->str || rc_moment_args_count_item(&items[i++], &out->oldest))
        return RC_E_INTERNAL;
    if (strcmp(st->str, "beyond") == 0 || strcmp(st->str, "gone") == 0 || strcmp(st->str, "deep") == 0) {
        out->status = st->str[0] == 'b' ? RC_MOMENT_BEYOND : st->str[0] == 'g' ? RC_MOMENT_GONE : RC_MOMENT_DEEP;
        double at = 0;
        if (i < n && rc_moment_args_comp_item(&items[i++], &out->has_oldest_at, &at)) /* (an older script sends none) */
            return RC_E_INTERNAL;
        out->oldest_at = (int64_t)at;
        if (out->status == RC_MOMENT_DEEP && i + 3 == n) {
            /* the chain's moment: its seq, its time, its checkpoint */
            if (rc_moment_args_count_item(&items[i], &out->chain_seq) ||
                rc_moment_args_comp_item(&items[i + 1], &out->chain_has_at, &at) ||
                rc_moment_args_count_item(&items[i + 2], &out->chain_base) || out->chain_base == out->chain_seq)
                return RC_E_INTERNAL;
            out->chain_at = (int64_t)at;
            out->has_chain = 1;
            i += 3;
        }
        return i == n ? 0 : RC_E_INTERNAL;
    }
    int64_t nch, nt;
    out->redo = strcmp(st->str, "redo") == 0;
    if ((strcmp(st->str, "ok") != 0 && !out->redo) || i + 2 > n || rc_moment_args_count_item(&items[i++], &out->smin) ||
        rc_moment_args_count_item(&items[i++], &nch) || (size_t)nch > (n - i) / 4)
        return RC_E_INTERNAL;
    out->changes = malloc((nch ? (size_t)nch : 1) * sizeof *out->changes);
    out->change_seq = malloc((nch ? (size_t)nch : 1) * sizeof *out->change_seq);
    if (!out->changes || !out->change_seq)
        goto fail;
    for (int64_t k = 0; k < nch; k++, i += 4) {
        struct rc_moment_change *c = &out->changes[k];
        if (rc_moment_args_count_item(&items[i], &out->change_seq[k]) || items[i + 1].is_int || !items[i + 1].str ||
            rc_moment_args_comp_item(&items[i + 2], &c->has_new, &c->c) ||
            rc_moment_args_comp_item(&items[i + 3], &c->has_old, &c->old_c))
            goto fail;
        c->member = items[i + 1].str;
    }
    out->nchanges = (size_t)nch;
    if (i >= n || rc_moment_args_count_item(&items[i++], &nt) || nt < 1 || (size_t)nt > (n - i) / 4)
        goto fail;
    if (!(out->targets = calloc((size_t)nt, sizeof *out->targets)))
        goto fail;
    for (int64_t k = 0; k < nt; k++, i += 4) {
        struct rc_moment_target *t = &out->targets[k];
        double at;
        if (rc_moment_args_count_item(&items[i], &t->seq) || rc_moment_args_comp_item(&items[i + 1], &t->has_at, &at) ||
            rc_moment_args_comp_item(&items[i + 2], &t->has_c, &t->c) ||
            rc_moment_args_count_item(&items[i + 3], &t->ahead))
            goto fail;
        t->at = (int64_t)at;
    }
    out->ntargets = (size_t)nt;
    if (view == RC_MOMENT_POINTS || view == RC_MOMENT_COUNTS)
        return i == n ? 0 : RC_E_INTERNAL;
    if (view == RC_MOMENT_LIST) {
        if ((n - i) % 2 || !(out->listed = calloc((n - i) / 2 + 1, sizeof *out->listed)))
            goto fail;
        for (; i < n; i += 2, out->nlisted++) {
            struct rc_moment_target *t = &out->listed[out->nlisted];
            if (rc_moment_args_comp_item(&items[i], &t->has_c, &t->c) ||
                rc_moment_args_count_item(&items[i + 1], &t->ahead))
                goto fail;
        }
        return 0;
    }
    if (rc_moment_args_parse_rows(items, n, i, out) == 0)
        return 0;
fail:
    rc_moment_args_reply_free(out);
    return RC_E_INTERNAL;
}

int rc_moment_args_parse_rows(const struct rc_reply_item *items, size_t n, size_t i, struct rc_moment_reply *out)
{
    if (i >= n || rc_moment_args_count_item(&items[i++], &out->lo) || (n - i) % 2)
        return RC_E_INTERNAL;
    if (!(out->rows = malloc(((n - i) / 2 + 1) * sizeof *out->rows)))
        return RC_E_INTERNAL;
    for (; i < n; i += 2) {
        struct rc_moment_row *r = &out->rows[out->nrows];
        int has;
        if (items[i].is_int || !items[i].str || !items[i].str[0] ||
            rc_moment_args_comp_item(&items[i + 1], &has, &r->c) || !has)
            return RC_E_INTERNAL;
        r->member = items[i].str;
        out->nrows++;
    }
    return 0;
}

void rc_moment_args_reply_free(struct rc_moment_reply *r)
{
    free(r->changes);
    free(r->change_seq);
    free(r->targets);
    free(r->rows);
    free(r->listed);
    r->listed = NULL;
    r->nlisted = 0;
    r->changes = NULL;
    r->change_seq = NULL;
    r->targets = NULL;
    r->rows = NULL;
    r->nchanges = r->ntargets = r->nrows = 0;
}

size_t rc_moment_args_after(const struct rc_moment_reply *r, int64_t s)
{
    size_t lo = 0, hi = r->nchanges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->change_seq[mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t rc_moment_args_point_after(const struct rc_moment_reply *r, const struct rc_moment_target *t)
{
    if (!r->redo)
        return rc_moment_args_after(r, t->seq);
    int64_t smax = 0;
    for (size_t i = 0; i < r->ntargets; i++)
        if (r->targets[i].seq > smax)
            smax = r->targets[i].seq;
    return rc_moment_args_after(r, 2 * smax - t->seq);
}
