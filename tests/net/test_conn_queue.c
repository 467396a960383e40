/* test_conn_queue.c - net/gw_conn's bounded send queue, without lws: the
 * socket is a fake transport (it records frames, and the test says when it
 * holds a partial write: "full"), the fan-out a fake hook table. Proves the queue's rules from
 * gw_conn.h: replies are always kept; view traffic past queue_bytes is
 * dropped and the lagged hook told; owed replies are refused while the queue
 * is full and sent again from the drained hook; the reply cap closes with
 * 1008; a close goes out after what is queued, and nothing after it. And
 * permessage-deflate: a connection that negotiated it gets each message
 * compressed once, the same compressed buffer as every other such
 * connection, RSV1 flagged; short messages and those that do not shrink go
 * in stored blocks (RSV1 too); queue limits count uncompressed bytes. And
 * the send path: an operation's reply goes ahead of queued view traffic (not
 * of replies); with a flush list view traffic waits for gw_conn_flush_run,
 * in slices, and a write failing there closes at the writeable callback.
 * And gathering: several waiting frames go out in one write, framed here,
 * in queue order; a partial write holds back the rest; a message too big
 * for the gather goes alone from its own buffer; permessage-deflate keeps
 * one frame per write. The fake parses a gathered write back into frames,
 * so every test above also runs with gathering on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/gw_metrics.h"
#include "net/gw_conn.h"
#include "rc_deflate.h"
#include "rc_err.h"

#include <zlib.h>

#define MAX_FRAMES 64
#define QUEUE_BYTES 100
#define GATHER_MAX 200 /* the fake transport's gather_max */

struct fake_sock {
    int full;                       /* a partial write is held: writes must wait */
    int fail;                       /* the next write fails */
    size_t nframes;
    char frames[MAX_FRAMES][512];
    unsigned char *bufs[MAX_FRAMES]; /* the payload pointer each write got */
    int close_code;                 /* the close frame written, or 0 */
    unsigned closes;
    unsigned want;                  /* writeable callbacks asked for */
    unsigned writes_after_close;
    unsigned flags[MAX_FRAMES];      /* GW_TX_* of each write */
    size_t lens[MAX_FRAMES];
    unsigned writes;                /* write calls (a gather is one) */
    unsigned frames_in[MAX_FRAMES]; /* frames each write carried */
    unsigned char *wbuf[MAX_FRAMES]; /* the buffer each write got */
    int partial_next;               /* the next write is taken in part: full after it */
};

/* A gathered write: parses its frames (unfragmented unmasked text frames,
 * no RSV) back into the record, each as its own frame. */
static int fake_write_frames(struct fake_sock *s, unsigned char *buf, size_t len)
{
    size_t at = 0;
    unsigned n = 0;
    while (at < len) {
        assert_true(len - at >= 2);
        assert_int_equal(buf[at], 0x81); /* FIN, text, no RSV */
        size_t pl = buf[at + 1], hl = 2;
        assert_int_equal(pl & 0x80, 0); /* server frames are not masked */
        if (pl == 126) {
            pl = (size_t)buf[at + 2] << 8 | buf[at + 3];
            hl = 4;
            assert_true(pl >= 126);
        } else {
            assert_true(pl < 126);
        }
        assert_true(at + hl + pl <= len);
        assert_true(s->nframes < MAX_FRAMES && pl < sizeof s->frames[0]);
        memcpy(s->frames[s->nframes], buf + at + hl, pl);
        s->frames[s->nframes][pl] = '\0';
        s->flags[s->nframes] = GW_TX_FRAMES;
        s->lens[s->nframes] = pl;
        s->bufs[s->nframes++] = buf + at + hl;
        at += hl + pl;
        n++;
    }
    assert_true(n >= 2); /* a gather is worth it only for several */
    return (int)n;
}

static int fake_write(void *sock, unsigned char *buf, size_t len, unsigned flags)
{
    struct fake_sock *s = sock;
    assert_false(s->full); /* the queue never writes into a full socket */
    if (s->close_code)
        s->writes_after_close++;
    if (s->fail)
        return RC_E_INTERNAL;
    assert_true(s->writes < MAX_FRAMES);
    s->wbuf[s->writes] = buf;
    if (s->partial_next) { /* lws keeps the rest and sends it first */
        s->partial_next = 0;
        s->full = 1;
    }
    if (flags & GW_TX_FRAMES) {
        assert_true(len <= GATHER_MAX);
        s->frames_in[s->writes++] = (unsigned)fake_write_frames(s, buf, len);
        return 0;
    }
    s->frames_in[s->writes++] = 1;
    s->flags[s->nframes] = flags;
    s->lens[s->nframes] = len;
    assert_true(s->nframes < MAX_FRAMES);
    assert_true(len < sizeof s->frames[0]);
    memcpy(s->frames[s->nframes], buf, len);
    s->frames[s->nframes][len] = '\0';
    s->bufs[s->nframes++] = buf;
    return 0;
}

