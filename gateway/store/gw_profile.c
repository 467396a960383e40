/* gw_profile.c - the profile cache (see gw_profile.h): member -> refcounted
 * profile in a core/rc_hmap (keyed hash: members are chosen by clients), with
 * a fetched-at time for the ttl. */
#include "store/gw_profile.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <uv.h>

#include "redis/gw_redis.h"
#include "store/gw_store.h"
#include "rc_hmap.h"
#include "rc_keys.h"

struct entry {
    struct rc_hnode node;   /* first: the table hands back this */
    int64_t fetched_ms;
    struct rc_profile *profile;
    char member[];
};

struct gw_profiles {
    const struct gw_store *s;
    int64_t ttl_ms;
    size_t max_entries;
    struct rc_hash_key seed;
    struct rc_hmap map;     /* of struct entry */
    struct rc_profile *empty; /* the one empty profile every member without one shares (a reference) */
};

/* One batch of HGETALLs; cb runs when the last answer is in. */
struct batch {
    struct gw_profiles *p;
    unsigned pending;
    gw_profiles_cb *cb;
    void *privdata;
};

struct one {
    struct batch *b;
    char member[];
};

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

struct gw_profiles *gw_profile_new(const struct gw_store *s, int64_t ttl_ms, size_t max_entries)
{
    struct gw_profiles *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->s = s;
    p->ttl_ms = ttl_ms;
    p->max_entries = max_entries;
    uint64_t seed[2];
    if (uv_random(NULL, NULL, seed, sizeof seed, 0, NULL) != 0) {
        seed[0] = (uint64_t)gw_clock_mono_us(); /* weaker, still not a constant */
        seed[1] = (uint64_t)gw_store_now_ms(s);
    }
    p->seed = (struct rc_hash_key){seed[0], seed[1]};
    rc_hmap_init(&p->map, 64);
    return p;
}

/* Empties the cache (rows keep the profiles they hold a reference to). */
static void clear(struct gw_profiles *p)
{
    for (size_t i = 0; i < p->map.nbuckets; i++) {
        struct rc_hnode *n = p->map.buckets[i];
        while (n) {
            struct rc_hnode *next = n->next;
            struct entry *e = (struct entry *)n;
            gw_profile_unref(e->profile);
            free(e);
            n = next;
        }
    }
    rc_hmap_free(&p->map);
    rc_hmap_init(&p->map, 64);
}

void gw_profile_free(struct gw_profiles *p)
{
    if (!p)
        return;
    clear(p);
    rc_hmap_free(&p->map);
    gw_profile_unref(p->empty);
    free(p);
}

void gw_profile_ref(struct rc_profile *pr)
{
    if (pr)
        pr->refs++;
}

void gw_profile_unref(struct rc_profile *pr)
{
    if (pr && --pr->refs == 0)
        free(pr);
}

static int entry_eq(const struct rc_hnode *n, const void *member)
{
    return strcmp(((const struct entry *)n)->member, member) == 0;
}

static uint64_t member_hash(const struct gw_profiles *p, const char *member)
{
    return rc_hmap_hash(&p->seed, member, strlen(member));
}

static struct entry *find(const struct gw_profiles *p, const char *member)
{
    return (struct entry *)rc_hmap_find(&p->map, member_hash(p, member), entry_eq, member);
}

struct rc_profile *gw_profile_get(struct gw_profiles *p, const char *member)
{
    struct entry *e = find(p, member);
    if (!e || gw_store_now_ms(p->s) - e->fetched_ms > p->ttl_ms)
        return NULL;
    return e->profile;
}

/* One allocation: the struct, the pairs, then the strings. */
static struct rc_profile *make(const struct rc_kv *kv, unsigned n)
{
    size_t bytes = sizeof(struct rc_profile) + n * sizeof(struct rc_kv);
    for (unsigned i = 0; i < n; i++)
        bytes += strlen(kv[i].key) + strlen(kv[i].value) + 2;
    struct rc_profile *pr = malloc(bytes);
    if (!pr)
        return NULL;
    pr->refs = 1;
    pr->n = n;
    pr->kv = (struct rc_kv *)(pr + 1);
    char *s = (char *)(pr->kv + n);
    uint64_t h = 1469598103934665603ULL;
    for (unsigned i = 0; i < n; i++) {
        size_t kl = strlen(kv[i].key) + 1, vl = strlen(kv[i].value) + 1;
        memcpy(s, kv[i].key, kl);
        pr->kv[i].key = s;
        s += kl;
        memcpy(s, kv[i].value, vl);
        pr->kv[i].value = s;
        s += vl;
        h = (h ^ fnv(kv[i].key, kl)) * 31 + fnv(kv[i].value, vl);
    }
    pr->hash = h;
    return pr;
}

