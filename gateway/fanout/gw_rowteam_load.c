/* gw_rowteam_load.c - a board with teams' membership read from Redis (one
 * HGETALL of rc:{B|}:tm: member -> team id, and "#TEAM" counts, skipped)
 * when its first viewer comes and after Redis or its channel came back, and
 * kept current by the team messages of lua/write.lua's op team on its
 * channel. Either way every view of the board is brought up to date: its
 * rows' "team" (gw_rowteam.c) may have changed, and the delta rule resends
 * a row whose team changed (core/rc_delta.c). Messages carry the
 * membership's version: the next one is applied, one the last read had is
 * dropped, and any other (a lost message, or a late one from a node that
 * ran a held call after it lost its primary role) makes the membership be
 * read again (core/rc_event.h, rc_event_team_judge). A message that comes
 * while a read is out is applied, and the read done again once back when
 * it did not reach the message's version (the message and the reply come
 * over two connections). A periodic board's membership is its period's
 * (rc:{B|P}:tm, docs/teams.md "Periods"): a board of the current period
 * whose membership does not exist yet (no "#") has it seeded from the
 * latest earlier period's, then read again; a past period's is read as it
 * is (never seeded by a viewer: nothing would expire it). */
#include "fanout/gw_rowteam_load.h"

#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_clock.h"
#include "base/gw_log.h"
#include "redis/gw_redis.h"
#include "redis/gw_teamseed.h"
#include "rc_event.h"
#include "rc_keys.h"
#include "rc_names.h"
#include "rc_team_args.h"

/* Every view of b may show another team on a row now. */
static void refresh_views(struct gw_board *b)
{
    b->changed = b->mirror_on;
    b->refresh_all = b->mirror_on;
    if (b->changed)
        gw_board_wake(b);
    gw_board_mark_reads_dirty(b);
}

void gw_rowteam_load_roster_view(struct gw_view *v)
{
    struct gw_board *b = v->board;
    if (!b || v->dead || !b->rt || !b->rt->loaded)
        return;
    char *list;
    uint32_t n, len;
    if (gw_rowteam_roster(b->rt, v->r.spec.around, &list, &n, &len) != 0) {
        gw_board_view_set_dirty(v); /* (out of memory: the old list, read again) */
        return;
    }
    free(v->roster);
    v->roster = list;
    v->nroster = n;
    v->roster_len = len;
    v->roster_ok = 1;
    v->roster_gen++; /* a read out now is of the old list: on_view_read reads again */
    v->force_snapshot = v->last != NULL;
    rc_vtrack_forget(&v->trk);
    v->mmoved = 0;
    gw_board_view_set_dirty(v);
}

/* The rosters of b (those of team `team` only, when not NULL) follow its
 * membership. */
static void rosters(struct gw_board *b, const char *team, const char *team2)
{
    for (struct gw_view *v = b->reads; v; v = v->knext)
        if (v->r.spec.kind == RC_VIEW_TEAM &&
            (!team || strcmp(v->r.spec.around, team) == 0 || (team2 && strcmp(v->r.spec.around, team2) == 0)))
            gw_rowteam_load_roster_view(v);
}

static void on_seeded(int code, void *privdata)
{
    struct gw_board *b = privdata;
    (void)code; /* (failed: read as it is; a write seeds it, and its notifications bring a read) */
    b->rt->loading = 0;
    gw_rowteam_load(b, 1);
    gw_board_unref(b);
}

/* Starts seeding b's period's membership when reply r shows none and b is
 * of the current period: 1 when started (on_seeded reads again). */
static int seed_first(struct gw_board *b, const redisReply *r)
{
    struct gw_rowteam *rt = b->rt;
    if (!b->r.period[0] || rt->seed_tried)
        return 0;
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        if (r->element[i]->type == REDIS_REPLY_STRING && r->element[i]->len == 1 && r->element[i]->str[0] == '#')
            return 0; /* seeded */
    struct rc_period p;
    int64_t now = gw_now_ms(b->f->app);
    if (rc_period_parse(&b->decl->period, b->r.period, &p) != 0 || p.end_ms <= now || p.start_ms > now)
        return 0;
    rt->seed_tried = 1;
    return gw_teamseed_run(b->f->app->redis, b->decl, &p, now, on_seeded, b) == 0;
}

static void on_loaded(redisReply *r, void *privdata)
{
    struct gw_board *b = privdata;
    struct gw_rowteam *rt = b->rt;
    if (!b->dead && r && r->type == REDIS_REPLY_ARRAY && seed_first(b, r))
        return; /* still loading; the ref goes with on_seeded */
    rt->loading = 0;
    if (!b->dead && r && r->type == REDIS_REPLY_ARRAY && r->elements % 2 == 0) {
        gw_rowteam_clear(rt);
        uint64_t ver = 0;
        for (size_t i = 0; i + 1 < r->elements; i += 2) {
            const redisReply *k = r->element[i], *v = r->element[i + 1];
            if (k->type == REDIS_REPLY_STRING && k->len == 1 && k->str[0] == '#' && v->type == REDIS_REPLY_STRING)
                ver = strtoull(v->str, NULL, 10); /* the version (lua/write.lua, op team) */
            if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING || k->str[0] == '#' ||
                !rc_names_member_name_valid(k->str, k->len) || !rc_names_member_name_valid(v->str, v->len))
                continue;
            (void)gw_rowteam_set(rt, k->str, v->str); /* (out of memory: that row shows no team) */
        }
        rt->loaded = 1;
        rt->ver = rt->read_ver = ver;
        if (rt->heard_ver > ver)
            rt->again = 1; /* a message named a newer version while it was out */
        refresh_views(b);
        rosters(b, NULL, NULL);
    } else if (!b->dead && r) {
        gw_log_warn("board %s: its team membership could not be read", b->r.name);
    }
    int again = rt->again && !b->dead;
    rt->again = 0;
    rt->heard_ver = 0;
    if (again)
        gw_rowteam_load(b, 1);
    gw_board_unref(b);
}

