/* gw_urlarg.c - query arguments and headers copied whole (gw_urlarg.h). */
#include <uv.h>
#include <libwebsockets.h>

#include "net/gw_urlarg.h"

#include <string.h>

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

int gw_header(struct lws *wsi, int token, char *buf, size_t len)
{
    int total = lws_hdr_total_length(wsi, (enum lws_token_indexes)token);
    if (total <= 0)
        return GW_URLARG_ABSENT;
    if ((size_t)total + 1 > len)
        return GW_URLARG_TOO_LONG;
    int n = lws_hdr_copy(wsi, buf, (int)len, (enum lws_token_indexes)token);
    return n < 0 ? GW_URLARG_TOO_LONG : n;
}
