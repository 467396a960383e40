/* rc_shard.c - sharded boards: member -> shard, shard names, the merged
 * order, feed cursors (rc_shard.h). */
#include "rc_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned rc_shard_of(const char *member, unsigned shards)
{
    if (shards <= 1)
        return 0;
    uint32_t h = 2166136261u; /* FNV-1a, 32 bits */
    for (const unsigned char *p = (const unsigned char *)member; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h % shards;
}

int rc_shard_name(char *out, size_t cap, const char *board, unsigned i)
{
    int n = snprintf(out, cap, "%s#%u", board, i);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int rc_shard_split(const char *name, char *board, unsigned *index)
{
    const char *hash = strchr(name, '#');
    size_t blen = hash ? (size_t)(hash - name) : strlen(name);
    if (blen == 0 || blen > RC_BOARD_MAX)
        return -1;
    memcpy(board, name, blen);
    board[blen] = '\0';
    if (!hash)
        return 0;
    const char *d = hash + 1;
    size_t dl = strlen(d);
    if (dl == 0 || dl > 2 || (dl == 2 && d[0] == '0'))
        return -1;
    unsigned v = 0;
    for (size_t k = 0; k < dl; k++) {
        if (d[k] < '0' || d[k] > '9')
            return -1;
        v = v * 10 + (unsigned)(d[k] - '0');
    }
    if (v >= RC_SHARDS_MAX)
        return -1;
    *index = v;
    return 1;
}

int rc_shard_before(int desc, double ca, unsigned sa, const char *ma, double cb, unsigned sb, const char *mb)
{
    if (ca != cb)
        return desc ? ca > cb : ca < cb;
    if (sa != sb)
        return sa < sb;
    int m = strcmp(ma, mb);
    /* Redis orders equal scores by member, byte-wise; ZRANGE REV reverses it */
    return desc ? m > 0 : m < 0;
}

int rc_shard_count_inclusive(unsigned j, unsigned of)
{
    if (j == of)
        return -1;
    return j < of ? 1 : 0;
}

void rc_shard_stream_init(struct rc_shard_stream *s, int desc, unsigned n)
{
    s->desc = desc;
    s->n = n > RC_SHARDS_MAX ? RC_SHARDS_MAX : n;
    for (unsigned j = 0; j < RC_SHARDS_MAX; j++)
        s->member[j] = NULL;
}

void rc_shard_stream_offer(struct rc_shard_stream *s, unsigned j, double c, const char *member)
{
    if (j >= s->n)
        return;
    s->c[j] = c;
    s->member[j] = member;
}

void rc_shard_stream_clear(struct rc_shard_stream *s, unsigned j)
{
    if (j < s->n)
        s->member[j] = NULL;
}

int rc_shard_stream_next(const struct rc_shard_stream *s)
{
    int best = -1;
    for (unsigned j = 0; j < s->n; j++) {
        if (!s->member[j])
            continue;
        if (best < 0 || rc_shard_before(s->desc, s->c[j], j, s->member[j], s->c[best], (unsigned)best, s->member[best]))
            best = (int)j;
    }
    return best;
}

/* The same merge over whole runs (the sharded reads' window). */
size_t rc_shard_merge(int desc, const struct rc_shard_run *runs, unsigned nruns, size_t skip,
                      struct rc_shard_pick *out, size_t cap)
{
    struct rc_shard_stream st;
    size_t pos[RC_SHARDS_MAX] = {0};
    size_t written = 0;
    rc_shard_stream_init(&st, desc, nruns);
    for (unsigned j = 0; j < st.n; j++)
        if (runs[j].n > 0)
            rc_shard_stream_offer(&st, j, runs[j].c[0], runs[j].member[0]);
    while (written < cap) {
        int best = rc_shard_stream_next(&st);
        if (best < 0)
            break;
        if (skip > 0) {
            skip--;
        } else {
            out[written].shard = (unsigned)best;
            out[written].index = pos[best];
            written++;
        }
        if (++pos[best] < runs[best].n)
            rc_shard_stream_offer(&st, (unsigned)best, runs[best].c[pos[best]], runs[best].member[pos[best]]);
        else
            rc_shard_stream_clear(&st, (unsigned)best);
    }
    return written;
}

int64_t rc_shard_cursor_sum(const struct rc_shard_cursor *c)
{
    int64_t s = 0;
    for (unsigned i = 0; i < c->n; i++)
        s += c->seq[i];
    return s;
}

void rc_shard_cursor_set(struct rc_shard_cursor *c, unsigned i, int64_t seq, const char *epoch)
{
    if (i >= RC_SHARDS_MAX)
        return;
    c->seq[i] = seq;
    size_t n = strlen(epoch);
    if (n > RC_SHARD_EPOCH_HEX)
        n = RC_SHARD_EPOCH_HEX;
    memcpy(c->epoch[i], epoch, n);
    c->epoch[i][n] = '\0';
}

int rc_shard_cursor_format(const struct rc_shard_cursor *c, char *out, size_t cap)
{
    size_t at = 0;
    if (cap == 0)
        return -1;
    out[0] = '\0';
    for (unsigned i = 0; i < c->n; i++) {
        int w = snprintf(out + at, cap - at, "%s%s:%lld", i ? "." : "", c->epoch[i], (long long)c->seq[i]);
        if (w < 0 || (size_t)w >= cap - at)
            return -1;
        at += (size_t)w;
    }
    return 0;
}

static int is_hex_lower(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

int rc_shard_cursor_parse(const char *text, unsigned shards, struct rc_shard_cursor *c)
{
    memset(c, 0, sizeof *c);
    if (shards < 1 || shards > RC_SHARDS_MAX)
        return -1;
    const char *p = text;
    for (unsigned i = 0; i < shards; i++) {
        if (i > 0 && *p++ != '.')
            return -1;
        const char *colon = p;
        while (*colon && *colon != ':')
            colon++;
        size_t el = (size_t)(colon - p);
        if (*colon != ':' || (el != 0 && el != RC_SHARD_EPOCH_HEX))
            return -1;
        for (size_t k = 0; k < el; k++)
            if (!is_hex_lower(p[k]))
                return -1;
        memcpy(c->epoch[i], p, el);
        c->epoch[i][el] = '\0';
        p = colon + 1;
        int64_t v = 0;
        size_t digits = 0;
        while (*p >= '0' && *p <= '9') {
            if (digits >= 18)
                return -1;
            v = v * 10 + (*p - '0');
            p++;
            digits++;
        }
        if (digits == 0)
            return -1;
        c->seq[i] = v;
    }
    if (*p != '\0')
        return -1;
    c->n = shards;
    return 0;
}

void rc_shard_epoch(const char *const *epochs, unsigned shards, char *out)
{
    int any = 0;
    uint64_t h = 14695981039346656037ull; /* FNV-1a, 64 bits */
    char part[RC_EPOCH_MAX + 16];
    for (unsigned i = 0; i < shards; i++) {
        if (epochs[i][0])
            any = 1;
        int n = snprintf(part, sizeof part, "%u=%s;", i, epochs[i]);
        for (int k = 0; k < n && k < (int)sizeof part - 1; k++) {
            h ^= (unsigned char)part[k];
            h *= 1099511628211ull;
        }
    }
    if (!any) {
        out[0] = '\0';
        return;
    }
    snprintf(out, RC_EPOCH_MAX + 1, "%016llx", (unsigned long long)h);
}

enum rc_shard_step rc_shard_step(const struct rc_shard_cursor *c, unsigned shard, int64_t seq, const char *epoch,
                                 int reset)
{
    if (shard >= c->n)
        return RC_SHARD_RESYNC;
    char pre[RC_SHARD_EPOCH_HEX + 1];
    size_t n = strlen(epoch);
    if (n > RC_SHARD_EPOCH_HEX)
        n = RC_SHARD_EPOCH_HEX;
    memcpy(pre, epoch, n);
    pre[n] = '\0';
    if (epoch[0] && strcmp(pre, c->epoch[shard]) != 0) {
        /* a new history on the shard: the first write of a shard that had
         * none goes on; anything else starts the feed over */
        if (c->epoch[shard][0] || c->seq[shard] != 0 || seq != 1 || reset)
            return RC_SHARD_RESYNC;
        return RC_SHARD_BEGAN;
    }
    if (seq <= c->seq[shard])
        return RC_SHARD_SKIP;
    return seq == c->seq[shard] + 1 ? RC_SHARD_NEXT : RC_SHARD_RESYNC;
}

int rc_shard_replayable(const struct rc_shard_cursor *c, const struct rc_shard_cursor *now, const int64_t *first_seq)
{
    if (c->n != now->n)
        return 0;
    for (unsigned i = 0; i < c->n; i++) {
        if (strcmp(c->epoch[i], now->epoch[i]) != 0) {
            if (c->epoch[i][0] || c->seq[i] != 0 || (now->seq[i] > 0 && first_seq[i] != 1))
                return 0;
            continue;
        }
        if (c->seq[i] > now->seq[i])
            return 0;
        if (c->seq[i] < now->seq[i] && (first_seq[i] == 0 || first_seq[i] > c->seq[i] + 1))
            return 0;
    }
    return 1;
}
