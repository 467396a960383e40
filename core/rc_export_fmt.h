/* rc_export_fmt.h - the lines `rankcast export` writes: a board's rows as CSV
 * (a header line, then rank,member,score,name or rank,member,<fields...>,name)
 * or JSON Lines (one object per row, the shape of a REST row:
 * {"rank":1,"member":"user:1","score":50,"name":"Bea"}, multi-field boards
 * with "fields":{...}). Pure: scores are decoded from the stored composite
 * (rc_score.h), text is escaped here. A CSV export loads back with
 * `rankcast import` (rc_import_row.h reads the same columns).
 */
#ifndef RC_EXPORT_FMT_H
#define RC_EXPORT_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "rc_layout.h"

enum rc_export_format { RC_EXPORT_CSV = 0, RC_EXPORT_JSONL };

/* "csv" / "jsonl" -> *f. Returns 0 or RC_E_BAD_REQUEST. */
int rc_export_fmt_format_parse(const char *s, enum rc_export_format *f);

/* Both writers work like snprintf: they write at most cap bytes with the NUL
 * into out and return the length the whole text needs (without the NUL), so
 * a caller whose buffer was short can grow it and call again. */

/* The header line with its "\n" for CSV; "" for JSON Lines. */
size_t rc_export_fmt_header(const struct rc_board *b, enum rc_export_format f, char *out, size_t cap);

/* One row with its "\n": rank, member, the score (or fields) decoded from
 * composite c for board b, and name (NULL or "" when the member has no profile
 * name: an empty CSV cell, no "name" key). CSV cells holding a comma, a quote,
 * a line break or spaces at either end are quoted (RFC 4180). */
size_t rc_export_fmt_row(const struct rc_board *b, enum rc_export_format f, int64_t rank, const char *member, double c,
                     const char *name, char *out, size_t cap);

#endif
