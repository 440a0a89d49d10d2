/* camclass fuzz target — one HTTP request through the decisions of app/output/http_request.c, as
 * http.c makes them from the strings libmicrohttpd hands it. The input is the request's text:
 * "METHOD TARGET VERSION" on the first line, "Name: value" header lines, a blank line, the body
 * (lines end in \n or \r\n). The harness splits it as libmicrohttpd would (the path and the
 * query's k, header values by name, case-insensitive). Fed through:
 *  - cc_http_route without and with a token (the Authorization header's value),
 *  - cc_http_check with the Host header as --serve's value, Authorization as the token and
 *    X-Allow-Host as --serve-allow-host,
 *  - cc_http_check_host and cc_http_check_origin (Host, Origin, Sec-Fetch-Site) for a service
 *    on 127.0.0.1 without and with a token, X-Allow-Host (when valid) as its allowed hosts,
 *  - for POST /predict: cc_http_predict_head, cc_http_body_form (the boundary) for a form, the
 *    body in pieces under the default limit (16 MiB) and under half the body's size,
 *    cc_http_body_end (multipart.c's parse of a form), and the image dispatch of predict.c
 *    (the format by the first bytes; decoding is the image target's).
 * Each decision is checked: a status from the documented set, a message with every refusal, k in
 * 1..16, the kept bytes equal to the body within the limit, a form's image bytes of the body. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decode.h"
#include "http_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_HEADERS 32

struct req {
    char *method, *path, *k; // NUL-terminated pieces of the copy (k: NULL without ?k=)
    char *names[MAX_HEADERS], *values[MAX_HEADERS];
    int n_headers;
    const char *body;
    size_t body_size;
};

static const char *header(const struct req *r, const char *name)
{
    for (int i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->names[i], name) == 0)
            return r->values[i];
    return NULL;
}

/* The next line of s (up to end), NUL-terminated in place without its \r\n; NULL at the end. */
static char *next_line(char **s, char *end)
{
    if (*s >= end)
        return NULL;
    char *line = *s, *nl = memchr(line, '\n', (size_t)(end - line));
    if (!nl)
        nl = end;
    *s = nl < end ? nl + 1 : end;
    *nl = '\0';
    if (nl > line && nl[-1] == '\r')
        nl[-1] = '\0';
    return line;
}

