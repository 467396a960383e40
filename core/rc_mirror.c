/* rc_mirror.c - the gateway's copy of a board's top rows, kept exact by the
 * write script's change events (DESIGN.md, Fan-out; contract in rc_mirror.h).
 *
 * Order. Redis orders a sorted set by score, then by member bytes (memcmp,
 * the shorter first on a common prefix). strcmp on NUL-terminated members is
 * that same order: it compares bytes as unsigned char. A desc board is read
 * with ZRANGE ... REV, the exact reverse: score descending, then member
 * descending. cmp_rank() is the rule; nothing else here compares rows.
 *
 * Why applying an event keeps the mirror exact. Call "others outside" the
 * board's members that are neither held nor named by the event. The event
 * does not move them, and while the mirror is exact they all rank after its
 * last row. So, with the event's member taken out of the rows (the rest are
 * still ranks 1..rest of the board):
 *  - its new entry belongs at its binary-searched position p when p falls
 *    before the end of the rest (held rows after p rank after it, and every
 *    outside member ranks after the held rows);
 *  - at the end when there are no others outside (nothing can come between);
 *  - anywhere else it ranks after the last held row but maybe after some
 *    outside member too, so it stays out and the mirror is one row shorter.
 * Cutting the tail to `keep` rows leaves ranks 1..len, so it stays exact too.
 * What cannot be repaired locally is a mirror shorter than `want` while the
 * board has more members: rc_mirror_needs_reload() says so.
 *
 * An event that contradicts the mirror (a held member said to be absent
 * before it, or a present member missing from a mirror that holds the whole
 * board) means the mirror or the stream is wrong: the mirror gives up its
 * exactness and answers RC_MIRROR_GAP rather than guess, so the caller
 * reloads.
 *
 * Member lookup is a linear scan (find_row). struct rc_mirror has no room for
 * an index, the rows are few (want + margin, about 1,300 at most), and moving
 * a row is a memmove of O(len) anyway. Positions come from binary search.
 *
 * A sharded mirror (rc_mirror_init_sharded) differs in two places only:
 * cmp_rank breaks equal scores by the members' shards (a member's shard is
 * fixed by its name, so this is still one total order and the argument
 * above holds word for word), and the version is the vector shard_seq, one
 * seq per shard, checked per event by rc_mirror_apply_shard.
 *
 * Pure: no I/O, no clock, no global state. The mirror owns its rows and their
 * member strings (and a sharded mirror its vector); strings passed in are
 * copied.
 */
#include "rc_mirror.h"

#include "rc_err.h"
#include "rc_shard.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOT_HELD SIZE_MAX
#define MIN_MARGIN 16 /* rows kept beyond want, at least */
#define MIN_CAP 16    /* first allocation, in rows */

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

/* < 0 when (ca, ma) ranks before (cb, mb) on a board of this order, > 0 when
 * after, 0 only for the same score and member. Scores are never NaN here.
 * A sharded mirror ranks equal scores by the members' shards first
 * (core/rc_shard.h, the merged order). */
static int cmp_rank(const struct rc_mirror *m, double ca, const char *ma, double cb, const char *mb)
{
    int asc;

    if (m->shards > 1 && ca == cb) {
        int desc = m->order == RC_ORDER_DESC;
        unsigned sa = rc_shard_of(ma, m->shards), sb = rc_shard_of(mb, m->shards);
        if (rc_shard_before(desc, ca, sa, ma, cb, sb, mb))
            return -1;
        return rc_shard_before(desc, cb, sb, mb, ca, sa, ma);
    }
    if (ca < cb) {
        asc = -1;
    } else if (ca > cb) {
        asc = 1;
    } else {
        int s = strcmp(ma, mb);
        asc = (s > 0) - (s < 0);
    }
    return m->order == RC_ORDER_DESC ? -asc : asc;
}

/* Number of held rows that rank strictly before (c, member): the position the
 * entry takes when inserted. */
