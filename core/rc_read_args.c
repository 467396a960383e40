/* rc_read_args.c - lua/read.lua's call built and its reply parsed (see
 * rc_read_args.h). */
#include "rc_read_args.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_err.h"

static const char *const kind_word[] = {"range", "around", "rank", "log", "counts", "near", "members", "roster"};

/* A composite as read.lua passes it on to ZCOUNT and ZRANGE BYSCORE (exact
 * for every double; composites are whole numbers). NaN: "" (counts 0). */
static int bound_text(char *out, size_t cap, double v)
{
    if (isnan(v)) {
        out[0] = '\0';
        return 0;
    }
    if (isinf(v))
        return -1;
    snprintf(out, cap, "%.17g", v);
    return 0;
}

/* The COUNTS pairs after argv[0..3). */
static int build_counts(const struct rc_read_req *req, struct rc_read_args *out)
{
    if (req->nbounds > RC_READ_COUNTS_MAX || (req->nbounds && !req->bounds))
        return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < req->nbounds; i++) {
        if (bound_text(out->num[3 + i], sizeof out->num[3 + i], req->bounds[i]))
            return RC_E_BAD_REQUEST;
        out->argv[out->nargv++] = out->num[3 + i];
        out->argv[out->nargv++] = req->inclusives && req->inclusives[i] ? "1" : "0";
    }
    return 0;
}

int rc_read_args_build(const char *board, const char *period, enum rc_order order, const struct rc_read_req *req,
                       struct rc_read_args *out)
{
    static const char *const suffix[RC_READ_NKEYS] = {"z", "seq", "log", "epoch", "frz", "fz"};
    if ((unsigned)req->kind > RC_READ_ROSTER)
        return RC_E_BAD_REQUEST;
    for (int i = 0; i < RC_READ_NKEYS; i++)
        if (rc_keys_board(out->keys[i], RC_KEY_MAX, board, period, suffix[i], NULL))
            return RC_E_INTERNAL; /* names are checked long before: a bug */
    out->argv[0] = kind_word[req->kind];
    out->argv[1] = order == RC_ORDER_DESC ? "desc" : "asc";
    out->argv[2] = req->live ? "1" : "0";
    out->nargv = 3;
    switch (req->kind) {
    case RC_READ_RANGE:
        if (req->first < 0 || req->count < 0 || req->count > INT64_MAX - req->first)
            return RC_E_BAD_REQUEST;
        snprintf(out->num[0], sizeof out->num[0], "%" PRId64, req->first);
        /* count 0 gives last = first - 1: nothing, or from index 0 ZRANGE's
         * -1, the whole board, which the mirror's "no limit" (keep 0) asks */
        snprintf(out->num[1], sizeof out->num[1], "%" PRId64, req->first + req->count - 1);
        out->argv[3] = out->num[0];
        out->argv[4] = out->num[1];
        out->nargv = 5;
        break;
    case RC_READ_AROUND:
        if (!req->member || !req->member[0] || req->radius < 0)
            return RC_E_BAD_REQUEST;
        snprintf(out->num[1], sizeof out->num[1], "%" PRId64, req->radius);
        out->argv[3] = req->member;
        out->argv[4] = out->num[1];
        out->nargv = 5;
        break;
    case RC_READ_RANK:
        if (!req->member || !req->member[0])
            return RC_E_BAD_REQUEST;
        out->argv[3] = req->member;
        out->nargv = 4;
        break;
    case RC_READ_LOG:
        /* count > 0: up to count changes after seq first (a feed's replay) */
        if (req->count > 0) {
            if (req->first < 0)
                return RC_E_BAD_REQUEST;
            snprintf(out->num[0], sizeof out->num[0], "%" PRId64, req->first);
            snprintf(out->num[1], sizeof out->num[1], "%" PRId64, req->count);
            out->argv[3] = out->num[0];
            out->argv[4] = out->num[1];
            out->nargv = 5;
        }
        break;
    case RC_READ_COUNTS:
        return build_counts(req, out);
    case RC_READ_NEAR:
        if (req->radius < 0 || isnan(req->bound) || bound_text(out->num[0], sizeof out->num[0], req->bound))
            return RC_E_BAD_REQUEST;
        snprintf(out->num[1], sizeof out->num[1], "%" PRId64, req->radius);
        out->argv[3] = out->num[0];
        out->argv[4] = req->inclusive ? "1" : "0";
        out->argv[5] = out->num[1];
        out->nargv = 6;
        break;
    case RC_READ_MEMBERS:
        /* ARGV[4]: the tie unit with places, else "" */
        if (!req->members || req->nmembers == 0 || req->nmembers > RC_READ_ARGV_MAX - 4)
            return RC_E_BAD_REQUEST;
        out->argv[3] = "";
        if (req->places) {
            if (!(req->tie_unit >= 0) || req->tie_unit > 9007199254740992.0)
                return RC_E_BAD_REQUEST;
            snprintf(out->num[2], sizeof out->num[2], "%.17g", req->tie_unit);
            out->argv[3] = out->num[2];
        }
        out->nargv = 4;
        for (const char *p = req->members; out->nargv < 4 + req->nmembers; p += strlen(p) + 1)
            out->argv[out->nargv++] = p;
        return 0;
    case RC_READ_ROSTER:
        /* ARGV[4] the tie unit or "", ARGV[5] best, ARGV[6] the names */
        if (!req->joined || !req->joined[0] || req->best < 0)
            return RC_E_BAD_REQUEST;
        out->argv[3] = "";
        if (req->places) {
            if (!(req->tie_unit >= 0) || req->tie_unit > 9007199254740992.0)
                return RC_E_BAD_REQUEST;
            snprintf(out->num[2], sizeof out->num[2], "%.17g", req->tie_unit);
            out->argv[3] = out->num[2];
        }
        snprintf(out->num[1], sizeof out->num[1], "%" PRId64, req->best);
        out->argv[4] = out->num[1];
        out->argv[5] = req->joined;
        out->nargv = 6;
        return 0;
    }
    if (req->places && (req->kind == RC_READ_RANGE || req->kind == RC_READ_AROUND)) {
        if (!(req->tie_unit >= 0) || req->tie_unit > 9007199254740992.0)
            return RC_E_BAD_REQUEST;
        snprintf(out->num[2], sizeof out->num[2], "%.17g", req->tie_unit);
        out->argv[out->nargv++] = out->num[2];
    }
    return 0;
}

