/* rc_moment_chain.c - a moment rebuilt in several bounded calls (see
 * rc_moment_chain.h). */
#include "rc_moment_chain.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_err.h"
#include "rc_members.h"
#include "rc_keys.h"
#include "rc_moment.h"


int rc_moment_chain_init(struct rc_moment_chain *ch, const struct rc_moment_reply *deep)
{
    memset(ch, 0, sizeof *ch);
    if (!deep->has_chain || deep->chain_base == deep->chain_seq)
        return RC_E_INTERNAL;
    ch->target = deep->chain_seq;
    ch->has_at = deep->chain_has_at;
    ch->at = deep->chain_at;
    ch->base = deep->chain_base;
    ch->next = ch->base < ch->target ? ch->base : ch->target;
    ch->end = ch->base < ch->target ? ch->target : ch->base;
    ch->head = deep->head;
    ch->oldest = deep->oldest;
    ch->has_oldest_at = deep->has_oldest_at;
    ch->oldest_at = deep->oldest_at;
    return 0;
}

void rc_moment_chain_free(struct rc_moment_chain *ch)
{
    for (size_t i = 0; i < ch->nf; i++)
        free(ch->f[i].member);
    free(ch->f);
    memset(ch, 0, sizeof *ch);
}

int rc_moment_chain_done(const struct rc_moment_chain *ch)
{
    return ch->next >= ch->end;
}

void rc_moment_chain_args_free(struct rc_moment_chain_args *a)
{
    free(a->names);
    free(a->comps);
    a->names = a->comps = NULL;
}

static int keys(struct rc_moment_chain_args *a, const char *board, const char *period)
{
    static const char *const suffix[RC_READ_NKEYS] = {"z", "seq", "log", "epoch", "frz", "fz"};
    for (int i = 0; i < RC_READ_NKEYS; i++)
        if (rc_keys_board(a->keys[i], RC_KEY_MAX, board, period, suffix[i], NULL))
            return RC_E_INTERNAL;
    return 0;
}

int rc_moment_chain_changes_args(const struct rc_moment_chain *ch, const char *board, const char *period,
                                 enum rc_order order, int64_t most, struct rc_moment_chain_args *a)
{
    memset(a, 0, sizeof *a);
    if (most < 1)
        return RC_E_BAD_REQUEST;
    if (keys(a, board, period))
        return RC_E_INTERNAL;
    int64_t upto = ch->end - ch->next > most ? ch->next + most : ch->end;
    snprintf(a->num[0], sizeof a->num[0], "%" PRId64, ch->next);
    snprintf(a->num[1], sizeof a->num[1], "%" PRId64, upto);
    snprintf(a->num[2], sizeof a->num[2], "%" PRId64, ch->base);
    const char *v[] = {"changes", order == RC_ORDER_DESC ? "desc" : "asc", "1", a->num[0], a->num[1],
                       ch->head.epoch, a->num[2]};
    memcpy(a->argv, v, sizeof v);
    a->nargv = sizeof v / sizeof *v;
    return 0;
}

/* "gone": oldest and its time into *gone. Returns 1, or RC_E_INTERNAL. */
static int take_gone(const struct rc_reply_item *items, size_t n, size_t i, struct rc_moment_reply *gone)
{
    memset(gone, 0, sizeof *gone);
    double at = 0;
    if (rc_read_args_head_parse(items, n, &gone->head) || i + 2 != n ||
        rc_moment_args_count_item(&items[i], &gone->oldest) ||
        rc_moment_args_comp_item(&items[i + 1], &gone->has_oldest_at, &at))
        return RC_E_INTERNAL;
    gone->status = RC_MOMENT_GONE;
    gone->oldest_at = (int64_t)at;
    return 1;
}

/* The status item: 0 "ok", 1 "gone" (taken into *gone), else RC_E_INTERNAL. */
static int status(const struct rc_reply_item *items, size_t n, struct rc_moment_reply *gone)
{
    struct rc_read_head h;
    if (rc_read_args_head_parse(items, n, &h) || n <= RC_READ_HEAD)
        return RC_E_INTERNAL;
    const struct rc_reply_item *st = &items[RC_READ_HEAD];
    if (st->is_int || !st->str)
        return RC_E_INTERNAL;
    if (strcmp(st->str, "gone") == 0)
        return take_gone(items, n, RC_READ_HEAD + 1, gone);
    return strcmp(st->str, "ok") == 0 ? 0 : RC_E_INTERNAL;
}

