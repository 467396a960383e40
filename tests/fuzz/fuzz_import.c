/* fuzz_import.c - libFuzzer target: every byte string a file handed to
 * `rankcast import` could hold goes through the row parsers
 * (core/rc_import_row.c): the first line as a CSV header, the rest as a CSV
 * row and as a JSON Lines row, on a single-field and a multi-field board; an
 * accepted row is turned into its request and written back out as an export
 * line (core/rc_export_fmt.c). Sanitizers catch reads out of bounds, leaks,
 * overflows. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rc_conf.h"
#include "rc_export_fmt.h"
#include "rc_import_row.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_text[] = "[board demo]\n"
                                "tiebreak = none\n"
                                "[board clears]\n"
                                "fields = clears desc 16, revives asc 8, first_clear_ms asc 27\n"
                                "ops = submit\n"
                                "tiebreak = none\n";

static struct rc_conf *conf;

static void one_board(const struct rc_board *b, const char *text, size_t size)
{
    struct rc_import_cols cols;
    struct rc_import_row row;
    struct rc_request r;
    struct rc_error err;
    char req[RC_REQ_MAX + 1], line[1024];
    const char *nl = memchr(text, '\n', size);
    size_t hlen = nl ? (size_t)(nl - text) : size;
    if (rc_import_row_csv_header(b, text, hlen, &cols, &err) == 0 && nl &&
        rc_import_row_csv_row(b, &cols, nl + 1, size - hlen - 1, &row, &err) == 0 &&
        rc_import_row_req(b->name, text, hlen, 2, nl + 1, size - hlen - 1, req) == 0 &&
        rc_import_row_request(b->name, b->layout.nfields ? RC_OP_SUBMIT : RC_OP_SET, &row, req, &r, &err) == 0)
        rc_export_fmt_row(b, RC_EXPORT_CSV, 1, row.member, (double)row.score, row.has_name ? row.name : NULL, line,
                      sizeof line);
    if (rc_import_row_json_row(b, text, size, &row, &err) == 0)
        rc_export_fmt_row(b, RC_EXPORT_JSONL, 1, row.member, (double)row.score, row.has_name ? row.name : NULL, line,
                      sizeof line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rc_error err;
    if (!conf) {
        conf = malloc(sizeof *conf);
        if (!conf || rc_conf_parse("fuzz.conf", conf_text, strlen(conf_text), conf, &err) != 0)
            abort();
    }
    /* a copy of exactly size bytes: a read past it is caught */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    one_board(rc_conf_board_find(conf, "demo"), text, size);
    one_board(rc_conf_board_find(conf, "clears"), text, size);
    free(text);
    return 0;
}
