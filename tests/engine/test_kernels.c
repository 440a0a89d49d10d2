/* camclass — every Vulkan kernel and every XNNPACK operator against the C reference ops.
 *
 * Each case builds a model around ONE computing node with the model.h builder (random weights,
 * fixed seed) and runs it through cc_engine_create_from_model() on the reference backend
 * ("ref", the plain C ops), then on the Vulkan and on the CPU (XNNPACK) backend. The graph
 * input must be [1,3,h,w] and the output [1,N], so the node under test is framed by
 * reshape/flatten nodes: they compute nothing on ref and Vulkan (they alias memory) and are
 * NHWC <-> NCHW relayouts on the CPU backend, so those are checked too.
 *
 * Tolerance: max |backend - ref| <= 1e-4 * max(1, max |ref|) per case.
 *
 * int8 weights (the i8 cases): the same random weights quantized per output channel as the
 * exporter does (scale = max|w| / 127, q = round(w / scale)). The ref and CPU backends
 * dequantize them to f32 at load, the Vulkan kernels' WEIGHTS_I8 variants convert and scale
 * in the shader; all use the same values exactly, so the f32 tolerance holds for them too.
 *
 * int8 arithmetic (the q8 cases: i8 weights and quantized activations): the CPU backend
 * computes them in int8 (XNNPACK QC8/QS8); ref and Vulkan compute in f32. The CPU's output
 * must lie on the output's int8 grid (so int8 really ran) and within one step of ref's exact
 * result put on that grid; the inputs lie on the input's grid, so quantizing them is exact.
 *
 * With a profile name as its argument (`test_kernels pi4`), the Vulkan backend is held to that
 * device's limits (engine option vk_profile, vk_profile.h) and only ref and Vulkan run: every
 * case must run wholly on Vulkan within those limits (a node sent to the per-op fallback fails
 * it) and give the same results, so a kernel that would not fit the Raspberry Pi 4 fails here.
 *
 * The direct cases (stem_cases, random_stem) are image stems: a 3x3 stride-2 conv2d reading the
 * [1,3,h,w] graph input itself, with no reshape before it; besides the rows every case runs,
 * they run with the CPU backend's direct stem forced on (CAMCLASS_CPU_STEM: the host's best
 * kernels, AVX2, portable C) at 1 to 4 threads, and each of those runs must say it used it.
 *
 * Every CPU run poisons its working memory first (engine option poison: f32 NaN, int8 -128),
 * so that a result depending on memory the run did not write fails on any host. The odd cases
 * also run on the CPU backend at 1 and 3 threads. `test_kernels --cpu` runs the CPU backends
 * only; with cpu_isa_shim preloaded (CC_ISA_SHIM set) that is XNNPACK's kernels of another
 * x86-64 host, and the shim must have been applied (checked).
 *
 * Without a Vulkan device this test FAILS: CI installs mesa-vulkan-drivers (lavapipe).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "model.h"
#include "stem_conv.h"
#include "testutil.h"

#define TOLERANCE 1e-4

enum act_kind {
    ACT_NONE,
    ACT_RELU,
    ACT_RELU6,
    ACT_CLAMP,
    ACT_SIGMOID,
    ACT_HARDSIGMOID,
    ACT_HARDSWISH,
    ACT_SILU
};

static struct cc_act make_act(enum act_kind a)
{
    switch (a) {
    case ACT_RELU:
        return cc_act_relu();
    case ACT_RELU6:
        return cc_act_relu6();
    case ACT_CLAMP:
        return (struct cc_act){-0.3f, 0.4f};
    case ACT_SIGMOID:
        return cc_act_of(CC_ACT_SIGMOID);
    case ACT_HARDSIGMOID:
        return cc_act_of(CC_ACT_HARDSIGMOID);
    case ACT_HARDSWISH:
        return cc_act_of(CC_ACT_HARDSWISH);
    case ACT_SILU:
        return cc_act_of(CC_ACT_SILU);
    default:
        return cc_act_none();
    }
}

static const char *act_name(enum act_kind a)
{
    static const char *names[] = {"none",    "relu",        "relu6",     "clamp(-0.3,0.4)",
                                  "sigmoid", "hardsigmoid", "hardswish", "silu"};
    return names[a];
}

/* One test case; the fields used depend on op. */
struct kcase {
    enum cc_op op;
    int C, H, W;   // input of the node under test (linear/softmax: C = K or N)
    int O, KH, KW; // conv2d: output channels, kernel; linear: O = N
    int stride[2], pad[4], dilation[2], groups;
    bool bias;
    enum act_kind act;
    bool i8; // conv2d/linear weights as i8 with per-output-channel scales
    bool q8; // activations quantized too (int8 arithmetic on the CPU backend); needs i8
    // Pools: KH x KW window, stride, pad; these two flags. mul: bcast = input 1 is [1,C,1,1].
    // slice: channels [O, KH). channel_shuffle: groups. concat: O extra copies of the input.
    int ceil_mode, count_include_pad;
    bool bcast;
    bool direct; // conv2d with C == 3: reads the graph input itself (no reshape before it), as
                 // an image network's stem does: the CPU backend's direct stem may run it
};

/* Activation quantizations of the q8 cases: the input (and what only moves or clips it), the
 * pooled output, and every other output. Zero points are not 0, so that they are exercised. */
static const struct cc_act_quant Q_IN = {2.0f / 127.0f, 3};
static const struct cc_act_quant Q_POOL = {0.02f, 5};
static const struct cc_act_quant Q_OUT = {0.05f, -10};

/* ---------------------------------------------------------------------------------------- */
/* Model building                                                                            */

struct builder {
    struct cc_model *m;
    struct tu_rng rng;
    struct cc_error err;
    bool ok;
    bool i8; // weights "w" as i8
};

/* Adds count random weights in [-scale, scale], quantized to int8 per output channel (axis 0,
 * d0 channels) as docs/MODEL_FORMAT.md's exporter rule says. Returns the tensor or -1. */
static int tensor_i8(struct builder *b, const char *name, int ndim, const int64_t *shape,
                     int64_t count, float scale)
{
    float *w = malloc((size_t)count * sizeof(float));
    int8_t *q = malloc((size_t)count);
    float *scales = malloc((size_t)shape[0] * sizeof(float));
    tu_rng_fill(&b->rng, w, (size_t)count, -scale, scale);
    int64_t per = count / shape[0];
    for (int64_t o = 0; o < shape[0]; o++) {
        float amax = 0;
        for (int64_t i = o * per; i < (o + 1) * per; i++)
            amax = fmaxf(amax, fabsf(w[i]));
        scales[o] = amax > 0 ? (float)((double)amax / 127.0) : 1.0f;
        for (int64_t i = o * per; i < (o + 1) * per; i++)
            q[i] = (int8_t)fmax(-127.0, fmin(127.0, rint((double)w[i] / scales[o])));
    }
    int t = cc_model_add_tensor_i8(b->m, name, ndim, shape, q, scales, &b->err);
    free(w);
    free(q);
    free(scales);
    if (t < 0)
        b->ok = false;
    return t;
}

static int tensor(struct builder *b, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2,
                  int64_t d3, float scale)
{
    int64_t shape[4] = {d0, d1, d2, d3};
    float *data = NULL;
    int64_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    if (scale > 0 && b->i8 && strcmp(name, "w") == 0)
        return tensor_i8(b, name, ndim, shape, count, scale);
    if (scale > 0) {
        data = malloc((size_t)count * sizeof(float));
        tu_rng_fill(&b->rng, data, (size_t)count, -scale, scale);
    }
    int t = cc_model_add_tensor(b->m, name, CC_DTYPE_F32, ndim, shape, data, &b->err);
    free(data);
    if (t < 0)
        b->ok = false;
    return t;
}

