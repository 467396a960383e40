/* rc_import_row.c - rows of an import file -> write requests (rc_import_row.h). */
#include "rc_import_row.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rc_hmap.h"
#include "rc_json_gate.h"

int rc_import_row_op(const struct rc_board *b, enum rc_op *op, struct rc_error *err)
{
    if (b->decay.kind == RC_DECAY_BUCKETS)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "board %s is a hot board: its scores are weighted sums of recent increments, "
                            "there is nothing to load", b->name);
    if (b->layout.nfields) {
        *op = RC_OP_SUBMIT;
        if (!(b->ops & RC_OPF_SUBMIT))
            return rc_err_set(err, RC_E_BAD_REQUEST, "board %s does not take submit", b->name);
        return 0;
    }
    if (b->ops & RC_OPF_SET)
        *op = RC_OP_SET;
    else if (b->ops & RC_OPF_BEST)
        *op = RC_OP_BEST;
    else
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "board %s takes neither set nor best: an import needs one of them (an incr "
                            "would add up on a rerun)", b->name);
    return 0;
}

/* ---- cells ---------------------------------------------------------------- */

/* Splits a CSV line into cells, unquoted into buf (at least len + 1 +
 * RC_IMPORT_COLS_MAX bytes), each NUL-terminated. */
static int split_csv(const char *line, size_t len, char *buf, char **cells, size_t *lens, unsigned *n,
                     struct rc_error *err)
{
    size_t i = 0;
    char *o = buf;
    *n = 0;
    for (;;) {
        if (*n == RC_IMPORT_COLS_MAX)
            return rc_err_set(err, RC_E_BAD_REQUEST, "more than %d cells", RC_IMPORT_COLS_MAX);
        cells[*n] = o;
        if (i < len && line[i] == '"') {
            i++;
            for (;;) {
                if (i == len)
                    return rc_err_set(err, RC_E_BAD_REQUEST,
                                        "cell %u: a quoted cell runs past the end of the line", *n + 1);
                if (line[i] == '"') {
                    if (i + 1 < len && line[i + 1] == '"') {
                        *o++ = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                *o++ = line[i++];
            }
            if (i < len && line[i] != ',')
                return rc_err_set(err, RC_E_BAD_REQUEST, "cell %u: text after a closing quote", *n + 1);
        } else {
            while (i < len && line[i] != ',') {
                if (line[i] == '"')
                    return rc_err_set(err, RC_E_BAD_REQUEST,
                                        "cell %u: a quote inside an unquoted cell (quote the whole cell)", *n + 1);
                *o++ = line[i++];
            }
        }
        lens[*n] = (size_t)(o - cells[*n]);
        *o++ = '\0';
        (*n)++;
        if (i == len)
            return 0;
        i++; /* the comma */
    }
}

/* A cell without the spaces and tabs around it. */
static void trim(char **s, size_t *len)
{
    while (*len && ((*s)[0] == ' ' || (*s)[0] == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*s)[--(*len)] = '\0';
}

/* A decimal integer within +-(2^53 - 1). */
static int parse_int(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    uint64_t v = 0;
    if (i < len && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i == len)
        return -1;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > (uint64_t)RC_SAFE_INT_MAX)
            return -1;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

static int set_member(struct rc_import_row *row, const char *s, size_t len, struct rc_error *err)
{
    if (!rc_names_member_name_valid(s, len))
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "member must be 1..%d characters of A-Z a-z 0-9 _ . : @ -", RC_MEMBER_MAX);
    memcpy(row->member, s, len);
    row->member[len] = '\0';
    return 0;
}

static int set_name(struct rc_import_row *row, const char *s, size_t len, struct rc_error *err)
{
    if (len == 0)
        return 0;
    if (len > RC_IMPORT_NAME_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "name is longer than %d bytes", RC_IMPORT_NAME_MAX);
    /* what PUT /api/v1/members/{m}/profile takes: any string of UTF-8 */
    if (!rc_names_utf8_valid(s, len))
        return rc_err_set(err, RC_E_BAD_REQUEST, "name is not valid UTF-8");
    memcpy(row->name, s, len);
    row->name[len] = '\0';
    row->has_name = 1;
    return 0;
}

static int field_index(const struct rc_board *b, const char *name, size_t len)
{
    for (unsigned k = 0; k < b->layout.nfields; k++)
        if (strlen(b->layout.fields[k].name) == len && memcmp(b->layout.fields[k].name, name, len) == 0)
            return (int)k;
    return -1;
}

/* ---- csv ------------------------------------------------------------------ */

int rc_import_row_csv_header(const struct rc_board *b, const char *line, size_t len, struct rc_import_cols *cols,
                         struct rc_error *err)
{
    char *cells[RC_IMPORT_COLS_MAX];
    size_t lens[RC_IMPORT_COLS_MAX];
    unsigned n, seen_member = 0, seen_score = 0, seen_fields = 0;
    int rc;
    char *buf = malloc(len + RC_IMPORT_COLS_MAX + 1);
    if (!buf)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    if ((rc = split_csv(line, len, buf, cells, lens, &n, err)) != 0)
        goto cleanup;
    memset(cols, 0, sizeof *cols);
    cols->n = n;
    for (unsigned i = 0; i < n; i++) {
        char *c = cells[i];
        size_t cl = lens[i];
        int k;
        trim(&c, &cl);
        enum rc_import_col kind;
        if (strcmp(c, "rank") == 0) {
            kind = RC_COL_RANK;
        } else if (strcmp(c, "member") == 0) {
            kind = RC_COL_MEMBER;
        } else if (strcmp(c, "name") == 0) {
            kind = RC_COL_NAME;
        } else if (strcmp(c, "score") == 0 && !b->layout.nfields) {
            kind = RC_COL_SCORE;
        } else if (strcmp(c, "score") == 0) {
            rc = rc_err_set(err, RC_E_BAD_REQUEST,
                              "column %u: board %s has fields: name them as columns instead of score", i + 1,
                              b->name);
            goto cleanup;
        } else if ((k = field_index(b, c, cl)) >= 0) {
            kind = RC_COL_FIELD;
            cols->field[i] = (unsigned)k;
        } else {
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "column %u: unknown column '%.40s' (board %s takes %s)", i + 1,
                              c, b->name, b->layout.nfields ? "rank, member, its fields, name" : "rank, member, score, name");
            goto cleanup;
        }
        for (unsigned j = 0; j < i; j++) {
            if (cols->kind[j] == kind && (kind != RC_COL_FIELD || cols->field[j] == cols->field[i])) {
                rc = rc_err_set(err, RC_E_BAD_REQUEST, "column %u: '%.40s' is there twice", i + 1, c);
                goto cleanup;
            }
        }
        cols->kind[i] = kind;
        seen_member += kind == RC_COL_MEMBER;
        seen_score += kind == RC_COL_SCORE;
        seen_fields += kind == RC_COL_FIELD;
    }
    if (!seen_member)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "the header has no member column");
    else if (!b->layout.nfields && !seen_score)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "the header has no score column");
    else if (b->layout.nfields && !seen_fields)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "the header names none of board %s's fields", b->name);
