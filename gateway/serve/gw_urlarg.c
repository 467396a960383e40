/* gw_urlarg.c - query arguments and headers copied whole (gw_urlarg.h). */
#include "serve/gw_urlarg.h"

#include <uv.h>
#include <libwebsockets.h>


#include <stdlib.h>
#include <string.h>

#include "rc_err.h"

int gw_urlarg(struct lws *wsi, const char *name, char *buf, size_t len)
{
    size_t nlen = strlen(name);
    for (int i = 0;; i++) {
        /* a fragment is at most lws' header buffer (a few KB) */
        int flen = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
        if (flen <= 0)
            return GW_URLARG_ABSENT;
        if ((size_t)flen <= nlen)
            continue;
        char frag[(size_t)flen + 1];
        if (lws_hdr_copy_fragment(wsi, frag, flen + 1, WSI_TOKEN_HTTP_URI_ARGS, i) < 0)
            continue;
        if (strncmp(frag, name, nlen) != 0 || frag[nlen] != '=')
            continue;
        size_t vlen = strlen(frag + nlen + 1);
        if (vlen + 1 > len)
            return GW_URLARG_TOO_LONG;
        memcpy(buf, frag + nlen + 1, vlen + 1);
        return (int)vlen;
    }
}

int gw_urlarg_header(struct lws *wsi, int token, char *buf, size_t len)
{
    int total = lws_hdr_total_length(wsi, (enum lws_token_indexes)token);
    if (total <= 0)
        return GW_URLARG_ABSENT;
    if ((size_t)total + 1 > len)
        return GW_URLARG_TOO_LONG;
    int n = lws_hdr_copy(wsi, buf, (int)len, (enum lws_token_indexes)token);
    return n < 0 ? GW_URLARG_TOO_LONG : n;
}

int gw_urlarg_copy(struct lws *wsi, struct gw_urlargs *out)
{
    size_t n = 0, bytes = 0;
    out->args = NULL;
    out->n = 0;
    for (int len; (len = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, (int)n)) > 0; n++)
        bytes += (size_t)len + 1;
    if (!n)
        return 0;
    /* one block: the pointers, then the NUL-terminated fragments */
    char **args = malloc(n * sizeof *args + bytes);
    if (!args)
        return RC_E_INTERNAL;
    char *text = (char *)(args + n);
    for (size_t i = 0; i < n; i++) {
        int len = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, (int)i);
        args[i] = text;
        if (lws_hdr_copy_fragment(wsi, text, len + 1, WSI_TOKEN_HTTP_URI_ARGS, (int)i) < 0)
            text[0] = '\0';
        text += len + 1;
    }
    out->args = args;
    out->n = n;
    return 0;
}

void gw_urlarg_free(struct gw_urlargs *a)
{
    free(a->args);
    a->args = NULL;
    a->n = 0;
}
