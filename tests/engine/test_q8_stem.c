/* camclass — the own int8 stem (engine/cpu/q8_stem.h) against what the per-layer path computes:
 * XNNPACK's f32 -> QS8 convert of the input (XNNPACK's own operator, called here: the stem's
 * fused quantization must equal it bit for bit) and XNNPACK's QC8 convolution written out in C
 * (int32 sums of (x - zero point) x weight plus the f32 bias rounded to int32 at sx * sw,
 * requantized by (float)acc * (sx * sw / sy) in f32 rounded half to even, plus the zero point,
 * clamped; as test_q8_gemm.c's).
 *
 * - The quantizers (each family's) against XNNPACK's convert on values near every rounding tie
 *   of a few quantizations, out of range both ways and infinite.
 * - Stems: mobilenet_v2's (224x224, 3 -> 32, padding 1), a wide one (9x320), then every input
 *   size 1..224 in both directions across the cases (odd and even, square and not), paddings
 *   0..2 (top and left; bottom and right as the output size gives), output channels 32 and odd
 *   counts (1..70), ReLU6's clamp and the full range, with and without a bias; every kernel
 *   family the host runs, 1 to 4 threads, the output poisoned with two different values (a
 *   value left unwritten fails one of them), the input in a buffer of exactly its size.
 *   Tolerance: none.
 * - NaN, where XNNPACK's kernels disagree among themselves: every family as
 *   cc_q8_stem_quantize_one (the high end), at every place of a vector and its tail.
 * - The refusals: a bad CAMCLASS_CPU_Q8STEM value, a family this host lacks, a desc that is not
 *   a stem.
 *
 *     test_q8_stem [FAMILY=yes|no]...
 *
 * With arguments, only the families named =yes (each of which must run on this host, and each
 * named =no must not: q8_families.h, as test_q8_gemm); the one-by-one quantizer always.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnnpack.h>

#include "q8_families.h"
#include "q8_stem.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------
 * XNNPACK's convert, the reference for the quantization
 */

/* x (n values) through XNNPACK's f32 -> QS8 convert operator into q; false on an XNNPACK error. */
static bool xnn_quantize(const float *x, size_t n, struct cc_act_quant qx, int8_t *q)
{
    xnn_operator_t op = NULL;
    // XNNPACK reads up to XNN_EXTRA_BYTES past its input.
    float *in = calloc(n + XNN_EXTRA_BYTES / sizeof(float) + 1, sizeof(float));
    memcpy(in, x, n * sizeof(float));
    bool ok = xnn_create_convert_nc_f32_qs8(1, 1, 1, qx.scale, (int8_t)qx.zero_point, INT8_MIN,
                                            INT8_MAX, 0, &op) == xnn_status_success &&
              xnn_setup_convert_nc_f32_qs8(op, n, in, q, NULL) == xnn_status_success &&
              xnn_run_operator(op, NULL) == xnn_status_success;
    xnn_delete_operator(op);
    free(in);
    return CHECKF(ok, "XNNPACK's convert (scale %g, zero point %d) failed", (double)qx.scale,
                  qx.zero_point);
}

static void quantize_one_each(const float *x, int n, int8_t *q, const struct cc_q8_stem_quant *p)
{
    for (int i = 0; i < n; i++)
        q[i] = cc_q8_stem_quantize_one(x[i], p);
}

/* Values around the ties (k + 1/2) * scale of every k that reaches the int8 range, and beyond. */
static size_t tie_values(float scale, int zp, float *x)
{
    size_t n = 0;
    for (int k = -140 - zp; k <= 140 - zp; k++) {
        float t = ((float)k + 0.5f) * scale;
        x[n++] = t;
        x[n++] = nextafterf(t, INFINITY);
        x[n++] = nextafterf(t, -INFINITY);
        x[n++] = (float)k * scale;
    }
    x[n++] = INFINITY;
    x[n++] = -INFINITY;
    x[n++] = 1e30f;
    x[n++] = -1e30f;
    return n;
}

/* NaN, where XNNPACK's convert has no one answer (its x86-64 kernels give 127, the high end;
 * its AArch64 ones convert it to 0, so the zero point): every family's quantizer as
 * cc_q8_stem_quantize_one, the high end, at every place of a vector and its tail. */
