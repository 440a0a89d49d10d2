/* camclass — the direct k x k convolution (engine/cpu/conv3x3.h) against the reference conv2d
 * (engine/cpu/ref_ops.h, NCHW: the NHWC input and output are transposed for it).
 *
 * Shapes: resnet18's 3x3 layers (scaled down where the reference would take long) and its 7x7
 * stem, then random ones: channels 1 to 512 (odd counts, over NR = 64 and under it, enough
 * input channels that the taps go in several groups), sizes 1 to 56, not always square,
 * strides 1 and 2, padding 1 (and 0, 2), dilation 1 and 2, ReLU, ReLU6 or none, with and
 * without a bias; every kernel family the host runs (portable C, AVX2, AVX-512), 1 to 4
 * threads, the output poisoned with NaN first (a pixel or channel left unwritten fails).
 * Tolerance: |got - ref| <= 1e-4 x max|ref| over the output (the sums differ only in order).
 *
 * The residual fusion (cc_conv3x3_fuse_residual, resnet's conv -> add -> ReLU): in half of the
 * random cases and some fixed ones the convolution has no activation and a random residual is
 * added before the case's clamp, into a buffer of its own or in place (the output is the
 * residual; where the direct way's taps go in groups that must be refused, and then a buffer of
 * its own is used), against the reference conv2d plus the add and the clamp.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv3x3.h"
#include "poison.h"
#include "ref_ops.h"
#include "testutil.h"

/* One case: the shapes, and the data (owned: free_case). */
struct conv_case {
    struct cc_conv3x3_desc d;
    float *x, *w, *bias; // x (h, w, c) NHWC; w (n, c, kh, kw); bias (n) or NULL
    float *want;         // (ho, wo, n) NHWC from the reference
    float *res;          // (ho, wo, n) NHWC added before the clamp after (fused), or NULL
    struct cc_act after; // res: the add's clamp (d.act is then none)
};

static float *random_floats(struct tu_rng *r, size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    tu_rng_fill(r, p, n, -scale, scale);
    return p;
}

/* The reference on c's data: x to NCHW, cc_cpu_conv2d, the result back to NHWC. */
static void reference(struct conv_case *c)
{
    const struct cc_conv3x3_desc *d = &c->d;
    struct cc_conv2d_desc rd = {d->c,  d->h,  d->w,  d->n,     d->kh,
                                d->kw, d->ho, d->wo, d->attrs, d->act};
    size_t in = (size_t)d->h * d->w, out = (size_t)d->ho * d->wo;
    float *xc = malloc((in * d->c + 1) * sizeof(float)), *yc = malloc(out * d->n * sizeof(float));
    float *scratch = malloc((cc_cpu_conv2d_scratch(&rd) + 1) * sizeof(float));
    for (size_t p = 0; p < in; p++)
        for (int ch = 0; ch < d->c; ch++)
            xc[(size_t)ch * in + p] = c->x[p * d->c + ch];
    cc_cpu_conv2d(&rd, xc, c->w, c->bias, yc, 0, d->n, scratch);
    c->want = malloc(out * d->n * sizeof(float));
    for (size_t p = 0; p < out; p++)
        for (int o = 0; o < d->n; o++)
            c->want[p * d->n + o] = yc[(size_t)o * out + p];
    free(xc), free(yc), free(scratch);
}

/* c->want = clamp(want + res) with the add's clamp c->after. */
static void add_residual(struct conv_case *c)
{
    size_t count = (size_t)c->d.ho * c->d.wo * c->d.n;
    for (size_t i = 0; i < count; i++) {
        float v = c->want[i] + c->res[i];
        v = v < c->after.min ? c->after.min : v;
        c->want[i] = v > c->after.max ? c->after.max : v;
    }
}

/* A case of the given shape with random data (residual: the clamp after a residual add, the
 * convolution's own none); its output size from the attributes. */
