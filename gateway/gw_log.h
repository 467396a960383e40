/* gw_log.h - one line per event that matters, to stderr:
 *   2026-11-22T10:00:00.123Z rankcast[1234] info redis up 127.0.0.1:6390
 * Levels: error, warn, info. Never pass secrets (API keys) to these. */
#ifndef GW_LOG_H
#define GW_LOG_H

void gw_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gw_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gw_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
