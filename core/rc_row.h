/* rc_row.h - one row of a board window, the one shape every layer uses: a
 * read fills it (gateway/store), the mirror's windows hold it, the delta
 * rule compares it (core/rc_delta.h) and the encoders print it
 * (core/rc_proto.h), so no layer copies rows into another layer's type.
 * Types only: no functions. */
#ifndef RC_ROW_H
#define RC_ROW_H

#include <stdint.h>

#include "rc_layout.h"

struct rc_kv;

/* A member's profile (name, avatar, ...): the gateway's profile cache owns
 * it and counts references in refs; core only reads hash and kv. */
struct rc_profile {
    unsigned refs;
    uint64_t hash;      /* of the content: tells a changed profile from a refreshed one */
    unsigned n;
    struct rc_kv *kv;   /* n pairs; strings live in the same allocation */
};

struct rc_row {
    char *member;                  /* owned by the window that holds the row */
    double c;                      /* composite as stored */
    double score;                  /* real points (multi-field: first field) */
    int64_t fields[RC_MAX_FIELDS]; /* multi-field boards: values, named by the board's layout */
    unsigned nfields;
    struct rc_profile *profile;    /* a reference, or NULL */
    int64_t place;                 /* shared places (core/rc_places.h); 0 when the view has none */
    const char *team;              /* a board with teams (v1.2): the member's team, borrowed from
                                      the fan-out's interned names (equal names, equal pointers),
                                      or NULL (printed as "team" when set) */
    int64_t rank;                  /* a member list's row (v1.2): its own board-wide rank; 0 in a
                                      window of consecutive ranks (first_rank + its index) */
    int tied;
};

#endif
