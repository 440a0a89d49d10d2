/* camclass — the HTTP service's decisions from what a client sends (see http_request.h). */
#include "http_request.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"
#include "result.h"

/* ------------------------------------------------------------------------------------------
 * --serve [ADDR:]PORT and --serve-token
 */

/* s as a plain decimal number in 0..max: digits only (no sign, space or leading zero), as a
 * person writes a port or a count; -1 otherwise. strtol would take " +80" and "080". */
static long plain_number(const char *s, long max)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || s[n] || n > 10 || (s[0] == '0' && n > 1))
        return -1;
    long v = strtol(s, NULL, 10);
    return v <= max ? v : -1;
}

bool cc_http_parse_listen(const char *arg, struct cc_http_listen *out, struct cc_error *err)
{
    *out = (struct cc_http_listen){0};
    char host[64] = "127.0.0.1";
    const char *port_s = arg;
    if (arg[0] == '[') {
        const char *end = strchr(arg, ']');
        if (!end || end[1] != ':' || (size_t)(end - arg - 1) >= sizeof(host))
            return cc_error_set(err, "--serve %s: an IPv6 address is written [ADDR]:PORT", arg);
        snprintf(host, sizeof(host), "%.*s", (int)(end - arg - 1), arg + 1);
        port_s = end + 2;
        out->v6 = true;
    } else if (strchr(arg, ':')) {
        const char *colon = strrchr(arg, ':');
        if ((size_t)(colon - arg) >= sizeof(host))
            return cc_error_set(err, "--serve %s: the address is too long", arg);
        snprintf(host, sizeof(host), "%.*s", (int)(colon - arg), arg);
        port_s = colon + 1;
    }
    long port = plain_number(port_s, 65535);
    if (port < 0)
        return cc_error_set(err,
                            "--serve %s: the port must be a number 0..65535 (0: any free one); "
                            "give [ADDR:]PORT, e.g. 8080 or 0.0.0.0:8080",
                            arg);
    if (out->v6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->sa;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
            return cc_error_set(err, "--serve %s: %s is not an IPv6 address", arg, host);
        out->len = sizeof(*s6);
        out->loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&out->sa;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
            return cc_error_set(err,
                                "--serve %s: %s is not an IPv4 address (names are not looked "
                                "up; give the address, or [IPv6]:PORT)",
                                arg, host);
        out->len = sizeof(*s4);
        out->loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
    }
    return true;
}

/* The length of the name in a Host value or a --serve-allow-host item, NAME or [IPv6], before
 * an optional ":PORT"; 0 when it is neither. */
static size_t host_name(const char *host)
{
    size_t n;
    if (host[0] == '[') {
        n = strspn(host + 1, "0123456789abcdefABCDEF:.");
        if (host[n + 1] != ']')
            return 0;
        n += 2;
    } else {
        n = strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_");
    }
    return n <= 255 ? n : 0;
}

/* Each item of --serve-allow-host's comma list is a name or address without a port. */
static bool check_allow(const char *allow, struct cc_error *err)
{
    for (const char *p = allow;; p++) {
        size_t k = strcspn(p, ","), n = host_name(p);
        if (!k || n != k)
            return cc_error_set(err,
                                "--serve-allow-host %s: \"%.*s\" is not a host name or address; "
                                "give names or addresses without ports, separated by commas "
                                "(e.g. camera.local,192.168.1.20)",
                                allow, (int)(k < 80 ? k : 80), p);
        p += k;
        if (!*p)
            return true;
    }
}

