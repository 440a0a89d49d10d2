/* camclass — a model pushed over MQTT (see model_set.h). */
#include "model_set.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file_hash.h"

enum {
    PAYLOAD_MAX = 8192,
    URL_MAX = 2048,
    RETRY_FIRST_S = 2, // a fetch that may work later (no server yet, 5xx) is tried again after
    RETRY_MAX_S = 300, // this, doubling each time up to RETRY_MAX_S
};

struct cc_model_set {
    struct cc_model_set_config cfg; // token and dir: the copies below
    char *token, *dir;              // owned
    char status_topic[128];         // camclass/<id>/model/status
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t wake; // an offer, ready, or stop
    // Under lock:
    bool stop;
    bool ready;    // the cameras run: a load can switch them (cc_model_set_ready)
    char *pending; // (pending_len) the newest payload not yet handled; owned
    size_t pending_len;
    struct cc_mqtt *mqtt; // the client it came on: where the status goes
};

/* What a message asks. */
struct request {
    char url[URL_MAX];
    char sha256[CC_SHA256_HEX];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Constant time in the secret's content: every byte of given is compared, whatever differs. */
static bool same_secret(const char *given, const char *secret)
{
    size_t n = strlen(given), k = strlen(secret);
    unsigned d = n != k;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)given[i] ^ (unsigned char)secret[i % k];
    return d == 0;
}

static bool is_sha256(const char *s)
{
    size_t n = 0;
    while (isxdigit((unsigned char)s[n]))
        n++;
    return n == 64 && !s[n];
}

/* The message's fields into rq; false with msg naming what is wrong. */
static bool parse(const struct cc_model_set *s, const char *payload, size_t len, struct request *rq,
                  char *msg, size_t size)
{
    cJSON *o = cJSON_ParseWithLength(payload, len);
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(o, "url");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(o, "sha256");
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(o, "token");
    bool ok = false;
    if (!cJSON_IsObject(o))
        snprintf(msg, size, "the message is not a JSON object");
    else if (!cJSON_IsString(token) || !same_secret(token->valuestring, s->token))
        snprintf(msg, size, "the token is missing or wrong");
    else if (!cJSON_IsString(url) || strlen(url->valuestring) >= sizeof(rq->url) ||
             (strncasecmp(url->valuestring, "http://", 7) != 0 &&
              strncasecmp(url->valuestring, "https://", 8) != 0))
        snprintf(msg, size, "\"url\" must be an http:// or https:// URL (under %d bytes)", URL_MAX);
    else if (!cJSON_IsString(sha) || !is_sha256(sha->valuestring))
        snprintf(msg, size, "\"sha256\" must be the bundle's SHA-256 as 64 hex digits");
    else
        ok = true;
    if (ok) {
        snprintf(rq->url, sizeof(rq->url), "%s", url->valuestring);
        for (int i = 0; i < 64; i++)
            rq->sha256[i] = (char)tolower((unsigned char)sha->valuestring[i]);
        rq->sha256[64] = '\0';
    }
    cJSON_Delete(o);
    return ok;
}

/* The download's sink: the temporary file, bounded. */
struct sink {
    FILE *f;
    long n, max;
    bool over; // more than max came
    struct cc_model_set *s;
};

static size_t write_part(char *data, size_t one, size_t count, void *ctx)
{
    struct sink *k = ctx;
    size_t n = one * count;
    if ((k->over = k->n + (long)n > k->max) || fwrite(data, 1, n, k->f) != n)
        return 0; // CURLE_WRITE_ERROR
    k->n += (long)n;
    return n;
}

static int progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    struct sink *k = ctx;
    pthread_mutex_lock(&k->s->lock);
    bool stop = k->s->stop;
    pthread_mutex_unlock(&k->s->lock);
    return stop; // non-zero aborts the transfer
}

/* Whether a failed transfer may work if tried again later: the server not up yet or not
 * reachable (a node that boots before its model server or its network), a timeout, a broken
 * connection, or an HTTP answer that says "later" (5xx, 408, 429). Not a 404, a refused
 * protocol, a file over the limit or a stop. */
static bool may_work_later(CURLcode rc, long http)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    case CURLE_HTTP_RETURNED_ERROR:
        return http >= 500 || http == 408 || http == 429;
    default:
        return false;
    }
}

/* rq->url into the file f; false with msg, and *later when the transfer may work later. */
static bool download(struct cc_model_set *s, const struct request *rq, FILE *f, char *msg,
                     size_t size, bool *later)
{
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(msg, size, "out of memory for the download");
        return false;
    }
    struct sink k = {f, 0, s->cfg.max_bytes, false, s};
    char why[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, rq->url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s->cfg.max_bytes);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); // threads
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L); // a stalled server: 60 s without a byte
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "camclass");
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, why);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_part);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &k);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &k);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    CURLcode rc = curl_easy_perform(c);
    long http = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
    curl_easy_cleanup(c);
    *later = !k.over && may_work_later(rc, http);
    if (rc == CURLE_FILESIZE_EXCEEDED || k.over)
        snprintf(msg, size, "%.300s: larger than %ld bytes", rq->url, s->cfg.max_bytes);
    else if (rc != CURLE_OK)
        snprintf(msg, size, "%.300s: %s", rq->url, why[0] ? why : curl_easy_strerror(rc));
    return rc == CURLE_OK;
}

