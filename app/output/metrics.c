/* camclass — the Prometheus text exposition of GET /metrics (see metrics.h). */
#include "metrics.h"
#include "clock.h"
#include "health.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// Latency bucket bounds in seconds (le), for frames and for /predict: 5 ms to 10 s.
static const double bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
enum { N_BOUNDS = sizeof(bounds) / sizeof(bounds[0]) };

static const char *const endpoint_names[CC_METRICS_ENDPOINTS] = {
    "/predict", "/latest",  "/metrics",   "/healthz", "/stream",  "/",
    "/model",   "/samples", "/snapshots", "/camera",  "/cameras", "other"};
// The statuses counted apart; anything else counts as the last row's "other".
static const int statuses[] = {200, 201, 400, 401, 403, 404, 405, 408, 409,
                               413, 415, 421, 422, 500, 501, 503, 507};
enum { N_STATUSES = sizeof(statuses) / sizeof(statuses[0]) };

struct histogram {
    uint64_t le[N_BOUNDS]; // cumulative at render time; here per bucket
    uint64_t count;
    double sum;
};

// One camera's per-result figures.
struct camera {
    char *label; // ("camera=\"<name>\"", escaped), malloc'd; NULL: one camera, no label
    struct histogram frame_latency;
    double stage_sum[3]; // dequeue, preprocess, inference, seconds
    uint64_t stage_count;
    struct cc_result_health health; // of the newest frame whose health was checked
};

struct cc_metrics {
    pthread_mutex_t lock; // guards everything below
    char *model;
    const char *backend; // of the newest frame or request; static (result.h)
    int64_t start_ns;
    struct camera cam[CC_METRICS_CAMERAS_MAX]; // (n_cams)
    int n_cams;
    struct histogram predict_latency;
    uint64_t requests[CC_METRICS_ENDPOINTS][N_STATUSES + 1];
};

static char *camera_label(const char *name);

struct cc_metrics *cc_metrics_create(const char *model, const char *backend,
                                     const char *const *cameras, int n)
{
    struct cc_metrics *m = calloc(1, sizeof(*m));
    if (!m || !(m->model = strdup(model ? model : ""))) {
        free(m);
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    m->start_ns = cc_now_ns();
    m->backend = backend;
    m->n_cams = n < 1 ? 1 : n > CC_METRICS_CAMERAS_MAX ? CC_METRICS_CAMERAS_MAX : n;
    for (int i = 0; i < m->n_cams && m->n_cams > 1; i++)
        if (!(m->cam[i].label = camera_label(cameras[i]))) {
            cc_metrics_destroy(m);
            return NULL;
        }
    return m;
}

void cc_metrics_set_model(struct cc_metrics *m, const char *model)
{
    char *copy = strdup(model ? model : "");
    if (!copy)
        return;
    pthread_mutex_lock(&m->lock);
    free(m->model);
    m->model = copy;
    pthread_mutex_unlock(&m->lock);
}

void cc_metrics_destroy(struct cc_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    for (int i = 0; i < m->n_cams; i++)
        free(m->cam[i].label);
    free(m->model);
    free(m);
}

static void observe(struct histogram *h, double s)
{
    for (int i = 0; i < N_BOUNDS; i++)
        if (s <= bounds[i]) {
            h->le[i]++;
            break;
        }
    h->count++;
    h->sum += s;
}

void cc_metrics_frame(struct cc_metrics *m, int i, const struct cc_result *r)
{
    if (i < 0 || i >= m->n_cams)
        return;
    struct camera *c = &m->cam[i];
    pthread_mutex_lock(&m->lock);
    observe(&c->frame_latency, r->latency_ms > 0 ? r->latency_ms / 1e3 : 0);
    c->stage_sum[0] += r->dequeue_ms / 1e3;
    c->stage_sum[1] += r->preprocess_ms / 1e3;
    c->stage_sum[2] += r->inference_ms / 1e3;
    c->stage_count++;
    if (r->backend)
        m->backend = r->backend;
    if (r->health.checked)
        c->health = r->health;
    pthread_mutex_unlock(&m->lock);
}

void cc_metrics_request(struct cc_metrics *m, enum cc_metrics_endpoint e, int status,
                        double seconds)
{
    int row = N_STATUSES;
    for (int i = 0; i < N_STATUSES; i++)
        if (statuses[i] == status)
            row = i;
    pthread_mutex_lock(&m->lock);
    m->requests[e][row]++;
    if (e == CC_METRICS_PREDICT && seconds >= 0)
        observe(&m->predict_latency, seconds);
    pthread_mutex_unlock(&m->lock);
}

/* A growing text buffer; ok turns false on out of memory. */
struct text {
    char *s;
    size_t n, cap;
    bool ok;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
    if (!t->ok)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->ok = false;
            return;
        }
        if ((size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = 2 * t->cap + (size_t)k;
        char *p = realloc(t->s, cap);
        if (!p) {
            t->ok = false;
            return;
        }
        t->s = p, t->cap = cap;
    }
}

/* A label value with \, " and newlines escaped, as the text format asks. */
static void put_label(struct text *t, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            put(t, "\\%c", *v);
        else if (*v == '\n')
            put(t, "\\n");
        else
            put(t, "%c", *v);
    }
}