static int cmp_fold(const void *a, const void *b)
{
    const struct rc_moment_chain_fold *x = a, *y = b;
    int c = strcmp(x->member, y->member);
    if (c)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* One entry a member: the first's old composite, the last's new one. */
static void fold(struct rc_moment_chain *ch)
{
    if (ch->nf)
        qsort(ch->f, ch->nf, sizeof *ch->f, cmp_fold);
    size_t w = 0;
    for (size_t i = 0; i < ch->nf; i++) {
        if (w && strcmp(ch->f[w - 1].member, ch->f[i].member) == 0) {
            ch->f[w - 1].has_new = ch->f[i].has_new;
            ch->f[w - 1].c = ch->f[i].c;
            free(ch->f[i].member);
            continue;
        }
        ch->f[w++] = ch->f[i];
    }
    ch->nf = w;
}

int rc_moment_chain_changes_take(struct rc_moment_chain *ch, const struct rc_reply_item *items, size_t n,
                                 struct rc_moment_reply *gone)
{
    int rc = status(items, n, gone);
    if (rc)
        return rc;
    size_t i = RC_READ_HEAD + 1;
    int64_t k;
    if (i >= n || rc_moment_args_count_item(&items[i++], &k) || k < 1 || (size_t)k != (n - i) / 4 || (n - i) % 4)
        return RC_E_INTERNAL; /* (at least one change a call: no endless chain) */
    if (ch->nf + (size_t)k > ch->cap) {
        size_t cap = ch->nf + (size_t)k;
        struct rc_moment_chain_fold *f = realloc(ch->f, cap * sizeof *f);
        if (!f)
            return RC_E_INTERNAL;
        ch->f = f;
        ch->cap = cap;
    }
    for (int64_t j = 0; j < k; j++, i += 4) {
        struct rc_moment_chain_fold e = {.pos = ch->pos++};
        int64_t seq;
        /* the changes asked, in seq order: a log that moved under the
         * calls is not read as another one */
        if (rc_moment_args_count_item(&items[i], &seq) || seq != ch->next + 1 || items[i + 1].is_int ||
            !items[i + 1].str || !items[i + 1].str[0] || rc_moment_args_comp_item(&items[i + 2], &e.has_new, &e.c) ||
            rc_moment_args_comp_item(&items[i + 3], &e.has_old, &e.old_c) || !(e.member = strdup(items[i + 1].str))) {
            fold(ch);
            return RC_E_INTERNAL;
        }
        ch->f[ch->nf++] = e;
        ch->next = seq;
    }
    fold(ch);
    return 0;
}

/* The fold's entry of member, or NULL: it kept its composite. */
static const struct rc_moment_chain_fold *touched(const struct rc_moment_chain *ch, const char *member)
{
    size_t lo = 0, hi = ch->nf;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ch->f[mid].member, member);
        if (c == 0)
            return &ch->f[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* A touched member's composite at the moment: before the first change
 * when C is after it (the changes are undone), after the last when C is
 * before it (redone). has 0: off the board then. */
static int at_moment(const struct rc_moment_chain *ch, const struct rc_moment_chain_fold *e, double *c)
{
    if (ch->base > ch->target) {
        *c = e->old_c;
        return e->has_old;
    }
    *c = e->c;
    return e->has_new;
}

/* The composite at the moment as the base call takes it: "?" C's own, ""
 * (none) or "-" (probes) off the board then, else the number. */
static void comp_text(const struct rc_moment_chain *ch, const char *member, const char *absent, char *buf,
                      size_t len)
{
    const struct rc_moment_chain_fold *e = touched(ch, member);
    double c;
    if (!e)
        snprintf(buf, len, "?");
    else if (!at_moment(ch, e, &c))
        snprintf(buf, len, "%s", absent);
    else
        snprintf(buf, len, "%.17g", c);
}

int rc_moment_chain_base_args(const struct rc_moment_chain *ch, const char *board, const char *period,
                              enum rc_order order, const struct rc_moment_chain_view *v,
                              struct rc_moment_chain_args *a)
{
    memset(a, 0, sizeof *a);
    if ((unsigned)v->view > RC_MOMENT_NEAR)
        return RC_E_BAD_REQUEST;
    if ((v->view == RC_MOMENT_COUNTS || v->view == RC_MOMENT_NEAR) &&
        (!v->bounds || !v->nbounds || (v->view == RC_MOMENT_NEAR && v->nbounds != 1)))
        return RC_E_BAD_REQUEST;
    if ((v->view == RC_MOMENT_AROUND || v->view == RC_MOMENT_POINTS) && (!v->member || !v->member[0]))
        return RC_E_BAD_REQUEST;
    if (v->view == RC_MOMENT_LIST && (!v->members || !v->nmembers))
        return RC_E_BAD_REQUEST;
    if (keys(a, board, period))
        return RC_E_INTERNAL;
    int64_t margin = rc_moment_margin((int64_t)ch->nf);
    snprintf(a->num[0], sizeof a->num[0], "%" PRId64, ch->base);
    const char **w = a->argv;
    w[0] = "base";
    w[1] = order == RC_ORDER_DESC ? "desc" : "asc";
    w[2] = "1";
    w[3] = a->num[0];
    w[4] = ch->head.epoch;
    if (v->view == RC_MOMENT_RANGE) {
        int64_t lo = v->first - margin < 0 ? 0 : v->first - margin;
        snprintf(a->num[1], sizeof a->num[1], "%" PRId64, lo);
        snprintf(a->num[2], sizeof a->num[2], "%" PRId64, v->first + v->count - 1 + margin);
        w[5] = "range";
        w[6] = a->num[1];
        w[7] = a->num[2];
        a->nargv = 8;
        return 0;
    }
    if (v->view == RC_MOMENT_COUNTS || v->view == RC_MOMENT_NEAR) {
        /* a sharded board's other shards (core/rc_moment_args.h) */
        if (rc_moment_args_bounds_text(v->bounds, v->nbounds, &a->names))
            return RC_E_INTERNAL;
        snprintf(a->num[1], sizeof a->num[1], "%" PRId64, (int64_t)ch->nf + v->radius + margin);
        w[5] = v->view == RC_MOMENT_COUNTS ? "counts" : "near";
        w[6] = a->names;
        w[7] = a->num[1];
        a->nargv = v->view == RC_MOMENT_COUNTS ? 7 : 8;
        return 0;
    }
    if (v->view == RC_MOMENT_AROUND) {
        comp_text(ch, v->member, "", a->num[1], sizeof a->num[1]);
        snprintf(a->num[2], sizeof a->num[2], "%" PRId64, v->radius + 2 * margin);
        w[5] = "around";
        w[6] = v->member;
        w[7] = a->num[1];
        w[8] = a->num[2];
        a->nargv = 9;
        return 0;
    }
    /* probes: the listed members (or the points' one) joined by spaces
     * (names hold none: rc_names.h), and their composites at the moment */
    uint32_t nm = v->view == RC_MOMENT_LIST ? v->nmembers : 1;
    const char *m = v->view == RC_MOMENT_LIST ? v->members : v->member;
    a->names = malloc(rc_members_len(m, nm) + 1);
    a->comps = malloc((size_t)nm * 32 + 1);
    if (!a->names || !a->comps) {
        rc_moment_chain_args_free(a);
        return RC_E_INTERNAL;
    }
    char *pn = a->names, *pc = a->comps;
    m = v->view == RC_MOMENT_LIST ? v->members : v->member;
    for (uint32_t i = 0; i < nm; i++, m += strlen(m) + 1) {
        pn += sprintf(pn, "%s%s", i ? " " : "", m);
        char buf[32];
        comp_text(ch, m, "-", buf, sizeof buf);
        pc += sprintf(pc, "%s%s", i ? " " : "", buf);
    }
    w[5] = "probes";
    w[6] = a->names;
    w[7] = a->comps;
    a->nargv = 8;
    return 0;
}

int rc_moment_chain_base_take(const struct rc_moment_chain *ch, const struct rc_reply_item *items, size_t n,
                              const struct rc_moment_chain_view *v, struct rc_moment_reply *out)
{
    int rc = status(items, n, out);
    if (rc)
        return rc == 1 ? 0 : rc;
    memset(out, 0, sizeof *out);
    struct rc_read_head h;
    if (rc_read_args_head_parse(items, n, &h))
        return RC_E_INTERNAL;
    out->head = ch->head;
    out->head.total = h.total; /* (C's: the rebuild's changes lead from it) */
    out->status = RC_MOMENT_OK;
    out->oldest = ch->oldest;
    out->has_oldest_at = ch->has_oldest_at;
    out->oldest_at = ch->oldest_at;
    out->smin = ch->target;
    size_t nf = ch->nf ? ch->nf : 1;
    out->changes = malloc(nf * sizeof *out->changes);
    out->change_seq = malloc(nf * sizeof *out->change_seq);
    size_t nt = v->view == RC_MOMENT_COUNTS ? v->nbounds
                : v->view == RC_MOMENT_POINTS && v->ntargets > 1 ? v->ntargets : 1;
    out->targets = calloc(nt, sizeof *out->targets);
    if (!out->changes || !out->change_seq || !out->targets)
        goto fail;
    /* each member's change from the moment to C: old its composite at the
     * moment, new at C (a redo's runs the other way round) */
    for (size_t i = 0; i < ch->nf; i++) {
        const struct rc_moment_chain_fold *e = &ch->f[i];
        struct rc_moment_change *c = &out->changes[i];
        if (ch->base > ch->target)
            *c = (struct rc_moment_change){e->member, e->has_new, e->c, e->has_old, e->old_c};
        else
            *c = (struct rc_moment_change){e->member, e->has_old, e->old_c, e->has_new, e->c};
        out->change_seq[i] = ch->target + 1;
    }
    out->nchanges = ch->nf;
    struct rc_moment_target *t = &out->targets[0];
    t->seq = ch->target;
    t->has_at = ch->has_at;
    t->at = ch->at;
    out->ntargets = 1;
    size_t i = RC_READ_HEAD + 1;
    if (v->view == RC_MOMENT_COUNTS) {
        /* one target a bound, all at the moment, each its count in C */
        if (n - i != nt)
            goto fail;
        for (size_t k = 0; k < nt; k++) {
            out->targets[k] = *t;
            if (rc_moment_args_count_item(&items[i + k], &out->targets[k].ahead))
                goto fail;
        }
        out->ntargets = nt;
        return 0;
    }
    if (v->view == RC_MOMENT_NEAR && (i >= n || rc_moment_args_count_item(&items[i++], &t->ahead)))
        goto fail;
    if (v->view == RC_MOMENT_LIST || v->view == RC_MOMENT_POINTS) {
        size_t nm = v->view == RC_MOMENT_LIST ? v->nmembers : 1;
        if (n - i != 2 * nm || !(out->listed = calloc(nm, sizeof *out->listed)))
            goto fail;
        for (size_t k = 0; k < nm; k++, i += 2) {
            struct rc_moment_target *l = &out->listed[k];
            if (rc_moment_args_comp_item(&items[i], &l->has_c, &l->c) ||
                rc_moment_args_count_item(&items[i + 1], &l->ahead))
                goto fail;
        }
        out->nlisted = nm;
        if (v->view == RC_MOMENT_POINTS) {
            t->has_c = out->listed[0].has_c;
            t->c = out->listed[0].c;
            t->ahead = out->listed[0].ahead;
            for (size_t k = 1; k < nt; k++)
                out->targets[k] = *t;
            out->ntargets = nt;
        }
        return 0;
    }
    if (rc_moment_args_parse_rows(items, n, i, out) == 0)
        return 0;
fail:
    rc_moment_args_reply_free(out);
    return RC_E_INTERNAL;
}
