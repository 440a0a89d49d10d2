/* engine/calibrate.c: a small graph (1x1 conv + relu, global pool, flatten, linear, softmax)
 * calibrated on two inputs whose activations are computed here by hand: each quantization
 * against the formula (the observed range widened to hold 0, scale (hi - lo) / 255, zero point
 * round(-128 - lo / scale)), flatten sharing its input's, softmax left f32, weights per output
 * channel (an all-zero channel at scale 1), biases f32; the int8 model runs on the CPU backend
 * in int8 close to the f32 one; no run, and a NaN input, are errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "engine.h"
#include "testutil.h"

enum { C = 3, HW = 9, O = 3, K = 3 }; // input channels, pixels, conv outputs, classes

static const float conv_w[O * C] = {0.5f, -1.0f, 0.1f, 0.25f, 0.75f, -0.6f, 0, 0, 0}; // 2: zeros
static const float conv_b[O] = {0.1f, -0.2f, 0.3f};
static const float lin_w[K * O] = {1, -2, 0.5f, -1, 1, 0, 0.3f, 0.3f, 0.3f};
static const float lin_b[K] = {0, 0.1f, -0.1f};

static struct cc_model *tiny(void)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_model_new("tiny");
    int64_t xs[4] = {1, C, 3, 3}, ws[4] = {O, C, 1, 1}, ys[4] = {1, O, 3, 3}, ps[4] = {1, O, 1, 1};
    int64_t bs[1] = {O}, fs[2] = {1, O}, lw[2] = {K, O}, lb[1] = {K}, ls[2] = {1, K};
    int x = cc_model_add_tensor(m, "x", CC_DTYPE_F32, 4, xs, NULL, &err);
    int w = cc_model_add_tensor(m, "w", CC_DTYPE_F32, 4, ws, conv_w, &err);
    int b = cc_model_add_tensor(m, "b", CC_DTYPE_F32, 1, bs, conv_b, &err);
    int y = cc_model_add_tensor(m, "y", CC_DTYPE_F32, 4, ys, NULL, &err);
    int p = cc_model_add_tensor(m, "p", CC_DTYPE_F32, 4, ps, NULL, &err);
    int f = cc_model_add_tensor(m, "f", CC_DTYPE_F32, 2, fs, NULL, &err);
    int v = cc_model_add_tensor(m, "v", CC_DTYPE_F32, 2, lw, lin_w, &err);
    int c = cc_model_add_tensor(m, "c", CC_DTYPE_F32, 1, lb, lin_b, &err);
    int l = cc_model_add_tensor(m, "l", CC_DTYPE_F32, 2, ls, NULL, &err);
    int s = cc_model_add_tensor(m, "s", CC_DTYPE_F32, 2, ls, NULL, &err);
    union cc_attrs conv = {.conv = {.stride = {1, 1}, .dilation = {1, 1}, .groups = 1}};
    union cc_attrs none = {0};
    cc_model_add_node(m, CC_OP_CONV2D, "conv", 3, (int[]){x, w, b}, 1, &y, &conv, cc_act_relu(),
                      &err);
    cc_model_add_node(m, CC_OP_GLOBAL_AVG_POOL, "pool", 1, &y, 1, &p, &none, cc_act_none(), &err);
    cc_model_add_node(m, CC_OP_FLATTEN, "flat", 1, &p, 1, &f, &none, cc_act_none(), &err);
    cc_model_add_node(m, CC_OP_LINEAR, "fc", 3, (int[]){f, v, c}, 1, &l, &none, cc_act_none(),
                      &err);
    cc_model_add_node(m, CC_OP_SOFTMAX, "softmax", 1, &l, 1, &s, &none, cc_act_none(), &err);
    m->input.tensor = x, m->output.tensor = s, m->output.kind = CC_OUTPUT_PROBABILITIES;
    CHECKF(cc_model_finalize(m, &err), "tiny model: %s", err.msg);
    return m;
}

/* The quantization the rules give [lo, hi] (the ranges by hand are in double, the
 * calibration's in float: scales within 1e-5, zero points within 1). */
static struct cc_act_quant want(double lo, double hi)
{
    lo = fmin(lo, 0), hi = fmax(hi, 0);
    float scale = (float)((hi - lo) / 255);
    return (struct cc_act_quant){scale, (int)nearbyint(-128 - lo / scale)};
}

static void check_quant(const struct cc_model *q, const char *name, struct cc_act_quant w)
{
    for (int t = 0; t < q->n_tensors; t++)
        if (!strcmp(q->tensors[t].name, name))
            CHECKF(q->tensors[t].quantized &&
                       fabs(q->tensors[t].act_quant.scale / w.scale - 1) < 1e-5 &&
                       abs(q->tensors[t].act_quant.zero_point - w.zero_point) <= 1,
                   "%s: quantized %d scale %g zero point %d, want %g %d", name,
                   q->tensors[t].quantized, q->tensors[t].act_quant.scale,
                   q->tensors[t].act_quant.zero_point, w.scale, w.zero_point);
}

static const struct cc_tensor *find(const struct cc_model *m, const char *name)
{
    for (int t = 0; t < m->n_tensors; t++)
        if (!strcmp(m->tensors[t].name, name))
            return &m->tensors[t];
    return NULL;
}

/* The ranges of x, the conv's output and the logits over inputs in[2], by hand. */
/* r (min, max) widened to hold v. Comparisons, not fmin/fmax: GCC 12 for aarch64 stops with an
 * internal compiler error vectorizing those reductions (vect_transform_reduction). */
