/* camclass — per-op fallback: nodes the Vulkan kernels cannot run go to the CPU between
 * Vulkan segments (vk_fallback.c), and the result still matches the reference ops.
 *
 * The node the Vulkan backend lacks: add and mul with a CONSTANT operand (a normalization or
 * per-channel scale baked into a model, as ONNX graphs often have them). The Vulkan kernels
 * read only computed tensors from the arena, so cc_vk_node_supported() refuses them; the CPU
 * ops run them. The test network puts such nodes first (reading the model's input), in the
 * middle as a run of two, and last (writing the model's output), around Vulkan convs and pools:
 *
 *   input -> mul(k0) -> conv3x3+relu -> add(k1) -> mul(k2) -> conv1x1 -> gap -> flatten
 *         -> linear -> mul(k3) = output          (mul/add with constants k*: on the CPU)
 *
 * Checks, each against ref (the plain C ops) within 1e-4 x max|ref|:
 *   - the CPU backend runs the constant operands natively (XNNPACK, NHWC copies);
 *   - the network is input-sensitive (two inputs: outputs differ by >= 5% of max), so the
 *     comparison says something about every node;
 *   - vulkan with the arena shared with the host (lavapipe maps it), and with vk_staging (the
 *     discrete-GPU path: staging buffers and the host mirror with its copies);
 *   - two runs in a row give the same output (the recorded segments are re-submitted);
 *   - the load notice names the fallback nodes and the cost; --profile times the CPU nodes;
 *   - the same network with no constant operand runs without a notice (no CPU nodes), also
 *     with vk_staging;
 *   - a node past a device limit falls back too: a clamp over 3x1025x1365 values (odd: the
 *     scalar path, one value per invocation) needs 65 584 workgroups along x, more than
 *     maxComputeWorkGroupCount (65 535 on lavapipe and on the Pi 4), and the notice names
 *     the limit; with the Pi 4 profile too (vk_profile.h), and an unknown profile is refused.
 *
 * Without a Vulkan device this test FAILS: CI installs mesa-vulkan-drivers (lavapipe).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "model.h"
#include "testutil.h"

#define TOLERANCE 1e-4
#define C_IN 3
#define C_MID 8
#define SIZE 13 // odd: no vec4 path hides a wrong offset
#define CLASSES 10

struct builder {
    struct cc_model *m;
    struct tu_rng rng;
    struct cc_error err;
    bool ok;
};

static int tensor(struct builder *b, const char *name, int ndim, int64_t d0, int64_t d1,
                  int64_t d2, int64_t d3, float lo, float hi)
{
    int64_t shape[4] = {d0, d1, d2, d3}, count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    float *data = NULL;
    if (hi > lo) {
        data = malloc((size_t)count * sizeof(float));
        tu_rng_fill(&b->rng, data, (size_t)count, lo, hi);
    }
    int t = cc_model_add_tensor(b->m, name, CC_DTYPE_F32, ndim, shape, data, &b->err);
    free(data);
    b->ok &= t >= 0;
    return t;
}

static int node(struct builder *b, enum cc_op op, const char *name, int n_in, const int *in,
                int out, const union cc_attrs *a, struct cc_act act)
{
    b->ok = b->ok && cc_model_add_node(b->m, op, name, n_in, in, 1, &out, a, act, &b->err) >= 0;
    return out;
}

/* An activation (no data) shaped like [1, c, h, w]. */
static int act4(struct builder *b, const char *name, int64_t c, int64_t h, int64_t w)
{
    return tensor(b, name, 4, 1, c, h, w, 0, 0);
}

/* constants: true for the network above, false for the same without its constant operands
 * (each mul/add by a constant is left out). */