static int item_count(const struct rc_reply_item *it, int64_t *v)
{
    if (!it->is_int || it->integer < 0)
        return -1;
    *v = it->integer;
    return 0;
}

int rc_read_args_head_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head)
{
    if (!items || n < RC_READ_HEAD || item_count(&items[0], &head->seq) || item_count(&items[1], &head->total) ||
        item_count(&items[2], &head->first_rank) || items[3].is_int || !items[3].str ||
        !rc_epoch_valid(items[3].str, strlen(items[3].str)))
        return RC_E_INTERNAL;
    strcpy(head->epoch, items[3].str);
    int64_t frozen;
    struct rc_freeze *fr = &head->freeze;
    if (item_count(&items[4], &frozen) || frozen > 1 || item_count(&items[5], &fr->seq) ||
        item_count(&items[6], &fr->shown) || item_count(&items[7], &fr->version) ||
        (frozen && fr->shown < fr->seq) || (!frozen && (fr->seq || fr->shown)))
        return RC_E_INTERNAL;
    fr->frozen = (int)frozen;
    return 0;
}

size_t rc_read_args_rows_max(size_t n)
{
    return n > RC_READ_HEAD ? (n - RC_READ_HEAD) / 2 : 0;
}

/* Redis writes scores as %.17g ("inf" and "-inf" for infinities): the whole
 * text must be the number. */
static int parse_composite(const char *s, double *c)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || isnan(v) || (errno == ERANGE && !isinf(v) && v != 0))
        return -1;
    *c = v;
    return 0;
}

/* The member and composite pairs items[from..n) into rows. */
static int pairs_parse(const struct rc_reply_item *items, size_t n, size_t from, struct rc_read_row *rows,
                       size_t cap, size_t *nrows)
{
    size_t k = (n - from) / 2;
    if (k > cap)
        return RC_E_INTERNAL;
    for (size_t i = 0; i < k; i++) {
        const struct rc_reply_item *m = &items[from + 2 * i], *c = &items[from + 1 + 2 * i];
        if (m->is_int || c->is_int || !m->str || !m->str[0] || parse_composite(c->str, &rows[i].c))
            return RC_E_INTERNAL;
        rows[i].member = m->str;
    }
    *nrows = k;
    return 0;
}

/* The rows of a reply whose head takes items[0..head_len). */
static int rows_parse(const struct rc_reply_item *items, size_t n, size_t head_len, struct rc_read_head *head,
                      struct rc_read_row *rows, size_t cap, size_t *nrows)
{
    if (head->first_rank == 0)
        return 0; /* the rank reply of an absent member: { seq, total, 0, epoch, member, "" } */
    return pairs_parse(items, n, head_len, rows, cap, nrows);
}

