/* rc_keys.h - Redis key names of DESIGN.md. For board B in period P (P empty
 * for boards without periods) every key carries the hash tag {B|P}, so one
 * board-period lives in one cluster slot:
 *   rc:{B|P}:z  :seq  :log  :ch  :req:ID  :f:MEMBER  :epoch   and rc:profile:MEMBER
 */
#ifndef RC_KEYS_H
#define RC_KEYS_H

#include <stddef.h>

#define RC_KEY_MAX 320 /* fits rc:{64|23}:f:<128> and rc:{..}:req:<64> */

/* Writes "rc:{B|P}:SUFFIX" (or "rc:{B|P}:SUFFIX:ARG" when arg is non-NULL) into
 * out[cap]. Returns 0, or RC_E_INTERNAL when it does not fit. Borrows all. */
int rc_board_key(char *out, size_t cap, const char *board, const char *period_id, const char *suffix,
                 const char *arg);

/* "rc:profile:MEMBER". */
int rc_profile_key(char *out, size_t cap, const char *member);

#endif
