/* camclass — the HTTP service (--serve): POST /predict, each camera's GET /latest/<camera> and
 * /stream/<camera>, /metrics, the page and the rest (docs/SERVE.md), through GNU libmicrohttpd.
 * This module and its parts (http_service.h: http.c, http_reply.c, http_routes.c) own that
 * library: its types and headers stay in them, its errors (MHD_NO, errno) are said there once.
 * What it decides from a request's strings (route, token, ?k=, Content-Type, the body's limit)
 * is http_request.c's, which has no library; each camera's state is http_feed.c's.
 *
 *   cc_http_check(cli->serve, cli->serve_token, cli->serve_allow, &err) // exit 2
 *   struct cc_http *h = cc_http_start(&cfg, &err);          // before the pipeline starts
 *   camera i's inference thread, per result: cc_http_result(h, i, r, f); // /latest, /metrics
 *   ...                                                     // requests run on their own threads
 *   cc_http_stop(h);                                        // before the pipeline stops
 *   cc_http_destroy(h);                                     // after it stopped
 *
 * Threads: libmicrohttpd runs one thread per connection (MHD_USE_THREAD_PER_CONNECTION), at
 * most CC_HTTP_MAX_CONNECTIONS: a /predict waits for the inference thread (cc_pipeline_classify)
 * and simply blocks its own thread meanwhile, which an event-loop mode would have to avoid with
 * suspend/resume. start and stop run on the controlling thread; cfg is copied.
 */
#ifndef CC_HTTP_H
#define CC_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "error.h"
#include "http_request.h"
#include "model.h"
#include "overlay_draw.h"
#include "pipeline.h"

enum {
    CC_HTTP_MAX_BODY_MB = 16,     // default largest request body (413 beyond); --serve-max-body
    CC_HTTP_MAX_CONNECTIONS = 32, // at once; more wait in the listen backlog (64)
    CC_HTTP_CONNECTION_MEMORY_KB = 256, // libmicrohttpd's pool per connection (its default,
                                        // 32 KB, held ~500 query arguments, a 2 KB URL: beyond,
                                        // the connection was dropped unanswered); 8 MB for 32
    CC_HTTP_TIMEOUT_S = 10,             // default: a connection idle this long (a slow client) is
                                        // closed; --serve-timeout
    CC_HTTP_BODY_TIMEOUTS = 6,          // request headers not in 6 x --serve-timeout after the
                               // connection opened or its previous answer, or a body not in
                               // that long after its headers (a client trickling them) is
                               // closed: 60 s by default (http_deadline.h for the headers)
    CC_HTTP_MAX_TOKEN = 256,  // bytes of --serve-token
    CC_HTTP_CAMERA_MAX = 64,  // bytes of a camera's name in /snapshots/<camera>/latest.jpg
    CC_HTTP_CAMERAS_MAX = 16, // cameras of one service (cameras.h's CC_CAMERAS_MAX)
    CC_HTTP_STREAM_W = 640,   // GET /stream's picture size
    CC_HTTP_STREAM_H = 360,
    CC_HTTP_STREAM_FPS = 10,  // at most this many /stream pictures a second
    CC_HTTP_STOP_GRACE_S = 5, // at stop, requests in flight are given this long to be answered
};

/* cc_http_check (--serve and --serve-token, before the model loads) is in http_request.h, with
 * the other decisions made from what a client sends. */

struct cc_sample_store; // sample_store.h

/* What POST /model answers with after a switch. */
struct cc_http_loaded {
    char name[256];  // the model's name
    char sha256[65]; // the bundle file's, hex; "" when unknown
    int classes;
};

/* One camera of the service. */
struct cc_http_camera {
    const char *name;             // in the routes: compared exactly with the URL's (after its
                                  // %-decoding), never used as a path; one safe path component
    const char *source;           // the camera or input, as the detection log names it
    const char *model;            // its model's name at the start
    struct cc_pipeline *pipeline; // its frames' pipeline (health reference, class activation
                                  // maps); not owned
};

