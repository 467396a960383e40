/* rc_instances.c - the index of a template's boards (see rc_instances.h). */
#include "rc_instances.h"

#include <stdio.h>
#include <string.h>

#include "rc_decay.h"
#include "rc_err.h"

int rc_instances_indexed(const struct rc_board *tmpl)
{
    return tmpl && tmpl->is_template && (tmpl->period.kind != RC_PERIOD_NONE || tmpl->decay.kind != RC_DECAY_NONE);
}

int rc_instances_index_key(char *out, size_t cap, const struct rc_board *tmpl)
{
    if (!rc_instances_indexed(tmpl))
        return RC_E_INTERNAL;
    /* the template's name (with its '*') is the hash tag: no board's tag
     * can be the same, since a board name has no '*' */
    int n = snprintf(out, cap, "rc:{%s}:%s", tmpl->name, tmpl->period.kind != RC_PERIOD_NONE ? "periods" : "boards");
    return n < 0 || (size_t)n >= cap ? RC_E_INTERNAL : 0;
}

int rc_instances_of(const struct rc_board *tmpl, const char *name, size_t len)
{
    size_t plen = strlen(tmpl->name);
    if (!tmpl->is_template || plen == 0)
        return 0;
    plen--; /* without the '*' */
    return len > plen && memcmp(name, tmpl->name, plen) == 0 && rc_names_board_name_valid(name, len);
}

int rc_instances_entry(const struct rc_board *tmpl, const char *name, const struct rc_period *p, int64_t now_ms,
                  char *member, size_t cap, int64_t *score)
{
    int n;
    if (!rc_instances_indexed(tmpl) || !rc_instances_of(tmpl, name, strlen(name)))
        return RC_E_INTERNAL;
    if (tmpl->period.kind != RC_PERIOD_NONE) {
        if (!p || !p->id[0])
            return RC_E_INTERNAL;
        n = snprintf(member, cap, "%s|%s", name, p->id);
        *score = p->end_ms;
    } else {
        n = snprintf(member, cap, "%s", name);
        *score = 0;
        if (tmpl->decay.kind == RC_DECAY_BUCKETS) {
            int64_t index;
            if (rc_decay_bucket_of(&tmpl->decay, now_ms, &index) != 0)
                return RC_E_INTERNAL;
            *score = (index + 1) * tmpl->decay.bucket_ms;
        }
    }
    return n < 0 || (size_t)n >= cap ? RC_E_INTERNAL : 0;
}

int rc_instances_entry_parse(const struct rc_board *tmpl, const char *member, size_t len, char *name,
                        struct rc_period *p)
{
    const char *bar = memchr(member, '|', len);
    if (!bar || tmpl->period.kind == RC_PERIOD_NONE)
        return RC_E_BAD_REQUEST;
    size_t nlen = (size_t)(bar - member), plen = len - nlen - 1;
    char id[RC_PERIOD_ID_MAX];
    if (nlen > RC_BOARD_MAX || plen == 0 || plen >= sizeof id || !rc_instances_of(tmpl, member, nlen))
        return RC_E_BAD_REQUEST;
    memcpy(id, bar + 1, plen);
    id[plen] = '\0';
    if (memchr(id, '\0', plen) || rc_period_parse(&tmpl->period, id, p) != 0)
        return RC_E_BAD_REQUEST;
    memcpy(name, member, nlen);
    name[nlen] = '\0';
    return 0;
}

/* ---- the seen set ------------------------------------------------------------- */

void rc_instances_seen_init(struct rc_inst_seen *s, struct rc_hash_key key)
{
    memset(s, 0, sizeof *s);
    s->key = key;
}

static uint64_t seen_hash(const struct rc_inst_seen *s, const char *member, int64_t score)
{
    char buf[RC_INST_ENTRY_MAX + 24];
    int n = snprintf(buf, sizeof buf, "%s#%lld", member, (long long)score);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    uint64_t h = rc_hmap_hash(&s->key, buf, len);
    return h ? h : 1; /* 0 marks an empty slot */
}

int rc_instances_seen_has(const struct rc_inst_seen *s, const char *member, int64_t score)
{
    uint64_t h = seen_hash(s, member, score);
    for (size_t i = h & (RC_INST_SEEN_SLOTS - 1);; i = (i + 1) & (RC_INST_SEEN_SLOTS - 1)) {
        if (s->slot[i] == 0)
            return 0;
        if (s->slot[i] == h)
            return 1;
    }
}

void rc_instances_seen_add(struct rc_inst_seen *s, const char *member, int64_t score)
{
    uint64_t h = seen_hash(s, member, score);
    if (rc_instances_seen_has(s, member, score))
        return;
    if (s->count >= RC_INST_SEEN_SLOTS / 4 * 3) {
        memset(s->slot, 0, sizeof s->slot);
        s->count = 0;
    }
    size_t i = h & (RC_INST_SEEN_SLOTS - 1);
    while (s->slot[i] != 0)
        i = (i + 1) & (RC_INST_SEEN_SLOTS - 1);
    s->slot[i] = h;
    s->count++;
}