static struct cc_model *build(bool constants, struct cc_error *err)
{
    struct builder b = {.m = cc_model_new("fallback"), .ok = true};
    if (!b.m) {
        cc_error_set(err, "out of memory");
        return NULL;
    }
    tu_rng_seed(&b.rng, 42);
    union cc_attrs conv3 = {.conv = {.stride = {1, 1}, .pad = {1, 1, 1, 1}, .dilation = {1, 1},
                                     .groups = 1}};
    union cc_attrs conv1 = {.conv = {.stride = {2, 2}, .dilation = {1, 1}, .groups = 1}};
    const int half = (SIZE - 1) / 2 + 1;
    int x = act4(&b, "input", C_IN, SIZE, SIZE), h = x;
    if (constants) {
        int k0 = tensor(&b, "k0", 4, 1, C_IN, 1, 1, 0.5f, 1.5f);
        h = node(&b, CC_OP_MUL, "scale_in", 2, (int[]){x, k0}, act4(&b, "h0", C_IN, SIZE, SIZE),
                 NULL, cc_act_none());
    }
    int w1 = tensor(&b, "w1", 4, C_MID, C_IN, 3, 3, -0.4f, 0.4f);
    int b1 = tensor(&b, "b1", 1, C_MID, 1, 1, 1, -0.1f, 0.1f);
    h = node(&b, CC_OP_CONV2D, "conv1", 3, (int[]){h, w1, b1},
             act4(&b, "h1", C_MID, SIZE, SIZE), &conv3, cc_act_relu());
    if (constants) {
        int k1 = tensor(&b, "k1", 4, 1, C_MID, SIZE, SIZE, -0.3f, 0.3f);
        h = node(&b, CC_OP_ADD, "shift", 2, (int[]){h, k1}, act4(&b, "h2", C_MID, SIZE, SIZE),
                 NULL, cc_act_none());
        int k2 = tensor(&b, "k2", 4, 1, C_MID, 1, 1, 0.5f, 2.0f);
        h = node(&b, CC_OP_MUL, "gain", 2, (int[]){h, k2}, act4(&b, "h3", C_MID, SIZE, SIZE),
                 NULL, cc_act_relu6());
    }
    int w2 = tensor(&b, "w2", 4, C_MID, C_MID, 1, 1, -0.5f, 0.5f);
    h = node(&b, CC_OP_CONV2D, "conv2", 2, (int[]){h, w2}, act4(&b, "h4", C_MID, half, half),
             &conv1, cc_act_none());
    h = node(&b, CC_OP_GLOBAL_AVG_POOL, "gap", 1, &h, act4(&b, "h5", C_MID, 1, 1), NULL,
             cc_act_none());
    h = node(&b, CC_OP_FLATTEN, "flatten", 1, &h, tensor(&b, "h6", 2, 1, C_MID, 1, 1, 0, 0),
             NULL, cc_act_none());
    int w3 = tensor(&b, "w3", 2, CLASSES, C_MID, 1, 1, -1.0f, 1.0f);
    int y = tensor(&b, constants ? "logits" : "output", 2, 1, CLASSES, 1, 1, 0, 0);
    h = node(&b, CC_OP_LINEAR, "fc", 2, (int[]){h, w3}, y, NULL, cc_act_none());
    if (constants) {
        int k3 = tensor(&b, "k3", 2, 1, CLASSES, 1, 1, 0.5f, 2.0f);
        h = node(&b, CC_OP_MUL, "scale_out", 2, (int[]){h, k3},
                 tensor(&b, "output", 2, 1, CLASSES, 1, 1, 0, 0), NULL, cc_act_none());
    }
    if (!b.ok) {
        *err = b.err;
        cc_model_destroy(b.m);
        return NULL;
    }
    b.m->input.tensor = x;
    b.m->output.tensor = h;
    if (!cc_model_finalize(b.m, err)) {
        cc_model_destroy(b.m);
        return NULL;
    }
    return b.m;
}

struct result {
    float out[2][CLASSES]; // for the two inputs
    char notice[2048];     // what the engine said on opts.notices at load
    int cpu_timed;         // --profile: layer timings of the CPU nodes that are > 0
    bool ok;
};