static int fake_close(void *sock, int code)
{
    struct fake_sock *s = sock;
    s->close_code = code;
    s->closes++;
    return 0;
}

static int fake_buffered(void *sock)
{
    return ((struct fake_sock *)sock)->full;
}

static void fake_want(void *sock)
{
    ((struct fake_sock *)sock)->want++;
}

static const struct gw_conn_transport fake_tx = {fake_write, fake_close, fake_buffered, fake_want, GATHER_MAX};

/* The fan-out's side: counts, and on drain sends what the test lined up. */
struct fake_fanout {
    unsigned lagged, drained;
    struct gw_msg *owed[4];         /* sent one per drain, as the fan-out does */
    size_t nowed;
    int refused;                    /* send_owed refused one */
};

static void hook_lagged(void *data, struct gw_conn *c)
{
    (void)c;
    ((struct fake_fanout *)data)->lagged++;
}

static int hook_drained(void *data, struct gw_conn *c)
{
    struct fake_fanout *f = data;
    f->drained++;
    if (!f->nowed)
        return 0;
    if (gw_conn_send_owed(c, f->owed[0]) != 0) {
        f->refused++;
        return 1;
    }
    gw_msg_unref(f->owed[0]);
    memmove(f->owed, f->owed + 1, --f->nowed * sizeof *f->owed);
    return 1;
}

struct fixture {
    struct fake_sock sock;
    struct fake_fanout fo;
    struct gw_metrics metrics;
    struct gw_conn_ctx ctx;
    struct gw_conn *c;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->ctx = (struct gw_conn_ctx){&fake_tx, {&f->fo, hook_lagged, hook_drained}, &f->metrics, QUEUE_BYTES, NULL, NULL, NULL};
    if (gw_conn_gather_init(&f->ctx) != 0)
        return -1;
    f->c = gw_conn_new(&f->ctx, &f->sock);
    *state = f;
    return f->c ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    gw_conn_on_closed(f->c);
    gw_conn_unref(f->c);
    for (size_t i = 0; i < f->fo.nowed; i++)
        gw_msg_unref(f->fo.owed[i]);
    rc_deflate_free(f->ctx.deflater);
    gw_conn_gather_free(&f->ctx);
    free(f);
    return 0;
}

/* A message of exactly len bytes starting with tag. */
static struct gw_msg *msg(const char *tag, size_t len)
{
    char text[512];
    assert_true(len < sizeof text && strlen(tag) <= len);
    memset(text, '.', len);
    memcpy(text, tag, strlen(tag));
    struct gw_msg *m = gw_msg_new(text, len);
    assert_non_null(m);
    return m;
}

static void send_one(struct gw_conn *c, const char *tag, size_t len, int droppable)
{
    struct gw_msg *m = msg(tag, len);
    gw_conn_send(c, m, droppable);
    gw_msg_unref(m);
}

/* The socket takes data again: writeable callbacks until the queue is empty
 * and nothing more is owed (bounded: a queue that never empties fails). */
static void drain(struct fixture *f)
{
    f->sock.full = 0;
    for (int i = 0; i < 100 && (f->c->q_count || f->c->resync || (f->c->close_code && !f->c->close_sent)); i++)
        assert_int_equal(gw_conn_on_writeable(f->c), 0);
    assert_int_equal(f->c->q_count, 0);
}

static int frame_is(const struct fake_sock *s, size_t i, const char *tag)
{
    return i < s->nframes && strncmp(s->frames[i], tag, strlen(tag)) == 0;
}

static void a_socket_that_takes_data_is_written_at_once(void **state)
{
    struct fixture *f = *state;
    send_one(f->c, "d1", 30, 1);
    send_one(f->c, "r1", 30, 0);
    assert_int_equal(f->sock.nframes, 2);
    assert_true(frame_is(&f->sock, 0, "d1") && frame_is(&f->sock, 1, "r1"));
    assert_int_equal(f->c->q_count, 0);
    assert_int_equal(f->metrics.bytes_sent, 60);
}

