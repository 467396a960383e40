/* rc_webhook.c - the webhook's body, signature, delivery id and retry
 * schedule (rc_webhook.h). The MAC and the hash are OpenSSL's; the rows are
 * encoded by rc_proto_encode (a snapshot's), so a webhook row is exactly a
 * snapshot row. */
#include "rc_webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "rc_err.h"

static void hex(const unsigned char *raw, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[raw[i] >> 4];
        out[2 * i + 1] = digits[raw[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The rows come from a snapshot's encoding: parsed back once and moved into
 * the body, so both stay one shape by construction. */
char *rc_webhook_body(const char *board, const char *period, int64_t total, const struct rc_rows_out *rows)
{
    struct rc_snapshot_msg m = {.board = board, .period = period, .total = total, .rows = *rows};
    char *snap = rc_proto_rows_snapshot(&m), *out = NULL;
    cJSON *parsed = snap ? cJSON_Parse(snap) : NULL;
    cJSON *body = cJSON_CreateObject();
    cJSON *arr = parsed ? cJSON_DetachItemFromObjectCaseSensitive(parsed, "rows") : NULL;
    free(snap);
    if (!body || !arr)
        goto cleanup;
    char num[24];
    snprintf(num, sizeof num, "%lld", (long long)total);
    if (!cJSON_AddStringToObject(body, "board", board) || !cJSON_AddStringToObject(body, "period", period) ||
        !cJSON_AddRawToObject(body, "total", num))
        goto cleanup;
    cJSON_AddItemToObject(body, "rows", arr);
    arr = NULL;
    out = cJSON_PrintUnformatted(body);
cleanup:
    cJSON_Delete(arr);
    cJSON_Delete(body);
    cJSON_Delete(parsed);
    return out;
}

int rc_webhook_sign(const char *secret, size_t secret_len, const char *body, size_t len,
                    char out[RC_WEBHOOK_SIG_MAX])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    out[0] = '\0';
    if (secret_len > (size_t)INT32_MAX ||
        !HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)body, len, mac, &n) || n != 32)
        return RC_E_INTERNAL;
    memcpy(out, "sha256=", 7);
    hex(mac, n, out + 7);
    return 0;
}

void rc_webhook_delivery_id(const char *board, const char *period, char out[RC_WEBHOOK_ID_MAX])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    char buf[256];
    int k = snprintf(buf, sizeof buf, "%s|%s", board, period);
    SHA256((const unsigned char *)buf, k > 0 && (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1, md);
    hex(md, 16, out);
}

int64_t rc_webhook_backoff_ms(int64_t base_ms, int64_t cap_ms, unsigned retry)
{
    int64_t ms = base_ms > 0 ? base_ms : 1;
    for (unsigned i = 1; i < retry && ms < cap_ms; i++)
        ms *= 2;
    return ms < cap_ms ? ms : cap_ms;
}

int rc_webhook_delivered(long status)
{
    return status >= 200 && status <= 299;
}

/* scheme://host[:port][/...] with a host of URL-safe characters. */
int rc_webhook_url_valid(const char *url)
{
    const char *p;
    if (strncmp(url, "http://", 7) == 0)
        p = url + 7;
    else if (strncmp(url, "https://", 8) == 0)
        p = url + 8;
    else
        return 0;
    size_t host;
    if (*p == '[') { /* [IPv6] */
        const char *close = strchr(p, ']');
        if (!close || close == p + 1)
            return 0;
        host = (size_t)(close - p) + 1;
    } else {
        host = strcspn(p, ":/?#");
    }
    if (host == 0 || (p[host] && !strchr(":/?#", p[host])))
        return 0;
    for (const char *q = url; *q; q++)
        if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
            return 0;
    if (p[host] == ':') {
        const char *port = p + host + 1;
        size_t digits = strspn(port, "0123456789");
        if (digits == 0 || digits > 5 || (port[digits] && port[digits] != '/' && port[digits] != '?'))
            return 0;
        long v = strtol(port, NULL, 10);
        if (v < 1 || v > 65535)
            return 0;
    }
    return 1;
}