static void run(bool constants, enum cc_backend_kind backend, bool staging, struct result *r)
{
    memset(r, 0, sizeof(*r));
    struct cc_error err = {0};
    struct cc_model *m = build(constants, &err);
    if (!CHECKF(m != NULL, "building the model: %s", err.msg))
        return;
    char *notice = NULL;
    size_t notice_size = 0;
    FILE *notices = open_memstream(&notice, &notice_size);
    struct cc_engine_options opt = cc_engine_options_default();
    opt.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    opt.backend = backend;
    opt.pipeline_cache = "";
    opt.notices = notices;
    opt.vk_staging = staging;
    opt.profile = true;
    opt.cpu_cache = "";
    struct cc_engine *e = cc_engine_create_from_model(m, &opt, &err);
    fclose(notices);
    snprintf(r->notice, sizeof(r->notice), "%s", notice ? notice : "");
    free(notice);
    if (!CHECKF(e != NULL, "creating the engine: %s", err.msg))
        return;
    float in[C_IN * SIZE * SIZE];
    struct tu_rng rng;
    r->ok = true;
    for (int i = 0; i < 2; i++) {
        tu_rng_seed(&rng, 7 + (uint64_t)i);
        tu_rng_fill(&rng, in, sizeof(in) / sizeof(in[0]), -2.0f, 2.0f);
        r->ok &= CHECKF(cc_engine_run(e, in, r->out[i], &err), "run: %s", err.msg);
        float again[CLASSES];
        r->ok &= CHECKF(cc_engine_run(e, in, again, &err), "second run: %s", err.msg);
        CHECKF(memcmp(again, r->out[i], sizeof(again)) == 0, "a second run gave another output");
    }
    const struct cc_layer_timing *t = NULL;
    int n = cc_engine_layer_timings(e, &t);
    const struct cc_model *mm = cc_engine_model(e);
    for (int i = 0; i < n; i++) {
        const char *name = mm->nodes[t[i].node].name;
        if ((!strcmp(name, "scale_in") || !strcmp(name, "shift") || !strcmp(name, "gain") ||
             !strcmp(name, "scale_out")) &&
            t[i].ms > 0)
            r->cpu_timed++;
    }
    cc_engine_destroy(e);
}

static void compare(const char *what, const struct result *got, const struct result *ref)
{
    if (!got->ok || !ref->ok)
        return;
    for (int i = 0; i < 2; i++) {
        double scale = fmax(1.0, tu_max_abs(ref->out[i], CLASSES));
        double d = tu_max_abs_diff(got->out[i], ref->out[i], CLASSES, NULL);
        CHECKF(d <= TOLERANCE * scale, "%s, input %d: max |backend - ref| = %.3g > %.3g", what,
               i, d, TOLERANCE * scale);
        printf("%s, input %d: max |backend - ref| = %.3g (%.3g x max|ref|)\n", what, i, d,
               d / scale);
    }
}

/* input [1,3,1025,1365] -> relu -> gap -> flatten: the relu's dispatch is too wide. */
static void test_limit(const char *profile)
{
    struct builder b = {.m = cc_model_new("wide"), .ok = true};
    int x = act4(&b, "input", 3, 1025, 1365);
    int r = node(&b, CC_OP_CLAMP, "relu_wide", 1, &x, act4(&b, "r", 3, 1025, 1365), NULL,
                 cc_act_relu());
    int g = node(&b, CC_OP_GLOBAL_AVG_POOL, "gap", 1, &r, act4(&b, "g", 3, 1, 1), NULL,
                 cc_act_none());
    int y = node(&b, CC_OP_FLATTEN, "flatten", 1, &g, tensor(&b, "output", 2, 1, 3, 1, 1, 0, 0),
                 NULL, cc_act_none());
    struct cc_error err = {0};
    if (!CHECKF(b.ok, "building the wide model: %s", b.err.msg))
        return;
    b.m->input.tensor = x;
    b.m->output.tensor = y;
    if (!CHECKF(cc_model_finalize(b.m, &err), "finalize: %s", err.msg))
        return;
    char *notice = NULL;
    size_t size = 0;
    struct cc_engine_options opt = cc_engine_options_default();
    opt.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    opt.backend = CC_BACKEND_VULKAN;
    opt.pipeline_cache = "";
    opt.vk_profile = profile;
    opt.notices = open_memstream(&notice, &size);
    struct cc_engine *e = cc_engine_create_from_model(b.m, &opt, &err);
    fclose(opt.notices);
    printf("wide model (%s): %s", profile ? profile : "device limits", notice ? notice : "\n");
    CHECKF(e != NULL, "wide model: %s", err.msg);
    CHECKF(notice && strstr(notice, "node \"relu_wide\" (clamp) needs 65584 workgroups") &&
               strstr(notice, "maxComputeWorkGroupCount"),
           "the notice names the node and the limit: %s", notice ? notice : "(none)");
    if (e) {
        size_t n = cc_engine_input_count(e);
        float *in = malloc(n * sizeof(float)), out[3];
        struct tu_rng rng;
        tu_rng_seed(&rng, 3);
        tu_rng_fill(&rng, in, n, -1.0f, 1.0f);
        double want[3] = {0, 0, 0}; // relu then mean per channel, in double
        for (int c = 0; c < 3; c++) {
            for (size_t i = 0; i < n / 3; i++)
                want[c] += fmax(0.0, in[c * (n / 3) + i]);
            want[c] /= (double)(n / 3);
        }
        CHECKF(cc_engine_run(e, in, out, &err), "wide model run: %s", err.msg);
        for (int c = 0; c < 3; c++)
            CHECKF(fabs(out[c] - want[c]) <= TOLERANCE * fmax(1.0, fabs(want[c])),
                   "wide model channel %d: %.6f, want %.6f", c, out[c], want[c]);
        free(in);
        cc_engine_destroy(e);
    }
    free(notice);
}

