/* rc_import_row.h - one row of a `rankcast import` file, parsed and checked,
 * turned into the write request that loads it, with a request id derived
 * from the row so that a rerun of the same file changes nothing. Pure.
 *
 * Formats (docs/export-import.md):
 *  - csv: a header line naming the columns, then one row per line. Columns:
 *    `member` (required); `score` on a single-field board, or the board's
 *    field names on a multi-field board (an empty cell leaves that field as
 *    stored; a row must give at least one); `name` (optional: the member's
 *    profile name; empty leaves the profile alone); `rank` (ignored, so an
 *    export loads back as it is). Any other column is refused. Cells are
 *    RFC 4180: a cell in double quotes may hold commas and doubled quotes,
 *    not line breaks (one row is one line).
 *  - jsonl: one JSON object per line, {"member", "score"} or {"member",
 *    "fields": {...}}, optional "name"; "rank" and unknown keys are ignored,
 *    as the WebSocket protocol ignores them.
 * Blank lines are skipped in both.
 */
#ifndef RC_IMPORT_ROW_H
#define RC_IMPORT_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "rc_err.h"
#include "rc_layout.h"
#include "rc_names.h"
#include "rc_proto.h"

#define RC_IMPORT_LINE_MAX 65536 /* bytes of one line, without its line break */
#define RC_IMPORT_NAME_MAX 256   /* a profile value, as PUT .../profile takes it */
#define RC_IMPORT_COLS_MAX (RC_MAX_FIELDS + 8)
#define RC_IMPORT_REQ_PREFIX "imp-"

/* What each CSV column holds. */
enum rc_import_col { RC_COL_RANK, RC_COL_MEMBER, RC_COL_SCORE, RC_COL_NAME, RC_COL_FIELD };

struct rc_import_cols {
    unsigned n;                               /* columns in the header */
    enum rc_import_col kind[RC_IMPORT_COLS_MAX];
    unsigned field[RC_IMPORT_COLS_MAX];       /* RC_COL_FIELD: index in the board's layout */
};

/* One parsed row. */
struct rc_import_row {
    char member[RC_MEMBER_MAX + 1];
    int64_t score;                            /* single-field boards */
    unsigned nfields;                         /* multi-field: the fields given */
    struct rc_field_value fields[RC_MAX_FIELDS];
    int has_name;                             /* a non-empty name was given */
    char name[RC_IMPORT_NAME_MAX + 1];
};

/* The write op that loads rows into board b: submit on a multi-field board,
 * else set, or best on a board that takes best but not set (laps). Returns 0,
 * or RC_E_BAD_REQUEST with err filled (a hot board, or a board taking neither). */
int rc_import_row_op(const struct rc_board *b, enum rc_op *op, struct rc_error *err);

/* Parses the CSV header line[0..len) for board b. Returns 0, or
 * RC_E_BAD_REQUEST naming the column at fault (unknown, repeated, missing
 * member/score/fields, score on a multi-field board). */
int rc_import_row_csv_header(const struct rc_board *b, const char *line, size_t len, struct rc_import_cols *cols,
                         struct rc_error *err);

/* Parses one CSV row under cols. Returns 0, or RC_E_BAD_REQUEST with a message
 * naming the column (wrong cell count, a bad member, a number that is not an
 * integer within +-(2^53 - 1), a name over RC_IMPORT_NAME_MAX bytes or not
 * UTF-8). Ranges of the board are not checked here
 * (rc_write_args_build does that with the request). */
int rc_import_row_csv_row(const struct rc_board *b, const struct rc_import_cols *cols, const char *line, size_t len,
                      struct rc_import_row *row, struct rc_error *err);

/* Parses one JSON Lines row (the strict gate of rc_json_gate.h first). Same
 * checks and return values as rc_import_row_csv_row. */
int rc_import_row_json_row(const struct rc_board *b, const char *line, size_t len, struct rc_import_row *row,
                       struct rc_error *err);

/* The request id of the row on line `lineno` of a file whose header (csv) is
 * header[0..hlen) (jsonl: hlen 0), imported into board `board`:
 * "imp-" + 32 hex digits of two keyed SipHash-2-4 (fixed keys) over board,
 * header, line number and the line's bytes. The line number is part of it so
 * that a file setting a member twice (line 3 "a,10", line 9 "a,20") applies
 * both in order. Writes RC_REQ_MAX + 1 bytes at most into out. Returns 0,
 * or RC_E_INTERNAL (no memory; out untouched). */
int rc_import_row_req(const char *board, const char *header, size_t hlen, int64_t lineno, const char *line, size_t len,
                  char out[RC_REQ_MAX + 1]);

/* Fills the write request for row on board `board` with op and req (both
 * borrowed, copied). Returns 0, or RC_E_BAD_REQUEST (a name too long: never
 * for names that passed the parsers). */
int rc_import_row_request(const char *board, enum rc_op op, const struct rc_import_row *row, const char *req,
                      struct rc_request *out, struct rc_error *err);

#endif
