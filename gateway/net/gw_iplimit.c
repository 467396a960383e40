/* gw_iplimit.c - per-address entries in a chained hash table (see
 * gw_iplimit.h). */
#include "net/gw_iplimit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 4096

struct entry {
    struct entry *next;
    struct gw_ipentry e;
    char ip[];
};

struct gw_iplimit {
    struct entry *buckets[BUCKETS];
};

static struct entry **slot(struct gw_iplimit *l, const char *ip)
{
    uint32_t h = 2166136261u;
    for (const char *p = ip; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    struct entry **e = &l->buckets[h % BUCKETS];
    while (*e && strcmp((*e)->ip, ip) != 0)
        e = &(*e)->next;
    return e;
}

struct gw_iplimit *gw_iplimit_new(void)
{
    return calloc(1, sizeof(struct gw_iplimit));
}

void gw_iplimit_free(struct gw_iplimit *l)
{
    if (!l)
        return;
    for (int i = 0; i < BUCKETS; i++) {
        for (struct entry *e = l->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(l);
}

struct gw_ipentry *gw_iplimit_find(struct gw_iplimit *l, const char *ip)
{
    struct entry *e = *slot(l, ip);
    return e ? &e->e : NULL;
}

struct gw_ipentry *gw_iplimit_get(struct gw_iplimit *l, const char *ip)
{
    struct entry **at = slot(l, ip);
    if (!*at) {
        size_t n = strlen(ip) + 1;
        struct entry *e = calloc(1, sizeof *e + n);
        if (!e)
            return NULL;
        memcpy(e->ip, ip, n);
        *at = e;
    }
    return &(*at)->e;
}

/* 1 when b, last used at b->last_ms, is full again at now_ms. */
static int refilled(const struct rc_bucket *b, int64_t now_ms, double rate, double burst)
{
    if (b->last_ms == 0)
        return 1;
    return b->tokens + (double)(now_ms - b->last_ms) * rate / 1000.0 >= burst;
}

unsigned gw_iplimit_sweep(struct gw_iplimit *l, int64_t now_ms, double rate, double burst)
{
    unsigned left = 0;
    for (int i = 0; i < BUCKETS; i++) {
        for (struct entry **at = &l->buckets[i]; *at;) {
            struct entry *e = *at;
            if (e->e.count == 0 && refilled(&e->e.reads, now_ms, rate, burst)) {
                *at = e->next;
                free(e);
            } else {
                at = &e->next;
                left++;
            }
        }
    }
    return left;
}