static void node(struct builder *b, enum cc_op op, const char *name, int n_in, const int *in,
                 int out, const union cc_attrs *attrs, struct cc_act act)
{
    if (b->ok && cc_model_add_node(b->m, op, name, n_in, in, 1, &out, attrs, act, &b->err) < 0)
        b->ok = false;
}

/* The q8 cases' activation quantization: Q_IN on the input and on what only reshapes or
 * clamps it, Q_POOL on a pooled output, Q_OUT on every other computed tensor. */
static void quantize_activations(struct builder *b, const struct kcase *k)
{
    static const char *const in_like[] = {"input", "r", "flat", "c"};
    for (size_t i = 0; i < sizeof(in_like) / sizeof(in_like[0]); i++) {
        int t = cc_model_find_tensor(b->m, in_like[i]);
        if (t >= 0 && b->ok && !cc_model_set_act_quant(b->m, t, Q_IN, &b->err))
            b->ok = false;
    }
    struct cc_act_quant q = k->op == CC_OP_GLOBAL_AVG_POOL ? Q_POOL : Q_OUT;
    if (k->op == CC_OP_CLAMP)
        q = Q_IN; // clamp only clips: it keeps its input's quantization
    for (int i = 0; i < 2; i++) {
        int t = cc_model_find_tensor(b->m, i == 0 ? "t" : "output");
        if (t >= 0 && b->ok && !cc_model_set_act_quant(b->m, t, q, &b->err))
            b->ok = false;
    }
}

/* The quantization of the case's output (q8 cases). */
static struct cc_act_quant output_quant(const struct kcase *k)
{
    return k->op == CC_OP_GLOBAL_AVG_POOL ? Q_POOL : k->op == CC_OP_CLAMP ? Q_IN : Q_OUT;
}

/* PyTorch's pooled size (written out again here, independently of the engine's). */
static int pool_out(int in, int k, int s, int lo, int hi, int ceil_mode)
{
    int span = in + lo + hi - k;
    int out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + lo)
        out--;
    return out;
}

/* The node(s) under test for pools, concat, slice, channel_shuffle and mul, reading r
 * [1,C,H,W]; returns the output tensor "t" and its element count. */
static int build_other(struct builder *b, const struct kcase *k, int r, int64_t *out_count)
{
    union cc_attrs a = {0};
    int t = -1;
    int64_t hw = (int64_t)k->H * k->W;
    // c = clamp(r): a second operand that differs from the first (both nodes under test)
    int c = tensor(b, "c", 4, 1, k->C, k->H, k->W, 0);
    node(b, CC_OP_CLAMP, "clamp", 1, &r, c, NULL, (struct cc_act){-0.5f, 0.7f});
    switch (k->op) {
    case CC_OP_MAX_POOL2D:
    case CC_OP_AVG_POOL2D: {
        a.pool = (struct cc_pool_attrs){{k->KH, k->KW},
                                        {k->stride[0], k->stride[1]},
                                        {k->pad[0], k->pad[1], k->pad[2], k->pad[3]},
                                        k->ceil_mode,
                                        k->count_include_pad};
        int ho = pool_out(k->H, k->KH, k->stride[0], k->pad[0], k->pad[2], k->ceil_mode);
        int wo = pool_out(k->W, k->KW, k->stride[1], k->pad[1], k->pad[3], k->ceil_mode);
        t = tensor(b, "t", 4, 1, k->C, ho, wo, 0);
        node(b, k->op, "pool", 1, &c, t, &a, cc_act_none());
        *out_count = (int64_t)k->C * ho * wo;
        break;
    }
    case CC_OP_CONCAT: {
        int in[CC_MAX_NODE_INPUTS];
        int n = 2 + k->O;
        for (int i = 0; i < n; i++)
            in[i] = i % 2 ? c : r;
        t = tensor(b, "t", 4, 1, (int64_t)k->C * n, k->H, k->W, 0);
        node(b, CC_OP_CONCAT, "concat", n, in, t, NULL, cc_act_none());
        *out_count = (int64_t)k->C * n * hw;
        break;
    }
    case CC_OP_SLICE:
        a.slice = (struct cc_slice_attrs){k->O, k->KH};
        t = tensor(b, "t", 4, 1, k->KH - k->O, k->H, k->W, 0);
        node(b, CC_OP_SLICE, "slice", 1, &c, t, &a, cc_act_none());
        *out_count = (int64_t)(k->KH - k->O) * hw;
        break;
    case CC_OP_CHANNEL_SHUFFLE:
        a.shuffle.groups = k->groups;
        t = tensor(b, "t", 4, 1, k->C, k->H, k->W, 0);
        node(b, CC_OP_CHANNEL_SHUFFLE, "shuffle", 1, &c, t, &a, cc_act_none());
        *out_count = (int64_t)k->C * hw;
        break;
    case CC_OP_MUL: {
        int s = c;
        if (k->bcast) { // a squeeze-excitation scale: the channel means of c
            s = tensor(b, "s", 4, 1, k->C, 1, 1, 0);
            node(b, CC_OP_GLOBAL_AVG_POOL, "gap", 1, &c, s, NULL, cc_act_none());
        }
        t = tensor(b, "t", 4, 1, k->C, k->H, k->W, 0);
        int in[2] = {r, s};
        node(b, CC_OP_MUL, "mul", 2, in, t, NULL, make_act(k->act));
        *out_count = (int64_t)k->C * hw;
        break;
    }
    default:
        b->ok = false;
        cc_error_set(&b->err, "test case with op %s has no builder", cc_op_name(k->op));
    }
    return t;
}