struct cc_http_config {
    const struct cc_cli *cli;     // --serve (checked by cc_http_check), --serve-token,
                                  // --serve-allow-host,
                                  // --serve-timeout, --serve-max-body, --top-k (/predict's k
                                  // when the request gives no ?k=)
    struct cc_pipeline *pipeline; // where /predict's tensors are classified; not owned
    const struct cc_model *model; // the engine's model at the start (names); read by start only
    const char *backend;          // the engine's backend at start (static)
    // The cameras (n_cameras, 0..CC_HTTP_CAMERAS_MAX; the config's order): GET /latest/<name>,
    // /stream/<name>, POST /camera/<name>/reference; /latest and /stream alone are the first's.
    // None: requests only (/latest and /stream are 404). Read by start only.
    const struct cc_http_camera *cameras;
    int n_cameras;
    const struct cc_overlay_config *overlay; // what GET /stream's pictures show
    // POST /model: loads the bundle at path beside the running model and switches to it (on
    // a connection's thread; may take seconds). Returns the HTTP status: 200 with *out filled,
    // else (422 a bundle that does not load, 503 busy or stopping) the error line in msg.
    // NULL: POST /model answers 503.
    int (*load_model)(void *ctx, const char *path, struct cc_http_loaded *out, char *msg,
                      size_t msg_size);
    void *load_ctx;
    struct cc_sample_store *samples; // --collect: GET and POST /samples (samples.h); NULL:
                                     // those answer 404; not owned
    // GET /snapshots/<camera>/latest.jpg (--snapshot-dir): a copy of camera's newest snapshot
    // (malloc'd JPEG, *size bytes), or NULL for a camera unknown or without one yet (404). On
    // a connection's thread; camera is any string of the URL, for comparison only. NULL: 404.
    uint8_t *(*snapshot_latest)(void *ctx, const char *camera, size_t *size);
    void *snapshot_ctx;
};

struct cc_http;

/* Whether this process may open a socket for serve's address at all, and bind its port (NULL
 * serve: true). false with err when the system forbids the address family (a systemd unit's
 * RestrictAddressFamilies=, a seccomp filter), when the port is in use, below 1024 without the
 * privilege, or the address is not this machine's: nothing a retry changes, so a settings error
 * (exit 2) before the model loads, naming the way out. */
bool cc_http_allowed(const char *serve, struct cc_error *err);

/* Starts listening; GET / serves www/index.html as the assets are looked up (assets.h; 404
 * when it is not found). NULL with err when the address cannot be bound (in use, not this
 * machine's) or a thread cannot start: a runtime failure (exit 1). */
struct cc_http *cc_http_start(const struct cc_http_config *cfg, struct cc_error *err);

/* Camera i's inference thread (i: its index in cfg.cameras): a frame's result and the frame,
 * for GET /latest (as the detection log's "frame" object), /metrics and /stream (drawn only
 * while someone watches). */
void cc_http_result(struct cc_http *h, int i, const struct cc_result *r, const struct cc_frame *f);

/* Camera i's inference thread, after a model reload (pipeline.h on_model): its /latest names
 * the new model from then on, and /metrics' camclass_info the first camera's. (/predict reads
 * the pipeline's model in use itself.) */
void cc_http_model(struct cc_http *h, int i, const struct cc_model *m);

/* "http://127.0.0.1:8080" — the address and the port really bound (for a PORT of 0). */
const char *cc_http_url(const struct cc_http *h);

/* Stops accepting connections, gives the requests in flight up to CC_HTTP_STOP_GRACE_S to be
 * answered (a /predict needs the pipeline: call before it stops), then closes every connection
 * and waits for their threads. cc_http_result may still be called. Idempotent; accepts NULL. */
void cc_http_stop(struct cc_http *h);

/* Stops if needed and frees, after the inference thread has ended; accepts NULL. */
void cc_http_destroy(struct cc_http *h);

#endif
