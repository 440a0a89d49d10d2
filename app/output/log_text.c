/* camclass — the detection log as text (see log_text.h). */
#include "log_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct out {
    char buf[1024];
    size_t n;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    if (o->n >= sizeof(o->buf) - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->n, sizeof(o->buf) - o->n, fmt, ap);
    va_end(ap);
    o->n = k < 0                                ? o->n
           : o->n + (size_t)k >= sizeof(o->buf) ? sizeof(o->buf) - 1
                                                : o->n + (size_t)k;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

// A class object {"label", "score"} as "label 0.91".
static void put_class(struct out *o, const cJSON *c)
{
    put(o, "%s %.2f", str(c, "label"), num(c, "score"));
}

static void put_frame(struct out *o, const cJSON *line)
{
    put(o, "#%.0f  ", num(line, "seq"));
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "unknown")))
        put(o, "unknown  (");
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(line, "top"), *c;
    int i = 0;
    cJSON_ArrayForEach(c, top)
    {
        if (i++ == 3)
            break;
        put(o, i > 1 ? "  " : "");
        put_class(o, c);
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "unknown")))
        put(o, ")");
    const char *file = str(line, "file");
    if (*file)
        put(o, "  %s", file);
    put(o, "  %.1f ms", num(line, "latency_ms"));
}

static void put_event(struct out *o, const char *event, const cJSON *line)
{
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(line, "detection");
    if (!strcmp(event, "frame")) {
        put_frame(o, line);
    } else if (!strcmp(event, "detection")) {
        put(o, "detected  ");
        put_class(o, det);
        const cJSON *prev = cJSON_GetObjectItemCaseSensitive(line, "previous");
        put(o, prev ? " (instead of %s)" : " (%s)",
            prev ? str(prev, "label") : str(line, "reason"));
    } else if (!strcmp(event, "clear")) {
        put(o, "cleared   %s after %.1f s", str(det, "label"), num(line, "duration_s"));
    } else if (!strcmp(event, "camera")) {
        put(o, "camera    %s: %s", str(line, "condition"), str(line, "state"));
    } else if (!strcmp(event, "model")) {
        put(o, "model     %s (%.0f classes)", str(line, "model"), num(line, "classes"));
    } else if (!strcmp(event, "stats") || !strcmp(event, "summary")) {
        put(o, "%-9s %.0f frames, %.1f results/s, %.0f dropped, latency %.1f ms", event,
            num(line, "frames"), num(line, "fps"), num(line, "dropped"), num(line, "latency_ms"));
        if (!strcmp(event, "summary"))
            put(o, ", %.0f detections", num(line, "detections"));
    } else {
        put(o, "%s", event);
    }
}

char *cc_log_text(const cJSON *line)
{
    struct out o = {.n = 0};
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    localtime_r(&now.tv_sec, &tm);
    o.n = strftime(o.buf, sizeof(o.buf), "%H:%M:%S", &tm);
    put(&o, ".%03ld  ", now.tv_nsec / 1000000);
    put_event(&o, str(line, "event"), line);
    for (size_t i = 0; i < o.n; i++) // a label's control characters must not move the cursor
        if ((unsigned char)o.buf[i] < 0x20)
            o.buf[i] = '?';
    return strdup(o.buf);
}
