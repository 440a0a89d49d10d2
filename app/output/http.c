/* camclass — the HTTP service through GNU libmicrohttpd (see http.h).
 *
 * libmicrohttpd's global state: none is set here (no MHD_set_panic_func: its default abort is
 * kept); every daemon option is passed to MHD_start_daemon below, in this module only.
 * Following the library's own examples (src/examples/post_example.c, largepost.c): the access
 * handler is called first with the headers (a per-request state is made and kept in *con_cls;
 * a response may be queued at once to refuse the request before its body is read), then once
 * per piece of body (consumed by setting *upload_data_size to 0), then once more with
 * *upload_data_size == 0, when the answer is queued. A multipart body is kept whole (it is
 * bounded by --serve-max-body) and parsed at its end by multipart.c: libmicrohttpd's post
 * processor took "XyZ; charset=utf-8" for the boundary, found only a lower-case "boundary=",
 * and could not say that a form ended before its closing boundary.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "assets.h"
#include "clock.h"
#include "http_service.h"

/* Any thread: libmicrohttpd's own error lines, one each on stderr (the journal). */
static void on_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    if (!cc_http_log_is_routine(line))
        fprintf(stderr, "camclass: http: %s\n", line);
}

/* libmicrohttpd's header iterator: each header line to the framing check. */
static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    cc_http_framing_add(cls, key, value ? value : "");
    return MHD_YES;
}

/* The headers of a POST /predict (or /samples with a body): ?k=, ?roi=, the body's length and
 * type; MHD_YES with *answered false to read the body when they are acceptable. */
static enum MHD_Result predict_head(struct cc_http *h, struct MHD_Connection *c,
                                    struct cc_http_req *rq, bool *answered)
{
    char msg[320];
    enum cc_http_body_kind kind;
    int status = cc_http_predict_head(
        MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "k"),
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH),
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE), h->max_body,
        h->cfg.cli->top_k, &rq->k, &kind, msg, sizeof(msg));
    if (status)
        return send_error(c, status, msg, NULL, NULL);
    const char *roi = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "roi");
    if (roi && !(rq->roi_given = cc_predict_roi_arg(roi, &rq->roi, msg, sizeof(msg))))
        return send_error(c, 400, msg, NULL, NULL);
    cc_http_body_init(&rq->body, h->max_body);
    if (kind == CC_HTTP_BODY_MULTIPART &&
        (status = cc_http_body_form(
             &rq->body,
             MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE), msg,
             sizeof(msg))))
        return send_error(c, status, msg, NULL, NULL);
    *answered = false;
    return MHD_YES;
}

/* The first call of a request: the body's framing, who asks (Host, Origin), routing,
 * authentication, limits that the headers show (http_request.h decides). Returns MHD_YES to go
 * on reading the body (a POST /predict that is acceptable so far). */