static void the_same_buffer_reaches_the_socket_without_copy(void **state)
{
    struct fixture *f = *state;
    struct gw_msg *m = msg("shared", 20);
    f->sock.full = 1;
    gw_conn_send(f->c, m, 1);
    assert_int_equal(m->refs, 2); /* the queue holds a reference */
    drain(f);
    assert_ptr_equal(f->sock.bufs[0], gw_msg_payload(m));
    assert_int_equal(m->refs, 1); /* let go once written */
    gw_msg_unref(m);
}

static void replies_are_kept_when_view_traffic_past_queue_bytes_is_dropped(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "d1", 40, 1);
    send_one(f->c, "r1", 60, 0);
    send_one(f->c, "d2", 40, 1);
    assert_int_equal(f->fo.lagged, 0);
    send_one(f->c, "d3", 40, 1); /* 120 view bytes > 100: laggard */
    assert_int_equal(f->fo.lagged, 1);
    assert_int_equal(f->metrics.queue_drops, 1);
    assert_true(f->c->resync);
    assert_int_equal(f->c->q_count, 1);
    assert_int_equal(f->c->q_view_bytes, 0);
    assert_int_equal(f->c->q_reply_bytes, 60);
    drain(f);
    assert_int_equal(f->sock.nframes, 1);
    assert_true(frame_is(&f->sock, 0, "r1"));
    assert_int_equal(f->fo.drained, 1); /* told once the queue emptied */
    assert_false(f->c->resync);
}

static void owed_reply_is_refused_while_full_and_sent_when_it_drains(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "d1", 40, 1);
    send_one(f->c, "d2", 40, 1);
    struct gw_msg *snap = msg("snap", 50);
    assert_int_equal(gw_conn_send_owed(f->c, snap), RC_E_RATE_LIMITED); /* 80 + 50 > 100 */
    assert_true(f->c->resync);
    assert_int_equal(f->c->q_count, 2);
    assert_int_equal(f->metrics.queue_drops, 1);
    f->fo.owed[f->fo.nowed++] = snap; /* the fan-out keeps it owed */
    drain(f);
    assert_int_equal(f->sock.nframes, 3);
    assert_true(frame_is(&f->sock, 0, "d1") && frame_is(&f->sock, 1, "d2") && frame_is(&f->sock, 2, "snap"));
    assert_int_equal(f->fo.refused, 0);
    assert_int_equal(f->fo.nowed, 0);
    assert_false(f->c->resync);
}

static void an_empty_queue_takes_an_owed_reply_of_any_size(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    struct gw_msg *big = msg("big", 3 * QUEUE_BYTES);
    assert_int_equal(gw_conn_send_owed(f->c, big), 0);
    gw_msg_unref(big);
    assert_int_equal(f->c->q_owed_bytes, 3 * QUEUE_BYTES);
    /* taken owed bytes are kept like replies: view traffic still fits */
    send_one(f->c, "d1", 40, 1);
    assert_int_equal(f->fo.lagged, 0);
    drain(f);
    assert_int_equal(f->sock.nframes, 2);
}

static void a_laggard_gets_one_owed_snapshot_per_drain(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "d1", 60, 1);
    send_one(f->c, "d2", 60, 1); /* dropped: lagged */
    assert_int_equal(f->fo.lagged, 1);
    f->fo.owed[f->fo.nowed++] = msg("s1", 70);
    f->fo.owed[f->fo.nowed++] = msg("s2", 70);
    f->sock.full = 0;
    /* each writeable turn: the queue is empty, so one snapshot goes */
    assert_int_equal(gw_conn_on_writeable(f->c), 0);
    assert_int_equal(f->sock.nframes, 1);
    assert_true(frame_is(&f->sock, 0, "s1"));
    assert_true(f->c->resync);
    assert_int_equal(gw_conn_on_writeable(f->c), 0);
    assert_true(frame_is(&f->sock, 1, "s2"));
    assert_int_equal(gw_conn_on_writeable(f->c), 0);
    assert_false(f->c->resync); /* nothing owed any more */
    assert_int_equal(f->fo.drained, 3);
    assert_int_equal(f->sock.nframes, 2);
}

