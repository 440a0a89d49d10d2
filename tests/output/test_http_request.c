/* camclass — the HTTP service's decisions of app/output/http_request.c, without a server: the
 * --serve address and token checks, the Bearer token, routing (401 before 404, 405 with Allow),
 * /predict's ?k=, Content-Length and Content-Type, the body's accounting (the limit), and
 * multipart forms (multipart.c: the boundary parameter, the first field "file" or "image" with
 * bytes, forms cut before their closing boundary). The server itself is tested with real clients by
 * test_serve.py; these parsers are also fuzzed (tests/fuzz/fuzz_http.c). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_request.h"
#include "testutil.h"

static void listen_ok(const char *arg, bool v6, bool loopback, int port)
{
    struct cc_http_listen la;
    struct cc_error err = {0};
    bool ok = cc_http_parse_listen(arg, &la, &err);
    int got = !ok  ? -1
              : v6 ? ntohs(((struct sockaddr_in6 *)&la.sa)->sin6_port)
                   : ntohs(((struct sockaddr_in *)&la.sa)->sin_port);
    CHECKF(ok && la.v6 == v6 && la.loopback == loopback && got == port &&
               la.len == (v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)),
           "%s: ok %d v6 %d loopback %d port %d (%s)", arg, ok, la.v6, la.loopback, got, err.msg);
}

static void check_bad(const char *serve, const char *token, const char *want)
{
    struct cc_error err = {0};
    bool ok = cc_http_check(serve, token, NULL, &err);
    CHECKF(!ok && strstr(err.msg, want), "--serve %s --serve-token %s: ok %d, \"%s\" (want %s)",
           serve ? serve : "(none)", token ? token : "(none)", ok, err.msg, want);
}

static void settings(void)
{
    listen_ok("8080", false, true, 8080);
    listen_ok("0", false, true, 0);
    listen_ok("127.1.2.3:65535", false, true, 65535);
    listen_ok("0.0.0.0:80", false, false, 80);
    listen_ok("[::1]:9000", true, true, 9000);
    listen_ok("[fe80::1]:1", true, false, 1);
    struct cc_error err = {0};
    CHECK(cc_http_check(NULL, NULL, NULL, &err) && !err.msg[0]);
    CHECK(cc_http_check("8080", NULL, NULL, &err));
    CHECK(cc_http_check("0.0.0.0:8080", "abc~", NULL, &err));
    check_bad("65536", NULL, "the port must be a number 0..65535");
    check_bad("-1", NULL, "the port must be a number");
    check_bad("localhost:", NULL, "the port must be a number");
    check_bad("99999999999999999999", NULL, "the port must be a number");
    check_bad("localhost:80", NULL, "is not an IPv4 address");
    check_bad("[::1]80", NULL, "an IPv6 address is written [ADDR]:PORT");
    check_bad("[::1", NULL, "an IPv6 address is written [ADDR]:PORT");
    check_bad("[1.2.3.4]:80", NULL, "is not an IPv6 address");
    char longer[100];
    memset(longer, '1', 80);
    strcpy(longer + 80, ":80");
    check_bad(longer, NULL, "the address is too long");
    static const char *const bad_ports[] = {"+80", "080",   " 0",           "8080 ",
                                            "-1",  "65536", "127.0.0.1:+80"};
    for (size_t i = 0; i < sizeof(bad_ports) / sizeof(bad_ports[0]); i++)
        check_bad(bad_ports[i], NULL, "the port must be a number 0..65535");
    check_bad("0.0.0.0:8080", NULL, "give --serve-token");
    check_bad("[::]:8080", NULL, "give --serve-token");
    check_bad(NULL, "abc", "without --serve");
    check_bad("8080", "a b", "only printable ASCII");
    check_bad("8080", "caf\xc3\xa9", "only printable ASCII");
    char big[300];
    memset(big, 'x', 257);
    big[257] = '\0';
    check_bad("8080", big, "257 characters is more than 256");
    big[256] = '\0';
    CHECK(cc_http_check("8080", big, NULL, &err));
}

static void host_is(const struct cc_http_hosts *hs, const char *version, const char *host, int want)
{
    char msg[320] = "";
    int st = cc_http_check_host(hs, version, host, msg, sizeof(msg));
    CHECKF(st == want && (st ? msg[0] != '\0' : 1),
           "%s Host %s (any %d, bound %s, allow %s): %d \"%s\" (want %d)", version,
           host ? host : "(none)", hs->any, hs->bound, hs->allow ? hs->allow : "-", st, msg, want);
}

static void origin_is(const struct cc_http_hosts *hs, const char *method, const char *origin,
                      const char *site, int want)
{
    char msg[320] = "";
    int st = cc_http_check_origin(hs, method, "127.0.0.1:8080", origin, site, msg, sizeof(msg));
    CHECKF(st == want && (st ? msg[0] != '\0' : 1), "%s Origin %s Sec-Fetch-Site %s: %d (want %d)",
           method, origin ? origin : "-", site ? site : "-", st, want);
}

/* DNS rebinding: without a token, only Host names of this camclass. */
static void hosts(void)
{
    struct cc_http_listen la, la6;
    struct cc_error err = {0};
    CHECK(cc_http_parse_listen("127.0.0.2:8080", &la, &err));
    CHECK(cc_http_parse_listen("[::1]:8080", &la6, &err));
    struct cc_http_hosts hs, hs6, allow, token;
    cc_http_hosts_init(&hs, &la, NULL, NULL);
    cc_http_hosts_init(&hs6, &la6, NULL, NULL);
    cc_http_hosts_init(&allow, &la, NULL, "cam.example,192.168.1.20,[fe80::1]");
    cc_http_hosts_init(&token, &la, "t", NULL);
    const char *ok[] = {"127.0.0.1:8080", "localhost:8080", "LocalHost:1", "[::1]:8080",
                        "127.0.0.2:8080", "127.0.0.1",      "localhost",   "localhost:"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        host_is(&hs, "HTTP/1.1", ok[i], 0);
    const char *bad[] = {"rebind.attacker.example:8080",
                         "localhost.attacker.example",
                         "",
                         "127.0.0.3:8080",
                         "localhost:80x",
                         "localhost:123456",
                         "localhost:8080:1",
                         "[::1",
                         "[::2]:8080",
                         "localhost@evil",
                         "cam.example:8080",
                         "127.0.0.1 :8080",
                         "0x7f.1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        host_is(&hs, "HTTP/1.1", bad[i], 421);
        host_is(&token, "HTTP/1.1", bad[i], 0); // the token protects
    }
    host_is(&hs6, "HTTP/1.1", "[::1]:8080", 0);
    host_is(&hs6, "HTTP/1.1", "[0:0:0:0:0:0:0:2]:8080", 421);
    host_is(&allow, "HTTP/1.1", "CAM.example:443", 0);
    host_is(&allow, "HTTP/1.1", "cam.example", 0);
    host_is(&allow, "HTTP/1.1", "192.168.1.20:8080", 0);
    host_is(&allow, "HTTP/1.1", "[fe80::1]", 0);
    host_is(&allow, "HTTP/1.1", "cam.exampl", 421);
    host_is(&allow, "HTTP/1.1", "am.example", 421);
    host_is(&allow, "HTTP/1.1", "192.168.1.2", 421);
    // No Host: 400 for HTTP/1.1, token or not; HTTP/1.0 has none (browsers always send it).
    host_is(&hs, "HTTP/1.1", NULL, 400);
    host_is(&token, "HTTP/1.1", NULL, 400);
    host_is(&hs, "HTTP/1.0", NULL, 0);
    host_is(&hs, "HTTP/1.0", "evil.example", 421);
    // --serve-allow-host: names and addresses, no ports, a comma list; only with --serve.
    CHECK(cc_http_check("8080", NULL, "cam.example,192.168.1.20,[fe80::1],my_host", &err));
    const char *bad_allow[] = {"cam.example:8080", "",      ",cam", "cam,", "cam,,x", "a b",
                               "[::1]:80",         "cam/x", "[::1"};
    for (size_t i = 0; i < sizeof(bad_allow) / sizeof(bad_allow[0]); i++) {
        struct cc_error e = {0};
        CHECKF(!cc_http_check("8080", NULL, bad_allow[i], &e) &&
                   strstr(e.msg, "--serve-allow-host") && strstr(e.msg, "without ports"),
               "--serve-allow-host '%s': %s", bad_allow[i], e.msg);
    }
    struct cc_error e = {0};
    CHECK(!cc_http_check(NULL, NULL, "cam", &e) && strstr(e.msg, "without --serve"));
    // A browser's cross-origin POST needs the token; same-origin and non-browser clients pass.
    origin_is(&hs, "POST", NULL, NULL, 0);
    origin_is(&hs, "POST", "http://127.0.0.1:8080", "same-origin", 0);
    origin_is(&hs, "POST", "HTTP://127.0.0.1:8080", NULL, 0);
    origin_is(&hs, "POST", NULL, "none", 0);
    origin_is(&hs, "POST", "http://evil.example", "cross-site", 403);
    origin_is(&hs, "POST", "http://evil.example", NULL, 403);
    origin_is(&hs, "POST", "null", NULL, 403);
    origin_is(&hs, "POST", "https://127.0.0.1:8080", NULL, 403);
    origin_is(&hs, "POST", "http://127.0.0.1:8081", NULL, 403);
    origin_is(&hs, "POST", "http://127.0.0.1:8080", "same-site", 403);
    origin_is(&hs, "POST", NULL, "cross-site", 403);
    origin_is(&hs, "DELETE", "http://evil.example", NULL, 403);
    origin_is(&hs, "GET", "http://evil.example", "cross-site", 0);
    origin_is(&token, "POST", "http://evil.example", "cross-site", 0);
}

/* Request smuggling: the header lines given as name, value pairs. */
static void framing_is(const char *const *lines, int n, int want)
{
    struct cc_http_framing f = {0};
    for (int i = 0; i < n; i += 2)
        cc_http_framing_add(&f, lines[i], lines[i + 1]);
    char msg[320] = "";
    int st = cc_http_framing_check(&f, msg, sizeof(msg));
    CHECKF(st == want && (st ? msg[0] != '\0' : 1), "%s: %s ...: %d \"%s\" (want %d)", lines[0],
           lines[1], st, msg, want);
}

static void framings(void)
{
#define FRAMING(want, ...)                                                                         \
    framing_is((const char *const[]){__VA_ARGS__},                                                 \
               (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)), want)
    FRAMING(0, "Host", "x");
    FRAMING(0, "Content-Length", "12");
    FRAMING(0, "content-length", "12", "Content-Length", "12"); // the same twice: one length
    FRAMING(0, "Transfer-Encoding", "chunked");
    FRAMING(0, "transfer-encoding", "Chunked");
    FRAMING(400, "Transfer-Encoding", "chunked", "Content-Length", "30");
    FRAMING(400, "Content-Length", "30", "Transfer-Encoding", "chunked");
    FRAMING(400, "Content-Length", "0", "Content-Length", "36");
    FRAMING(400, "Transfer-Encoding", "xchunked", "Content-Length", "3");
    FRAMING(501, "Transfer-Encoding", "xchunked");
    FRAMING(501, "Transfer-Encoding", "gzip, chunked");
    FRAMING(501, "Transfer-Encoding", "chunked, chunked");
    FRAMING(501, "Transfer-Encoding", "gzip", "Transfer-Encoding", "chunked");
    FRAMING(501, "Transfer-Encoding", "chunked", "Transfer-Encoding", "chunked");
    FRAMING(501, "Transfer-Encoding", "");
#undef FRAMING
}

