/* gw_token_cmd.c - `rankcast token`: the way to hand an overlay or a tool a
 * credential of its own, limited in scope, boards and time.
 *
 *   rankcast token --scope read --board demo --ttl 30d [--sub NAME] [--config FILE]
 *
 * Signs with RANKCAST_JWT_SECRET when set (as the gateway does: the
 * environment beats the file), else with [auth] jwt_secret of the config
 * (default conf/rankcast.conf). Prints the token alone on stdout, and when it
 * expires on stderr.
 */
#include "gw_token_cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/gw_conf.h"
#include "base/gw_jwt.h"
#include "rc_conf.h"
#include "rc_jwt.h"

static int token_usage(void)
{
    fprintf(stderr, "usage: rankcast token --scope read|write|admin[,...] [--board PATTERN[,PATTERN...]] --ttl DURATION\n"
                    "                      [--sub NAME] [--config FILE]\n"
                    "  signs with RANKCAST_JWT_SECRET, else [auth] jwt_secret of the config\n");
    return 2;
}

/* The secret: the environment's, else the config file's. */
static int find_secret(const char *config, unsigned char *secret, size_t *len)
{
    const char *env = getenv("RANKCAST_JWT_SECRET");
    if (env && *env) {
        size_t n = strlen(env);
        if (n < RC_JWT_SECRET_MIN || n > RC_JWT_SECRET_MAX) {
            fprintf(stderr, "rankcast token: RANKCAST_JWT_SECRET must be %d..%d bytes (got %zu)\n", RC_JWT_SECRET_MIN,
                    RC_JWT_SECRET_MAX, n);
            return 1;
        }
        memcpy(secret, env, n);
        *len = n;
        return 0;
    }
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    if (!c)
        return 1;
    int rc = gw_conf_load(config, c, &err);
    if (rc) {
        fprintf(stderr, "rankcast token: no RANKCAST_JWT_SECRET, and the config: %s\n", err.msg);
    } else if (!c->jwt_secret_len) {
        fprintf(stderr, "rankcast token: no secret to sign with: set RANKCAST_JWT_SECRET or [auth] jwt_secret in %s\n",
                config);
        rc = 1;
    } else {
        memcpy(secret, c->jwt_secret, c->jwt_secret_len);
        *len = c->jwt_secret_len;
    }
    memset(c, 0, sizeof *c);
    free(c);
    return rc ? 1 : 0;
}

int gw_token_cmd(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"scope", required_argument, NULL, 'S'}, {"board", required_argument, NULL, 'b'},
        {"ttl", required_argument, NULL, 't'},   {"sub", required_argument, NULL, 'u'},
        {"config", required_argument, NULL, 'c'}, {NULL, 0, NULL, 0},
    };
    const char *scope = NULL, *ttl = NULL, *sub = "", *config = "conf/rankcast.conf";
    char boards[1024] = "";
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'S': scope = optarg; break;
        case 't': ttl = optarg; break;
        case 'u': sub = optarg; break;
        case 'c': config = optarg; break;
        case 'b': /* repeatable: --board a --board b, or --board a,b */
            if (strlen(boards) + strlen(optarg) + 2 > sizeof boards)
                return token_usage();
            if (boards[0])
                strcat(boards, ",");
            strcat(boards, optarg);
            break;
        default: return token_usage();
        }
    }
    if (optind != argc || !scope || !ttl)
        return token_usage();
    int64_t ttl_ms;
    if (rc_conf_value_parse_duration_ms(ttl, &ttl_ms) != 0 || ttl_ms < 1000) {
        fprintf(stderr, "rankcast token: --ttl must be a duration of at least 1s (e.g. 30d, 12h, 15m)\n");
        return 1;
    }
    int64_t exp_s = (int64_t)time(NULL) + ttl_ms / 1000;
    char claims[2048];
    struct rc_error err = {0, ""};
    if (rc_jwt_build_claims(scope, boards, sub, exp_s, claims, sizeof claims, &err) != 0) {
        fprintf(stderr, "rankcast token: %s\n", err.msg);
        return 1;
    }
    unsigned char secret[RC_JWT_SECRET_MAX];
    size_t len = 0;
    if (find_secret(config, secret, &len) != 0)
        return 1;
    char *tok = gw_jwt_sign_hs256(secret, len, claims, &err);
    memset(secret, 0, sizeof secret);
    if (!tok) {
        fprintf(stderr, "rankcast token: %s\n", err.msg);
        return 1;
    }
    printf("%s\n", tok);
    char when[32];
    time_t t = (time_t)exp_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(stderr, "rankcast token: %s, expires %s\n", claims, when);
    free(tok);
    return 0;
}