static void check_quantizers_nan(const bool families[CC_FQ8_ISA_COUNT])
{
    enum { N = 40 };
    struct cc_q8_stem_quant p = {1.0f / 0.0186584f, -128 + 14, 127 + 14, -14};
    for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++) {
        if (!families[isa] || !cc_q8_stem_isa_runs((enum cc_fq8_isa)isa))
            continue;
        for (int at = 0; at < N; at++) {
            float x[N];
            int8_t got[N];
            for (int i = 0; i < N; i++)
                x[i] = (float)(i - N / 2) * 0.05f;
            x[at] = at % 2 ? NAN : -NAN;
            cc_q8_stem_quantizer_of((enum cc_fq8_isa)isa)(x, N, got, &p);
            CHECKF(got[at] == cc_q8_stem_quantize_one(x[at], &p),
                   "quantizer %s: NaN at %d gave %d, want %d (the high end)",
                   cc_fq8_isa_name((enum cc_fq8_isa)isa), at, got[at],
                   cc_q8_stem_quantize_one(x[at], &p));
        }
    }
}

static void check_quantizers(const bool families[CC_FQ8_ISA_COUNT])
{
    static const struct cc_act_quant quants[] = {
        {0.0186584f, -14}, {0.017f, 0}, {1.0f / 64, 3}, {0.0521f, -128}, {0.0079f, 127}};
    enum { MAX = 4 * 300 + 4 };
    float x[MAX];
    int8_t want[MAX], got[MAX];
    for (size_t i = 0; i < sizeof(quants) / sizeof(quants[0]); i++) {
        struct cc_act_quant qx = quants[i];
        size_t n = tie_values(qx.scale, qx.zero_point, x);
        if (!xnn_quantize(x, n, qx, want))
            continue;
        struct cc_q8_stem_quant p = {1.0f / qx.scale, (float)(-128 - qx.zero_point),
                                     (float)(127 - qx.zero_point), qx.zero_point};
        for (int isa = 0; isa <= CC_FQ8_ISA_COUNT; isa++) {
            bool one = isa == CC_FQ8_ISA_COUNT;
            if (!one && (!families[isa] || !cc_q8_stem_isa_runs((enum cc_fq8_isa)isa)))
                continue;
            cc_q8_stem_quantizer f =
                one ? quantize_one_each : cc_q8_stem_quantizer_of((enum cc_fq8_isa)isa);
            // Every length up to 40 from every start (the vector tails), then all at once.
            for (size_t start = 0; start + 40 <= n; start += 37)
                for (int len = 0; len <= 40; len++) {
                    memset(got + start, 0x55, (size_t)len + 1);
                    f(x + start, len, got + start, &p);
                    bool same = !memcmp(got + start, want + start, (size_t)len);
                    if (!CHECKF(same && got[start + len] == 0x55,
                                "quantizer %s, scale %g zp %d: values %zu..+%d %s",
                                isa == CC_FQ8_ISA_COUNT ? "one by one"
                                                        : cc_fq8_isa_name((enum cc_fq8_isa)isa),
                                (double)qx.scale, qx.zero_point, start, len,
                                same ? "wrote past the end" : "differ from XNNPACK's"))
                        return;
                }
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * Stems
 */

/* A random stem and its buffers (owned: free_stem). */
struct stem {
    struct cc_q8_stem_desc d;
    int8_t *w;
    float *sw, *bias, *x;
};

static void make_stem(struct stem *s, struct tu_rng *r, int h, int w, int pad, int n)
{
    int pad_end = tu_rng_range(r, 0, 1) ? pad : pad + 1; // symmetric, or one more at the end
    if (h + pad + pad_end < 3 || w + pad + pad_end < 3)
        pad_end = 3; // a kernel's worth: the output has a row and a column
    s->w = malloc((size_t)n * 27);
    for (int i = 0; i < n * 27; i++)
        s->w[i] = (int8_t)tu_rng_range(r, -127, 127);
    s->sw = malloc((size_t)n * sizeof(float));
    tu_rng_fill(r, s->sw, (size_t)n, 0.002f, 0.02f);
    s->bias = NULL;
    if (tu_rng_range(r, 0, 3)) {
        s->bias = malloc((size_t)n * sizeof(float));
        tu_rng_fill(r, s->bias, (size_t)n, -1.0f, 1.0f);
    }
    // The input as preprocessing gives it (ImageNet-normalized, about -2.2..2.7), quantized
    // over about that range.
    struct cc_act_quant qx = {tu_rng_uniform(r, 0.015f, 0.025f), tu_rng_range(r, -20, 20)};
    s->x = malloc((size_t)3 * h * w * sizeof(float));
    tu_rng_fill(r, s->x, (size_t)3 * h * w, -2.6f, 2.8f);
    // About 100 output steps for a typical sum: the requantization neither saturates nor
    // vanishes.
    float typical = 100.0f * 70.0f * sqrtf(27.0f) * qx.scale * 0.01f;
    struct cc_act_quant qy = {typical / tu_rng_uniform(r, 40, 120), tu_rng_range(r, -128, 20)};
    bool relu6 = tu_rng_range(r, 0, 2) != 0;
    float hi6 = nearbyintf(6.0f / qy.scale) + (float)qy.zero_point;
    s->d = (struct cc_q8_stem_desc){
        .h = h,
        .w = w,
        .ho = (h + pad + pad_end - 3) / 2 + 1,
        .wo = (w + pad + pad_end - 3) / 2 + 1,
        .n = n,
        .pad_top = pad,
        .pad_left = pad,
        .weights = s->w,
        .sw = s->sw,
        .bias = s->bias,
        .qx = qx,
        .qy = qy,
        .lo = relu6 ? (int8_t)qy.zero_point : INT8_MIN,
        .hi = relu6 && hi6 < 127.0f ? (int8_t)hi6 : INT8_MAX,
    };
}

static void free_stem(struct stem *s)
{
    free(s->w), free(s->sw), free(s->bias), free(s->x);
}

/* XNNPACK's QC8 convolution of the quantized NCHW input xq, value by value, into y (NHWC). */
static void reference(const struct cc_q8_stem_desc *d, const int8_t *xq, int8_t *y)
{
    for (int oy = 0; oy < d->ho; oy++)
        for (int ox = 0; ox < d->wo; ox++)
            for (int o = 0; o < d->n; o++) {
                int64_t acc = 0;
                for (int c = 0; c < 3; c++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = 2 * oy - d->pad_top + ky, ix = 2 * ox - d->pad_left + kx;
                            if (iy < 0 || iy >= d->h || ix < 0 || ix >= d->w)
                                continue; // the padding: the zero point, (zx - zx) * w
                            acc += (xq[((size_t)c * d->h + iy) * d->w + ix] - d->qx.zero_point) *
                                   d->weights[((o * 3 + c) * 3 + ky) * 3 + kx];
                        }
                if (d->bias)
                    acc +=
                        (int64_t)nearbyint((double)d->bias[o] / ((double)d->qx.scale * d->sw[o]));
                float s = d->qx.scale * d->sw[o];
                s = s / d->qy.scale;
                float v = nearbyintf((float)(int32_t)acc * s) + (float)d->qy.zero_point;
                y[((size_t)oy * d->wo + ox) * d->n + o] = (int8_t)(v < d->lo   ? d->lo
                                                                   : v > d->hi ? d->hi
                                                                               : v);
            }
}

/* Stem s with isa's kernels on 1 to 4 threads against want. */
static void check_stem_isa(const struct stem *s, const int8_t *want, enum cc_fq8_isa isa)
{
    const struct cc_q8_stem_desc *d = &s->d;
    size_t n_out = (size_t)d->ho * d->wo * d->n;
    int8_t *got = malloc(n_out);
    for (int threads = 1; threads <= 4; threads++) {
        struct cc_q8_stem p;
        struct cc_error err = {0};
        if (!CHECKF(cc_q8_stem_init(&p, d, isa, &err), "init: %s", err.msg)) {
            cc_q8_stem_finish(&p);
            break;
        }
        pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
        for (int poison = 0; poison < 2; poison++) {
            memset(got, poison ? 0x55 : 0xaa, n_out);
            cc_q8_stem_run(&p, s->x, got, pool);
            size_t bad = 0, first = 0;
            for (size_t i = n_out; i-- > 0;)
                if (got[i] != want[i])
                    bad++, first = i;
            CHECKF(!bad,
                   "%s, %d thread(s): %dx%d pad %d -> %dx%d x %d%s: %zu of %zu values differ, "
                   "first at pixel (%zu, %zu) output %zu (got %d, want %d)",
                   cc_fq8_isa_name(isa), threads, d->h, d->w, d->pad_top, d->ho, d->wo, d->n,
                   d->bias ? "" : " no bias", bad, n_out, first / d->n / d->wo,
                   first / d->n % d->wo, first % d->n, got[first], want[first]);
        }
        pthreadpool_destroy(pool);
        cc_q8_stem_finish(&p);
    }
    free(got);
}

/* Stem s with every family wanted (that the host runs); false when the reference could not be
 * made. */
static bool check_stem(const struct stem *s, const bool families[CC_FQ8_ISA_COUNT])
{
    const struct cc_q8_stem_desc *d = &s->d;
    size_t n_in = (size_t)3 * d->h * d->w, n_out = (size_t)d->ho * d->wo * d->n;
    int8_t *xq = malloc(n_in), *want = malloc(n_out);
    bool ok = xnn_quantize(s->x, n_in, d->qx, xq);
    if (ok) {
        reference(d, xq, want);
        for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++)
            if (families[isa] && cc_q8_stem_isa_runs((enum cc_fq8_isa)isa))
                check_stem_isa(s, want, (enum cc_fq8_isa)isa);
    }
    free(xq), free(want);
    return ok;
}

static void check_stems(const bool families[CC_FQ8_ISA_COUNT])
{
    struct tu_rng r;
    tu_rng_seed(&r, 2026);
    struct stem s;
    make_stem(&s, &r, 224, 224, 1, 32); // mobilenet_v2's
    s.d.ho = s.d.wo = 112;
    check_stem(&s, families);
    free_stem(&s);
    // Wider than the AVX2 kernel widens a tile's rows at once for (q8_gemm_avx2.c's ROWS: up to
    // 127 output columns): its path of windows widened a register block at a time.
    make_stem(&s, &r, 9, 320, 1, 33);
    check_stem(&s, families);
    free_stem(&s);
    static const int outs[] = {32, 1, 3, 5, 16, 17, 24, 31, 33, 48, 64, 70};
    int cases = 1;
    for (int size = 1; size <= 224; size += size < 40 ? 1 : 13, cases++) {
        int h = size, w = tu_rng_range(&r, 0, 2) ? size : tu_rng_range(&r, 1, 224);
        make_stem(&s, &r, h, w, tu_rng_range(&r, 0, 2),
                  outs[tu_rng_range(&r, 0, (int)(sizeof(outs) / sizeof(outs[0])) - 1)]);
        bool ok = check_stem(&s, families);
        free_stem(&s);
        if (!ok || tu_failures())
            break;
    }
    printf("%d stems, families:", cases);
    for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++)
        if (families[isa] && cc_q8_stem_isa_runs((enum cc_fq8_isa)isa))
            printf(" %s", cc_fq8_isa_name((enum cc_fq8_isa)isa));
    printf("\n");
}

/* ------------------------------------------------------------------------------------------
 * Refusals
 */

static void check_refusals(void)
{
    struct cc_fq8_mode mode;
    struct cc_error err = {0};
    CHECKF(!cc_q8_stem_mode_parse("fast", &mode, &err) &&
               strstr(err.msg, "CAMCLASS_CPU_Q8STEM=\"fast\"") && strstr(err.msg, "neon, c"),
           "bad mode: %s", err.msg);
    CHECKF(cc_q8_stem_mode_parse("c", &mode, &err) && mode.kind == CC_FUSED_ON &&
               mode.isa == CC_FQ8_C,
           "c: %s", err.msg);
    CHECKF(cc_q8_stem_mode_parse(NULL, &mode, &err) && mode.kind == CC_FUSED_MEASURE &&
               mode.isa == cc_q8_stem_isa_best(),
           "unset: %s", err.msg);
    // A family this host does not run (the other architecture's, at least): refused by name.
    enum cc_fq8_isa absent = CC_FQ8_C;
    for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++)
        absent = cc_q8_stem_isa_runs((enum cc_fq8_isa)isa) ? absent : (enum cc_fq8_isa)isa;
    const char *name = cc_fq8_isa_name(absent);
    char no[32];
    snprintf(no, sizeof(no), "no %s kernels", name);
    CHECKF(absent != CC_FQ8_C && !cc_q8_stem_mode_parse(name, &mode, &err) && strstr(err.msg, no),
           "%s: %s", name, err.msg);
    struct tu_rng r;
    tu_rng_seed(&r, 1);
    struct stem s;
    make_stem(&s, &r, 8, 8, 1, 4);
    struct cc_q8_stem p;
    s.d.qy.scale = 0;
    CHECKF(!cc_q8_stem_init(&p, &s.d, CC_FQ8_C, &err) && strstr(err.msg, "scale"), "scale: %s",
           err.msg);
    cc_q8_stem_finish(&p);
    s.d.qy.scale = 1;
    s.d.ho = 0;
    CHECKF(!cc_q8_stem_init(&p, &s.d, CC_FQ8_C, &err) && strstr(err.msg, "below 1"), "size: %s",
           err.msg);
    cc_q8_stem_finish(&p);
    free_stem(&s);
}

int main(int argc, char **argv)
{
    if (!CHECK(xnn_initialize(NULL) == xnn_status_success))
        return tu_exit_code();
    bool families[CC_FQ8_ISA_COUNT];
    q8_families_wanted(argc, argv, cc_q8_stem_isa_runs, families);
    check_refusals();
    check_quantizers(families);
    check_quantizers_nan(families);
    check_stems(families);
    return tu_exit_code();
}
