/* rc_feedgap.c - a feed viewer's step for each change event, and the fill of
 * a gap (see rc_feedgap.h). */
#include "rc_feedgap.h"

#include <string.h>

enum rc_feedgap_step rc_feedgap_step(int64_t cursor, const char *held_epoch, int64_t seq, const char *ev_epoch,
                                     int is_reset)
{
    /* Only the first event of a history names its epoch: an event naming
     * another epoch than the viewer's is never old, whatever its seq. */
    int newer = ev_epoch[0] && strcmp(ev_epoch, held_epoch) != 0;
    if (!newer)
        return seq <= cursor ? RC_FEEDGAP_SKIP : seq == cursor + 1 ? RC_FEEDGAP_DELIVER : RC_FEEDGAP_FILL;
    if (is_reset)
        return RC_FEEDGAP_DELIVER; /* it carries the reset itself */
    /* A history's first event past the viewer's next seq lost nothing of
     * that history: the viewer starts it over (the board was written while
     * it held another history, or none). */
    return !held_epoch[0] && seq == cursor + 1 ? RC_FEEDGAP_BEGIN : RC_FEEDGAP_OVER;
}

enum rc_feedgap_fill rc_feedgap_fill(int64_t cursor, const char *held_epoch, int64_t log_seq, const char *log_epoch,
                                     size_t n, int64_t first_seq, const char *first_epoch)
{
    if (strcmp(held_epoch, log_epoch) == 0)
        return cursor >= log_seq || (n && first_seq <= cursor + 1) ? RC_FEEDGAP_REPLAY : RC_FEEDGAP_RESET;
    /* The viewer holds the board before any history (epoch ""): the log
     * goes on from it when its history began right after the cursor (the
     * lost event was that history's first, which names it). */
    if (!held_epoch[0] && n && first_seq == cursor + 1 && strcmp(first_epoch, log_epoch) == 0)
        return RC_FEEDGAP_REPLAY;
    return RC_FEEDGAP_RESET;
}

int rc_feedgap_quiet_due(int due, int64_t heard_us, int64_t now_us, int64_t quiet_us)
{
    return due && now_us - heard_us >= quiet_us;
}
