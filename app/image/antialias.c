/* camclass — PIL's bilinear resampling with antialiasing (see antialias.h,
 * docs/PREPROCESSING.md §3b).
 *
 * Cost, 640×480 → 341×256 → centre 224×224 (scale 1.875, k = 4): the horizontal pass makes k
 * multiply-adds per output byte on the 422 source rows the crop needs, the vertical pass k per
 * output value. Both are integer (exact: PIL's rounding). The horizontal pass is scalar (each
 * output reads its own window) with k a compile-time constant for k <= 8 (shrinking up to 4×)
 * and the three channels sharing the weight loads: two thirds of the time. The vertical pass
 * is a loop over columns that the compiler vectorizes. Tried and not kept: the vertical pass
 * in float with the weights split in two 11-bit halves (exact, but no faster than the int32
 * multiplies SSE2 emulates).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "antialias.h"

#define HALF (1 << (CC_ANTIALIAS_BITS - 1)) // rounding: + 0.5 before the shift

/* ---------------------------------------------------------------------------------------- */
/* Tap tables                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* PIL's bilinear filter: the triangle 1 − |x| on (−1, 1), support 1. */
static double triangle(double x)
{
    if (x < 0.0)
        x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* PIL's window of output position d: the source positions [*xmin, *xmax) within the support
 * around its centre (d + 0.5)·scale, which it returns. Same expressions, in the same order, as
 * PIL's precompute_coeffs, so that the weights come out bit-identical. */
static double window(int in, int d, double scale, double support, int *xmin, int *xmax)
{
    double center = ((double)d + 0.5) * scale;
    int lo = (int)(center - support + 0.5); // truncation, as PIL's (int) cast
    int hi = (int)(center + support + 0.5);
    *xmin = lo < 0 ? 0 : lo;
    *xmax = hi > in ? in : hi;
    return center;
}

bool cc_antialias_taps_build(struct cc_antialias_taps *t, int in, int resized, int crop, int n)
{
    // The box (0, in) of PIL's resize: the filter is stretched by the scale when shrinking
    // (that is the antialiasing), never squeezed when enlarging.
    double scale = (double)in / (double)resized;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = 1.0 * filterscale;
    double ss = 1.0 / filterscale;
    // k: the widest window of these outputs, 2·support rounded down or up — not PIL's
    // 2·ceil(support) + 1: a 2× shrink needs 4 taps, not 5, an enlargement 2, not 3.
    int k = 1, xmin, xmax;
    for (int o = 0; o < n; o++) {
        window(in, crop + o, scale, support, &xmin, &xmax);
        k = xmax - xmin > k ? xmax - xmin : k;
    }
    size_t nw = (size_t)n * (size_t)k;
    if (n > t->cap_n) {
        int *first = realloc(t->first, sizeof(int) * (size_t)n);
        if (!first)
            return false;
        t->first = first;
        t->cap_n = n;
    }
    if (nw > t->cap_w) {
        int32_t *w = realloc(t->w, sizeof(int32_t) * nw);
        if (!w)
            return false;
        t->w = w;
        t->cap_w = nw;
    }
    double *wd = malloc(sizeof(double) * (size_t)k);
    if (!wd)
        return false;
    t->n = n;
    t->k = k;
    for (int o = 0; o < n; o++) {
        double center = window(in, crop + o, scale, support, &xmin, &xmax);
        int count = xmax - xmin; // <= k <= in
        double sum = 0.0;
        for (int j = 0; j < count; j++) {
            wd[j] = triangle(((double)(j + xmin) - center + 0.5) * ss);
            sum += wd[j];
        }
        // The window of k positions starts at xmin unless that would leave the axis; the
        // taps then sit further into it (zero weights around them are free to read).
        int f = xmin < in - k ? xmin : in - k;
        int32_t *w = t->w + (size_t)o * k;
        memset(w, 0, sizeof(int32_t) * (size_t)k);
        for (int j = 0; j < count; j++) {
            double v = sum != 0.0 ? wd[j] / sum : wd[j];
            w[xmin - f + j] = (int32_t)(0.5 + v * (double)(1 << CC_ANTIALIAS_BITS)); // v >= 0
        }
        t->first[o] = f;
    }
    free(wd);
    t->lo = t->first[0];
    t->hi = t->first[n - 1] + k;
    return true;
}

void cc_antialias_taps_finish(struct cc_antialias_taps *t)
{
    free(t->first);
    free(t->w);
    *t = (struct cc_antialias_taps){0};
}

/* ---------------------------------------------------------------------------------------- */
/* Passes                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* A weighted sum with HALF added, back to a byte: PIL's clip8 (weights are >= 0, so only the
 * upper bound can be passed, by rounding). */
static inline uint8_t to_byte(int32_t acc)
{
    int32_t v = acc >> CC_ANTIALIAS_BITS;
    return (uint8_t)(v > 255 ? 255 : v);
}

/* One output of the horizontal pass: the weighted sum of k bytes step apart. */
static inline __attribute__((always_inline)) uint8_t tap_sum(const int32_t *w, const int k,
                                                             const uint8_t *s, const int step)
{
    int32_t acc = HALF;
    for (int j = 0; j < k; j++)
        acc += w[j] * s[step * j];
    return to_byte(acc);
}

/* The passes over three channels, read from three planes (step 1) or one packed row (step 3,
 * channel c at s0 + c): the weights are loaded once for the three sums. Inlined with k a
 * constant for the usual widths (see DISPATCH_K), so that the tap loop unrolls completely. */
static inline __attribute__((always_inline)) void
hpass3_k(const struct cc_antialias_taps *t, const int k, const int step, const uint8_t *s0,
         const uint8_t *s1, const uint8_t *s2, uint8_t *restrict d0, uint8_t *restrict d1,
         uint8_t *restrict d2)
{
    const int32_t *w = t->w;
    for (int o = 0; o < t->n; o++, w += k) {
        size_t x = (size_t)step * (size_t)t->first[o];
        d0[o] = tap_sum(w, k, s0 + x, step);
        d1[o] = tap_sum(w, k, s1 + x, step);
        d2[o] = tap_sum(w, k, s2 + x, step);
    }
}

static inline __attribute__((always_inline)) void
hpass_k(const struct cc_antialias_taps *t, const int k, const uint8_t *src, uint8_t *restrict dst)
{
    const int32_t *w = t->w;
    for (int o = 0; o < t->n; o++, w += k)
        dst[o] = tap_sum(w, k, src + t->first[o], 1);
}

/* fn(t, k, ...) with k a compile-time constant for the usual window widths: 2 (enlarging),
 * 3–4 (shrinking up to 2×), up to 8 (4×); wider windows take the loop with k variable. */
#define DISPATCH_K(fn, t, ...)                                                                     \
    switch ((t)->k) {                                                                              \
    case 2:                                                                                        \
        fn(t, 2, __VA_ARGS__);                                                                     \
        break;                                                                                     \
    case 3:                                                                                        \
        fn(t, 3, __VA_ARGS__);                                                                     \
        break;                                                                                     \
    case 4:                                                                                        \
        fn(t, 4, __VA_ARGS__);                                                                     \
        break;                                                                                     \
    case 5:                                                                                        \
        fn(t, 5, __VA_ARGS__);                                                                     \
        break;                                                                                     \
    case 6:                                                                                        \
        fn(t, 6, __VA_ARGS__);                                                                     \
        break;                                                                                     \
    case 7:                                                                                        \
        fn(t, 7, __VA_ARGS__);                                                                     \
        break;                                                                                     \
    case 8:                                                                                        \
        fn(t, 8, __VA_ARGS__);                                                                     \
        break;                                                                                     \
    default:                                                                                       \
        fn(t, (t)->k, __VA_ARGS__);                                                                \
        break;                                                                                     \
    }

void cc_antialias_hpass(const struct cc_antialias_taps *t, const uint8_t *src, uint8_t *dst)
{
    DISPATCH_K(hpass_k, t, src, dst);
}

void cc_antialias_hpass_planar3(const struct cc_antialias_taps *t, const uint8_t *src0,
                                const uint8_t *src1, const uint8_t *src2, uint8_t *dst0,
                                uint8_t *dst1, uint8_t *dst2)
{
    DISPATCH_K(hpass3_k, t, 1, src0, src1, src2, dst0, dst1, dst2);
}

void cc_antialias_hpass_packed3(const struct cc_antialias_taps *t, const uint8_t *src,
                                uint8_t *dst0, uint8_t *dst1, uint8_t *dst2)
{
    DISPATCH_K(hpass3_k, t, 3, src, src + 1, src + 2, dst0, dst1, dst2);
}

void cc_antialias_vpass(const struct cc_antialias_taps *t, int o, const uint8_t *rows,
                        size_t stride, int n, float scale, float bias, float *dst)
{
    enum { CHUNK = 256 }; // columns per block: the accumulators stay in L1
    const int32_t *w = t->w + (size_t)o * t->k;
    int32_t acc[CHUNK];
    for (int x0 = 0; x0 < n; x0 += CHUNK) {
        int m = n - x0 < CHUNK ? n - x0 : CHUNK;
        for (int x = 0; x < m; x++)
            acc[x] = HALF;
        for (int j = 0; j < t->k; j++) {
            int32_t wj = w[j];
            if (wj == 0)
                continue;
            const uint8_t *r = rows + (size_t)j * stride + x0;
            for (int x = 0; x < m; x++)
                acc[x] += wj * r[x];
        }
        for (int x = 0; x < m; x++)
            dst[x0 + x] = (float)to_byte(acc[x]) * scale + bias;
    }
}
