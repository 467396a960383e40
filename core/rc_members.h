/* rc_members.h - member lists (PROTOCOL v1.2 "Member lists"): the list a
 * view {"members": [...]} or ?members= names, checked and packed once, and
 * what its snapshot says of the listed members that are not on the board.
 *
 * A packed list is its names, each NUL-terminated, back to back in the
 * order asked (struct rc_view's members, nmembers, members_len): one
 * allocation a view copies whole, compared and hashed as bytes, so two
 * viewers asking the same list in the same order share one view.
 *
 * Pure: no I/O. */
#ifndef RC_MEMBERS_H
#define RC_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "rc_err.h"
#include "rc_row.h"

#define RC_MEMBERS_MAX 200          /* names in one list */
#define RC_MEMBERS_QUERY_MAX 8192   /* bytes of a REST ?members= value (url-decoded) */

/* Packs names[0..n) (lens[i] bytes each, no NUL needed) into a new block
 * (*out, malloc'd, the caller frees; *out_len bytes). Refuses, with err
 * filled: n 0 or over RC_MEMBERS_MAX, a name that breaks the member rules
 * (core/rc_names.h), a name given twice (RC_E_BAD_REQUEST); out of memory
 * (RC_E_INTERNAL). label names the field in messages ("view.members"). */
int rc_members_pack(const char *const *names, const size_t *lens, size_t n, const char *label, char **out,
                    uint32_t *out_len, struct rc_error *err);

/* The same for a comma-separated text (REST ?members=a,b,c): an empty name
 * (",,", a trailing comma) is a bad name. */
int rc_members_pack_csv(const char *text, char **out, uint32_t *out_count, uint32_t *out_len,
                        struct rc_error *err);

/* The name after p in a packed list (p a name of it). */
static inline const char *rc_members_next(const char *p)
{
    while (*p)
        p++;
    return p + 1;
}

/* The listed names (list, n of them) that are none of rows[0..nrows)'s
 * members, in the order listed, into absent[] (room for n); returns how
 * many. Borrows everything (absent points into list). Allocates a sorted
 * copy of the rows' members when nrows is large; -1 when out of memory. */
long rc_members_absent(const char *list, uint32_t n, const struct rc_row *rows, size_t nrows, const char **absent);

/* rc_members_absent, the first `max` of them only (absent[] has room for
 * max): a big team's roster lists thousands (docs/teams.md). */
long rc_members_absent_max(const char *list, uint32_t n, const struct rc_row *rows, size_t nrows,
                           const char **absent, size_t max);

/* The bytes of a packed list of n names (each with its NUL). */
size_t rc_members_len(const char *list, uint32_t n);
/* A malloc'd copy of a packed list of n names (*len its bytes when len is
 * not NULL; a 1-byte block for n 0); NULL when out of memory. */
char *rc_members_dup(const char *list, uint32_t n, size_t *len);

/* 1 when member is one of the n names of list. */
int rc_members_has(const char *list, uint32_t n, const char *member);

#endif