static enum MHD_Result first_call(struct cc_http *h, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, struct cc_http_req *rq,
                                  bool *answered)
{
    *answered = true;
    struct cc_http_route route = cc_http_route(
        method, url, h->auth ? h->token : NULL,
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
    rq->endpoint = route.endpoint;
    rq->camera = route.camera;
    rq->camera_len = route.camera_len;
    char msg[320];
    // An ambiguous body is refused first, and its connection closed: what a proxy in front
    // took for its body would be read here as the next request (request smuggling).
    struct cc_http_framing framing = {0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, on_header, &framing);
    int status = cc_http_framing_check(&framing, msg, sizeof(msg));
    if (status)
        return send_error(c, status, msg, MHD_HTTP_HEADER_CONNECTION, "close");
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    status = cc_http_check_host(&h->hosts, version, host, msg, sizeof(msg));
    if (!status)
        status = cc_http_check_origin(
            &h->hosts, method, host,
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN),
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site"), msg, sizeof(msg));
    if (status)
        return send_error(c, status, msg, NULL, NULL);
    if (route.status)
        return send_error(c, route.status, route.msg, route.header, route.value);
    switch (rq->endpoint) {
    case CC_METRICS_HEALTHZ:
        return send_json(c, 200, strdup("{\"status\":\"ok\"}\n"), NULL, NULL);
    case CC_METRICS_LATEST:
        return cc_http_send_latest(h, rq, c);
    case CC_METRICS_STREAM:
        return cc_http_send_stream(h, rq, c);
    case CC_METRICS_PAGE:
        if (!h->page)
            return send_error(c, 404, "the page (www/index.html) was not found at start", NULL,
                              NULL);
        return cc_http_send_body(h, rq, c, 200, cc_http_memdup(h->page, h->page_size),
                                 "text/html; charset=utf-8", NULL, NULL);
    case CC_METRICS_METRICS:
        return cc_http_send_metrics(h, rq, c);
    case CC_METRICS_CAMERA:
        return cc_http_send_reference(h, rq, c);
    case CC_METRICS_CAMERAS:
        return cc_http_send_cameras(h, rq, c);
    case CC_METRICS_SNAPSHOTS:
        return cc_http_send_snapshot(h, rq, c, url);
    case CC_METRICS_MODEL:
        return cc_http_model_head(h, rq, c, answered);
    case CC_METRICS_SAMPLES:
        if (!h->samples.store)
            return send_error(c, 404,
                              "this camclass collects no pictures; start it with "
                              "--collect DIR",
                              NULL, NULL);
        if (strcmp(method, "POST") != 0) {
            struct cc_predict_answer a = cc_samples_list(&h->samples);
            return send_json(c, a.status, a.json, NULL, NULL);
        }
        struct cc_predict_answer a =
            cc_samples_check_label(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "label"));
        if (a.status) // refused before its body is read
            return send_json(c, a.status, a.json, NULL, NULL);
        break; // its body comes as /predict's
    default:   // POST /predict
        break;
    }
    return predict_head(h, c, rq, answered);
}

/* A connection's watch for the headers' deadline (http_deadline.h), kept as its socket context;
 * NULL when out of memory (the idle timeout still applies). */
static struct cc_http_watch *watch_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The daemon's thread: a connection accepted (before its own thread starts), or closing
 * (before its socket is closed). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct cc_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? cc_http_deadline_add(h->deadline, ci->connect_fd) : NULL;
    } else {
        cc_http_deadline_remove(h->deadline, *socket_context);
        *socket_context = NULL;
    }
}

/* The deadline's thread: n connections were closed with no whole request in (slowloris). As
 * with a trickled body, libmicrohttpd can send nothing before the headers: 408 is counted. */
static void on_expire(void *ctx, int n, int64_t limit_ns)
{
    struct cc_http *h = ctx;
    for (int i = 0; i < n; i++)
        cc_metrics_request(h->metrics, CC_METRICS_OTHER, 408, -1);
    fprintf(stderr,
            "camclass: http: %d connection%s sent no whole request headers in %d s; closed\n", n,
            n == 1 ? "" : "s", (int)(limit_ns / 1000000000));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct cc_http *h = cls;
    struct cc_http_req *rq = *con_cls;
    if (!rq) {
        if (!(rq = calloc(1, sizeof(*rq))))
            return MHD_NO;
        *con_cls = rq;
        atomic_fetch_add(&h->in_flight, 1);
        rq->head_ns = cc_now_ns();
        cc_http_deadline_begin(h->deadline, watch_of(c));
        bool answered;
        enum MHD_Result ret = first_call(h, c, url, method, version, rq, &answered);
        rq->started = !answered;
        return ret;
    }
    if (!rq->started) // answered at the first call; libmicrohttpd drops the body
        return MHD_YES;
    if (*upload_data_size) {
        // A client that trickles its body, each piece within the idle timeout, is closed at the
        // deadline: libmicrohttpd can queue no answer while a body is coming in, so 408 is
        // counted, not sent.
        if (cc_now_ns() - rq->head_ns > h->body_limit_ns) {
            cc_metrics_request(h->metrics, rq->endpoint, 408, -1);
            fprintf(stderr,
                    "camclass: http: a request body still coming in after %d s; its "
                    "connection is closed\n",
                    (int)(h->body_limit_ns / 1000000000));
            return MHD_NO;
        }
        bool ok = cc_http_body_append(&rq->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return ok ? MHD_YES : MHD_NO;
    }
    // The whole body is in.
    rq->started = false;
    rq->body_ns = cc_now_ns();
    char msg[200];
    if (rq->endpoint == CC_METRICS_MODEL)
        return cc_http_model_body(h, rq, c);
    int status = cc_http_body_end(&rq->body, msg, sizeof(msg));
    if (status)
        return send_error(c, status, msg, NULL, NULL);
    struct cc_predict_answer a =
        rq->endpoint == CC_METRICS_SAMPLES // the picture as sent: camclass-train crops it
            ? cc_samples_post(&h->samples,
                              MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "label"),
                              rq->body.data, rq->body.size)
            : cc_predict_run(&h->predict, rq->body.data, rq->body.size, rq->k,
                             rq->roi_given ? &rq->roi : NULL);
    return send_json(c, a.status, a.json, a.retry ? MHD_HTTP_HEADER_RETRY_AFTER : NULL,
                     a.retry ? "1" : NULL);
}

