/* bench_window.c - viewer windows for rankcast-bench --verify (see bench_window.h). */
#include "bench_window.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SLOTS 64

struct intern_ent {
    char *s;
    size_t len;
    uint32_t id;
};

struct cache_ent {
    uint64_t hash;
    char *text;
    size_t len;
    struct bench_msg msg;
};

struct bench_parser {
    struct intern_ent *tab;
    size_t tab_cap, tab_used;
    struct cache_ent cache[CACHE_SLOTS];
};

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

struct bench_parser *bench_parser_new(void)
{
    struct bench_parser *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->tab_cap = 1024;
    p->tab = calloc(p->tab_cap, sizeof *p->tab);
    if (!p->tab) {
        free(p);
        return NULL;
    }
    return p;
}

static void msg_clear(struct bench_msg *m)
{
    free(m->ranks);
    free(m->rows);
    free(m->removed);
    memset(m, 0, sizeof *m);
}

void bench_parser_free(struct bench_parser *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->tab_cap; i++)
        free(p->tab[i].s);
    free(p->tab);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(p->cache[i].text);
        msg_clear(&p->cache[i].msg);
    }
    free(p);
}

static int tab_grow(struct bench_parser *p)
{
    size_t cap = p->tab_cap * 2;
    struct intern_ent *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < p->tab_cap; i++) {
        if (!p->tab[i].s)
            continue;
        size_t j = fnv1a(p->tab[i].s, p->tab[i].len) & (cap - 1);
        while (t[j].s)
            j = (j + 1) & (cap - 1);
        t[j] = p->tab[i];
    }
    free(p->tab);
    p->tab = t;
    p->tab_cap = cap;
    return 0;
}

uint32_t bench_intern(struct bench_parser *p, const char *s, size_t len)
{
    if (p->tab_used * 2 >= p->tab_cap && tab_grow(p) != 0)
        return UINT32_MAX;
    size_t j = fnv1a(s, len) & (p->tab_cap - 1);
    while (p->tab[j].s) {
        if (p->tab[j].len == len && memcmp(p->tab[j].s, s, len) == 0)
            return p->tab[j].id;
        j = (j + 1) & (p->tab_cap - 1);
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = '\0';
    p->tab[j] = (struct intern_ent){copy, len, (uint32_t)p->tab_used};
    p->tab_used++;
    return p->tab[j].id;
}

static int64_t int_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

/* Fills m from the JSON object o; 0 or -1 (not a window message, or OOM). */
static int parse_into(struct bench_parser *p, const cJSON *o, struct bench_msg *m)
{
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op");
    if (!cJSON_IsString(op))
        return -1;
    if (strcmp(op->valuestring, "snapshot") == 0)
        m->kind = BENCH_MSG_SNAPSHOT;
    else if (strcmp(op->valuestring, "delta") == 0)
        m->kind = BENCH_MSG_DELTA;
    else
        return -1;
    m->seq = int_of(o, "seq");
    m->total = int_of(o, "total");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, "rows");
    const cJSON *removed = cJSON_GetObjectItemCaseSensitive(o, "removed");
    size_t nr = cJSON_IsArray(rows) ? (size_t)cJSON_GetArraySize(rows) : 0;
    size_t nd = cJSON_IsArray(removed) ? (size_t)cJSON_GetArraySize(removed) : 0;
    m->ranks = malloc((nr + 1) * sizeof *m->ranks);
    m->rows = malloc((nr + 1) * sizeof *m->rows);
    m->removed = malloc((nd + 1) * sizeof *m->removed);
    if (!m->ranks || !m->rows || !m->removed)
        return -1;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(r, "member");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(r, "score");
        if (!cJSON_IsString(mem))
            continue;
        uint32_t id = bench_intern(p, mem->valuestring, strlen(mem->valuestring));
        if (id == UINT32_MAX)
            return -1;
        m->ranks[m->nrows] = int_of(r, "rank");
        m->rows[m->nrows] = (struct bench_row){id, cJSON_IsNumber(sc) ? sc->valuedouble : 0};
        m->nrows++;
    }
    cJSON_ArrayForEach(r, removed) {
        if (!cJSON_IsString(r))
            continue;
        uint32_t id = bench_intern(p, r->valuestring, strlen(r->valuestring));
        if (id == UINT32_MAX)
            return -1;
        m->removed[m->nremoved++] = id;
    }
    return 0;
}

const struct bench_msg *bench_parse(struct bench_parser *p, const char *json, size_t len)
{
    uint64_t h = fnv1a(json, len);
    struct cache_ent *e = &p->cache[h % CACHE_SLOTS];
    if (e->text && e->hash == h && e->len == len && memcmp(e->text, json, len) == 0)
        return e->msg.kind ? &e->msg : NULL;
    free(e->text);
    e->text = NULL;
    msg_clear(&e->msg);
    cJSON *o = cJSON_ParseWithLength(json, len);
    if (!o)
        return NULL;
    int rc = parse_into(p, o, &e->msg);
    cJSON_Delete(o);
    if (rc != 0) {
        msg_clear(&e->msg);
        return NULL;
    }
    if ((e->text = malloc(len)) != NULL) {
        memcpy(e->text, json, len);
        e->len = len;
        e->hash = h;
    }
    return &e->msg;
}

static void remove_member(struct bench_window *w, uint32_t member)
{
    for (uint32_t i = 0; i < w->n; i++) {
        if (w->rows[i].member == member) {
            memmove(&w->rows[i], &w->rows[i + 1], (w->n - i - 1) * sizeof *w->rows);
            w->n--;
            return;
        }
    }
}

int bench_window_apply(struct bench_window *w, const struct bench_msg *m, int64_t first_rank, uint32_t limit)
{
    if (w->cap < limit + 1) {
        struct bench_row *rows = realloc(w->rows, (limit + 1) * sizeof *rows);
        if (!rows)
            return -1;
        w->rows = rows;
        w->cap = limit + 1;
    }
    if (m->kind == BENCH_MSG_SNAPSHOT)
        w->n = 0;
    /* 1. out go the removed members and every member a row names */
    for (size_t i = 0; i < m->nremoved; i++)
        remove_member(w, m->removed[i]);
    for (size_t i = 0; i < m->nrows; i++)
        remove_member(w, m->rows[i].member);
    /* 2. rows in ascending rank (the server sends them so) at rank - first */
    for (size_t i = 0; i < m->nrows; i++) {
        int64_t at = m->ranks[i] - first_rank;
        if (at < 0 || at >= (int64_t)limit)
            continue; /* outside the window: cut anyway */
        if (w->n == w->cap) /* the last row is past the window: cut anyway */
            w->n--;
        if (at > (int64_t)w->n)
            at = w->n;
        memmove(&w->rows[at + 1], &w->rows[at], (w->n - (uint32_t)at) * sizeof *w->rows);
        w->rows[at] = m->rows[i];
        w->n++;
    }
    /* 3. cut to the window's length */
    if (w->n > limit)
        w->n = limit;
    w->seq = m->seq;
    w->total = m->total;
    return 0;
}

int bench_window_equal(const struct bench_window *w, const struct bench_row *rows, size_t n, int64_t total)
{
    if (w->n != n || w->total != total)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (w->rows[i].member != rows[i].member || w->rows[i].score != rows[i].score)
            return 0;
    return 1;
}

void bench_window_free(struct bench_window *w)
{
    free(w->rows);
    memset(w, 0, sizeof *w);
}
