/* camclass — the 1x1 GEMM benchmarks' driver (see layer_bench.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "layer_bench.h"
#include "testutil.h"

enum { PASSES = 30, WARMUP = 2, MAX_ROUNDS = 50, MAX_WAYS = 4, EVICT_BYTES = 32 << 20 };

/* The timings of round r's pass i of way w, layer l: ms[((w * n_layers + l) * rounds + r) *
 * PASSES + i]. */
struct times {
    double *ms;
    size_t n_layers;
    int rounds;
};

static double *slot(const struct times *t, int w, size_t l, int r, int i)
{
    return t->ms + (((size_t)w * t->n_layers + l) * (size_t)t->rounds + (size_t)r) * PASSES +
           (size_t)i;
}

/* One pass over the layers of way w after the eviction; timed into round r's pass i (< 0:
 * untimed). */
static void pass(const struct layer_bench *b, const struct times *t, int w, char *evict, int r,
                 int i, pthreadpool_t pool)
{
    memset(evict, r + i, EVICT_BYTES);
    for (size_t l = 0; l < b->n_layers; l++) {
        double t0 = cc_now_ms();
        b->run(b->ctx, w, l, pool);
        if (i >= 0)
            *slot(t, w, l, r, i) = cc_now_ms() - t0;
    }
}

static void report(const struct layer_bench *b, const struct times *t, const bool *runs)
{
    size_t n = (size_t)t->rounds * PASSES;
    printf("layer (pixels x in -> out)");
    for (int w = 0; w < b->n_ways; w++)
        if (runs[w])
            printf("   %-28s", b->ways[w]);
    printf("\n");
    for (size_t l = 0; l < b->n_layers; l++) {
        const int *s = b->layers[l];
        printf("%5d x %4d -> %4d        ", s[0], s[1], s[2]);
        double ops = b->ops_per_mac * s[0] * s[1] * s[2];
        for (int w = 0; w < b->n_ways; w++) {
            if (!runs[w])
                continue;
            double *v = slot(t, w, l, 0, 0);
            tu_sort_doubles(v, n);
            printf("   %.4f (%.4f) %6.1f %s", v[n / 10], v[n / 2], ops / v[n / 10] * 1e-6, b->rate);
        }
        printf("\n");
    }
}

int layer_bench_main(const struct layer_bench *b, int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (threads < 1 || threads > 16 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: %s [THREADS (1-16) [ROUNDS (1-%d)]]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    bool runs[MAX_WAYS] = {false};
    CHECK(b->n_ways <= MAX_WAYS);
    struct times t = {
        calloc((size_t)b->n_ways * b->n_layers * (size_t)rounds * PASSES, sizeof(double)),
        b->n_layers, rounds};
    char *evict = malloc(EVICT_BYTES);
    CHECK(t.ms != NULL && evict != NULL);
    b->setup(b->ctx, threads, runs);
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    for (int r = 0; r < rounds; r++)
        for (int w = 0; w < b->n_ways; w++)
            for (int i = -WARMUP; i < PASSES && runs[w]; i++)
                pass(b, &t, w, evict, r, i, pool);
    printf("%d thread(s), %d rounds x %d passes, 32 MB written before each; ms: 10th percentile "
           "(median)\n",
           threads, rounds, PASSES);
    report(b, &t, runs);
    b->finish(b->ctx);
    if (pool)
        pthreadpool_destroy(pool);
    free(evict), free(t.ms);
    return tu_failures() ? 1 : 0;
}
