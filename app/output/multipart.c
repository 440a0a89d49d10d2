/* camclass — multipart/form-data: the boundary and the image's field (see multipart.h). */
#include "multipart.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------------------------
 * Header parameters: "; name=value; name2="quoted \" value"" (RFC 9110 section 5.6.6)
 */

/* One parameter parsed from [*p, end): its name and value (unquoted), each cut to its buffer
 * (NUL-terminated; *value_len is the value's whole length). False at the end of the list or
 * where it stops parsing. */
struct param {
    char name[32];
    char value[128];
    size_t value_len;
};

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

static void put(char *buf, size_t size, size_t *n, char ch)
{
    if (*n + 1 < size)
        buf[*n] = ch, buf[*n + 1] = '\0';
    (*n)++;
}

static bool next_param(const char **pp, const char *end, struct param *out)
{
    const char *p = skip_space(*pp, end);
    while (p < end && *p != ';') // the media type, or what is left of a value that ended early
        p++;
    if (p == end)
        return false;
    p = skip_space(p + 1, end);
    size_t n = 0, v = 0;
    out->name[0] = out->value[0] = '\0';
    while (p < end && *p != '=' && *p != ';' && *p != ' ' && *p != '\t')
        put(out->name, sizeof(out->name), &n, *p++);
    p = skip_space(p, end);
    if (p < end && *p == '=') {
        p = skip_space(p + 1, end);
        if (p < end && *p == '"') {
            for (p++; p < end && *p != '"'; p++) {
                if (*p == '\\' && p + 1 < end)
                    p++;
                put(out->value, sizeof(out->value), &v, *p);
            }
            p += p < end; // the closing quote
        } else {
            while (p < end && *p != ';' && *p != ' ' && *p != '\t')
                put(out->value, sizeof(out->value), &v, *p++);
        }
    }
    out->value_len = v;
    *pp = p;
    return true;
}

/* ------------------------------------------------------------------------------------------
 * The boundary
 */

/* RFC 2046's bchars: digits, letters, '()+_,-./:=? and space (not last). */
static bool boundary_ok(const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ",
                    b[i]) ||
            !b[i])
            return false;
    return n > 0 && b[n - 1] != ' ';
}

bool cc_multipart_boundary(const char *content_type, char out[CC_MULTIPART_BOUNDARY_MAX + 1],
                           char *msg, size_t msg_size)
{
    const char *p = content_type, *end = content_type + strlen(content_type);
    struct param prm;
    while (next_param(&p, end, &prm)) {
        if (strcasecmp(prm.name, "boundary") != 0)
            continue;
        if (prm.value_len > CC_MULTIPART_BOUNDARY_MAX || !boundary_ok(prm.value, prm.value_len)) {
            snprintf(msg, msg_size,
                     "multipart/form-data: the boundary \"%.80s\" is not 1 to 70 letters, digits "
                     "or '()+_,-./:=? (RFC 2046); quote it or choose another",
                     prm.value);
            return false;
        }
        memcpy(out, prm.value, prm.value_len + 1);
        return true;
    }
    snprintf(msg, msg_size,
             "multipart/form-data without a boundary parameter; send Content-Type: "
             "multipart/form-data; boundary=... (curl -F file=@IMAGE does)");
    return false;
}

/* ------------------------------------------------------------------------------------------
 * The body
 */

/* The Content-Disposition name of a part whose header lines are [p, end) ("" without one). */
static void part_name(const char *p, const char *end, char *name, size_t size)
{
    static const char key[] = "content-disposition:";
    name[0] = '\0';
    while (p < end) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        eol = eol ? eol : end;
        if ((size_t)(eol - p) >= sizeof(key) - 1 && strncasecmp(p, key, sizeof(key) - 1) == 0) {
            const char *q = p + sizeof(key) - 1;
            struct param prm;
            while (next_param(&q, eol, &prm))
                if (strcasecmp(prm.name, "name") == 0) {
                    snprintf(name, size, "%.*s", (int)(size - 1), prm.value);
                    return;
                }
        }
        p = eol == end ? end : eol + 2;
    }
}

static bool listed(const char *name, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(name, *names) == 0)
            return true;
    return false;
}

static int form_error(char *msg, size_t msg_size, const char *boundary, const char *what)
{
    snprintf(msg, msg_size, "the multipart body %s (--%.70s%s); send the whole form", what,
             boundary, strstr(what, "closing") ? "--" : "");
    return 400;
}

int cc_multipart_find(const uint8_t *body, size_t size, const char *boundary,
                      const char *const *names, size_t *off, size_t *len, char *msg,
                      size_t msg_size)
{
    char delim[CC_MULTIPART_BOUNDARY_MAX + 5] = "\r\n--"; // CRLF "--" boundary
    size_t dl = strlen(boundary) + 4;
    memcpy(delim + 4, boundary, dl - 3);
    const char *b = (const char *)body, *end = size ? b + size : b; // an empty body: NULL
    // The first delimiter may open the body (no CRLF before it) or follow a preamble.
    bool opens = size >= dl - 2 && memcmp(b, delim + 2, dl - 2) == 0;
    const char *p = opens ? b + dl - 2 : size ? memmem(b, size, delim, dl) : NULL;
    if (!p) {
        snprintf(msg, msg_size,
                 "the multipart body has no delimiter --%.70s (its Content-Type's boundary); "
                 "send the form with the boundary it was made with",
                 boundary);
        return 400;
    }
    if (!opens)
        p += dl;
    bool found = false, empty = false;
    for (;;) {
        if (end - p >= 2 && p[0] == '-' && p[1] == '-') // the closing delimiter: the end
            break;
        p = skip_space(p, end); // transport padding
        if (end - p < 2)
            return form_error(msg, msg_size, boundary, "ends before its closing boundary");
        if (p[0] != '\r' || p[1] != '\n')
            return form_error(msg, msg_size, boundary,
                              "has something other than a line end after a boundary");
        p += 2;
        const char *hend = end - p >= 2 && p[0] == '\r' && p[1] == '\n'
                               ? p // no header lines
                               : memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (!hend)
            return form_error(msg, msg_size, boundary, "ends before its closing boundary");
        char name[64];
        part_name(p, hend, name, sizeof(name));
        const char *data = hend + (hend == p ? 2 : 4);
        const char *next = memmem(data, (size_t)(end - data), delim, dl);
        if (!next)
            return form_error(msg, msg_size, boundary, "ends before its closing boundary");
        if (!found && listed(name, names)) {
            empty |= next == data;
            if (next > data) {
                found = true;
                *off = (size_t)(data - b), *len = (size_t)(next - data);
            }
        }
        p = next + dl;
    }
    if (found)
        return 0;
    // Which field was looked for: names[0], and names[1] when there is one.
    char which[80];
    snprintf(which, sizeof(which), "\"%.30s\"%s%.30s%s", names[0], names[1] ? " or \"" : "",
             names[1] ? names[1] : "", names[1] ? "\"" : "");
    snprintf(msg, msg_size, "no image: the form has %s field %s (curl -F %s=@IMAGE)",
             empty ? "only an empty" : "no", which, names[0]);
    return 400;
}