static void make_case(struct conv_case *c, struct tu_rng *r, int h, int w, int cin, int n, int k,
                      int stride, int pad, int dil, bool residual)
{
    static const struct cc_act acts[3] = {{0.0f, INFINITY, CC_ACT_CLAMP},
                                          {0.0f, 6.0f, CC_ACT_CLAMP},
                                          {-INFINITY, INFINITY, CC_ACT_CLAMP}};
    struct cc_conv3x3_desc d = {
        .h = h,
        .w = w,
        .c = cin,
        .n = n,
        .kh = k,
        .kw = k,
        .attrs = {{stride, stride}, {pad, pad, pad, pad}, {dil, dil}, 1},
        .act = acts[tu_rng_range(r, 0, 2)],
    };
    d.ho = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
    d.wo = (w + 2 * pad - dil * (k - 1) - 1) / stride + 1;
    c->d = d;
    c->x = random_floats(r, (size_t)h * w * cin, 2.0f);
    c->w = random_floats(r, (size_t)n * cin * k * k, 2.0f / sqrtf((float)(cin * k * k)));
    c->bias = tu_rng_range(r, 0, 3) ? random_floats(r, (size_t)n, 0.5f) : NULL;
    c->res = NULL;
    if (residual) {
        c->after = c->d.act;
        c->d.act = acts[2];
        c->res = random_floats(r, (size_t)d.ho * d.wo * n, 2.0f);
    }
    reference(c);
    if (residual)
        add_residual(c);
}

static void free_case(struct conv_case *c)
{
    free(c->x), free(c->w), free(c->bias), free(c->want), free(c->res);
}

/* With c's residual: p fused with it, in place in got on odd thread counts (refused where the
 * direct way's taps go in groups: then into res, a buffer of its own, as on even ones); false
 * (a failed check) where the fusion is refused otherwise. got is poisoned when not in place. */
static bool fuse(const struct conv_case *c, struct cc_conv3x3 *p, int threads, float *got,
                 float *res)
{
    size_t count = (size_t)c->d.ho * c->d.wo * c->d.n;
    bool grouped = !p->wino && p->group < p->taps;
    if (threads % 2) {
        memcpy(got, c->res, count * sizeof(float));
        bool fused = cc_conv3x3_fuse_residual(p, got, got, c->after);
        if (!CHECKF(fused != grouped, "in-place residual %s with taps in %s",
                    fused ? "taken" : "refused", grouped ? "groups" : "one group") ||
            fused)
            return fused;
    }
    cc_poison_f32(got, count * sizeof(float));
    memcpy(res, c->res, count * sizeof(float));
    return CHECKF(cc_conv3x3_fuse_residual(p, res, got, c->after), "residual fusion refused");
}

/* The Winograd way's tasks on threads threads: at least 4 a thread where the layer has as
 * many tile blocks x panels (resnet18's 7x7 layer had 1 task at 2 threads, its 14x14 ones 3). */
static void check_split(const struct cc_conv3x3 *p, int threads)
{
    int blocks = (p->tiles_y * p->tiles_x + CC_CONV3X3_MR - 1) / CC_CONV3X3_MR;
    int most = blocks * p->panels, want = threads > 1 ? 4 * threads : 1;
    int tasks = p->tile_blocks * p->panel_groups;
    CHECKF(tasks >= (most < want ? most : want) && p->tile_blocks <= blocks &&
               p->panel_groups <= p->panels,
           "winograd F(%dx%d) %dx%d %d -> %d, %d thread(s): %d tile blocks x %d panel groups",
           p->wino_m, p->wino_m, p->d.h, p->d.w, p->d.c, p->d.n, threads, p->tile_blocks,
           p->panel_groups);
}

/* c the algo way with isa's kernels on 1 to 4 threads against the reference: run twice, first
 * on another input (the Winograd way keeps transformed inputs between a run's tasks: not
 * between runs). */
