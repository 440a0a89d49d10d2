/* camclass — unit tests of the CPU ops (engine/cpu/ref_ops.c) and the CPU backend.
 *
 * Each op is compared with an independent textbook formula (double accumulation, explicit
 * bounds checks) on random shapes: odd sizes, groups, depthwise, stride 2 and 3, asymmetric
 * padding, dilation, every activation. Tolerance of conv/linear: the worst-case bound of float
 * summation, |y - ref| <= n * eps * sum|terms| (n terms, eps = FLT_EPSILON), plus 1e-7. Tiny
 * hand-computed cases check the meaning of every attribute. The CPU backend is then run on a
 * small network with 1, 2 and 3 threads and compared with the ops composed by hand, and so is
 * the engine API with backend auto when no Vulkan driver can be found (it must fall back).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "ref_ops.h"
#include "model.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------- */
/* Independent references                                                                    */
/* ---------------------------------------------------------------------------------------- */

static float ref_act(double v, struct cc_act act)
{
    if (v < act.min)
        v = act.min;
    if (v > act.max)
        v = act.max;
    return (float)v;
}

/* y[o][oy][ox] = act(bias[o] + sum_{ci,ky,kx} x[g*cpg+ci][iy][ix] * w[o][ci][ky][kx]),
 * iy = oy*sh - pt + ky*dh, ix = ox*sw - pl + kx*dw, terms outside the input are zero.
 * tol[i] receives the summation error bound of element i. */
static void ref_conv(const struct cc_conv2d_desc *d, const float *x, const float *w,
                     const float *bias, float *y, float *tol)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    int cpg = d->c / a->groups, opg = d->o / a->groups;
    int n_terms = cpg * d->kh * d->kw + 1;
    for (int o = 0; o < d->o; o++)
        for (int oy = 0; oy < d->ho; oy++)
            for (int ox = 0; ox < d->wo; ox++) {
                double s = bias ? bias[o] : 0.0, mag = fabs(s);
                for (int ci = 0; ci < cpg; ci++)
                    for (int ky = 0; ky < d->kh; ky++)
                        for (int kx = 0; kx < d->kw; kx++) {
                            int iy = oy * a->stride[0] - a->pad[0] + ky * a->dilation[0];
                            int ix = ox * a->stride[1] - a->pad[1] + kx * a->dilation[1];
                            if (iy < 0 || iy >= d->h || ix < 0 || ix >= d->w)
                                continue;
                            int c = (o / opg) * cpg + ci;
                            double t = (double)x[((size_t)c * d->h + iy) * d->w + ix] *
                                       w[(((size_t)o * cpg + ci) * d->kh + ky) * d->kw + kx];
                            s += t;
                            mag += fabs(t);
                        }
                size_t i = ((size_t)o * d->ho + oy) * d->wo + ox;
                y[i] = ref_act(s, d->act);
                tol[i] = (float)(n_terms * FLT_EPSILON * mag + 1e-7);
            }
}

static struct cc_act random_act(struct tu_rng *r)
{
    switch (tu_rng_range(r, 0, 3)) {
    case 0:
        return cc_act_none();
    case 1:
        return cc_act_relu();
    case 2:
        return cc_act_relu6();
    default:
        return (struct cc_act){-0.3f, 0.4f};
    }
}

static int out_size(int in, int pad_sum, int k, int dil, int stride)
{
    int span = in + pad_sum - dil * (k - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
}

/* Checks n values against ref within tol[i] (or the scalar tol when tol_arr is NULL). */
static void check_close(const char *what, const float *y, const float *ref, const float *tol_arr,
                        float tol, size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        float t = tol_arr ? tol_arr[i] : tol;
        if (!(fabsf(y[i] - ref[i]) <= t)) {
            if (!bad)
                first = i;
            bad++;
        }
    }
    CHECKF(bad == 0, "%s: %zu of %zu values off, first [%zu] %.9g vs %.9g", what, bad, n, first,
           bad ? (double)y[first] : 0.0, bad ? (double)ref[first] : 0.0);
}

/* cc_cpu_conv2d with a scratch buffer of exactly the size it asks for (so that a sanitizer
 * build catches an overrun). */
