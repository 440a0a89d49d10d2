/* camclass — the driver of the 1x1 GEMM benchmarks (bench_f32_gemm.c, bench_q8_gemm.c): one
 * layer table, several ways to run each layer, figures only.
 *
 * Each pass runs one way over the layers in the network's order, as a network does: their
 * weights and activations come from L3 or memory, not from a warm L2, since 32 MB of other
 * memory is written before every pass. Rounds alternate the ways the host runs, 30 passes each
 * after 2 untimed. Prints per layer and way the 10th percentile of all rounds' times (the least
 * disturbed: the machine may be shared) and the median, in ms, and the rate at the 10th
 * percentile. */
#ifndef CC_LAYER_BENCH_H
#define CC_LAYER_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include <pthreadpool.h>

struct layer_bench {
    const int (*layers)[3]; // pixels, channels in, out
    size_t n_layers;
    const char *const *ways;
    int n_ways;
    const char *rate;   // the rate's unit, e.g. "GF/s"
    double ops_per_mac; // its operations a multiply-add (2 for FLOP, 1 for MAC)
    void *ctx;
    // Sets up every layer for every way the host runs on threads threads (runs[way] true).
    void (*setup)(void *ctx, int threads, bool *runs);
    void (*run)(void *ctx, int way, size_t layer, pthreadpool_t pool);
    void (*finish)(void *ctx); // frees what setup made
};

/* Parses [THREADS [ROUNDS]] from argv, runs b, prints its figures; the exit status (2: bad
 * arguments). */
int layer_bench_main(const struct layer_bench *b, int argc, char **argv);

#endif
