/* camclass — the fused inverted-residual block (engine/cpu/fused_block.h) against the
 * reference ops composed: conv2d 1x1 (+ ReLU6), depthwise 3x3 (+ ReLU6), conv2d 1x1, add
 * (engine/cpu/ref_ops.h, NCHW: the block's NHWC input and output are transposed for them).
 *
 * Blocks: expand ratios 1 and 6, strides 1 and 2, residual or not, odd channel counts (3, 17,
 * 24, ...), sizes 1 to 57 and one 112x112, random weights and biases; every kernel family the
 * host runs (portable C, AVX2, AVX-512), 1 to 4 threads (as many bands: band edges at odd
 * rows), the output poisoned with NaN first (a pixel left unwritten fails); and mobilenet_v3's
 * (expand ratios 1 to 6, 3x3 and 5x5 depthwise, hardswish or ReLU6 after the expand and after
 * the depthwise, squeeze-excitation or not). Tolerance: |fused - ref| <= 1e-4 x max|ref| over
 * the output (the sums differ only in order). The shapes and the loops over families and
 * threads are fused_cases.c's, shared with test_fused_q8.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fused_block.h"
#include "ref_ops.h"
#include "fused_cases.h"
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

static void make_block(struct block *b, struct tu_rng *r, const struct fused_shape *s)
{
    int cin = s->cin, cexp = s->cexp, cout = s->cout, t = s->t;
    memset(b->w, 0, sizeof(b->w));
    b->d = (struct cc_fused_block_desc){
        FUSED_DESC_GEOMETRY(s),
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

/* ---- the kind for fused_cases.h ---- */

/* A block with its input, the reference's output and the fused block's (owned: destroy). */
struct tcase {
    struct block b;
    struct cc_fused_block fb; // packed by init
    float *x, *want, *got;
    size_t n_out;
    double tol; // 1e-4 x max|want|
};

static const char *isa(int i, bool *runs)
{
    *runs = cc_stem_isa_runs((enum cc_stem_isa)i);
    return cc_stem_isa_name((enum cc_stem_isa)i);
}

/* mobilenet_v3's extras of a shape (fused_shape.variant): [kernel, hardswish after the expand,
 * after the depthwise, squeeze-excitation channels (0: none)]. */
static void make_v3(struct block *b, struct tu_rng *r, const int *v)
{
    b->d.kernel = v[0];
    free(b->w[2]);
    b->d.wd = b->w[2] = random_floats(r, (size_t)b->d.cexp * v[0] * v[0], 1.5f / (float)v[0]);
    if (v[1])
        b->d.act_expand = cc_act_of(CC_ACT_HARDSWISH);
    if (v[2])
        b->d.act_dw = cc_act_of(CC_ACT_HARDSWISH);
    int ce = b->d.cexp, cs = b->d.cse = v[3];
    if (!cs)
        return;
    b->d.w1 = b->w[6] = random_floats(r, (size_t)cs * ce, 2.0f / sqrtf((float)ce));
    b->d.b1 = b->w[7] = random_floats(r, (size_t)cs, 0.5f);
    b->d.w2 = b->w[8] = random_floats(r, (size_t)ce * cs, 6.0f / sqrtf((float)cs));
    b->d.b2 = b->w[9] = random_floats(r, (size_t)ce, 1.0f);
    b->d.act_se1 = cc_act_relu();
    b->d.act_se2 = cc_act_of(CC_ACT_HARDSIGMOID);
}

static void *make(struct tu_rng *r, const struct fused_shape *s, bool **residual)
{
    struct tcase *c = calloc(1, sizeof(*c));
    make_block(&c->b, r, s);
    if (s->variant)
        make_v3(&c->b, r, s->variant);
    c->n_out = s->n_out;
    c->x = random_floats(r, s->n_in, 2.0f);
    c->want = malloc(s->n_out * sizeof(float));
    c->got = malloc(s->n_out * sizeof(float));
    reference(&c->b.d, c->x, c->want, s->ho, s->wo);
    c->tol = 1e-4 * tu_max_abs(c->want, s->n_out);
    *residual = &c->b.d.residual;
    return c;
}

static bool init(void *tc, int i, int threads, struct cc_error *err)
{
    struct tcase *c = tc;
    cc_fused_block_finish(&c->fb); // the last thread count's
    return cc_fused_block_init(&c->fb, &c->b.d, (enum cc_stem_isa)i, threads, err);
}

