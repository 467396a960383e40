/* rc_conf_key.c - one job: API key rules: the [auth] and [key NAME]
 * handlers and the checks when a [key] section opens and ends. */
#include "rc_conf_int.h"

#include <stdio.h>
#include <string.h>

#include "rc_err.h"
#include "rc_names.h"

/* ---------------------------------------------------------------------------
 * [auth] and [key NAME] handlers. Messages about secret, secret_env and
 * scopes never quote the value: a secret pasted on the wrong line would
 * otherwise end up in the message. Board patterns are quoted, since they only
 * name boards, which are public.
 * ------------------------------------------------------------------------ */

int rc_conf__set_reads(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"open", "key"};
    int i = rc_conf__word_index(v, words, 2);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be open or key, got '%.40s'", k->name, v);
    *FIELD(int, obj, k) = i;
    return 0;
}

/* obj is the rc_key: fills secret and secret_len. Refuses a secret another
 * key already has, since a lookup by secret must name exactly one key. */
int rc_conf__set_secret(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_key *key = obj;
    size_t n = strlen(v);
    (void)k;
    if (SEEN(p, K_SECRET_ENV))
        return rc_conf__fail(p, p->lineno, "secret and secret_env are exclusive: give one (secret_env at line %d)",
                             p->key_line[K_SECRET_ENV]);
    if (!rc_conf__token_valid(v, RC_SECRET_MIN, RC_SECRET_MAX))
        return rc_conf__fail(p, p->lineno, "secret must be %d..%d printable characters without spaces",
                             RC_SECRET_MIN, RC_SECRET_MAX);
    memset(key->secret, 0, sizeof key->secret);
    memcpy(key->secret, v, n);
    key->secret_len = n;
    const struct rc_key *dup = rc_auth_find(&p->c->auth, key->secret, key->secret_len);
    if (dup && dup != key)
        return rc_conf__fail(p, p->lineno, "secret repeats the secret of key '%s' (line %d): each key needs its own",
                             dup->name, dup->config_line);
    return 0;
}

/* obj is the rc_key: fills secret_env; the gateway resolves it at start. Two
 * keys reading one variable would share a secret, so that is refused too. */
int rc_conf__set_secret_env(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_key *key = obj;
    size_t n = strlen(v);
    (void)k;
    if (SEEN(p, K_SECRET))
        return rc_conf__fail(p, p->lineno, "secret and secret_env are exclusive: give one (secret at line %d)",
                             p->key_line[K_SECRET]);
    if (!rc_conf__env_name_valid(v))
        return rc_conf__fail(p, p->lineno,
                             "secret_env must name an environment variable: 1..%d of A-Z 0-9 _, not starting "
                    "with a digit (put the secret itself in that variable)",
                    RC_ENV_NAME_MAX);
    for (unsigned i = 0; i + 1 < p->c->auth.nkeys; i++) {
        const struct rc_key *o = &p->c->auth.keys[i];
        if (strcmp(o->secret_env, v) == 0)
            return rc_conf__fail(p, p->lineno, "secret_env %s is already used by key '%s' (line %d): "
                                 "each key needs its own secret", v, o->name, o->config_line);
    }
    memcpy(key->secret_env, v, n + 1);
    return 0;
}

int rc_conf__set_scopes(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"read", "write", "admin"};
    static const unsigned flags[] = {RC_SCOPE_READ, RC_SCOPE_WRITE, RC_SCOPE_ADMIN};
    char buf[CONF_LINE_MAX + 1];
    unsigned scopes = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = rc_conf__next_item(&rest);
        int i = rc_conf__word_index(item, words, 3);
        if (!*item)
            return rc_conf__fail(p, p->lineno, "%s has an empty item", k->name);
        if (i < 0)
            return rc_conf__fail(p, p->lineno, "%s must be a comma list of read, write, admin", k->name);
        if (scopes & flags[i])
            return rc_conf__fail(p, p->lineno, "%s lists '%s' twice", k->name, words[i]);
        scopes |= flags[i];
    }
    *FIELD(unsigned, obj, k) = scopes;
    return 0;
}

/* obj is the rc_key: fills patterns[] and npatterns. Items are board names,
 * templates ("match:*", which also covers the boards the template creates)
 * or "*" for every board. */