static void tokens(void)
{
    CHECK(cc_http_log_is_routine("Failed to send the chunked response body for the request for "
                                 "`/stream'. Error: Broken pipe"));
    CHECK(!cc_http_log_is_routine("Failed to send the response headers for the request for `/'"));
    CHECK(!cc_http_log_is_routine(NULL));
    CHECK(cc_http_bearer_ok(NULL, NULL));
    CHECK(cc_http_bearer_ok("anything", NULL));
    CHECK(cc_http_bearer_ok("Bearer s3cret", "s3cret"));
    CHECK(!cc_http_bearer_ok(NULL, "s3cret"));
    CHECK(cc_http_bearer_ok("bearer s3cret", "s3cret")); // the scheme is case-insensitive
    CHECK(cc_http_bearer_ok("BEARER s3cret", "s3cret"));
    CHECK(!cc_http_bearer_ok("Bearer S3cret", "s3cret")); // the token is not
    CHECK(!cc_http_bearer_ok("Basic s3cret", "s3cret"));
    CHECK(!cc_http_bearer_ok("Basic s3cret", "s3cret"));
    CHECK(!cc_http_bearer_ok("Bearer s3cre", "s3cret"));   // a prefix
    CHECK(!cc_http_bearer_ok("Bearer s3cretX", "s3cret")); // longer
    CHECK(!cc_http_bearer_ok("Bearer s3creT", "s3cret"));  // the last byte
    CHECK(!cc_http_bearer_ok("Bearer ", "s3cret"));
}