static void replies_past_the_hard_cap_close_with_1008(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    for (int i = 0; i < 4; i++) /* 4 x 100 = the cap (4 x queue_bytes) */
        send_one(f->c, "r", QUEUE_BYTES, 0);
    assert_int_equal(f->c->close_code, 0);
    send_one(f->c, "over", QUEUE_BYTES, 0);
    assert_int_equal(f->c->close_code, GW_CLOSE_POLICY_VIOLATION);
    send_one(f->c, "late", 10, 0); /* closing: nothing more is queued */
    assert_int_equal(f->c->q_count, 4);
    drain(f);
    assert_int_equal(f->sock.nframes, 4);
    assert_int_equal(f->sock.closes, 1);
    assert_int_equal(f->sock.close_code, 1008);
}

static void close_goes_out_after_what_is_queued_and_nothing_after_it(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "r1", 20, 0);
    send_one(f->c, "d1", 20, 1);
    gw_conn_close(f->c, GW_CLOSE_GOING_AWAY);
    gw_conn_close(f->c, GW_CLOSE_POLICY_VIOLATION); /* the first code stands */
    assert_int_equal(f->sock.closes, 0);
    drain(f);
    assert_int_equal(f->sock.nframes, 2);
    assert_int_equal(f->sock.closes, 1);
    assert_int_equal(f->sock.close_code, 1001);
    send_one(f->c, "r2", 20, 0);
    struct gw_msg *m = msg("owed", 20);
    assert_int_equal(gw_conn_send_owed(f->c, m), 0); /* nothing owed to a closing peer */
    gw_msg_unref(m);
    assert_int_equal(gw_conn_on_writeable(f->c), 0);
    assert_int_equal(f->sock.nframes, 2);
    assert_int_equal(f->sock.closes, 1);
    assert_int_equal(f->sock.writes_after_close, 0);
}

static void a_failed_write_closes_with_1011(void **state)
{
    struct fixture *f = *state;
    f->sock.fail = 1;
    send_one(f->c, "d1", 20, 1);
    assert_int_equal(f->c->close_code, GW_CLOSE_UNEXPECTED);
    f->sock.fail = 0;
    drain(f);
    assert_int_equal(f->sock.close_code, 1011);
}

static void a_failed_write_from_the_queue_asks_the_transport_to_close(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "d1", 20, 1);
    f->sock.full = 0;
    f->sock.fail = 1;
    assert_int_equal(gw_conn_on_writeable(f->c), -1);
    assert_int_equal(f->c->q_count, 0);
}

static void a_closed_connection_drops_its_queue_and_what_arrives_later(void **state)
{
    struct fixture *f = *state;
    struct gw_msg *m = msg("d1", 20);
    f->sock.full = 1;
    gw_conn_send(f->c, m, 1);
    assert_int_equal(m->refs, 2);
    gw_conn_ref(f->c); /* a request in flight */
    gw_conn_on_closed(f->c);
    assert_int_equal(m->refs, 1);
    gw_conn_send(f->c, m, 0); /* its answer arrives after the close */
    gw_conn_reply(f->c, strdup("{\"late\":1}"));
    assert_int_equal(m->refs, 1);
    assert_int_equal(f->c->q_count, 0);
    gw_conn_unref(f->c);
    gw_msg_unref(m);
}

/* ---- permessage-deflate ------------------------------------------------- */

/* A JSON-like text of len bytes that compresses well (a delta's rows). */
static struct gw_msg *json_msg(size_t len)
{
    char text[512];
    size_t n = 0;
    assert_true(len < sizeof text);
    for (int i = 0; n < len; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "{\"member\":\"user:%d\",\"score\":%d},", i, 1000 - i);
    struct gw_msg *m = gw_msg_new(text, len);
    assert_non_null(m);
    return m;
}

/* What a receiver gets back: raw inflate of payload + 00 00 ff ff. */
static size_t inflate_msg(const unsigned char *p, size_t n, char *out, size_t cap)
{
    unsigned char in[600];
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_true(n + 4 <= sizeof in);
    memcpy(in, p, n);
    memcpy(in + n, "\x00\x00\xff\xff", 4);
    assert_int_equal(inflateInit2(&z, -15), Z_OK);
    z.next_in = in;
    z.avail_in = (uInt)(n + 4);
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    int rc = inflate(&z, Z_SYNC_FLUSH);
    assert_true(rc == Z_OK || rc == Z_BUF_ERROR);
    size_t got = cap - z.avail_out;
    inflateEnd(&z);
    return got;
}

static void deflate_on(struct fixture *f)
{
    f->ctx.deflater = rc_deflate_new(6);
    assert_non_null(f->ctx.deflater);
    f->c->deflate = 1;
}