/* A request's end (answered, or the connection closed or timed out): its state goes, and the
 * connection's next request has its headers' deadline from now. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct cc_http *h = cls;
    cc_http_deadline_end(h->deadline, watch_of(c));
    struct cc_http_req *rq = *con_cls;
    if (!rq)
        return;
    atomic_fetch_sub(&h->in_flight, 1);
    cc_http_body_finish(&rq->body);
    free(rq);
    *con_cls = NULL;
}

/* The page GET / serves, read once at start (at most 1 MB). */
static bool read_page(struct cc_http *h, const char *path, struct cc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "--serve: cannot read the page %s: %s", path, strerror(errno));
    h->page = malloc(1 << 20);
    h->page_size = h->page ? fread(h->page, 1, 1 << 20, f) : 0;
    bool ok = h->page && !ferror(f);
    fclose(f);
    if (!ok)
        return cc_error_set(err, "--serve: cannot read the page %s", path);
    return true;
}

void cc_http_result(struct cc_http *h, int i, const struct cc_result *r, const struct cc_frame *f)
{
    cc_metrics_frame(h->metrics, i, r);
    if (i >= 0 && i < h->n_feeds)
        cc_http_feed_result(&h->feeds[i], r, f);
}

void cc_http_model(struct cc_http *h, int i, const struct cc_model *m)
{
    if (i == 0)
        cc_metrics_set_model(h->metrics, m->name);
    if (i >= 0 && i < h->n_feeds)
        cc_http_feed_model(&h->feeds[i], m);
}

/* Binds fd (then closes it) to see that the port is free: another listener is a settings
 * error; PORT 0 always is. SO_REUSEADDR as the service's socket, so that connections of a
 * previous run waiting out TIME_WAIT do not count. */
static bool port_free(int fd, const char *serve, const struct cc_http_listen *la,
                      struct cc_error *err)
{
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    bool ok = bind(fd, (const struct sockaddr *)&la->sa, la->len) == 0;
    int e = errno;
    close(fd);
    if (ok || (e != EADDRINUSE && e != EACCES && e != EADDRNOTAVAIL))
        return true; // anything else: cc_http_start says so
    if (e == EADDRINUSE)
        return cc_error_set(err,
                            "--serve %s: the port is in use (another camclass, or another "
                            "server); pick another PORT, or 0 for a free one",
                            serve);
    if (e == EACCES)
        return cc_error_set(err,
                            "--serve %s: ports below 1024 need privileges; pick a PORT of "
                            "1024 or more",
                            serve);
    return cc_error_set(err,
                        "--serve %s: this machine has no such address; give one of its "
                        "own (ip addr), or leave ADDR out for 127.0.0.1",
                        serve);
}

