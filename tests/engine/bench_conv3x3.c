/* camclass — our own k x k convolution (engine/cpu/conv3x3.h) on resnet18's 3x3 layer shapes
 * at 224x224, direct, Winograd F(2x2, 3x3) and F(4x4, 3x3) (where they apply) with the host's
 * best kernels, rounds
 * alternating: figures only, no timed assertions (`meson test --benchmark bench-conv3x3-1t`).
 *
 *   bench_conv3x3 THREADS ROUNDS
 *
 * Prints per layer the median over rounds of each round's least time of 20 runs, in ms and
 * GFLOP/s (2 x MACs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "conv3x3.h"
#include "testutil.h"

enum { RUNS = 20, MAX_ROUNDS = 64 };

/* resnet18's 3x3 layers: [size, c, n, stride]. */
static const int layers[][4] = {
    {56, 64, 64, 1},   {56, 64, 128, 2},  {28, 128, 128, 1}, {28, 128, 256, 2},
    {14, 256, 256, 1}, {14, 256, 512, 2}, {7, 512, 512, 1},
};

/* The least time of RUNS runs of p. */
static double least(const struct cc_conv3x3 *p, pthreadpool_t pool)
{
    double best = INFINITY;
    for (int r = 0; r < RUNS; r++) {
        double t0 = cc_now_ms();
        cc_conv3x3_run(p, pool);
        double t = cc_now_ms() - t0;
        best = t < best ? t : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (threads < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: bench_conv3x3 THREADS(>=1) ROUNDS(1-%d)\n", MAX_ROUNDS);
        return 2;
    }
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    struct tu_rng r;
    tu_rng_seed(&r, 18);
    printf("# %d thread(s), %d rounds of %d runs, kernels %s\n", threads, rounds, RUNS,
           cc_stem_isa_name(cc_stem_isa_best()));
    for (size_t l = 0; l < sizeof(layers) / sizeof(layers[0]); l++) {
        const int *s = layers[l];
        int ho = (s[0] - 1) / s[3] + 1;
        struct cc_conv3x3_desc d = {
            s[0],         s[0], s[1], ho, ho, s[2], 3, 3, {{s[3], s[3]}, {1, 1, 1, 1}, {1, 1}, 1},
            cc_act_relu()};
        size_t nx = (size_t)s[0] * s[0] * s[1], nw = (size_t)s[2] * s[1] * 9;
        float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
        float *y = malloc((size_t)ho * ho * s[2] * sizeof(float));
        tu_rng_fill(&r, x, nx, -1, 1);
        tu_rng_fill(&r, w, nw, -0.05f, 0.05f);
        struct cc_conv3x3 p[3];
        struct cc_error err = {0};
        int ways = cc_conv3x3_wino_applies(&d) ? 3 : 1;
        for (int a = 0; a < ways; a++)
            if (!cc_conv3x3_init(&p[a], &d, w, NULL, x, y, (enum cc_conv3x3_algo)a,
                                 cc_stem_isa_best(), (size_t)threads, &err)) {
                fprintf(stderr, "bench_conv3x3: %s\n", err.msg);
                return 1;
            }
        double t[3][MAX_ROUNDS];
        for (int k = 0; k < rounds; k++)
            for (int a = 0; a < ways; a++)
                t[a][k] = least(&p[a], pool);
        double gflop = 2.0 * ho * ho * s[2] * s[1] * 9 / 1e9;
        printf("%2dx%-2d %3d -> %3d s%d:", s[0], s[0], s[1], s[2], s[3]);
        for (int a = 0; a < ways; a++) {
            tu_sort_doubles(t[a], (size_t)rounds);
            double med = t[a][rounds / 2];
            static const char *const names[3] = {"direct", "winograd", "F(4x4)"};
            printf("  %s %.3f ms (%.0f GFLOP/s)", names[a], med, gflop / med * 1e3);
            cc_conv3x3_finish(&p[a]);
        }
        printf("\n");
        free(x), free(w), free(y);
    }
    pthreadpool_destroy(pool);
    return 0;
}