static void conv(const struct cc_conv2d_desc *d, const float *x, const float *w, const float *b,
                 float *y, int o_begin, int o_end)
{
    size_t n = cc_cpu_conv2d_scratch(d);
    float *scratch = n ? malloc(n * sizeof(float)) : NULL;
    cc_cpu_conv2d(d, x, w, b, y, o_begin, o_end, scratch);
    free(scratch);
}

/* Runs cc_cpu_conv2d whole and in three parts against ref_conv. */
static void check_conv(const char *what, const struct cc_conv2d_desc *d, struct tu_rng *r)
{
    int cpg = d->c / d->attrs.groups;
    size_t nx = (size_t)d->c * d->h * d->w, nw = (size_t)d->o * cpg * d->kh * d->kw;
    size_t ny = (size_t)d->o * d->ho * d->wo;
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
    float *b = malloc((size_t)d->o * sizeof(float)), *y = malloc(ny * sizeof(float));
    float *y2 = malloc(ny * sizeof(float)), *ref = malloc(ny * sizeof(float));
    float *tol = malloc(ny * sizeof(float));
    tu_rng_fill(r, x, nx, -2.0f, 2.0f);
    tu_rng_fill(r, w, nw, -1.0f, 1.0f);
    tu_rng_fill(r, b, (size_t)d->o, -0.5f, 0.5f);
    bool use_bias = tu_rng_range(r, 0, 3) != 0;

    ref_conv(d, x, w, use_bias ? b : NULL, ref, tol);
    conv(d, x, w, use_bias ? b : NULL, y, 0, d->o);
    check_close(what, y, ref, tol, 0, ny);

    // In parts at odd boundaries: exactly the same values.
    int cut1 = d->o / 3, cut2 = d->o - d->o / 4;
    for (size_t i = 0; i < ny; i++)
        y2[i] = NAN;
    conv(d, x, w, use_bias ? b : NULL, y2, 0, cut1);
    conv(d, x, w, use_bias ? b : NULL, y2, cut1, cut2);
    conv(d, x, w, use_bias ? b : NULL, y2, cut2, d->o);
    CHECKF(memcmp(y, y2, ny * sizeof(float)) == 0, "%s: output-channel parts differ", what);
    free(x), free(w), free(b), free(y), free(y2), free(ref), free(tol);
}