static void route_is(const char *method, const char *path, const char *token, const char *auth,
                     enum cc_metrics_endpoint e, int status, const char *header)
{
    struct cc_http_route r = cc_http_route(method, path, token, auth);
    CHECKF(r.endpoint == e && r.status == status &&
               (header ? r.header && !strcmp(r.header, header) : !r.header) &&
               (status ? r.msg && r.msg[0] : !r.msg),
           "%s %s (token %s, auth %s): endpoint %d status %d header %s (want %d %d %s)", method,
           path, token ? token : "-", auth ? auth : "-", r.endpoint, r.status,
           r.header ? r.header : "-", e, status, header ? header : "-");
}

static void routes(void)
{
    route_is("GET", "/healthz", NULL, NULL, CC_METRICS_HEALTHZ, 0, NULL);
    route_is("HEAD", "/healthz", "t", NULL, CC_METRICS_HEALTHZ, 0, NULL); // no token needed
    route_is("POST", "/healthz", NULL, NULL, CC_METRICS_HEALTHZ, 405, "Allow");
    route_is("POST", "/predict", NULL, NULL, CC_METRICS_PREDICT, 0, NULL);
    route_is("GET", "/predict", NULL, NULL, CC_METRICS_PREDICT, 405, "Allow");
    route_is("GET", "/latest", NULL, NULL, CC_METRICS_LATEST, 0, NULL);
    route_is("GET", "/metrics", NULL, NULL, CC_METRICS_METRICS, 0, NULL);
    route_is("GET", "/stream", NULL, NULL, CC_METRICS_STREAM, 0, NULL);
    route_is("GET", "/", NULL, NULL, CC_METRICS_PAGE, 0, NULL);
    route_is("DELETE", "/latest", NULL, NULL, CC_METRICS_LATEST, 405, "Allow");
    route_is("GET", "/samples", NULL, NULL, CC_METRICS_SAMPLES, 0, NULL);
    route_is("POST", "/samples", NULL, NULL, CC_METRICS_SAMPLES, 0, NULL);
    route_is("PUT", "/samples", NULL, NULL, CC_METRICS_SAMPLES, 405, "Allow");
    route_is("POST", "/samples", "t", NULL, CC_METRICS_SAMPLES, 401, "WWW-Authenticate");
    route_is("GET", "/nope", NULL, NULL, CC_METRICS_OTHER, 404, NULL);
    route_is("GET", "", NULL, NULL, CC_METRICS_OTHER, 404, NULL);
    route_is("GET", "/predict/", NULL, NULL, CC_METRICS_OTHER, 404, NULL);
    // With a token: 401 before anything tells which paths exist.
    route_is("GET", "/nope", "t", NULL, CC_METRICS_OTHER, 401, "WWW-Authenticate");
    route_is("GET", "/metrics", "t", "Bearer x", CC_METRICS_METRICS, 401, "WWW-Authenticate");
    route_is("GET", "/metrics", "t", "Bearer t", CC_METRICS_METRICS, 0, NULL);
    route_is("GET", "/nope", "t", "Bearer t", CC_METRICS_OTHER, 404, NULL);
    struct cc_http_route r = cc_http_route("GET", "/", "t", NULL);
    CHECKF(!strstr(r.value, "invalid_token") && strstr(r.msg, "needs a token"), "%s / %s", r.value,
           r.msg);
    r = cc_http_route("GET", "/", "t", "Bearer u");
    CHECKF(strstr(r.value, "invalid_token") && strstr(r.msg, "is wrong"), "%s / %s", r.value,
           r.msg);
}