int rc_conf__set_boards(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_key *key = obj;
    char buf[CONF_LINE_MAX + 1];
    unsigned n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = rc_conf__next_item(&rest);
        size_t len = strlen(item);
        if (!*item)
            return rc_conf__fail(p, p->lineno, "%s has an empty item", k->name);
        int ok = strcmp(item, "*") == 0 ||
                 (item[len - 1] == '*' ? rc_names_board_template_valid(item, len)
                                       : rc_names_board_name_valid(item, len));
        if (!ok || len >= sizeof key->patterns[0])
            return rc_conf__fail(p, p->lineno,
                                 "%s: bad board pattern '%.70s' (a board name, a template ending in '*' "
                        "such as match:*, or * for every board)",
                        k->name, item);
        if (n == RC_AUTH_MAX_PATTERNS)
            return rc_conf__fail(p, p->lineno, "%s: at most %d patterns", k->name, RC_AUTH_MAX_PATTERNS);
        for (unsigned i = 0; i < n; i++)
            if (strcmp(key->patterns[i], item) == 0)
                return rc_conf__fail(p, p->lineno, "%s lists '%s' twice", k->name, item);
        memcpy(key->patterns[n++], item, len + 1);
    }
    key->npatterns = n;
    return 0;
}
/* ---------------------------------------------------------------------------
 * API keys
 * ------------------------------------------------------------------------ */

/* Key names show in logs and forbidden messages: keep them plain. */
static int key_name_valid(const char *s, size_t n)
{
    if (n == 0 || n > RC_KEY_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i]) || s[i] == '_' || s[i] == '-'))
            return 0;
    return 1;
}

/* Called when a [key] section ends. A key must say where its secret comes
 * from and what it may do; "boards" defaults to every board. Errors carry the
 * key's header line. */
int rc_conf__finish_key(struct parser *p)
{
    struct rc_key *key = p->key;
    int line = key->config_line;

    if (!SEEN(p, K_SECRET) && !SEEN(p, K_SECRET_ENV))
        return rc_conf__fail(p, line, "[key %s] needs secret or secret_env (exactly one)", key->name);
    if (!SEEN(p, K_SCOPES))
        return rc_conf__fail(p, line, "[key %s] needs scopes: a comma list of read, write, admin", key->name);
    if (!SEEN(p, K_BOARDS)) {
        memcpy(key->patterns[0], "*", 2);
        key->npatterns = 1;
    }
    return 0;
}

int rc_conf__open_key(struct parser *p, const char *name)
{
    struct rc_auth *a = &p->c->auth;
    size_t n = strlen(name);
    if (!key_name_valid(name, n))
        return rc_conf__fail(p, p->lineno, "bad key name '%.40s': 1..%d of a-z 0-9 _ -", name, RC_KEY_NAME_MAX);
    for (unsigned i = 0; i < a->nkeys; i++)
        if (strcmp(a->keys[i].name, name) == 0)
            return rc_conf__fail(p, p->lineno, "key '%s' declared twice (first at line %d)", name,
                                 a->keys[i].config_line);
    if (a->nkeys == RC_AUTH_MAX_KEYS)
        return rc_conf__fail(p, p->lineno, "too many keys: at most %d", RC_AUTH_MAX_KEYS);
    struct rc_key *key = &a->keys[a->nkeys++];
    memset(key, 0, sizeof *key);
    memcpy(key->name, name, n + 1);
    key->config_line = p->lineno;
    p->key = key;
    p->sec = SEC_KEY;
    return 0;
}

/* [auth] jwt_secret: the HS256 token secret. Short secrets make HMAC
 * guessable offline from one token, so RC_JWT_SECRET_MIN is a floor; the
 * value is never quoted. */
int rc_conf__set_jwt_secret(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_conf *c = obj;
    size_t n = strlen(v);
    if (!rc_conf__token_valid(v, RC_JWT_SECRET_MIN, RC_JWT_SECRET_MAX))
        return rc_conf__fail(p, p->lineno,
                             "%s must be %d..%d printable characters without spaces (got %zu): "
                             "e.g. openssl rand -hex 32",
                             k->name, RC_JWT_SECRET_MIN, RC_JWT_SECRET_MAX, n);
    memset(c->jwt_secret, 0, sizeof c->jwt_secret);
    memcpy(c->jwt_secret, v, n);
    c->jwt_secret_len = n;
    return 0;
}