bool cc_http_check(const char *serve, const char *token, const char *allow, struct cc_error *err)
{
    if (allow && !serve)
        return cc_error_set(err, "--serve-allow-host is given without --serve; add --serve "
                                 "[ADDR:]PORT or drop it");
    if (allow && !check_allow(allow, err))
        return false;
    if (token) {
        size_t n = strlen(token);
        if (!serve)
            return cc_error_set(err, "--serve-token is given without --serve; add --serve "
                                     "[ADDR:]PORT or drop the token");
        if (n > CC_HTTP_MAX_TOKEN)
            return cc_error_set(err, "--serve-token: %zu characters is more than %d", n,
                                CC_HTTP_MAX_TOKEN);
        for (size_t i = 0; i < n; i++)
            if (token[i] <= ' ' || token[i] > '~')
                return cc_error_set(err,
                                    "--serve-token: only printable ASCII without spaces may be "
                                    "in a token (e.g. openssl rand -hex 32)");
    }
    if (!serve)
        return true;
    struct cc_http_listen la;
    if (!cc_http_parse_listen(serve, &la, err))
        return false;
    if (!la.loopback && !token)
        return cc_error_set(err,
                            "--serve %s is reachable from other machines: give --serve-token "
                            "TOKEN too (clients send Authorization: Bearer TOKEN), or serve on "
                            "127.0.0.1",
                            serve);
    return true;
}

/* ------------------------------------------------------------------------------------------
 * Who asks: Host and Origin
 */

void cc_http_hosts_init(struct cc_http_hosts *hs, const struct cc_http_listen *la,
                        const char *token, const char *allow)
{
    *hs = (struct cc_http_hosts){.any = token != NULL, .allow = allow};
    char a[INET6_ADDRSTRLEN] = "";
    if (la->v6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&la->sa)->sin6_addr, a, sizeof(a));
    else
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&la->sa)->sin_addr, a, sizeof(a));
    snprintf(hs->bound, sizeof(hs->bound), la->v6 ? "[%s]" : "%s", a);
}

static bool same_name(const char *name, size_t n, const char *want, size_t want_n)
{
    return n == want_n && strncasecmp(name, want, n) == 0;
}

/* Whether the Host value names this camclass: loopback, the bound address or an allowed host,
 * then an optional ":PORT" (digits). */
static bool known_host(const struct cc_http_hosts *hs, const char *host)
{
    size_t n = host_name(host);
    const char *port = host + n;
    if (!n || (*port && (*port != ':' || strspn(port + 1, "0123456789") != strlen(port + 1) ||
                         strlen(port + 1) > 5)))
        return false;
    static const char *const loopback[] = {"localhost", "127.0.0.1", "[::1]"};
    for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
        if (same_name(host, n, loopback[i], strlen(loopback[i])))
            return true;
    if (same_name(host, n, hs->bound, strlen(hs->bound)))
        return true;
    for (const char *p = hs->allow; p && *p;) {
        size_t k = strcspn(p, ",");
        if (same_name(host, n, p, k))
            return true;
        p += k + (p[k] == ',');
    }
    return false;
}

int cc_http_check_host(const struct cc_http_hosts *hs, const char *version, const char *host,
                       char *msg, size_t msg_size)
{
    if (!host) {
        if (version && strcmp(version, "HTTP/1.0") == 0)
            return 0; // HTTP/1.0 has no Host; browsers send one always
        snprintf(msg, msg_size,
                 "an HTTP/1.1 request must have a Host header (RFC 9112 section 3.2); send "
                 "Host: ADDRESS:PORT");
        return 400;
    }
    if (hs->any || known_host(hs, host))
        return 0;
    snprintf(msg, msg_size,
             "Host %.80s is not a name of this camclass (DNS rebinding looks like this); ask for "
             "localhost, 127.0.0.1, [::1] or %s, or start camclass with --serve-allow-host "
             "NAME or --serve-token",
             host, hs->bound);
    return 421;
}

