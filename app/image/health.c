/* camclass — camera health checks (health.h): statistics of one luma picture, and per condition
 * a two-state machine with a hold time. */
#include "health.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define THUMB 16            // the moved check's thumbnail is THUMB x THUMB block means
#define BASELINE_FRAMES 10  // the blur baseline is trusted after this many frames
#define BASELINE_ALPHA 0.05 // weight of a new frame in the running blur baseline
#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

// One condition's state: on or off, and since when the frames have said the opposite.
struct condition {
    bool active;
    bool changing;        // the frames disagree with active, since change_since
    int64_t change_since; // frame time of the first disagreeing frame
};

struct cc_health {
    struct cc_health_config cfg;
    struct condition cond[CC_HEALTH_COUNT];
    double baseline;          // running Laplacian variance of sharp frames; valid after n_baseline
    int n_baseline;           // frames that went into the baseline (capped at BASELINE_FRAMES)
    float ref[THUMB * THUMB]; // the reference thumbnail, zero mean, unit norm; valid if has_ref
    bool has_ref;
    int64_t healthy_since; // frame time since which no condition was seen; -1: not healthy now
    uint64_t last_hash;    // FNV-1a of the previous picture
    int64_t last_t;        // its frame time; -1 before the first
};

struct cc_health_config cc_health_defaults(void)
{
    return (struct cc_health_config){
        .hold_s = 2.0,
        .covered_std = 5.0,
        .dark_mean = 20.0,
        .blur_ratio = 0.25,
        .moved_corr = 0.5,
    };
}

const char *cc_health_kind_name(enum cc_health_kind k)
{
    static const char *const names[CC_HEALTH_COUNT] = {"covered", "dark", "blurred", "frozen",
                                                       "moved"};
    return k >= 0 && k < CC_HEALTH_COUNT ? names[k] : "?";
}

struct cc_health *cc_health_create(const struct cc_health_config *cfg, struct cc_error *err)
{
    if (!(cfg->hold_s >= 0) || !(cfg->covered_std >= 0) || !(cfg->dark_mean >= 0) ||
        !(cfg->blur_ratio >= 0 && cfg->blur_ratio <= 1) ||
        !(cfg->moved_corr >= -1 && cfg->moved_corr <= 1)) {
        cc_error_set(err, "camera health: a threshold is out of range (hold >= 0 s, ratios 0..1)");
        return NULL;
    }
    struct cc_health *h = calloc(1, sizeof(*h));
    if (!h) {
        cc_error_set(err, "camera health: out of memory");
        return NULL;
    }
    h->cfg = *cfg;
    h->healthy_since = -1;
    h->last_t = -1;
    return h;
}

void cc_health_destroy(struct cc_health *h)
{
    free(h);
}

bool cc_health_active(const struct cc_health *h, enum cc_health_kind k)
{
    return k >= 0 && k < CC_HEALTH_COUNT && h->cond[k].active;
}

void cc_health_reset_reference(struct cc_health *h)
{
    h->has_ref = false;
    h->healthy_since = -1; // the new one is taken after hold_s of healthy frames; a moved
                           // condition on now ends through its hold like any other
}

// --- Statistics -----------------------------------------------------------------------------

static void mean_std(const uint8_t *p, int w, int hgt, int stride, double *mean, double *sd)
{
    double s = 0, s2 = 0;
    for (int y = 0; y < hgt; y++)
        for (int x = 0; x < w; x++) {
            double v = p[(size_t)y * stride + x];
            s += v;
            s2 += v * v;
        }
    double n = (double)w * hgt;
    *mean = s / n;
    double var = s2 / n - *mean * *mean;
    *sd = var > 0 ? sqrt(var) : 0;
}

// Variance of the 4-neighbour Laplacian over the interior pixels.
static double laplacian_var(const uint8_t *p, int w, int hgt, int stride)
{
    double s = 0, s2 = 0;
    for (int y = 1; y < hgt - 1; y++) {
        const uint8_t *r = p + (size_t)y * stride;
        for (int x = 1; x < w - 1; x++) {
            double v = 4.0 * r[x] - r[x - 1] - r[x + 1] - r[x - stride] - r[x + stride];
            s += v;
            s2 += v * v;
        }
    }
    double n = (double)(w - 2) * (hgt - 2), m = s / n;
    return s2 / n - m * m;
}

static uint64_t picture_hash(const uint8_t *p, int w, int hgt, int stride)
{
    uint64_t x = FNV_OFFSET;
    for (int y = 0; y < hgt; y++)
        for (int i = 0; i < w; i++)
            x = (x ^ p[(size_t)y * stride + i]) * FNV_PRIME;
    return x;
}

