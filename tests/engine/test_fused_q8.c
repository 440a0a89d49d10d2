/* camclass — the int8 fused inverted-residual block (engine/cpu/fused_q8.h) against a plain
 * composition, written here, of what XNNPACK's QC8 convolutions and QS8 add compute (layer by
 * layer, NHWC, int8 tensors between the layers; fused_q8.h's formulas: int32 sums of
 * (x - zero point) x weight plus the bias rounded to int32, requantized by (float)acc *
 * (sx * sw / sy) in f32 rounded half to even, clamped; the add's 20-bit multipliers and shift).
 *
 * Blocks: expand ratios 1 and 6, strides 1 and 2, residual or not, odd channel counts (3, 5,
 * 17, 33, ...: the 4-input groups' tails), sizes 1 to 57 and one 112x112, random int8
 * weights, scales, zero points and clamps; every kernel family the host runs (portable C,
 * AVX2, AVX-VNNI, AVX-512 VNNI; NEON, NEON dot product), 1 to 4 threads (as many bands), the
 * output poisoned with two different values (a value left unwritten fails one of them).
 * Tolerance: none (exact). The shapes and the loops over families and threads are
 * fused_cases.c's, shared with test_fused_block.c.
 *
 *     test_fused_q8 [FAMILY=yes|no]...
 *
 * With arguments, only the families named =yes, each of which must run on this host, and each
 * named =no must not (q8_families.h: the run-time choice).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fused_q8.h"
#include "fused_cases.h"
#include "q8_families.h"
#include "testutil.h"

/* A random block and its buffers (owned: free_block). */
struct block {
    struct cc_fq8_desc d;
    int8_t *w[3]; // we, wd, wp
    float *f[6];  // swe, swd, swp, be, bd, bp
};

static int8_t *random_i8(struct tu_rng *r, size_t n)
{
    int8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (int8_t)tu_rng_range(r, -128, 127);
    return p;
}

static float *random_floats(struct tu_rng *r, size_t n, float lo, float hi)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    tu_rng_fill(r, p, n, lo, hi);
    return p;
}

/* An output quantization for sums of k products of int8 (x - z) and weights at scales sx, sw:
 * about 100 steps for a typical sum, so the requantization neither saturates nor vanishes. */
static struct cc_act_quant out_quant(struct tu_rng *r, float sx, float sw, int k)
{
    float typical = 70.0f * 70.0f * sqrtf((float)k) * sx * sw;
    return (struct cc_act_quant){typical / tu_rng_uniform(r, 40, 120), tu_rng_range(r, -20, 20)};
}

/* Clamps: half the time ReLU-like (the zero point up), else none, and a top now and then. */
static void random_clamp(struct tu_rng *r, struct cc_act_quant q, int8_t *lo, int8_t *hi)
{
    *lo = tu_rng_range(r, 0, 1) ? (int8_t)q.zero_point : INT8_MIN;
    *hi = tu_rng_range(r, 0, 2) ? INT8_MAX : (int8_t)tu_rng_range(r, q.zero_point + 1, 127);
}

static void make_block(struct block *b, struct tu_rng *r, const struct fused_shape *s)
{
    int cin = s->cin, cexp = s->cexp, cout = s->cout;
    memset(b, 0, sizeof(*b));
    b->d = (struct cc_fq8_desc){
        FUSED_DESC_GEOMETRY(s),
        .qx = {tu_rng_uniform(r, 0.01f, 0.05f), tu_rng_range(r, -30, 30)},
    };
    struct cc_fq8_desc *d = &b->d;
    b->w[0] = d->expand ? random_i8(r, (size_t)cexp * cin) : NULL;
    b->w[1] = random_i8(r, (size_t)cexp * 9);
    b->w[2] = random_i8(r, (size_t)cout * cexp);
    b->f[0] = random_floats(r, (size_t)cexp, 0.002f, 0.02f);
    b->f[1] = random_floats(r, (size_t)cexp, 0.002f, 0.02f);
    b->f[2] = random_floats(r, (size_t)cout, 0.002f, 0.02f);
    b->f[3] = random_floats(r, (size_t)cexp, -0.5f, 0.5f);
    b->f[4] = random_floats(r, (size_t)cexp, -0.5f, 0.5f);
    b->f[5] = tu_rng_range(r, 0, 3) ? random_floats(r, (size_t)cout, -0.5f, 0.5f) : NULL;
    d->we = b->w[0], d->wd = b->w[1], d->wp = b->w[2];
    d->swe = d->expand ? b->f[0] : NULL, d->swd = b->f[1], d->swp = b->f[2];
    d->be = d->expand ? b->f[3] : NULL, d->bd = b->f[4], d->bp = b->f[5];
    d->qe = d->expand ? out_quant(r, d->qx.scale, 0.01f, cin) : d->qx;
    d->qd = out_quant(r, d->qe.scale, 0.01f, 9);
    d->qp = out_quant(r, d->qd.scale, 0.01f, cexp);
    d->qy = (struct cc_act_quant){fmaxf(d->qp.scale, d->qx.scale) * tu_rng_uniform(r, 0.8f, 2),
                                  tu_rng_range(r, -20, 20)};
    struct cc_act_quant qs[4] = {d->qe, d->qd, d->qp, d->qy};
    for (int i = 0; i < 4; i++)
        random_clamp(r, qs[i], &d->lo[i], &d->hi[i]);
    d->lo[2] = d->lo[3] = INT8_MIN; // project and add: no clamp, as in mobilenet_v2
    d->hi[2] = d->hi[3] = INT8_MAX;
}