/* ---------------------------------------------------------------------------------------- */
/* conv2d                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static struct cc_conv2d_desc make_desc(int c, int h, int w, int o, int kh, int kw, int sh, int sw,
                                       int pt, int pl, int pb, int pr, int dil, int groups,
                                       struct cc_act act)
{
    struct cc_conv2d_desc d = {
        .c = c,
        .h = h,
        .w = w,
        .o = o,
        .kh = kh,
        .kw = kw,
        .attrs = {{sh, sw}, {pt, pl, pb, pr}, {dil, dil}, groups},
        .act = act,
    };
    d.ho = out_size(h, pt + pb, kh, dil, sh);
    d.wo = out_size(w, pl + pr, kw, dil, sw);
    return d;
}

static void test_conv_random(void)
{
    struct tu_rng r;
    tu_rng_seed(&r, 2024);
    int done = 0;
    while (done < 300) {
        int groups = tu_rng_range(&r, 1, 4);
        int c = groups * tu_rng_range(&r, 1, 5), o = groups * tu_rng_range(&r, 1, 6);
        if (tu_rng_range(&r, 0, 4) == 0) // depthwise, sometimes with a channel multiplier
            groups = c, o = c * tu_rng_range(&r, 1, 2);
        int kh = tu_rng_range(&r, 1, 5), kw = tu_rng_range(&r, 1, 5);
        struct cc_conv2d_desc d =
            make_desc(c, tu_rng_range(&r, 1, 13), tu_rng_range(&r, 1, 13), o, kh, kw,
                      tu_rng_range(&r, 1, 3), tu_rng_range(&r, 1, 3), tu_rng_range(&r, 0, 2),
                      tu_rng_range(&r, 0, 2), tu_rng_range(&r, 0, 2), tu_rng_range(&r, 0, 2),
                      tu_rng_range(&r, 1, 2), groups, random_act(&r));
        if (d.ho < 1 || d.wo < 1)
            continue;
        char what[160];
        snprintf(what, sizeof(what),
                 "conv #%d c%d %dx%d o%d k%dx%d s%d,%d p%d,%d,%d,%d d%d g%d act[%g,%g]", done, d.c,
                 d.h, d.w, d.o, d.kh, d.kw, d.attrs.stride[0], d.attrs.stride[1], d.attrs.pad[0],
                 d.attrs.pad[1], d.attrs.pad[2], d.attrs.pad[3], d.attrs.dilation[0],
                 d.attrs.groups, (double)d.act.min, (double)d.act.max);
        check_conv(what, &d, &r);
        done++;
    }
}

/* The shapes of mobilenet_v2 layers (shrunk), and the edges of the 1x1 GEMM tiling. */
static void test_conv_shapes(void)
{
    struct tu_rng r;
    tu_rng_seed(&r, 99);
    const struct {
        const char *what;
        struct cc_conv2d_desc d;
    } cases[] = {
        {"stem 3x3 s2", make_desc(3, 17, 15, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, cc_act_relu6())},
        {"depthwise s1", make_desc(12, 11, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 12, cc_act_relu6())},
        {"depthwise s2", make_desc(12, 11, 10, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 12, cc_act_relu())},
        {"pointwise tiles", make_desc(24, 8, 8, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, cc_act_none())},
        {"pointwise edges", make_desc(13, 5, 5, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, cc_act_relu6())},
        {"pointwise 1 px", make_desc(7, 1, 1, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, cc_act_none())},
        {"pointwise groups", make_desc(8, 4, 5, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2, cc_act_relu())},
        {"pointwise s2", make_desc(5, 7, 7, 6, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, cc_act_none())},
        {"pointwise padded", make_desc(5, 3, 4, 6, 1, 1, 1, 1, 1, 0, 0, 2, 1, 1, cc_act_none())},
        {"dilated", make_desc(4, 12, 11, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 1, cc_act_none())},
        {"kernel > input", make_desc(2, 2, 3, 3, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, cc_act_none())},
        {"wide pointwise", make_desc(64, 7, 7, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, cc_act_relu6())},
        {"im2col chunks", make_desc(64, 16, 17, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, cc_act_relu6())},
        {"grouped 3x3", make_desc(8, 9, 7, 6, 3, 3, 2, 1, 1, 0, 1, 2, 1, 2, cc_act_none())},
        {"depthwise x2", make_desc(4, 8, 9, 8, 3, 3, 1, 2, 1, 1, 1, 1, 2, 4, cc_act_relu())},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        CHECKF(cases[i].d.ho >= 1 && cases[i].d.wo >= 1, "%s: bad case", cases[i].what);
        check_conv(cases[i].what, &cases[i].d, &r);
    }
}

static void test_conv_hand(void)
{
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}; // 1 channel, 3x3
    float y[4];

    // 2x2 kernel [[1,0],[0,1]], no padding: sums of diagonal pairs.
    const float diag[4] = {1, 0, 0, 1};
    struct cc_conv2d_desc d = make_desc(1, 3, 3, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, cc_act_none());
    conv(&d, x, diag, NULL, y, 0, 1);
    CHECK(d.ho == 2 && d.wo == 2 && y[0] == 6 && y[1] == 8 && y[2] == 12 && y[3] == 14);

    // 3x3 ones, stride 2, padding 1: the four corner 2x2 sums; bias 0.5; relu6 caps at 6.
    const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, bias = 0.5f;
    d = make_desc(1, 3, 3, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, cc_act_none());
    conv(&d, x, ones, &bias, y, 0, 1);
    CHECK(y[0] == 12.5f && y[1] == 16.5f && y[2] == 24.5f && y[3] == 28.5f);
    d.act = (struct cc_act){13.0f, 25.0f};
    conv(&d, x, ones, &bias, y, 0, 1);
    CHECK(y[0] == 13.0f && y[1] == 16.5f && y[2] == 24.5f && y[3] == 25.0f);

    // Dilation 2, 2x2 kernel of ones on 3x3: the four corners, one output.
    d = make_desc(1, 3, 3, 1, 2, 2, 1, 1, 0, 0, 0, 0, 2, 1, cc_act_none());
    conv(&d, x, ones, NULL, y, 0, 1);
    CHECK(d.ho == 1 && d.wo == 1 && y[0] == 1 + 3 + 7 + 9);

    // Depthwise 1x1 on 2 channels: per-channel scale. Pointwise 2 -> 1: channel mix.
    const float x2[2] = {3, -4}, scale[2] = {2, 0.5f}, mix[2] = {1, 1};
    d = make_desc(2, 1, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2, cc_act_none());
    conv(&d, x2, scale, NULL, y, 0, 2);
    CHECK(y[0] == 6 && y[1] == -2);
    d = make_desc(2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, cc_act_relu());
    conv(&d, x2, mix, NULL, y, 0, 1);
    CHECK(y[0] == 0);
}

