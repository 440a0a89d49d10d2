/* camclass — the int8 1x1 GEMM (engine/cpu/q8_gemm.h) against a plain C composition, written
 * here, of what XNNPACK's QC8 convolution computes (int32 sums of (x - zero point) x weight
 * plus the f32 bias rounded to int32 at sx * sw, requantized by (float)acc * (sx * sw / sy)
 * in f32 rounded half to even, plus the zero point, clamped).
 *
 * Layers: mobilenet_v2's late 1x1 convs (14x14 and 7x7, 64 to 1280 channels) and its
 * classifier (1 pixel, 1280 -> 1000), then random ones: 1 to 200 pixels, odd input and output
 * counts (the 4-input groups' tails, partial vectors and panels), random int8 weights, scales,
 * zero points, clamps and biases (or none), half of them with weights in -127..127 only (the
 * layers AVX2's sign kernel takes where they have 16 to 63 pixels, checked to have run; and its
 * largest pairs, x -128 against w -127); every kernel family the host runs (portable C,
 * AVX2, AVX-VNNI, AVX-512 VNNI; NEON, NEON dot product), 1 to 4 threads, the output
 * poisoned with two different values (a value left unwritten fails one of them), the input in
 * a buffer of exactly its size. Tolerance: none (exact).
 *
 *     test_q8_gemm [FAMILY=yes|no]...
 *
 * With arguments, only the families named =yes, each of which must run on this host, and each
 * named =no must not (q8_families.h: the run-time choice, as test_fused_q8).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q8_families.h"
#include "q8_gemm.h"
#include "testutil.h"

/* A random layer and its buffers (owned: free_layer). */
struct layer {
    struct cc_q8_gemm_desc d;
    int8_t *w, *x;
    float *sw, *bias;
};

static int8_t *random_i8(struct tu_rng *r, size_t n)
{
    int8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (int8_t)tu_rng_range(r, -128, 127);
    return p;
}

/* A random layer of m pixels, k -> n; full_w: its weights in -128..127 with w[0] -128 (a
 * layer AVX2's sign kernel cannot take), else in -127..127. */
static void make_layer(struct layer *l, struct tu_rng *r, int m, int k, int n, bool full_w)
{
    l->w = random_i8(r, (size_t)n * k);
    for (size_t i = 0; i < (size_t)n * k; i++)
        l->w[i] = full_w || l->w[i] != INT8_MIN ? l->w[i] : -127;
    l->w[0] = full_w ? INT8_MIN : l->w[0];
    l->x = random_i8(r, (size_t)m * k);
    l->sw = malloc((size_t)n * sizeof(float));
    tu_rng_fill(r, l->sw, (size_t)n, 0.002f, 0.02f);
    l->bias = NULL;
    if (tu_rng_range(r, 0, 3)) {
        l->bias = malloc((size_t)n * sizeof(float));
        tu_rng_fill(r, l->bias, (size_t)n, -2.0f, 2.0f);
    }
    struct cc_act_quant qx = {tu_rng_uniform(r, 0.01f, 0.1f), tu_rng_range(r, -30, 30)};
    // About 100 output steps for a typical sum: the requantization neither saturates nor
    // vanishes.
    float typical = 70.0f * 70.0f * sqrtf((float)k) * qx.scale * 0.01f;
    struct cc_act_quant qy = {typical / tu_rng_uniform(r, 40, 120), tu_rng_range(r, -20, 20)};
    int8_t lo = tu_rng_range(r, 0, 1) ? (int8_t)qy.zero_point : INT8_MIN;
    int8_t hi = tu_rng_range(r, 0, 2) ? INT8_MAX : (int8_t)tu_rng_range(r, qy.zero_point + 1, 127);
    l->d = (struct cc_q8_gemm_desc){m, k, n, l->w, l->sw, l->bias, qx, qy, lo, hi};
}

