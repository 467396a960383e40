/* gw_read_mshard.c - a member list of a sharded board (PROTOCOL v1.2
 * "Member lists", docs/sharded.md "Member lists"): gw_read's contract for
 * GW_READ_MEMBERS when b->shards > 1, in two rounds of lua/read.lua calls,
 * each round's calls all in flight at once:
 *
 *   ROWS    every shard holding a listed name (core/rc_shard.h, rc_shard_of)
 *           reads its part of the list (`members`): each listed member on
 *           it with its composite and its rank inside the shard;
 *   COUNTS  every shard counts, for each member found, its members ahead of
 *           that composite in the merged order (rc_shard_count_inclusive;
 *           its own shard's rank already says that shard's), and with
 *           shared places the members with strictly better points and with
 *           points as good (place, tied: every shard, the own one too).
 *
 * A member's global rank is its rank in its shard plus the other shards'
 * counts. Writes go on between the rounds, so the window records both
 * rounds' seqs (listed_seq, shard_seq): the tracker that follows it from
 * the change events applies each event where the read did not hold it
 * (core/rc_vtrack_shard.h). The head (seq, total, epoch) is the counts
 * round's, summed as every sharded read's (gw_read_merge_head). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_join.h"
#include "store/gw_read_int.h"
#include "store/gw_store.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_members.h"
#include "rc_places.h"
#include "rc_read_args.h"
#include "rc_shard.h"

struct mread;

struct mcall {
    struct mread *mr;
    unsigned shard;
    size_t n;      /* COUNTS: bounds in this call */
    size_t *row;   /* per bound: the row it is for */
    int *what;     /* per bound: 0 ahead, 1 above, 2 as good */
};

struct mread {
    const struct gw_store *s;
    const struct rc_board *b;
    gw_read_cb *cb;
    void *privdata;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    int places, live;
    unsigned nshards;
    char *list[RC_SHARDS_MAX];  /* each shard's part of the list, packed (NULL: none) */
    uint32_t nlist[RC_SHARDS_MAX], lenlist[RC_SHARDS_MAX];
    unsigned waiting;
    int sending;
    int code;
    int counting;               /* 1: the COUNTS round */
    int64_t listed_seq[RC_SHARDS_MAX];
    int64_t counted_seq[RC_SHARDS_MAX]; /* -1 until a counts reply; -2: its calls saw two seqs */
    struct gw_shard_part part[RC_SHARDS_MAX]; /* the counts round's heads */
    /* the members found, in the order their shards answered */
    char **member;
    double *c;
    int64_t *rank, *above, *asgood;
    unsigned *home;
    size_t n, cap;
    struct gw_window *w;
};

static void free_rows(struct mread *mr)
{
    for (size_t i = 0; i < mr->n; i++)
        free(mr->member[i]);
    free(mr->member);
    free(mr->c);
    free(mr->rank);
    free(mr->above);
    free(mr->asgood);
    free(mr->home);
}

static void finish(struct mread *mr, int code)
{
    struct gw_window *w = mr->w;
    if (code) {
        gw_window_free(w);
        w = NULL;
    }
    mr->cb(code, w, mr->privdata);
    for (unsigned j = 0; j < mr->nshards; j++)
        free(mr->list[j]);
    free_rows(mr);
    free(mr);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    (void)w;
    finish(privdata, 0);
}

static int grow(struct mread *mr, size_t need)
{
    if (need <= mr->cap)
        return 0;
    size_t cap = need < 16 ? 16 : need * 2;
#define GROW(f)                                                   \
    do {                                                          \
        void *p = realloc(mr->f, cap * sizeof *mr->f);            \
        if (!p)                                                   \
            return -1;                                            \
        mr->f = p;                                                \
    } while (0)
    GROW(member);
    GROW(c);
    GROW(rank);
    GROW(above);
    GROW(asgood);
    GROW(home);
#undef GROW
    mr->cap = cap;
    return 0;
}

/* A shard's members reply: its listed members on it, their composites and
 * ranks in the shard. */
static int take_rows(struct mread *mr, unsigned shard, const redisReply *r)
{
    struct rc_reply_item *items = NULL;
    struct rc_read_mrow *rows = NULL;
    struct rc_read_head head;
    size_t n = 0;
    int rc = RC_E_INTERNAL;
    if (!r)
        return RC_E_UNAVAILABLE;
    if (r->type != REDIS_REPLY_ARRAY)
        return RC_E_INTERNAL;
    size_t cap = r->elements / 5 + 1;
    items = malloc((r->elements ? r->elements : 1) * sizeof *items);
    rows = malloc(cap * sizeof *rows);
    if (!items || !rows || gw_script_reply_items(r, items, r->elements) != r->elements ||
        rc_read_args_members_parse(items, r->elements, &head, rows, cap, &n) || grow(mr, mr->n + n))
        goto out;
    mr->listed_seq[shard] = head.seq;
    for (size_t i = 0; i < n; i++) {
        if (!(mr->member[mr->n] = strdup(rows[i].member)))
            goto out;
        mr->c[mr->n] = rows[i].c;
        mr->rank[mr->n] = rows[i].rank;
        mr->above[mr->n] = 0;
        mr->asgood[mr->n] = 0;
        mr->home[mr->n] = shard;
        mr->n++;
    }
    rc = 0;
out:
    free(items);
    free(rows);
    return rc;
}