/* %xx and + decoded in place, as libmicrohttpd unescapes a query argument. */
static void unescape(char *s)
{
    char *w = s;
    for (char *p = s; *p; p++) {
        static const char hex[] = "0123456789abcdef";
        const char *a, *b;
        if (*p == '+') {
            *w++ = ' ';
        } else if (*p == '%' && p[1] && p[2] && (a = strchr(hex, p[1] | 0x20)) &&
                   (b = strchr(hex, p[2] | 0x20)) && *a && *b) {
            *w++ = (char)((a - hex) * 16 + (b - hex));
            p += 2;
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
}

/* Splits the copy s (size bytes + NUL) into r. False when there is no request line. */
static bool split(char *s, size_t size, struct req *r)
{
    char *p = s, *end = s + size;
    char *line = next_line(&p, end);
    if (!line)
        return false;
    r->method = line;
    char *sp = strchr(line, ' ');
    if (!sp)
        return false;
    *sp = '\0';
    r->path = sp + 1;
    if ((sp = strchr(r->path, ' ')))
        *sp = '\0';
    char *q = strchr(r->path, '?');
    if (q) {
        *q++ = '\0';
        for (char *arg = strtok(q, "&"); arg; arg = strtok(NULL, "&"))
            if (strncmp(arg, "k=", 2) == 0 || strcmp(arg, "k") == 0) {
                r->k = arg[1] ? arg + 2 : arg + 1; // "k" alone: an empty value
                unescape(r->k);
                break;
            }
    }
    while ((line = next_line(&p, end)) && *line) {
        char *colon = strchr(line, ':');
        if (!colon || r->n_headers == MAX_HEADERS)
            continue;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        r->names[r->n_headers] = line;
        r->values[r->n_headers++] = v;
    }
    r->body = p;
    r->body_size = (size_t)(end - p);
    return true;
}

/* POST /predict's body under the limit max, in pieces as libmicrohttpd hands them: the status
 * at its end from the documented set with a message, and for a form that parsed, the image
 * bytes a part of the body (multipart.c finds them; the harness checks where they came from). */
static void predict_body(const struct req *r, enum cc_http_body_kind kind, size_t max)
{
    struct cc_http_body b;
    cc_http_body_init(&b, max);
    char msg[200] = "";
    if (kind == CC_HTTP_BODY_MULTIPART &&
        cc_http_body_form(&b, header(r, "Content-Type"), msg, sizeof(msg))) {
        if (!msg[0] || b.boundary[0])
            abort(); // refused with a message, and no boundary kept
        return;
    }
    if (kind == CC_HTTP_BODY_MULTIPART && (!b.boundary[0] || strlen(b.boundary) > 70))
        abort();
    size_t piece = 1 + r->body_size % 61; // libmicrohttpd hands bodies in pieces of any size
    for (size_t off = 0; off < r->body_size; off += piece) {
        size_t k = r->body_size - off < piece ? r->body_size - off : piece;
        if (!cc_http_body_append(&b, r->body + off, k))
            abort(); // out of memory within 16 MiB: not expected here
    }
    if (b.size > max || b.too_big != (r->body_size > max) ||
        (!b.too_big && (b.size != r->body_size || (b.size && memcmp(b.data, r->body, b.size)))))
        abort();
    bool form = b.boundary[0] != '\0';
    int st = cc_http_body_end(&b, msg, sizeof(msg));
    if ((st != 0 && st != 400 && st != 413) || (st && !msg[0]) || (b.too_big && st != 413) ||
        (st == 400 && !form))
        abort();
    if (st == 0 && form && (!b.size || !memmem(r->body, r->body_size, b.data, b.size)))
        abort(); // a form's image: bytes of the body
    if (st == 0 && b.size) {
        // predict.c's dispatch: the image format by its first bytes, or 415; the decoders are
        // the image target's.
        volatile const char *fmt = cc_image_format(b.data, b.size);
        (void)fmt;
    }
    cc_http_body_finish(&b);
}

/* Host and Origin against a service on 127.0.0.1 without and with a token: statuses from the
 * documented sets, a message with each refusal, nothing refused by them with the token but an
 * HTTP/1.1 request without Host, and GET never refused for its Origin. */
static void who_asks(const struct req *r, const char *host, const char *allow, const char *token)
{
    struct cc_http_listen la;
    struct cc_error err = {0};
    if (!cc_http_parse_listen("127.0.0.1:8080", &la, &err))
        abort();
    struct cc_http_hosts open, closed;
    cc_http_hosts_init(&open, &la, NULL, allow);
    cc_http_hosts_init(&closed, &la, token, allow);
    char m1[320] = "", m2[320] = "", m3[320] = "";
    int h1 = cc_http_check_host(&open, "HTTP/1.1", host, m1, sizeof(m1));
    int h2 = cc_http_check_host(&closed, "HTTP/1.1", host, m2, sizeof(m2));
    const char *origin = header(r, "Origin"), *site = header(r, "Sec-Fetch-Site");
    int o1 = cc_http_check_origin(&open, r->method, host, origin, site, m3, sizeof(m3));
    if ((h1 != 0 && h1 != 400 && h1 != 421) || (h1 && !m1[0]) || h2 != (host ? 0 : 400) ||
        (h2 && !m2[0]) || (h1 == 400) != !host || (o1 != 0 && o1 != 403) || (o1 && !m3[0]) ||
        (o1 && !strcmp(r->method, "GET")) ||
        cc_http_check_origin(&closed, r->method, host, origin, site, m3, sizeof(m3)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct req r = {0};
    if (!split(s, size, &r))
        goto done;
    const char *auth = header(&r, "Authorization");

    // --serve and --serve-token, from the strings at hand.
    struct cc_error err = {0};
    const char *host = header(&r, "Host");
    const char *allow = header(&r, "X-Allow-Host");
    if (cc_http_check(host, auth, allow, &err) == (err.msg[0] != '\0'))
        abort();

    static const char token[] = "s3cret-Token";
    who_asks(&r, host, cc_http_check("8080", NULL, allow, &err) ? allow : NULL, token);
    struct cc_http_route open = cc_http_route(r.method, r.path, NULL, auth);
    struct cc_http_route closed = cc_http_route(r.method, r.path, token, auth);
    bool auth_ok = cc_http_bearer_ok(auth, token);
    if (open.status == 401 || (open.status && !open.msg) || (closed.status && !closed.msg) ||
        (open.status != 0 && open.status != 404 && open.status != 405) ||
        (!open.status && open.endpoint == CC_METRICS_OTHER) || open.endpoint != closed.endpoint ||
        (closed.status == 401) != (!auth_ok && open.endpoint != CC_METRICS_HEALTHZ) ||
        (auth_ok && closed.status != open.status))
        abort();
    if (open.status || open.endpoint != CC_METRICS_PREDICT)
        goto done;

    int k = 0;
    enum cc_http_body_kind kind;
    char msg[200] = "";
    int st = cc_http_predict_head(r.k, header(&r, "Content-Length"), header(&r, "Content-Type"),
                                  16u << 20, 5, &k, &kind, msg, sizeof(msg));
    if ((st != 0 && st != 400 && st != 413 && st != 415) || (st && !msg[0]) ||
        (!st && (k < 1 || k > 16)))
        abort();
    if (st)
        goto done;
    predict_body(&r, kind, 16u << 20);
    predict_body(&r, kind, r.body_size / 2);
done:
    free(s);
    return 0;
}