/* Builds the case's model (deterministic: same seed, same model). Returns NULL with *err. */
static struct cc_model *build(const struct kcase *k, uint64_t seed, struct cc_error *err)
{
    struct builder b = {.m = cc_model_new("kernel"), .ok = true, .i8 = k->i8};
    if (!b.m) {
        cc_error_set(err, "out of memory");
        return NULL;
    }
    tu_rng_seed(&b.rng, seed);
    int64_t in_count = (int64_t)k->C * k->H * k->W;
    if (in_count % 3 != 0) {
        cc_model_destroy(b.m);
        cc_error_set(err, "test case input count %lld is not a multiple of 3", (long long)in_count);
        return NULL;
    }
    int x = k->direct ? tensor(&b, "input", 4, 1, 3, k->H, k->W, 0)
                      : tensor(&b, "input", 4, 1, 3, 1, in_count / 3, 0);
    struct cc_act act = make_act(k->act);
    int y = -1;
    if (k->op == CC_OP_LINEAR || k->op == CC_OP_SOFTMAX) {
        int flat = tensor(&b, "flat", 2, 1, in_count, 1, 1, 0);
        node(&b, CC_OP_FLATTEN, "flatten", 1, &x, flat, NULL, cc_act_none());
        if (k->op == CC_OP_SOFTMAX) {
            y = tensor(&b, "output", 2, 1, in_count, 1, 1, 0);
            node(&b, CC_OP_SOFTMAX, "softmax", 1, &flat, y, NULL, cc_act_none());
        } else {
            int w = tensor(&b, "w", 2, k->O, in_count, 1, 1, 1.0f / sqrtf((float)in_count));
            int bias = k->bias ? tensor(&b, "b", 1, k->O, 1, 1, 1, 0.5f) : -1;
            y = tensor(&b, "output", 2, 1, k->O, 1, 1, 0);
            int in[3] = {flat, w, bias};
            node(&b, CC_OP_LINEAR, "linear", k->bias ? 3 : 2, in, y, NULL, act);
        }
    } else {
        int r = x;
        if (!k->direct) {
            r = tensor(&b, "r", 4, 1, k->C, k->H, k->W, 0);
            node(&b, CC_OP_RESHAPE, "reshape", 1, &x, r, NULL, cc_act_none());
        }
        int t = -1;
        int64_t out_count = 0;
        if (k->op == CC_OP_CONV2D) {
            union cc_attrs a = {.conv = {
                                    .stride = {k->stride[0], k->stride[1]},
                                    .pad = {k->pad[0], k->pad[1], k->pad[2], k->pad[3]},
                                    .dilation = {k->dilation[0], k->dilation[1]},
                                    .groups = k->groups,
                                }};
            int cg = k->C / k->groups;
            int ho =
                (k->H + k->pad[0] + k->pad[2] - k->dilation[0] * (k->KH - 1) - 1) / k->stride[0] +
                1;
            int wo =
                (k->W + k->pad[1] + k->pad[3] - k->dilation[1] * (k->KW - 1) - 1) / k->stride[1] +
                1;
            float s = 1.0f / sqrtf((float)(cg * k->KH * k->KW));
            int w = tensor(&b, "w", 4, k->O, cg, k->KH, k->KW, s);
            int bias = k->bias ? tensor(&b, "b", 1, k->O, 1, 1, 1, 0.5f) : -1;
            t = tensor(&b, "t", 4, 1, k->O, ho, wo, 0);
            int in[3] = {r, w, bias};
            node(&b, CC_OP_CONV2D, "conv", k->bias ? 3 : 2, in, t, &a, act);
            out_count = (int64_t)k->O * ho * wo;
        } else if (k->op == CC_OP_ADD) {
            /* b = clamp(r) so that the two operands differ; both nodes are under test. */
            int c = tensor(&b, "c", 4, 1, k->C, k->H, k->W, 0);
            node(&b, CC_OP_CLAMP, "clamp", 1, &r, c, NULL, (struct cc_act){-0.5f, 0.7f});
            t = tensor(&b, "t", 4, 1, k->C, k->H, k->W, 0);
            int in[2] = {r, c};
            node(&b, CC_OP_ADD, "add", 2, in, t, NULL, act);
            out_count = in_count;
        } else if (k->op == CC_OP_CLAMP) {
            t = tensor(&b, "t", 4, 1, k->C, k->H, k->W, 0);
            node(&b, CC_OP_CLAMP, "clamp", 1, &r, t, NULL, act);
            out_count = in_count;
        } else if (k->op == CC_OP_GLOBAL_AVG_POOL) {
            t = tensor(&b, "t", 4, 1, k->C, 1, 1, 0);
            node(&b, CC_OP_GLOBAL_AVG_POOL, "gap", 1, &r, t, NULL, cc_act_none());
            out_count = k->C;
        } else {
            t = build_other(&b, k, r, &out_count);
        }
        y = tensor(&b, "output", 2, 1, out_count, 1, 1, 0);
        node(&b, CC_OP_FLATTEN, "flatten", 1, &t, y, NULL, cc_act_none());
    }
    if (!b.ok) {
        *err = b.err;
        cc_model_destroy(b.m);
        return NULL;
    }
    if (k->q8)
        quantize_activations(&b, k);
    if (!b.ok) {
        *err = b.err;
        cc_model_destroy(b.m);
        return NULL;
    }
    b.m->input.tensor = x;
    b.m->input.color = CC_COLOR_RGB;
    for (int c = 0; c < 3; c++) {
        b.m->input.mean[c] = 0.0f;
        b.m->input.std[c] = 1.0f;
    }
    b.m->input.resize = CC_RESIZE_SQUASH;
    b.m->output.tensor = y;
    b.m->output.kind = CC_OUTPUT_LOGITS;
    if (!cc_model_finalize(b.m, err)) {
        cc_model_destroy(b.m);
        return NULL;
    }
    return b.m;
}

/* ---------------------------------------------------------------------------------------- */
/* Running                                                                                   */

/* Runs the case's model on backend; returns the malloc'd output (count in *n), NULL on error
 * (counted as a failed check). */