/* camera="<name>" with the name escaped, malloc'd; NULL when out of memory. */
static char *camera_label(const char *name)
{
    struct text t = {malloc(64), 0, 64, true};
    if (!t.s)
        return NULL;
    put(&t, "camera=\"");
    put_label(&t, name ? name : "");
    put(&t, "\"");
    if (!t.ok)
        free(t.s);
    return t.ok ? t.s : NULL;
}

/* A sample's label set: {camera="x",more} or {more}, {camera="x"}, or nothing (label and more
 * NULL). */
static void put_labels(struct text *t, const char *label, const char *more)
{
    if (label || more)
        put(t, "{%s%s%s}", label ? label : "", label && more ? "," : "", more ? more : "");
}

/* A histogram's samples (its HELP and TYPE are the caller's). */
static void put_buckets(struct text *t, const char *name, const char *label,
                        const struct histogram *h)
{
    uint64_t cum = 0;
    char le[32];
    for (int i = 0; i < N_BOUNDS; i++) {
        cum += h->le[i];
        snprintf(le, sizeof(le), "le=\"%g\"", bounds[i]);
        put(t, "%s_bucket", name);
        put_labels(t, label, le);
        put(t, " %llu\n", (unsigned long long)cum);
    }
    put(t, "%s_bucket", name);
    put_labels(t, label, "le=\"+Inf\"");
    put(t, " %llu\n%s_sum", (unsigned long long)h->count, name);
    put_labels(t, label, NULL);
    put(t, " %.6f\n%s_count", h->sum, name);
    put_labels(t, label, NULL);
    put(t, " %llu\n", (unsigned long long)h->count);
}

