/* camclass — the decisions the HTTP service makes from what a client sends, without an HTTP
 * library or the engine: the --serve address, the Bearer token, routing, /predict's ?k=,
 * Content-Length and Content-Type, and the body's accounting (its limit; a form's image field
 * through multipart.h). http.c (libmicrohttpd's boundary) hands these the strings libmicrohttpd has
 * parsed (method, path, header values, body pieces) and sends what they decide;
 * tests/fuzz/fuzz_http.c feeds them hostile input directly.
 *
 *   struct cc_http_route r = cc_http_route(method, path, token, authorization);
 *   if (r.status) send the error r.status, r.msg (+ r.header: r.value);
 *   else if (r.endpoint == CC_METRICS_PREDICT) {
 *       status = cc_http_predict_head(k, length, type, max, top_k, &rq, msg, sizeof(msg));
 *       cc_http_body_init(&body, max); multipart: status = cc_http_body_form(&body, type, ...);
 *       per body piece: cc_http_body_append
 *       status = cc_http_body_end(&body, msg, sizeof(msg)); // the image in body.data
 *   }
 *
 * Before routing, who asks: cc_http_check_host (the Host header: DNS rebinding) and
 * cc_http_check_origin (a browser's cross-origin POST), both against the cc_http_hosts made at
 * start from --serve, --serve-token and --serve-allow-host.
 *
 * Threads: none kept; every function works on what it is given (a request on its
 * connection's thread). The multipart syntax is multipart.c's, on the whole body.
 */
#ifndef CC_HTTP_REQUEST_H
#define CC_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "error.h"
#include "metrics.h"
#include "multipart.h"

/* --serve [ADDR:]PORT, parsed (no name is looked up). */
struct cc_http_listen {
    struct sockaddr_storage sa; // sockaddr_in or sockaddr_in6, port set
    socklen_t len;              // of sa's family
    bool v6, loopback;
};

/* Parses --serve's value: PORT 0..65535 (0 = any free port), ADDR an IPv4 address or [IPv6],
 * default 127.0.0.1. False with err (one line naming --serve and the way out). */
bool cc_http_parse_listen(const char *arg, struct cc_http_listen *out, struct cc_error *err);

/* Checks --serve [ADDR:]PORT (as cc_http_parse_listen), --serve-token (1..256 printable
 * ASCII characters, no spaces) and --serve-allow-host (a comma list of host names or addresses,
 * no ports, no spaces): an address other than loopback needs a token; a token or allowed hosts
 * without --serve are refused. False with err (one line naming the flag and the way out).
 * serve, token and allow NULL: true. */
bool cc_http_check(const char *serve, const char *token, const char *allow, struct cc_error *err);

/* Which Host names a request may give (DNS rebinding: a page whose name the attacker points at
 * 127.0.0.1 reaches the service with its own name as Host), made once at start, read only
 * then. */
struct cc_http_hosts {
    bool any;          // --serve-token is set: every Host and Origin passes (the token protects)
    char bound[48];    // the bound address as a Host writes it: "127.0.0.2", "[::1]"
    const char *allow; // --serve-allow-host's comma list (checked); NULL: none; not owned
};

/* The hosts of a service bound at la (port aside) with token and allow (NULL: none). */
void cc_http_hosts_init(struct cc_http_hosts *hs, const struct cc_http_listen *la,
                        const char *token, const char *allow);

/* A request's Host header (NULL: none) under its version ("HTTP/1.1", "HTTP/1.0"): 0 when it
 * may be answered; 400 for HTTP/1.1 (or later) without Host, token or not; without a token,
 * 421 unless the name (the port is not compared: a proxy in front may use its own) is
 * localhost, 127.0.0.1, [::1], the bound address or an allowed host. msg: the error line. */
int cc_http_check_host(const struct cc_http_hosts *hs, const char *version, const char *host,
                       char *msg, size_t msg_size);

/* A request that may change state (any method but GET and HEAD) from a browser: without a
 * token, 403 when Sec-Fetch-Site (NULL: absent) is other than same-origin or none, or Origin
 * (NULL: absent) is other than http://HOST; clients that send neither (curl, scripts) pass.
 * 0 when it may go on; msg: the error line. */
int cc_http_check_origin(const struct cc_http_hosts *hs, const char *method, const char *host,
                         const char *origin, const char *fetch_site, char *msg, size_t msg_size);

/* Whether an Authorization header value (NULL: none) is "Bearer TOKEN", compared in constant
 * time (no early exit on the first difference). token NULL: no token needed, true. */
bool cc_http_bearer_ok(const char *authorization, const char *token);

/* How a request's body is framed (RFC 9112 section 6): its Content-Length and
 * Transfer-Encoding header lines as they came, gathered by cc_http_framing_add. The strings
 * are the request's (not owned; read while it lasts). */
struct cc_http_framing {
    int lengths;          // Content-Length lines
    const char *length;   // the first one's value
    bool lengths_differ;  // two of them have different values
    int encodings;        // Transfer-Encoding lines
    const char *encoding; // the first one's value
};

/* One header line of a request (name, value: as libmicrohttpd hands them), any order. */
void cc_http_framing_add(struct cc_http_framing *f, const char *name, const char *value);

/* 0 when the body's framing is unambiguous; else the refusal, after which the connection must
 * be closed (what follows could be taken as another request: request smuggling), with its
 * error line in msg: 400 for Transfer-Encoding with Content-Length (section 6.1) or two
 * different Content-Lengths (section 6.3), 501 for a Transfer-Encoding other than one
 * "chunked" (gzip, chunked; xchunked). */
