/* camclass — the CPU backend's own f32 1x1 convolution (engine/cpu/f32_gemm.h) against the
 * reference conv2d (engine/cpu/ref_ops.h, NCHW: the NHWC input and output are transposed for
 * it).
 *
 * Shapes: odd and even channel counts (1, 3, 17, 33, 47, 48, 49, 95, ...: the panel edges of
 * every kernel), sizes 1 to 28 (pixel counts that are and are not multiples of the kernels'
 * 4, 6 and 7 pixels), mobilenet_v2's late 1x1 layers, ReLU6, ReLU, none and hardswish
 * (mobilenet_v3's expand convs), with and without a bias; every kernel family the host runs, 1 to 4
 * threads. The input's memory past its end and the output are poisoned first (signalling NaN,
 * poison.h): a read past the input or a value left unwritten fails, and a guard after the output
 * must stay poisoned. Tolerance: |ours - ref| <= 1e-4 x max|ref| (the sums differ only in order).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f32_gemm.h"
#include "poison.h"
#include "ref_ops.h"
#include "testutil.h"

enum { GUARD = 64 }; // poisoned floats after the output that must stay so

struct shape {
    int h, w, c, n;
    struct cc_act act;
    bool bias;
};

/* y (NHWC, h * w x n) = the reference conv2d 1x1 of x (NHWC). */
static void reference(const struct shape *s, const float *x, const float *wt, const float *bias,
                      float *y)
{
    size_t px = (size_t)s->h * s->w;
    float *xc = malloc(px * s->c * sizeof(float)), *yc = malloc(px * s->n * sizeof(float));
    for (size_t p = 0; p < px; p++)
        for (int k = 0; k < s->c; k++)
            xc[(size_t)k * px + p] = x[p * s->c + (size_t)k];
    struct cc_conv2d_desc d = {
        .c = s->c,
        .h = s->h,
        .w = s->w,
        .o = s->n,
        .kh = 1,
        .kw = 1,
        .ho = s->h,
        .wo = s->w,
        .attrs = {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
        .act = s->act,
    };
    float *scratch = malloc((cc_cpu_conv2d_scratch(&d) + 1) * sizeof(float));
    cc_cpu_conv2d(&d, xc, wt, bias, yc, 0, s->n, scratch);
    for (size_t p = 0; p < px; p++)
        for (int o = 0; o < s->n; o++)
            y[p * s->n + (size_t)o] = yc[(size_t)o * px + p];
    free(xc), free(yc), free(scratch);
}

static bool poisoned(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return bits == CC_POISON_F32_BITS;
}

/* Runs p on threads threads into got (poisoned first) and compares with want. */
static void check_run(const struct shape *s, struct cc_f32_pw *p, int threads, const float *want,
                      float *got)
{
    size_t n_out = (size_t)s->h * s->w * s->n;
    cc_poison_f32(got, (n_out + GUARD) * sizeof(float));
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    p->y = got;
    cc_f32_pw_run(p, pool);
    pthreadpool_destroy(pool);
    size_t worst = 0;
    double diff = tu_max_abs_diff(got, want, n_out, &worst);
    double tol = 1e-4 * tu_max_abs(want, n_out);
    CHECKF(diff <= tol && !isnan(diff),
           "%s, %d thread(s): %dx%d %d -> %d%s act %s [%g, %g]: |diff| %g > %g at pixel %zu "
           "channel %zu (got %g, want %g)",
           cc_stem_isa_name(p->isa), threads, s->h, s->w, s->c, s->n, s->bias ? " bias" : "",
           cc_act_kind_name(s->act.kind), s->act.min, s->act.max, diff, tol, worst / (size_t)s->n,
           worst % (size_t)s->n, got[worst], want[worst]);
    bool guard = true;
    for (size_t i = n_out; i < n_out + GUARD; i++)
        guard &= poisoned(got[i]);
    CHECKF(guard, "%s, %d thread(s): %dx%d %d -> %d wrote past its output",
           cc_stem_isa_name(p->isa), threads, s->h, s->w, s->c, s->n);
}

/* Shape s with isa's kernels on 1 to 4 threads against the reference. */
static void check_shape(const struct shape *s, struct tu_rng *r, enum cc_stem_isa isa)
{
    size_t px = (size_t)s->h * s->w, n_in = px * s->c, n_out = px * s->n;
    float *x = malloc((n_in + GUARD) * sizeof(float)), *wt = malloc((size_t)s->n * s->c * 4);
    float *bias = s->bias ? malloc((size_t)s->n * sizeof(float)) : NULL;
    float *want = malloc(n_out * sizeof(float)), *got = malloc((n_out + GUARD) * sizeof(float));
    cc_poison_f32(x + n_in, GUARD * sizeof(float));
    tu_rng_fill(r, x, n_in, -2.0f, 2.0f);
    float gain = 2.0f / sqrtf((float)s->c);
    tu_rng_fill(r, wt, (size_t)s->n * s->c, -gain, gain);
    if (bias)
        tu_rng_fill(r, bias, (size_t)s->n, -0.5f, 0.5f);
    reference(s, x, wt, bias, want);
    for (int threads = 1; threads <= 4; threads++) {
        struct cc_f32_pw p;
        struct cc_error err = {0};
        if (!CHECKF(
                cc_f32_pw_init(&p, wt, bias, px, s->c, s->n, s->act, isa, (size_t)threads, &err),
                "init: %s", err.msg))
            break;
        p.x = x;
        check_run(s, &p, threads, want, got);
        cc_f32_pw_finish(&p);
    }
    free(x), free(wt), free(bias), free(want), free(got);
}

/* CAMCLASS_CPU_PW's values (the CPU backend refuses its create with this line). */
static void check_mode(void)
{
    struct cc_stem_mode mode;
    struct cc_error err = {0};
    CHECK(cc_f32_pw_mode_parse(NULL, &mode, &err) && mode.kind == CC_STEM_MEASURE);
    CHECK(cc_f32_pw_mode_parse("off", &mode, &err) && mode.kind == CC_STEM_OFF);
    CHECK(cc_f32_pw_mode_parse("c", &mode, &err) && mode.kind == CC_STEM_ON &&
          mode.isa == CC_STEM_C);
    CHECK(!cc_f32_pw_mode_parse("fast", &mode, &err));
    CHECKF(!strcmp(err.msg, "CAMCLASS_CPU_PW=\"fast\" is not a 1x1 kernel mode: use measure (the "
                            "default), off, on, or a kernel family (avx512, avx2, c)"),
           "error: %s", err.msg);
    CHECK(!cc_f32_pw_mode_parse("neon", &mode, &err) || cc_stem_isa_runs(CC_STEM_NEON));
}

/* mobilenet_v2's late 1x1 layers, the panel edges, mobilenet_v3's expands: [h, w, c, n]. */
static const int fixed[][4] = {
    {7, 7, 960, 160},  {7, 7, 160, 960},  {7, 7, 320, 1280}, {14, 14, 96, 576}, {14, 14, 576, 96},
    {1, 1, 1, 1},      {1, 3, 2, 47},     {2, 3, 5, 48},     {3, 5, 17, 49},    {28, 28, 7, 95},
    {28, 28, 40, 240}, {14, 14, 80, 480}, // mobilenet_v3's (the second with hardswish)
};

int main(void)
{
    struct tu_rng r;
    tu_rng_seed(&r, 26);
    check_mode();
    const struct cc_act acts[] = {cc_act_relu6(), cc_act_relu(), cc_act_none(),
                                  cc_act_of(CC_ACT_HARDSWISH)};
    for (int isa = 0; isa < CC_STEM_ISA_COUNT; isa++) {
        struct cc_f32_pw probe;
        struct cc_error err = {0};
        const float one = 1.0f;
        if (!cc_f32_pw_init(&probe, &one, NULL, 1, 1, 1, cc_act_none(), (enum cc_stem_isa)isa, 1,
                            &err)) {
            printf("# %s: %s\n", cc_stem_isa_name((enum cc_stem_isa)isa), err.msg);
            continue;
        }
        cc_f32_pw_finish(&probe);
        int cases = 0;
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, cases++) {
            struct shape s = {fixed[i][0], fixed[i][1], fixed[i][2],
                              fixed[i][3], acts[i % 4], i % 2 == 0};
            check_shape(&s, &r, (enum cc_stem_isa)isa);
        }
        static const int channels[] = {1, 3, 8, 16, 17, 24, 33, 47, 64, 97};
        for (int i = 0; i < 30; i++, cases++) {
            struct shape s = {tu_rng_range(&r, 1, 28),          tu_rng_range(&r, 1, 28),
                              channels[tu_rng_range(&r, 0, 9)], channels[tu_rng_range(&r, 0, 9)],
                              acts[tu_rng_range(&r, 0, 3)],     tu_rng_range(&r, 0, 1)};
            check_shape(&s, &r, (enum cc_stem_isa)isa);
        }
        printf("# %s: %d shapes x 1-4 threads\n", cc_stem_isa_name((enum cc_stem_isa)isa), cases);
    }
    return tu_exit_code();
}