static float *run(const struct kcase *k, const char *label, enum cc_backend_kind backend,
                  enum cc_cpu_pointwise pointwise, int threads, const char *profile,
                  const char *stem, uint64_t seed, size_t *n)
{
    struct cc_error err = {0};
    struct cc_model *m = build(k, seed, &err);
    if (!CHECKF(m != NULL, "%s: building the model: %s", label, err.msg))
        return NULL;
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = backend;
    opt.pipeline_cache = "";   // this test measures kernels, not the cache
    opt.cpu_threads = threads; // 2 by default: the CPU backends split each op across a pool
    opt.poison = true; // what a run did not write is NaN / -128: reading it fails on any host
    opt.cpu_pointwise = pointwise;
    char *said = NULL; // notices: with a profile, none may say a node left Vulkan
    size_t said_size = 0;
    if (backend == CC_BACKEND_VULKAN && profile) {
        opt.vk_profile = profile;
        opt.notices = open_memstream(&said, &said_size);
    }
    if (stem) // the CPU backend's direct stem, forced on with these kernels (stem_conv.h)
        setenv("CAMCLASS_CPU_STEM", stem, 1);
    struct cc_engine *e = cc_engine_create_from_model(m, &opt, &err);
    unsetenv("CAMCLASS_CPU_STEM");
    if (opt.notices) {
        fclose(opt.notices);
        CHECKF(!strstr(said, "on the CPU between Vulkan segments"),
               "%s: does not fit the %s profile: %s", label, profile, said);
        free(said);
    }
    if (!CHECKF(e != NULL, "%s: creating the %s engine: %s", label,
                backend == CC_BACKEND_VULKAN ? "vulkan" : "cpu", err.msg))
        return NULL;
    if (profile && backend == CC_BACKEND_VULKAN)
        CHECKF(strstr(cc_engine_device_name(e), " as ") != NULL, "%s: profile %s not applied: %s",
               label, profile, cc_engine_device_name(e));
    if (stem) { // the stem really ran, with the kernels asked for
        char want[64];
        snprintf(want, sizeof(want), "direct stem (%s%s", strcmp(stem, "on") ? stem : "",
                 strcmp(stem, "on") ? ")" : ""); // on: the host's best, any
        CHECKF(strstr(cc_engine_device_name(e), want) != NULL, "%s: %s not used: %s", label, want,
               cc_engine_device_name(e));
    }
    size_t in_n = cc_engine_input_count(e);
    *n = cc_engine_output_count(e);
    float *in = malloc(in_n * sizeof(float));
    float *out = calloc(*n, sizeof(float));
    struct tu_rng rng;
    tu_rng_seed(&rng, seed ^ 0x5eed);
    tu_rng_fill(&rng, in, in_n, -2.0f, 2.0f);
    for (size_t i = 0; k->q8 && i < in_n; i++) { // on Q_IN's grid: quantizing loses nothing
        float q = fminf(rintf(in[i] / Q_IN.scale), (float)(127 - Q_IN.zero_point));
        in[i] = Q_IN.scale * q;
    }
    bool ok = cc_engine_run(e, in, out, &err);
    CHECKF(ok, "%s: run: %s", label, err.msg);
    if (ok && backend == CC_BACKEND_VULKAN) {
        /* A second run of the same recorded command buffer must give the same result. */
        float *again = calloc(*n, sizeof(float));
        CHECKF(cc_engine_run(e, in, again, &err), "%s: second run: %s", label, err.msg);
        CHECKF(memcmp(again, out, *n * sizeof(float)) == 0, "%s: second run differs", label);
        free(again);
    }
    free(in);
    cc_engine_destroy(e);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

static void describe(const struct kcase *k, char *buf, size_t size)
{
    switch (k->op) {
    case CC_OP_CONV2D:
        snprintf(buf, size,
                 "conv2d%s%s C%d %dx%d -> O%d k%dx%d s%d,%d pad %d,%d,%d,%d dil %d,%d g%d%s %s",
                 k->direct ? "/stem" : "",
                 k->q8   ? "/q8"
                 : k->i8 ? "/i8"
                         : "",
                 k->C, k->H, k->W, k->O, k->KH, k->KW, k->stride[0], k->stride[1], k->pad[0],
                 k->pad[1], k->pad[2], k->pad[3], k->dilation[0], k->dilation[1], k->groups,
                 k->bias ? " bias" : "", act_name(k->act));
        break;
    case CC_OP_LINEAR:
        snprintf(buf, size, "linear%s K%d -> N%d%s %s",
                 k->q8   ? "/q8"
                 : k->i8 ? "/i8"
                         : "",
                 k->C * k->H * k->W, k->O, k->bias ? " bias" : "", act_name(k->act));
        break;
    case CC_OP_MAX_POOL2D:
    case CC_OP_AVG_POOL2D:
        snprintf(buf, size, "%s%s C%d %dx%d k%dx%d s%d,%d pad %d,%d,%d,%d%s%s", cc_op_name(k->op),
                 k->q8 ? "/q8" : "", k->C, k->H, k->W, k->KH, k->KW, k->stride[0], k->stride[1],
                 k->pad[0], k->pad[1], k->pad[2], k->pad[3], k->ceil_mode ? " ceil" : "",
                 k->op == CC_OP_AVG_POOL2D && !k->count_include_pad ? " exclude-pad" : "");
        break;
    default:
        snprintf(buf, size, "%s%s %dx%dx%d%s %s", cc_op_name(k->op), k->q8 ? "/q8" : "", k->C, k->H,
                 k->W, k->bcast ? " by [1,C,1,1]" : "", act_name(k->act));
        break;
    }
}

/* ref's output as an int8 backend must give it: on the output's quantization grid, saturated,
 * ties to even as XNNPACK rounds. */
static void fake_quantize(float *y, size_t n, struct cc_act_quant q)
{
    for (size_t i = 0; i < n; i++) {
        float v = fminf(fmaxf(rintf(y[i] / q.scale) + (float)q.zero_point, -128.0f), 127.0f);
        y[i] = q.scale * (v - (float)q.zero_point);
    }
}

/* What main's arguments ask for: profile (a vk_profile name): only Vulkan is compared, held
 * to that device's limits; cpu_only: only the CPU backends (no Vulkan device needed: the
 * sanitizer build, and the runs with another host's XNNPACK kernels, cpu_isa_shim.c). */
struct mode {
    const char *profile;
    bool cpu_only;
};

/* The backends compared with ref. Vulkan comes first (a profile compares only it); the rows
 * with sweep are the CPU backend at 1 and 3 threads, run for the cases that ask for it; the
 * rows with stem force the CPU backend's direct stem (CAMCLASS_CPU_STEM: "on" is the host's
 * best kernels) at 1 to 4 threads, run for the direct cases, which must use it. */
static const struct {
    enum cc_backend_kind kind;
    enum cc_cpu_pointwise pointwise; // the CPU backend's one-group conv path, forced either way
    int threads;
    const char *name;
    bool int8;        // computes the q8 cases in int8
    bool sweep;       // only for the thread sweep's cases
    const char *stem; // only for the direct cases: CAMCLASS_CPU_STEM's value
} tested[] = {
    {CC_BACKEND_VULKAN, CC_CPU_POINTWISE_MEASURE, 2, "vulkan", false, false, NULL},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_XNNPACK, 2, "cpu", true, false, NULL},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_BLIS, 2, "cpu/blis", true, false, NULL},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_XNNPACK, 1, "cpu/1t", true, true, NULL},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_XNNPACK, 3, "cpu/3t", true, true, NULL},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_BLIS, 3, "cpu/blis/3t", true, true, NULL},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_MEASURE, 2, "cpu/stem", false, false, "on"},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_MEASURE, 4, "cpu/stem/4t", false, false, "on"},
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_MEASURE, 3, "cpu/stem/c/3t", false, false, "c"},
#if defined(__x86_64__)
    {CC_BACKEND_CPU, CC_CPU_POINTWISE_MEASURE, 1, "cpu/stem/avx2/1t", false, false, "avx2"},
#endif
};

/* Runs case k on ref and on the backends of tested[] that mode and sweep select, and compares. */
static void run_case(const struct kcase *k, const struct mode *mode, uint64_t seed, bool sweep)
{
    char label[256];
    describe(k, label, sizeof(label));
    size_t n_ref = 0;
    float *ref =
        run(k, label, CC_BACKEND_REF, CC_CPU_POINTWISE_MEASURE, 2, NULL, NULL, seed, &n_ref);
    float *ref_q = ref ? malloc(n_ref * sizeof(float)) : NULL;
    if (ref_q) {
        memcpy(ref_q, ref, n_ref * sizeof(float));
        fake_quantize(ref_q, n_ref, output_quant(k));
    }
    size_t n_tested = mode->profile ? 1 : sizeof(tested) / sizeof(tested[0]);
    for (size_t b = mode->cpu_only ? 1 : 0; ref && ref_q && b < n_tested; b++) {
        if ((tested[b].sweep && !sweep) || (tested[b].stem && (!k->direct || k->q8)) ||
            (tested[b].stem && !strcmp(tested[b].stem, "avx2") &&
             !cc_stem_isa_runs(CC_STEM_AVX2))) // CAMCLASS_CPU_ISA=c holds it to C
            continue;
        size_t n = 0;
        float *got = run(k, label, tested[b].kind, tested[b].pointwise, tested[b].threads,
                         mode->profile, tested[b].stem, seed, &n);
        bool int8 = k->q8 && tested[b].int8;
        const float *want = int8 ? ref_q : ref;
        if (got && CHECKF(n == n_ref, "%s %s: output counts differ", tested[b].name, label)) {
            size_t worst = 0;
            double diff = tu_max_abs_diff(got, want, n_ref, &worst);
            double peak = tu_max_abs(want, n_ref);
            // int8: one output step (XNNPACK's fixed-point requantization may round a value
            // the other way than exact arithmetic does); f32: 1e-4 of the largest value.
            double tol = int8 ? output_quant(k).scale * 1.001 : TOLERANCE * fmax(peak, 1.0);
            printf("%-6s %-72s max|diff| %.2e (tolerance %.2e)\n", tested[b].name, label, diff,
                   tol);
            CHECKF(diff <= tol, "%s: max |%s - ref%s| = %g at %zu (%s %g, ref %g) > %g", label,
                   tested[b].name, int8 ? " quantized" : "", diff, worst, tested[b].name,
                   (double)got[worst], (double)want[worst], tol);
        }
        for (size_t i = 0; got && int8 && n == n_ref && i < n; i++) { // int8 really ran
            double steps = got[i] / output_quant(k).scale;
            if (!CHECKF(fabs(steps - rint(steps)) < 1e-3,
                        "%s: cpu output %zu = %g is not on the output's int8 grid", label, i,
                        (double)got[i]))
                break;
        }
        free(got);
    }
    free(ref_q);
    free(ref);
}

/* ---------------------------------------------------------------------------------------- */
/* Cases                                                                                     */

#define CONV(c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g, bias, act)                     \
    {                                                                                              \
        CC_OP_CONV2D, c, h, w, o, kh, kw, {sh, sw}, {pt, pl, pb, pr}, {dh, dw}, g, bias, act       \
    }

#define CONV_I8_ZOO(c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g, bias, act)              \
    {                                                                                              \
        CC_OP_CONV2D, c, h, w, o, kh, kw, {sh, sw}, {pt, pl, pb, pr}, {dh, dw}, g, bias, act, true \
    }

