/* gw_hold.c - fair shares of max_boards: which source address holds each
 * board alone, how many boards each address holds, and which board a full
 * table gives up first (docs/security.md, "Fair shares of the board table").
 *
 * A board is held alone by address A when it is a template's instance
 * (match:N, not a [board] declaration), none of its viewers presented a key,
 * and every viewer connected from A. Such boards are what one address can
 * open at will, so:
 *   - an anonymous subscribe that would open a board is refused when its
 *     address already holds ip_board_share % of max_boards alone;
 *   - when the table is full, a board held alone by the address that holds
 *     the most (among the GW_FO_HOLD_SCAN longest held) is evicted for the
 *     new one, if that address holds at least two more boards than the
 *     asking one (so addresses at their share do not evict each other);
 *   - a declared board, or one a keyed viewer opens, evicts any board held
 *     alone, and is never refused because of anonymous boards: a declared
 *     one is opened even past max_boards (there are few: the config names
 *     them), a keyed one while guarded boards are fewer than max_boards.
 * Counts are kept per board (viewers, keyed viewers, viewers from its
 * holder's address) and updated in O(1) per subscribe; a board recounts
 * its viewers only when its holder's last viewer leaves and it still has
 * at most GW_FO_HOLD_RECOUNT of them (beyond that it stays held by nobody:
 * an attacker who pays that many subscriptions per board has few boards),
 * and after a period rollover moved views between boards.
 * With [server] workers > 1 every count is the worker's own, like
 * max_boards. */
#include <uv.h>

#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "net/gw_conn.h"
#include "rc_err.h"

#define GW_FO_HOLD_SCAN 64     /* boards held alone looked at for a victim */
#define GW_FO_HOLD_RECOUNT 64  /* viewers recounted when a board's holder leaves */

struct gw_holder {
    struct rc_hnode node;      /* in f->hmap, by address */
    unsigned refs;             /* boards that name it their holder */
    unsigned held;             /* of which held alone */
    char ip[sizeof ((struct gw_conn *)0)->peer];
};

static int holder_eq(const struct rc_hnode *n, const void *key)
{
    return strcmp(GW_FO_CONTAINER(n, struct gw_holder, node)->ip, key) == 0;
}

static struct gw_holder *holder_find(const struct gw_fanout *f, const char *ip)
{
    struct rc_hnode *n = rc_hmap_find(&f->hmap, rc_hmap_hash(&f->vkey, ip, strlen(ip)), holder_eq, ip);
    return n ? GW_FO_CONTAINER(n, struct gw_holder, node) : NULL;
}

/* ip's holder with one reference more (created when missing); NULL: OOM. */
static struct gw_holder *holder_ref(struct gw_fanout *f, const char *ip)
{
    struct gw_holder *h = holder_find(f, ip);
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h)
            return NULL;
        snprintf(h->ip, sizeof h->ip, "%s", ip);
        if (rc_hmap_insert(&f->hmap, &h->node, rc_hmap_hash(&f->vkey, ip, strlen(ip))) != 0) {
            free(h);
            return NULL;
        }
    }
    h->refs++;
    return h;
}

static void holder_unref(struct gw_fanout *f, struct gw_holder *h)
{
    if (--h->refs == 0) {
        rc_hmap_remove(&f->hmap, &h->node);
        free(h);
    }
}

void gw_hold_init(struct gw_fanout *f)
{
    rc_hmap_init(&f->hmap, 16);
}

void gw_hold_free(struct gw_fanout *f)
{
    rc_hmap_free(&f->hmap); /* empty by now: every board has gone */
}

static int is_template(const struct gw_board *b)
{
    return b->decl->is_template;
}

/* Takes b out of the counts (before they change) ... */
static void unsettle(struct gw_fanout *f, struct gw_board *b)
{
    if (b->alone) {
        b->holder->held--;
        if (b->aprev)
            b->aprev->anext = b->anext;
        else
            f->alone_head = b->anext;
        if (b->anext)
            b->anext->aprev = b->aprev;
        else
            f->alone_tail = b->aprev;
        b->anext = b->aprev = NULL;
        b->alone = 0;
    }
    if (b->guarded) {
        f->nguarded--;
        b->guarded = 0;
    }
}

/* ... and back in, as they are now (held alone: at the tail of f->alone). */
static void settle(struct gw_fanout *f, struct gw_board *b)
{
    b->guarded = b->nsubs > 0 && (!is_template(b) || b->keyed > 0);
    if (b->guarded)
        f->nguarded++;
    b->alone = !b->guarded && b->nsubs > 0 && b->holder && b->hsubs == b->nsubs;
    if (b->alone) {
        b->holder->held++;
        b->aprev = f->alone_tail;
        b->anext = NULL;
        if (f->alone_tail)
            f->alone_tail->anext = b;
        else
            f->alone_head = b;
        f->alone_tail = b;
    }
}