void gw_rowteam_load(struct gw_board *b, int again)
{
    if (!b->decl->teams[0] || b->dead)
        return;
    if (!b->rt && !(b->rt = gw_rowteam_new(b->f->vkey)))
        return; /* (out of memory: rows show no team) */
    struct gw_rowteam *rt = b->rt;
    if (rt->loading) {
        rt->again |= again;
        return;
    }
    if (rt->loaded && !again)
        return;
    char key[RC_KEY_MAX];
    if (rc_team_args_tm_key(key, sizeof key, b->r.name, b->r.period, "tm"))
        return;
    const char *argv[2] = {"HGETALL", key};
    b->refs++;
    rt->loading = 1;
    rc_ksteam_clear(&rt->ks); /* (the read sees what they announced) */
    if (gw_redis_command(b->f->app->redis, key, strlen(key), 2, argv, NULL, on_loaded, b) != 0) {
        rt->loading = 0;
        b->refs--; /* read when Redis is back (gw_fanout_redis_up) */
    }
}

void gw_rowteam_load_heard(struct gw_board *b, const char *payload, size_t len)
{
    char member[RC_MEMBER_MAX + 1], team[RC_MEMBER_MAX + 1];
    uint64_t v;
    if (rc_event_team_parse(payload, len, member, team, &v) != 0) {
        gw_log_warn("unparsable team message on board %s", b->r.name);
        return;
    }
    struct gw_rowteam *rt = b->rt;
    if (!rt)
        return; /* (not read yet: the read will have it) */
    const char *was = gw_rowteam_of(rt, member);
    char old[RC_MEMBER_MAX + 1];
    snprintf(old, sizeof old, "%s", was ? was : "");
    /* the writes it announces (lua/write.lua, op team): the old team's
     * count (HINCRBY or HDEL), then HSET and HINCRBY of the new, or HDEL,
     * then the version's HINCRBY */
    rc_ksteam_explained(&rt->ks, (old[0] ? 1 : 0) + (team[0] ? 2 : 1) + (v ? 1 : 0));
    if (rt->loading) {
        if (!v)
            rt->again = 1; /* (no version: the read may predate it or not) */
        else if (v > rt->heard_ver)
            rt->heard_ver = v;
    } else {
        switch (rc_event_team_judge(rt->ver, rt->read_ver, v)) {
        case RC_TEAMV_KNOWN:
            return;
        case RC_TEAMV_READ:
            gw_log_info("board %s: team message of version %llu, the membership held is at %llu: read again",
                        b->r.name, (unsigned long long)v, (unsigned long long)rt->ver);
            gw_rowteam_load(b, 1);
            return;
        case RC_TEAMV_APPLY:
            if (v)
                rt->ver = v;
            break;
        }
    }
    if (gw_rowteam_set(rt, member, team) != 0) {
        /* (out of memory: the membership held is not the version it says;
         * read it whole, now or once the read out is back) */
        if (rt->loading)
            rt->again = 1;
        else
            gw_rowteam_load(b, 1);
    }
    refresh_views(b);
    rosters(b, old[0] ? old : team, team[0] ? team : NULL);
}

void gw_rowteam_load_keyspace(struct gw_board *b, const char *payload, size_t len)
{
    struct gw_rowteam *rt = b->rt;
    if (!rt || !rt->loaded)
        return; /* (not read yet, or a read is coming: it will have it) */
    if (len == 3 && memcmp(payload, "del", 3) == 0)
        rc_ksteam_heard(&rt->ks, 1); /* anyone's DEL (op team never empties the hash: "#" stays) */
    else if (!(len == 6 && memcmp(payload, "expire", 6) == 0))
        rc_ksteam_heard(&rt->ks, 0);
    gw_board_wake(b);
}

/* How long writes to the membership may stay unexplained before they are
 * taken for changes made outside rankcast (core/rc_ksteam.h: on a cluster
 * a team op's keyspace notifications and its team message come over two
 * connections, the message possibly ticks later); an out-of-band edit is
 * rare and may wait a second. */
#define KS_WAIT_US 1000000

void gw_rowteam_load_tick(struct gw_board *b)
{
    struct gw_rowteam *rt = b->rt;
    if (!rt || rt->loading || !gw_rowteam_ks_pending(rt))
        return;
    enum rc_ksteam_verdict verdict = rc_ksteam_tick(&rt->ks, gw_clock_mono_us(), KS_WAIT_US);
    if (verdict == RC_KSTEAM_WAIT)
        gw_board_wake(b); /* its team messages may still come */
    if (verdict != RC_KSTEAM_OUTSIDE)
        return;
    gw_log_info("board %s: its team membership changed outside rankcast: read again", b->r.name);
    gw_rowteam_load(b, 1);
}
