/* rc_export_fmt.c - export lines (rc_export_fmt.h). */
#include "rc_export_fmt.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rc_err.h"
#include "rc_proto.h"
#include "rc_score.h"

/* Text appended to out[cap], counting past the end. */
struct out {
    char *p;
    size_t cap, len;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->len < o->cap) {
        size_t room = o->cap - o->len - 1;
        memcpy(o->p + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void finish(struct out *o)
{
    if (o->cap)
        o->p[o->len < o->cap ? o->len : o->cap - 1] = '\0';
}

static void put_csv(struct out *o, const char *s)
{
    size_t n = strlen(s);
    int quote = n && (s[0] == ' ' || s[n - 1] == ' ' || s[0] == '\t' || s[n - 1] == '\t');
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (!quote) {
        put(o, s, n);
        return;
    }
    put(o, "\"", 1);
    for (size_t i = 0; i < n; i++)
        put(o, s[i] == '"' ? "\"\"" : s + i, s[i] == '"' ? 2 : 1);
    put(o, "\"", 1);
}

static void put_json_str(struct out *o, const char *s)
{
    put(o, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            put(o, esc, 2);
        } else if (ch < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            put(o, esc, 6);
        } else {
            put(o, s, 1);
        }
    }
    put(o, "\"", 1);
}

static void put_int(struct out *o, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    puts_(o, buf);
}

int rc_export_fmt_format_parse(const char *s, enum rc_export_format *f)
{
    if (s && strcmp(s, "csv") == 0)
        *f = RC_EXPORT_CSV;
    else if (s && strcmp(s, "jsonl") == 0)
        *f = RC_EXPORT_JSONL;
    else
        return RC_E_BAD_REQUEST;
    return 0;
}

size_t rc_export_fmt_header(const struct rc_board *b, enum rc_export_format f, char *out, size_t cap)
{
    struct out o = {out, cap, 0};
    if (f == RC_EXPORT_CSV) {
        puts_(&o, "rank,member");
        if (!b->layout.nfields)
            puts_(&o, ",score");
        for (unsigned k = 0; k < b->layout.nfields; k++) {
            puts_(&o, ",");
            puts_(&o, b->layout.fields[k].name);
        }
        puts_(&o, ",name\n");
    }
    finish(&o);
    return o.len;
}

size_t rc_export_fmt_row(const struct rc_board *b, enum rc_export_format f, int64_t rank, const char *member, double c,
                     const char *name, char *out, size_t cap)
{
    struct out o = {out, cap, 0};
    double score;
    int64_t fields[RC_MAX_FIELDS];
    unsigned nf;
    char num[RC_NUMBER_TEXT_MAX];
    int multi = b->layout.nfields != 0;
    rc_score_decode(&b->layout, b->decay.kind, c, &score, fields, &nf);
    rc_proto_encode_number_text(score, num, sizeof num);
    if (f == RC_EXPORT_CSV) {
        put_int(&o, rank);
        puts_(&o, ",");
        put_csv(&o, member);
        if (!multi) {
            puts_(&o, ",");
            puts_(&o, num);
        }
        /* a composite that does not decode (written out of band): empty cells */
        for (unsigned k = 0; k < b->layout.nfields; k++) {
            puts_(&o, ",");
            if (k < nf)
                put_int(&o, fields[k]);
        }
        puts_(&o, ",");
        if (name)
            put_csv(&o, name);
        puts_(&o, "\n");
    } else {
        puts_(&o, "{\"rank\":");
        put_int(&o, rank);
        puts_(&o, ",\"member\":");
        put_json_str(&o, member);
        puts_(&o, ",\"score\":");
        puts_(&o, num);
        if (nf) {
            puts_(&o, ",\"fields\":{");
            for (unsigned k = 0; k < nf; k++) {
                if (k)
                    puts_(&o, ",");
                put_json_str(&o, b->layout.fields[k].name);
                puts_(&o, ":");
                put_int(&o, fields[k]);
            }
            puts_(&o, "}");
        }
        if (name && *name) {
            puts_(&o, ",\"name\":");
            put_json_str(&o, name);
        }
        puts_(&o, "}\n");
    }
    finish(&o);
    return o.len;
}