/* Fetches rq's bundle into a temporary file in dir, checks its sha256 and loads it; *later:
 * the download failed in a way that may work later. */
static bool fetch_and_load(struct cc_model_set *s, const struct request *rq,
                           struct cc_http_loaded *out, char *msg, size_t size, bool *later)
{
    char path[4096], got[CC_SHA256_HEX] = "";
    snprintf(path, sizeof(path), "%s/.camclass-model-set-XXXXXX", s->dir);
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        snprintf(msg, size, "cannot make a temporary file in %.300s: %s", s->dir, strerror(errno));
        if (fd >= 0)
            close(fd), unlink(path);
        return false;
    }
    bool ok = download(s, rq, f, msg, size, later);
    if (fclose(f) != 0 && ok) {
        snprintf(msg, size, "writing %.300s: %s", path, strerror(errno));
        ok = false;
    }
    struct cc_error err = {0};
    if (ok && (!cc_sha256_file(path, got, &err) || strcmp(got, rq->sha256) != 0)) {
        snprintf(msg, size, "%.300s: its sha256 is %.64s, not the %s the message names", rq->url,
                 got[0] ? got : "unknown", rq->sha256);
        ok = false;
    }
    if (ok && s->cfg.load(s->cfg.ctx, path, out, msg, size) != 200) {
        char why[1024];
        snprintf(why, sizeof(why), "%s", msg); // it names the temporary file: the URL first
        snprintf(msg, size, "%.300s: %.700s", rq->url, why);
        ok = false;
    }
    unlink(path);
    return ok;
}

/* The outcome, retained on the status topic and in one stderr line; retry_s > 0: the fetch is
 * tried again in that many seconds. */
static void report(struct cc_model_set *s, struct cc_mqtt *m, bool ok, const struct request *rq,
                   const struct cc_http_loaded *out, const char *msg, int retry_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", ok);
    if (retry_s > 0)
        cJSON_AddNumberToObject(o, "retry_in_s", retry_s);
    if (rq->sha256[0])
        cJSON_AddStringToObject(o, "sha256", rq->sha256);
    if (rq->url[0])
        cJSON_AddStringToObject(o, "url", rq->url);
    if (ok && out->name[0])
        cJSON_AddStringToObject(o, "model", out->name);
    if (msg[0])
        cJSON_AddStringToObject(o, ok ? "note" : "error", msg);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text || !cc_mqtt_retain(m, s->status_topic, text, strlen(text)))
        fprintf(stderr, "camclass: mqtt model/set: out of memory for the status\n");
    cJSON_free(text);
    if (ok)
        fprintf(stderr, "camclass: mqtt model/set: %s%s (sha256 %.12s...) from %s\n",
                msg[0] ? msg : "loaded ", msg[0] ? "" : out->name, rq->sha256, rq->url);
    else if (retry_s > 0)
        fprintf(stderr,
                "camclass: mqtt model/set: %s; the old model goes on, trying again in %d s\n", msg,
                retry_s);
    else
        fprintf(stderr, "camclass: mqtt model/set: %s%s\n", msg,
                strstr(msg, "old model goes on") ? "" : "; the old model goes on");
}

/* Handles one message; returns the seconds after which to handle it again (0: done): the last
 * wait doubled (retry_s, 0 the first time), when its fetch failed in a way that may work later. */
static int handle(struct cc_model_set *s, struct cc_mqtt *m, const char *payload, size_t len,
                  int retry_s)
{
    struct request rq = {0};
    struct cc_http_loaded out = {0};
    char msg[1024] = "", running[CC_SHA256_HEX] = "";
    if (len == 0)
        return 0; // the retained message was cleared
    bool ok = parse(s, payload, len, &rq, msg, sizeof(msg)), later = false;
    if (ok)
        s->cfg.sha(s->cfg.ctx, running);
    if (ok && strcmp(running, rq.sha256) == 0)
        snprintf(msg, sizeof(msg), "already running");
    else if (ok)
        ok = fetch_and_load(s, &rq, &out, msg, sizeof(msg), &later);
    int next = !later                       ? 0
               : !retry_s                   ? RETRY_FIRST_S
               : retry_s >= RETRY_MAX_S / 2 ? RETRY_MAX_S
                                            : 2 * retry_s;
    report(s, m, ok, &rq, &out, msg, next);
    return next;
}

/* Waits under s->lock for stop, or (once ready) a new message, or until the retry's deadline
 * (retry_s 0: none) has passed; true when the deadline came first. */