/* ---------------------------------------------------------------------------------------- */
/* The small ops                                                                             */
/* ---------------------------------------------------------------------------------------- */

static void test_small_hand(void)
{
    float y[4];
    const float a[3] = {-1, 2, 5}, b[3] = {0.5f, 2, 2};
    cc_ref_add(a, b, y, 3, cc_act_relu6());
    CHECK(y[0] == 0 && y[1] == 4 && y[2] == 6);

    const float gx[8] = {1, 2, 3, 4, -1, -1, -1, -5};
    cc_ref_global_avg_pool(gx, y, 2, 4);
    CHECK(y[0] == 2.5f && y[1] == -2.0f);

    const float lw[4] = {1, 2, 3, 4}, lx[2] = {1, 1}, lb[2] = {0.5f, -10};
    cc_ref_linear(lx, lw, lb, y, 2, 0, 2, cc_act_relu());
    CHECK(y[0] == 3.5f && y[1] == 0);

    const float sx[2] = {0, logf(2)};
    cc_ref_softmax(sx, y, 2);
    CHECK(fabsf(y[0] - 1.0f / 3) < 1e-7f && fabsf(y[1] - 2.0f / 3) < 1e-7f);
    const float big[3] = {1000, 1000, -1000}; // naive exp overflows; the stable one does not
    cc_ref_softmax(big, y, 3);
    CHECK(y[0] == 0.5f && y[1] == 0.5f && y[2] == 0);
    float inplace[2] = {1, 1};
    cc_ref_softmax(inplace, inplace, 2);
    CHECK(inplace[0] == 0.5f && inplace[1] == 0.5f);

    const float cx[4] = {-1, 3, 7, 0};
    cc_ref_clamp(cx, y, 4, cc_act_relu6());
    CHECK(y[0] == 0 && y[1] == 3 && y[2] == 6 && y[3] == 0);
    cc_ref_clamp(cx, y, 4, cc_act_none());
    CHECK(memcmp(cx, y, sizeof(cx)) == 0);
}