// The THUMB x THUMB block means, made zero-mean and unit-norm. False for a flat picture.
static bool thumbnail(const uint8_t *p, int w, int hgt, int stride, float *t)
{
    double total = 0;
    for (int by = 0; by < THUMB; by++)
        for (int bx = 0; bx < THUMB; bx++) {
            int y0 = by * hgt / THUMB, y1 = (by + 1) * hgt / THUMB;
            int x0 = bx * w / THUMB, x1 = (bx + 1) * w / THUMB;
            double s = 0;
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++)
                    s += p[(size_t)y * stride + x];
            int n = (y1 - y0) * (x1 - x0);
            t[by * THUMB + bx] = n > 0 ? (float)(s / n) : 0.0f;
            total += t[by * THUMB + bx];
        }
    double mean = total / (THUMB * THUMB), norm = 0;
    for (int i = 0; i < THUMB * THUMB; i++) {
        t[i] -= (float)mean;
        norm += (double)t[i] * t[i];
    }
    if (norm < 1e-6)
        return false;
    for (int i = 0; i < THUMB * THUMB; i++)
        t[i] = (float)(t[i] / sqrt(norm));
    return true;
}

// --- Conditions -----------------------------------------------------------------------------

// Feeds one frame's verdict to a condition; true (with ev filled) when the condition changes.
static bool step(struct cc_health *h, enum cc_health_kind k, bool now, int64_t t,
                 struct cc_health_event *ev)
{
    struct condition *c = &h->cond[k];
    if (now == c->active) {
        c->changing = false;
        return false;
    }
    if (!c->changing) {
        c->changing = true;
        c->change_since = t;
    }
    if ((double)(t - c->change_since) < h->cfg.hold_s * 1e9)
        return false;
    c->active = now;
    c->changing = false;
    *ev = (struct cc_health_event){k, now, c->change_since};
    return true;
}

// The moved check's verdict: compares with the reference, or takes one after hold_s healthy.
static bool moved_now(struct cc_health *h, const float *thumb, bool seen_bad, int64_t t,
                      double *similarity)
{
    *similarity = 1;
    if (seen_bad) {
        h->healthy_since = -1;
        return h->cond[CC_HEALTH_MOVED].active; // a flat or blurred picture says nothing
    }
    if (h->healthy_since < 0)
        h->healthy_since = t;
    if (!h->has_ref) {
        if ((double)(t - h->healthy_since) >= h->cfg.hold_s * 1e9) {
            memcpy(h->ref, thumb, sizeof(h->ref));
            h->has_ref = true;
        }
        return false;
    }
    double dot = 0;
    for (int i = 0; i < THUMB * THUMB; i++)
        dot += (double)thumb[i] * h->ref[i];
    *similarity = dot;
    return dot < h->cfg.moved_corr;
}

int cc_health_update(struct cc_health *h, const uint8_t *luma, int w, int hgt, int stride,
                     int64_t t_ns, struct cc_health_event *ev, struct cc_health_stats *st)
{
    struct cc_health_stats s = {0};
    mean_std(luma, w, hgt, stride, &s.mean, &s.std);
    s.laplacian = laplacian_var(luma, w, hgt, stride);
    uint64_t hash = picture_hash(luma, w, hgt, stride);
    s.identical = h->last_t >= 0 && hash == h->last_hash;
    bool covered = s.std < h->cfg.covered_std, dark = s.mean < h->cfg.dark_mean;
    bool trusted = h->n_baseline >= BASELINE_FRAMES;
    bool blurred = !covered && !dark && trusted && s.laplacian < h->cfg.blur_ratio * h->baseline;
    if (!covered && !dark && !blurred) { // a sharp picture teaches the baseline
        h->baseline = h->n_baseline == 0
                          ? s.laplacian
                          : (1 - BASELINE_ALPHA) * h->baseline + BASELINE_ALPHA * s.laplacian;
        h->n_baseline += h->n_baseline < BASELINE_FRAMES;
    }
    s.baseline = trusted ? h->baseline : 0;
    float thumb[THUMB * THUMB];
    bool flat = !thumbnail(luma, w, hgt, stride, thumb) || covered || dark;
    bool moved = moved_now(h, thumb, flat || blurred, t_ns, &s.similarity);

    int n = 0;
    n += step(h, CC_HEALTH_COVERED, covered, t_ns, &ev[n]);
    n += step(h, CC_HEALTH_DARK, dark, t_ns, &ev[n]);
    n += step(h, CC_HEALTH_BLURRED, covered || dark ? h->cond[CC_HEALTH_BLURRED].active : blurred,
              t_ns, &ev[n]);
    if (t_ns > h->last_t || !s.identical) // the same frame delivered twice is not frozen
        n += step(h, CC_HEALTH_FROZEN, s.identical, t_ns, &ev[n]);
    n += step(h, CC_HEALTH_MOVED, moved, t_ns, &ev[n]);
    h->last_hash = hash;
    h->last_t = t_ns;
    if (st)
        *st = s;
    return n;
}

void cc_health_luma_from_tensor(const float *chw, int w, int h, const float mean[3],
                                const float std[3], bool bgr, uint8_t *luma)
{
    static const float weight[3] = {0.299f, 0.587f, 0.114f}; // R, G, B
    size_t plane = (size_t)w * h;
    for (size_t i = 0; i < plane; i++) {
        float y = 0;
        for (int c = 0; c < 3; c++) {
            float v = (chw[c * plane + i] * std[c] + mean[c]) * 255.0f;
            y += weight[bgr ? 2 - c : c] * v;
        }
        luma[i] = (uint8_t)(y < 0 ? 0 : y > 255 ? 255 : lrintf(y));
    }
}
