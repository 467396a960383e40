/* gw_log.h - one line per event that matters, to stderr:
 *   2026-11-22T10:00:00.123Z rankcast[1234] info redis up 127.0.0.1:6390
 * Levels: error, warn, info. Never pass secrets (API keys) to these.
 * Under systemd, when stderr is the journal (JOURNAL_STREAM names it), a line
 * is plain: "<3>[1234] error ..." (<3> error, <4> warn, <6> info: the
 * journal's priority; no timestamp: the journal stamps each line). */
#ifndef GW_LOG_H
#define GW_LOG_H

void gw_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gw_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gw_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A warning caused by a client (refused connections, lws' complaints about
 * bad frames or headers): rate-limited process-wide, at most 20 at once and
 * 5 a second after that; what is held back is counted in a "suppressed N
 * log lines about clients" line, before the next line that gets through or
 * by gw_log_abuse_flush, whichever comes first. */
void gw_log_abuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports lines still suppressed when the bucket has a token again, so the
 * count of a flood's tail comes out without waiting for another client line
 * (the process calls it at every fan-out tick). */
void gw_log_abuse_flush(void);

/* Looks again at JOURNAL_STREAM and stderr (the first line does it by
 * itself; tests call it after changing either). */
void gw_log_detect(void);

/* Lines held back since the last report (tests/base/test_log.c). */
unsigned long gw_log_abuse_suppressed(void);

#endif
