/* gw_http_static.c - the dashboard's files under web_root. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "serve/gw_http_static.h"

#include <uv.h>
#include <libwebsockets.h>


#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gw_app.h"
#include "serve/gw_http_req.h"

/* The dashboard's files: a path under web_root, resolved with realpath so
 * neither ".." nor a symlink leads out of it (404 instead). */
void gw_http_static(struct gw_http_req *q)
{
    char want[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
    const char *rel = q->path[0] == '/' ? q->path + 1 : q->path;
    int n = snprintf(want, sizeof want, "%s/%s%s", q->app->conf->web_root, rel,
                     !*rel || rel[strlen(rel) - 1] == '/' ? "index.html" : "");
    struct stat st;
    if (n < 0 || (size_t)n >= sizeof want || !realpath(q->app->conf->web_root, root) || !realpath(want, real) ||
        strncmp(real, root, strlen(root)) != 0 || real[strlen(root)] != '/' || stat(real, &st) != 0 ||
        !S_ISREG(st.st_mode)) {
        gw_http_req_respond_error(q, RC_E_NOT_FOUND, "no such path");
        return;
    }
    const char *mime = lws_get_mimetype(real, NULL);
    /* lws 4.1 knows .js but not .mjs, and a browser runs a module script
     * (web/rankcast.mjs, <script type="module">) only with a JavaScript type */
    size_t len = strlen(real);
    if (!mime && len > 4 && strcmp(real + len - 4, ".mjs") == 0)
        mime = "text/javascript";
    /* lws sends it and reports LWS_CALLBACK_HTTP_FILE_COMPLETION */
    if (lws_serve_http_file(q->wsi, real, mime ? mime : "application/octet-stream", NULL, 0) < 0)
        q->close_now = 1;
}
