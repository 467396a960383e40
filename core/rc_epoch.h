/* rc_epoch.h - a board's epoch: the id of one unbroken history of the board
 * (seq, change log and set together). Redis keeps it in rc:{B|P}:epoch and
 * replaces it whenever the history starts over (lua/write.lua, "Epochs");
 * snapshots carry it and a resume names it (`since.epoch`). Pure.
 */
#ifndef RC_EPOCH_H
#define RC_EPOCH_H

#include <stddef.h>

#define RC_EPOCH_MAX 32       /* characters of an epoch id (the scripts refuse longer) */
#define RC_EPOCH_RANDOM_BYTES 8 /* random bytes of a new id: 16 hex characters */

/* 1 when s[0..len) can be an epoch: 0..RC_EPOCH_MAX characters of
 * [A-Za-z0-9] ("" is the epoch of a board without a history), else 0. */
int rc_epoch_valid(const char *s, size_t len);

/* Writes the lowercase hex of bytes[0..RC_EPOCH_RANDOM_BYTES) and a NUL into
 * out (at least 2 * RC_EPOCH_RANDOM_BYTES + 1 bytes). Borrows bytes. */
void rc_epoch_hex(char *out, const unsigned char *bytes);

#endif
