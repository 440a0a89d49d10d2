/* camclass — detection events POSTed to a URL (see webhook.h). */
#include "webhook.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "clock.h"
#include "notice.h"

#define URL_MAX 2048
#define RETRY_MIN_S 1.0

struct item {
    char *json; // (len) bytes, owned; NULL: none
    size_t len;
};

struct cc_webhook {
    char *url;                    // owned
    struct cc_webhook_config cfg; // notice, limits; url not kept
    CURL *curl;                   // used by the thread only
    struct curl_slist *headers;   // Content-Type
    pthread_t thread;
    bool started;

    pthread_mutex_t lock; // guards everything below
    pthread_cond_t wake;  // an event queued, or stopping
    struct item *queue;   // (queue_max) ring: head the oldest, count waiting
    int head, count;
    struct item inflight; // taken by the thread: being sent, or waiting to be sent again
    bool stopping;
    int64_t deadline_ns; // stopping: give up after this
    struct cc_webhook_totals t;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void say(const struct cc_webhook *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct cc_webhook *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_vnotice(w->cfg.notice, w->cfg.notice_ctx, fmt, ap);
    va_end(ap);
}

bool cc_webhook_check_url(const char *url, struct cc_error *err)
{
    size_t n = url ? strlen(url) : 0;
    const char *host = NULL;
    if (n > 7 && strncmp(url, "http://", 7) == 0)
        host = url + 7;
    else if (n > 8 && strncmp(url, "https://", 8) == 0)
        host = url + 8;
    if (!host)
        return cc_error_set(err, "--webhook %s: give an http:// or https:// URL", url ? url : "");
    if (n >= URL_MAX)
        return cc_error_set(err, "--webhook: the URL is over %d bytes", URL_MAX - 1);
    size_t authority = strcspn(host, "/?#");
    if (authority == 0 || host[0] == ':')
        return cc_error_set(err, "--webhook %s: the URL has no host", url);
    if (memchr(host, '@', authority))
        return cc_error_set(err, "--webhook: no user:password@ in the URL (ps shows it); put a "
                                 "token in the path or query instead");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
            return cc_error_set(err, "--webhook: the URL has a space or control character");
    return true;
}

// --- Sending ----------------------------------------------------------------------------------

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
    (void)p, (void)ctx;
    return size * n;
}

enum outcome { DELIVERED, RETRY, REFUSED };

// One POST of it; why (for a notice) when not delivered.
static enum outcome post_one(struct cc_webhook *w, const struct item *it, char *why, size_t size)
{
    CURL *c = w->curl;
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, it->json);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
        snprintf(why, size, "%s", curl_easy_strerror(rc));
        return RETRY;
    }
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200 && code < 300)
        return DELIVERED;
    snprintf(why, size, "HTTP %ld", code);
    return code == 408 || code == 429 || code >= 500 ? RETRY : REFUSED;
}

// Waits (locked) until t_ns, or the deadline once stopping; true when it is time to try again.
static bool wait_until(struct cc_webhook *w, int64_t t_ns)
{
    for (;;) {
        int64_t limit = w->stopping && w->deadline_ns < t_ns ? w->deadline_ns : t_ns;
        if (cc_now_ns() >= limit)
            break;
        struct timespec ts = {(time_t)(limit / 1000000000), (long)(limit % 1000000000)};
        pthread_cond_timedwait(&w->wake, &w->lock, &ts);
    }
    return !w->stopping || cc_now_ns() < w->deadline_ns;
}

// Takes the oldest waiting event into inflight. Called locked; false when none.
static bool take_locked(struct cc_webhook *w)
{
    if (w->inflight.json)
        return true;
    if (!w->count)
        return false;
    w->inflight = w->queue[w->head];
    w->queue[w->head] = (struct item){0};
    w->head = (w->head + 1) % w->cfg.queue_max;
    w->count--;
    return true;
}

// After a try: the outage notices, totals, and the next wait. Called locked.
static void after_try(struct cc_webhook *w, enum outcome o, const char *why, double *delay,
                      int64_t *outage_ns)
{
    if (o != RETRY) {
        if (*outage_ns)
            say(w, "webhook: %s answers again after %.1f s; sending %d waiting event%s", w->url,
                (double)(cc_now_ns() - *outage_ns) / 1e9, w->count, w->count == 1 ? "" : "s");
        *outage_ns = 0;
        *delay = RETRY_MIN_S;
        if (o == REFUSED) {
            w->t.refused++;
            say(w, "webhook: %s answered %s to an event; it is dropped (check --webhook)", w->url,
                why);
        } else {
            w->t.delivered++;
        }
        free(w->inflight.json);
        w->inflight = (struct item){0};
        return;
    }
    if (!*outage_ns) {
        *outage_ns = cc_now_ns();
        say(w,
            "webhook: POST to %s failed (%s); retrying with back-off, events wait (at most "
            "%d)",
            w->url, why, w->cfg.queue_max);
    }
    *delay = *delay * 2 > w->cfg.retry_max_s ? w->cfg.retry_max_s : *delay * 2;
}

