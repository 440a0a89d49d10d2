/* camclass — the CPU backend's direct stem against the path it replaces (figures only, no
 * timed assertions; docs/PERFORMANCE.md, "The direct stem" and "The int8 stem").
 *
 *     bench_stem [THREADS [ROUNDS [f32|int8]]]
 *
 * A model of mobilenet_v2's stem alone: the [1,3,224,224] input -> conv2d 3x3 stride 2, 3 -> 32,
 * bias, ReLU6 -> flatten. Each round creates the CPU backend with CAMCLASS_CPU_STEM off (the
 * layer on XNNPACK, after the input's transpose to NHWC), on (the host's best kernels), avx2
 * (x86-64) or neon (AArch64) and c, in turn, and times 100 runs of each (after 5 untimed): the
 * whole run (the transpose, the layer, the flatten's relayout back to NCHW) and the layer alone
 * (the engine's layer timing). Prints the median and the 10th percentile of all rounds' runs per
 * mode. cpu_pointwise is xnnpack: the other path is XNNPACK's, not BLIS's.
 *
 * int8: the same stem with i8 weights and quantized activations (the int8 bundle's), switched by
 * CAMCLASS_CPU_Q8STEM (off: XNNPACK's QC8 conv after the transpose and XNNPACK's f32 -> int8
 * convert of the input; on, avx2 / neon, c: our int8 stem, which quantizes in its own read); the
 * run also dequantizes the flattened output (the same in every mode). The layer time of off leaves
 * out the transpose and the convert, which run before the first layer: compare the runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine.h"
#include "model.h"
#include "testutil.h"

enum { RUNS = 100, WARMUP = 5, SIZE = 224, OUT = 32 };

static const char *const modes[] = {"off", "on", "c",
#if defined(__x86_64__)
                                    "avx2"
#elif defined(__aarch64__)
                                    "neon" // a Pi 5's "on" is neondot (int8)
#endif
};
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

/* The stem's weights (int8: i8 with per-channel scales) and activation quantizations. */
static int stem_weights(struct cc_model *m, bool int8, int x, int t, int y, struct cc_error *err)
{
    int64_t sw[4] = {OUT, 3, 3, 3};
    float w[OUT * 27], scales[OUT];
    int8_t q[OUT * 27];
    struct tu_rng rng;
    tu_rng_seed(&rng, 26);
    tu_rng_fill(&rng, w, OUT * 27, -0.2f, 0.2f);
    if (!int8)
        return cc_model_add_tensor(m, "w", CC_DTYPE_F32, 4, sw, w, err);
    for (int i = 0; i < OUT * 27; i++)
        q[i] = (int8_t)(w[i] * 635.0f);
    for (int o = 0; o < OUT; o++)
        scales[o] = 0.2f / 127.0f;
    // The int8 mobilenet_v2's stem: its input about -2.2..2.6, its output ReLU6'd.
    bool ok = cc_model_set_act_quant(m, x, (struct cc_act_quant){0.0186f, -14}, err) &&
              cc_model_set_act_quant(m, t, (struct cc_act_quant){6.0f / 255, -128}, err) &&
              cc_model_set_act_quant(m, y, (struct cc_act_quant){6.0f / 255, -128}, err);
    return ok ? cc_model_add_tensor_i8(m, "w", 4, sw, q, scales, err) : -1;
}

static struct cc_model *stem_model(bool int8, struct cc_error *err)
{
    struct cc_model *m = cc_model_new("stem");
    int64_t si[4] = {1, 3, SIZE, SIZE}, sb[1] = {OUT};
    int64_t st[4] = {1, OUT, SIZE / 2, SIZE / 2}, so[2] = {1, (int64_t)OUT * SIZE / 2 * SIZE / 2};
    float b[OUT];
    struct tu_rng rng;
    tu_rng_seed(&rng, 27);
    tu_rng_fill(&rng, b, OUT, -0.5f, 0.5f);
    int x = cc_model_add_tensor(m, "input", CC_DTYPE_F32, 4, si, NULL, err);
    int t = cc_model_add_tensor(m, "t", CC_DTYPE_F32, 4, st, NULL, err);
    int y = cc_model_add_tensor(m, "output", CC_DTYPE_F32, 2, so, NULL, err);
    int in[3] = {x, stem_weights(m, int8, x, t, y, err),
                 cc_model_add_tensor(m, "b", CC_DTYPE_F32, 1, sb, b, err)};
    union cc_attrs a = {
        .conv = {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1}};
    cc_model_add_node(m, CC_OP_CONV2D, "stem", 3, in, 1, &t, &a, cc_act_relu6(), err);
    cc_model_add_node(m, CC_OP_FLATTEN, "flatten", 1, &t, 1, &y, NULL, cc_act_none(), err);
    m->input.tensor = x;
    m->input.color = CC_COLOR_RGB;
    for (int c = 0; c < 3; c++) {
        m->input.mean[c] = 0.0f;
        m->input.std[c] = 1.0f;
    }
    m->input.resize = CC_RESIZE_SQUASH;
    m->output.tensor = y;
    m->output.kind = CC_OUTPUT_LOGITS;
    if (!cc_model_finalize(m, err)) {
        cc_model_destroy(m);
        return NULL;
    }
    return m;
}

