/* gw_webhook_http.c - libcurl multi on the libuv loop (gw_webhook_http.h),
 * the pattern of curl's multi-uv example:
 *   - curl's socket callback starts, changes or ends one uv_poll per socket
 *     (its struct is the socket's curl_multi_assign pointer);
 *   - curl's timer callback (re)starts one uv_timer; 0 ms means "soon", never
 *     a call back into curl from inside its own callback;
 *   - both handles call curl_multi_socket_action, then finished transfers
 *     are read with curl_multi_info_read and reported.
 * Handles are freed in their close callbacks; the client is freed once the
 * last one is closed (base/gw_release). */
#include "jobs/gw_webhook_http.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/gw_log.h"
#include "base/gw_release.h"

struct sock {
    uv_poll_t poll;
    struct gw_hclient *c;
    curl_socket_t fd;
    struct sock *next, *prev;      /* c->socks */
};

struct gw_hreq {
    CURL *easy;
    struct curl_slist *headers;
    char *body;
    gw_hreq_cb *cb;
    void *data;
    char err[CURL_ERROR_SIZE];
    struct gw_hreq *next, *prev;   /* c->reqs */
};

struct gw_hclient {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    struct sock *socks;
    struct gw_hreq *reqs;
    struct gw_release rel;         /* holds: the timer and the polls, until their close callbacks */
};

/* The last handle is closed (base/gw_release). */
static void client_free(struct gw_release *rel)
{
    free((char *)rel - offsetof(struct gw_hclient, rel));
    curl_global_cleanup();
}

static void sock_close(struct sock *k)
{
    struct gw_hclient *c = k->c;
    if (k->prev)
        k->prev->next = k->next;
    else
        c->socks = k->next;
    if (k->next)
        k->next->prev = k->prev;
    gw_release_close_free(&c->rel, (uv_handle_t *)&k->poll); /* poll is the first member of struct sock */
}

static void req_unlink(struct gw_hclient *c, struct gw_hreq *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        c->reqs = r->next;
    if (r->next)
        r->next->prev = r->prev;
}

static void req_free(struct gw_hclient *c, struct gw_hreq *r)
{
    req_unlink(c, r);
    curl_multi_remove_handle(c->multi, r->easy);
    curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->headers);
    free(r->body);
    free(r);
}

/* Reports every finished transfer. A callback may start or cancel others. */
static void check_done(struct gw_hclient *c)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(c->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct gw_hreq *r = NULL;
        CURLcode res = m->data.result;
        long status = 0;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
        if (!r)
            continue;
        gw_hreq_cb *cb = r->cb;
        void *data = r->data;
        char err[CURL_ERROR_SIZE];
        snprintf(err, sizeof err, "%s", r->err[0] ? r->err : curl_easy_strerror(res));
        req_free(c, r);
        cb(res == CURLE_OK, res == CURLE_OK ? status : 0, err, data);
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    struct sock *k = h->data;
    struct gw_hclient *c = k->c;
    int flags = 0, running;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    curl_multi_socket_action(c->multi, k->fd, flags, &running); /* may close k */
    check_done(c);
}

static void on_timeout(uv_timer_t *t)
{
    struct gw_hclient *c = t->data;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(c);
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    struct gw_hclient *c = userp;
    struct sock *k = socketp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (k) {
            if (!c->rel.stopping)
                curl_multi_assign(c->multi, fd, NULL);
            sock_close(k);
        }
        return 0;
    }
    if (!k) {
        if (!(k = calloc(1, sizeof *k)))
            return -1;
        if (uv_poll_init_socket(c->loop, &k->poll, fd) != 0) {
            free(k);
            return -1;
        }
        k->c = c;
        k->fd = fd;
        k->poll.data = k;
        k->next = c->socks;
        if (c->socks)
            c->socks->prev = k;
        c->socks = k;
        gw_release_hold(&c->rel);
        curl_multi_assign(c->multi, fd, k);
    }
    int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
    uv_poll_start(&k->poll, ev, on_poll);
    return 0;
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    struct gw_hclient *c = userp;
    (void)multi;
    if (timeout_ms < 0)
        uv_timer_stop(&c->timer);
    else
        uv_timer_start(&c->timer, on_timeout, (uint64_t)timeout_ms, 0);
    return 0;
}

/* Response bodies are not wanted: read and dropped. */
static size_t discard(char *p, size_t size, size_t n, void *data)
{
    (void)p;
    (void)data;
    return size * n;
}

struct gw_hclient *gw_webhook_http_new(uv_loop_t *loop)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        gw_log_error("webhook: libcurl failed to start");
        return NULL;
    }
    struct gw_hclient *c = calloc(1, sizeof *c);
    if (!c || !(c->multi = curl_multi_init())) {
        free(c);
        curl_global_cleanup();
        gw_log_error("webhook: out of memory");
        return NULL;
    }
    c->loop = loop;
    uv_timer_init(loop, &c->timer);
    c->timer.data = c;
    gw_release_init(&c->rel, client_free, NULL);
    gw_release_hold(&c->rel);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    return c;
}

struct gw_hreq *gw_webhook_http_post(struct gw_hclient *c, const char *url, const char *const *headers, size_t n,
                                const char *body, size_t len, int64_t timeout_ms, gw_hreq_cb *cb, void *data)
{
    struct gw_hreq *r = calloc(1, sizeof *r);
    if (!r || c->rel.stopping)
        goto fail;
    r->cb = cb;
    r->data = data;
    if (!(r->easy = curl_easy_init()) || !(r->body = malloc(len ? len : 1)))
        goto fail;
    memcpy(r->body, body, len);
    for (size_t i = 0; i < n; i++) {
        struct curl_slist *s = curl_slist_append(r->headers, headers[i]);
        if (!s)
            goto fail;
        r->headers = s;
    }
    CURL *e = r->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    /* One connection per attempt: on a reused one that dies, curl would
     * resend by itself, an attempt nobody counted. Webhooks are rare. */
    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "rankcast-webhook");
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->err);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK)
        goto fail;
    r->next = c->reqs;
    if (c->reqs)
        c->reqs->prev = r;
    c->reqs = r;
    return r;
fail:
    if (r) {
        if (r->easy)
            curl_easy_cleanup(r->easy);
        curl_slist_free_all(r->headers);
        free(r->body);
        free(r);
    }
    return NULL;
}

void gw_webhook_http_cancel(struct gw_hclient *c, struct gw_hreq *r)
{
    req_free(c, r);
}

void gw_webhook_http_free(struct gw_hclient *c)
{
    if (!c)
        return;
    gw_release_stop(&c->rel); /* held by the timer until its close callback */
    while (c->reqs)
        req_free(c, c->reqs);
    curl_multi_cleanup(c->multi); /* may report sockets removed */
    c->multi = NULL;
    while (c->socks)
        sock_close(c->socks);
    uv_timer_stop(&c->timer);
    gw_release_close(&c->rel, (uv_handle_t *)&c->timer);
}
