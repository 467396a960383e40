/* gw_read_at_chain.h - one moment no base serves within history_undo_max,
 * rebuilt in several bounded read.lua calls (core/rc_moment_chain.h;
 * docs/history.md, "A moment no base serves within the cap"). */
#ifndef GW_READ_AT_CHAIN_H
#define GW_READ_AT_CHAIN_H

#include "rc_layout.h"
#include "rc_moment_chain.h"

struct gw_store;

/* code 0: r is the moment's reply (status OK or GONE), borrowed for the
 * call; else an RC_E_* and r NULL. */
typedef void gw_read_at_chain_cb(int code, struct rc_moment_reply *r, void *privdata);

/* Reads the moment deep names (a DEEP reply with has_chain) of board
 * `board` in `period` for view v, in calls of at most s->history_undo_max
 * changes each, the loop serving others between them. Copies what it needs
 * of deep and v. Returns 0 when sent (cb runs once, later), or
 * RC_E_BAD_REQUEST (a view a chain does not rebuild), RC_E_UNAVAILABLE,
 * RC_E_INTERNAL (cb not called). */
int gw_read_at_chain(const struct gw_store *s, const char *board, const char *period, enum rc_order order,
                     const struct rc_moment_chain_view *v, const struct rc_moment_reply *deep,
                     gw_read_at_chain_cb *cb, void *privdata);

#endif
