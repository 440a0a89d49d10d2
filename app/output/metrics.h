/* camclass — the figures GET /metrics serves, in the Prometheus text format (version 0.0.4:
 * https://prometheus.io/docs/instrumenting/exposition_formats/), in camclass terms (http.c
 * serves the text; this module knows no HTTP library).
 *
 *   camera i's inference thread, per result: cc_metrics_frame(m, i, r);
 *   a connection's thread, per answer:    cc_metrics_request(m, CC_METRICS_PREDICT, 200, s);
 *   GET /metrics:                         char *text = cc_metrics_render(m, &totals); free(text);
 *
 * Threads: every function takes the metrics' own mutex; any thread may call any of them.
 * Ownership: create copies model; destroy frees (accepts NULL).
 */
#ifndef CC_METRICS_H
#define CC_METRICS_H

#include <stdint.h>

#include "pipeline.h"
#include "result.h"

enum cc_metrics_endpoint {
    CC_METRICS_PREDICT,
    CC_METRICS_LATEST,
    CC_METRICS_METRICS,
    CC_METRICS_HEALTHZ,
    CC_METRICS_STREAM,
    CC_METRICS_PAGE,      // GET /
    CC_METRICS_MODEL,     // POST /model
    CC_METRICS_SAMPLES,   // GET and POST /samples (--collect)
    CC_METRICS_SNAPSHOTS, // GET /snapshots/<camera>/latest.jpg (--snapshot-dir)
    CC_METRICS_CAMERA,    // POST /camera/<camera>/reference
    CC_METRICS_CAMERAS,   // GET /cameras
    CC_METRICS_OTHER,     // unknown paths, refused before routing (401)
    CC_METRICS_ENDPOINTS
};

struct cc_metrics;

enum { CC_METRICS_CAMERAS_MAX = 16 };

/* NULL when out of memory. backend: the engine's at start (static), until a result says.
 * cameras: the n cameras' names (1..CC_METRICS_CAMERAS_MAX; copied): with several, each
 * per-result series (frames, results, latency, stages, health conditions) is one per camera,
 * labelled camera="<name>"; with one (cameras may then be NULL) they have no camera label. */
struct cc_metrics *cc_metrics_create(const char *model, const char *backend,
                                     const char *const *cameras, int n);
void cc_metrics_destroy(struct cc_metrics *m);
/* Any thread: the model's name from now on (a reload); kept when out of memory. */
void cc_metrics_set_model(struct cc_metrics *m, const char *model);

/* One frame's result of camera i (0..n-1): the frame latency histogram and the stage sums; its
 * backend. */
void cc_metrics_frame(struct cc_metrics *m, int i, const struct cc_result *r);

/* One answered request: its status by endpoint; for /predict, its latency in seconds (< 0:
 * none, e.g. refused before the body was read). */
void cc_metrics_request(struct cc_metrics *m, enum cc_metrics_endpoint e, int status,
                        double seconds);

/* The whole exposition, malloc'd (NULL when out of memory). t: each camera's pipeline's totals
 * now (as many as create's n). */
char *cc_metrics_render(struct cc_metrics *m, const struct cc_pipeline_totals *t);

#endif
