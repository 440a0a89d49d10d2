/* camclass — the fused inverted-residual block (engine/cpu/fused_block.h) against the
 * reference ops composed: conv2d 1x1 (+ ReLU6), depthwise 3x3 (+ ReLU6), conv2d 1x1, add
 * (engine/cpu/ref_ops.h, NCHW: the block's NHWC input and output are transposed for them).
 *
 * Blocks: expand ratios 1 and 6, strides 1 and 2, residual or not, odd channel counts (3, 17,
 * 24, ...), sizes 1 to 57 and one 112x112, random weights and biases; every kernel family the
 * host runs (portable C, AVX2, AVX-512), 1 to 4 threads (as many bands: band edges at odd
 * rows), the output poisoned with NaN first (a pixel left unwritten fails); and mobilenet_v3's
 * (expand ratios 1 to 6, 3x3 and 5x5 depthwise, hardswish or ReLU6 after the expand and after
 * the depthwise, squeeze-excitation or not). Tolerance: |fused - ref| <= 1e-4 x max|ref| over the
 * output (the sums differ only in order).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fused_block.h"
#include "ref_ops.h"
#include "testutil.h"

/* A random block and its weights (owned: free_block). */
struct block {
    struct cc_fused_block_desc d;
    float *w[10]; // we, be, wd, bd, wp, bp; the SE's w1, b1, w2, b2 (or NULL)
};

static float *random_floats(struct tu_rng *r, size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    tu_rng_fill(r, p, n, -scale, scale);
    return p;
}

static void make_block(struct block *b, struct tu_rng *r, int size, int cin, int t, int cout,
                       int stride)
{
    int cexp = cin * t, w = size > 2 ? size + tu_rng_range(r, -1, 1) : size; // not always square
    memset(b->w, 0, sizeof(b->w));
    b->d = (struct cc_fused_block_desc){
        .h = size,
        .w = w,
        .cin = cin,
        .cexp = cexp,
        .cout = cout,
        .stride = stride,
        .expand = t != 1,
        .residual = stride == 1 && cin == cout,
        .act_expand = cc_act_relu6(),
        .act_dw = cc_act_relu6(),
        .act_project = cc_act_none(),
    };
    float gain_e = 2.0f / sqrtf((float)cin), gain_p = 2.0f / sqrtf((float)cexp);
    b->w[0] = t != 1 ? random_floats(r, (size_t)cexp * cin, gain_e) : NULL;
    b->w[1] = t != 1 ? random_floats(r, (size_t)cexp, 0.5f) : NULL;
    b->w[2] = random_floats(r, (size_t)cexp * 9, 0.5f);
    b->w[3] = random_floats(r, (size_t)cexp, 0.5f);
    b->w[4] = random_floats(r, (size_t)cout * cexp, gain_p);
    b->w[5] = random_floats(r, (size_t)cout, 0.5f);
    b->d.we = b->w[0], b->d.be = b->w[1], b->d.wd = b->w[2];
    b->d.bd = b->w[3], b->d.wp = b->w[4], b->d.bp = b->w[5];
}

static void free_block(struct block *b)
{
    for (int i = 0; i < 10; i++)
        free(b->w[i]);
}

/* dst = src relaid out: (c, h, w) from (h, w, c) when to_nchw, else back. */
static void relayout(const float *src, float *dst, int c, int h, int w, bool to_nchw)
{
    for (int ch = 0; ch < c; ch++)
        for (size_t p = 0; p < (size_t)h * w; p++) {
            size_t nchw = (size_t)ch * h * w + p, nhwc = p * c + ch;
            dst[to_nchw ? nchw : nhwc] = src[to_nchw ? nhwc : nchw];
        }
}

/* y (NCHW) = conv(x) with the reference op: 1x1 (groups 1) or depthwise k x k (groups c,
 * padding k / 2) when dw. */