static const struct kcase cases[] = {
    /* General kernel: dense, depthwise, grouped; strides, asymmetric padding, dilation. */
    CONV(3, 7, 13, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, ACT_RELU6),
    CONV(3, 16, 16, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, ACT_RELU6), // mobilenet stem
    CONV(6, 13, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, false, ACT_NONE),
    CONV(6, 9, 11, 6, 3, 3, 2, 2, 0, 1, 2, 1, 1, 1, 2, true, ACT_RELU),
    CONV(5, 12, 9, 7, 2, 3, 1, 1, 2, 0, 1, 1, 2, 1, 1, true, ACT_CLAMP),
    CONV(32, 15, 15, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, true, ACT_RELU6),
    CONV(24, 15, 15, 24, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 24, true, ACT_RELU6),
    CONV(9, 7, 7, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 9, true, ACT_NONE),       // dilated depthwise
    CONV(8, 9, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, ACT_RELU),      // 4 channels per group
    CONV(6, 10, 16, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, ACT_NONE),   // vec4 stores
    CONV(16, 12, 20, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, true, ACT_RELU6), // 16 columns
    CONV(3, 6, 20, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, ACT_NONE),      // 16 columns
    CONV(3, 9, 16, 4, 3, 5, 1, 2, 2, 2, 2, 2, 1, 4, 1, true, ACT_NONE), // row too long for quads
    CONV(3, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, ACT_RELU),  // 1×1 input
    CONV(6, 9, 9, 4, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, true, ACT_NONE),  // 1×1 stride 2
    CONV(6, 5, 7, 4, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, false, ACT_RELU), // 1×1 padded
    CONV(12, 7, 8, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 3, true, ACT_NONE), // 1×1 grouped
    /* Pointwise kernel: vec4 (HW % 4 == 0) and scalar pixels, O not a multiple of 8. */
    CONV(24, 8, 8, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_RELU6),
    CONV(15, 7, 13, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_NONE),
    CONV(96, 14, 14, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_NONE),
    CONV(33, 7, 7, 160, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_CLAMP),
    CONV(12, 1, 1, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, ACT_RELU),
    CONV(3, 12, 20, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_RELU6),
    CONV(6, 8, 16, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_RELU6), // channel blocks in y
    /* Element-wise, pooling, linear, softmax. */
    {CC_OP_ADD, 6, 7, 13, .act = ACT_NONE},
    {CC_OP_ADD, 3, 1, 1, .act = ACT_RELU6},
    {CC_OP_ADD, 24, 9, 9, .act = ACT_CLAMP},
    {CC_OP_CLAMP, 5, 9, 7, .act = ACT_RELU},
    {CC_OP_CLAMP, 3, 1, 1, .act = ACT_CLAMP},
    {CC_OP_CLAMP, 12, 4, 4, .act = ACT_RELU6},
    {CC_OP_GLOBAL_AVG_POOL, 9, 7, 13},
    {CC_OP_GLOBAL_AVG_POOL, 1281, 7, 7},
    {CC_OP_GLOBAL_AVG_POOL, 3, 1, 1},
    {CC_OP_GLOBAL_AVG_POOL, 5, 123, 111}, // large maps: a workgroup per channel (GROUP)
    {CC_OP_GLOBAL_AVG_POOL, 3, 300, 233}, // more values than one loop may run on llvmpipe
    {CC_OP_LINEAR, 3, 1, 4, .O = 7, .bias = true, .act = ACT_NONE},
    {CC_OP_LINEAR, 1281, 1, 1, .O = 1000, .bias = true, .act = ACT_NONE},
    {CC_OP_LINEAR, 3, 1, 5, .O = 1, .bias = false, .act = ACT_RELU},
    {CC_OP_LINEAR, 1280, 1, 3, .O = 13, .bias = true, .act = ACT_CLAMP},
    {CC_OP_SOFTMAX, 999, 1, 1},
    {CC_OP_SOFTMAX, 3, 1, 1},
    {CC_OP_SOFTMAX, 3, 1, 1000},
};

/* The ops of the torchvision zoo: odd sizes, ceil_mode edges, every activation
 * kind standalone and fused. */
#define POOL(op, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, ceil, incl)                              \
    {                                                                                              \
        op, c, h, w, 0, kh, kw, {sh, sw}, {pt, pl, pb, pr}, .ceil_mode = ceil,                     \
                                                            .count_include_pad = incl              \
    }