int main(void)
{
    struct result ref, cpu, shared, staged, plain_ref, plain, plain_staged;
    run(true, CC_BACKEND_REF, false, &ref);
    run(true, CC_BACKEND_CPU, false, &cpu);
    run(true, CC_BACKEND_VULKAN, false, &shared);
    run(true, CC_BACKEND_VULKAN, true, &staged);
    run(false, CC_BACKEND_REF, false, &plain_ref);
    run(false, CC_BACKEND_VULKAN, false, &plain);
    run(false, CC_BACKEND_VULKAN, true, &plain_staged);

    if (ref.ok) { // input sensitivity first: otherwise the comparisons below prove little
        double scale = tu_max_abs(ref.out[0], CLASSES);
        double d = tu_max_abs_diff(ref.out[0], ref.out[1], CLASSES, NULL);
        CHECKF(d >= 0.05 * scale, "the model is not input-sensitive: outputs of two inputs "
                                  "differ by %.3g of max %.3g", d, scale);
        printf("input sensitivity: %.3g x max|output|\n", d / scale);
    }
    compare("cpu backend (constants as operands)", &cpu, &ref);
    compare("fallback, shared arena", &shared, &ref);
    compare("fallback, staging + mirror", &staged, &ref);
    compare("no fallback", &plain, &plain_ref);
    compare("no fallback, staging", &plain_staged, &plain_ref);

    printf("notice: %s", shared.notice);
    printf("notice (staging): %s", staged.notice);
    const char *names[] = {"\"scale_in\"", "\"shift\"", "\"gain\""};
    for (int i = 0; i < 3; i++)
        CHECKF(strstr(shared.notice, names[i]) != NULL, "the notice names node %s", names[i]);
    CHECK(strstr(shared.notice, "4 nodes run on the CPU") != NULL);
    CHECK(strstr(shared.notice, "and 1 more") != NULL); // scale_out, the fourth
    CHECK(strstr(shared.notice, "is a constant") != NULL);
    CHECK(strstr(shared.notice, "3 more Vulkan submissions") != NULL);
    CHECK(strstr(shared.notice, "MB copied") == NULL); // shared: nothing to copy
    CHECK(strstr(staged.notice, "MB copied") != NULL);
    CHECKF(shared.cpu_timed == 4, "--profile timed %d of the 4 CPU nodes", shared.cpu_timed);
    CHECKF(plain.notice[0] == '\0' && plain_staged.notice[0] == '\0',
           "no CPU nodes, yet a notice: %s", plain.notice);

    test_limit(NULL);
    test_limit("pi4");
    struct cc_error err = {0};
    struct cc_model *m = build(false, &err);
    struct cc_engine_options opt = cc_engine_options_default();
    opt.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    opt.backend = CC_BACKEND_VULKAN;
    opt.pipeline_cache = "";
    opt.vk_profile = "pi5";
    struct cc_engine *e = m ? cc_engine_create_from_model(m, &opt, &err) : NULL;
    CHECKF(!e && strstr(err.msg, "unknown Vulkan limits profile \"pi5\"; known: pi4"),
           "an unknown profile is refused: %s", err.msg);
    cc_engine_destroy(e);
    return tu_exit_code();
}
