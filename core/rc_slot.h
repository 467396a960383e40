/* TEMPORARY stub until h-slots lands */
#ifndef RC_SLOT_H
#define RC_SLOT_H
#include <stddef.h>
enum rc_redis_err { RC_REDIS_ERR_OTHER, RC_REDIS_ERR_MOVED, RC_REDIS_ERR_ASK, RC_REDIS_ERR_TRYAGAIN, RC_REDIS_ERR_CLUSTERDOWN, RC_REDIS_ERR_MASTERDOWN, RC_REDIS_ERR_LOADING, RC_REDIS_ERR_NOSCRIPT, RC_REDIS_ERR_READONLY };
struct rc_redirect { enum rc_redis_err kind; unsigned slot; char host[256]; int port; };
unsigned rc_key_slot(const char *key, size_t len);
int rc_parse_redirect(const char *err, size_t len, struct rc_redirect *out);
enum rc_redis_err rc_classify_error(const char *err, size_t len);
#endif
