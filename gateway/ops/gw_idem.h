/* gw_idem.h - each writer's idempotency records, capped ([limits]
 * idempotency_max_per_key, core/rc_idem.h; docs/security.md "Idempotency
 * records").
 *
 * A writer is what the write was authorized as: an API key by its name, a
 * token by its `sub` ("jwt:SUB"; tokens without a sub share "jwt"). Every
 * write is made by one (writes need the write scope), so none escapes the
 * count. A write that will make a record (it has a req, or its board is
 * queued: the consumer keeps "q ENTRY-ID") takes a place before it is sent;
 * past the cap it is never sent with a new record: one without a req is
 * refused rate_limited at once, one with a req is sent with no new record
 * (GW_WRITE_F_NO_NEW_RECORD), so a retry of a req that has its record is
 * still answered duplicate and a new req is refused rate_limited by the
 * script, nothing written (ops/gw_ops.c).
 * When the answer shows no record was made (refused, duplicate, full queue)
 * the place is given back. Counted per process (per worker), as
 * key_write_rate is. Writers nobody used for a whole window are forgotten.
 */
#ifndef GW_IDEM_H
#define GW_IDEM_H

#include <stddef.h>
#include <stdint.h>

#include "net/gw_caller.h"
#include "rc_err.h"

struct gw_app;
struct gw_idem;
struct gw_idem_writer;
struct rc_conf;

/* A place taken by gw_idem_take: give it back or keep it, exactly once. */
struct gw_idem_hold {
    struct gw_idem_writer *w;  /* NULL: nothing held */
    int64_t slot;
};

/* The table for app's configuration; logs a warning when the configured cap
 * is below what key_write_rate lets a key count (gw_idem_floor_warning).
 * Returns NULL when out of memory. */
struct gw_idem *gw_idem_new(const struct gw_app *app);
void gw_idem_free(struct gw_idem *t);

/* The warning for a cap below rc_idem_floor, into out[cap] (""
 * when there is none): --check-config prints it, the start logs it. */
void gw_idem_floor_warning(const struct rc_conf *c, char *out, size_t cap);

/* Takes a place for who's write at now_ms into *hold. Returns 0, or
 * RC_E_RATE_LIMITED (the writer holds the cap; err says so) or
 * RC_E_INTERNAL (out of memory). */
int gw_idem_take(struct gw_idem *t, const struct gw_caller *who, int64_t now_ms, struct gw_idem_hold *hold,
                 struct rc_error *err);

/* The write made its record: the place stays counted until it ages out. */
void gw_idem_keep(struct gw_idem *t, struct gw_idem_hold *hold);

/* The write made no record: its place is free again. */
void gw_idem_give_back(struct gw_idem *t, struct gw_idem_hold *hold);

#endif