bool cc_http_allowed(const char *serve, struct cc_error *err)
{
    struct cc_http_listen la;
    if (!serve)
        return true;
    if (!cc_http_parse_listen(serve, &la, err))
        return false;
    int fd = socket(la.v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0)
        return port_free(fd, serve, &la, err);
    if (errno != EAFNOSUPPORT && errno != EPERM && errno != EACCES)
        return true; // out of descriptors or memory: cc_http_start says so (exit 1)
    return cc_error_set(err,
                        "--serve %s: this process may not open %s sockets (%s): under systemd, "
                        "install the network.conf drop-in (camclass(1), SYSTEMD)",
                        serve, la.v6 ? "IPv6" : "IPv4", strerror(errno));
}

/* Each camera's feed (http_feed.h). */
static bool start_feeds(struct cc_http *h, const struct cc_http_config *cfg, struct cc_error *err)
{
    if (cfg->n_cameras < 0 || cfg->n_cameras > CC_HTTP_CAMERAS_MAX)
        return cc_error_set(err, "--serve: %d cameras; at most %d", cfg->n_cameras,
                            CC_HTTP_CAMERAS_MAX);
    if (!cfg->n_cameras)
        return true;
    if (!(h->feeds = calloc((size_t)cfg->n_cameras, sizeof(*h->feeds))))
        return cc_error_set(err, "out of memory starting the HTTP service");
    for (int i = 0; i < cfg->n_cameras; i++) {
        const struct cc_http_camera *c = &cfg->cameras[i];
        struct cc_http_feed_config fc = {
            .name = c->name,
            .source = c->source,
            .model = c->model,
            .backend = cfg->backend,
            .overlay = cfg->overlay,
            .pipeline = c->pipeline,
            .named = cfg->n_cameras > 1,
        };
        h->n_feeds = i + 1; // destroy finishes it, built or half-built
        if (!cc_http_feed_init(&h->feeds[i], &fc, err))
            return false;
    }
    return true;
}

/* Our own listening socket at la (h->fd) and h->url: a bind error is said with its errno, and
 * PORT 0 gets a port. */
