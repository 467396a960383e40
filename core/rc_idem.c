/* rc_idem.c - idempotency records per writer, counted in slots (see rc_idem.h). */
#include "rc_idem.h"

#include <string.h>

static int64_t slot_ms(int64_t window_ms)
{
    int64_t s = (window_ms + RC_IDEM_SLOTS - 2) / (RC_IDEM_SLOTS - 1); /* round up: cover the window */
    return s > 0 ? s : 1;
}

/* Moves ct to the slot of now_ms, emptying the slots it passes. */
static void advance(struct rc_idem_count *ct, int64_t window_ms, int64_t now_ms)
{
    int64_t now = now_ms / slot_ms(window_ms);
    if (now <= ct->slot)
        return; /* the clock never runs back here; a step back counts in the newest slot */
    if (now - ct->slot >= RC_IDEM_SLOTS)
        memset(ct->n, 0, sizeof ct->n);
    else
        for (int64_t i = ct->slot + 1; i <= now; i++)
            ct->n[i % RC_IDEM_SLOTS] = 0;
    ct->slot = now;
}

int64_t rc_idem_window_ms(const struct rc_conf *c)
{
    int64_t w = 0;
    for (size_t i = 0; i < c->nboards; i++)
        if (c->boards[i].idempotency_ms > w)
            w = c->boards[i].idempotency_ms;
    return w > 0 ? w : 1000;
}

uint64_t rc_idem_floor(const struct rc_conf *c)
{
    uint64_t spans = (uint64_t)slot_ms(rc_idem_window_ms(c)) * RC_IDEM_SLOTS; /* ms the slots cover at most */
    return ((uint64_t)c->key_write_rate * spans + 999) / 1000 + c->key_write_burst;
}

uint64_t rc_idem_cap(const struct rc_conf *c)
{
    return c->idem_max_per_key ? c->idem_max_per_key : rc_idem_floor(c);
}

uint64_t rc_idem_live(struct rc_idem_count *ct, int64_t window_ms, int64_t now_ms)
{
    uint64_t sum = 0;
    advance(ct, window_ms, now_ms);
    for (int i = 0; i < RC_IDEM_SLOTS; i++)
        sum += ct->n[i];
    return sum;
}

int rc_idem_take(struct rc_idem_count *ct, uint64_t cap, int64_t window_ms, int64_t now_ms, int64_t *slot)
{
    if (rc_idem_live(ct, window_ms, now_ms) >= cap || ct->n[ct->slot % RC_IDEM_SLOTS] == UINT32_MAX)
        return 0;
    ct->n[ct->slot % RC_IDEM_SLOTS]++;
    *slot = ct->slot;
    return 1;
}

void rc_idem_give_back(struct rc_idem_count *ct, int64_t slot)
{
    if (slot > ct->slot || ct->slot - slot >= RC_IDEM_SLOTS)
        return;
    uint32_t *n = &ct->n[slot % RC_IDEM_SLOTS];
    if (*n > 0)
        (*n)--;
}