/* The camera a path names: want NULL for none. */
static void camera_is(const char *method, const char *path, enum cc_metrics_endpoint e, int status,
                      const char *want)
{
    struct cc_http_route r = cc_http_route(method, path, NULL, NULL);
    bool ok =
        r.endpoint == e && r.status == status &&
        (want ? r.camera && r.camera_len == strlen(want) && !memcmp(r.camera, want, r.camera_len) &&
                    r.camera >= path && r.camera + r.camera_len <= path + strlen(path)
              : !r.camera);
    CHECKF(ok, "%s %s: endpoint %d status %d camera %.*s (want %d %d %s)", method, path, r.endpoint,
           r.status, r.camera ? (int)r.camera_len : 1, r.camera ? r.camera : "-", e, status,
           want ? want : "-");
}

/* /latest/<camera>, /stream/<camera>, POST /camera/<camera>/reference. */
static void camera_routes(void)
{
    camera_is("GET", "/latest", CC_METRICS_LATEST, 0, NULL);
    camera_is("GET", "/latest/yard", CC_METRICS_LATEST, 0, "yard");
    camera_is("GET", "/latest/front door", CC_METRICS_LATEST, 0, "front door");
    camera_is("GET", "/latest/", CC_METRICS_LATEST, 0, ""); // no camera has that name: 404
    camera_is("GET", "/latest/a/b", CC_METRICS_LATEST, 0, "a/b");
    camera_is("GET", "/stream/yard", CC_METRICS_STREAM, 0, "yard");
    camera_is("POST", "/stream/yard", CC_METRICS_STREAM, 405, "yard");
    camera_is("POST", "/camera/yard/reference", CC_METRICS_CAMERA, 0, "yard");
    camera_is("POST", "/camera/a/reference/reference", CC_METRICS_CAMERA, 0, "a/reference");
    camera_is("POST", "/camera//reference", CC_METRICS_CAMERA, 0, "");
    camera_is("GET", "/camera/yard/reference", CC_METRICS_CAMERA, 405, "yard");
    camera_is("POST", "/camera/yard", CC_METRICS_OTHER, 404, NULL);
    camera_is("POST", "/camera/yard/other", CC_METRICS_OTHER, 404, NULL);
    camera_is("POST", "/camera/reference", CC_METRICS_OTHER, 404, NULL);
    camera_is("POST", "/camera/", CC_METRICS_OTHER, 404, NULL);
    camera_is("GET", "/latestyard", CC_METRICS_OTHER, 404, NULL);
    camera_is("GET", "/cameras", CC_METRICS_CAMERAS, 0, NULL);
    camera_is("POST", "/cameras", CC_METRICS_CAMERAS, 405, NULL);
}

