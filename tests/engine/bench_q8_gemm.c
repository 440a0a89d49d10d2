/* camclass — the CPU backend's own int8 1x1 convolution (engine/cpu/q8_gemm.h) on AVX2: its
 * two kernels side by side on mobilenet_v2's 1x1 layers (figures only, no timed assertions;
 * docs/PERFORMANCE.md). The int16 pair kernels (q8_avx2.h) run each layer with one weight -128,
 * which the sign kernel cannot take (cc_q8_kernel_avx2sign); the rule of q8_gemm.c gives the sign
 * kernel only the layers of fewer than 64 pixels, so elsewhere both columns are the pairs'.
 *
 *     bench_q8_gemm [THREADS [ROUNDS]]
 *
 * Each run passes over the layers in the network's order, as a network does: their weights and
 * activations come from L3 or memory, since 32 MB of other memory is written before every
 * pass. Rounds alternate the kernels, 30 passes each after 2 untimed. Prints per layer and
 * kernel the 10th percentile of all rounds' times (the least disturbed: the machine may be
 * shared) and the median, in ms, and GMAC/s at the 10th percentile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "q8_gemm.h"
#include "testutil.h"

enum { PASSES = 30, WARMUP = 2, MAX_ROUNDS = 50, EVICT_BYTES = 32 << 20, N_WAYS = 2 };

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
    double ms[N_WAYS][N_LAYERS][MAX_ROUNDS * PASSES];
};

static int8_t *random_i8(size_t n, int lo, int hi)
{
    int8_t *v = malloc(n ? n : 1);
    CHECK(v != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = (int8_t)(lo + rand() % (hi - lo + 1));
    return v;
}

static void setup(struct bench *b, int threads)
{
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
            w[0] = INT8_MIN;
        }
        free(w), free(sw);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void pass(struct bench *b, int v, char *evict, int r, int i, pthreadpool_t pool)
{
    memset(evict, r + i, EVICT_BYTES);
    for (size_t l = 0; l < N_LAYERS; l++) {
        double t0 = cc_now_ms();
        cc_q8_gemm_run(&b->g[v][l], b->x[l], b->y[l], pool);
        if (i >= 0)
            b->ms[v][l][r * PASSES + i] = cc_now_ms() - t0;
    }
}

static void report(struct bench *b, int rounds)
{
    size_t n = (size_t)rounds * PASSES;
    printf("layer (pixels x in -> out)");
    for (int v = 0; v < N_WAYS; v++)
        printf("   %-28s", ways[v]);
    printf("\n");
    for (size_t l = 0; l < N_LAYERS; l++) {
        printf("%5d x %4d -> %4d        ", layers[l][0], layers[l][1], layers[l][2]);
        double mac = (double)layers[l][0] * layers[l][1] * layers[l][2];
        for (int v = 0; v < N_WAYS; v++) {
            qsort(b->ms[v][l], n, sizeof(double), cmp_double);
            double p10 = b->ms[v][l][n / 10];
            printf("   %.4f (%.4f) %6.1f GMAC/s", p10, b->ms[v][l][n / 2], mac / p10 * 1e-6);
        }
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (threads < 1 || threads > 16 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: %s [THREADS (1-16) [ROUNDS (1-%d)]]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    if (!cc_q8_gemm_isa_runs(CC_FQ8_AVX2)) {
        printf("no AVX2 on this CPU or build: nothing to compare\n");
        return 0;
    }
    struct bench *b = calloc(1, sizeof(*b));
    char *evict = malloc(EVICT_BYTES);
    CHECK(b != NULL && evict != NULL);
    setup(b, threads);
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < N_WAYS; v++)
            for (int i = -WARMUP; i < PASSES; i++)
                pass(b, v, evict, r, i, pool);
    printf("%d thread(s), %d rounds x %d passes, 32 MB written before each; ms: 10th percentile "
           "(median)\n",
           threads, rounds, PASSES);
    report(b, rounds);
    for (int v = 0; v < N_WAYS; v++)
        for (size_t l = 0; l < N_LAYERS; l++)
            cc_q8_gemm_finish(&b->g[v][l]);
    for (size_t l = 0; l < N_LAYERS; l++)
        free(b->x[l]), free(b->y[l]);
    if (pool)
        pthreadpool_destroy(pool);
    free(evict), free(b);
    return 0;
}
