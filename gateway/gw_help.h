/* gw_help.h - the one text of `rankcast --help` and of the man page rankcast(1).
 *
 * --help prints it (gw_help_print); dist/mkman.c renders the same table as
 * roff at build time, so the two cannot drift. tests/gateway/check_help.py
 * checks that every long option the command line accepts is in it.
 */
#ifndef GW_HELP_H
#define GW_HELP_H

#include <stddef.h>
#include <stdio.h>

/* One item of a section: a term (a flag, a command, a variable, a file;
 * NULL for a plain paragraph) and its text, one paragraph without line
 * breaks (each renderer wraps it its own way). */
struct gw_help_entry {
    const char *term;
    const char *text;
};

struct gw_help_section {
    const char *title; /* upper case, as a man page's section */
    const struct gw_help_entry *entries;
    size_t nentries;
};

extern const char gw_help_name[];    /* "rankcast - ..." (the man page's NAME line) */
extern const char *const gw_help_synopsis[]; /* usage lines, NULL-terminated */
extern const struct gw_help_section gw_help_sections[];
extern const size_t gw_help_nsections;

/* Prints the whole text, wrapped at 80 columns, to f. */
void gw_help_print(FILE *f);

#endif
