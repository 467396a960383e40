/* gw_redis_pass.c - one job: find the Redis password (gw_redis_pass.h has
 * the order and the rules for the file). */
#include "base/gw_redis_pass.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* explicit_bzero is not in POSIX: a volatile store is never optimised away. */
static void zero(void *p, size_t n)
{
    volatile unsigned char *b = p;
    while (n--)
        *b++ = 0;
}

/* Copies v (a password from the environment) into out. */
static int take(struct gw_redis_cred *out, const char *v, const char *what, struct rc_error *err)
{
    size_t n = strlen(v);
    if (n > GW_REDIS_PASS_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "the Redis password in %s is longer than %d bytes", what,
                            GW_REDIS_PASS_MAX);
    memcpy(out->password, v, n + 1);
    snprintf(out->source, sizeof out->source, "%s", what);
    return 0;
}

/* Reads path into buf (GW_REDIS_PASS_MAX + 1 bytes, NUL-terminated),
 * refusing what is not a regular file, is readable by "other", is too large,
 * holds a NUL, or is empty once the trailing line ends are gone. The open
 * file is checked (fstat), not the name, so a file swapped in between cannot
 * slip through. */
static int read_file(const char *path, char *buf, struct rc_error *err)
{
    char tmp[GW_REDIS_PASS_MAX + 3]; /* + "\r\n" + NUL */
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "[redis] password_file %s cannot be read: %s", path,
                            strerror(errno));
    int rc = 0;
    ssize_t got = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "[redis] password_file %s is not a regular file", path);
    else if (st.st_mode & S_IROTH)
        rc = rc_err_set(err, RC_E_BAD_REQUEST,
                          "[redis] password_file %s is readable by every user (mode %04o): chmod o-rwx it "
                          "(0400 or 0440)",
                          path, (unsigned)(st.st_mode & 07777));
    else if ((got = read(fd, tmp, sizeof tmp - 1)) < 0)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "[redis] password_file %s cannot be read: %s", path,
                          strerror(errno));
    close(fd);
    size_t n = got > 0 ? (size_t)got : 0;
    while (!rc && n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == '\r'))
        n--;
    if (rc) {
        /* said above */
    } else if (n > GW_REDIS_PASS_MAX || (size_t)st.st_size > sizeof tmp - 1) {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "[redis] password_file %s is larger than %d bytes", path,
                          GW_REDIS_PASS_MAX);
    } else if (n == 0) {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "[redis] password_file %s is empty", path);
    } else if (memchr(tmp, '\0', n)) {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "[redis] password_file %s holds a NUL byte", path);
    } else {
        memcpy(buf, tmp, n);
        buf[n] = '\0';
    }
    zero(tmp, sizeof tmp);
    return rc;
}

int gw_redis_pass_resolve(const struct rc_conf *c, struct gw_redis_cred *out, struct rc_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->username, sizeof out->username, "%s", c->redis_username);
    const char *v = getenv("RANKCAST_REDIS_PASSWORD");
    if (v && *v)
        return take(out, v, "RANKCAST_REDIS_PASSWORD", err);
    if (c->redis_password_env[0]) {
        v = getenv(c->redis_password_env);
        if (v && *v) {
            char what[RC_ENV_NAME_MAX + 16];
            snprintf(what, sizeof what, "password_env %s", c->redis_password_env);
            return take(out, v, what, err);
        }
        if (!c->redis_password_file[0])
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "[redis] password_env names %s, which is not set (or empty), and there is no "
                                "password_file",
                                c->redis_password_env);
    }
    if (c->redis_password_file[0]) {
        int rc = read_file(c->redis_password_file, out->password, err);
        if (rc) {
            gw_redis_pass_wipe(out);
            return rc;
        }
        snprintf(out->source, sizeof out->source, "password_file %s", c->redis_password_file);
        return 0;
    }
    if (out->username[0])
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "[redis] username %s needs a password: set RANKCAST_REDIS_PASSWORD, password_env or "
                            "password_file",
                            out->username);
    return 0;
}

int gw_redis_pass_check_file(const struct rc_conf *c, struct rc_error *err)
{
    char buf[GW_REDIS_PASS_MAX + 1];
    if (!c->redis_password_file[0])
        return 0;
    int rc = read_file(c->redis_password_file, buf, err);
    zero(buf, sizeof buf);
    return rc;
}

void gw_redis_pass_wipe(struct gw_redis_cred *cred)
{
    zero(cred->password, sizeof cred->password);
}

void gw_redis_pass_zero(char *s)
{
    if (s)
        zero(s, strlen(s));
}