static void head_is(const char *k, const char *len, const char *type, int status, int want_k,
                    enum cc_http_body_kind want_kind, const char *want_msg)
{
    char msg[200] = "";
    int got_k = -1;
    enum cc_http_body_kind kind = CC_HTTP_BODY_MULTIPART + 1;
    int st = cc_http_predict_head(k, len, type, 16 << 20, 5, &got_k, &kind, msg, sizeof(msg));
    CHECKF(st == status && (status || (got_k == want_k && kind == want_kind)) &&
               (!want_msg || strstr(msg, want_msg)),
           "?k=%s length %s type %s: status %d k %d kind %d \"%s\" (want %d %d %d %s)", k ? k : "-",
           len ? len : "-", type ? type : "-", st, got_k, kind, msg, status, want_k, want_kind,
           want_msg ? want_msg : "-");
}

static void predict_heads(void)
{
    head_is(NULL, NULL, NULL, 0, 5, CC_HTTP_BODY_RAW, NULL);
    head_is("1", "100", "image/png", 0, 1, CC_HTTP_BODY_RAW, NULL);
    head_is("16", NULL, "application/octet-stream", 0, 16, CC_HTTP_BODY_RAW, NULL);
    head_is(NULL, NULL, "Multipart/Form-Data; boundary=x", 0, 5, CC_HTTP_BODY_MULTIPART, NULL);
    head_is(NULL, "16777216", "image/jpeg", 0, 5, CC_HTTP_BODY_RAW, NULL); // exactly the limit
    head_is("0", NULL, NULL, 400, 0, 0, "?k=0: k must be a whole number 1..16");
    head_is("17", NULL, NULL, 400, 0, 0, "1..16");
    head_is("", NULL, NULL, 400, 0, 0, "?k=:");
    head_is("3x", NULL, NULL, 400, 0, 0, "?k=3x");
    head_is(" +3", NULL, NULL, 400, 0, 0, "?k= +3"); // ?k=%20%2B3: a person's number only
    head_is("03", NULL, NULL, 400, 0, 0, "?k=03");
    head_is("99999999999999999999999999999", NULL, NULL, 400, 0, 0, "?k=99999999999999999999:");
    head_is(NULL, "16777217", "image/png", 413, 0, 0, "16777217 bytes is more than 16 MB");
    // curl --data-binary @x.jpg: the image is told by its bytes (415 before).
    head_is(NULL, NULL, "application/x-www-form-urlencoded", 0, 5, CC_HTTP_BODY_RAW, NULL);
    head_is(NULL, NULL, "text/plain", 415, 0, 0, "Content-Type text/plain is not taken");
    head_is(NULL, NULL, "", 415, 0, 0, "Content-Type  is not taken");
    head_is("2", "1", "multipart/mixed; boundary=x", 415, 0, 0, "not taken");
}

