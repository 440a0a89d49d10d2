/* camclass — GET /metrics' text (app/output/metrics.c) without a server: the Prometheus text
 * format line by line (HELP and TYPE before a family's samples, one TYPE each, label values
 * escaped), cumulative histogram buckets with le inclusive and +Inf = count, the counters
 * against what was fed, statuses outside the table as code="other", and a reload's model
 * name. test_serve.py scrapes a running camclass with prometheus_client; what a parser
 * forgives (an unescaped quote cut short, a non-cumulative bucket) is checked here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "testutil.h"

/* The value of the sample line that starts with exactly `series` followed by a space; -1 when
 * there is none. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

/* The metric family a sample's name belongs to: a histogram's _bucket, _sum and _count and a
 * summary's _sum and _count are its own. */
static void family_of(const char *name, size_t len, char *out, size_t size)
{
    static const char *const suffixes[] = {"_bucket", "_sum", "_count"};
    snprintf(out, size, "%.*s", (int)len, name);
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t k = strlen(suffixes[i]), n = strlen(out);
        if (n > k && strcmp(out + n - k, suffixes[i]) == 0 && strstr(out, "_seconds"))
            out[n - k] = 0;
    }
}

/* A label set {a="x",b="y"} from p: true when every value is a quoted string whose only
 * escapes are \\, \" and \n; *end after the closing brace. */
static bool labels_ok(const char *p, const char **end)
{
    if (*p++ != '{')
        return false;
    while (*p != '}') {
        while ((*p >= 'a' && *p <= 'z') || *p == '_')
            p++;
        if (*p++ != '=' || *p++ != '"')
            return false;
        for (; *p != '"'; p++) {
            if (!*p || *p == '\n')
                return false;
            if (*p == '\\' && p[1] != '\\' && p[1] != '"' && p[1] != 'n')
                return false;
            p += *p == '\\';
        }
        p++;
        if (*p == ',')
            p++;
    }
    *end = p + 1;
    return true;
}

/* Every line of the exposition: "# HELP name text", "# TYPE name type" (once per family, before
 * its samples), or "name[{labels}] value"; the text ends with a newline. */
static void check_format(const char *text)
{
    char typed[64][96];
    int n_typed = 0;
    CHECKF(*text && text[strlen(text) - 1] == '\n', "the exposition ends with a newline");
    for (const char *line = text, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
        nl = strchr(line, '\n');
        size_t len = strcspn(line, "\n");
        char name[96];
        if (strncmp(line, "# HELP ", 7) == 0)
            continue;
        if (strncmp(line, "# TYPE ", 7) == 0) {
            size_t k = strcspn(line + 7, " ");
            snprintf(name, sizeof(name), "%.*s", (int)k, line + 7);
            for (int i = 0; i < n_typed; i++)
                CHECKF(strcmp(typed[i], name) != 0, "a second TYPE line for %s", name);
            if (n_typed < 64)
                snprintf(typed[n_typed++], sizeof(typed[0]), "%s", name);
            continue;
        }
        size_t k = strspn(line, "abcdefghijklmnopqrstuvwxyz_");
        family_of(line, k, name, sizeof(name));
        bool known = false;
        for (int i = 0; i < n_typed; i++)
            known |= strcmp(typed[i], name) == 0;
        CHECKF(k > 0 && known, "a sample before its family's TYPE line: %.*s", (int)len, line);
        const char *p = line + k;
        if (*p == '{' && !CHECKF(labels_ok(p, &p), "bad label set: %.*s", (int)len, line))
            continue;
        char *end = (char *)p;
        if (*p == ' ')
            strtod(p + 1, &end);
        CHECKF(end > p + 1 && end == line + len, "not \"name value\": %.*s", (int)len, line);
    }
}

static struct cc_result result_ms(double latency_ms, const char *backend)
{
    return (struct cc_result){.latency_ms = latency_ms,
                              .dequeue_ms = 1,
                              .preprocess_ms = 2,
                              .inference_ms = 4,
                              .backend = backend};
}

