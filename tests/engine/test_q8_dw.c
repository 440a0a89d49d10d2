/* camclass — the int8 depthwise convolution (engine/cpu/q8_dw.h) against XNNPACK's own QC8
 * convolution (xnn_create_convolution2d_nhwc_qc8 with one group per channel: the operator the
 * CPU backend runs otherwise, with the int32 biases it gets), exactly.
 *
 * Layers: mobilenet_v2's depthwise shapes (112x112x32 and 96 to 7x7x960, strides 1 and 2),
 * then random ones: sizes 1 to 112 (square or not, odd and even), 1 to 200 channels (not
 * multiples of the vector widths 8, 16 and 32; and multiples of 32, which are read in place, at
 * sizes 1 to 12), strides 1 and 2, random int8 weights, scales,
 * zero points, biases (or none), ReLU and ReLU6-like clamps or none; every kernel family the
 * host runs (portable C, AVX2, AVX-VNNI, AVX-512 VNNI; NEON on AArch64), 1 to 4 threads, the
 * output poisoned with two different values (a value left unwritten fails one of them), input
 * and output in buffers of exactly their size. Tolerance: none (exact).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnnpack.h>

#include "q8_dw.h"
#include "testutil.h"
#include "xnn_build.h"

/* A random layer and its buffers (owned: free_layer). */
struct layer {
    struct cc_q8_dw_desc d;
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

static void make_layer(struct layer *l, struct tu_rng *r, int h, int w, int c, int stride)
{
    l->w = random_i8(r, (size_t)c * 9);
    l->x = random_i8(r, (size_t)h * w * c);
    l->sw = malloc((size_t)c * sizeof(float));
    tu_rng_fill(r, l->sw, (size_t)c, 0.002f, 0.02f);
    l->bias = NULL;
    if (tu_rng_range(r, 0, 3)) {
        l->bias = malloc((size_t)c * sizeof(float));
        tu_rng_fill(r, l->bias, (size_t)c, -2.0f, 2.0f);
    }
    struct cc_act_quant qx = {tu_rng_uniform(r, 0.01f, 0.1f), tu_rng_range(r, -30, 30)};
    // About 100 output steps for a typical sum of 9 products: neither saturated nor vanishing.
    float typical = 70.0f * 70.0f * 3.0f * qx.scale * 0.01f;
    struct cc_act_quant qy = {typical / tu_rng_uniform(r, 40, 120), tu_rng_range(r, -20, 20)};
    int8_t lo = tu_rng_range(r, 0, 1) ? (int8_t)qy.zero_point : INT8_MIN;
    int8_t hi = tu_rng_range(r, 0, 2) ? INT8_MAX : (int8_t)tu_rng_range(r, qy.zero_point + 1, 127);
    l->d = (struct cc_q8_dw_desc){h, w, c, stride, l->w, l->sw, l->bias, qx, qy, lo, hi};
}

static void free_layer(struct layer *l)
{
    free(l->w), free(l->x), free(l->sw), free(l->bias);
}

static int out_size(int n, int stride)
{
    return (n - 1) / stride + 1;
}

/* y from XNNPACK's QC8 depthwise convolution of d (padding 1 all round); false on an error. */
static bool xnnpack(const struct cc_q8_dw_desc *d, const int8_t *x, int8_t *y)
{
    int32_t *bias = calloc((size_t)d->c, sizeof(int32_t));
    if (d->bias)
        cc_xnn_bias_i32(d->bias, d->c, d->qx.scale, d->sw, bias);
    xnn_operator_t op = NULL;
    uint32_t s = (uint32_t)d->stride;
    enum xnn_status rc = xnn_create_convolution2d_nhwc_qc8(
        1, 1, 1, 1, 3, 3, s, s, 1, 1, (uint32_t)d->c, 1, 1, (size_t)d->c, (size_t)d->c,
        (int8_t)d->qx.zero_point, d->qx.scale, d->sw, d->wt, bias, (int8_t)d->qy.zero_point,
        d->qy.scale, d->lo, d->hi, 0, &op);
    if (rc == xnn_status_success)
        rc = xnn_setup_convolution2d_nhwc_qc8(op, 1, (size_t)d->h, (size_t)d->w, x, y, NULL);
    if (rc == xnn_status_success)
        rc = xnn_run_operator(op, NULL);
    xnn_delete_operator(op);
    free(bias);
    return CHECKF(rc == xnn_status_success, "XNNPACK: status %d", (int)rc);
}

/* Layer l with isa's kernels on 1 to 4 threads against want (XNNPACK's). */
static void check_isa(const struct layer *l, enum cc_fq8_isa isa, const int8_t *want)
{
    const struct cc_q8_dw_desc *d = &l->d;
    int wo = out_size(d->w, d->stride);
    size_t n_out = (size_t)out_size(d->h, d->stride) * wo * d->c;
    int8_t *got = malloc(n_out);
    for (int threads = 1; threads <= 4; threads++) {
        struct cc_q8_dw g;
        struct cc_error err = {0};
        if (!CHECKF(cc_q8_dw_init(&g, d, isa, threads, &err), "init: %s", err.msg))
            break;
        pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
        for (int poison = 0; poison < 2; poison++) {
            memset(got, poison ? 0x55 : 0xaa, n_out);
            cc_q8_dw_run(&g, l->x, got, pool);
            size_t bad = 0, first = 0;
            for (size_t i = n_out; i-- > 0;)
                if (got[i] != want[i])
                    bad++, first = i;
            size_t px = first / (size_t)d->c;
            CHECKF(!bad,
                   "%s, %d thread(s): %dx%dx%d stride %d%s: %zu of %zu values differ, first at "
                   "(%zu, %zu) channel %zu (got %d, want %d)",
                   cc_fq8_isa_name(isa), threads, d->h, d->w, d->c, d->stride,
                   d->bias ? "" : " no bias", bad, n_out, px / (size_t)wo, px % (size_t)wo,
                   first % (size_t)d->c, got[first], want[first]);
        }
        pthreadpool_destroy(pool);
        cc_q8_dw_finish(&g);
    }
    free(got);
}

/* Layer l on every family the host runs; the count of families in *families. */
static void check_layer(const struct layer *l, int *families)
{
    const struct cc_q8_dw_desc *d = &l->d;
    size_t n_out = (size_t)out_size(d->h, d->stride) * out_size(d->w, d->stride) * d->c;
    int8_t *want = malloc(n_out);
    *families = 0;
    if (xnnpack(d, l->x, want))
        for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++)
            if (cc_fq8_isa_runs((enum cc_fq8_isa)isa)) {
                check_isa(l, (enum cc_fq8_isa)isa, want);
                ++*families;
            }
    free(want);
}

