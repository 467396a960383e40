/* gw_wsguard.h - RFC 6455 frame rules libwebsockets 4.1 does not enforce,
 * checked on the bytes lws reads from WebSocket sockets (plain, or decrypted
 * from TLS by serve/gw_tlsread.c): an
 * unmasked client frame, a control frame over 125 bytes or without FIN, a
 * reserved opcode, an RSV bit (RSV1 is allowed where permessage-deflate
 * puts it, on connections that negotiated it), a 64-bit length with its top bit set. Any of
 * them: a close frame 1002, then the connection is closed. gw_wsguard.c
 * says how, and what it does not cover.
 *
 * The same place sees every frame before lws spends anything on it, so it
 * also hands the count of continuation, ping and pong frames in each read up
 * to a charge hook (serve/gw_ws_frames.c: the read budgets), which may close
 * the connection before lws parses any of those bytes, and says whether a
 * fragmented message is unfinished (message_timeout).
 */
#ifndef GW_WSGUARD_H
#define GW_WSGUARD_H

#include <stddef.h>
#include <stdint.h>

#include "rc_wsframe.h"

/* Called from recv() (or SSL_read(), with TLS) for a watched fd whose bytes just read begin frames
 * of the counted kinds (counts by enum rc_wsframe_kind, at least one
 * nonzero); conn is what gw_wsguard_watch was given. Returns 0 to let the
 * bytes through, or a close code: that close frame is sent, and the
 * connection closed without lws parsing any byte of this read. */
typedef int (*gw_wsguard_charge_fn)(void *conn, const uint32_t counts[RC_WSFRAME_KINDS]);

/* Sets the charge hook for the whole process (once, at start; NULL: none). */
void gw_wsguard_set_charge(gw_wsguard_charge_fn fn);

/* A socket was just accepted on fd, nothing read from it yet: its stream is
 * followed from its first byte, so that frames a client sends with its
 * handshake (before the 101) are checked and charged too. */
void gw_wsguard_reset(int fd);

/* 1002 when the frames that came with fd's handshake (read before the
 * watch) already break a rule: refuse the connection before lws parses
 * them (then do not watch it). 0 otherwise. */
int gw_wsguard_early_error(int fd);

/* Starts checking what is read on fd from now on (a WebSocket that has just
 * been established, plain TCP or TLS), and charges the frames that came
 * with the handshake (conn's budgets). Returns 0; a close code (1008) when
 * those early frames are over the budget: the next read on fd is refused
 * with it (close frame, end of file; the charge hook has counted it); or
 * RC_E_INTERNAL when fd is not watched: beyond the table, the table could
 * not be allocated, or (a socket never reset) lws may already hold part of
 * a frame. Not watching is always safe. compressed: permessage-deflate was
 * negotiated (RSV1 allowed on the first frame of a data message). conn
 * (borrowed until gw_wsguard_unwatch) goes to the charge hook. */
int gw_wsguard_watch(int fd, int compressed, void *conn);

/* For a watched fd: 1 while a fragmented data message has begun and not
 * ended (its number in *id), else 0. -1 when fd is not watched (then the
 * caller must tell by other means). */
int gw_wsguard_message(int fd, uint32_t *id);

/* Checks n bytes just read (plaintext) on fd: for a watched fd feeds the
 * frame checker and charges the counted frames; otherwise remembers the
 * last bytes (for gw_wsguard_watch). Returns 0, or a close code: fd is no
 * longer watched, and the caller must send that close frame
 * (gw_wsguard_close_frame) and report end of file, so lws closes the
 * connection without parsing any byte of this read. Borrows buf. */
int gw_wsguard_feed(int fd, const void *buf, size_t n);

/* The four bytes of a server close frame with code. */
void gw_wsguard_close_frame(unsigned char out[4], int code);

/* Stops checking fd (its connection is closing); nothing happens when fd is
 * not watched. Call it before the fd is closed. */
void gw_wsguard_unwatch(int fd);

#endif