static void bodies(void)
{
    char msg[200];
    struct cc_http_body b;
    cc_http_body_init(&b, 100);
    CHECK(cc_http_body_append(&b, "", 0));
    CHECK(cc_http_body_end(&b, msg, sizeof(msg)) == 0); // empty raw: predict's 400
    char data[100];
    memset(data, 'a', sizeof(data));
    CHECK(cc_http_body_append(&b, data, 60) && cc_http_body_append(&b, data, 40));
    CHECK(b.size == 100 && !b.too_big && cc_http_body_end(&b, msg, 200) == 0);
    CHECK(cc_http_body_append(&b, data, 1) && b.too_big && b.size == 100);
    CHECK(cc_http_body_end(&b, msg, sizeof(msg)) == 413 && strstr(msg, "--serve-max-body"));
    cc_http_body_finish(&b);
    CHECK(!b.data && !b.size && b.max == 100);

    // A form past the limit: 413, whatever else it holds.
    cc_http_body_init(&b, 4);
    CHECK(cc_http_body_form(&b, "multipart/form-data; boundary=x", msg, sizeof(msg)) == 0);
    CHECK(cc_http_body_append(&b, "--x\r\n", 5) && b.too_big);
    CHECK(cc_http_body_end(&b, msg, sizeof(msg)) == 413);
    cc_http_body_finish(&b);

    // Growth past the first allocation (64 KiB, doubled).
    cc_http_body_init(&b, 1 << 20);
    char *big = calloc(1, 300000);
    CHECK(big && cc_http_body_append(&b, big, 70000) && cc_http_body_append(&b, big, 230000));
    CHECK(b.size == 300000 && b.cap >= b.size);
    free(big);
    cc_http_body_finish(&b);
}

/* The boundary of a Content-Type ("boundary=XyZ; charset=utf-8" was taken
 * whole, "BOUNDARY=" not found): want NULL = refused with a message containing refusal. */
static void boundary_is(const char *type, const char *want, const char *refusal)
{
    char out[CC_MULTIPART_BOUNDARY_MAX + 1] = "", msg[200] = "";
    bool ok = cc_multipart_boundary(type, out, msg, sizeof(msg));
    CHECKF(want ? ok && strcmp(out, want) == 0 : !ok && strstr(msg, refusal),
           "%s: %d \"%s\" \"%s\" (want %s)", type, ok, out, msg, want ? want : refusal);
}