static void test_small_random(void)
{
    struct tu_rng r;
    tu_rng_seed(&r, 5);
    enum { MAX = 4096 };
    float *a = malloc(MAX * sizeof(float)), *b = malloc(MAX * sizeof(float));
    float *y = malloc(MAX * sizeof(float)), *ref = malloc(MAX * sizeof(float));
    float *tol = malloc(MAX * sizeof(float));
    for (int iter = 0; iter < 100; iter++) {
        struct cc_act act = random_act(&r);
        tu_rng_fill(&r, a, MAX, -8, 8);
        tu_rng_fill(&r, b, MAX, -1, 1);

        int n = tu_rng_range(&r, 1, 999);
        for (int i = 0; i < n; i++)
            ref[i] = ref_act((double)a[i] + b[i], act);
        cc_ref_add(a, b, y, (size_t)n, act);
        check_close("add", y, ref, NULL, 0, (size_t)n);

        for (int i = 0; i < n; i++)
            ref[i] = ref_act(a[i], act);
        cc_ref_clamp(a, y, (size_t)n, act);
        check_close("clamp", y, ref, NULL, 0, (size_t)n);

        int c = tu_rng_range(&r, 1, 40), hw = tu_rng_range(&r, 1, 99);
        for (int ch = 0; ch < c; ch++) {
            double s = 0;
            for (int i = 0; i < hw; i++)
                s += a[ch * hw + i];
            ref[ch] = (float)(s / hw);
        }
        cc_ref_global_avg_pool(a, y, c, hw);
        check_close("global_avg_pool", y, ref, NULL, 1e-6f, (size_t)c);

        int k = tu_rng_range(&r, 1, 60), nn = tu_rng_range(&r, 1, 60);
        for (int o = 0; o < nn; o++) {
            double s = b[o], mag = fabs(b[o]);
            for (int i = 0; i < k; i++) {
                s += (double)a[i] * b[100 + o * k + i];
                mag += fabs((double)a[i] * b[100 + o * k + i]);
            }
            ref[o] = ref_act(s, act);
            tol[o] = (float)((k + 1) * FLT_EPSILON * mag + 1e-7);
        }
        int cut = tu_rng_range(&r, 0, nn);
        cc_ref_linear(a, b + 100, b, y, k, 0, cut, act);
        cc_ref_linear(a, b + 100, b, y, k, cut, nn, act);
        check_close("linear", y, ref, tol, 0, (size_t)nn);

        double max = a[0], sum = 0;
        for (int i = 0; i < n; i++)
            max = a[i] > max ? a[i] : max;
        for (int i = 0; i < n; i++)
            sum += exp(a[i] - max);
        for (int i = 0; i < n; i++)
            ref[i] = (float)(exp(a[i] - max) / sum);
        cc_ref_softmax(a, y, n);
        for (int i = 0; i < n; i++)
            tol[i] = 1e-6f * ref[i] + 1e-9f;
        check_close("softmax", y, ref, tol, 0, (size_t)n);
    }
    free(a), free(b), free(y), free(ref), free(tol);
}

static void test_table(void)
{
    for (int op = 0; op < CC_OP_COUNT; op++) {
        const struct cc_ref_op *entry = cc_ref_op_find((enum cc_op)op);
        CHECKF(entry && entry->op == (enum cc_op)op && entry->run, "op %s has no CPU entry",
               cc_op_name((enum cc_op)op));
    }
    CHECK(cc_ref_op_find(CC_OP_COUNT) == NULL);
}

/* ---------------------------------------------------------------------------------------- */
/* The CPU backend on a small network                                                        */
/* ---------------------------------------------------------------------------------------- */

enum { NET_H = 40, NET_W = 34, NET_C = 16, NET_HO = 20, NET_WO = 17, NET_CLASSES = 5 };
enum { NET_INPUT = 3 * NET_H * NET_W };

struct net {
    struct cc_model *m;
    float *stem_w, *stem_b, *dw_w, *pw_w, *fc_w, *fc_b; // copies for the hand-composed run
};

static int net_tensor(struct cc_model *m, const char *name, int ndim, const int64_t *shape,
                      float **copy, struct tu_rng *r, struct cc_error *err)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    float *data = NULL;
    if (copy) {
        data = *copy = malloc((size_t)n * sizeof(float));
        tu_rng_fill(r, data, (size_t)n, -0.5f, 0.5f);
    }
    return cc_model_add_tensor(m, name, CC_DTYPE_F32, ndim, shape, data, err);
}

/* input -> conv 3x3 s2 relu6 -> depthwise 3x3 relu6 -> pointwise -> add(stem) -> gap ->
 * flatten -> linear -> softmax. */
