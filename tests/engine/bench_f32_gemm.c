/* camclass — the CPU backend's own f32 1x1 convolution (engine/cpu/f32_gemm.h), its kernel
 * families side by side on mobilenet_v2's 1x1 layers (figures only, no timed assertions;
 * docs/PERFORMANCE.md, "The own f32 1x1 GEMM on AVX2").
 *
 *     bench_f32_gemm [THREADS [ROUNDS]]
 *
 * Each run passes over the layers in the network's order, as a network does: their weights
 * (6.6 MB in all) and activations come from L3 or memory, not from a warm L2, since 32 MB of
 * other memory is written before every pass. Rounds alternate the kernel families the host runs
 * (AVX-512, AVX2, on x86-64; the portable C is left out: it is the other families' reference,
 * not a contender), 30 passes each after 2 untimed. Prints per layer and family the 10th
 * percentile of all rounds' times (the least disturbed: the machine may be shared) and the
 * median, in ms, and GFLOP/s at the 10th percentile. To compare two builds, run a copy of each
 * in turn (tools/perf_nodes.py does so for whole networks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "f32_gemm.h"
#include "testutil.h"

enum { PASSES = 30, WARMUP = 2, MAX_ROUNDS = 50, EVICT_BYTES = 32 << 20 };

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
    double ms[N_FAMILIES][N_LAYERS][MAX_ROUNDS * PASSES];
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
static void setup(struct bench *b, size_t threads)
{
    struct cc_act relu6 = {.kind = CC_ACT_CLAMP, .min = 0.0f, .max = 6.0f};
    for (size_t l = 0; l < N_LAYERS; l++) {
        size_t px = (size_t)layers[l][0], c = (size_t)layers[l][1], n = (size_t)layers[l][2];
        float *w = random_floats(n * c, 0.2f), *bias = random_floats(n, 0.2f);
        b->x[l] = random_floats(px * c, 4.0f);
        b->y[l] = random_floats(px * n, 0.0f);
        for (size_t f = 0; f < N_FAMILIES; f++) {
            b->runs[f] = cc_stem_isa_runs(families[f]);
            struct cc_error err = {0};
            if (b->runs[f]) {
                CHECK(cc_f32_pw_init(&b->pw[f][l], w, bias, px, (int)c, (int)n, relu6, families[f],
                                     threads, &err));
                b->pw[f][l].x = b->x[l];
                b->pw[f][l].y = b->y[l];
            }
        }
        free(w), free(bias);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One pass over the layers of family f after the eviction; timed into round r's pass i (< 0:
 * untimed). */
static void pass(struct bench *b, size_t f, char *evict, int r, int i, pthreadpool_t pool)
{
    memset(evict, r + i, EVICT_BYTES);
    for (size_t l = 0; l < N_LAYERS; l++) {
        double t0 = cc_now_ms();
        cc_f32_pw_run(&b->pw[f][l], pool);
        if (i >= 0)
            b->ms[f][l][r * PASSES + i] = cc_now_ms() - t0;
    }
}

static void report(struct bench *b, int rounds)
{
    size_t n = (size_t)rounds * PASSES;
    printf("layer (pixels x in -> out)");
    for (size_t f = 0; f < N_FAMILIES; f++)
        if (b->runs[f])
            printf("   %-26s", cc_stem_isa_name(families[f]));
    printf("\n");
    for (size_t l = 0; l < N_LAYERS; l++) {
        printf("%5d x %4d -> %4d        ", layers[l][0], layers[l][1], layers[l][2]);
        double flop = 2.0 * layers[l][0] * layers[l][1] * layers[l][2];
        for (size_t f = 0; f < N_FAMILIES; f++) {
            if (!b->runs[f])
                continue;
            qsort(b->ms[f][l], n, sizeof(double), cmp_double);
            double p10 = b->ms[f][l][n / 10];
            printf("   %.4f (%.4f) %6.1f GF/s", p10, b->ms[f][l][n / 2], flop / p10 * 1e-6);
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
    struct bench *b = calloc(1, sizeof(*b));
    char *evict = malloc(EVICT_BYTES);
    CHECK(b != NULL && evict != NULL);
    setup(b, (size_t)threads);
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    for (int r = 0; r < rounds; r++)
        for (size_t f = 0; f < N_FAMILIES; f++)
            for (int i = -WARMUP; i < PASSES && b->runs[f]; i++)
                pass(b, f, evict, r, i, pool);
    printf("%d thread(s), %d rounds x %d passes, 32 MB written before each; ms: 10th percentile "
           "(median)\n",
           threads, rounds, PASSES);
    report(b, rounds);
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (size_t l = 0; l < N_LAYERS && b->runs[f]; l++)
            cc_f32_pw_finish(&b->pw[f][l]);
    for (size_t l = 0; l < N_LAYERS; l++)
        free(b->x[l]), free(b->y[l]);
    if (pool)
        pthreadpool_destroy(pool);
    free(evict), free(b);
    return 0;
}