int rc_read_args_rows_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                       struct rc_read_row *rows, size_t cap, size_t *nrows)
{
    *nrows = 0;
    if (rc_read_args_head_parse(items, n, head) || (n - RC_READ_HEAD) % 2)
        return RC_E_INTERNAL;
    return rows_parse(items, n, RC_READ_HEAD, head, rows, cap, nrows);
}

int rc_read_args_rows_parse_places(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                              struct rc_read_places *pl, struct rc_read_row *rows, size_t cap, size_t *nrows)
{
    int64_t next;
    *nrows = 0;
    if (rc_read_args_head_parse(items, n, head) || n < RC_READ_HEAD + 2 || (n - RC_READ_HEAD) % 2 ||
        item_count(&items[RC_READ_HEAD], &pl->above) || item_count(&items[RC_READ_HEAD + 1], &next) || next > 1 ||
        (head->first_rank && pl->above >= head->first_rank))
        return RC_E_INTERNAL;
    pl->next_tied = (int)next;
    return rows_parse(items, n, RC_READ_HEAD + 2, head, rows, cap, nrows);
}

int rc_read_args_counts_parse(const struct rc_reply_item *items, size_t n, size_t npairs, struct rc_read_head *head,
                         int64_t *counts)
{
    if (rc_read_args_head_parse(items, n, head) || head->first_rank != 0 || n != RC_READ_HEAD + npairs)
        return RC_E_INTERNAL;
    for (size_t i = 0; i < npairs; i++)
        if (item_count(&items[RC_READ_HEAD + i], &counts[i]) || counts[i] > head->total)
            return RC_E_INTERNAL;
    return 0;
}

int rc_read_args_near_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                       struct rc_read_near *nr, struct rc_read_row *rows, size_t cap, size_t *nrows)
{
    int64_t na;
    *nrows = 0;
    if (rc_read_args_head_parse(items, n, head) || head->first_rank != 0 || n < RC_READ_HEAD + 2 ||
        (n - RC_READ_HEAD) % 2 || item_count(&items[RC_READ_HEAD], &nr->ahead) ||
        item_count(&items[RC_READ_HEAD + 1], &na) || nr->ahead > head->total || na > nr->ahead)
        return RC_E_INTERNAL;
    size_t k;
    if (pairs_parse(items, n, RC_READ_HEAD + 2, rows, cap, &k) || (uint64_t)na > k)
        return RC_E_INTERNAL;
    nr->na = (size_t)na;
    *nrows = k;
    return 0;
}

/* The rows of a members (off RC_READ_HEAD) or roster (one more) reply. */
static int mrows_parse(const struct rc_reply_item *items, size_t n, size_t off, const struct rc_read_head *head,
                       struct rc_read_mrow *rows, size_t cap, size_t *nrows)
{
    if (n < off || (n - off) % 5)
        return RC_E_INTERNAL;
    size_t k = (n - off) / 5;
    if (k > cap)
        return RC_E_INTERNAL;
    for (size_t i = 0; i < k; i++) {
        const struct rc_reply_item *it = &items[off + 5 * i];
        int64_t tied;
        struct rc_read_mrow *r = &rows[i];
        if (it[0].is_int || !it[0].str || !it[0].str[0] || it[1].is_int || parse_composite(it[1].str, &r->c) ||
            item_count(&it[2], &r->rank) || item_count(&it[3], &r->place) || item_count(&it[4], &tied) ||
            tied > 1 || r->rank < 1 || r->rank > head->total || r->place > r->rank ||
            (i > 0 && r->rank <= rows[i - 1].rank))
            return RC_E_INTERNAL;
        r->member = it[0].str;
        r->tied = (int)tied;
    }
    *nrows = k;
    return 0;
}

int rc_read_args_members_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                          struct rc_read_mrow *rows, size_t cap, size_t *nrows)
{
    *nrows = 0;
    if (rc_read_args_head_parse(items, n, head) || head->first_rank != 0)
        return RC_E_INTERNAL;
    return mrows_parse(items, n, RC_READ_HEAD, head, rows, cap, nrows);
}

int rc_read_args_roster_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head, int64_t *found,
                              struct rc_read_mrow *rows, size_t cap, size_t *nrows)
{
    *nrows = 0;
    if (rc_read_args_head_parse(items, n, head) || head->first_rank != 0 || n <= RC_READ_HEAD ||
        item_count(&items[RC_READ_HEAD], found) || *found > head->total)
        return RC_E_INTERNAL;
    int rc = mrows_parse(items, n, RC_READ_HEAD + 1, head, rows, cap, nrows);
    if (!rc && (int64_t)*nrows > *found)
        rc = RC_E_INTERNAL;
    if (rc)
        *nrows = 0;
    return rc;
}