static void run(void *tc, int poison, pthreadpool_t pool)
{
    struct tcase *c = tc;
    for (size_t i = 0; i < c->n_out; i++)
        c->got[i] = NAN; // a pixel left unwritten fails
    cc_fused_block_run(&c->fb, c->x, c->got, pool);
}

static bool compare(void *tc, char *why, size_t size)
{
    struct tcase *c = tc;
    size_t worst = 0, cout = (size_t)c->b.d.cout;
    double diff = tu_max_abs_diff(c->got, c->want, c->n_out, &worst);
    const struct cc_fused_block_desc *d = &c->b.d;
    snprintf(why, size, "k%d%s se %d: |diff| %g > %g at pixel %zu channel %zu (got %g, want %g)",
             d->kernel ? d->kernel : 3, d->act_dw.kind == CC_ACT_HARDSWISH ? " hardswish" : "",
             d->cse, diff, c->tol, worst / cout, worst % cout, c->got[worst], c->want[worst]);
    return diff <= c->tol;
}

static void destroy(void *tc)
{
    struct tcase *c = tc;
    cc_fused_block_finish(&c->fb);
    free_block(&c->b);
    free(c->x), free(c->want), free(c->got), free(c);
}

/* mobilenet_v3's blocks: size, cin, t, cout, stride, then make_v3's extras. */
static const int fixed_v3[][9] = {
    {14, 40, 6, 80, 2, 3, 1, 1, 0},
    {14, 80, 3, 80, 1, 3, 1, 1, 0},
    {28, 24, 3, 40, 2, 5, 0, 0, 24},
    {7, 160, 6, 160, 1, 5, 1, 1, 240},
    {9, 17, 3, 17, 1, 5, 1, 0, 0},
    {1, 5, 1, 5, 1, 5, 1, 1, 3},
    {2, 3, 6, 8, 2, 5, 0, 1, 0},
    {5, 3, 1, 3, 2, 5, 1, 1, 0},
    {31, 16, 4, 24, 2, 3, 1, 1, 0},
    {14, 80, 6, 112, 1, 3, 1, 1, 120},
    {13, 17, 3, 17, 1, 5, 0, 0, 5},
    {112, 16, 1, 16, 1, 3, 0, 0, 0}, // features.1: 16 channels, padded to 16, not 32
};

/* The mobilenet_v3 blocks above and random ones (kernel 3 or 5, hardswish or ReLU6 in either
 * place, SE half the time) with family isa's kernels. */
static void check_v3_blocks(const struct fused_kind *k, struct tu_rng *r, int isa)
{
    for (size_t i = 0; i < sizeof(fixed_v3) / sizeof(fixed_v3[0]); i++) {
        const int *v = fixed_v3[i];
        fused_cases_check(
            k, r, (struct fused_shape){v[0], v[1], v[2], v[3], v[4], .variant = v + 5}, isa);
    }
    static const int channels[] = {3, 5, 8, 17, 24, 40};
    for (int i = 0; i < 12; i++) {
        int v[9] = {tu_rng_range(r, 1, 31), channels[tu_rng_range(r, 0, 5)],
                    tu_rng_range(r, 1, 6),  channels[tu_rng_range(r, 0, 5)],
                    tu_rng_range(r, 1, 2),  tu_rng_range(r, 0, 1) ? 5 : 3,
                    tu_rng_range(r, 0, 1),  tu_rng_range(r, 0, 1)};
        v[3] = v[4] == 1 && tu_rng_range(r, 0, 1) ? v[1] : v[3];   // residual half the time
        v[8] = tu_rng_range(r, 0, 1) ? tu_rng_range(r, 1, 24) : 0; // SE half the time
        fused_cases_check(
            k, r, (struct fused_shape){v[0], v[1], v[2], v[3], v[4], .variant = v + 5}, isa);
    }
    printf("# %s: %zu mobilenet_v3 blocks x 1-4 threads\n", cc_stem_isa_name((enum cc_stem_isa)isa),
           sizeof(fixed_v3) / sizeof(fixed_v3[0]) + 12);
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
    check_mode();
    struct fused_kind kind = {CC_STEM_ISA_COUNT, isa, 1, make, init, run, compare, destroy, NULL};
    fused_cases_run(&kind, &r);
    for (int i = 0; i < CC_STEM_ISA_COUNT; i++)
        if (cc_stem_isa_runs((enum cc_stem_isa)i))
            check_v3_blocks(&kind, &r, i);
    return tu_exit_code();
}