static bool build_net(struct net *net, struct cc_error *err)
{
    struct tu_rng r;
    tu_rng_seed(&r, 31);
    struct cc_model *m = net->m = cc_model_new("net");
    int64_t s_in[] = {1, 3, NET_H, NET_W}, s_act[] = {1, NET_C, NET_HO, NET_WO};
    int64_t s_sw[] = {NET_C, 3, 3, 3}, s_c[] = {NET_C}, s_dw[] = {NET_C, 1, 3, 3};
    int64_t s_pw[] = {NET_C, NET_C, 1, 1}, s_g[] = {1, NET_C, 1, 1}, s_f[] = {1, NET_C};
    int64_t s_fw[] = {NET_CLASSES, NET_C}, s_k[] = {NET_CLASSES}, s_o[] = {1, NET_CLASSES};
    int t[] = {
        net_tensor(m, "input", 4, s_in, NULL, &r, err),
        net_tensor(m, "stem.w", 4, s_sw, &net->stem_w, &r, err),
        net_tensor(m, "stem.b", 1, s_c, &net->stem_b, &r, err),
        net_tensor(m, "stem", 4, s_act, NULL, &r, err),
        net_tensor(m, "dw.w", 4, s_dw, &net->dw_w, &r, err),
        net_tensor(m, "dw", 4, s_act, NULL, &r, err),
        net_tensor(m, "pw.w", 4, s_pw, &net->pw_w, &r, err),
        net_tensor(m, "pw", 4, s_act, NULL, &r, err),
        net_tensor(m, "sum", 4, s_act, NULL, &r, err),
        net_tensor(m, "gap", 4, s_g, NULL, &r, err),
        net_tensor(m, "flat", 2, s_f, NULL, &r, err),
        net_tensor(m, "fc.w", 2, s_fw, &net->fc_w, &r, err),
        net_tensor(m, "fc.b", 1, s_k, &net->fc_b, &r, err),
        net_tensor(m, "fc", 2, s_o, NULL, &r, err),
        net_tensor(m, "probs", 2, s_o, NULL, &r, err),
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i] < 0)
            return false;
    union cc_attrs stem = {.conv = {{2, 2}, {1, 1, 1, 1}, {1, 1}, 1}};
    union cc_attrs dw = {.conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, NET_C}};
    union cc_attrs pw = {.conv = {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1}};
    int in_stem[] = {t[0], t[1], t[2]}, in_dw[] = {t[3], t[4]}, in_pw[] = {t[5], t[6]};
    int in_add[] = {t[3], t[7]}, in_fc[] = {t[10], t[11], t[12]};
    struct cc_act none = cc_act_none();
    bool ok =
        cc_model_add_node(m, CC_OP_CONV2D, "stem", 3, in_stem, 1, &t[3], &stem, cc_act_relu6(),
                          err) >= 0 &&
        cc_model_add_node(m, CC_OP_CONV2D, "dw", 2, in_dw, 1, &t[5], &dw, cc_act_relu6(), err) >=
            0 &&
        cc_model_add_node(m, CC_OP_CONV2D, "pw", 2, in_pw, 1, &t[7], &pw, none, err) >= 0 &&
        cc_model_add_node(m, CC_OP_ADD, "add", 2, in_add, 1, &t[8], NULL, none, err) >= 0 &&
        cc_model_add_node(m, CC_OP_GLOBAL_AVG_POOL, "gap", 1, &t[8], 1, &t[9], NULL, none, err) >=
            0 &&
        cc_model_add_node(m, CC_OP_FLATTEN, "flat", 1, &t[9], 1, &t[10], NULL, none, err) >= 0 &&
        cc_model_add_node(m, CC_OP_LINEAR, "fc", 3, in_fc, 1, &t[13], NULL, none, err) >= 0 &&
        cc_model_add_node(m, CC_OP_SOFTMAX, "softmax", 1, &t[13], 1, &t[14], NULL, none, err) >= 0;
    m->input.tensor = t[0];
    m->output.tensor = t[14];
    m->output.kind = CC_OUTPUT_PROBABILITIES;
    return ok && cc_model_finalize(m, err);
}

static void free_net(struct net *net)
{
    cc_model_destroy(net->m);
    free(net->stem_w), free(net->stem_b), free(net->dw_w), free(net->pw_w);
    free(net->fc_w), free(net->fc_b);
}