static void ref_conv(int c, int h, int w, int o, int dw, int stride, const float *x,
                     const float *wt, const float *bias, float *y, struct cc_act act)
{
    int p = dw / 2, k = dw ? dw : 1;
    struct cc_conv2d_desc d = {
        .c = c,
        .h = h,
        .w = w,
        .o = o,
        .kh = k,
        .kw = k,
        .ho = (h + 2 * p - k) / stride + 1,
        .wo = (w + 2 * p - k) / stride + 1,
        .attrs = {{stride, stride}, {p, p, p, p}, {1, 1}, dw ? c : 1},
        .act = act,
    };
    float *scratch = malloc((cc_cpu_conv2d_scratch(&d) + 1) * sizeof(float));
    cc_cpu_conv2d(&d, x, wt, bias, y, 0, o, scratch);
    free(scratch);
}

/* dw (cexp, out pixels) *= d's squeeze-excitation gate, from the reference ops. */
static void reference_se(const struct cc_fused_block_desc *d, float *dw, size_t out)
{
    float *pool = malloc(d->cexp * sizeof(float)), *z = malloc(d->cse * sizeof(float));
    float *g = malloc(d->cexp * sizeof(float));
    cc_ref_global_avg_pool(dw, pool, d->cexp, (int)out);
    ref_conv(d->cexp, 1, 1, d->cse, 0, 1, pool, d->w1, d->b1, z, d->act_se1);
    ref_conv(d->cse, 1, 1, d->cexp, 0, 1, z, d->w2, d->b2, g, d->act_se2);
    for (int c = 0; c < d->cexp; c++)
        for (size_t i = 0; i < out; i++)
            dw[c * out + i] *= g[c];
    free(pool), free(z), free(g);
}

/* y (NHWC) = the block composed from the reference ops, x (NHWC). */
static void reference(const struct cc_fused_block_desc *d, const float *x, float *y, int ho, int wo)
{
    size_t in = (size_t)d->h * d->w, out = (size_t)ho * wo;
    float *xc = malloc(in * d->cin * sizeof(float)), *e = malloc(in * d->cexp * sizeof(float));
    float *dw = malloc(out * d->cexp * sizeof(float)), *p = malloc(out * d->cout * sizeof(float));
    float *sum = malloc(out * d->cout * sizeof(float));
    relayout(x, xc, d->cin, d->h, d->w, true);
    if (d->expand)
        ref_conv(d->cin, d->h, d->w, d->cexp, 0, 1, xc, d->we, d->be, e, d->act_expand);
    else
        memcpy(e, xc, in * d->cin * sizeof(float));
    ref_conv(d->cexp, d->h, d->w, d->cexp, d->kernel ? d->kernel : 3, d->stride, e, d->wd, d->bd,
             dw, d->act_dw);
    if (d->cse)
        reference_se(d, dw, out);
    ref_conv(d->cexp, ho, wo, d->cout, 0, 1, dw, d->wp, d->bp, p, d->act_project);
    if (d->residual)
        cc_ref_add(p, xc, sum, out * d->cout, cc_act_none());
    else
        memcpy(sum, p, out * d->cout * sizeof(float));
    relayout(sum, y, d->cout, ho, wo, false);
    free(xc), free(e), free(dw), free(p), free(sum);
}

/* The fused block b with isa's kernels on 1 to 4 threads against the reference. */
static void check_block(const struct block *b, struct tu_rng *r, enum cc_stem_isa isa)
{
    const struct cc_fused_block_desc *d = &b->d;
    int ho = (d->h - 1) / d->stride + 1, wo = (d->w - 1) / d->stride + 1;
    size_t n_in = (size_t)d->h * d->w * d->cin, n_out = (size_t)ho * wo * d->cout;
    float *x = random_floats(r, n_in, 2.0f), *want = malloc(n_out * sizeof(float));
    float *got = malloc(n_out * sizeof(float));
    reference(d, x, want, ho, wo);
    double tol = 1e-4 * tu_max_abs(want, n_out);
    for (int threads = 1; threads <= 4; threads++) {
        struct cc_fused_block fb;
        struct cc_error err = {0};
        if (!CHECKF(cc_fused_block_init(&fb, d, isa, threads, &err), "init: %s", err.msg))
            break;
        pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
        for (size_t i = 0; i < n_out; i++)
            got[i] = NAN;
        cc_fused_block_run(&fb, x, got, pool);
        size_t worst = 0;
        double diff = tu_max_abs_diff(got, want, n_out, &worst);
        CHECKF(diff <= tol,
               "%s, %d thread(s): %dx%d %d -> %d -> %d k%d stride %d%s%s se %d: |diff| %g > %g at "
               "pixel %zu channel %zu (got %g, want %g)",
               cc_stem_isa_name(isa), threads, d->h, d->w, d->cin, d->cexp, d->cout,
               d->kernel ? d->kernel : 3, d->stride, d->residual ? " residual" : "",
               d->act_dw.kind == CC_ACT_HARDSWISH ? " hardswish" : "", d->cse, diff, tol,
               worst / d->cout, worst % d->cout, got[worst], want[worst]);
        pthreadpool_destroy(pool);
        cc_fused_block_finish(&fb);
    }
    free(x), free(want), free(got);
}