static size_t position_of(const struct rc_mirror *m, double c, const char *member)
{
    size_t lo = 0, hi = m->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_rank(m, m->rows[mid].c, m->rows[mid].member, c, member) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index of the row holding member, or NOT_HELD. A linear scan: see the
 * banner for why. */
static size_t find_row(const struct rc_mirror *m, const char *member)
{
    size_t i;

    for (i = 0; i < m->len; i++) {
        if (strcmp(m->rows[i].member, member) == 0)
            return i;
    }
    return NOT_HELD;
}

/* Board members the mirror does not hold. Never negative: load() checks
 * total >= len and apply() keeps it so. */
static uint64_t outside_count(const struct rc_mirror *m)
{
    return (uint64_t)m->total - (uint64_t)m->len;
}

/* A malloc'd copy of s, owned by the caller, or NULL. */
static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

/* Makes room for at least n rows. On failure the rows are untouched. */
static int reserve(struct rc_mirror *m, size_t n)
{
    struct rc_mirror_row *rows;
    size_t cap;

    if (n <= m->cap)
        return 0;
    cap = m->cap < MIN_CAP ? MIN_CAP : m->cap;
    while (cap < n && cap <= SIZE_MAX / 2)
        cap *= 2;
    if (cap < n)
        cap = n;
    if (cap > SIZE_MAX / sizeof *rows)
        return -1;
    rows = realloc(m->rows, cap * sizeof *rows);
    if (rows == NULL)
        return -1;
    m->rows = rows;
    m->cap = cap;
    return 0;
}

/* Drops rows[n..len) and frees their members. */
static void truncate_rows(struct rc_mirror *m, size_t n)
{
    while (m->len > n) {
        m->len--;
        free(m->rows[m->len].member);
        m->rows[m->len].member = NULL;
    }
}

/* Records that rows [lo, end) changed (see rc_mirror_touched). */
static void touch(struct rc_mirror *m, size_t lo, size_t end)
{
    if (m->touch_end == 0 || lo < m->touch_lo)
        m->touch_lo = lo;
    if (end > m->touch_end)
        m->touch_end = end;
}

/* Moves the row at from to position to, shifting the rows between. */
static void move_row(struct rc_mirror *m, size_t from, size_t to)
{
    struct rc_mirror_row row = m->rows[from];

    if (from < to)
        memmove(&m->rows[from], &m->rows[from + 1], (to - from) * sizeof row);
    else if (from > to)
        memmove(&m->rows[to + 1], &m->rows[to], (from - to) * sizeof row);
    m->rows[to] = row;
}

/* Removes the row at i and frees its member. */
static void remove_row(struct rc_mirror *m, size_t i)
{
    free(m->rows[i].member);
    memmove(&m->rows[i], &m->rows[i + 1], (m->len - i - 1) * sizeof m->rows[0]);
    m->len--;
}

/* Inserts a row at i, taking ownership of member. The caller reserved room. */
static void insert_row(struct rc_mirror *m, size_t i, char *member, double c)
{
    memmove(&m->rows[i + 1], &m->rows[i], (m->len - i) * sizeof m->rows[0]);
    m->rows[i].member = member;
    m->rows[i].c = c;
    m->len++;
}

/* ------------------------------------------------------------------------- */
/* API                                                                       */
/* ------------------------------------------------------------------------- */

/* An empty, not exact mirror. keep = 0 stands for "no limit" until
 * rc_mirror_set_want() is called. */
void rc_mirror_init(struct rc_mirror *m, enum rc_order order)
{
    memset(m, 0, sizeof *m);
    m->order = order;
}

void rc_mirror_init_sharded(struct rc_mirror *m, enum rc_order order, unsigned shards)
{
    rc_mirror_init(m, order);
    m->shards = shards > 1 ? shards : 0;
}

/* Frees the rows and their members (and a sharded mirror's vector); the
 * mirror is left as rc_mirror_init() (or rc_mirror_init_sharded) made it,
 * same order and shards, ready for reuse. */
void rc_mirror_free(struct rc_mirror *m)
{
    enum rc_order order = m->order;
    unsigned shards = m->shards;

    truncate_rows(m, 0);
    free(m->rows);
    free(m->shard_seq);
    rc_mirror_init_sharded(m, order, shards);
}

/* keep = want + max(16, want / 4); rows past keep are dropped at once (a cut
 * tail is still exact). Returns rc_mirror_needs_reload(), so a mirror never
 * loaded also answers 1. */
int rc_mirror_set_want(struct rc_mirror *m, size_t want)
{
    size_t margin = want / 4 > MIN_MARGIN ? want / 4 : MIN_MARGIN;

    m->want = want;
    m->keep = want > SIZE_MAX - margin ? SIZE_MAX : want + margin;
    truncate_rows(m, m->keep);
    return rc_mirror_needs_reload(m);
}

/* Copies the first min(n, keep) rows (all n while keep is 0) and their
 * members; rows stay the caller's and must not point into the mirror. The
 * rows are checked, not sorted: a row out of the board's order (or two equal
 * ones), a NULL member, a NaN score or total < n mean the read is not what
 * Redis returns, so the mirror is left empty and not exact with
 * RC_E_INTERNAL, as on allocation failure. (The rows part of a load: seq,
 * total and exact are the caller's to set.) */
static int load_rows(struct rc_mirror *m, int64_t total, const struct rc_mirror_row *rows, size_t n)
{
    size_t take = m->keep > 0 && n > m->keep ? m->keep : n;
    size_t i;

    truncate_rows(m, 0);
    m->exact = 0;
    if (total < 0 || (uint64_t)total < n || (n > 0 && rows == NULL))
        return RC_E_INTERNAL;
    for (i = 0; i < take; i++) {
        if (rows[i].member == NULL || isnan(rows[i].c))
            return RC_E_INTERNAL;
        if (i > 0 && cmp_rank(m, rows[i - 1].c, rows[i - 1].member, rows[i].c, rows[i].member) >= 0)
            return RC_E_INTERNAL;
    }
    if (reserve(m, take) != 0)
        return RC_E_INTERNAL;
    for (i = 0; i < take; i++) {
        char *member = copy_string(rows[i].member);
        if (member == NULL) {
            truncate_rows(m, 0);
            return RC_E_INTERNAL;
        }
        m->rows[i].member = member;
        m->rows[i].c = rows[i].c;
        m->len = i + 1;
    }
    return 0;
}

int rc_mirror_load(struct rc_mirror *m, int64_t seq, int64_t total, const struct rc_mirror_row *rows, size_t n)
{
    if (m->shards > 1) {
        truncate_rows(m, 0);
        m->exact = 0;
        return RC_E_INTERNAL;
    }
    /* A load at the very version an exact mirror holds (it reloads to hold
     * more rows: a bigger window was asked for) changes no row it shows the
     * same: it touches from the first row that differs (usually the old
     * end) to the end of both, and total stays. Issue 23: a burst of
     * subscribes to ever larger top N reloads the mirror several times, and
     * each load used to refresh every mirror view of the board. */
    int same = m->exact && m->seq == seq && m->total == total;
    size_t kept = 0, old_len = m->len;
    while (same && kept < old_len && kept < n && rows[kept].member && strcmp(rows[kept].member, m->rows[kept].member) == 0 &&
           rows[kept].c == m->rows[kept].c)
        kept++;
    if (load_rows(m, total, rows, n) != 0)
        return RC_E_INTERNAL;
    m->seq = seq;
    m->total = total;
    m->exact = 1;
    if (!same) {
        touch(m, 0, SIZE_MAX);
        m->touch_total = 1;
    } else if (kept < (old_len > m->len ? old_len : m->len)) {
        touch(m, kept, old_len > m->len ? old_len : m->len);
    }
    return 0;
}

/* As rc_mirror_load; the vector is allocated at the first load and kept. */
int rc_mirror_load_sharded(struct rc_mirror *m, const int64_t *shard_seq, int64_t total,
                           const struct rc_mirror_row *rows, size_t n)
{
    int64_t sum = 0;
    unsigned i;

    if (m->shards <= 1 || shard_seq == NULL) {
        truncate_rows(m, 0);
        m->exact = 0;
        return RC_E_INTERNAL;
    }
    for (i = 0; i < m->shards; i++) {
        if (shard_seq[i] < 0 || shard_seq[i] > INT64_MAX - sum) {
            truncate_rows(m, 0);
            m->exact = 0;
            return RC_E_INTERNAL;
        }
        sum += shard_seq[i];
    }
    if (m->shard_seq == NULL && (m->shard_seq = malloc(m->shards * sizeof *m->shard_seq)) == NULL) {
        truncate_rows(m, 0);
        m->exact = 0;
        return RC_E_INTERNAL;
    }
    if (load_rows(m, total, rows, n) != 0)
        return RC_E_INTERNAL;
    memcpy(m->shard_seq, shard_seq, m->shards * sizeof *m->shard_seq);
    m->seq = sum;
    m->total = total;
    m->exact = 1;
    touch(m, 0, SIZE_MAX);
    m->touch_total = 1;
    return 0;
}

/* The change itself, once the event's version is known to be the next:
 * member now has new_c (has_new) or left, and was on the board iff
 * was_present. See the banner for why this stays exact. member is borrowed
 * (copied when it enters the mirror). Everything that can fail (the checks,
 * the row array, the member copy) happens before the rows change. A NULL
 * member or a NaN score is a caller bug: RC_E_INTERNAL, not exact. The
 * caller moves the version on when it returns RC_MIRROR_APPLIED. */
static int apply_change(struct rc_mirror *m, const char *member, int has_new, double new_c, int was_present,
                        size_t *changed_rank)
{
    size_t at, pos = 0, rest, changed = 0;
    uint64_t others_out;
    int enters = 0;
    char *copy = NULL;

    if (member == NULL || (has_new && isnan(new_c))) {
        m->exact = 0;
        return RC_E_INTERNAL;
    }

    at = find_row(m, member);
    if ((at != NOT_HELD && !was_present) || (at == NOT_HELD && was_present && outside_count(m) == 0)) {
        m->exact = 0;
        return RC_MIRROR_GAP;
    }
    others_out = outside_count(m) - (at == NOT_HELD && was_present ? 1 : 0);
    rest = at == NOT_HELD ? m->len : m->len - 1;

    if (has_new) {
        pos = position_of(m, new_c, member);
        if (at != NOT_HELD && at < pos)
            pos--; /* its own old row was counted */
        enters = (pos < rest || others_out == 0) && (m->keep == 0 || pos < m->keep);
    }
    if (enters && at == NOT_HELD) {
        if (reserve(m, m->len + 1) != 0 || (copy = copy_string(member)) == NULL) {
            m->exact = 0;
            return RC_E_INTERNAL;
        }
    }

    /* touched: a move shifts the rows between its two places; a row that
     * leaves or enters shifts every row after it */
    if (at != NOT_HELD && enters) {
        int same = pos == at && m->rows[at].c == new_c;
        move_row(m, at, pos);
        m->rows[pos].c = new_c;
        changed = same ? 0 : (pos < at ? pos : at) + 1;
        if (!same)
            touch(m, pos < at ? pos : at, (pos < at ? at : pos) + 1);
    } else if (at != NOT_HELD) {
        remove_row(m, at);
        changed = at + 1;
        touch(m, at, SIZE_MAX);
    } else if (enters) {
        insert_row(m, pos, copy, new_c);
        truncate_rows(m, m->keep > 0 ? m->keep : m->len); /* pos < keep: the new row stays */
        changed = pos + 1;
        touch(m, pos, SIZE_MAX);
    }

    if (has_new && !was_present)
        m->total++;
    else if (!has_new && was_present)
        m->total--;
    if (has_new != was_present)
        m->touch_total = 1;
    if (changed_rank)
        *changed_rank = changed;
    return RC_MIRROR_APPLIED;
}

int rc_mirror_apply(struct rc_mirror *m, int64_t seq, const char *member, int has_new, double new_c,
                    int was_present, size_t *changed_rank)
{
    int r;

    if (changed_rank)
        *changed_rank = 0;
    if (m->shards > 1) {
        m->exact = 0;
        return RC_E_INTERNAL;
    }
    if (!m->exact)
        return RC_MIRROR_GAP;
    if (seq <= m->seq)
        return RC_MIRROR_OLD;
    if (seq != m->seq + 1) {
        m->exact = 0;
        return RC_MIRROR_GAP;
    }
    r = apply_change(m, member, has_new, new_c, was_present, changed_rank);
    if (r == RC_MIRROR_APPLIED)
        m->seq = seq;
    return r;
}

/* The same for shard `shard`'s event: its version is shard_seq[shard], and
 * an event naming a member of another shard contradicts the mirror (or the
 * channel it came on): a gap. */
int rc_mirror_apply_shard(struct rc_mirror *m, unsigned shard, int64_t seq, const char *member, int has_new,
                          double new_c, int was_present, size_t *changed_rank)
{
    int r;

    if (changed_rank)
        *changed_rank = 0;
    if (m->shards <= 1 || shard >= m->shards) {
        m->exact = 0;
        return RC_E_INTERNAL;
    }
    if (!m->exact || m->shard_seq == NULL)
        return RC_MIRROR_GAP;
    if (seq <= m->shard_seq[shard])
        return RC_MIRROR_OLD;
    if (seq != m->shard_seq[shard] + 1 || (member != NULL && rc_shard_of(member, m->shards) != shard)) {
        m->exact = 0;
        return RC_MIRROR_GAP;
    }
    r = apply_change(m, member, has_new, new_c, was_present, changed_rank);
    if (r == RC_MIRROR_APPLIED) {
        m->shard_seq[shard] = seq;
        m->seq++;
    }
    return r;
}

int rc_mirror_needs_reload(const struct rc_mirror *m)
{
    return !m->exact || (m->len < m->want && outside_count(m) > 0);
}

/* Borrowed view of ranks offset+1 .. offset+count. Covered when it ends within
 * the rows held, or when the rows are the whole board (then it may be short,
 * or empty past the end). *rows is NULL when *n is 0. */
int rc_mirror_window(const struct rc_mirror *m, size_t offset, size_t count, const struct rc_mirror_row **rows,
                     size_t *n)
{
    size_t end = count > SIZE_MAX - offset ? SIZE_MAX : offset + count;

    *rows = NULL;
    *n = 0;
    if (!m->exact || (end > m->len && outside_count(m) > 0))
        return RC_E_UNAVAILABLE;
    if (offset >= m->len)
        return 0;
    *rows = m->rows + offset;
    *n = (end < m->len ? end : m->len) - offset;
    return 0;
}

int rc_mirror_touched(const struct rc_mirror *m, size_t *lo, size_t *end)
{
    *lo = m->touch_lo;
    *end = m->touch_end;
    if (m->touch_total)
        return RC_MIRROR_TOUCHED_ALL;
    return m->touch_end ? RC_MIRROR_TOUCHED_SPAN : RC_MIRROR_UNTOUCHED;
}

void rc_mirror_untouch(struct rc_mirror *m)
{
    m->touch_lo = 0;
    m->touch_end = 0;
    m->touch_total = 0;
}

size_t rc_mirror_rank_of(const struct rc_mirror *m, const char *member)
{
    size_t i = member ? find_row(m, member) : NOT_HELD;

    return i == NOT_HELD ? 0 : i + 1;
}