static void check_case(const struct conv_case *c, enum cc_conv3x3_algo algo, enum cc_stem_isa isa,
                       double worst_error[3])
{
    const struct cc_conv3x3_desc *d = &c->d;
    size_t n_out = (size_t)d->ho * d->wo * d->n, n_in = (size_t)d->h * d->w * d->c;
    float *got = malloc(n_out * sizeof(float)), *res = malloc(n_out * sizeof(float));
    float *x = malloc(n_in * sizeof(float));
    double tol = 1e-4 * tu_max_abs(c->want, n_out);
    for (int threads = 1; threads <= 4; threads++) {
        struct cc_conv3x3 p;
        struct cc_error err = {0};
        if (!CHECKF(cc_conv3x3_init(&p, d, c->w, c->bias, x, got, algo, isa, (size_t)threads, &err),
                    "init: %s", err.msg))
            break;
        if (p.wino)
            check_split(&p, threads);
        pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
        for (size_t i = 0; i < n_in; i++)
            x[i] = -c->x[i];
        cc_conv3x3_run(&p, pool);
        memcpy(x, c->x, n_in * sizeof(float));
        cc_poison_f32(got, n_out * sizeof(float));
        if (!c->res || fuse(c, &p, threads, got, res))
            cc_conv3x3_run(&p, pool);
        size_t worst = 0;
        double diff = tu_max_abs_diff(got, c->want, n_out, &worst);
        if (tol > 0 && diff / (tol * 1e4) > worst_error[algo])
            worst_error[algo] = diff / (tol * 1e4);
        CHECKF(diff <= tol,
               "%s %s%s, %d thread(s): %dx%d %d -> %d k%d s%d p%d d%d: |diff| %g > %g at pixel "
               "%zu channel %zu (got %g, want %g)",
               p.wino ? (p.wino_m == 4 ? "winograd F(4x4)" : "winograd") : "direct",
               cc_stem_isa_name(isa),
               !c->res        ? ""
               : p.res == got ? " + residual in place"
                              : " + residual",
               threads, d->h, d->w, d->c, d->n, d->kh, d->attrs.stride[0], d->attrs.pad[0],
               d->attrs.dilation[0], diff, tol, worst / d->n, worst % d->n, got[worst],
               c->want[worst]);
        pthreadpool_destroy(pool);
        cc_conv3x3_finish(&p);
    }
    free(got), free(res), free(x);
}

/* Shapes every family must compute: [h, w, c, n, k, stride, pad, dilation, residual]. */
static const int fixed[][9] = {
    {56, 56, 64, 64, 3, 1, 1, 1, 0}, // resnet18's layer1
    {56, 56, 64, 64, 3, 1, 1, 1, 1},   {28, 28, 64, 128, 3, 2, 1, 1, 0},
    {14, 14, 128, 128, 3, 1, 1, 1, 1}, {14, 14, 256, 256, 3, 2, 1, 1, 0},
    {7, 7, 512, 512, 3, 1, 1, 1, 0}, // layer4: the taps in 5 groups
    {7, 7, 512, 512, 3, 1, 1, 1, 1},   {56, 56, 3, 64, 7, 2, 3, 1, 0}, // the stem (a quarter)
    {1, 1, 1, 1, 3, 1, 1, 1, 1},       {1, 1, 7, 65, 3, 2, 1, 1, 0},
    {2, 3, 171, 17, 3, 1, 1, 1, 1},    {9, 8, 5, 3, 5, 1, 2, 2, 0},
    {6, 7, 33, 129, 3, 1, 0, 1, 1},    {5, 5, 300, 67, 3, 2, 1, 1, 1},
};