/* Blocks every family the host runs must compute: [size, cin, t, cout, stride]. */
static const int fixed[][5] = {
    {112, 32, 1, 16, 1}, // mobilenet_v2's first block
    {13, 16, 6, 24, 2},  {14, 24, 6, 24, 1}, {9, 24, 6, 32, 2}, {7, 3, 6, 3, 1},
    {1, 17, 6, 17, 1},   {1, 24, 1, 24, 2},  {2, 3, 1, 17, 1},  {57, 17, 6, 24, 2},
};

/* mobilenet_v3's blocks: [size, cin, t, cout, stride, kernel, hardswish after the expand,
 * after the depthwise, squeeze-excitation channels (0: none)]. */
static const int fixed_v3[][9] = {
    {14, 40, 6, 80, 2, 3, 1, 1, 0},  {14, 80, 3, 80, 1, 3, 1, 1, 0},
    {28, 24, 3, 40, 2, 5, 0, 0, 24}, {7, 160, 6, 160, 1, 5, 1, 1, 240},
    {9, 17, 3, 17, 1, 5, 1, 0, 0},   {1, 5, 1, 5, 1, 5, 1, 1, 3},
    {2, 3, 6, 8, 2, 5, 0, 1, 0},     {5, 3, 1, 3, 2, 5, 1, 1, 0},
    {31, 16, 4, 24, 2, 3, 1, 1, 0},  {14, 80, 6, 112, 1, 3, 1, 1, 120},
    {13, 17, 3, 17, 1, 5, 0, 0, 5},
};

/* make_block's block with a kernel x kernel depthwise and hardswish where asked. */
static void make_v3_block(struct block *b, struct tu_rng *r, const int *v)
{
    make_block(b, r, v[0], v[1], v[2], v[3], v[4]);
    b->d.kernel = v[5];
    free(b->w[2]);
    b->d.wd = b->w[2] = random_floats(r, (size_t)b->d.cexp * v[5] * v[5], 1.5f / (float)v[5]);
    if (v[6])
        b->d.act_expand = cc_act_of(CC_ACT_HARDSWISH);
    if (v[7])
        b->d.act_dw = cc_act_of(CC_ACT_HARDSWISH);
    int ce = b->d.cexp, cs = b->d.cse = v[8];
    if (!cs)
        return;
    b->d.w1 = b->w[6] = random_floats(r, (size_t)cs * ce, 2.0f / sqrtf((float)ce));
    b->d.b1 = b->w[7] = random_floats(r, (size_t)cs, 0.5f);
    b->d.w2 = b->w[8] = random_floats(r, (size_t)ce * cs, 6.0f / sqrtf((float)cs));
    b->d.b2 = b->w[9] = random_floats(r, (size_t)ce, 1.0f);
    b->d.act_se1 = cc_act_relu();
    b->d.act_se2 = cc_act_of(CC_ACT_HARDSIGMOID);
}

/* The mobilenet_v3 blocks above and random ones (kernel 3 or 5, hardswish or ReLU6 in either
 * place) with isa's kernels; the number of blocks. */
