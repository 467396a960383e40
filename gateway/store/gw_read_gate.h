/* gw_read_gate.h - a cap on the rows of board reads in flight to Redis
 * ([limits] read_rows_in_flight; docs/gateway.md "The Redis links").
 *
 * Redis answers a connection in order, and a page read of 1,000 rows deep in
 * a large board takes it a millisecond or more: thousands of distinct deep
 * pages subscribed at once used to queue seconds of work on the command
 * connection. The gate sends a read while the rows in flight stay within
 * the cap (one read alone always goes, however large) and keeps the others
 * waiting, in order, off the connection; each answer lets the next ones go.
 * So the backlog in Redis is bounded by rows, not by what clients asked.
 * Writes have their own connection (redis/gw_redis.h, gw_redis_eval_write)
 * and never wait here. Counted in /metrics (base/gw_metrics.h). */
#ifndef GW_READ_GATE_H
#define GW_READ_GATE_H

#include <stdint.h>

#include "redis/gw_script.h"
#include "rc_read_args.h"

struct gw_redis;
struct gw_metrics;
struct gw_read_gate_item;

/* Rows in flight charged to one client connection or one source address
 * ([limits] conn_read_rows, ip_read_rows): the rows of the reads its
 * requests sent or left waiting in the gate, until each is answered.
 * Counted references: the connection (or address entry) holds one, each
 * read charged to it another, so a read answered after its client left
 * touches nothing freed. */
struct gw_read_owner {
    int64_t rows;
    unsigned refs;
};

struct gw_read_gate {
    int64_t cap;                   /* rows in flight at most; 0: no gate */
    int64_t in_flight;             /* rows of the reads sent and not answered */
    struct gw_read_gate_item *head, *tail; /* waiting, oldest first */
    struct gw_metrics *m;          /* read_rows_in_flight and friends; may be NULL */
    struct gw_read_owner *charge[2]; /* who reads sent now are charged to (gw_read_gate_charge) */
};

/* A new owner (rows 0, one reference), or NULL (out of memory). */
struct gw_read_owner *gw_read_gate_owner_new(void);
/* Drops one reference (NULL: nothing); frees o with the last. */
void gw_read_gate_owner_unref(struct gw_read_owner *o);

/* Reads sent or queued through g from now until the next call are charged
 * to conn and addr (either may be NULL): a request's handler sets them
 * around the call that may read (the reads of a new view go out before it
 * returns), and clears them after with NULL, NULL. */
void gw_read_gate_charge(struct gw_read_gate *g, struct gw_read_owner *conn, struct gw_read_owner *addr);

/* The rows req reads at most (its cost in the gate): a range's count, an
 * around's or near's 2 * radius + 1, one for a rank or counts. */
int64_t gw_read_gate_rows(const struct rc_read_req *req);

/* 1 when g caps rows in flight (read_rows_in_flight > 0); else reads go
 * straight to Redis (gw_read_call_send in store/gw_read.h, which the caller
 * calls: the gate calls nothing above it). */
int gw_read_gate_active(const struct gw_read_gate *g);

/* As gw_read_call_send (store/gw_read.h), through the active gate g (an inactive
 * or NULL gate: RC_E_INTERNAL, nothing sent).
 * A read that waits is copied; its cb runs once, later: with the reply, or
 * with NULL when it could not be sent when its turn came (Redis went away,
 * the gateway stops). Returns 0, or as gw_read_call_send when it was sent at once
 * and failed (cb is then not called). */
int gw_read_gate_send(struct gw_read_gate *g, struct gw_script *script, struct gw_redis *redis,
                      const struct rc_read_args *a, int64_t rows, gw_script_reply_cb *cb, void *privdata);

#endif