static void boundaries(void)
{
    boundary_is("multipart/form-data; boundary=XyZ", "XyZ", NULL);
    boundary_is("multipart/form-data; boundary=XyZ; charset=utf-8", "XyZ", NULL);
    boundary_is("multipart/form-data;charset=utf-8;boundary=XyZ", "XyZ", NULL);
    boundary_is("multipart/form-data; BOUNDARY=abc", "abc", NULL);
    boundary_is("multipart/form-data; Boundary = abc ", "abc", NULL);
    boundary_is("multipart/form-data; boundary=\"a b:c\"; x=y", "a b:c", NULL);
    boundary_is("multipart/form-data; boundary=\"q\\-r\"", "q-r", NULL); // a quoted-pair
    boundary_is("multipart/form-data; boundary=-", "-", NULL); // 1 character (RFC 2046: 1-70)
    boundary_is("multipart/form-data; xboundary=abc", NULL, "without a boundary");
    boundary_is("multipart/form-data", NULL, "without a boundary");
    boundary_is("multipart/form-data; boundary=", NULL, "is not 1 to 70");
    boundary_is("multipart/form-data; boundary=\"\"", NULL, "is not 1 to 70");
    boundary_is("multipart/form-data; boundary=a\x01z", NULL, "is not 1 to 70");
    boundary_is("multipart/form-data; boundary=\"ab \"", NULL, "is not 1 to 70");
    char type[200];
    snprintf(type, sizeof(type), "multipart/form-data; boundary=%071d", 0);
    boundary_is(type, NULL, "is not 1 to 70");
    snprintf(type, sizeof(type), "multipart/form-data; boundary=%070d", 0);
    CHECK(strlen(type) == 30 + 70);
    char out[CC_MULTIPART_BOUNDARY_MAX + 1], msg[200];
    CHECK(cc_multipart_boundary(type, out, msg, sizeof(msg)) && strlen(out) == 70);
}

/* The image's field in a whole form: want the field's bytes, or NULL and the refusal. */
static void form_is(const char *boundary, const char *form, const char *want, const char *refusal)
{
    static const char *const names[] = {"file", "image", NULL};
    size_t off = 0, len = 0;
    char msg[200] = "";
    int st = cc_multipart_find((const uint8_t *)form, strlen(form), boundary, names, &off, &len,
                               msg, sizeof(msg));
    CHECKF(want ? st == 0 && len == strlen(want) && memcmp(form + off, want, len) == 0
                : st == 400 && strstr(msg, refusal),
           "form %.60s...: %d \"%.*s\" \"%s\" (want %s)", form, st, st ? 0 : (int)len, form + off,
           msg, want ? want : refusal);
}

#define PART(name) "Content-Disposition: form-data; name=\"" name "\"; filename=\"a;b.png\"\r\n"