static void round_done(struct mread *mr);

static void call_done(struct mread *mr, int rc)
{
    if (rc && !mr->code)
        mr->code = rc;
    if (--mr->waiting == 0 && !mr->sending)
        round_done(mr);
}

static void on_rows(redisReply *r, void *privdata)
{
    struct mcall *k = privdata;
    struct mread *mr = k->mr;
    int rc = take_rows(mr, k->shard, r);
    free(k);
    call_done(mr, rc);
}

static void on_counts(int code, const struct rc_read_head *head, const int64_t *counts, size_t n, void *privdata)
{
    struct mcall *k = privdata;
    struct mread *mr = k->mr;
    int rc = code ? code : n != k->n ? RC_E_INTERNAL : 0;
    if (!rc) {
        int64_t *seen = &mr->counted_seq[k->shard];
        *seen = *seen == -1 || *seen == head->seq ? head->seq : -2;
        mr->part[k->shard].head = *head;
        for (size_t i = 0; i < n; i++) {
            size_t row = k->row[i];
            if (k->what[i] == 0)
                mr->rank[row] += counts[i];
            else if (k->what[i] == 1)
                mr->above[row] += counts[i];
            else
                mr->asgood[row] += counts[i];
        }
    }
    free(k->row);
    free(k->what);
    free(k);
    call_done(mr, rc);
}

/* The bound counting the members with points as good as composite c's
 * (desc: composites from the points' first slot; asc: below the next). */
static void asgood_bound(const struct rc_board *b, double c, double *bound, int *inclusive)
{
    double unit = rc_places_unit(b), key = rc_places_key(unit, c);
    int desc = b->layout.order == RC_ORDER_DESC;
    if (unit > 0) {
        *bound = desc ? key * unit : (key + 1) * unit;
        *inclusive = desc;
    } else {
        *bound = c;
        *inclusive = 1;
    }
}

/* Shard j's counts, RC_READ_COUNTS_MAX bounds a call (one call without
 * bounds when it has none to count: its head). Returns 0 or an RC_E_* (the
 * calls already sent still come back). */
static int send_counts(struct mread *mr, unsigned j, const char *name)
{
    size_t ntask = 0, *row = malloc((mr->n * 3 + 1) * sizeof *row);
    int *what = malloc((mr->n * 3 + 1) * sizeof *what);
    int rc = 0;
    if (!row || !what) {
        free(row);
        free(what);
        return RC_E_INTERNAL;
    }
    for (size_t i = 0; i < mr->n; i++) {
        if (mr->home[i] != j) {
            row[ntask] = i;
            what[ntask++] = 0;
        }
        for (int k = 1; k <= 2 && mr->places; k++) {
            row[ntask] = i;
            what[ntask++] = k;
        }
    }
    for (size_t off = 0; !rc && (off < ntask || (off == 0 && ntask == 0));) {
        size_t m = ntask - off < RC_READ_COUNTS_MAX ? ntask - off : RC_READ_COUNTS_MAX;
        double bounds[RC_READ_COUNTS_MAX];
        int incl[RC_READ_COUNTS_MAX];
        struct mcall *k = calloc(1, sizeof *k);
        if (k) {
            k->row = malloc((m ? m : 1) * sizeof *k->row);
            k->what = malloc((m ? m : 1) * sizeof *k->what);
        }
        if (!k || !k->row || !k->what) {
            rc = RC_E_INTERNAL;
        } else {
            for (size_t t = 0; t < m; t++) {
                size_t i = row[off + t];
                k->row[t] = i;
                k->what[t] = what[off + t];
                if (what[off + t] == 0) {
                    bounds[t] = mr->c[i];
                    incl[t] = rc_shard_count_inclusive(j, mr->home[i]);
                } else if (what[off + t] == 1) {
                    gw_read_merge_above_bound(mr->b, mr->c[i], &bounds[t], &incl[t]);
                } else {
                    asgood_bound(mr->b, mr->c[i], &bounds[t], &incl[t]);
                }
            }
            k->mr = mr;
            k->shard = j;
            k->n = m;
            mr->waiting++;
            if ((rc = gw_read_call_counts(mr->s, mr->b, name, mr->period, bounds, incl, m, on_counts, k)) != 0)
                mr->waiting--;
            else
                k = NULL;
        }
        if (k) {
            free(k->row);
            free(k->what);
            free(k);
        }
        off += m ? m : 1;
    }
    free(row);
    free(what);
    return rc;
}

/* Sends the round; 0 when at least one call went out (a later failure kept
 * for the round's end), else the code. */
