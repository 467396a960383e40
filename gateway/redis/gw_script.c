/* gw_script.c - EVALSHA with one NOSCRIPT reload-and-retry (see gw_script.h). */
#include "redis/gw_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "base/gw_log.h"
#include "rc_err.h"
#include "rc_lua.h"

/* One call in flight. The command's words are kept (one allocation) so the
 * retry can resend them after the caller's buffers are gone. */
struct call {
    struct gw_script *s;
    gw_script_reply_cb *cb;
    void *privdata;
    int retried;
    int argc;            /* words of EVALSHA: "EVALSHA", sha, nkeys, ... */
    const char **argv;
    size_t *argvlen;
    char nkeys[16];
};

void gw_script_init_sha(struct gw_script *s, const char *source, const char *sha)
{
    s->source = source;
    s->reloads = 0;
    s->sha[0] = '\0';
    if (sha && strlen(sha) == 40)
        memcpy(s->sha, sha, 41);
}

/* The embedded scripts carry their SHA-1 from the build (rc_lua.h). */
void gw_script_init(struct gw_script *s, const char *source)
{
    gw_script_init_sha(s, source, rc_lua_sha_of(source));
}

struct load {
    struct gw_script *s;
    gw_script_reply_cb *cb;
    void *privdata;
};

/* A script whose SHA-1 we were not given learns it from Redis' answer. */
static void on_loaded(redisAsyncContext *ac, void *r, void *privdata)
{
    struct load *l = privdata;
    redisReply *reply = r;
    (void)ac;
    if (reply && reply->type == REDIS_REPLY_STRING && reply->len == 40 && !l->s->sha[0])
        memcpy(l->s->sha, reply->str, 41);
    if (l->cb)
        l->cb(r, l->privdata);
    free(l);
}

int gw_script_load(struct gw_script *s, redisAsyncContext *ac, gw_script_reply_cb *cb, void *privdata)
{
    struct load *l = malloc(sizeof *l);
    if (!l)
        return RC_E_INTERNAL;
    l->s = s;
    l->cb = cb;
    l->privdata = privdata;
    if (redisAsyncCommand(ac, on_loaded, l, "SCRIPT LOAD %s", s->source) != REDIS_OK) {
        free(l);
        return RC_E_UNAVAILABLE;
    }
    return 0;
}

static void on_reply(redisAsyncContext *ac, void *r, void *privdata);

static int send_call(redisAsyncContext *ac, struct call *c)
{
    return redisAsyncCommandArgv(ac, on_reply, c, c->argc, c->argv, c->argvlen) == REDIS_OK ? 0 : RC_E_UNAVAILABLE;
}

static int is_noscript(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ERROR && r->str && strncmp(r->str, "NOSCRIPT", 8) == 0;
}

static void on_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    struct call *c = privdata;
    redisReply *reply = r;
    if (is_noscript(reply) && !c->retried) {
        /* Pipelined: Redis runs SCRIPT LOAD before the repeated EVALSHA. */
        c->retried = 1;
        c->s->reloads++;
        if (gw_script_load(c->s, ac, NULL, NULL) == 0 && send_call(ac, c) == 0)
            return;
        reply = NULL; /* could not queue: the connection is going away */
    }
    c->cb(reply, c->privdata);
    free(c);
}

int gw_script_call(struct gw_script *s, redisAsyncContext *ac, int nkeys, int argc, const char *const *argv,
                   const size_t *argvlen, gw_script_reply_cb *cb, void *privdata)
{
    if (!s->sha[0])
        return RC_E_INTERNAL; /* not embedded and not loaded yet: no name to call it by */
    int words = argc + 3;
    size_t bytes = sizeof(struct call) + (size_t)words * (sizeof(char *) + sizeof(size_t));
    for (int i = 0; i < argc; i++)
        bytes += argvlen[i] + 1;
    struct call *c = malloc(bytes);
    if (!c)
        return RC_E_INTERNAL;
    c->s = s;
    c->cb = cb;
    c->privdata = privdata;
    c->retried = 0;
    c->argc = words;
    c->argv = (const char **)(c + 1);
    c->argvlen = (size_t *)(c->argv + words);
    char *text = (char *)(c->argvlen + words);
    snprintf(c->nkeys, sizeof c->nkeys, "%d", nkeys);
    c->argv[0] = "EVALSHA";
    c->argv[1] = s->sha;
    c->argv[2] = c->nkeys;
    c->argvlen[0] = 7;
    c->argvlen[1] = 40;
    c->argvlen[2] = strlen(c->nkeys);
    for (int i = 0; i < argc; i++) {
        memcpy(text, argv[i], argvlen[i]);
        text[argvlen[i]] = '\0';
        c->argv[3 + i] = text;
        c->argvlen[3 + i] = argvlen[i];
        text += argvlen[i] + 1;
    }
    if (send_call(ac, c) != 0) {
        free(c);
        return RC_E_UNAVAILABLE;
    }
    return 0;
}

size_t gw_script_reply_items(const redisReply *r, struct rc_reply_item *items, size_t max)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements > max)
        return 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        int text = (e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_STATUS) && strlen(e->str) == e->len;
        items[i].is_int = e->type == REDIS_REPLY_INTEGER;
        items[i].integer = e->integer;
        items[i].str = text ? e->str : NULL;
    }
    return r->elements;
}

int gw_script_reply_error(struct rc_error *err, int code, const char *what, const redisReply *r)
{
    gw_log_abuse("%s: Redis answered: %.300s", what,
                 r && r->type == REDIS_REPLY_ERROR && r->str ? r->str : "an unexpected reply");
    return rc_err_set(err, code, "%s: %s", what, GW_REDIS_REFUSED_MSG);
}

unsigned gw_script_call_words(const char (*keys)[RC_KEY_MAX], unsigned nkeys, const char *const *argv, unsigned nargv,
                       const char **words, size_t *lens)
{
    unsigned n = 0;
    for (unsigned i = 0; i < nkeys; i++, n++) {
        words[n] = keys[i];
        lens[n] = strlen(keys[i]);
    }
    for (unsigned i = 0; i < nargv; i++, n++) {
        words[n] = argv[i];
        lens[n] = strlen(argv[i]);
    }
    return n;
}