/* The same network, op by op, in separate buffers. */
static void run_net_by_hand(const struct net *net, const float *input, float *probs)
{
    size_t n = (size_t)NET_C * NET_HO * NET_WO;
    float *stem = malloc(n * sizeof(float)), *dw = malloc(n * sizeof(float));
    float *pw = malloc(n * sizeof(float)), *sum = malloc(n * sizeof(float));
    float gap[NET_C], fc[NET_CLASSES];
    struct cc_conv2d_desc d =
        make_desc(3, NET_H, NET_W, NET_C, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, cc_act_relu6());
    conv(&d, input, net->stem_w, net->stem_b, stem, 0, NET_C);
    d = make_desc(NET_C, NET_HO, NET_WO, NET_C, 3, 3, 1, 1, 1, 1, 1, 1, 1, NET_C, cc_act_relu6());
    conv(&d, stem, net->dw_w, NULL, dw, 0, NET_C);
    d = make_desc(NET_C, NET_HO, NET_WO, NET_C, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, cc_act_none());
    conv(&d, dw, net->pw_w, NULL, pw, 0, NET_C);
    cc_ref_add(stem, pw, sum, n, cc_act_none());
    cc_ref_global_avg_pool(sum, gap, NET_C, NET_HO * NET_WO);
    cc_ref_linear(gap, net->fc_w, net->fc_b, fc, NET_C, 0, NET_CLASSES, cc_act_none());
    cc_ref_softmax(fc, probs, NET_CLASSES);
    free(stem), free(dw), free(pw), free(sum);
}

/* Builds the network, a random input (NET_INPUT values) and its expected output from the ops
 * composed by hand. False (counted as a failed check, nothing left to free) when the build
 * fails. */
static bool prepare_net(struct net *net, float *input, float *expect)
{
    struct cc_error err = {0};
    if (!CHECKF(build_net(net, &err), "build: %s", err.msg)) {
        free_net(net);
        return false;
    }
    struct tu_rng r;
    tu_rng_seed(&r, 8);
    tu_rng_fill(&r, input, NET_INPUT, -1, 1);
    run_net_by_hand(net, input, expect);
    return true;
}

static void test_backend(void)
{
    struct net net = {0};
    struct cc_error err = {0};
    float input[NET_INPUT], expect[NET_CLASSES], got[NET_CLASSES];
    if (!prepare_net(&net, input, expect))
        return;

    for (int threads = 1; threads <= 3; threads++) {
        struct cc_engine_options opts = {.backend = CC_BACKEND_REF, .cpu_threads = threads};
        void *s = cc_ref_backend.create(net.m, &opts, &err);
        if (!CHECKF(s != NULL, "create with %d threads: %s", threads, err.msg))
            continue;
        for (int run = 0; run < 2; run++) { // the second run must not see the first's state
            memset(got, 0, sizeof(got));
            CHECKF(cc_ref_backend.run(s, input, got, &err), "run: %s", err.msg);
            CHECKF(memcmp(got, expect, sizeof(got)) == 0,
                   "%d threads, run %d: %g %g ... differs from the ops composed by hand", threads,
                   run, (double)got[0], (double)got[1]);
        }
        const struct cc_layer_timing *tm = NULL;
        int n = cc_ref_backend.layer_timings(s, &tm);
        CHECK(n == net.m->n_nodes && tm && tm[n - 1].node == n - 1 && tm[0].ms >= 0);
        const char *name = cc_ref_backend.device_name(s);
        CHECKF(strncmp(name, "CPU", 3) == 0 && strstr(name, "thread"), "device name %s", name);
        cc_ref_backend.destroy(s);
    }
    cc_ref_backend.destroy(NULL);
    free_net(&net);
}

/* ---------------------------------------------------------------------------------------- */
/* The engine API around the backends (engine.c)                                             */
/* ---------------------------------------------------------------------------------------- */

static void test_engine_helpers(void)
{
    enum cc_backend_kind k = CC_BACKEND_CPU;
    CHECK(cc_backend_kind_parse("auto", &k) && k == CC_BACKEND_AUTO);
    CHECK(cc_backend_kind_parse("vulkan", &k) && k == CC_BACKEND_VULKAN);
    CHECK(cc_backend_kind_parse("ref", &k) && k == CC_BACKEND_REF);
    CHECK(cc_backend_kind_parse("cpu", &k) && k == CC_BACKEND_CPU);
    CHECK(!cc_backend_kind_parse("gpu", &k) && !cc_backend_kind_parse("", &k) &&
          !cc_backend_kind_parse(NULL, &k) && k == CC_BACKEND_CPU);
    struct cc_engine_options o = cc_engine_options_default();
    o.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    CHECK(o.backend == CC_BACKEND_AUTO && o.device_index == -1 && !o.profile && !o.notices &&
          o.cpu_threads == 0);

    // Highest first, ties to the lower index, NaN below every number (tied with -inf).
    const float scores[6] = {1, 3, 3, NAN, 2, -INFINITY};
    struct cc_topk top[8];
    CHECK(cc_topk(scores, 6, 3, top) == 3);
    CHECK(top[0].index == 1 && top[1].index == 2 && top[2].index == 4 && top[2].score == 2);
    CHECK(cc_topk(scores, 6, 8, top) == 6);
    CHECK(top[3].index == 0 && top[4].index == 3 && top[5].index == 5);
    CHECK(cc_topk(scores, 6, 0, top) == 0 && cc_topk(scores, 0, 3, top) == 0);
    const float one[1] = {-7};
    CHECK(cc_topk(one, 1, 5, top) == 1 && top[0].index == 0 && top[0].score == -7);

    float p[3] = {0, 0, logf(2)};
    cc_softmax(p, p, 3);
    CHECK(fabsf(p[0] - 0.25f) < 1e-7f && fabsf(p[2] - 0.5f) < 1e-7f);
}