static void free_layer(struct layer *l)
{
    free(l->w), free(l->x), free(l->sw), free(l->bias);
}

/* XNNPACK's QC8 1x1 convolution, value by value. */
static void reference(const struct cc_q8_gemm_desc *d, const int8_t *x, int8_t *y)
{
    for (int p = 0; p < d->m; p++)
        for (int o = 0; o < d->n; o++) {
            int64_t acc = 0;
            for (int i = 0; i < d->k; i++)
                acc += (x[(size_t)p * d->k + i] - d->qx.zero_point) * d->w[(size_t)o * d->k + i];
            if (d->bias)
                acc += (int64_t)nearbyint((double)d->bias[o] / ((double)d->qx.scale * d->sw[o]));
            float s = d->qx.scale * d->sw[o];
            s = s / d->qy.scale;
            float v = nearbyintf((float)(int32_t)acc * s) + (float)d->qy.zero_point;
            y[(size_t)p * d->n + o] = (int8_t)(v < d->lo ? d->lo : v > d->hi ? d->hi : v);
        }
}

/* Layer l with isa's kernels on 1 to 4 threads against the reference; true where the kernel
 * was AVX2's sign kernel (its byte groups: q8_gemm.h). */
static bool check_layer(const struct layer *l, enum cc_fq8_isa isa)
{
    bool sign = false;
    const struct cc_q8_gemm_desc *d = &l->d;
    size_t n_out = (size_t)d->m * d->n;
    int8_t *want = malloc(n_out), *got = malloc(n_out);
    reference(d, l->x, want);
    for (int threads = 1; threads <= 4; threads++) {
        struct cc_q8_gemm g;
        struct cc_error err = {0};
        if (!CHECKF(cc_q8_gemm_init(&g, d, isa, threads, &err), "init: %s", err.msg))
            break;
        sign = isa == CC_FQ8_AVX2 && g.layout == CC_Q8_GROUPS;
        pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
        for (int poison = 0; poison < 2; poison++) {
            memset(got, poison ? 0x55 : 0xaa, n_out);
            cc_q8_gemm_run(&g, l->x, got, pool);
            size_t bad = 0, first = 0;
            for (size_t i = n_out; i-- > 0;)
                if (got[i] != want[i])
                    bad++, first = i;
            CHECKF(!bad,
                   "%s, %d thread(s): %d pixels, %d -> %d%s: %zu of %zu values differ, first at "
                   "pixel %zu output %zu (got %d, want %d)",
                   cc_fq8_isa_name(isa), threads, d->m, d->k, d->n, d->bias ? "" : " no bias", bad,
                   n_out, first / d->n, first % d->n, got[first], want[first]);
        }
        pthreadpool_destroy(pool);
        cc_q8_gemm_finish(&g);
    }
    free(want), free(got);
    return sign;
}

/* The sign kernel's largest pairs, exact: every x -128 (|x| 128) against weights -127 (x's sign
 * makes them 127), then x 127 against 127: 2 * 128 * 127 = 32512 a pair, just inside int16. */
static int check_extremes(struct tu_rng *r, enum cc_fq8_isa isa)
{
    int sign = 0;
    for (int v = 0; v < 2; v++) {
        struct layer l;
        make_layer(&l, r, 49, 100, 40, false);
        memset(l.x, v ? 127 : -128, (size_t)49 * 100);
        memset(l.w, v ? 127 : -127, (size_t)40 * 100);
        sign += check_layer(&l, isa);
        free_layer(&l);
    }
    return sign;
}

