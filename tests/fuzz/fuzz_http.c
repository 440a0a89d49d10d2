/* camclass fuzz target — one HTTP request through the decisions of app/output/http_request.c, as
 * http.c makes them from the strings libmicrohttpd hands it. The input is the request's text:
 * "METHOD TARGET VERSION" on the first line, "Name: value" header lines, a blank line, the body
 * (lines end in \n or \r\n). The harness splits it as libmicrohttpd would (the path and the
 * query's k, header values by name, case-insensitive) and, for a multipart/form-data body, cuts
 * the parts at the Content-Type's boundary and hands each part's bytes to the field callback in
 * pieces with their offsets, as libmicrohttpd's post processor does (its own parser is not
 * fuzzed here: it is the library's). Fed through:
 *  - cc_http_route without and with a token (the Authorization header's value),
 *  - cc_http_check with the Host header as --serve's value, Authorization as the token and
 *    X-Allow-Host as --serve-allow-host,
 *  - cc_http_check_host and cc_http_check_origin (Host, Origin, Sec-Fetch-Site) for a service
 *    on 127.0.0.1 without and with a token, X-Allow-Host (when valid) as its allowed hosts,
 *  - for POST /predict: cc_http_predict_head, the body (raw in pieces, or the fields) under the
 *    default limit (16 MiB) and under half the body's size, cc_http_body_end, and the image
 *    dispatch of predict.c (PNG or JPEG by the first bytes; decoding is the image target's).
 * Each decision is checked: a status from the documented set, a message with every refusal, k in
 * 1..16, the kept bytes equal to the first "file" field with bytes (or the raw body) and within
 * the limit. */
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

/* Hands n bytes to the field callback in pieces of `piece`, with their offsets, as
 * libmicrohttpd's post processor does: an empty field is one call of 0 bytes, and so is the
 * start of a field whose first piece holds 4 bytes or fewer of it (its bytes then come at
 * offset 0 again; postprocessor.c, process_value_to_boundary). */
static void field(struct cc_http_body *b, const char *name, const char *d, size_t n, size_t piece)
{
    if ((n == 0 || piece <= 4) && !cc_http_body_field(b, name, 0, d, 0))
        abort(); // out of memory within 16 MiB: not expected here
    for (size_t off = 0; off < n;) {
        size_t k = n - off < piece ? n - off : piece;
        if (!cc_http_body_field(b, name, off, d + off, k))
            abort();
        off += k;
    }
}

/* The parts of a multipart body at boundary: each part's name (from Content-Disposition) and
 * bytes to the callback. *first / *first_size: the first "file" field with bytes (NULL: none). */
static void multipart(struct cc_http_body *b, const char *body, size_t size, const char *boundary,
                      size_t piece, const char **first, size_t *first_size)
{
    char delim[80];
    size_t dl = (size_t)snprintf(delim, sizeof(delim), "--%s", boundary);
    if (dl >= sizeof(delim) || dl <= 2)
        return;
    const char *p = memmem(body, size, delim, dl), *end = body + size;
    while (p) {
        p += dl;
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
            return; // "--" ends the body; anything else does not parse
        p += 2;
        const char *hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (!hend)
            return;
        char name[64] = "";
        const char *n = memmem(p, (size_t)(hend - p), "name=\"", 6);
        if (n) {
            n += 6;
            const char *q = memchr(n, '"', (size_t)(hend - n));
            if (q && (size_t)(q - n) < sizeof(name)) {
                memcpy(name, n, (size_t)(q - n));
                name[q - n] = '\0';
            }
        }
        const char *d = hend + 4;
        char sep[84] = "\r\n";
        memcpy(sep + 2, delim, dl);
        const char *next = memmem(d, (size_t)(end - d), sep, dl + 2);
        if (!next)
            return;
        if (!*first && strcmp(name, "file") == 0 && next > d) {
            *first = d;
            *first_size = (size_t)(next - d);
        }
        field(b, name[0] ? name : NULL, d, (size_t)(next - d), piece);
        p = next + 2;
    }
}

/* POST /predict's body under the limit max: the kept bytes and the status at its end. */
static void predict_body(const struct req *r, enum cc_http_body_kind kind, size_t max)
{
    struct cc_http_body b;
    cc_http_body_init(&b, max);
    size_t piece = 1 + r->body_size % 61; // libmicrohttpd hands bodies in pieces of any size
    const char *want = r->body;
    size_t want_size = r->body_size;
    bool bad_form = false;
    if (kind == CC_HTTP_BODY_RAW) {
        for (size_t off = 0; off < r->body_size; off += piece) {
            size_t k = r->body_size - off < piece ? r->body_size - off : piece;
            if (!cc_http_body_append(&b, r->body + off, k))
                abort();
        }
    } else {
        const char *type = header(r, "Content-Type"), *bd = strstr(type, "boundary=");
        char boundary[72] = "";
        if (bd) {
            bd += 9;
            size_t n = strcspn(bd, "\";, ");
            if (*bd == '"')
                n = strcspn(++bd, "\"");
            if (n < sizeof(boundary))
                memcpy(boundary, bd, n), boundary[n] = '\0';
        }
        bad_form = !boundary[0]; // http.c refuses it at the first call (no post processor)
        want = NULL, want_size = 0;
        if (!bad_form)
            multipart(&b, r->body, r->body_size, boundary, piece, &want, &want_size);
    }
    if (b.size > max || (!b.too_big && (b.size != want_size || (b.size &&
                                                               memcmp(b.data, want, b.size)))))
        abort();
    if (b.too_big != (want_size > max) && kind == CC_HTTP_BODY_RAW)
        abort();
    char msg[200] = "";
    int st = cc_http_body_end(&b, kind == CC_HTTP_BODY_MULTIPART, bad_form, msg, sizeof(msg));
    if ((st != 0 && st != 400 && st != 413) || (st && !msg[0]) || (b.too_big && st != 413))
        abort();
    if (st == 0 && b.size) {
        // predict.c's dispatch: PNG, JPEG, or 415; the decoders are the image target's.
        volatile bool png = cc_is_png(b.data, b.size), jpeg = cc_is_jpeg(b.data, b.size);
        (void)png, (void)jpeg;
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