int cc_http_check_origin(const struct cc_http_hosts *hs, const char *method, const char *host,
                         const char *origin, const char *fetch_site, char *msg, size_t msg_size)
{
    if (hs->any || strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
        return 0;
    const char *site = fetch_site ? fetch_site : "same-origin";
    bool same = strcasecmp(site, "same-origin") == 0 || strcasecmp(site, "none") == 0;
    if (same && origin)
        same = host && strncasecmp(origin, "http://", 7) == 0 && strcasecmp(origin + 7, host) == 0;
    if (same)
        return 0;
    snprintf(msg, msg_size,
             "a %.10s from another site (Origin %.80s, Sec-Fetch-Site %.20s) is refused without "
             "--serve-token; send it from camclass's own page or a client that is not a "
             "browser, or start camclass with --serve-token",
             method, origin ? origin : "none", fetch_site ? fetch_site : "none");
    return 403;
}

/* ------------------------------------------------------------------------------------------
 * The body's framing
 */

void cc_http_framing_add(struct cc_http_framing *f, const char *name, const char *value)
{
    if (strcasecmp(name, "Content-Length") == 0) {
        if (f->lengths++ == 0)
            f->length = value;
        else if (strcmp(f->length, value) != 0)
            f->lengths_differ = true;
    } else if (strcasecmp(name, "Transfer-Encoding") == 0 && f->encodings++ == 0) {
        f->encoding = value;
    }
}

int cc_http_framing_check(const struct cc_http_framing *f, char *msg, size_t msg_size)
{
    if (f->encodings && f->lengths) {
        snprintf(msg, msg_size,
                 "Transfer-Encoding and Content-Length together make the body's end ambiguous "
                 "(request smuggling, RFC 9112 section 6.1); send one of them");
        return 400;
    }
    if (f->lengths_differ) {
        snprintf(msg, msg_size,
                 "two different Content-Length values make the body's end ambiguous (request "
                 "smuggling, RFC 9112 section 6.3); send one");
        return 400;
    }
    if (f->encodings > 1 || (f->encodings && strcasecmp(f->encoding, "chunked") != 0)) {
        snprintf(msg, msg_size,
                 "Transfer-Encoding %.60s is not supported; send the body with Content-Length "
                 "or Transfer-Encoding: chunked alone",
                 f->encodings > 1 ? "in several lines" : f->encoding);
        return 501;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * The token and the routing
 */

bool cc_http_log_is_routine(const char *line)
{
    return line && !strncmp(line, "Failed to send the chunked response body", 40);
}

bool cc_http_bearer_ok(const char *authorization, const char *token)
{
    if (!token)
        return true;
    const char *v = authorization;
    if (!v || strncasecmp(v, "Bearer ", 7) != 0) // schemes are case-insensitive (RFC 9110 11.1)
        return false;
    v += 7;
    size_t n = strlen(v), m = strlen(token);
    unsigned diff = n != m;
    for (size_t i = 0; i < m; i++)
        diff |= (unsigned)(unsigned char)token[i] ^ (unsigned char)(i < n ? v[i] : 0);
    return diff == 0;
}

static struct cc_http_route refuse(struct cc_http_route r, int status, const char *msg,
                                   const char *header, const char *value)
{
    r.status = status, r.msg = msg, r.header = header, r.value = value;
    return r;
}

/* The camera a path names, when it is /latest/<camera>, /stream/<camera> or
 * /camera/<camera>/reference (anything else under /camera/: no endpoint, 404). */
static void route_camera(const char *path, struct cc_http_route *r)
{
    static const struct {
        const char *prefix;
        enum cc_metrics_endpoint e;
    } per_camera[] = {
        {"/latest/", CC_METRICS_LATEST},
        {"/stream/", CC_METRICS_STREAM},
        {CC_HTTP_CAMERA, CC_METRICS_CAMERA},
    };
    for (size_t i = 0; i < sizeof(per_camera) / sizeof(per_camera[0]); i++) {
        size_t n = strlen(per_camera[i].prefix);
        if (strncmp(path, per_camera[i].prefix, n) != 0)
            continue;
        const char *name = path + n;
        size_t len = strlen(name);
        if (per_camera[i].e == CC_METRICS_CAMERA) {
            size_t suffix = strlen(CC_HTTP_REFERENCE);
            if (len < suffix || strcmp(name + len - suffix, CC_HTTP_REFERENCE) != 0) {
                r->endpoint = CC_METRICS_OTHER;
                return;
            }
            len -= suffix;
        }
        r->endpoint = per_camera[i].e;
        r->camera = name;
        r->camera_len = len;
        return;
    }
}

struct cc_http_route cc_http_route(const char *method, const char *path, const char *token,
                                   const char *authorization)
{
    struct cc_http_route r = {.endpoint = CC_METRICS_OTHER};
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0;
    static const char *const paths[CC_METRICS_ENDPOINTS] = {
        "/predict", "/latest",  "/metrics",        "/healthz",     "/stream",  "/",
        "/model",   "/samples", CC_HTTP_SNAPSHOTS, CC_HTTP_CAMERA, "/cameras", ""};
    for (int e = 0; e < CC_METRICS_OTHER; e++)
        if (strcmp(path, paths[e]) == 0)
            r.endpoint = (enum cc_metrics_endpoint)e;
    if (strncmp(path, CC_HTTP_SNAPSHOTS, strlen(CC_HTTP_SNAPSHOTS)) == 0) // the rest: http.c
        r.endpoint = CC_METRICS_SNAPSHOTS;
    route_camera(path, &r);
    if (r.endpoint == CC_METRICS_HEALTHZ)
        return get ? r : refuse(r, 405, "/healthz answers GET only", "Allow", "GET, HEAD");
    // The token before the path: without it, nothing tells which paths exist.
    if (!cc_http_bearer_ok(authorization, token)) {
        bool given = authorization != NULL;
        return refuse(r, 401,
                      given ? "the token is wrong; send Authorization: Bearer <the "
                              "--serve-token value>"
                            : "this camclass needs a token; send Authorization: Bearer "
                              "<the --serve-token value>",
                      "WWW-Authenticate",
                      given ? "Bearer realm=\"camclass\", error=\"invalid_token\""
                            : "Bearer realm=\"camclass\"");
    }
    if (r.endpoint == CC_METRICS_OTHER)
        return refuse(r, 404,
                      "no such path; camclass answers POST /predict, POST /model, "
                      "POST /camera/<camera>/reference, GET /, /cameras, /stream[/<camera>], "
                      "/latest[/<camera>], /metrics, /healthz, (--collect) /samples and "
                      "(--snapshot-dir) /snapshots/<camera>/latest.jpg",
                      NULL, NULL);
    if (r.endpoint == CC_METRICS_MODEL)
        return post ? r
                    : refuse(r, 405, "/model takes POST with a bundle, or ?path=NAME", "Allow",
                             "POST");
    if (r.endpoint == CC_METRICS_CAMERA)
        return post ? r
                    : refuse(r, 405, "/camera/<camera>/reference takes POST (no body)", "Allow",
                             "POST");
    if (r.endpoint == CC_METRICS_SAMPLES)
        return get || post ? r
                           : refuse(r, 405, "/samples takes GET (the counts) or POST ?label=NAME",
                                    "Allow", "GET, HEAD, POST");
    if (r.endpoint != CC_METRICS_PREDICT)
        return get ? r : refuse(r, 405, "this path answers GET only", "Allow", "GET, HEAD");
    return post ? r : refuse(r, 405, "/predict takes POST with an image", "Allow", "POST");
}

/* ------------------------------------------------------------------------------------------
 * POST /predict: its headers and its body
 */

int cc_http_predict_head(const char *k_arg, const char *content_length, const char *content_type,
                         size_t max_body, int default_k, int *k, enum cc_http_body_kind *kind,
                         char *msg, size_t msg_size)
{
    *k = default_k;
    *kind = CC_HTTP_BODY_RAW;
    if (k_arg) {
        long v = plain_number(k_arg, CC_RESULT_MAX_TOP);
        if (v < 1) {
            snprintf(msg, msg_size, "?k=%.20s: k must be a whole number 1..%d", k_arg,
                     CC_RESULT_MAX_TOP);
            return 400;
        }
        *k = (int)v;
    }
    if (content_length && strtoull(content_length, NULL, 10) > max_body) {
        snprintf(msg, msg_size, "the body of %.20s bytes is more than %zu MB (--serve-max-body)",
                 content_length, max_body >> 20);
        return 413;
    }
    const char *type = content_type;
    if (type && strncasecmp(type, "multipart/form-data", 19) == 0) {
        *kind = CC_HTTP_BODY_MULTIPART;
    } else if (type && strncasecmp(type, "image/", 6) != 0 &&
               strncasecmp(type, "application/octet-stream", 24) != 0 &&
               strncasecmp(type, "application/x-www-form-urlencoded", 33) != 0) {
        // (curl --data-binary @x.jpg sends the last: the image is told by its bytes.)
        snprintf(msg, msg_size,
                 "Content-Type %.60s is not taken; send image/jpeg, image/png, or "
                 "multipart/form-data with the image in the field \"file\"",
                 type);
        return 415;
    }
    return 0;
}

void cc_http_body_init(struct cc_http_body *b, size_t max)
{
    *b = (struct cc_http_body){.max = max};
}

bool cc_http_body_append(struct cc_http_body *b, const char *data, size_t n)
{
    if (b->too_big || b->size + n > b->max) {
        b->too_big = true;
        return true; // read to the end, then 413
    }
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64 * 1024;
        while (cap < b->size + n)
            cap *= 2;
        uint8_t *p = realloc(b->data, cap);
        if (!p) {
            b->no_memory = true;
            return false;
        }
        b->data = p, b->cap = cap;
    }
    if (n) // memcpy from a NULL data of 0 bytes is undefined
        memcpy(b->data + b->size, data, n);
    b->size += n;
    return true;
}

int cc_http_body_form(struct cc_http_body *b, const char *content_type, char *msg, size_t msg_size)
{
    return cc_multipart_boundary(content_type, b->boundary, msg, msg_size) ? 0 : 400;
}

int cc_http_body_end(struct cc_http_body *b, char *msg, size_t msg_size)
{
    if (b->too_big) {
        snprintf(msg, msg_size, "the body is more than %zu MB (--serve-max-body)", b->max >> 20);
        return 413;
    }
    if (!b->boundary[0])
        return 0;
    static const char *const fields[] = {"file", "image", NULL};
    size_t off = 0, len = 0;
    int status =
        cc_multipart_find(b->data, b->size, b->boundary, fields, &off, &len, msg, msg_size);
    if (status)
        return status;
    memmove(b->data, b->data + off, len);
    b->size = len;
    b->boundary[0] = '\0'; // the image now: a second call keeps it
    return 0;
}

void cc_http_body_finish(struct cc_http_body *b)
{
    free(b->data);
    *b = (struct cc_http_body){.max = b->max};
}

/* ------------------------------------------------------------------------------------------
 * POST /model?path=NAME
 */

int cc_http_model_name(const char *name, char *rel, size_t rel_size, char *msg, size_t msg_size)
{
    size_t n = strlen(name);
    bool ok =
        n > 4 && n <= CC_HTTP_MODEL_NAME_MAX && name[0] != '.' && strcmp(name + n - 4, ".ccm") == 0;
    for (size_t i = 0; ok && i < n; i++) {
        char ch = name[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '.' || ch == '_' || ch == '-';
    }
    if (!ok || strstr(name, "..")) {
        snprintf(msg, msg_size,
                 "?path= names a bundle in camclass's model folders: NAME.ccm, at most %d "
                 "letters, digits, '.', '_' or '-', not starting with '.', no '..' or '/'",
                 CC_HTTP_MODEL_NAME_MAX);
        return 400;
    }
    snprintf(rel, rel_size, "models/%s", name);
    return 0;
}