static void forms(void)
{
    form_is("XyZ", "--XyZ\r\n" PART("file") "Content-Type: image/png\r\n\r\nPNGDATA\r\n--XyZ--\r\n",
            "PNGDATA", NULL);
    form_is("X", "preamble\r\n--X\r\n" PART("image") "\r\nIMG\r\n--X--", "IMG", NULL);
    form_is("X", "abc\r\n--X\r\n" PART("file") "\r\nI\r\n--X--", "I", NULL); // at dl - 2
    form_is("-",
            "---\r\n" PART("other") "\r\nzz\r\n---\r\n" PART("file") "\r\nAB\r\n-CD\r\n---"
                                                                     "--\r\nepilogue",
            "AB\r\n-CD", NULL);
    // content-disposition in any case, parameter name too, a token value, padding after --X
    form_is("X", "--X  \r\ncontent-DISPOSITION: form-data; NAME=file\r\n\r\nT\r\n--X--", "T", NULL);
    // The first field with bytes: an empty "file" (a browser form with no file chosen) first.
    form_is("X", "--X\r\n" PART("file") "\r\n\r\n--X\r\n" PART("file") "\r\nSECOND\r\n--X--",
            "SECOND", NULL);
    form_is("X", "--X\r\n" PART("file") "\r\nONE\r\n--X\r\n" PART("image") "\r\nTWO\r\n--X--",
            "ONE", NULL);
    form_is("X", "--X\r\n\r\nno headers\r\n--X--", NULL, "no field \"file\" or \"image\"");
    form_is("X", "--X\r\n" PART("file") "\r\n\r\n--X--", NULL, "only an empty field");
    form_is("X", "--X\r\n" PART("photo") "\r\nP\r\n--X--", NULL, "no field \"file\"");
    // Cut forms are the form's fault, not the image's ("corrupt PNG" before).
    form_is("X", "--X\r\n" PART("file") "\r\nPNGDATA\r\n", NULL,
            "ends before its closing boundary (--X--)");
    form_is("X", "--X\r\n" PART("file") "\r\nPNGDATA", NULL, "ends before its closing boundary");
    form_is("X", "--X\r\n" PART("file"), NULL, "ends before its closing boundary");
    form_is("X", "--X", NULL, "ends before its closing boundary");
    form_is("X", "--Xjunk\r\n\r\nA\r\n--X--", NULL, "something other than a line end");
    form_is("Y", "--X\r\n" PART("file") "\r\nA\r\n--X--", NULL, "no delimiter --Y");
    form_is("X", "", NULL, "no delimiter");

    // Through the body: the field's bytes become the image.
    struct cc_http_body b;
    char msg[200];
    cc_http_body_init(&b, 1 << 20);
    CHECK(cc_http_body_form(&b, "multipart/form-data; boundary=\"a:b\"; charset=utf-8", msg,
                            sizeof(msg)) == 0 &&
          strcmp(b.boundary, "a:b") == 0);
    const char *form = "--a:b\r\n" PART("image") "\r\n\x89PNG\r\n--a:b--\r\n";
    CHECK(cc_http_body_append(&b, form, strlen(form)));
    CHECK(cc_http_body_end(&b, msg, sizeof(msg)) == 0 && b.size == 4 &&
          memcmp(b.data, "\x89PNG", 4) == 0);
    cc_http_body_finish(&b);
    cc_http_body_init(&b, 1 << 20);
    CHECK(cc_http_body_form(&b, "multipart/form-data", msg, sizeof(msg)) == 400 &&
          strstr(msg, "boundary"));
    cc_http_body_finish(&b);
}

/* POST /model?path=NAME: a bundle's file name only, looked up under models/. */
static void model_names(void)
{
    static const char *const good[] = {"selftest.ccm", "my-model_2.ccm", "a.b.ccm"};
    static const char *const bad[] = {"",           ".ccm",        "../x.ccm", "x/y.ccm",
                                      "/etc/x.ccm", ".hidden.ccm", "x..ccm",   "x.txt",
                                      "x.ccm.txt",  "a b.ccm",     "x\\y.ccm", "%2e%2e.ccm"};
    char rel[256], msg[256];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int st = cc_http_model_name(good[i], rel, sizeof(rel), msg, sizeof(msg));
        CHECKF(st == 0 && strncmp(rel, "models/", 7) == 0 && strcmp(rel + 7, good[i]) == 0,
               "?path=%s: %d, rel %s", good[i], st, rel);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        msg[0] = '\0';
        int st = cc_http_model_name(bad[i], rel, sizeof(rel), msg, sizeof(msg));
        CHECKF(st == 400 && msg[0], "?path=%s: %d (want 400)", bad[i], st);
    }
    char big[CC_HTTP_MODEL_NAME_MAX + 8];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big + sizeof(big) - 5, ".ccm", 4);
    CHECK(cc_http_model_name(big, rel, sizeof(rel), msg, sizeof(msg)) == 400);
    // The route: POST only, behind the token as /predict.
    struct cc_http_route r = cc_http_route("POST", "/model", NULL, NULL);
    CHECK(r.endpoint == CC_METRICS_MODEL && r.status == 0);
    CHECK(cc_http_route("GET", "/model", NULL, NULL).status == 405);
    CHECK(cc_http_route("POST", "/model", "tok", NULL).status == 401);
    CHECK(cc_http_route("POST", "/model", "tok", "Bearer tok").status == 0);
}

int main(void)
{
    model_names();
    settings();
    hosts();
    framings();
    tokens();
    routes();
    camera_routes();
    predict_heads();
    bodies();
    boundaries();
    forms();
    return tu_exit_code();
}