cleanup:
    free(buf);
    return rc;
}

int rc_import_row_csv_row(const struct rc_board *b, const struct rc_import_cols *cols, const char *line, size_t len,
                      struct rc_import_row *row, struct rc_error *err)
{
    char *cells[RC_IMPORT_COLS_MAX];
    size_t lens[RC_IMPORT_COLS_MAX];
    unsigned n;
    int rc;
    char *buf = malloc(len + RC_IMPORT_COLS_MAX + 1);
    if (!buf)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    memset(row, 0, sizeof *row);
    if ((rc = split_csv(line, len, buf, cells, lens, &n, err)) != 0)
        goto cleanup;
    if (n != cols->n) {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "%u cells, the header has %u", n, cols->n);
        goto cleanup;
    }
    for (unsigned i = 0; i < n && !rc; i++) {
        char *c = cells[i];
        size_t cl = lens[i];
        int64_t v;
        switch (cols->kind[i]) {
        case RC_COL_RANK:
            break;
        case RC_COL_MEMBER:
            trim(&c, &cl);
            rc = set_member(row, c, cl, err);
            break;
        case RC_COL_NAME:
            rc = set_name(row, c, cl, err);
            break;
        case RC_COL_SCORE:
            trim(&c, &cl);
            if (parse_int(c, cl, &v) != 0)
                rc = rc_err_set(err, RC_E_BAD_REQUEST, "score '%.40s' is not an integer within +-(2^53 - 1)", c);
            row->score = v;
            break;
        case RC_COL_FIELD:
            trim(&c, &cl);
            if (cl == 0)
                break; /* left as stored */
            if (parse_int(c, cl, &v) != 0) {
                rc = rc_err_set(err, RC_E_BAD_REQUEST, "field %s: '%.40s' is not an integer within +-(2^53 - 1)",
                                  b->layout.fields[cols->field[i]].name, c);
                break;
            }
            snprintf(row->fields[row->nfields].name, sizeof row->fields[0].name, "%s",
                     b->layout.fields[cols->field[i]].name);
            row->fields[row->nfields++].value = v;
            break;
        }
    }
    if (!rc && b->layout.nfields && row->nfields == 0)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "every field cell is empty: give at least one");
cleanup:
    free(buf);
    return rc;
}

/* ---- jsonl ---------------------------------------------------------------- */

