/* camclass — the CPU backend's own int8 1x1 convolution (engine/cpu/q8_gemm.h) on AVX2: its
 * two kernels side by side on mobilenet_v2's 1x1 layers (figures only, no timed assertions;
 * docs/PERFORMANCE.md). The int16 pair kernels (q8_avx2.h) run each layer with one weight -128,
 * which the sign kernel cannot take (cc_q8_kernel_avx2sign); the rule of q8_gemm.c gives the sign
 * kernel only the layers of fewer than 64 pixels, so elsewhere both columns are the pairs'.
 *
 *     bench_q8_gemm [THREADS [ROUNDS]]
 *
 * layer_bench.h's passes (weights cold), GMAC/s at the 10th percentile.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "layer_bench.h"
#include "q8_gemm.h"
#include "testutil.h"

enum { N_WAYS = 2 };

static const int layers[][3] = {
    {12544, 32, 32}, {12544, 16, 96}, {3136, 96, 24}, {3136, 24, 144}, {3136, 144, 24},
    {784, 144, 32},  {784, 32, 192},  {784, 192, 32}, {196, 192, 64},  {196, 64, 384},
    {196, 384, 64},  {196, 384, 96},  {196, 96, 576}, {196, 576, 96},  {49, 576, 160},
    {49, 160, 960},  {49, 960, 160},  {49, 960, 320}, {49, 320, 1280}, {1, 1280, 1000},
};
#define N_LAYERS (sizeof(layers) / sizeof(layers[0]))

static const char *const ways[N_WAYS] = {"a weight -128 (pairs)", "-127..127 (the rule)"};

struct bench {
    int8_t *x[N_LAYERS], *y[N_LAYERS];
    struct cc_q8_gemm g[N_WAYS][N_LAYERS];
};

static int8_t *random_i8(size_t n, int lo, int hi)
{
    int8_t *v = malloc(n ? n : 1);
    CHECK(v != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = (int8_t)(lo + rand() % (hi - lo + 1));
    return v;
}

static void setup(void *ctx, int threads, bool *runs)
{
    struct bench *b = ctx;
    for (size_t l = 0; l < N_LAYERS; l++) {
        int m = layers[l][0], k = layers[l][1], n = layers[l][2];
        int8_t *w = random_i8((size_t)n * (size_t)k, -127, 127);
        float *sw = malloc((size_t)n * sizeof(float));
        CHECK(sw != NULL);
        for (int o = 0; o < n; o++)
            sw[o] = 0.01f;
        b->x[l] = random_i8((size_t)m * (size_t)k, -128, 127);
        b->y[l] = random_i8((size_t)m * (size_t)n, 0, 0);
        struct cc_q8_gemm_desc d = {m, k, n, w, sw, NULL, {0.05f, -128}, {0.5f, -128}, -128, 127};
        for (int v = N_WAYS; v-- > 0;) { // the sign kernel, then with one weight -128 (pairs)
            struct cc_error err = {0};
            CHECKF(cc_q8_gemm_init(&b->g[v][l], &d, CC_FQ8_AVX2, threads, &err), "%s", err.msg);
            runs[v] = true;
            w[0] = INT8_MIN;
        }
        free(w), free(sw);
    }
}

static void run(void *ctx, int way, size_t layer, pthreadpool_t pool)
{
    struct bench *b = ctx;
    cc_q8_gemm_run(&b->g[way][layer], b->x[layer], b->y[layer], pool);
}

static void finish(void *ctx)
{
    struct bench *b = ctx;
    for (int v = 0; v < N_WAYS; v++)
        for (size_t l = 0; l < N_LAYERS; l++)
            cc_q8_gemm_finish(&b->g[v][l]);
    for (size_t l = 0; l < N_LAYERS; l++)
        free(b->x[l]), free(b->y[l]);
}

int main(int argc, char **argv)
{
    if (!cc_q8_gemm_isa_runs(CC_FQ8_AVX2)) {
        printf("no AVX2 on this CPU or build: nothing to compare\n");
        return 0;
    }
    static struct bench b;
    struct layer_bench lb = {.layers = layers,
                             .n_layers = N_LAYERS,
                             .ways = ways,
                             .n_ways = N_WAYS,
                             .rate = "GMAC/s",
                             .ops_per_mac = 1.0,
                             .ctx = &b,
                             .setup = setup,
                             .run = run,
                             .finish = finish};
    return layer_bench_main(&lb, argc, argv);
}