/* Frames at 3, 10 (on a bound: le is inclusive), 30 ms and 20 s (past every bound). */
static void histograms_and_counters(void)
{
    struct cc_metrics *m = cc_metrics_create("selftest", "cpu", NULL, 1);
    if (!CHECK(m != NULL))
        return;
    const double ms[] = {3, 10, 30, 20000};
    for (int i = 0; i < 4; i++) {
        struct cc_result r = result_ms(ms[i], i == 3 ? "vulkan" : NULL);
        cc_metrics_frame(m, 0, &r);
    }
    cc_metrics_request(m, CC_METRICS_PREDICT, 200, 0.02);
    cc_metrics_request(m, CC_METRICS_PREDICT, 200, -1); // refused before the body: no latency
    cc_metrics_request(m, CC_METRICS_PREDICT, 418, 0.5);
    cc_metrics_request(m, CC_METRICS_HEALTHZ, 200, -1);
    struct cc_pipeline_totals t = {.frames = 9, .results = 5, .dropped = 3, .bad_frames = 1};
    char *text = cc_metrics_render(m, &t);
    if (!CHECK(text != NULL)) {
        cc_metrics_destroy(m);
        return;
    }
    check_format(text);
    static const struct {
        const char *series;
        double want;
    } want[] = {
        {"camclass_info{model=\"selftest\",backend=\"vulkan\"}", 1},
        {"camclass_frames_total", 9},
        {"camclass_frames_dropped_total", 3},
        {"camclass_results_total", 4}, // the frames this module saw, not t.results
        {"camclass_bad_frames_total", 1},
        {"camclass_frame_latency_seconds_bucket{le=\"0.005\"}", 1},
        {"camclass_frame_latency_seconds_bucket{le=\"0.01\"}", 2},
        {"camclass_frame_latency_seconds_bucket{le=\"0.025\"}", 2},
        {"camclass_frame_latency_seconds_bucket{le=\"0.05\"}", 3},
        {"camclass_frame_latency_seconds_bucket{le=\"10\"}", 3},
        {"camclass_frame_latency_seconds_bucket{le=\"+Inf\"}", 4},
        {"camclass_frame_latency_seconds_count", 4},
        {"camclass_frame_latency_seconds_sum", 20.043},
        {"camclass_frame_stage_seconds_sum{stage=\"inference\"}", 0.016},
        {"camclass_frame_stage_seconds_count{stage=\"dequeue\"}", 4},
        {"camclass_predict_latency_seconds_bucket{le=\"0.025\"}", 1},
        {"camclass_predict_latency_seconds_bucket{le=\"0.5\"}", 2},
        {"camclass_predict_latency_seconds_count", 2},
        {"camclass_http_requests_total{path=\"/predict\",code=\"200\"}", 2},
        {"camclass_http_requests_total{path=\"/predict\",code=\"other\"}", 1},
        {"camclass_http_requests_total{path=\"/healthz\",code=\"200\"}", 1},
        {"camclass_http_requests_total{path=\"/latest\",code=\"200\"}", -1}, // never asked
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        double got = sample(text, want[i].series);
        CHECKF(got > want[i].want - 1e-9 && got < want[i].want + 1e-9, "%s: %g, want %g",
               want[i].series, got, want[i].want);
    }
    free(text);
    cc_metrics_destroy(m);
}

/* A model name with a quote, a backslash and a newline: escaped, the line still one line; a
 * reload's name replaces it. */
static void label_escapes(void)
{
    struct cc_metrics *m = cc_metrics_create("my \"best\" c:\\models\nv2", "cpu", NULL, 1);
    if (!CHECK(m != NULL))
        return;
    struct cc_pipeline_totals t = {0};
    char *text = cc_metrics_render(m, &t);
    if (CHECK(text != NULL)) {
        check_format(text);
        const char *want = "camclass_info{model=\"my \\\"best\\\" c:\\\\models\\nv2\","
                           "backend=\"cpu\"} 1\n";
        CHECKF(strstr(text, want) != NULL, "escaped model label: %s", text);
    }
    free(text);
    cc_metrics_set_model(m, "reloaded");
    text = cc_metrics_render(m, &t);
    CHECKF(text && sample(text, "camclass_info{model=\"reloaded\",backend=\"cpu\"}") == 1,
           "the reloaded model's name: %s", text ? text : "(null)");
    free(text);
    cc_metrics_destroy(m);
}

/* Every endpoint with every counted status and some others: more text than the first buffer,
 * each row once. */
static void every_row(void)
{
    static const int codes[] = {200, 400, 401, 403, 404, 405, 408, 413,
                                415, 421, 422, 500, 501, 503, 302, 599};
    struct cc_metrics *m = cc_metrics_create("selftest", "cpu", NULL, 1);
    if (!CHECK(m != NULL))
        return;
    for (int e = 0; e < CC_METRICS_ENDPOINTS; e++)
        for (size_t c = 0; c < sizeof(codes) / sizeof(codes[0]); c++)
            cc_metrics_request(m, (enum cc_metrics_endpoint)e, codes[c], 0.001);
    struct cc_pipeline_totals t = {0};
    char *text = cc_metrics_render(m, &t);
    if (CHECK(text != NULL)) {
        check_format(text);
        CHECKF(sample(text, "camclass_http_requests_total{path=\"/model\",code=\"503\"}") == 1,
               "/model 503 counted once");
        CHECKF(sample(text, "camclass_http_requests_total{path=\"other\",code=\"other\"}") == 2,
               "302 and 599 on an unknown path: code=\"other\" 2");
        CHECKF(sample(text, "camclass_predict_latency_seconds_count") == 16,
               "16 /predict latencies");
    }
    free(text);
    cc_metrics_destroy(m);
}

int main(void)
{
    histograms_and_counters();
    label_escapes();
    every_row();
    return tu_exit_code();
}
