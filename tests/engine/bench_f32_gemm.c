/* camclass — the CPU backend's own f32 1x1 convolution (engine/cpu/f32_gemm.h), its kernel
 * families side by side on mobilenet_v2's 1x1 layers (figures only, no timed assertions;
 * docs/PERFORMANCE.md, "The own f32 1x1 GEMM on AVX2").
 *
 *     bench_f32_gemm [THREADS [ROUNDS]]
 *
 * layer_bench.h's passes (weights cold: 6.6 MB in all) over the kernel families the host runs
 * (AVX-512, AVX2, on x86-64; the portable C is left out: it is the other families' reference,
 * not a contender), GFLOP/s at the 10th percentile. To compare two builds, run a copy of each
 * in turn (tools/perf_nodes.py does so for whole networks).
 */
#include <stdlib.h>

#include "f32_gemm.h"
#include "layer_bench.h"
#include "testutil.h"

/* mobilenet_v2's 1x1 convolutions at 224x224 input, one of each shape, in order: pixels,
 * channels in, out. */
static const int layers[][3] = {
    {12544, 32, 32}, {12544, 16, 96}, {3136, 96, 24}, {3136, 24, 144}, {3136, 144, 24},
    {784, 144, 32},  {784, 32, 192},  {784, 192, 32}, {196, 192, 64},  {196, 64, 384},
    {196, 384, 64},  {196, 384, 96},  {196, 96, 576}, {196, 576, 96},  {49, 576, 160},
    {49, 160, 960},  {49, 960, 160},  {49, 960, 320}, {49, 320, 1280},
};
#define N_LAYERS (sizeof(layers) / sizeof(layers[0]))

static const enum cc_stem_isa families[] = {CC_STEM_AVX512, CC_STEM_AVX2};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

struct bench {
    float *x[N_LAYERS], *y[N_LAYERS];
    struct cc_f32_pw pw[N_FAMILIES][N_LAYERS];
    bool runs[N_FAMILIES];
};

static float *random_floats(size_t n, float scale)
{
    float *v = malloc((n ? n : 1) * sizeof(float));
    CHECK(v != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = scale * ((float)rand() / (float)RAND_MAX - 0.5f);
    return v;
}

/* Every layer's input, output and packed weights for each family the host runs. */
static void setup(void *ctx, int threads, bool *runs)
{
    struct bench *b = ctx;
    struct cc_act relu6 = {.kind = CC_ACT_CLAMP, .min = 0.0f, .max = 6.0f};
    for (size_t f = 0; f < N_FAMILIES; f++)
        b->runs[f] = runs[f] = cc_stem_isa_runs(families[f]);
    for (size_t l = 0; l < N_LAYERS; l++) {
        size_t px = (size_t)layers[l][0], c = (size_t)layers[l][1], n = (size_t)layers[l][2];
        float *w = random_floats(n * c, 0.2f), *bias = random_floats(n, 0.2f);
        b->x[l] = random_floats(px * c, 4.0f);
        b->y[l] = random_floats(px * n, 0.0f);
        for (size_t f = 0; f < N_FAMILIES; f++) {
            struct cc_error err = {0};
            if (!b->runs[f])
                continue;
            CHECK(cc_f32_pw_init(&b->pw[f][l], w, bias, px, (int)c, (int)n, relu6, families[f],
                                 (size_t)threads, &err));
            b->pw[f][l].x = b->x[l];
            b->pw[f][l].y = b->y[l];
        }
        free(w), free(bias);
    }
}

static void run(void *ctx, int way, size_t layer, pthreadpool_t pool)
{
    struct bench *b = ctx;
    cc_f32_pw_run(&b->pw[way][layer], pool);
}

static void finish(void *ctx)
{
    struct bench *b = ctx;
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (size_t l = 0; l < N_LAYERS && b->runs[f]; l++)
            cc_f32_pw_finish(&b->pw[f][l]);
    for (size_t l = 0; l < N_LAYERS; l++)
        free(b->x[l]), free(b->y[l]);
}

int main(int argc, char **argv)
{
    static struct bench b;
    const char *ways[N_FAMILIES];
    for (size_t f = 0; f < N_FAMILIES; f++)
        ways[f] = cc_stem_isa_name(families[f]);
    struct layer_bench lb = {.layers = layers,
                             .n_layers = N_LAYERS,
                             .ways = ways,
                             .n_ways = N_FAMILIES,
                             .rate = "GF/s",
                             .ops_per_mac = 2.0,
                             .ctx = &b,
                             .setup = setup,
                             .run = run,
                             .finish = finish};
    return layer_bench_main(&lb, argc, argv);
}
