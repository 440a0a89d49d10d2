/* camclass — the fused inverted-residual block (engine/cpu/fused_block.h) against the
 * reference ops composed: conv2d 1x1 (+ ReLU6), depthwise 3x3 (+ ReLU6), conv2d 1x1, add
 * (engine/cpu/ref_ops.h, NCHW: the block's NHWC input and output are transposed for them).
 *
 * Blocks: expand ratios 1 and 6, strides 1 and 2, residual or not, odd channel counts (3, 17,
 * 24, ...), sizes 1 to 57 and one 112x112, random weights and biases; every kernel family the
 * host runs (portable C, AVX2, AVX-512), 1 to 4 threads (as many bands: band edges at odd
 * rows), the output poisoned with NaN first (a pixel left unwritten fails). Tolerance:
 * |fused - ref| <= 1e-4 x max|ref| over the output (the sums differ only in order). The shapes
 * and the loops over families and threads are fused_cases.c's, shared with test_fused_q8.c.
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
    float *w[6]; // we, be, wd, bd, wp, bp
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
    for (int i = 0; i < 6; i++)
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

/* y (NCHW) = conv(x) with the reference op: 1x1 (groups 1) or depthwise 3x3 (groups c). */
static void ref_conv(int c, int h, int w, int o, bool dw, int stride, const float *x,
                     const float *wt, const float *bias, float *y, struct cc_act act)
{
    int p = dw ? 1 : 0, k = dw ? 3 : 1;
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

/* y (NHWC) = the block composed from the reference ops, x (NHWC). */
static void reference(const struct cc_fused_block_desc *d, const float *x, float *y, int ho, int wo)
{
    size_t in = (size_t)d->h * d->w, out = (size_t)ho * wo;
    float *xc = malloc(in * d->cin * sizeof(float)), *e = malloc(in * d->cexp * sizeof(float));
    float *dw = malloc(out * d->cexp * sizeof(float)), *p = malloc(out * d->cout * sizeof(float));
    float *sum = malloc(out * d->cout * sizeof(float));
    relayout(x, xc, d->cin, d->h, d->w, true);
    if (d->expand)
        ref_conv(d->cin, d->h, d->w, d->cexp, false, 1, xc, d->we, d->be, e, d->act_expand);
    else
        memcpy(e, xc, in * d->cin * sizeof(float));
    ref_conv(d->cexp, d->h, d->w, d->cexp, true, d->stride, e, d->wd, d->bd, dw, d->act_dw);
    ref_conv(d->cexp, ho, wo, d->cout, false, 1, dw, d->wp, d->bp, p, d->act_project);
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

static void *make(struct tu_rng *r, const struct fused_shape *s, bool **residual)
{
    struct tcase *c = calloc(1, sizeof(*c));
    make_block(&c->b, r, s);
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
    snprintf(why, size, "|diff| %g > %g at pixel %zu channel %zu (got %g, want %g)", diff, c->tol,
             worst / cout, worst % cout, c->got[worst], c->want[worst]);
    return diff <= c->tol;
}

static void destroy(void *tc)
{
    struct tcase *c = tc;
    cc_fused_block_finish(&c->fb);
    free_block(&c->b);
    free(c->x), free(c->want), free(c->got), free(c);
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
    return tu_exit_code();
}