static void a_compressing_connection_gets_the_message_compressed_with_rsv1(void **state)
{
    struct fixture *f = *state;
    char back[512];
    deflate_on(f);
    struct gw_msg *m = json_msg(400);
    gw_conn_send(f->c, m, 0);
    assert_int_equal(f->sock.nframes, 1);
    assert_int_equal(f->sock.flags[0], GW_TX_OWN_FRAME | GW_TX_COMPRESSED);
    assert_true(f->sock.lens[0] < 200);
    assert_int_equal(inflate_msg(f->sock.bufs[0], f->sock.lens[0], back, sizeof back), 400);
    assert_memory_equal(back, gw_msg_payload(m), 400);
    assert_int_equal(f->metrics.bytes_sent, f->sock.lens[0]);
    assert_int_equal(f->metrics.deflate_runs, 1);
    gw_msg_unref(m);
}

static void every_compressing_connection_shares_one_compressed_buffer(void **state)
{
    struct fixture *f = *state;
    struct fake_sock other;
    memset(&other, 0, sizeof other);
    deflate_on(f);
    struct gw_conn *c2 = gw_conn_new(&f->ctx, &other);
    assert_non_null(c2);
    c2->deflate = 1;
    struct gw_msg *m = json_msg(300);
    gw_conn_send(f->c, m, 0);
    other.full = 1; /* the second one queues it, and writes it later */
    gw_conn_send(c2, m, 0);
    assert_int_equal(c2->q_reply_bytes, 300); /* queued at its uncompressed size */
    other.full = 0;
    assert_int_equal(gw_conn_on_writeable(c2), 0);
    assert_int_equal(other.nframes, 1);
    assert_ptr_equal(other.bufs[0], f->sock.bufs[0]); /* the very same bytes */
    assert_int_equal(other.flags[0], GW_TX_OWN_FRAME | GW_TX_COMPRESSED);
    assert_int_equal(f->metrics.deflate_runs, 1);     /* compressed once */
    assert_int_equal(f->metrics.deflate_compressed, 2);
    gw_conn_on_closed(c2);
    gw_conn_unref(c2);
    gw_msg_unref(m);
}

static void short_messages_go_in_stored_blocks_without_compressing(void **state)
{
    struct fixture *f = *state;
    char back[512];
    deflate_on(f);
    struct gw_msg *m = msg("{\"op\":\"pong\"}", GW_DEFLATE_MIN - 1);
    gw_conn_send(f->c, m, 0);
    assert_int_equal(f->sock.nframes, 1);
    assert_int_equal(f->sock.flags[0], GW_TX_OWN_FRAME | GW_TX_COMPRESSED);
    assert_int_equal(f->sock.lens[0], GW_DEFLATE_MIN - 1 + 6);
    assert_int_equal(inflate_msg(f->sock.bufs[0], f->sock.lens[0], back, sizeof back), GW_DEFLATE_MIN - 1);
    assert_memory_equal(back, gw_msg_payload(m), GW_DEFLATE_MIN - 1);
    assert_int_equal(f->metrics.deflate_runs, 0);
    assert_int_equal(f->metrics.deflate_compressed, 0);
    gw_msg_unref(m);
}

static void a_message_compression_does_not_shrink_goes_in_stored_blocks(void **state)
{
    struct fixture *f = *state;
    unsigned char noise[300];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof noise; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (unsigned char)(x >> 24);
    }
    deflate_on(f);
    struct gw_msg *m = gw_msg_new((const char *)noise, sizeof noise);
    assert_non_null(m);
    gw_conn_send(f->c, m, 0);
    gw_conn_send(f->c, m, 0); /* tried once only */
    assert_int_equal(f->sock.nframes, 2);
    assert_int_equal(f->sock.flags[1], GW_TX_OWN_FRAME | GW_TX_COMPRESSED);
    assert_int_equal(f->sock.lens[1], sizeof noise + 6);
    assert_ptr_equal(f->sock.bufs[1], f->sock.bufs[0]); /* made once */
    assert_int_equal(f->metrics.deflate_runs, 1);
    assert_int_equal(f->metrics.deflate_compressed, 0);
    gw_msg_unref(m);
}

static void a_connection_without_compression_writes_plain_text_frames(void **state)
{
    struct fixture *f = *state;
    f->ctx.deflater = rc_deflate_new(6); /* others compress; this one did not negotiate */
    struct gw_msg *m = json_msg(400);
    gw_conn_send(f->c, m, 0);
    assert_int_equal(f->sock.flags[0], 0);
    assert_int_equal(f->sock.lens[0], 400);
    assert_null(m->z);
    gw_msg_unref(m);
}