static void drop_holder(struct gw_fanout *f, struct gw_board *b)
{
    if (b->holder)
        holder_unref(f, b->holder);
    b->holder = NULL;
    b->hsubs = 0;
}

/* Counts b's viewers again from its views, and names the address of its
 * first anonymous viewer its holder (a template's board only). */
static void recount(struct gw_fanout *f, struct gw_board *b)
{
    drop_holder(f, b);
    b->nsubs = b->keyed = 0;
    const char *ip = NULL;
    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
        for (struct gw_sub *s = v->subs; s; s = s->vnext) {
            b->nsubs++;
            if (s->keyed)
                b->keyed++;
            else if (!ip)
                ip = s->conn->peer;
            if (!s->keyed && ip && strcmp(ip, s->conn->peer) == 0)
                b->hsubs++;
        }
    }
    if (ip && is_template(b) && (b->holder = holder_ref(f, ip)) == NULL)
        b->hsubs = 0; /* out of memory: held by nobody */
}

void gw_hold_join(struct gw_fanout *f, struct gw_board *b, struct gw_sub *s)
{
    unsettle(f, b);
    s->keyed = s->conn->who.key != NULL;
    b->nsubs++;
    if (s->keyed)
        b->keyed++;
    else if (b->holder && strcmp(b->holder->ip, s->conn->peer) == 0)
        b->hsubs++;
    else if (!b->holder && b->nsubs == 1 && is_template(b) && (b->holder = holder_ref(f, s->conn->peer)))
        b->hsubs = 1;
    settle(f, b);
}

void gw_hold_leave(struct gw_fanout *f, struct gw_board *b, const struct gw_sub *s)
{
    unsettle(f, b);
    b->nsubs--;
    if (s->keyed)
        b->keyed--;
    else if (b->holder && strcmp(b->holder->ip, s->conn->peer) == 0)
        b->hsubs--;
    if (b->nsubs == 0)
        drop_holder(f, b);
    else if ((!b->holder || b->hsubs == 0) && b->keyed == 0 && is_template(b) && b->nsubs <= GW_FO_HOLD_RECOUNT)
        recount(f, b);
    else if (b->holder && b->hsubs == 0)
        drop_holder(f, b);
    settle(f, b);
}

void gw_hold_recount(struct gw_fanout *f, struct gw_board *b)
{
    unsettle(f, b);
    recount(f, b);
    settle(f, b);
}

unsigned gw_hold_share(const struct gw_fanout *f)
{
    uint64_t n = (uint64_t)f->app->conf->max_boards * f->app->conf->ip_board_share / 100;
    return n ? (unsigned)n : 1;
}

/* The board to evict for a new one asked by `ip` (NULL: a declared board,
 * or a keyed viewer's), or NULL when none may go. */
static struct gw_board *victim(const struct gw_fanout *f, const char *ip)
{
    const struct gw_holder *me = ip ? holder_find(f, ip) : NULL;
    unsigned mine = me ? me->held : 0, looked = 0;
    struct gw_board *best = NULL;
    for (struct gw_board *b = f->alone_head; b && looked < GW_FO_HOLD_SCAN; b = b->anext) {
        if (b->holder == me && me)
            continue; /* its own: it is at its share of a full table (bounded: it holds at most that many) */
        looked++;
        if (!best || b->holder->held > best->holder->held)
            best = b;
    }
    if (best && ip && best->holder->held < mine + 2)
        return NULL; /* no address holds more than the asking one would */
    return best;
}

int gw_hold_admit(struct gw_fanout *f, const struct rc_board *decl, const struct gw_conn *c,
                     struct gw_board **evict, char *msg, size_t cap)
{
    const struct rc_conf *conf = f->app->conf;
    int anonymous = decl->is_template && c->who.key == NULL;
    *evict = NULL;
    if (anonymous) {
        const struct gw_holder *h = holder_find(f, c->peer);
        if (h && h->held >= gw_hold_share(f)) {
            snprintf(msg, cap, "this address holds its share of live boards (ip_board_share %u%% of max_boards %u)",
                     conf->ip_board_share, conf->max_boards);
            return RC_E_RATE_LIMITED;
        }
    }
    if (rc_registry_nboards(&f->reg) < conf->max_boards)
        return 0;
    if ((*evict = victim(f, anonymous ? c->peer : NULL)) != NULL)
        return 0;
    if (!decl->is_template || (!anonymous && f->nguarded < conf->max_boards))
        return 0; /* never refused because of anonymous boards */
    snprintf(msg, cap, "too many live boards on this gateway (max_boards %u)", conf->max_boards);
    return RC_E_RATE_LIMITED;
}
