/* camclass — the HTTP service's own state, shared by the modules that make it up (see http.h
 * for the service): http.c (the daemon, its connections, and each request's dispatch),
 * http_reply.c (answers, counted for /metrics) and http_routes.c (GET /latest, /stream,
 * /metrics, /snapshots, POST /camera/<camera>/reference and POST /model); each camera's state
 * is http_feed.c's. Not for other modules: libmicrohttpd's types appear
 * here, and nowhere outside app/output/http*.c.
 */
#ifndef CC_HTTP_SERVICE_H
#define CC_HTTP_SERVICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "decode_budget.h"
#include "http.h"
#include "http_deadline.h"
#include "http_feed.h"
#include "http_request.h"
#include "metrics.h"
#include "predict.h"
#include "samples.h"

struct cc_http {
    struct cc_http_config cfg; // cli: the caller's, outlives the service
    char token[CC_HTTP_MAX_TOKEN + 1];
    bool auth;
    struct cc_http_hosts hosts; // the Host names and Origins answered without the token
    size_t max_body;
    int64_t body_limit_ns; // a body must be in this long after the headers (6 x --serve-timeout)
    struct cc_http_deadline *deadline; // and the headers this long after the connection opened
                                       // or its previous request was answered (the same)
    struct cc_predict_config predict;
    struct cc_samples_config samples; // /samples; store NULL without --collect (404)
    struct cc_decode_budget *decodes; // /predict's decodes at once and their memory
    struct MHD_Daemon *daemon;
    int fd; // the listening socket: ours until the daemon starts, libmicrohttpd's while it runs
            // (MHD_stop_daemon would close it), ours again once MHD_quiesce_daemon hands it back
    char url[96];
    struct cc_metrics *metrics; // locks itself
    // Each camera's /latest and /stream (http_feed.h; n_feeds: the config's n_cameras, [0] the
    // first camera's). Made by start, fed by each camera's inference thread, read by
    // connections, freed by destroy.
    struct cc_http_feed *feeds;
    int n_feeds;
    char *page; // GET /: the page's bytes (malloc'd); NULL: none
    size_t page_size;
    atomic_bool stopping; // cc_http_stop began: /stream readers end
    atomic_int in_flight; // requests from their first call to their end (on_completed)
};

/* One request, from its first call to MHD_OPTION_NOTIFY_COMPLETED; its connection's thread. */
struct cc_http_req {
    bool started;             // the first call has been answered (headers seen)
    struct cc_http_body body; // the body (raw, or a form: its boundary), its limit
    int k;
    struct cc_roi roi; // ?roi= of POST /predict, when roi_given
    bool roi_given;
    enum cc_metrics_endpoint endpoint;
    const char *camera; // the camera the path names (/latest/<camera>, ...; in the URL, not
    size_t camera_len;  // '\0'-ended: camera_len bytes); NULL: none named
    int64_t head_ns;    // when the headers were in (the body's deadline counts from here)
    int64_t body_ns;    // when the whole body was in (POST /predict's latency starts here)
};

/* ------------------------------------------------------------------------------------------
 * Answers (http_reply.c), on the request's connection thread
 */

/* Queues status with a body of size bytes of type (taken: freed by libmicrohttpd; NULL: out of
 * memory, answered 500) and counts it for /metrics; header: value is one more header (NULL:
 * none). */
enum MHD_Result cc_http_send_bytes(struct cc_http *h, const struct cc_http_req *rq,
                                   struct MHD_Connection *c, int status, void *body, size_t size,
                                   const char *type, const char *header, const char *value);

/* cc_http_send_bytes with a text body (its length from strlen). */
enum MHD_Result cc_http_send_body(struct cc_http *h, const struct cc_http_req *rq,
                                  struct MHD_Connection *c, int status, char *text,
                                  const char *type, const char *header, const char *value);

/* The error body {"error": msg, "status": status} (predict.h). */
enum MHD_Result cc_http_send_error_(struct cc_http *h, const struct cc_http_req *rq,
                                    struct MHD_Connection *c, int status, const char *msg,
                                    const char *header, const char *value);

/* A malloc'd copy of n bytes with a '\0' after them; NULL when out of memory. */
char *cc_http_memdup(const char *p, size_t n);

// Inside a function with h and rq: a JSON body (taken), an error line.
#define send_json(c, status, json, header, value)                                                  \
    cc_http_send_body(h, rq, c, status, json, "application/json", header, value)
#define send_error(c, status, msg, header, value)                                                  \
    cc_http_send_error_(h, rq, c, status, msg, header, value)

/* ------------------------------------------------------------------------------------------
 * Routes (http_routes.c), on the request's connection thread
 */

/* GET /snapshots/<camera>/latest.jpg (url: the whole path). */
enum MHD_Result cc_http_send_snapshot(struct cc_http *h, const struct cc_http_req *rq,
                                      struct MHD_Connection *c, const char *url);

/* GET /latest (?cam=1: with its class activation map). */
enum MHD_Result cc_http_send_latest(struct cc_http *h, const struct cc_http_req *rq,
                                    struct MHD_Connection *c);

/* GET /stream (?panel=0: the frame alone). */
enum MHD_Result cc_http_send_stream(struct cc_http *h, const struct cc_http_req *rq,
                                    struct MHD_Connection *c);

/* GET /cameras: {"cameras": [names]}, in the config's order (the page's list). */
enum MHD_Result cc_http_send_cameras(struct cc_http *h, const struct cc_http_req *rq,
                                     struct MHD_Connection *c);

/* POST /camera/<camera>/reference. */
enum MHD_Result cc_http_send_reference(struct cc_http *h, const struct cc_http_req *rq,
                                       struct MHD_Connection *c);

/* GET /metrics. */
enum MHD_Result cc_http_send_metrics(struct cc_http *h, const struct cc_http_req *rq,
                                     struct MHD_Connection *c);

/* POST /model's headers: answered now for ?path=NAME (*answered true), else the body is read
 * first (*answered false) and cc_http_model_body answers. */
enum MHD_Result cc_http_model_head(struct cc_http *h, struct cc_http_req *rq,
                                   struct MHD_Connection *c, bool *answered);
enum MHD_Result cc_http_model_body(struct cc_http *h, struct cc_http_req *rq,
                                   struct MHD_Connection *c);

#endif