static void free_block(struct block *b)
{
    for (int i = 0; i < 3; i++)
        free(b->w[i]);
    for (int i = 0; i < 6; i++)
        free(b->f[i]);
}

/* One conv output value: bias (f32) rounded to int32 at sx * sw, plus acc, requantized. */
static int8_t requantize(int64_t acc, const float *bias, float sx, float sw, struct cc_act_quant y,
                         int8_t lo, int8_t hi)
{
    if (bias)
        acc += (int64_t)nearbyint((double)*bias / ((double)sx * sw));
    float s = sx * sw;
    s = s / y.scale;
    float v = nearbyintf((float)(int32_t)acc * s) + (float)y.zero_point;
    return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* y (h, w, o) = 1x1 conv of x (h, w, c) quantized qx into qy. */
static void conv1x1(const int8_t *x, size_t pixels, int c, int o, const int8_t *w, const float *sw,
                    const float *b, struct cc_act_quant qx, struct cc_act_quant qy, int8_t lo,
                    int8_t hi, int8_t *y)
{
    for (size_t p = 0; p < pixels; p++)
        for (int oc = 0; oc < o; oc++) {
            int64_t acc = 0;
            for (int k = 0; k < c; k++)
                acc += (x[p * c + k] - qx.zero_point) * w[(size_t)oc * c + k];
            y[p * o + oc] = requantize(acc, b ? b + oc : NULL, qx.scale, sw[oc], qy, lo, hi);
        }
}

/* The block's depthwise 3x3 (padding 1: zero in real terms) of e (h, w, c) into dw (ho, wo, c). */
static void depthwise(const struct cc_fq8_desc *d, const int8_t *e, int ho, int wo, int8_t *dw)
{
    struct cc_act_quant qe = d->qe;
    for (int oy = 0; oy < ho; oy++)
        for (int ox = 0; ox < wo; ox++)
            for (int c = 0; c < d->cexp; c++) {
                int64_t acc = 0;
                for (int t = 0; t < 9; t++) {
                    int iy = oy * d->stride - 1 + t / 3, ix = ox * d->stride - 1 + t % 3;
                    if (iy >= 0 && iy < d->h && ix >= 0 && ix < d->w)
                        acc += (e[((size_t)iy * d->w + ix) * d->cexp + c] - qe.zero_point) *
                               d->wd[(size_t)c * 9 + t];
                }
                dw[((size_t)oy * wo + ox) * d->cexp + c] =
                    requantize(acc, d->bd + c, qe.scale, d->swd[c], d->qd, d->lo[1], d->hi[1]);
            }
}

/* XNNPACK's QS8 add of a (quantized qa) and b (qb) into qy, as its init and kernels do it. */
static int8_t add(int a, int b, struct cc_act_quant qa, struct cc_act_quant qb,
                  struct cc_act_quant qy, int8_t lo, int8_t hi)
{
    float sa = qa.scale / qy.scale, sb = qb.scale / qy.scale;
    int shift = 20 - ilogbf(fmaxf(sa, sb));
    int64_t ma = lrintf(ldexpf(sa, shift)), mb = lrintf(ldexpf(sb, shift));
    int64_t acc = (a - qa.zero_point) * ma + (b - qb.zero_point) * mb + ((int64_t)1 << (shift - 1));
    int64_t v = (acc >> shift) + qy.zero_point; // arithmetic: floor
    return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

static void reference(const struct cc_fq8_desc *d, const int8_t *x, int8_t *y, int ho, int wo)
{
    size_t in = (size_t)d->h * d->w, out = (size_t)ho * wo;
    int8_t *e = malloc(in * d->cexp), *dw = malloc(out * d->cexp);
    if (d->expand)
        conv1x1(x, in, d->cin, d->cexp, d->we, d->swe, d->be, d->qx, d->qe, d->lo[0], d->hi[0], e);
    else
        memcpy(e, x, in * d->cin);
    depthwise(d, e, ho, wo, dw);
    conv1x1(dw, out, d->cexp, d->cout, d->wp, d->swp, d->bp, d->qd, d->qp, d->lo[2], d->hi[2], y);
    for (size_t i = 0; d->residual && i < out * d->cout; i++)
        y[i] = add(y[i], x[i], d->qp, d->qx, d->qy, d->lo[3], d->hi[3]);
    free(e), free(dw);
}

/* ---- the kind for fused_cases.h ---- */

/* A block with its input, the reference's output and the fused block's (owned: destroy). */
struct tcase {
    struct block b;
    struct cc_fq8_block fb; // packed by init
    int8_t *x, *want, *got;
    size_t n_out;
};

static const char *isa(int i, bool *runs)
{
    *runs = cc_fq8_isa_runs((enum cc_fq8_isa)i);
    return cc_fq8_isa_name((enum cc_fq8_isa)i);
}

static void *make(struct tu_rng *r, const struct fused_shape *s, bool **residual)
{
    struct tcase *c = calloc(1, sizeof(*c));
    make_block(&c->b, r, s);
    c->n_out = s->n_out;
    c->x = random_i8(r, s->n_in);
    c->want = malloc(s->n_out);
    c->got = malloc(s->n_out);
    reference(&c->b.d, c->x, c->want, s->ho, s->wo);
    *residual = &c->b.d.residual;
    return c;
}

static bool init(void *tc, int i, int threads, struct cc_error *err)
{
    struct tcase *c = tc;
    cc_fq8_finish(&c->fb); // the last thread count's
    return cc_fq8_init(&c->fb, &c->b.d, (enum cc_fq8_isa)i, threads, err);
}

/* Two poisons: a value left unwritten fails one of them. */
static void run(void *tc, int poison, pthreadpool_t pool)
{
    struct tcase *c = tc;
    memset(c->got, poison ? 0x55 : 0xaa, c->n_out);
    cc_fq8_run(&c->fb, c->x, c->got, pool);
}

static bool compare(void *tc, char *why, size_t size)
{
    struct tcase *c = tc;
    size_t bad = 0, first = 0, cout = (size_t)c->b.d.cout;
    for (size_t i = c->n_out; i-- > 0;)
        if (c->got[i] != c->want[i])
            bad++, first = i;
    snprintf(why, size,
             "%zu of %zu values differ, first at pixel %zu channel %zu (got %d, want %d)", bad,
             c->n_out, first / cout, first % cout, c->got[first], c->want[first]);
    return bad == 0;
}

static void destroy(void *tc)
{
    struct tcase *c = tc;
    cc_fq8_finish(&c->fb);
    free_block(&c->b);
    free(c->x), free(c->want), free(c->got), free(c);
}

/* A zero scale is refused at init, named (the residual refusal: fused_cases.c). */
static void check_bad_scale(void)
{
    struct block b;
    struct tu_rng r;
    tu_rng_seed(&r, 1);
    make_block(&b, &r,
               &(struct fused_shape){
                   .size = 8, .w = 8, .cin = 16, .t = 6, .cexp = 96, .cout = 24, .stride = 1});
    b.d.qd.scale = 0;
    struct cc_fq8_block fb;
    struct cc_error err = {0};
    CHECK(!cc_fq8_init(&fb, &b.d, CC_FQ8_C, 1, &err));
    CHECKF(strstr(err.msg, "scale") != NULL, "error: %s", err.msg);
    free_block(&b);
}

int main(int argc, char **argv)
{
    struct tu_rng r;
    tu_rng_seed(&r, 2026);
    check_bad_scale();
    bool want[CC_FQ8_ISA_COUNT], skip[CC_FQ8_ISA_COUNT];
    q8_families_wanted(argc, argv, cc_fq8_isa_runs, want);
    for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++)
        skip[isa] = !want[isa];
    struct fused_kind kind = {CC_FQ8_ISA_COUNT, isa, 2, make, init, run, compare, destroy, skip};
    fused_cases_run(&kind, &r);
    return tu_exit_code();
}
