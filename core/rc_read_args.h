/* rc_read_args.h - the KEYS and ARGV of lua/read.lua (header comment there)
 * and its reply decoded back. Pure: the one builder and the one parser of that
 * script, used by every read path (store/gw_read.c, jobs/gw_archive_run.c),
 * so a reply of the wrong shape is refused the same way everywhere.
 */
#ifndef RC_READ_ARGS_H
#define RC_READ_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "rc_epoch.h"
#include "rc_freeze.h"
#include "rc_keys.h"
#include "rc_layout.h"
#include "rc_write_args.h" /* struct rc_reply_item */

#define RC_READ_NKEYS 6 /* z seq log epoch frz fz */
#define RC_READ_HEAD 8  /* seq total first_rank epoch frozen freeze_seq shown fv */
#define RC_READ_COUNTS_MAX 128 /* pairs in one counts call built here (the script takes 512) */
#define RC_READ_ARGV_MAX (3 + 2 * RC_READ_COUNTS_MAX)

enum rc_read_kind { RC_READ_RANGE, RC_READ_AROUND, RC_READ_RANK, RC_READ_LOG, RC_READ_COUNTS, RC_READ_NEAR,
                    RC_READ_MEMBERS, RC_READ_ROSTER };

/* What to read (the script's kinds). */
struct rc_read_req {
    enum rc_read_kind kind;
    int64_t first;          /* RANGE: 0-based index of the first row; LOG: the seq to read after */
    int64_t count;          /* RANGE: rows wanted (0 from index 0: the whole board); LOG: at
                               most this many changes after seq first (0: the whole log) */
    const char *member;     /* AROUND, RANK (borrowed) */
    int64_t radius;         /* AROUND, NEAR: at least 0 */
    double bound;           /* NEAR: the composite c the rows are near */
    int inclusive;          /* NEAR: rows scored exactly bound count as ahead */
    const double *bounds;   /* COUNTS: bounds[0..nbounds) (borrowed for the call;
                               NaN: "", which counts 0) */
    const int *inclusives;  /* COUNTS: one flag per bound (NULL: all strict) */
    size_t nbounds;         /* COUNTS: 0..RC_READ_COUNTS_MAX (0: just the head) */
    int places;             /* RANGE, AROUND: also read the facts of shared places */
    double tie_unit;        /* with places: core/rc_places.h, rc_places_unit */
    const char *members;    /* MEMBERS: a packed list (core/rc_members.h), borrowed for the call */
    uint32_t nmembers;      /* MEMBERS: 1..RC_MEMBERS_MAX */
    const char *joined;     /* ROSTER: the team's members joined by spaces (any count, one
                               argument), borrowed for the call */
    int64_t best;           /* ROSTER: the most rows (the best by rank); 0: all */
    int live;               /* the live board through a freeze (admin live views,
                               the archive); 0: what the audience sees */
};

struct rc_read_args {
    unsigned nargv;
    char keys[RC_READ_NKEYS][RC_KEY_MAX];
    const char *argv[RC_READ_ARGV_MAX]; /* point into num, string constants or req->member */
    char num[3 + RC_READ_COUNTS_MAX][32];
};

/* Builds the call reading board `board` in period `period` ("" for
 * all-time) ranked in `order`. Borrows req->member: out->argv points to it.
 * Returns 0, or RC_E_BAD_REQUEST for a request the script cannot take (a
 * negative index or count, no member), or RC_E_INTERNAL when the names do
 * not fit a key (they are checked long before: a bug). */
int rc_read_args_build(const char *board, const char *period, enum rc_order order, const struct rc_read_req *req,
                       struct rc_read_args *out);

/* The reply's head: { seq, total, first_rank, epoch, frozen, freeze_seq,
 * shown, fv, ... } (log: first_rank 0). */
struct rc_read_head {
    int64_t seq;            /* the seq the rows reflect (audience of a frozen board: shown) */
    int64_t total;
    int64_t first_rank;     /* rank of the first row; 0: the around/rank member is absent */
    char epoch[RC_EPOCH_MAX + 1]; /* the board's epoch, "" while no history holds */
    struct rc_freeze freeze; /* the board's freeze (lua/freeze.lua) */
};

