/* gw_vcount.h - viewer counts across gateways (gw_vcount.c): each board
 * name's count, ours and the other gateways' sum (docs/gateway.md, the table of
 * what is shared). Internal to fanout/ (gw_fanout_int.h includes it). */
#ifndef GW_VCOUNT_H
#define GW_VCOUNT_H

#include <stdint.h>

struct gw_board;
struct gw_fanout;
struct gw_vcount;

/* Sets up the table and this process's gateway id (f->vid, f->vscript). */
void gw_vcount_init(struct gw_fanout *f);
void gw_vcount_free(struct gw_fanout *f);
/* Ties b to its name's count (created when missing). Returns 0 or RC_E_INTERNAL. */
int gw_vcount_attach(struct gw_fanout *f, struct gw_board *b);
void gw_vcount_detach(struct gw_fanout *f, struct gw_board *b);
/* What b's viewers are shown: the other gateways' sum and ours now. */
int64_t gw_vcount_shown(const struct gw_board *b);
struct gw_vcount *gw_vcount_find(const struct gw_fanout *f, const char *name);
/* Frees vc unless a board, a call in flight or our field in Redis needs it. */
void gw_vcount_maybe_free(struct gw_fanout *f, struct gw_vcount *vc);

#endif