static bool open_listener(struct cc_http *h, const struct cc_http_listen *la, const char *serve,
                          struct cc_error *err)
{
    char host[INET6_ADDRSTRLEN] = "";
    if (la->v6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&la->sa)->sin6_addr, host, sizeof(host));
    else
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&la->sa)->sin_addr, host, sizeof(host));
    int one = 1;
    if ((h->fd = socket(la->v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(h->fd, (const struct sockaddr *)&la->sa, la->len) != 0 || listen(h->fd, 64) != 0)
        return cc_error_set(
            err, "--serve %s: cannot listen on %s: %s%s", serve, host, strerror(errno),
            errno == EADDRINUSE      ? " (another program uses the port; choose another)"
            : errno == EACCES        ? " (ports below 1024 need privileges; choose another)"
            : errno == EADDRNOTAVAIL ? " (not an address of this machine)"
                                     : "");
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    getsockname(h->fd, (struct sockaddr *)&bound, &blen);
    unsigned port = ntohs(la->v6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                 : ((struct sockaddr_in *)&bound)->sin_port);
    snprintf(h->url, sizeof(h->url), la->v6 ? "http://[%s]:%u" : "http://%s:%u", host, port);
    return true;
}

struct cc_http *cc_http_start(const struct cc_http_config *cfg, struct cc_error *err)
{
    const struct cc_cli *cli = cfg->cli;
    struct cc_http_listen la;
    if (!cc_http_parse_listen(cli->serve, &la, err))
        return NULL;
    struct cc_http *h = calloc(1, sizeof(*h));
    if (!h) {
        cc_error_set(err, "out of memory starting the HTTP service");
        return NULL;
    }
    h->cfg = *cfg;
    h->fd = -1;
    const char *names[CC_HTTP_CAMERAS_MAX];
    for (int i = 0; i < cfg->n_cameras && i < CC_HTTP_CAMERAS_MAX; i++)
        names[i] = cfg->cameras[i].name;
    if (!(h->metrics = cc_metrics_create(cfg->model->name, cfg->backend, names, cfg->n_cameras))) {
        cc_error_set(err, "out of memory starting the HTTP service");
        goto error;
    }
    if (!start_feeds(h, cfg, err))
        goto error;
    char page[4096];
    if (cc_asset_find("www/index.html", page, sizeof(page), NULL) && !read_page(h, page, err))
        goto error;
    if (cli->serve_token) {
        snprintf(h->token, sizeof(h->token), "%s", cli->serve_token);
        h->auth = true;
    }
    cc_http_hosts_init(&h->hosts, &la, cli->serve_token, cli->serve_allow);
    h->max_body = (size_t)(cli->serve_body_mb > 0 ? cli->serve_body_mb : CC_HTTP_MAX_BODY_MB) << 20;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (!(h->decodes =
              cc_decode_budget_create(cpus < 1                         ? 1
                                      : cpus > CC_HTTP_MAX_CONNECTIONS ? CC_HTTP_MAX_CONNECTIONS
                                                                       : (int)cpus,
                                      CC_PREDICT_DECODE_UNITS, err)))
        goto error;
    h->predict = (struct cc_predict_config){cfg->pipeline, h->decodes};
    h->samples =
        (struct cc_samples_config){cfg->samples, cfg->pipeline, h->decodes, cfg->n_cameras > 0};

    if (!open_listener(h, &la, cli->serve, err))
        goto error;
    unsigned timeout = (unsigned)(cli->serve_timeout > 0 ? cli->serve_timeout : CC_HTTP_TIMEOUT_S);
    h->body_limit_ns = (int64_t)CC_HTTP_BODY_TIMEOUTS * timeout * 1000000000;
    if (!(h->deadline = cc_http_deadline_create(h->body_limit_ns, on_expire, h, err)))
        goto error;
    h->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
            MHD_USE_ITC | (la.v6 ? MHD_USE_IPv6 : 0), // ITC: MHD_quiesce_daemon needs it
        0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_log, h, // first: all lines
        MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)CC_HTTP_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CC_HTTP_CONNECTION_MEMORY_KB * 1024,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        h, MHD_OPTION_END);
    if (!h->daemon) {
        // Some of libmicrohttpd's failure paths close the socket it was given, others do not:
        // left open rather than closed twice (camclass ends on this error).
        h->fd = -1;
        cc_error_set(err, "--serve %s: MHD_start_daemon failed (MHD_NO; the line above says why)",
                     cli->serve);
        goto error;
    }
    return h;
error:
    cc_http_destroy(h);
    return NULL;
}

const char *cc_http_url(const struct cc_http *h)
{
    return h->url;
}

void cc_http_stop(struct cc_http *h)
{
    if (!h)
        return;
    atomic_store(&h->stopping, true); // /stream readers end within 250 ms
    for (int i = 0; i < h->n_feeds; i++)
        cc_http_feed_stop(&h->feeds[i]);
    if (h->daemon) {
        // MHD_stop_daemon shuts every connection's socket down, answered or not. So first no
        // new connections (the listening socket comes back to us), then the requests in flight
        // (a /predict being classified, a body still coming) get up to CC_HTTP_STOP_GRACE_S to
        // be answered; idle keep-alive connections hold no request and do not count.
        if (MHD_quiesce_daemon(h->daemon) == MHD_INVALID_SOCKET)
            h->fd = -1; // not handed back: MHD_stop_daemon closes it
        int64_t end = cc_now_ns() + (int64_t)CC_HTTP_STOP_GRACE_S * 1000000000;
        while (atomic_load(&h->in_flight) > 0 && cc_now_ns() < end)
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        MHD_stop_daemon(h->daemon); // every connection closed and removed from the deadline
    }
    h->daemon = NULL;
    cc_http_deadline_destroy(h->deadline);
    h->deadline = NULL;
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
}

void cc_http_destroy(struct cc_http *h)
{
    if (!h)
        return;
    cc_http_stop(h);
    for (int i = 0; i < h->n_feeds; i++)
        cc_http_feed_finish(&h->feeds[i]);
    free(h->feeds);
    free(h->page);
    cc_metrics_destroy(h->metrics);
    cc_decode_budget_destroy(h->decodes);
    free(h);
}