static void widen(double r[2], double v)
{
    r[0] = v < r[0] ? v : r[0];
    r[1] = v > r[1] ? v : r[1];
}

static void by_hand(float in[2][C * HW], double r[3][2])
{
    for (int k = 0; k < 3; k++)
        r[k][0] = INFINITY, r[k][1] = -INFINITY;
    for (int n = 0; n < 2; n++) {
        double pool[O] = {0};
        for (int o = 0; o < O; o++)
            for (int i = 0; i < HW; i++) {
                double v = conv_b[o];
                for (int ch = 0; ch < C; ch++)
                    v += conv_w[o * C + ch] * in[n][ch * HW + i];
                v = fmax(0, v);
                widen(r[1], v);
                pool[o] += v / HW;
            }
        for (int i = 0; i < C * HW; i++)
            widen(r[0], in[n][i]);
        for (int k = 0; k < K; k++) {
            double v = lin_b[k];
            for (int o = 0; o < O; o++)
                v += lin_w[k * O + o] * pool[o];
            widen(r[2], v);
        }
    }
}

static void check_weights(const struct cc_model *q)
{
    const struct cc_tensor *w = find(q, "w"), *v = find(q, "v"), *b = find(q, "b");
    CHECK(w && v && b && w->dtype == CC_DTYPE_I8 && v->dtype == CC_DTYPE_I8 &&
          b->dtype == CC_DTYPE_F32 && b->data[1] == conv_b[1]);
    if (!w || !w->q)
        return;
    for (int o = 0; o < O; o++) {
        float amax = 0;
        for (int i = 0; i < C; i++)
            amax = fmaxf(amax, fabsf(conv_w[o * C + i]));
        float scale = amax > 0 ? (float)(amax / 127.0) : 1.0f;
        CHECKF(w->scales[o] == scale, "conv weight channel %d: scale %g, want %g", o, w->scales[o],
               scale);
        for (int i = 0; i < C; i++)
            CHECKF(w->q[o * C + i] == (int)nearbyint(conv_w[o * C + i] / scale),
                   "conv weight [%d][%d]: %d", o, i, w->q[o * C + i]);
    }
}

/* The int8 model on the CPU backend: int8 nodes, and the f32 model's answer. */
static void check_runs(struct cc_model *q, const struct cc_model *m, const float *x)
{
    struct cc_engine_options o = cc_engine_options_default();
    o.backend = CC_BACKEND_REF;
    struct cc_error err = {0};
    float want_y[K], got[K];
    struct cc_engine *ref = cc_engine_create_from_model((struct cc_model *)m, &o, &err);
    o.backend = CC_BACKEND_CPU;
    struct cc_engine *cpu = cc_engine_create_from_model(q, &o, &err);
    CHECKF(ref && cpu, "engines: %s", err.msg);
    if (ref && cpu && CHECK(cc_engine_run(ref, x, want_y, &err)) &&
        CHECK(cc_engine_run(cpu, x, got, &err))) {
        CHECKF(strstr(cc_engine_device_name(cpu), "int8"), "runs in int8: %s",
               cc_engine_device_name(cpu));
        CHECKF(tu_max_abs_diff(want_y, got, K, NULL) < 0.02,
               "int8 probabilities within 0.02 "
               "of f32: %g",
               tu_max_abs_diff(want_y, got, K, NULL));
    }
    cc_engine_destroy(ref);
    cc_engine_destroy(cpu);
}

int main(void)
{
    struct cc_model *m = tiny();
    struct cc_error err = {0};
    struct cc_calibration *c = cc_calibration_new(m, &err);
    CHECKF(c, "calibration: %s", err.msg);
    if (!c)
        return tu_exit_code();
    CHECK(!cc_calibration_quantize(c, NULL, &err) && strstr(err.msg, "no image was run"));
    float in[2][C * HW], bad[C * HW];
    struct tu_rng rng;
    tu_rng_seed(&rng, 7);
    tu_rng_fill(&rng, in[0], C * HW, -1.0f, 2.0f);
    tu_rng_fill(&rng, in[1], C * HW, -0.5f, 3.0f);
    for (int n = 0; n < 2; n++)
        CHECKF(cc_calibration_run(c, in[n], &err), "run %d: %s", n, err.msg);
    memcpy(bad, in[0], sizeof(bad));
    bad[4] = NAN;
    CHECK(!cc_calibration_run(c, bad, &err) && strstr(err.msg, "not finite"));
    CHECK(cc_calibration_runs(c) == 2);
    struct cc_model *q = cc_calibration_quantize(c, "tiny int8", &err);
    CHECKF(q, "quantize: %s", err.msg);
    if (q) {
        double r[3][2];
        by_hand(in, r);
        check_quant(q, "x", want(r[0][0], r[0][1]));
        check_quant(q, "y", want(r[1][0], r[1][1]));
        check_quant(q, "f", find(q, "p")->act_quant); // flatten: its input's
        check_quant(q, "l", want(r[2][0], r[2][1]));
        CHECK(!find(q, "s")->quantized && !strcmp(q->name, "tiny int8"));
        check_weights(q);
    }
    cc_calibration_destroy(c);
    if (q)
        check_runs(q, m, in[1]); // both models pass to the engines
    else
        cc_model_destroy(m);
    return tu_exit_code();
}