/* Layers every family must compute: [size, channels, stride]. */
static const int fixed[][3] = {
    {112, 32, 1}, {112, 96, 2}, {56, 144, 1}, {56, 144, 2}, {28, 192, 1}, {28, 192, 2},
    {14, 384, 1}, {14, 576, 1}, {14, 576, 2}, {7, 960, 1},  {1, 1, 1},    {1, 3, 2},
};

static void check_bad(void)
{
    struct layer l;
    struct tu_rng r;
    tu_rng_seed(&r, 1);
    make_layer(&l, &r, 4, 4, 8, 1);
    struct cc_q8_dw g;
    struct cc_error err = {0};
    l.d.stride = 3;
    CHECK(!cc_q8_dw_init(&g, &l.d, CC_FQ8_C, 1, &err));
    CHECKF(strstr(err.msg, "stride other than 1 or 2") != NULL, "error: %s", err.msg);
    l.d.stride = 1;
    l.d.qy.scale = 0;
    CHECK(!cc_q8_dw_init(&g, &l.d, CC_FQ8_C, 1, &err));
    CHECKF(strstr(err.msg, "scale") != NULL, "error: %s", err.msg);
    free_layer(&l);
    struct cc_fq8_mode mode;
    CHECK(!cc_q8_dw_mode_parse("fast", &mode, &err));
    CHECKF(strstr(err.msg, "CAMCLASS_CPU_Q8DW=\"fast\"") && strstr(err.msg, "measure"), "error: %s",
           err.msg);
    CHECK(cc_q8_dw_mode_parse("c", &mode, &err) && mode.kind == CC_FUSED_ON &&
          mode.isa == CC_FQ8_C);
}

int main(void)
{
    if (!CHECK(xnn_initialize(NULL) == xnn_status_success))
        return tu_exit_code();
    check_bad();
    struct tu_rng r;
    tu_rng_seed(&r, 26);
    int cases = 0, families = 0;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, cases++) {
        struct layer l;
        make_layer(&l, &r, fixed[i][0], fixed[i][0], fixed[i][1], fixed[i][2]);
        check_layer(&l, &families);
        free_layer(&l);
    }
    for (int i = 0; i < 52; i++, cases++) { // from 40: multiples of 32 (read in place), small
        struct layer l;
        int h = i < 20 || i >= 40 ? tu_rng_range(&r, 1, 12) : tu_rng_range(&r, 1, 112);
        int w = i % 3 ? h : tu_rng_range(&r, 1, i >= 40 ? 12 : 112);
        int c = i >= 40 ? 32 * tu_rng_range(&r, 1, 3)
                : i < 4 ? 1 + i
                        : tu_rng_range(&r, 1, i < 30 ? 200 : 40);
        make_layer(&l, &r, h, w, c, 1 + i % 2);
        check_layer(&l, &families);
        free_layer(&l);
    }
    printf("# %d layers x %d kernel families x 1-4 threads\n", cases, families);
    return tu_exit_code();
}