/* Reads what was written to f as one string (static buffer). */
static const char *file_text(FILE *f)
{
    static char buf[1024];
    rewind(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    return buf;
}

static void test_engine(void)
{
    struct net net = {0};
    struct cc_error err = {0};
    float input[NET_INPUT], expect[NET_CLASSES], got[NET_CLASSES];
    if (!prepare_net(&net, input, expect))
        return;

    // auto with no Vulkan driver to be found: one notice, then the CPU backend.
    setenv("VK_ICD_FILENAMES", "/nonexistent/camclass-test.json", 1);
    setenv("VK_DRIVER_FILES", "/nonexistent/camclass-test.json", 1);
    FILE *notices = tmpfile();
    struct cc_engine_options opts = cc_engine_options_default();
    opts.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    opts.notices = notices;
    struct cc_engine *e = cc_engine_create_from_model(net.m, &opts, &err);
    net.m = NULL; // the engine owns it now
    if (CHECKF(e != NULL, "auto without Vulkan: %s", err.msg)) {
        const char *text = file_text(notices);
        CHECKF(strstr(text, "Vulkan unavailable (") && strstr(text, "using the CPU backend") &&
                   strchr(text, '\n') == text + strlen(text) - 1,
               "notice: %s", text);
        CHECK(strcmp(cc_engine_backend_name(e), "cpu") == 0);
        CHECK(cc_engine_input_count(e) == NET_INPUT);
        CHECK(cc_engine_output_count(e) == NET_CLASSES);
        CHECK(cc_engine_model(e)->n_nodes == 8);
        CHECKF(cc_engine_run(e, input, got, &err), "run: %s", err.msg);
        // The CPU backend is XNNPACK's, not these ops: other summation order, same result.
        size_t worst = 0;
        double diff = tu_max_abs_diff(got, expect, NET_CLASSES, &worst);
        double tol = 1e-5 * fmax(1.0, tu_max_abs(expect, NET_CLASSES));
        CHECKF(diff <= tol, "auto (cpu): max |got - ops by hand| %g at %zu > %g", diff, worst, tol);
        const struct cc_layer_timing *tm;
        CHECK(cc_engine_layer_timings(e, &tm) == 8);
        CHECK(!cc_engine_run(e, NULL, got, &err) && strstr(err.msg, "input"));
    }
    cc_engine_destroy(e);
    cc_engine_destroy(NULL);
    if (notices)
        fclose(notices);

    // Explicit vulkan does not fall back.
    free_net(&net);
    net = (struct net){0};
    CHECKF(build_net(&net, &err), "build: %s", err.msg);
    opts.backend = CC_BACKEND_VULKAN;
    opts.notices = NULL;
    err.msg[0] = 0;
    e = cc_engine_create_from_model(net.m, &opts, &err);
    net.m = NULL;
    CHECKF(e == NULL && err.msg[0], "vulkan without a driver: engine %p, message \"%s\"", (void *)e,
           err.msg);
    cc_engine_destroy(e);
    free_net(&net);
}

int main(void)
{
    test_conv_hand();
    test_conv_shapes();
    test_conv_random();
    test_small_hand();
    test_small_random();
    test_table();
    test_backend();
    test_engine_helpers();
    test_engine();
    return tu_exit_code();
}