static int check_v3_blocks(struct tu_rng *r, enum cc_stem_isa isa)
{
    int cases = 0;
    for (size_t i = 0; i < sizeof(fixed_v3) / sizeof(fixed_v3[0]); i++, cases++) {
        struct block b;
        make_v3_block(&b, r, fixed_v3[i]);
        check_block(&b, r, isa);
        free_block(&b);
    }
    static const int channels[] = {3, 5, 8, 17, 24, 40};
    for (int i = 0; i < 12; i++, cases++) {
        int v[9] = {tu_rng_range(r, 1, 31), channels[tu_rng_range(r, 0, 5)],
                    tu_rng_range(r, 1, 6),  channels[tu_rng_range(r, 0, 5)],
                    tu_rng_range(r, 1, 2),  tu_rng_range(r, 0, 1) ? 5 : 3,
                    tu_rng_range(r, 0, 1),  tu_rng_range(r, 0, 1)};
        v[3] = v[4] == 1 && tu_rng_range(r, 0, 1) ? v[1] : v[3];   // residual half the time
        v[8] = tu_rng_range(r, 0, 1) ? tu_rng_range(r, 1, 24) : 0; // SE half the time
        struct block b;
        make_v3_block(&b, r, v);
        check_block(&b, r, isa);
        free_block(&b);
    }
    return cases;
}

static void check_bad_desc(void)
{
    struct block b;
    struct tu_rng r;
    tu_rng_seed(&r, 1);
    make_block(&b, &r, 8, 16, 6, 24, 1);
    b.d.residual = true; // 16 -> 24: no residual can be added
    struct cc_fused_block fb;
    struct cc_error err = {0};
    CHECK(!cc_fused_block_init(&fb, &b.d, CC_STEM_C, 1, &err));
    CHECKF(strstr(err.msg, "residual") != NULL, "error: %s", err.msg);
    free_block(&b);
}

/* CAMCLASS_CPU_FUSED's values (the CPU backend refuses its create with this line). */
static void check_mode(void)
{
    static const char *const good[] = {NULL, "", "measure", "off", "on"};
    static const enum cc_fused_mode want[] = {CC_FUSED_MEASURE, CC_FUSED_MEASURE, CC_FUSED_MEASURE,
                                              CC_FUSED_OFF, CC_FUSED_ON};
    for (int i = 0; i < 5; i++) {
        enum cc_fused_mode mode = CC_FUSED_OFF + CC_FUSED_ON; // neither: must be set
        struct cc_error err = {0};
        CHECKF(cc_fused_mode_parse(good[i], &mode, &err) && mode == want[i], "\"%s\": %s",
               good[i] ? good[i] : "(unset)", err.msg);
    }
    enum cc_fused_mode mode;
    struct cc_error err = {0};
    CHECK(!cc_fused_mode_parse("fast", &mode, &err));
    CHECKF(!strcmp(err.msg, "CAMCLASS_CPU_FUSED=\"fast\" is not a fused-block mode: use measure "
                            "(the default), off or on"),
           "error: %s", err.msg);
}

int main(void)
{
    struct tu_rng r;
    tu_rng_seed(&r, 26);
    check_bad_desc();
    check_mode();
    for (int isa = 0; isa < CC_STEM_ISA_COUNT; isa++) {
        if (!cc_stem_isa_runs((enum cc_stem_isa)isa)) {
            printf("# %s: not on this CPU or build\n", cc_stem_isa_name((enum cc_stem_isa)isa));
            continue;
        }
        int cases = 0;
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, cases++) {
            struct block b;
            make_block(&b, &r, fixed[i][0], fixed[i][1], fixed[i][2], fixed[i][3], fixed[i][4]);
            check_block(&b, &r, (enum cc_stem_isa)isa);
            free_block(&b);
        }
        static const int channels[] = {3, 5, 8, 16, 17, 24, 33};
        for (int i = 0; i < 24; i++, cases++) {
            struct block b;
            int cin = channels[tu_rng_range(&r, 0, 6)], cout = channels[tu_rng_range(&r, 0, 6)];
            int stride = tu_rng_range(&r, 1, 2);
            cout = stride == 1 && tu_rng_range(&r, 0, 1) ? cin : cout; // residual half the time
            make_block(&b, &r, tu_rng_range(&r, 1, 57), cin, tu_rng_range(&r, 0, 1) ? 6 : 1, cout,
                       stride);
            check_block(&b, &r, (enum cc_stem_isa)isa);
            free_block(&b);
        }
        cases += check_v3_blocks(&r, (enum cc_stem_isa)isa);
        printf("# %s: %d blocks x 1-4 threads\n", cc_stem_isa_name((enum cc_stem_isa)isa), cases);
    }
    return tu_exit_code();
}