/* A new reference to p's shared empty profile, or NULL on OOM. Members
 * without a profile (most, on many boards) all hold this one: every row's
 * profile is looked at when its delta is diffed and written, and one
 * allocation per member scattered over the heap was a cache miss per row
 * (issue 26: at 3,000 member lists, the most of the rows' encoding). */
static struct rc_profile *empty_ref(struct gw_profiles *p)
{
    if (!p->empty && !(p->empty = make(NULL, 0)))
        return NULL;
    gw_profile_ref(p->empty);
    return p->empty;
}

struct rc_profile *gw_profile_put(struct gw_profiles *p, const char *member, const struct rc_kv *kv, unsigned n)
{
    struct rc_profile *pr = n ? make(kv, n) : empty_ref(p);
    if (!pr)
        return NULL;
    struct entry *e = find(p, member);
    if (!e) {
        if (p->map.count >= p->max_entries)
            clear(p); /* crude but bounded: start over */
        size_t ml = strlen(member) + 1;
        e = malloc(sizeof *e + ml);
        if (!e) {
            gw_profile_unref(pr);
            return NULL;
        }
        memcpy(e->member, member, ml);
        e->profile = NULL;
        if (rc_hmap_insert(&p->map, &e->node, member_hash(p, member)) != 0) {
            free(e);
            gw_profile_unref(pr);
            return NULL;
        }
    }
    gw_profile_unref(e->profile);
    e->profile = pr;
    e->fetched_ms = gw_store_now_ms(p->s);
    return pr;
}

static void on_hgetall(redisReply *reply, void *privdata)
{
    struct one *o = privdata;
    struct batch *b = o->b;
    struct rc_kv kv[GW_PROFILE_MAX_FIELDS];
    unsigned n = 0;
    if (reply && reply->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i + 1 < reply->elements && n < GW_PROFILE_MAX_FIELDS; i += 2) {
            const redisReply *k = reply->element[i], *v = reply->element[i + 1];
            if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING || v->len > GW_PROFILE_MAX_VALUE ||
                strlen(k->str) != k->len || strlen(v->str) != v->len)
                continue; /* binary junk in a profile is not shown */
            kv[n].key = k->str;
            kv[n].value = v->str;
            n++;
        }
    }
    /* On a failed read cache an empty profile: rows still go out; the ttl
     * brings the name back later. */
    gw_profile_put(b->p, o->member, kv, n);
    free(o);
    if (--b->pending == 0) {
        b->cb(b->privdata);
        free(b);
    }
}

int gw_profile_fetch(struct gw_profiles *p, const char *const *members, size_t n, gw_profiles_cb *cb,
                      void *privdata)
{
    struct gw_redis *redis = p->s->redis;
    struct batch *b = NULL;
    for (size_t i = 0; i < n; i++) {
        if (gw_profile_get(p, members[i]))
            continue;
        if (!redis || (!b && !gw_redis_is_up(redis)))
            return -1;
        if (!b) {
            b = calloc(1, sizeof *b);
            if (!b)
                return -1;
            b->p = p;
            b->cb = cb;
            b->privdata = privdata;
            b->pending = 1; /* held until the loop below is done */
        }
        size_t ml = strlen(members[i]) + 1;
        struct one *o = malloc(sizeof *o + ml);
        char key[RC_KEY_MAX];
        if (!o || rc_keys_profile(key, sizeof key, members[i]) != 0) {
            free(o);
            continue;
        }
        memcpy(o->member, members[i], ml);
        o->b = b;
        const char *argv[] = {"HGETALL", key};
        size_t lens[] = {7, strlen(key)};
        /* routed by the profile's own key (each profile has its own slot) */
        if (gw_redis_command(redis, key, lens[1], 2, argv, lens, on_hgetall, o) == 0)
            b->pending++;
        else
            free(o);
    }
    if (!b) {
        cb(privdata);
        return 0;
    }
    if (--b->pending == 0) {
        cb(privdata);
        free(b);
    }
    return 0;
}
