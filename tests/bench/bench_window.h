/* bench_window.h - what a viewer holds, for rankcast-bench --verify.
 *
 * A viewer's window is kept exactly as PROTOCOL.md tells a client to keep it
 * ("Applying a delta to a window"), so the bench can compare every viewer's
 * screen with Redis after a burst. Members are interned to small integers
 * (one table per parser), and a message is parsed once however many viewers
 * receive the same bytes: every viewer of a view gets the identical delta, so
 * the parser keeps a small cache keyed by the message text.
 */
#ifndef BENCH_WINDOW_H
#define BENCH_WINDOW_H

#include <stddef.h>
#include <stdint.h>

struct bench_row {
    uint32_t member; /* interned id */
    double score;
};

/* A parsed snapshot, delta or event (rows carry ranks; removed are ids). */
struct bench_msg {
    int kind;        /* BENCH_MSG_* */
    int64_t seq, total;
    size_t nrows;
    int64_t *ranks;
    struct bench_row *rows;
    size_t nremoved;
    uint32_t *removed;
};

#define BENCH_MSG_OTHER 0
#define BENCH_MSG_SNAPSHOT 1
#define BENCH_MSG_DELTA 2

struct bench_window {
    int64_t seq, total;
    uint32_t n, cap;
    struct bench_row *rows;
};

struct bench_parser;

struct bench_parser *bench_parser_new(void);
void bench_parser_free(struct bench_parser *p);

/* The id of member s (len bytes), added when new. Returns UINT32_MAX on OOM. */
uint32_t bench_intern(struct bench_parser *p, const char *s, size_t len);

/* Parses one server message. The result is borrowed: valid until the next
 * call. NULL when the text is not a snapshot or delta (or on OOM). */
const struct bench_msg *bench_parse(struct bench_parser *p, const char *json, size_t len);

/* Applies m to w for a window starting at first_rank and at most limit rows
 * long: a snapshot replaces, a delta is applied as PROTOCOL.md says.
 * Returns 0, or -1 on OOM. */
int bench_window_apply(struct bench_window *w, const struct bench_msg *m, int64_t first_rank, uint32_t limit);

/* 1 when w holds exactly rows[0..n) (members and scores) and total. */
int bench_window_equal(const struct bench_window *w, const struct bench_row *rows, size_t n, int64_t total);

void bench_window_free(struct bench_window *w);

#endif