static void *thread_main(void *arg)
{
    struct cc_webhook *w = arg;
    double delay = RETRY_MIN_S;
    int64_t outage_ns = 0;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->count && !w->inflight.json && !w->stopping)
            pthread_cond_wait(&w->wake, &w->lock);
        if ((w->stopping && cc_now_ns() >= w->deadline_ns) || !take_locked(w))
            break;
        struct item it = w->inflight;
        pthread_mutex_unlock(&w->lock);
        char why[256] = "";
        enum outcome o = post_one(w, &it, why, sizeof(why));
        pthread_mutex_lock(&w->lock);
        after_try(w, o, why, &delay, &outage_ns);
        if (o == RETRY && !wait_until(w, cc_now_ns() + (int64_t)(delay * 1e9)))
            break;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

// --- Create / destroy -------------------------------------------------------------------------

static bool setup_curl(struct cc_webhook *w, struct cc_error *err)
{
    pthread_once(&curl_once, curl_init);
    if (!(w->curl = curl_easy_init()) ||
        !(w->headers = curl_slist_append(NULL, "Content-Type: application/json")))
        return cc_error_set(err, "--webhook: out of memory");
    CURL *c = w->curl;
    CURLcode rc = curl_easy_setopt(c, CURLOPT_URL, w->url);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    if (rc != CURLE_OK)
        return cc_error_set(err, "--webhook %s: %s", w->url, curl_easy_strerror(rc));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, w->headers);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); // no SIGALRM for timeouts: threads
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(w->cfg.timeout_s * 1000));
    curl_easy_setopt(c, CURLOPT_USERAGENT, "camclass");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    return true;
}

struct cc_webhook *cc_webhook_create(const struct cc_webhook_config *cfg, struct cc_error *err)
{
    if (!cc_webhook_check_url(cfg->url, err))
        return NULL;
    struct cc_webhook *w = calloc(1, sizeof(*w));
    if (!w) {
        cc_error_set(err, "--webhook: out of memory");
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    cc_cond_init_monotonic(&w->wake);
    w->cfg = *cfg;
    w->cfg.url = NULL;
    w->cfg.queue_max = cfg->queue_max > 0 ? cfg->queue_max : CC_WEBHOOK_QUEUE_DEFAULT;
    w->cfg.timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 10;
    w->cfg.retry_max_s = cfg->retry_max_s > 0 ? cfg->retry_max_s : 60;
    if (!(w->url = strdup(cfg->url)) ||
        !(w->queue = calloc((size_t)w->cfg.queue_max, sizeof(*w->queue)))) {
        cc_error_set(err, "--webhook: out of memory");
        goto error;
    }
    if (!setup_curl(w, err))
        goto error;
    int e = pthread_create(&w->thread, NULL, thread_main, w);
    if (e) {
        cc_error_set(err, "--webhook: pthread_create failed: %s", strerror(e));
        goto error;
    }
    w->started = true;
    return w;
error:
    cc_webhook_destroy(w, 0);
    return NULL;
}

bool cc_webhook_post(struct cc_webhook *w, const char *json, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return false;
    memcpy(copy, json, len);
    copy[len] = '\0';
    pthread_mutex_lock(&w->lock);
    if (w->count == w->cfg.queue_max) { // away too long: the oldest waiting goes
        free(w->queue[w->head].json);
        w->queue[w->head] = (struct item){0};
        w->head = (w->head + 1) % w->cfg.queue_max;
        w->count--;
        w->t.dropped++;
    }
    w->queue[(w->head + w->count) % w->cfg.queue_max] = (struct item){copy, len};
    w->count++;
    w->t.queued++;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return true;
}

struct cc_webhook_totals cc_webhook_get_totals(struct cc_webhook *w)
{
    pthread_mutex_lock(&w->lock);
    struct cc_webhook_totals t = w->t;
    pthread_mutex_unlock(&w->lock);
    return t;
}

void cc_webhook_destroy(struct cc_webhook *w, int flush_ms)
{
    if (!w)
        return;
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->stopping = true;
        w->deadline_ns = cc_now_ns() + (int64_t)flush_ms * 1000000;
        pthread_cond_broadcast(&w->wake);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
        int left = w->count + (w->inflight.json != NULL);
        if (left)
            say(w, "webhook: %d event%s not delivered: %s is away", left,
                left == 1 ? " was" : "s were", w->url);
        if (w->t.dropped)
            say(w, "webhook: %llu event%s dropped from a full queue while %s was away",
                (unsigned long long)w->t.dropped, w->t.dropped == 1 ? " was" : "s were", w->url);
    }
    for (int i = 0; w->queue && i < w->cfg.queue_max; i++)
        free(w->queue[i].json);
    free(w->queue);
    free(w->inflight.json);
    curl_slist_free_all(w->headers);
    if (w->curl)
        curl_easy_cleanup(w->curl);
    free(w->url);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