static int send_round(struct mread *mr)
{
    char name[RC_SHARD_NAME_MAX + 1];
    unsigned sent = 0;
    mr->code = 0;
    mr->sending = 1;
    for (unsigned j = 0; j < mr->nshards && !mr->code; j++) {
        int rc;
        unsigned before = mr->waiting;
        if (rc_shard_name(name, sizeof name, mr->board, j) != 0) {
            rc = RC_E_INTERNAL;
        } else if (mr->counting) {
            rc = send_counts(mr, j, name);
        } else if (mr->list[j]) {
            struct rc_read_req req = {.kind = RC_READ_MEMBERS, .members = mr->list[j], .nmembers = mr->nlist[j],
                                      .live = mr->live};
            struct mcall *k = calloc(1, sizeof *k);
            rc = RC_E_INTERNAL;
            if (k) {
                k->mr = mr;
                k->shard = j;
                mr->waiting++;
                if ((rc = gw_read_call(mr->s, mr->b, name, mr->period, &req, on_rows, k)) != 0) {
                    mr->waiting--;
                    free(k);
                }
            }
        } else {
            continue;
        }
        sent += mr->waiting - before;
        if (rc)
            mr->code = rc;
    }
    mr->sending = 0;
    if (sent == 0)
        return mr->code ? mr->code : RC_E_INTERNAL;
    if (mr->waiting == 0)
        round_done(mr);
    return 0;
}

/* The window from both rounds: rows by global rank. */
static int build(struct mread *mr)
{
    struct gw_window *w = mr->w;
    gw_read_merge_head(w, mr->part, mr->nshards);
    for (unsigned j = 0; j < mr->nshards; j++)
        if (mr->counted_seq[j] < 0)
            w->nshards = 0; /* two seqs in one shard's counts: not a read the tracker can start from */
    if (w->nshards && (w->listed_seq = malloc(mr->nshards * sizeof *w->listed_seq)) != NULL)
        memcpy(w->listed_seq, mr->listed_seq, mr->nshards * sizeof *w->listed_seq);
    size_t *order = malloc((mr->n ? mr->n : 1) * sizeof *order);
    struct rc_read_row *rows = malloc((mr->n ? mr->n : 1) * sizeof *rows);
    int rc = RC_E_INTERNAL;
    if (!order || !rows)
        goto out;
    for (size_t i = 0; i < mr->n; i++) {
        size_t k = i;
        for (; k > 0 && mr->rank[order[k - 1]] > mr->rank[i]; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    for (size_t i = 0; i < mr->n; i++)
        rows[i] = (struct rc_read_row){mr->member[order[i]], mr->c[order[i]]};
    if ((rc = gw_window_set_rows(mr->b, w, rows, mr->n)) != 0)
        goto out;
    w->first_rank = 0;
    for (size_t i = 0; i < mr->n; i++) {
        size_t k = order[i];
        w->rows[i].rank = mr->rank[k];
        w->rows[i].place = mr->places ? 1 + mr->above[k] : 0;
        w->rows[i].tied = mr->places && mr->asgood[k] - mr->above[k] > 1;
    }
out:
    free(order);
    free(rows);
    return rc;
}

static void round_done(struct mread *mr)
{
    if (mr->code) {
        finish(mr, mr->code);
        return;
    }
    if (!mr->counting) {
        mr->counting = 1;
        int rc = send_round(mr);
        if (rc)
            finish(mr, rc);
        return;
    }
    int rc = build(mr);
    if (rc) {
        finish(mr, rc);
        return;
    }
    gw_join_profiles(mr->s->profiles, mr->w, on_joined, mr);
}

int gw_read_mshard_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                        const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata)
{
    if (!spec->members || !spec->nmembers || !spec->members_len || b->shards < 2 || b->shards > RC_SHARDS_MAX)
        return RC_E_BAD_REQUEST;
    struct mread *mr = calloc(1, sizeof *mr);
    if (!mr || !(mr->w = calloc(1, sizeof *mr->w))) {
        free(mr);
        return RC_E_INTERNAL;
    }
    *mr = (struct mread){.s = s, .b = b, .cb = cb, .privdata = privdata, .places = spec->places, .live = spec->live,
                         .nshards = b->shards, .w = mr->w};
    snprintf(mr->board, sizeof mr->board, "%s", board);
    snprintf(mr->period, sizeof mr->period, "%s", period);
    for (unsigned j = 0; j < mr->nshards; j++) {
        mr->listed_seq[j] = -1;
        mr->counted_seq[j] = -1;
    }
    /* each shard's part of the list, packed as the list is (rc_members.h) */
    int rc = 0;
    const char *p = spec->members;
    for (uint32_t i = 0; i < spec->nmembers && !rc; i++, p = rc_members_next(p)) {
        unsigned j = rc_shard_of(p, mr->nshards);
        size_t len = strlen(p) + 1;
        char *nl = realloc(mr->list[j], mr->lenlist[j] + len);
        if (!nl) {
            rc = RC_E_INTERNAL;
            break;
        }
        memcpy(nl + mr->lenlist[j], p, len);
        mr->list[j] = nl;
        mr->lenlist[j] += (uint32_t)len;
        mr->nlist[j]++;
    }
    if (!rc)
        rc = send_round(mr);
    if (rc) {
        for (unsigned j = 0; j < mr->nshards; j++)
            free(mr->list[j]);
        gw_window_free(mr->w);
        free(mr);
    }
    return rc;
}