/* A reply that goes first (an operation's answer) overtakes the view
 * traffic queued behind the last reply, never a reply; with nothing but view
 * traffic queued it is written at once. */
static void a_reply_first_overtakes_queued_view_traffic_but_no_reply(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "d1", 10, 1);
    send_one(f->c, "r1", 10, 0);
    send_one(f->c, "d2", 10, 1);
    send_one(f->c, "d3", 10, 1);
    gw_conn_reply_first(f->c, strdup("a1"));
    drain(f);
    assert_int_equal(f->sock.nframes, 5);
    assert_true(frame_is(&f->sock, 0, "d1") && frame_is(&f->sock, 1, "r1") && frame_is(&f->sock, 2, "a1") &&
                frame_is(&f->sock, 3, "d2") && frame_is(&f->sock, 4, "d3"));
    assert_int_equal(f->c->q_reply_bytes + f->c->q_view_bytes, 0);
}

static void kick(void *data)
{
    (*(unsigned *)data)++;
}

/* With a flush list, view traffic is only queued when sent, and written by
 * gw_conn_flush_run (a slice of connections per loop turn); a reply that
 * goes first is written at once, ahead of it. */
static void with_a_flush_list_view_traffic_waits_for_the_flush_and_acks_do_not(void **state)
{
    struct fixture *f = *state;
    unsigned kicks = 0;
    struct gw_conn_flush fl = {NULL, NULL, kick, &kicks};
    f->ctx.flush = &fl;
    send_one(f->c, "d1", 10, 1);
    send_one(f->c, "d2", 10, 1);
    assert_int_equal(f->sock.nframes, 0);
    assert_int_equal(kicks, 1); /* once, when the list stopped being empty */
    assert_int_equal(f->c->refs, 2); /* the list holds one */
    gw_conn_reply_first(f->c, strdup("a1"));
    assert_int_equal(f->sock.nframes, 1);
    assert_true(frame_is(&f->sock, 0, "a1"));
    assert_int_equal(gw_conn_flush_run(&fl, 10), 0);
    assert_int_equal(f->sock.nframes, 3);
    assert_true(frame_is(&f->sock, 1, "d1") && frame_is(&f->sock, 2, "d2"));
    assert_int_equal(f->c->refs, 1);
    /* a partial write held by the transport: the flush leaves it to the
     * writeable callback */
    f->sock.full = 1;
    send_one(f->c, "d3", 10, 1);
    unsigned want = f->sock.want;
    assert_int_equal(gw_conn_flush_run(&fl, 10), 0);
    assert_int_equal(f->sock.nframes, 3);
    assert_true(f->sock.want > want);
    drain(f);
    assert_true(frame_is(&f->sock, 3, "d3"));
    /* the list is cut into slices */
    send_one(f->c, "d4", 10, 1);
    struct gw_conn *other = gw_conn_new(&f->ctx, &f->sock);
    assert_non_null(other);
    send_one(other, "o1", 10, 1);
    assert_int_equal(gw_conn_flush_run(&fl, 1), 1);
    assert_int_equal(gw_conn_flush_run(&fl, 1), 0);
    assert_true(frame_is(&f->sock, 4, "d4") && frame_is(&f->sock, 5, "o1"));
    gw_conn_flush_clear(&fl);
    gw_conn_on_closed(other);
    gw_conn_unref(other);
    f->ctx.flush = NULL;
}

/* A write that fails during a flush: nothing more is written, and the
 * writeable callback it asks for tells the transport to close (-1). */
static void a_write_failing_in_the_flush_closes_at_the_writeable_callback(void **state)
{
    struct fixture *f = *state;
    unsigned kicks = 0;
    struct gw_conn_flush fl = {NULL, NULL, kick, &kicks};
    f->ctx.flush = &fl;
    send_one(f->c, "d1", 10, 1);
    send_one(f->c, "d2", 10, 1);
    f->sock.fail = 1;
    unsigned want = f->sock.want;
    assert_int_equal(gw_conn_flush_run(&fl, 10), 0);
    assert_true(f->c->failed);
    assert_true(f->sock.want > want);
    assert_int_equal(gw_conn_on_writeable(f->c), -1);
    assert_int_equal(f->sock.nframes, 0);
    f->ctx.flush = NULL;
}