/* A random case whose reference takes at most ~30 MFLOP: channels 1 to 512, sizes 1 to 56. */
static void random_case(struct conv_case *c, struct tu_rng *r)
{
    int cin = tu_rng_range(r, 0, 1) ? tu_rng_range(r, 1, 512) : tu_rng_range(r, 1, 40);
    int n = tu_rng_range(r, 0, 1) ? tu_rng_range(r, 1, 512) : tu_rng_range(r, 1, 70);
    int most = (int)sqrt(30e6 / (18.0 * cin * n)) + 1;
    most = most > 56 ? 56 : most;
    int h = tu_rng_range(r, 1, most), w = h > 2 ? h + tu_rng_range(r, -2, 1) : h;
    make_case(c, r, h, w, cin, n, 3, tu_rng_range(r, 1, 2), 1, tu_rng_range(r, 0, 4) ? 1 : 2,
              tu_rng_range(r, 0, 1));
}

/* c both ways (where Winograd applies) with every kernel family the host runs, then freed;
 * the largest |got - ref| / max|ref| of each way in worst_error. */
static void check_all(struct conv_case *c, double worst_error[3])
{
    for (int isa = 0; isa < CC_STEM_ISA_COUNT; isa++)
        if (cc_stem_isa_runs((enum cc_stem_isa)isa)) {
            check_case(c, CC_CONV3X3_DIRECT, (enum cc_stem_isa)isa, worst_error);
            if (cc_conv3x3_wino_applies(&c->d)) {
                check_case(c, CC_CONV3X3_WINOGRAD, (enum cc_stem_isa)isa, worst_error);
                check_case(c, CC_CONV3X3_WINOGRAD4, (enum cc_stem_isa)isa, worst_error);
            }
        }
    free_case(c);
}

/* Fusions that must be refused: an output over the input (same shape: the output's pixels
 * would overwrite inputs that later pixels read), a residual overlapping the output in part,
 * a convolution with an activation of its own; p unchanged after each. */
static void check_refusals(struct tu_rng *r)
{
    struct conv_case c;
    make_case(&c, r, 6, 6, 8, 8, 3, 1, 1, 1, true);
    float *buf = calloc(6 * 6 * 8 * 3, sizeof(float));
    struct cc_conv3x3 p;
    struct cc_error err = {0};
    for (int algo = 0; algo < 2; algo++) {
        if (!CHECKF(cc_conv3x3_init(&p, &c.d, c.w, c.bias, buf, buf + 300,
                                    (enum cc_conv3x3_algo)algo, cc_stem_isa_best(), 1, &err),
                    "init: %s", err.msg))
            break;
        CHECK(!cc_conv3x3_fuse_residual(&p, c.res, buf + 8, c.after));       // over the input
        CHECK(!cc_conv3x3_fuse_residual(&p, buf + 400, buf + 300, c.after)); // res in part
        p.d.act = cc_act_relu();
        CHECK(!cc_conv3x3_fuse_residual(&p, c.res, buf + 300, c.after)); // own activation
        CHECK(p.res == NULL && p.y == buf + 300);
        cc_conv3x3_finish(&p);
    }
    free(buf);
    free_case(&c);
}

int main(void)
{
    struct tu_rng r;
    tu_rng_seed(&r, 2626);
    double worst_error[3] = {0, 0, 0};
    for (int isa = 0; isa < CC_STEM_ISA_COUNT; isa++)
        printf("# %s: %s\n", cc_stem_isa_name((enum cc_stem_isa)isa),
               cc_stem_isa_runs((enum cc_stem_isa)isa) ? "checked" : "not on this CPU or build");
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        const int *f = fixed[i];
        struct conv_case c;
        make_case(&c, &r, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]);
        check_all(&c, worst_error);
    }
    check_refusals(&r);
    for (int i = 0; i < 24; i++) {
        struct conv_case c;
        random_case(&c, &r);
        check_all(&c, worst_error);
    }
    printf("# largest |got - ref| / max|ref|: direct %.2g, Winograd %.2g, F(4x4) %.2g\n",
           worst_error[0], worst_error[1], worst_error[2]);
    return tu_exit_code();
}
