/* rc_conf_webhook.c - one job: the [webhook] section (docs/webhooks.md):
 * its url, its secret (never quoted in a message, as for API keys) and the
 * checks when the section ends. The numeric keys go through the shared
 * handlers (rc_conf_set.c) with the ranges of the key table. */
#include "rc_conf_int.h"

#include <string.h>

#include "rc_err.h"
#include "rc_webhook.h"

int rc_conf__set_webhook_url(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (strlen(v) >= RC_CONF_STR_MAX)
        return rc_conf__fail(p, p->lineno, "%s is too long (at most %d bytes)", k->name, RC_CONF_STR_MAX - 1);
    if (!rc_webhook_url_valid(v))
        return rc_conf__fail(p, p->lineno,
                             "%s must be an http:// or https:// URL with a host (and a port 1..65535 when "
                             "given), got '%.80s'",
                             k->name, v);
    return rc_conf__set_string(p, k, obj, v); /* checked above: fits */
}

int rc_conf__set_webhook_secret(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (SEEN(p, K_SECRET_ENV))
        return rc_conf__fail(p, p->lineno, "secret and secret_env are exclusive: give one (secret_env at line %d)",
                             p->key_line[K_SECRET_ENV]);
    if (!rc_conf__token_valid(v, RC_SECRET_MIN, RC_SECRET_MAX))
        return rc_conf__fail(p, p->lineno, "[webhook] secret must be %d..%d printable characters without spaces",
                             RC_SECRET_MIN, RC_SECRET_MAX);
    return rc_conf__set_string(p, k, obj, v); /* checked above: fits */
}

int rc_conf__set_webhook_secret_env(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (SEEN(p, K_SECRET))
        return rc_conf__fail(p, p->lineno, "secret and secret_env are exclusive: give one (secret at line %d)",
                             p->key_line[K_SECRET]);
    if (!rc_conf__env_name_valid(v))
        return rc_conf__fail(p, p->lineno,
                             "secret_env must name an environment variable: 1..%d of A-Z 0-9 _, not starting "
                             "with a digit (put the secret itself in that variable)",
                             RC_ENV_NAME_MAX);
    return rc_conf__set_string(p, k, obj, v); /* checked above: fits */
}

/* A [webhook] section must say where to send and how to sign; errors carry
 * the section's header line. */
int rc_conf__finish_webhook(struct parser *p)
{
    const struct rc_webhook_conf *w = &p->c->webhook;
    int line = p->sec_line[SEC_WEBHOOK];
    char a[32], b[32];
    if (!SEEN(p, K_URL))
        return rc_conf__fail(p, line, "[webhook] needs url (http:// or https://)");
    if (!SEEN(p, K_SECRET) && !SEEN(p, K_SECRET_ENV))
        return rc_conf__fail(p, line, "[webhook] needs secret or secret_env (exactly one): bodies are signed");
    if (w->backoff_base_ms > w->backoff_cap_ms)
        return rc_conf__fail(p, SEEN(p, K_BACKOFF_BASE) ? p->key_line[K_BACKOFF_BASE] : p->key_line[K_BACKOFF_CAP],
                             "[webhook] backoff_base (%s) is longer than backoff_cap (%s)",
                             rc_conf__fmt_dur(w->backoff_base_ms, a, sizeof a),
                             rc_conf__fmt_dur(w->backoff_cap_ms, b, sizeof b));
    return 0;
}