/* One row of a range/around/rank reply. */
struct rc_read_row {
    const char *member;     /* borrowed from the reply item */
    double c;               /* the composite as stored */
};

/* Decodes the head of any read.lua reply items[0..n): three non-negative
 * integers, the epoch (a string rc_epoch_valid takes), then the freeze:
 * frozen 0|1, freeze seq, shown seq (shown >= freeze seq while frozen, both
 * 0 otherwise) and the freeze version. Returns 0 or RC_E_INTERNAL. */
int rc_read_args_head_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head);

/* The number of rows a range/around/rank reply of n items carries (an upper
 * bound before parsing: size the rows array with it). */
size_t rc_read_args_rows_max(size_t n);

/* Decodes a range/around/rank reply items[0..n): the head, then member and
 * composite pairs into rows[0..*nrows) (cap rows at least rc_read_args_rows_max(n)).
 * A reply with first_rank 0 (member absent) has no rows, whatever follows.
 * Returns 0, or RC_E_INTERNAL when the reply is not of the script's shape:
 * a head that is not three integers and an epoch, an odd tail, a member that is not a
 * non-empty string, a composite that is not a whole number text (NaN
 * refused), or more rows than cap. */
int rc_read_args_rows_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                       struct rc_read_row *rows, size_t cap, size_t *nrows);

/* Shared places (core/rc_places.h): a range/around reply read with
 * req.places has two more head items, the members above the first row and
 * whether the row after the last ties it. */
struct rc_read_places {
    int64_t above;
    int next_tied;
};

/* rc_read_args_rows_parse for a reply read with places: fills *pl too. */
int rc_read_args_rows_parse_places(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                              struct rc_read_places *pl, struct rc_read_row *rows, size_t cap, size_t *nrows);

/* Decodes a counts reply items[0..n) of a call with npairs pairs: the head
 * (first_rank 0), then npairs integers into counts[0..npairs), each at
 * least 0 and at most the total. Returns 0 or RC_E_INTERNAL. */
int rc_read_args_counts_parse(const struct rc_reply_item *items, size_t n, size_t npairs, struct rc_read_head *head,
                         int64_t *counts);

/* A near reply's facts after the head: how many members are ahead of the
 * bound, and how many of the rows that follow are among them (the rest are
 * behind it). */
struct rc_read_near {
    int64_t ahead;
    size_t na;
};

/* Decodes a near reply items[0..n): the head (first_rank 0), ahead, na,
 * then member and composite pairs into rows[0..*nrows) (cap at least
 * rc_read_args_rows_max(n)): rows[0..na) ahead of the bound in board order, then
 * the rows behind it. Returns 0, or RC_E_INTERNAL for another shape (na
 * past the rows or past ahead, ahead past the total, a bad row). */
int rc_read_args_near_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                       struct rc_read_near *nr, struct rc_read_row *rows, size_t cap, size_t *nrows);

/* One row of a members reply: the member, its composite, its board-wide
 * rank (1-based), and with places its place and tied (else 0 and 0). */
struct rc_read_mrow {
    const char *member;     /* borrowed from the reply item */
    double c;
    int64_t rank, place;
    int tied;
};

/* Decodes a members reply items[0..n): the head (first_rank 0), then per
 * listed member on the board (rank order) member, composite, rank, place,
 * tied into rows[0..*nrows) (cap of them). Returns 0, or RC_E_INTERNAL for
 * another shape (a rank past the total, ranks not ascending, a bad row,
 * more rows than cap). */
int rc_read_args_members_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head,
                          struct rc_read_mrow *rows, size_t cap, size_t *nrows);

/* Decodes a roster reply items[0..n): the head (first_rank 0), found (the
 * listed members on the board, at least the rows that follow), then the
 * members reply's rows. Returns 0 or RC_E_INTERNAL as
 * rc_read_args_members_parse. */
int rc_read_args_roster_parse(const struct rc_reply_item *items, size_t n, struct rc_read_head *head, int64_t *found,
                              struct rc_read_mrow *rows, size_t cap, size_t *nrows);

#endif