static const struct kcase zoo_cases[] = {
    POOL(CC_OP_MAX_POOL2D, 6, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1), // resnet stem
    POOL(CC_OP_MAX_POOL2D, 3, 13, 13, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1), // squeezenet: ceil
    POOL(CC_OP_MAX_POOL2D, 3, 14, 14, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1), // ceil adds a window
    POOL(CC_OP_MAX_POOL2D, 6, 7, 9, 2, 2, 2, 2, 0, 0, 0, 0, 0, 1),   // densenet transition
    POOL(CC_OP_MAX_POOL2D, 3, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),   // googlenet branch
    POOL(CC_OP_MAX_POOL2D, 3, 8, 5, 2, 3, 2, 1, 1, 0, 0, 1, 1, 1),   // asymmetric, ceil
    POOL(CC_OP_AVG_POOL2D, 6, 7, 9, 2, 2, 2, 2, 0, 0, 0, 0, 0, 1),   // densenet transition
    POOL(CC_OP_AVG_POOL2D, 5, 11, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1),  // ceil + include pad
    POOL(CC_OP_AVG_POOL2D, 5, 11, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0),  // ceil + exclude pad
    POOL(CC_OP_AVG_POOL2D, 3, 10, 8, 3, 2, 3, 2, 1, 1, 1, 0, 1, 1),  // ceil edge, asymmetric
    POOL(CC_OP_AVG_POOL2D, 3, 7, 7, 7, 7, 7, 7, 0, 0, 0, 0, 0, 1),   // one window
    {CC_OP_CONCAT, 3, 5, 7, .O = 0},
    {CC_OP_CONCAT, 7, 3, 3, .O = 1},
    {CC_OP_CONCAT, 3, 4, 4, .O = 38}, // 40 inputs: a densenet block
    {CC_OP_SLICE, 6, 5, 7, .O = 0, .KH = 3},
    {CC_OP_SLICE, 9, 3, 5, .O = 4, .KH = 9},
    {CC_OP_SLICE, 6, 1, 1, .O = 1, .KH = 2},
    {CC_OP_CHANNEL_SHUFFLE, 6, 5, 7, .groups = 2},
    {CC_OP_CHANNEL_SHUFFLE, 12, 3, 3, .groups = 3},
    {CC_OP_CHANNEL_SHUFFLE, 9, 1, 1, .groups = 9},
    {CC_OP_MUL, 6, 7, 13, .act = ACT_NONE},
    {CC_OP_MUL, 9, 7, 5, .act = ACT_SIGMOID},
    {CC_OP_MUL, 9, 7, 5, .act = ACT_NONE, .bcast = true},
    {CC_OP_MUL, 24, 5, 5, .act = ACT_RELU6, .bcast = true},
    {CC_OP_MUL, 3, 1, 1, .act = ACT_HARDSWISH, .bcast = true},
    {CC_OP_CLAMP, 5, 9, 7, .act = ACT_SIGMOID},
    {CC_OP_CLAMP, 5, 9, 7, .act = ACT_HARDSIGMOID},
    {CC_OP_CLAMP, 5, 9, 7, .act = ACT_HARDSWISH},
    {CC_OP_CLAMP, 5, 9, 7, .act = ACT_SILU},
    {CC_OP_ADD, 6, 7, 13, .act = ACT_SILU},
    {CC_OP_ADD, 3, 4, 4, .act = ACT_HARDSWISH},
    CONV(3, 7, 13, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, ACT_HARDSWISH),
    CONV(3, 16, 16, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, ACT_HARDSWISH), // v3 stem
    CONV(32, 15, 15, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, true, ACT_SILU),    // depthwise
    CONV(24, 15, 15, 24, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 24, true, ACT_HARDSWISH),
    CONV(24, 8, 8, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_SILU), // pointwise vec4
    CONV(15, 7, 13, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_SIGMOID),
    CONV(12, 1, 1, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_HARDSIGMOID), // SE fc2
    CONV(8, 9, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, ACT_HARDSWISH),    // 4 ch/group
    {CC_OP_LINEAR, 3, 1, 4, .O = 7, .bias = true, .act = ACT_HARDSWISH},
    {CC_OP_LINEAR, 1280, 1, 3, .O = 13, .bias = true, .act = ACT_SILU},
    {CC_OP_LINEAR, 24, 1, 1, .O = 5, .bias = true, .act = ACT_SIGMOID, .i8 = true},
    CONV_I8_ZOO(24, 8, 8, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_HARDSWISH),
    CONV_I8_ZOO(16, 12, 20, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, true, ACT_SILU),
    /* H*W % 4 == 0: the Vulkan kernels' vec4 paths (4 pixels of one channel per texel). */
    {CC_OP_MUL, 12, 4, 4, .act = ACT_HARDSIGMOID},
    {CC_OP_MUL, 12, 4, 4, .act = ACT_SILU, .bcast = true},
    {CC_OP_CHANNEL_SHUFFLE, 12, 4, 4, .groups = 4},
    {CC_OP_CONCAT, 3, 4, 4, .O = 62}, // 64 inputs, the most a node has
    /* Output rows of a multiple of 4: the Vulkan pool's 4-outputs-per-invocation vec4 store. */
    POOL(CC_OP_MAX_POOL2D, 3, 16, 16, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1),
    POOL(CC_OP_MAX_POOL2D, 3, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
    POOL(CC_OP_AVG_POOL2D, 6, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 0, 1),
    POOL(CC_OP_AVG_POOL2D, 3, 14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0),
};

/* int8 weights: every kernel that reads weights, through its WEIGHTS_I8 variant. */
#define CONV_I8(c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g, bias, act)                  \
    {                                                                                              \
        CC_OP_CONV2D, c, h, w, o, kh, kw, {sh, sw}, {pt, pl, pb, pr}, {dh, dw}, g, bias, act, true \
    }

static const struct kcase i8_cases[] = {
    /* General kernel, one channel per invocation: dense, depthwise (stride 1 and 2), dilated,
     * 16 columns, row too long for quads, 1×1 input. */
    CONV_I8(3, 7, 13, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, ACT_RELU6),
    CONV_I8(32, 15, 15, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, true, ACT_RELU6),
    CONV_I8(24, 15, 15, 24, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 24, true, ACT_RELU6),
    CONV_I8(9, 7, 7, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 9, false, ACT_NONE),
    CONV_I8(16, 12, 20, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, true, ACT_CLAMP),
    CONV_I8(3, 9, 16, 5, 3, 5, 1, 2, 2, 2, 2, 2, 1, 4, 1, true, ACT_NONE),
    CONV_I8(3, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, ACT_RELU),
    /* 4 output channels per invocation (int8 RGBA texels): stem, grouped, vec4 stores. */
    CONV_I8(3, 16, 16, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, ACT_RELU6),
    CONV_I8(8, 9, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, ACT_RELU),
    CONV_I8(6, 10, 16, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, ACT_NONE),
    CONV_I8(12, 7, 8, 8, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, true, ACT_NONE), // 1×1 grouped
    /* Pointwise: vec4 and scalar pixels, O padded to the tile, flat and channel-block grids. */
    CONV_I8(24, 8, 8, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_RELU6),
    CONV_I8(15, 7, 13, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_NONE),
    CONV_I8(96, 14, 14, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, ACT_NONE),
    CONV_I8(33, 7, 7, 160, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_CLAMP),
    CONV_I8(6, 8, 16, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_RELU6),
    /* Linear: K a multiple of 4 and not, with and without bias. */
    {CC_OP_LINEAR, 3, 1, 4, .O = 7, .bias = true, .act = ACT_NONE, .i8 = true},
    {CC_OP_LINEAR, 1281, 1, 1, .O = 1000, .bias = true, .act = ACT_NONE, .i8 = true},
    {CC_OP_LINEAR, 3, 1, 5, .O = 1, .bias = false, .act = ACT_RELU, .i8 = true},
    {CC_OP_LINEAR, 1280, 1, 3, .O = 13, .bias = true, .act = ACT_CLAMP, .i8 = true},
};

/* int8 arithmetic (q8: i8 weights and quantized activations): every op with an int8 variant
 * on the CPU backend, each compared with ref's exact result put on the output's grid. */
#define CONV_Q8(c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g, bias, act)                  \
    {                                                                                              \
        CC_OP_CONV2D, c, h, w, o, kh, kw, {sh, sw}, {pt, pl, pb, pr}, {dh, dw}, g, bias, act,      \
            true, true                                                                             \
    }

static const struct kcase q8_cases[] = {
    CONV_Q8(3, 16, 16, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, ACT_RELU6),   // stem
    CONV_Q8(32, 15, 15, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, true, ACT_RELU6), // depthwise
    CONV_Q8(24, 15, 15, 24, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 24, true, ACT_RELU),  // dw stride 2
    CONV_Q8(9, 7, 7, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 9, false, ACT_NONE),      // dilated dw
    CONV_Q8(8, 9, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, ACT_CLAMP),     // grouped
    CONV_Q8(3, 9, 16, 5, 3, 5, 1, 2, 2, 2, 2, 2, 1, 4, 1, true, ACT_NONE),      // asymmetric
    CONV_Q8(24, 8, 8, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_RELU6),    // pointwise
    CONV_Q8(96, 14, 14, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, ACT_NONE),
    CONV_Q8(33, 7, 7, 160, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_CLAMP),
    {CC_OP_LINEAR, 3, 1, 4, .O = 7, .bias = true, .act = ACT_NONE, .i8 = true, .q8 = true},
    {CC_OP_LINEAR, 1281, 1, 1, .O = 1000, .bias = true, .i8 = true, .q8 = true},
    {CC_OP_LINEAR, 1280, 1, 3, .O = 13, .bias = true, .act = ACT_RELU, .i8 = true, .q8 = true},
    {CC_OP_ADD, 6, 7, 13, .act = ACT_NONE, .q8 = true},
    {CC_OP_ADD, 24, 9, 9, .act = ACT_RELU6, .q8 = true},
    {CC_OP_CLAMP, 5, 9, 7, .act = ACT_RELU, .q8 = true},
    {CC_OP_CLAMP, 12, 4, 4, .act = ACT_CLAMP, .q8 = true},
    {CC_OP_GLOBAL_AVG_POOL, 9, 7, 13, .q8 = true},
    {CC_OP_GLOBAL_AVG_POOL, 1281, 7, 7, .q8 = true},
};

/* Odd K and odd channel counts (XNNPACK's f32 fully-connected operator once read
 * weights shifted when K % 4 != 0 on a pool; the padding the kernels over-read): linear and
 * 1x1 / k x k convolutions, f32, i8 weights and int8 arithmetic, each also on the CPU backend
 * at 1 and 3 threads (the thread sweep of run_case). */
#define LINEAR_ODD(k, n, i8_, q8_)                                                                 \
    {                                                                                              \
        CC_OP_LINEAR, k, 1, 1, .O = n, .bias = true, .act = ACT_NONE, .i8 = i8_, .q8 = q8_         \
    }
#define CONV_ODD(c, h, w, o, k, s, g, i8_, q8_)                                                    \
    {                                                                                              \
        CC_OP_CONV2D, c, h, w, o, k, k, {s, s}, {k / 2, k / 2, k / 2, k / 2}, {1, 1}, g, true,     \
            ACT_RELU6, i8_, q8_                                                                    \
    }

static const struct kcase odd_cases[] = {
    LINEAR_ODD(1281, 1000, false, false),
    LINEAR_ODD(1281, 1000, true, false),
    LINEAR_ODD(1281, 1000, true, true),
    LINEAR_ODD(21, 33, false, false),
    LINEAR_ODD(21, 33, true, false),
    LINEAR_ODD(21, 33, true, true),
    LINEAR_ODD(1023, 17, false, false),
    LINEAR_ODD(1023, 17, true, true),
    LINEAR_ODD(3, 37, false, false),
    LINEAR_ODD(3, 37, true, true),
    CONV_ODD(7, 3, 5, 13, 1, 1, 1, false, false),
    CONV_ODD(7, 3, 5, 13, 1, 1, 1, true, false),
    CONV_ODD(7, 3, 5, 13, 1, 1, 1, true, true),
    CONV_ODD(1281, 1, 3, 35, 1, 1, 1, false, false),
    CONV_ODD(1281, 1, 3, 35, 1, 1, 1, true, true),
    CONV_ODD(17, 9, 7, 19, 3, 1, 1, false, false),
    CONV_ODD(17, 9, 7, 19, 3, 1, 1, true, false),
    CONV_ODD(17, 9, 7, 19, 3, 1, 1, true, true),
    CONV_ODD(3, 11, 13, 33, 3, 2, 1, false, false),
    CONV_ODD(3, 11, 13, 33, 3, 2, 1, true, true),
    CONV_ODD(15, 7, 5, 15, 5, 1, 15, false, false),
    CONV_ODD(15, 7, 5, 15, 5, 1, 15, true, true),
};

/* The CPU backend's direct stem (stem_conv.h): 3x3 stride 2 from the 3-channel graph input,
 * NCHW straight to NHWC. mobilenet_v2's own, sizes where the interior is empty or a block
 * short, padding 0, 1, asymmetric and larger than the kernel's reach, odd channel counts (the
 * masked stores), no bias, i8 weights; random ones follow (random_stem). */
#define STEM(h, w, o, pt, pl, pb, pr, bias, act)                                                   \
    {                                                                                              \
        CC_OP_CONV2D, 3, h, w, o, 3, 3, {2, 2}, {pt, pl, pb, pr}, {1, 1}, 1, bias, act,            \
            .direct = true                                                                         \
    }

static const struct kcase stem_cases[] = {
    STEM(224, 224, 32, 1, 1, 1, 1, true, ACT_RELU6), // mobilenet_v2's features.0.0
    STEM(1, 1, 8, 1, 1, 1, 1, true, ACT_RELU6),
    STEM(3, 3, 9, 0, 0, 0, 0, true, ACT_NONE),
    STEM(2, 5, 17, 1, 1, 1, 1, false, ACT_RELU6),
    STEM(9, 21, 33, 0, 1, 1, 0, true, ACT_RELU),
    STEM(13, 11, 48, 2, 3, 2, 3, true, ACT_CLAMP),
    STEM(17, 35, 47, 1, 0, 0, 1, true, ACT_NONE),
    {CC_OP_CONV2D,
     3,
     31,
     19,
     24,
     3,
     3,
     {2, 2},
     {1, 1, 1, 1},
     {1, 1},
     1,
     true,
     ACT_RELU6,
     .i8 = true,
     .direct = true},
};

/* A random stem: sizes 1..224 (any parity), padding 0 or 1, 8..48 output channels, ReLU6 or
 * none, bias or not; fixed seed. */
static struct kcase random_stem(struct tu_rng *r)
{
    int pad = tu_rng_range(r, 0, 1);
    struct kcase k =
        STEM(tu_rng_range(r, 1, 224), tu_rng_range(r, 1, 224), tu_rng_range(r, 8, 48), pad, pad,
             pad, pad, tu_rng_range(r, 0, 1), tu_rng_range(r, 0, 1) ? ACT_RELU6 : ACT_NONE);
    // The kernel must fit into the padded input.
    k.H = k.H + 2 * pad < 3 ? 3 - 2 * pad : k.H;
    k.W = k.W + 2 * pad < 3 ? 3 - 2 * pad : k.W;
    return k;
}

/* CAMCLASS_CPU_STEM: a value that is not a mode fails the CPU backend's create with one line
 * naming it; "off" keeps the stem out of a direct case, which then still matches ref. */
static void check_stem_switch(void)
{
    struct kcase k = STEM(9, 9, 8, 1, 1, 1, 1, true, ACT_RELU6);
    struct cc_error err = {0};
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_CPU;
    opt.cpu_cache = "";
    setenv("CAMCLASS_CPU_STEM", "fast", 1);
    struct cc_engine *e = cc_engine_create_from_model(build(&k, 1, &err), &opt, &err);
    CHECKF(!e && strstr(err.msg, "CAMCLASS_CPU_STEM=\"fast\" is not a stem mode"),
           "CAMCLASS_CPU_STEM=fast should be refused, got \"%s\"", e ? "an engine" : err.msg);
    cc_engine_destroy(e);
    setenv("CAMCLASS_CPU_STEM", "off", 1);
    e = cc_engine_create_from_model(build(&k, 1, &err), &opt, &err);
    unsetenv("CAMCLASS_CPU_STEM");
    if (CHECKF(e != NULL, "CAMCLASS_CPU_STEM=off: %s", err.msg))
        CHECKF(!strstr(cc_engine_device_name(e), "stem"), "CAMCLASS_CPU_STEM=off, yet: %s",
               cc_engine_device_name(e));
    cc_engine_destroy(e);
}

/* CAMCLASS_CPU_CONV3X3_RESIDUAL (engine/cpu/xnn_resfuse.h): a value that is not a switch fails
 * the CPU backend's create with one line naming it. */
static void check_residual_switch(void)
{
    struct kcase k = STEM(9, 9, 8, 1, 1, 1, 1, true, ACT_RELU6);
    struct cc_error err = {0};
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_CPU;
    opt.cpu_cache = "";
    setenv("CAMCLASS_CPU_CONV3X3_RESIDUAL", "yes", 1);
    struct cc_engine *e = cc_engine_create_from_model(build(&k, 1, &err), &opt, &err);
    unsetenv("CAMCLASS_CPU_CONV3X3_RESIDUAL");
    CHECKF(!e && strstr(err.msg, "CAMCLASS_CPU_CONV3X3_RESIDUAL=\"yes\" is not a switch"),
           "CAMCLASS_CPU_CONV3X3_RESIDUAL=yes should be refused, got \"%s\"",
           e ? "an engine" : err.msg);
    cc_engine_destroy(e);
}

/* Random shapes on top of the fixed cases: conv2d with random everything, fixed seed. */
static struct kcase random_conv(struct tu_rng *r)
{
    struct kcase k = {.op = CC_OP_CONV2D};
    int kind = tu_rng_range(r, 0, 2); // 0 dense, 1 depthwise, 2 pointwise
    k.groups = 1;
    k.C = tu_rng_range(r, 1, 20);
    k.KH = kind == 2 ? 1 : tu_rng_range(r, 1, 4);
    k.KW = kind == 2 ? 1 : tu_rng_range(r, 1, 4);
    k.H = tu_rng_range(r, 1, 17);
    k.W = tu_rng_range(r, 1, 17);
    while ((k.C * k.H * k.W) % 3 != 0)
        k.C++;
    k.O = kind == 1 ? k.C : tu_rng_range(r, 1, 20);
    if (kind == 1)
        k.groups = k.C;
    for (int i = 0; i < 2; i++) {
        k.stride[i] = kind == 2 ? 1 : tu_rng_range(r, 1, 2);
        k.dilation[i] = kind == 2 ? 1 : tu_rng_range(r, 1, 2);
    }
    for (int i = 0; i < 4; i++)
        k.pad[i] = kind == 2 ? 0 : tu_rng_range(r, 0, 2);
    /* The kernel must fit into the padded input. */
    while (k.H + k.pad[0] + k.pad[2] < k.dilation[0] * (k.KH - 1) + 1)
        k.pad[2]++;
    while (k.W + k.pad[1] + k.pad[3] < k.dilation[1] * (k.KW - 1) + 1)
        k.pad[3]++;
    k.bias = tu_rng_range(r, 0, 1);
    k.act = (enum act_kind)tu_rng_range(r, 0, 3);
    return k;
}

/* A random max or average pool: window, stride, padding (at most half the window, as
 * PyTorch allows), ceil_mode and count_include_pad all drawn; fixed seed. */
static struct kcase random_pool(struct tu_rng *r)
{
    struct kcase k = {.op = tu_rng_range(r, 0, 1) ? CC_OP_MAX_POOL2D : CC_OP_AVG_POOL2D};
    k.C = tu_rng_range(r, 1, 9);
    k.KH = tu_rng_range(r, 1, 4);
    k.KW = tu_rng_range(r, 1, 4);
    k.H = tu_rng_range(r, k.KH, 17);
    k.W = tu_rng_range(r, k.KW, 17);
    while ((k.C * k.H * k.W) % 3 != 0)
        k.C++;
    for (int i = 0; i < 2; i++)
        k.stride[i] = tu_rng_range(r, 1, 3);
    for (int i = 0; i < 4; i++)
        k.pad[i] = tu_rng_range(r, 0, (i % 2 ? k.KW : k.KH) / 2);
    k.ceil_mode = tu_rng_range(r, 0, 1);
    k.count_include_pad = tu_rng_range(r, 0, 1);
    return k;
}

/* Device choice errors and the pipeline cache file. */
static void test_device_and_cache(void)
{
    struct cc_error err = {0};
    struct kcase k = CONV(3, 4, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, ACT_NONE);

    int n = cc_engine_list_devices(stdout, &err);
    CHECKF(n >= 1, "no Vulkan device (%s); install mesa-vulkan-drivers", err.msg);

    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_VULKAN;
    opt.device_index = 99;
    struct cc_engine *e = cc_engine_create_from_model(build(&k, 1, &err), &opt, &err);
    CHECKF(e == NULL && strstr(err.msg, "out of range"),
           "device index 99 should be rejected as out of range, got \"%s\"", err.msg);
    cc_engine_destroy(e);

    char path[] = "/tmp/camclass-test-cache-XXXXXX";
    int fd = mkstemp(path);
    CHECKF(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    close(fd);
    FILE *f = fopen(path, "wb"); // garbage: must be ignored, then replaced by a valid cache
    fputs("not a pipeline cache, but longer than its 32-byte header", f);
    fclose(f);
    opt.device_index = -1;
    opt.pipeline_cache = path;
    for (int pass = 0; pass < 2; pass++) {
        e = cc_engine_create_from_model(build(&k, 1, &err), &opt, &err);
        CHECKF(e != NULL, "engine with pipeline cache %s (pass %d): %s", path, pass, err.msg);
        cc_engine_destroy(e);
        size_t size = 0;
        unsigned char *data = tu_read_file(path, &size);
        uint32_t hdr[2] = {0, 0};
        if (data && size >= 8)
            memcpy(hdr, data, sizeof(hdr));
        CHECKF(data && size >= 32 && hdr[0] >= 32 && hdr[1] == 1,
               "pipeline cache %s not written with a VkPipelineCacheHeaderVersionOne header "
               "(pass %d, %zu bytes)",
               path, pass, size);
        free(data);
    }
    unlink(path);
}

/* Under cpu_isa_shim (CC_ISA_SHIM set): the shim must have changed what XNNPACK saw. */
static void check_isa_shim(void)
{
    const char *mode = getenv("CC_ISA_SHIM");
    if (!mode || !mode[0])
        return;
    const int *applied = dlsym(RTLD_DEFAULT, "cc_isa_shim_applied");
    if (CHECKF(applied && *applied > 0,
               "CC_ISA_SHIM=%s, but cpu_isa_shim was not preloaded (LD_PRELOAD) or not applied",
               mode))
        printf("XNNPACK chose its kernels with cpu_isa_shim's CC_ISA_SHIM=%s\n", mode);
}

int main(int argc, char **argv)
{
    struct mode mode = {.cpu_only = argc > 1 && !strcmp(argv[1], "--cpu")};
    mode.profile = argc > 1 + mode.cpu_only ? argv[1 + mode.cpu_only] : NULL;
    const char *known = NULL;
    if (argc > 2 || (mode.cpu_only && mode.profile) ||
        (mode.profile && !cc_engine_vk_profile_known(mode.profile, &known))) {
        fprintf(stderr,
                "usage: %s [PROFILE | --cpu]  (PROFILE: Vulkan held to a device's limits: %s; "
                "--cpu: the CPU backends only)\n",
                argv[0], known ? known : "pi4");
        return 2;
    }
    printf("tolerance: max |backend - ref| <= %g * max(1, max |ref|)\n", TOLERANCE);
    if (mode.profile)
        printf("vulkan held to the %s profile's limits; ref and vulkan only\n", mode.profile);
    else if (mode.cpu_only)
        printf("the CPU backends only\n");
    else
        test_device_and_cache();
    size_t n = sizeof(cases) / sizeof(cases[0]);
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], &mode, 1000 + i, false);
    struct tu_rng r;
    tu_rng_seed(&r, 42);
    for (int i = 0; i < 24; i++) {
        struct kcase k = random_conv(&r);
        run_case(&k, &mode, 5000 + (uint64_t)i, false);
    }
    n = sizeof(odd_cases) / sizeof(odd_cases[0]);
    for (size_t i = 0; i < n; i++)
        run_case(&odd_cases[i], &mode, 2000 + i, true);
    n = sizeof(stem_cases) / sizeof(stem_cases[0]);
    for (size_t i = 0; i < n; i++)
        run_case(&stem_cases[i], &mode, 4000 + i, false);
    struct tu_rng rs; // the stems' own: the other random cases stay what they were
    tu_rng_seed(&rs, 26);
    for (int i = 0; i < 16; i++) {
        struct kcase k = random_stem(&rs);
        run_case(&k, &mode, 4500 + (uint64_t)i, false);
    }
    check_stem_switch();
    check_residual_switch();
    n = sizeof(zoo_cases) / sizeof(zoo_cases[0]);
    for (size_t i = 0; i < n; i++)
        run_case(&zoo_cases[i], &mode, 3000 + i, false);
    for (int i = 0; i < 16; i++) {
        struct kcase k = random_pool(&r);
        run_case(&k, &mode, 6000 + (uint64_t)i, false);
    }
    n = sizeof(i8_cases) / sizeof(i8_cases[0]);
    for (size_t i = 0; i < n; i++)
        run_case(&i8_cases[i], &mode, 7000 + i, false);
    for (int i = 0; i < 12; i++) {
        struct kcase k = random_conv(&r);
        k.i8 = true;
        run_case(&k, &mode, 8000 + (uint64_t)i, false);
    }
    n = sizeof(q8_cases) / sizeof(q8_cases[0]);
    for (size_t i = 0; i < n; i++)
        run_case(&q8_cases[i], &mode, 9000 + i, false);
    for (int i = 0; i < 12; i++) {
        struct kcase k = random_conv(&r);
        k.i8 = k.q8 = true;
        run_case(&k, &mode, 9500 + (uint64_t)i, false);
    }
    check_isa_shim();
    return tu_exit_code();
}