/* A JSON number that is an integer within +-(2^53 - 1). */
static int json_int(const cJSON *it, int64_t *out)
{
    if (!cJSON_IsNumber(it))
        return -1;
    double d = it->valuedouble;
    if (!(d >= -(double)RC_SAFE_INT_MAX && d <= (double)RC_SAFE_INT_MAX) || d != (double)(int64_t)d)
        return -1;
    *out = (int64_t)d;
    return 0;
}

static int json_fields(const struct rc_board *b, const cJSON *fields, struct rc_import_row *row,
                       struct rc_error *err)
{
    const cJSON *it;
    if (!cJSON_IsObject(fields))
        return rc_err_set(err, RC_E_BAD_REQUEST, "fields must be an object of the board's fields");
    cJSON_ArrayForEach(it, fields)
    {
        int k = field_index(b, it->string, strlen(it->string));
        int64_t v;
        if (k < 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "board %s has no field '%.40s'", b->name, it->string);
        if (json_int(it, &v) != 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "fields.%s must be an integer within +-(2^53 - 1)",
                                it->string);
        snprintf(row->fields[row->nfields].name, sizeof row->fields[0].name, "%s", b->layout.fields[k].name);
        row->fields[row->nfields++].value = v;
    }
    if (row->nfields == 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "fields must name at least one field");
    return 0;
}

int rc_import_row_json_row(const struct rc_board *b, const char *line, size_t len, struct rc_import_row *row,
                       struct rc_error *err)
{
    cJSON *root = NULL;
    const cJSON *it;
    int rc;
    memset(row, 0, sizeof *row);
    if ((rc = rc_json_gate_parse_strict(line, len, &root, err)) != 0)
        return rc;
    if (!cJSON_IsObject(root)) {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "a row must be a JSON object");
        goto cleanup;
    }
    it = cJSON_GetObjectItemCaseSensitive(root, "member");
    if (!cJSON_IsString(it)) {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "member is missing or not a string");
        goto cleanup;
    }
    if ((rc = set_member(row, it->valuestring, strlen(it->valuestring), err)) != 0)
        goto cleanup;
    if (b->layout.nfields) {
        it = cJSON_GetObjectItemCaseSensitive(root, "fields");
        if (!it) {
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "fields is missing (board %s has fields)", b->name);
            goto cleanup;
        }
        if ((rc = json_fields(b, it, row, err)) != 0)
            goto cleanup;
    } else {
        it = cJSON_GetObjectItemCaseSensitive(root, "score");
        if (!it || json_int(it, &row->score) != 0) {
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "score is missing or not an integer within +-(2^53 - 1)");
            goto cleanup;
        }
    }
    it = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (it && !cJSON_IsNull(it)) {
        if (!cJSON_IsString(it))
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "name must be a string");
        else
            rc = set_name(row, it->valuestring, strlen(it->valuestring), err);
    }
cleanup:
    cJSON_Delete(root);
    return rc;
}

/* ---- request ids and requests ------------------------------------------------ */

int rc_import_row_req(const char *board, const char *header, size_t hlen, int64_t lineno, const char *line, size_t len,
                  char out[RC_REQ_MAX + 1])
{
    /* Fixed keys: the same row must give the same id in every run, on every
     * machine. Not a secret: the id only has to tell rows apart. */
    static const struct rc_hash_key k1 = {0x72616e6b63617374ULL, 0x696d706f72742d31ULL};
    static const struct rc_hash_key k2 = {0x6578706f72742d32ULL, 0x7265712d69642d32ULL};
    char num[24];
    size_t blen = strlen(board);
    int nl = snprintf(num, sizeof num, "%" PRId64, lineno);
    size_t total = blen + 1 + hlen + 1 + (size_t)nl + 1 + len;
    char *buf = malloc(total), *p = buf;
    if (!buf)
        return RC_E_INTERNAL;
    memcpy(p, board, blen + 1); /* with the NUL: a separator no board name holds */
    p += blen + 1;
    memcpy(p, header, hlen);
    p += hlen;
    *p++ = '\0';
    memcpy(p, num, (size_t)nl + 1);
    p += nl + 1;
    memcpy(p, line, len);
    uint64_t h1 = rc_hmap_hash(&k1, buf, total), h2 = rc_hmap_hash(&k2, buf, total);
    free(buf);
    snprintf(out, RC_REQ_MAX + 1, RC_IMPORT_REQ_PREFIX "%016" PRIx64 "%016" PRIx64, h1, h2);
    return 0;
}

int rc_import_row_request(const char *board, enum rc_op op, const struct rc_import_row *row, const char *req,
                      struct rc_request *out, struct rc_error *err)
{
    memset(out, 0, sizeof *out);
    if (strlen(board) > RC_BOARD_MAX || strlen(req) > RC_REQ_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "board name or req too long");
    out->op = op;
    strcpy(out->board, board);
    strcpy(out->member, row->member);
    strcpy(out->req, req);
    out->value = row->score;
    out->nfields = row->nfields;
    memcpy(out->fields, row->fields, sizeof out->fields);
    return 0;
}