/* Layers every family must compute: [pixels, inputs, outputs]. {7, 1030, 50}: the AVX2 kernel
 * widens 512 inputs at a time: two chunks and a tail. {2200, 60, 100}: more pixels than
 * q8_gemm.c's WIDE_MAX holds widened: widened by the AVX2 kernel itself, as layers of more than
 * WIDE_K inputs are, not once a task (as {196, 64, 384} and the random layers of few inputs).
 * 32 outputs: the AVX2 family's narrow panels (2 x 16, 6-pixel blocks): {784, 144, 32}
 * mobilenet_v2's 28x28 project, {13, 1030, 32} two chunks of inputs and blocks of 6, 6, 1,
 * {50, 24, 32} widened once a task, blocks of 6 and 2; so are multiples of 16 outputs from at
 * most 64 inputs ({196, 64, 384}; {3136, 24, 144} the 56x56 expand, {97, 16, 48} a block of 1
 * at the end). */
static const int fixed[][3] = {
    {196, 64, 384},  {196, 384, 96},  {196, 576, 96},  {49, 576, 160},  {49, 960, 160},
    {49, 160, 960},  {49, 960, 320},  {49, 320, 1280}, {1, 1280, 1000}, {3, 5, 7},
    {7, 1030, 50},   {2200, 60, 100}, {784, 144, 32},  {13, 1030, 32},  {50, 24, 32},
    {3136, 24, 144}, {97, 16, 48},
};

static void check_bad_desc(void)
{
    struct layer l;
    struct tu_rng r;
    tu_rng_seed(&r, 1);
    make_layer(&l, &r, 4, 8, 8, true);
    struct cc_q8_gemm g;
    struct cc_error err = {0};
    l.d.qy.scale = 0;
    CHECK(!cc_q8_gemm_init(&g, &l.d, CC_FQ8_C, 1, &err));
    CHECKF(strstr(err.msg, "scale") != NULL, "error: %s", err.msg);
    l.d.qy.scale = 1;
    l.d.k = 0;
    CHECK(!cc_q8_gemm_init(&g, &l.d, CC_FQ8_C, 1, &err));
    CHECKF(strstr(err.msg, "below 1") != NULL, "error: %s", err.msg);
    free_layer(&l);
}

int main(int argc, char **argv)
{
    struct tu_rng r;
    tu_rng_seed(&r, 2026);
    check_bad_desc();
    bool want[CC_FQ8_ISA_COUNT];
    q8_families_wanted(argc, argv, cc_q8_gemm_isa_runs, want);
    for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++) {
        if (!want[isa])
            continue;
        if (!cc_q8_gemm_isa_runs((enum cc_fq8_isa)isa)) {
            printf("# %s: %s\n", cc_fq8_isa_name((enum cc_fq8_isa)isa),
                   cc_fq8_isa_runs((enum cc_fq8_isa)isa) ? "no int8 GEMM kernels of this family"
                                                         : "not on this CPU or build");
            continue;
        }
        int cases = 2, sign = check_extremes(&r, (enum cc_fq8_isa)isa);
        for (size_t i = 0; i < 2 * sizeof(fixed) / sizeof(fixed[0]); i++, cases++) {
            struct layer l;
            make_layer(&l, &r, fixed[i / 2][0], fixed[i / 2][1], fixed[i / 2][2], i % 2);
            sign += check_layer(&l, (enum cc_fq8_isa)isa);
            free_layer(&l);
        }
        for (int i = 0; i < 40; i++, cases++) {
            struct layer l;
            make_layer(&l, &r, tu_rng_range(&r, 1, 200), tu_rng_range(&r, 1, 99),
                       tu_rng_range(&r, 1, 150), i % 2);
            sign += check_layer(&l, (enum cc_fq8_isa)isa);
            free_layer(&l);
        }
        // AVX2: the 7x7 layers and the extremes at least, by the sign kernel
        CHECKF(isa != CC_FQ8_AVX2 || sign >= 8, "%d layers ran AVX2's sign kernel, want 8 or more",
               sign);
        printf("# %s: %d layers x 1-4 threads (%d by the sign kernel)\n",
               cc_fq8_isa_name((enum cc_fq8_isa)isa), cases, sign);
    }
    return tu_exit_code();
}