static bool wait_work(struct cc_model_set *s, int retry_s)
{
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += retry_s;
    while (!s->stop && !(s->ready && s->pending)) {
        if (!retry_s)
            pthread_cond_wait(&s->wake, &s->lock);
        else if (pthread_cond_timedwait(&s->wake, &s->lock, &at) == ETIMEDOUT)
            return !s->stop && !(s->ready && s->pending);
    }
    return false;
}

/* The worker: each message as it comes (the newest), and the one whose fetch may work later
 * again after its wait, until a newer message replaces it or stop. */
static void *worker_main(void *arg)
{
    struct cc_model_set *s = arg;
    char *payload = NULL; // the message being handled or waiting for its retry; owned
    size_t len = 0;
    struct cc_mqtt *m = NULL;
    int retry_s = 0;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        bool again = wait_work(s, retry_s), stop = s->stop;
        if (!again && !stop) {
            free(payload);
            payload = s->pending, len = s->pending_len, m = s->mqtt;
            s->pending = NULL;
            retry_s = 0;
        }
        pthread_mutex_unlock(&s->lock);
        if (stop) {
            free(payload);
            return NULL;
        }
        retry_s = handle(s, m, payload, len, retry_s);
    }
}

bool cc_model_set_read_token(const char *path, char *token, size_t size, struct cc_error *err)
{
    char text[1025];
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        const char *why = f ? "not a regular file" : strerror(errno);
        if (f)
            fclose(f);
        return cc_error_set(err,
                            "--mqtt-model-token %s: %s; give a file whose first line is "
                            "the token",
                            path, why);
    }
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    size_t line = strcspn(text, "\r\n");
    if (n == sizeof(text) - 1 || line == 0 || line >= size || strlen(text) < n)
        return cc_error_set(err,
                            "--mqtt-model-token %s: its first line must be the token (1 "
                            "to %zu bytes of text, the file under 1 KB)",
                            path, size - 1);
    memcpy(token, text, line);
    token[line] = '\0';
    return true;
}

void cc_model_set_offer(void *ctx, struct cc_mqtt *m, const void *payload, size_t len)
{
    struct cc_model_set *s = ctx;
    if (len > PAYLOAD_MAX) {
        fprintf(stderr,
                "camclass: mqtt model/set: a message of %zu bytes (at most %d); "
                "ignored\n",
                len, PAYLOAD_MAX);
        return;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return;
    memcpy(copy, payload, len);
    copy[len] = '\0';
    pthread_mutex_lock(&s->lock);
    if (s->stop) {
        free(copy);
    } else {
        free(s->pending); // a newer message replaces one not yet handled
        s->pending = copy, s->pending_len = len, s->mqtt = m;
        pthread_cond_signal(&s->wake);
    }
    pthread_mutex_unlock(&s->lock);
}

struct cc_model_set *cc_model_set_create(const struct cc_model_set_config *cfg,
                                         struct cc_error *err)
{
    char id[65];
    if (!cc_mqtt_device_id(cfg->device_id, id, err))
        return NULL;
    if (!cfg->token || !cfg->token[0]) {
        cc_error_set(err, "the model/set token is empty");
        return NULL;
    }
    struct cc_model_set *s = calloc(1, sizeof(*s));
    if (s) {
        pthread_condattr_t monotonic; // a retry's wait: not moved by a change of the clock
        pthread_condattr_init(&monotonic);
        pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->wake, &monotonic);
        pthread_condattr_destroy(&monotonic);
    }
    if (!s || !(s->token = strdup(cfg->token)) || !(s->dir = strdup(cfg->dir))) {
        cc_error_set(err, "out of memory");
        cc_model_set_destroy(s);
        return NULL;
    }
    s->cfg = *cfg;
    s->cfg.token = s->cfg.dir = NULL;
    s->cfg.max_bytes = cfg->max_bytes > 0 ? cfg->max_bytes : CC_MODEL_SET_MAX_BYTES;
    snprintf(s->status_topic, sizeof(s->status_topic), "camclass/%s/model/status", id);
    pthread_once(&curl_once, curl_init);
    int e = pthread_create(&s->thread, NULL, worker_main, s);
    if (e) {
        cc_error_set(err, "pthread_create (model/set): %s", strerror(e));
        cc_model_set_destroy(s);
        return NULL;
    }
    s->started = true;
    return s;
}

void cc_model_set_ready(struct cc_model_set *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->ready = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

void cc_model_set_stop(struct cc_model_set *s)
{
    if (!s || !s->started)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    s->started = false;
}

void cc_model_set_destroy(struct cc_model_set *s)
{
    if (!s)
        return;
    cc_model_set_stop(s);
    if (s->token)
        memset(s->token, 0, strlen(s->token));
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    free(s->token);
    free(s->dir);
    free(s->pending);
    free(s);
}
