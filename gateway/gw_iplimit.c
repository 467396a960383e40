/* gw_iplimit.c - per-address connection counts in a chained hash table; an
 * address whose count drops to zero is forgotten, so memory follows the
 * connections actually open. */
#include "gw_iplimit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 1024

struct entry {
    struct entry *next;
    unsigned count;
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

unsigned gw_iplimit_count(const struct gw_iplimit *l, const char *ip)
{
    struct entry *e = *slot((struct gw_iplimit *)l, ip);
    return e ? e->count : 0;
}

int gw_iplimit_add(struct gw_iplimit *l, const char *ip)
{
    struct entry **at = slot(l, ip);
    if (!*at) {
        size_t n = strlen(ip) + 1;
        struct entry *e = malloc(sizeof *e + n);
        if (!e)
            return -1;
        e->next = NULL;
        e->count = 0;
        memcpy(e->ip, ip, n);
        *at = e;
    }
    (*at)->count++;
    return 0;
}

void gw_iplimit_remove(struct gw_iplimit *l, const char *ip)
{
    struct entry **at = slot(l, ip);
    if (*at && --(*at)->count == 0) {
        struct entry *e = *at;
        *at = e->next;
        free(e);
    }
}
