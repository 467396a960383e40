/* rc_test_redis.h - a private redis-server for one test program.
 *
 * Starts `redis-server` on a free loopback port (never 6379) with its own
 * temporary data folder, waits until it answers PING, and stops it again. The
 * server is killed if the test process dies (PR_SET_PDEATHSIG), so a crashed
 * test leaves nothing running.
 */
#ifndef RC_TEST_REDIS_H
#define RC_TEST_REDIS_H

#include <stdarg.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

struct rc_test_redis {
    pid_t pid;
    int port;
    char dir[256];
};

/* Starts a server; extra_args (NULL-terminated, may be NULL) are appended to
 * its command line. Returns 0 or -1 (reason on stderr). */
int rc_test_redis_start(struct rc_test_redis *r, const char *const *extra_args);

/* Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its folder. */
void rc_test_redis_stop(struct rc_test_redis *r);

/* Stops the server like rc_test_redis_stop but keeps its port and folder, so
 * rc_test_redis_restart can bring it back where clients expect it. Also ends
 * a SIGSTOPped server. No-op when it is not running. */
void rc_test_redis_kill(struct rc_test_redis *r);

/* Kills the server if it runs, then starts a new one on the same port and
 * folder with extra_args (as for start) and waits until it answers PING.
 * Returns 0 or -1 (reason on stderr). */
int rc_test_redis_restart(struct rc_test_redis *r, const char *const *extra_args);

/* A new blocking connection to the server (caller frees), or NULL. */
redisContext *rc_test_redis_connect(const struct rc_test_redis *r);

/* One command on a fresh blocking connection (the server may have been
 * restarted since the last one), sent after AUTH password unless password
 * is NULL. Returns the reply (caller frees), or NULL when the connection
 * or a reply failed. */
redisReply *rc_test_redis_vask(const struct rc_test_redis *r, const char *password, const char *fmt, va_list ap);

/* The fixture of a cmocka test (or group) that talks to one private server
 * over one blocking connection: rc_test_redis_setup starts the server and
 * connects (*state is the fixture), rc_test_redis_teardown closes and stops
 * it. Each returns 0 or -1, as cmocka's setup and teardown do. */
struct rc_test_redis_fixture {
    struct rc_test_redis redis;
    redisContext *c;
};
int rc_test_redis_setup(void **state);
int rc_test_redis_teardown(void **state);

#endif