/* ---- gathering ------------------------------------------------------------ */

/* Six messages waiting: the frames at the head go out together, as many as
 * fit in gather_max (22 bytes framed each: 9 fit in 200), in queue order,
 * built in the loop's one gather buffer; the rest follow in the next. */
static void several_waiting_frames_go_out_in_one_write_in_order(void **state)
{
    struct fixture *f = *state;
    char tag[8];
    f->sock.full = 1;
    for (int i = 0; i < 10; i++) {
        snprintf(tag, sizeof tag, "m%d", i);
        send_one(f->c, tag, 20, 0); /* replies: kept whatever queue_bytes says */
    }
    drain(f);
    assert_int_equal(f->sock.writes, 2);
    assert_int_equal(f->sock.frames_in[0], 9);
    assert_int_equal(f->sock.frames_in[1], 1); /* the last alone: written from its own buffer */
    assert_int_equal(f->sock.nframes, 10);
    for (int i = 0; i < 10; i++) {
        snprintf(tag, sizeof tag, "m%d", i);
        assert_true(frame_is(&f->sock, (size_t)i, tag));
        assert_int_equal(f->sock.lens[i], 20);
    }
    assert_ptr_equal(f->sock.wbuf[0], f->ctx.gather + GW_MSG_PRE); /* no allocation per write */
    assert_int_equal(f->sock.flags[0], GW_TX_FRAMES);
    assert_int_equal(f->sock.flags[9], 0);
    assert_int_equal(f->metrics.bytes_sent, 200); /* payload bytes, as before */
    assert_int_equal(f->metrics.frame_writes, 2);
    assert_int_equal(f->metrics.frames_gathered, 9);
    assert_int_equal(f->c->q_reply_bytes + f->c->q_view_bytes + f->c->q_owed_bytes, 0);
}

/* Frames of 126 bytes and more take the 16-bit length form of the header. */
static void a_gathered_frame_of_126_bytes_or_more_has_the_long_header(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "long", 130, 0);
    send_one(f->c, "short", 30, 0);
    drain(f);
    assert_int_equal(f->sock.writes, 1);
    assert_int_equal(f->sock.frames_in[0], 2);
    assert_int_equal(f->sock.lens[0], 130);
    assert_true(frame_is(&f->sock, 0, "long") && frame_is(&f->sock, 1, "short"));
}

/* The transport takes part of a gathered write and keeps the rest (lws'
 * buflist_out): nothing more is written until it has sent it, and what
 * follows comes after it, in order. */
static void a_partial_gathered_write_holds_back_the_rest_in_order(void **state)
{
    struct fixture *f = *state;
    char tag[8];
    f->sock.full = 1;
    for (int i = 0; i < 12; i++) {
        snprintf(tag, sizeof tag, "p%d", i);
        send_one(f->c, tag, 20, 0);
    }
    f->sock.full = 0;
    f->sock.partial_next = 1;
    assert_int_equal(gw_conn_on_writeable(f->c), 0);
    assert_int_equal(f->sock.writes, 1); /* then the socket was full: the queue waits */
    assert_int_equal(f->c->q_count, 3);
    assert_true(f->sock.want > 0);
    send_one(f->c, "late", 20, 0); /* a reply: queued behind, not written into the full socket */
    assert_int_equal(f->sock.writes, 1);
    drain(f);
    assert_int_equal(f->sock.nframes, 13);
    for (int i = 0; i < 12; i++) {
        snprintf(tag, sizeof tag, "p%d", i);
        assert_true(frame_is(&f->sock, (size_t)i, tag));
    }
    assert_true(frame_is(&f->sock, 12, "late"));
}

/* A message too big to share a gather goes alone, from its own buffer (no
 * copy); the small ones around it are gathered, and the order holds. */
static void a_message_too_big_to_gather_goes_alone_from_its_own_buffer(void **state)
{
    struct fixture *f = *state;
    struct gw_msg *big = msg("big", 190); /* 194 framed: with any other it is past 200 */
    f->sock.full = 1;
    send_one(f->c, "a1", 20, 0);
    send_one(f->c, "a2", 20, 0);
    gw_conn_send(f->c, big, 0);
    send_one(f->c, "b1", 20, 0);
    send_one(f->c, "b2", 20, 0);
    f->sock.full = 0;
    assert_int_equal(gw_conn_on_writeable(f->c), 0);
    assert_int_equal(f->sock.writes, 3);
    assert_int_equal(f->sock.frames_in[0], 2);
    assert_int_equal(f->sock.frames_in[1], 1);
    assert_ptr_equal(f->sock.wbuf[1], gw_msg_payload(big));
    assert_int_equal(f->sock.frames_in[2], 2);
    assert_true(frame_is(&f->sock, 0, "a1") && frame_is(&f->sock, 1, "a2") && frame_is(&f->sock, 2, "big") &&
                frame_is(&f->sock, 3, "b1") && frame_is(&f->sock, 4, "b2"));
    gw_msg_unref(big);
}