static void put_histogram(struct text *t, const char *name, const char *help,
                          const struct histogram *h)
{
    put(t, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    put_buckets(t, name, NULL, h);
}

// The camera health conditions (image/health.h) of the cameras whose checks run: 1 while one is
// on.
static void put_health(struct text *t, const struct cc_metrics *m)
{
    bool any = false;
    for (int i = 0; i < m->n_cams; i++) {
        const struct cc_result_health *h = &m->cam[i].health;
        if (!h->checked)
            continue;
        if (!any)
            put(t, "# HELP camclass_camera_condition A camera health condition is on (1) or off "
                   "(0).\n# TYPE camclass_camera_condition gauge\n");
        any = true;
        for (int k = 0; k < CC_HEALTH_COUNT; k++) {
            char cond[48];
            snprintf(cond, sizeof(cond), "condition=\"%s\"", cc_health_kind_name(k));
            put(t, "camclass_camera_condition");
            put_labels(t, m->cam[i].label, cond);
            put(t, " %d\n", (h->active >> k) & 1);
        }
    }
}

// The per-camera counters: each camera's pipeline totals, and its results seen here.
static void put_counters(struct text *t, const struct cc_metrics *m,
                         const struct cc_pipeline_totals *tot)
{
    static const struct {
        const char *name, *help;
    } counters[] = {
        {"camclass_frames", "Frames the camera or file source delivered."},
        {"camclass_frames_dropped", "Frames replaced by a newer one before inference took them."},
        {"camclass_results", "Frames classified."},
        {"camclass_bad_frames", "Frames preprocessing rejected."},
    };
    for (size_t k = 0; k < sizeof(counters) / sizeof(counters[0]); k++) {
        put(t, "# HELP %s_total %s\n# TYPE %s_total counter\n", counters[k].name, counters[k].help,
            counters[k].name);
        for (int i = 0; i < m->n_cams; i++) {
            // results: the frames this module saw classified, not the pipeline's own count
            // (tot->results): counted under the lock with the latency histogram and the stage
            // times, so that one scrape's results_total equals their counts (the pipeline
            // counts a result just before handing it here; a scrape in between saw one more in
            // an ASan run).
            uint64_t v[] = {tot[i].frames, tot[i].dropped, m->cam[i].stage_count,
                            tot[i].bad_frames};
            put(t, "%s_total", counters[k].name);
            put_labels(t, m->cam[i].label, NULL);
            put(t, " %llu\n", (unsigned long long)v[k]);
        }
    }
}

// Each camera's frame latency and stage times.
static void put_frame_times(struct text *t, const struct cc_metrics *m)
{
    const char *name = "camclass_frame_latency_seconds";
    put(t, "# HELP %s Frame timestamp to result, per classified frame.\n# TYPE %s histogram\n",
        name, name);
    for (int i = 0; i < m->n_cams; i++)
        put_buckets(t, name, m->cam[i].label, &m->cam[i].frame_latency);
    put(t, "# HELP camclass_frame_stage_seconds Time of each stage of the classified frames.\n"
           "# TYPE camclass_frame_stage_seconds summary\n");
    const char *stages[] = {"dequeue", "preprocess", "inference"};
    for (int i = 0; i < m->n_cams; i++)
        for (int s = 0; s < 3; s++) {
            const struct camera *c = &m->cam[i];
            char stage[32];
            snprintf(stage, sizeof(stage), "stage=\"%s\"", stages[s]);
            put(t, "camclass_frame_stage_seconds_sum");
            put_labels(t, c->label, stage);
            put(t, " %.6f\ncamclass_frame_stage_seconds_count", c->stage_sum[s]);
            put_labels(t, c->label, stage);
            put(t, " %llu\n", (unsigned long long)c->stage_count);
        }
}

char *cc_metrics_render(struct cc_metrics *m, const struct cc_pipeline_totals *tot)
{
    struct text t = {malloc(4096), 0, 4096, true};
    if (!t.s)
        return NULL;
    pthread_mutex_lock(&m->lock);
    put(&t, "# HELP camclass_info The model and the backend that computed the newest result.\n"
            "# TYPE camclass_info gauge\ncamclass_info{model=\"");
    put_label(&t, m->model);
    put(&t, "\",backend=\"");
    put_label(&t, m->backend ? m->backend : "");
    put(&t, "\"} 1\n");
    put(&t,
        "# HELP camclass_uptime_seconds Seconds since the service started.\n"
        "# TYPE camclass_uptime_seconds gauge\ncamclass_uptime_seconds %.3f\n",
        (double)(cc_now_ns() - m->start_ns) / 1e9);
    put_counters(&t, m, tot);
    put_frame_times(&t, m);
    put_health(&t, m);
    put_histogram(&t, "camclass_predict_latency_seconds",
                  "POST /predict: whole body received to answer, per classified image.",
                  &m->predict_latency);
    put(&t, "# HELP camclass_http_requests_total HTTP requests answered, by path and status.\n"
            "# TYPE camclass_http_requests_total counter\n");
    for (int e = 0; e < CC_METRICS_ENDPOINTS; e++)
        for (int i = 0; i <= N_STATUSES; i++) {
            if (!m->requests[e][i])
                continue;
            if (i < N_STATUSES)
                put(&t, "camclass_http_requests_total{path=\"%s\",code=\"%d\"} %llu\n",
                    endpoint_names[e], statuses[i], (unsigned long long)m->requests[e][i]);
            else
                put(&t, "camclass_http_requests_total{path=\"%s\",code=\"other\"} %llu\n",
                    endpoint_names[e], (unsigned long long)m->requests[e][i]);
        }
    pthread_mutex_unlock(&m->lock);
    if (!t.ok) {
        free(t.s);
        return NULL;
    }
    return t.s;
}
