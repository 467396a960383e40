/* rc_members.c - member lists checked, packed, and their absent names
 * (rc_members.h). */
#include "rc_members.h"

#include <stdlib.h>
#include <string.h>

#include "rc_names.h"

struct name {
    const char *p;
    size_t len;
};

static int name_cmp(const void *a, const void *b)
{
    const struct name *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

int rc_members_pack(const char *const *names, const size_t *lens, size_t n, const char *label, char **out,
                    uint32_t *out_len, struct rc_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (n == 0 || n > RC_MEMBERS_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must list 1..%d members", label, RC_MEMBERS_MAX);
    struct name sorted[RC_MEMBERS_MAX];
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !rc_names_member_name_valid(names[i], lens[i]))
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "%s[%zu] must be a member name (1..%d of A-Z a-z 0-9 _ . : @ -)", label, i,
                                RC_MEMBER_MAX);
        sorted[i] = (struct name){names[i], lens[i]};
        bytes += lens[i] + 1;
    }
    /* distinct: sorted, a twin sits next to its twin */
    qsort(sorted, n, sizeof sorted[0], name_cmp);
    for (size_t i = 1; i < n; i++)
        if (name_cmp(&sorted[i - 1], &sorted[i]) == 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "%s lists %.*s twice", label, (int)sorted[i].len,
                                sorted[i].p);
    char *block = malloc(bytes);
    if (!block)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    char *w = block;
    for (size_t i = 0; i < n; i++) {
        memcpy(w, names[i], lens[i]);
        w[lens[i]] = '\0';
        w += lens[i] + 1;
    }
    *out = block;
    *out_len = (uint32_t)bytes;
    return 0;
}

int rc_members_pack_csv(const char *text, char **out, uint32_t *out_count, uint32_t *out_len,
                        struct rc_error *err)
{
    const char *names[RC_MEMBERS_MAX + 1];
    size_t lens[RC_MEMBERS_MAX + 1], n = 0;
    const char *p = text;
    *out = NULL;
    *out_count = 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (n == RC_MEMBERS_MAX + 1)
            return rc_err_set(err, RC_E_BAD_REQUEST, "members must list 1..%d members", RC_MEMBERS_MAX);
        names[n] = p;
        lens[n++] = len;
        if (!comma)
            break;
        p = comma + 1;
    }
    int rc = rc_members_pack(names, lens, n, "members", out, out_len, err);
    if (!rc)
        *out_count = (uint32_t)n;
    return rc;
}

int rc_members_has(const char *list, uint32_t n, const char *member)
{
    const char *p = list;
    for (uint32_t i = 0; i < n; i++, p = rc_members_next(p))
        if (strcmp(p, member) == 0)
            return 1;
    return 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

long rc_members_absent(const char *list, uint32_t n, const struct rc_row *rows, size_t nrows, const char **absent)
{
    return rc_members_absent_max(list, n, rows, nrows, absent, n);
}

long rc_members_absent_max(const char *list, uint32_t n, const struct rc_row *rows, size_t nrows,
                           const char **absent, size_t max)
{
    /* rows are at most the list's size: sort their names, look each listed
     * name up (n log n, not n * nrows) */
    const char **on = nrows ? malloc(nrows * sizeof *on) : NULL;
    if (nrows && !on)
        return -1;
    for (size_t i = 0; i < nrows; i++)
        on[i] = rows[i].member;
    if (nrows > 1)
        qsort(on, nrows, sizeof *on, str_cmp);
    long k = 0;
    const char *p = list;
    for (uint32_t i = 0; i < n && (size_t)k < max; i++, p = rc_members_next(p))
        if (!nrows || !bsearch(&p, on, nrows, sizeof *on, str_cmp))
            absent[k++] = p;
    free(on);
    return k;
}

size_t rc_members_len(const char *list, uint32_t n)
{
    size_t len = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t k = strlen(list + len) + 1;
        len += k;
    }
    return len;
}

char *rc_members_dup(const char *list, uint32_t n, size_t *len)
{
    size_t bytes = n ? rc_members_len(list, n) : 0;
    char *copy = malloc(bytes ? bytes : 1);
    if (copy && bytes)
        memcpy(copy, list, bytes);
    else if (copy)
        copy[0] = '\0';
    if (len)
        *len = bytes;
    return copy;
}
