/* camclass — the detection decision (see detector.h). */
#include "detector.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

// Class indices above this are ignored by the smoothing (a result with a wild index must not
// make the detector allocate gigabytes); real models have a few thousand classes at most.
#define MAX_CLASSES (1 << 20)

struct detector_class {
    double score; // smoothed score (EWMA, or the latest score when smoothing is off)
    char *label;  // copy of the latest label seen for this index (valid UTF-8), or NULL
};

struct cc_detector {
    struct cc_detector_config cfg;
    struct detector_class *cls; // (n_cls) per class index
    int n_cls;
    int active;              // class index of the current detection, -1 when none
    int64_t active_since_ns; // result_ns of its onset (or change)
    uint64_t results;        // results seen
};

bool cc_detector_check(const struct cc_detector_config *cfg, const char *who, struct cc_error *err)
{
    if (!(cfg->threshold >= 0 && cfg->threshold <= 1))
        return cc_error_set(err, "%s: threshold %g is not in [0, 1]", who, cfg->threshold);
    if (!(cfg->hysteresis >= 0 && cfg->hysteresis <= cfg->threshold))
        return cc_error_set(err, "%s: hysteresis %g is not in [0, threshold = %g]", who,
                            cfg->hysteresis, cfg->threshold);
    if (!(cfg->ewma_alpha >= 0 && cfg->ewma_alpha <= 1))
        return cc_error_set(err, "%s: EWMA alpha %g is not in [0, 1] (0 = off)", who,
                            cfg->ewma_alpha);
    return true;
}

struct cc_detector *cc_detector_create(const struct cc_detector_config *cfg, struct cc_error *err)
{
    if (!cc_detector_check(cfg, "detections", err))
        return NULL;
    struct cc_detector *d = calloc(1, sizeof(*d));
    if (!d) {
        cc_error_set(err, "detections: out of memory");
        return NULL;
    }
    d->cfg = *cfg;
    d->active = -1;
    return d;
}

void cc_detector_forget(struct cc_detector *d)
{
    for (int i = 0; i < d->n_cls; i++) {
        free(d->cls[i].label);
        d->cls[i] = (struct detector_class){0};
    }
    d->active = -1;
}

void cc_detector_destroy(struct cc_detector *d)
{
    if (!d)
        return;
    cc_detector_forget(d);
    free(d->cls);
    free(d);
}

// Makes room for class index i. False when out of memory (that entry is then not smoothed).
static bool grow_classes(struct cc_detector *d, int i)
{
    if (i < d->n_cls)
        return true;
    int n = d->n_cls ? d->n_cls : 64;
    while (n <= i)
        n *= 2;
    struct detector_class *c = realloc(d->cls, (size_t)n * sizeof(*c));
    if (!c)
        return false;
    memset(c + d->n_cls, 0, (size_t)(n - d->n_cls) * sizeof(*c));
    d->cls = c;
    d->n_cls = n;
    return true;
}

// s = a*x + (1-a)*s for every class, x = the result's score (0 for classes not in its top
// list). The first result, every result when smoothing is off, and every result of an image
// input (each file is its own scene: a folder of unrelated pictures is no sequence) set s = x.
static void smooth(struct cc_detector *d, const struct cc_result *r)
{
    double a = (d->cfg.ewma_alpha == 0 || d->results == 1 || r->file) ? 1.0 : d->cfg.ewma_alpha;
    for (int i = 0; i < d->n_cls; i++)
        d->cls[i].score *= 1.0 - a;
    // An "unknown" answer shows no class: every score decays, as in a frame of nothing known.
    int n = r->unknown                     ? 0
            : r->n_top < 0                 ? 0
            : r->n_top > CC_RESULT_MAX_TOP ? CC_RESULT_MAX_TOP
                                           : r->n_top;
    for (int k = 0; k < n; k++) {
        const struct cc_result_class *t = &r->top[k];
        if (t->index < 0 || t->index >= MAX_CLASSES || !grow_classes(d, t->index))
            continue;
        struct detector_class *c = &d->cls[t->index];
        if (isfinite(t->score))
            c->score += a * t->score;
        const char *label = t->label ? t->label : "";
        if (!c->label || strcmp(c->label, label) != 0) {
            char *copy = cc_utf8_clean_dup(label);
            if (copy) {
                free(c->label);
                c->label = copy;
            }
        }
    }
}

// The smoothed top-1: highest score, lowest index on ties; -1 when no class was seen.
static int smoothed_best(const struct cc_detector *d)
{
    int best = -1;
    for (int i = 0; i < d->n_cls; i++)
        if (d->cls[i].label && (best < 0 || d->cls[i].score > d->cls[best].score))
            best = i;
    return best;
}

static struct cc_detection_class class_of(const struct cc_detector *d, int i)
{
    if (i < 0)
        return (struct cc_detection_class){-1, "", 0};
    return (struct cc_detection_class){i, d->cls[i].label ? d->cls[i].label : "", d->cls[i].score};
}

struct cc_detection_class cc_detector_active(const struct cc_detector *d)
{
    return class_of(d, d->active);
}

struct cc_detection cc_detector_update(struct cc_detector *d, const struct cc_result *r)
{
    struct cc_detection out = {
        .kind = CC_DETECTION_NONE, .now = class_of(d, -1), .previous = class_of(d, -1)};
    d->results++;
    smooth(d, r);
    double thr = d->cfg.threshold, hyst = d->cfg.hysteresis;
    int best = smoothed_best(d);
    if (best < 0)
        return out;
    double sb = d->cls[best].score;
    if (d->active < 0) {
        if (sb >= thr)
            out.kind = CC_DETECTION_ONSET;
    } else {
        double sa = d->cls[d->active].score;
        if (best != d->active && sb >= thr && sb > sa + hyst)
            out.kind = CC_DETECTION_CHANGE;
        else if (sa < thr - hyst)
            out.kind = CC_DETECTION_CLEAR;
    }
    if (out.kind == CC_DETECTION_CLEAR) {
        out.now = class_of(d, d->active);
        out.held_s = (double)(r->result_ns - d->active_since_ns) / 1e9;
        d->active = -1;
    } else if (out.kind != CC_DETECTION_NONE) {
        out.now = class_of(d, best);
        out.previous = class_of(d, d->active);
        d->active = best;
        d->active_since_ns = r->result_ns;
    }
    return out;
}