/* An operation's answer still goes ahead of the queued view traffic, and
 * goes out gathered with it, first. */
static void a_reply_first_leads_the_gather(void **state)
{
    struct fixture *f = *state;
    f->sock.full = 1;
    send_one(f->c, "d1", 20, 1);
    send_one(f->c, "d2", 20, 1);
    gw_conn_reply_first(f->c, strdup("{\"ack\":1}"));
    drain(f);
    assert_int_equal(f->sock.writes, 1);
    assert_int_equal(f->sock.frames_in[0], 3);
    assert_true(frame_is(&f->sock, 0, "{\"ack\":1}") && frame_is(&f->sock, 1, "d1") && frame_is(&f->sock, 2, "d2"));
}

/* permessage-deflate: one frame per write, compressed form and RSV1 as
 * before, even with several waiting. */
static void a_compressing_connection_keeps_one_frame_per_write(void **state)
{
    struct fixture *f = *state;
    deflate_on(f);
    f->sock.full = 1;
    send_one(f->c, "z1", 20, 1);
    send_one(f->c, "z2", 20, 1);
    send_one(f->c, "z3", 20, 0);
    drain(f);
    assert_int_equal(f->sock.writes, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(f->sock.frames_in[i], 1);
        assert_int_equal(f->sock.flags[i], GW_TX_OWN_FRAME | GW_TX_COMPRESSED);
    }
    assert_int_equal(f->metrics.frames_gathered, 0);
}

/* Without a gather buffer (gather_max 0, or no memory) frames go one per
 * write. */
static void without_a_gather_buffer_frames_go_one_per_write(void **state)
{
    struct fixture *f = *state;
    gw_conn_gather_free(&f->ctx);
    f->sock.full = 1;
    send_one(f->c, "s1", 20, 1);
    send_one(f->c, "s2", 20, 1);
    drain(f);
    assert_int_equal(f->sock.writes, 2);
    assert_true(frame_is(&f->sock, 0, "s1") && frame_is(&f->sock, 1, "s2"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(a_socket_that_takes_data_is_written_at_once),
        T(the_same_buffer_reaches_the_socket_without_copy),
        T(replies_are_kept_when_view_traffic_past_queue_bytes_is_dropped),
        T(owed_reply_is_refused_while_full_and_sent_when_it_drains),
        T(a_reply_first_overtakes_queued_view_traffic_but_no_reply),
        T(with_a_flush_list_view_traffic_waits_for_the_flush_and_acks_do_not),
        T(a_write_failing_in_the_flush_closes_at_the_writeable_callback),
        T(an_empty_queue_takes_an_owed_reply_of_any_size),
        T(a_laggard_gets_one_owed_snapshot_per_drain),
        T(replies_past_the_hard_cap_close_with_1008),
        T(close_goes_out_after_what_is_queued_and_nothing_after_it),
        T(a_failed_write_closes_with_1011),
        T(a_failed_write_from_the_queue_asks_the_transport_to_close),
        T(a_closed_connection_drops_its_queue_and_what_arrives_later),
        T(a_compressing_connection_gets_the_message_compressed_with_rsv1),
        T(every_compressing_connection_shares_one_compressed_buffer),
        T(short_messages_go_in_stored_blocks_without_compressing),
        T(a_message_compression_does_not_shrink_goes_in_stored_blocks),
        T(a_connection_without_compression_writes_plain_text_frames),
        T(several_waiting_frames_go_out_in_one_write_in_order),
        T(a_gathered_frame_of_126_bytes_or_more_has_the_long_header),
        T(a_partial_gathered_write_holds_back_the_rest_in_order),
        T(a_message_too_big_to_gather_goes_alone_from_its_own_buffer),
        T(a_reply_first_leads_the_gather),
        T(a_compressing_connection_keeps_one_frame_per_write),
        T(without_a_gather_buffer_frames_go_one_per_write),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