int cc_http_framing_check(const struct cc_http_framing *f, char *msg, size_t msg_size);

/* What the method and path of a request ask for, before its body. */
#define CC_HTTP_SNAPSHOTS "/snapshots/" // a path prefix: GET /snapshots/<camera>/latest.jpg
#define CC_HTTP_CAMERA "/camera/"       // a path prefix: POST /camera/<camera>/reference
#define CC_HTTP_REFERENCE "/reference"

struct cc_http_route {
    enum cc_metrics_endpoint endpoint; // the path (CC_METRICS_OTHER: none of ours)
    int status;         // 0: serve endpoint (for /predict: go on with cc_http_predict_head);
                        // else the refusal: 401, 404 or 405
    const char *msg;    // the refusal's error line (static)
    const char *header; // an extra header of the refusal (Allow, WWW-Authenticate) or NULL
    const char *value;
    const char *camera; // the camera named by /latest/<camera>, /stream/<camera> and
    size_t camera_len;  // /camera/<camera>/reference: camera_len bytes of path (not
                        // '\0'-ended; possibly none); NULL: the path names none
};

/* Routes method ("GET", "HEAD", "POST", …) and path (without the query) as the service does:
 * /latest/<camera> and /stream/<camera> are /latest's and /stream's endpoints with a camera;
 * POST /camera/<camera>/reference is CC_METRICS_CAMERA (the camera's name is not checked here:
 * the caller compares it with its cameras'); GET /healthz needs no token; POST /model (a model
 * reload) is routed as POST /predict; every
 * other path needs token (NULL: none) in authorization
 * (the header's value, NULL: absent) before it is told apart from an unknown one. */
struct cc_http_route cc_http_route(const char *method, const char *path, const char *token,
                                   const char *authorization);

/* POST /model?path=NAME: NAME must be a bundle's file name (NAME.ccm, letters, digits, '.',
 * '_', '-'; not starting with '.'; no "..", no '/'), looked up as "models/NAME" in the model
 * folders (assets.h) only. 0 with rel set, else 400 with the error line in msg. */
enum { CC_HTTP_MODEL_NAME_MAX = 128 };
int cc_http_model_name(const char *name, char *rel, size_t rel_size, char *msg, size_t msg_size);

/* How a POST /predict's body comes. */
enum cc_http_body_kind {
    CC_HTTP_BODY_RAW,       // the body is the image, told by its first bytes (image/…,
                            // application/octet-stream, none, or curl --data-binary's
                            // application/x-www-form-urlencoded)
    CC_HTTP_BODY_MULTIPART, // multipart/form-data: the image is the field "file" or "image"
};

/* The headers of a POST /predict: ?k= (NULL: absent; else 1..CC_RESULT_MAX_TOP), the
 * Content-Length (NULL: absent or chunked; more than max_body: 413) and Content-Type (NULL:
 * raw; 415 unless image/..., application/octet-stream, application/x-www-form-urlencoded or
 * multipart/form-data). Returns 0 with *k (default_k without ?k=) and *kind set, or the
 * refusal status (400, 413, 415) with its error line in msg. */
int cc_http_predict_head(const char *k_arg, const char *content_length, const char *content_type,
                         size_t max_body, int default_k, int *k, enum cc_http_body_kind *kind,
                         char *msg, size_t msg_size);

/* A POST /predict's body as it comes in; at its end (cc_http_body_end) the image: the raw
 * body, or the first multipart field "file" or "image" that has bytes. Owned by its request
 * (cc_http_body_finish frees). */
struct cc_http_body {
    uint8_t *data; // (size) the body's bytes so far; malloc'd, grown by doubling
    size_t size, cap;
    size_t max;     // the limit (--serve-max-body): beyond it nothing more is kept
    bool too_big;   // more than max came: the rest is read and dropped, then 413
    bool no_memory; // growing data failed (append returned false)
    char boundary[CC_MULTIPART_BOUNDARY_MAX + 1]; // a multipart form's; "": a raw body
};

/* A body of at most max bytes, empty. */
void cc_http_body_init(struct cc_http_body *b, size_t max);

/* Appends n bytes of a raw body. False only when out of memory (then the connection is
 * dropped); past the limit, true with too_big set. */
bool cc_http_body_append(struct cc_http_body *b, const char *data, size_t n);

/* The body is a multipart/form-data form with this Content-Type: 0 with its boundary kept,
 * else 400 (no boundary, or not one RFC 2046 allows) with the error line in msg. */
int cc_http_body_form(struct cc_http_body *b, const char *content_type, char *msg, size_t msg_size);

/* The whole body is in: 0 when the image (data, size) is to be classified (for a form, its
 * field's bytes moved to the start of data), else the refusal (413 too big; for a form 400:
 * it does not parse, ends before its closing boundary, has no field "file" or "image" or
 * only empty ones) with its error line in msg. */
int cc_http_body_end(struct cc_http_body *b, char *msg, size_t msg_size);

/* Frees the bytes; the body is empty again. Accepts a zeroed one. */
void cc_http_body_finish(struct cc_http_body *b);

/* Whether a line libmicrohttpd logs is a routine event rather than a problem: a client that
 * closes a /stream it was watching ends the chunked answer with "Failed to send the chunked
 * response body ..." (an EPIPE), which is how every viewer leaves. Such lines are not shown. */
bool cc_http_log_is_routine(const char *line);

#endif