/* RUNS timed runs of mode into run_ms and layer_ms; false with a message on failure. */
static bool time_mode(const char *mode, bool int8, int threads, bool first, const float *input,
                      float *out, double *run_ms, double *layer_ms)
{
    struct cc_error err = {0};
    struct cc_model *m = stem_model(int8, &err);
    const char *var = int8 ? "CAMCLASS_CPU_Q8STEM" : "CAMCLASS_CPU_STEM";
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_CPU;
    opt.cpu_threads = threads;
    opt.cpu_pointwise = CC_CPU_POINTWISE_XNNPACK;
    opt.cpu_cache = "";
    setenv(var, mode, 1);
    struct cc_engine *e = m ? cc_engine_create_from_model(m, &opt, &err) : NULL;
    unsetenv(var);
    if (!e) {
        fprintf(stderr, "bench_stem: %s: %s\n", mode, err.msg);
        return false;
    }
    if (first)
        printf("%-4s %s\n", mode, cc_engine_device_name(e));
    bool ok = true;
    for (int i = 0; ok && i < WARMUP + RUNS; i++) {
        double t0 = cc_now_ms();
        ok = cc_engine_run(e, input, out, &err);
        const struct cc_layer_timing *lt = NULL;
        if (ok && i >= WARMUP && cc_engine_layer_timings(e, &lt) > 0) {
            run_ms[i - WARMUP] = cc_now_ms() - t0;
            layer_ms[i - WARMUP] = lt[0].ms;
        }
    }
    if (!ok)
        fprintf(stderr, "bench_stem: %s: run: %s\n", mode, err.msg);
    cc_engine_destroy(e);
    return ok;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 5;
    bool int8 = argc > 3 && !strcmp(argv[3], "int8");
    if (argc > 4 || threads < 1 || threads > 16 || rounds < 1 || rounds > 1000 ||
        (argc > 3 && !int8 && strcmp(argv[3], "f32"))) {
        fprintf(stderr, "usage: %s [THREADS (1-16) [ROUNDS (1-1000) [f32|int8]]]\n", argv[0]);
        return 2;
    }
    size_t n = (size_t)rounds * RUNS;
    double *run_ms[N_MODES], *layer_ms[N_MODES];
    float *input = malloc(3 * SIZE * SIZE * sizeof(float));
    float *out = malloc((size_t)OUT * SIZE / 2 * SIZE / 2 * sizeof(float));
    struct tu_rng rng;
    tu_rng_seed(&rng, 7);
    tu_rng_fill(&rng, input, 3 * SIZE * SIZE, -2.0f, 2.0f);
    bool ok = true;
    for (size_t k = 0; k < N_MODES; k++) {
        run_ms[k] = malloc(n * sizeof(double));
        layer_ms[k] = malloc(n * sizeof(double));
    }
    for (int r = 0; ok && r < rounds; r++) // rounds alternate the modes: load hits all alike
        for (size_t k = 0; ok && k < N_MODES; k++)
            ok = time_mode(modes[k], int8, threads, r == 0, input, out,
                           run_ms[k] + (size_t)r * RUNS, layer_ms[k] + (size_t)r * RUNS);
    printf("%d thread(s), %d rounds x %d runs; ms: median (10th percentile)\n", threads, rounds,
           RUNS);
    for (size_t k = 0; ok && k < N_MODES; k++) {
        tu_sort_doubles(run_ms[k], n);
        tu_sort_doubles(layer_ms[k], n);
        printf("%-4s run %.3f (%.3f)  layer %.3f (%.3f)\n", modes[k], run_ms[k][n / 2],
               run_ms[k][n / 10], layer_ms[k][n / 2], layer_ms[k][n / 10]);
    }
    for (size_t k = 0; k < N_MODES; k++) {
        free(run_ms[k]);
        free(layer_ms[k]);
    }
    free(input);
    free(out);
    return ok ? 0 : 1;
}
