/* camclass — one batch of N images against N single runs on the CPU backend (figures only, no
 * timed assertions; docs/PERFORMANCE.md, "Batching cameras that share an engine").
 *
 *     bench_batch [--xnnpack-only] THREADS ROUNDS BUNDLE...
 *
 * For each bundle and N = 2 and 4: N distinct random inputs; every round times RUNS times N
 * cc_engine_run calls and RUNS cc_engine_run_batch calls of N, the order alternating from round to
 * round, after untimed warm-up runs of both (the batch state is made at the first batch run).
 * Short rounds, many of them: the two ways of a round see nearly the same load. Prints the
 * median of all rounds' per-image milliseconds of each way, batch/single (below 1: the batch is
 * faster per image), the median of the rounds' own ratios, and the load average before and
 * after (the machine may be
 * shared: compare only the ratios of one run). A single run takes the backend's measured best
 * per layer (BLIS GEMMs, the direct stem, fused blocks); a batch XNNPACK's operators alone.
 * --xnnpack-only: the single runs too (cpu_pointwise xnnpack, CAMCLASS_CPU_STEM and
 * CAMCLASS_CPU_FUSED off), which tells what the batch itself gains on XNNPACK's kernels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine.h"
#include "testutil.h"

enum { RUNS = 2, WARMUP = 3, MAX_ROUNDS = 1000 };

static double median(double *v, int n)
{
    tu_sort_doubles(v, (size_t)n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_load(const char *when)
{
    double l[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) == 3)
        printf("load average %s: %.2f %.2f %.2f\n", when, l[0], l[1], l[2]);
    if (f)
        fclose(f);
}

/* Per-image ms of RUNS rounds of n single runs (batch false) or of RUNS batches of n. */
static double time_way(struct cc_engine *e, bool batch, int n, float **in, float **out,
                       struct cc_error *err)
{
    double t0 = cc_now_ms();
    for (int r = 0; r < RUNS; r++) {
        if (batch) {
            if (!cc_engine_run_batch(e, n, (const float *const *)in, out, err))
                return -1;
            continue;
        }
        for (int i = 0; i < n; i++)
            if (!cc_engine_run(e, in[i], out[i], err))
                return -1;
    }
    return (cc_now_ms() - t0) / (RUNS * n);
}

/* Rounds of both ways for batches of n on e; false with err when a run fails. */
static bool bench_n(struct cc_engine *e, int n, int rounds, struct cc_error *err)
{
    size_t in_count = cc_engine_input_count(e), out_count = cc_engine_output_count(e);
    float *in[CC_ENGINE_BATCH_MAX], *out[CC_ENGINE_BATCH_MAX];
    struct tu_rng rng;
    tu_rng_seed(&rng, 23);
    for (int i = 0; i < n; i++) {
        in[i] = malloc(in_count * sizeof(float));
        out[i] = malloc(out_count * sizeof(float));
        tu_rng_fill(&rng, in[i], in_count, -2.0f, 2.0f);
    }
    double single[MAX_ROUNDS], batch[MAX_ROUNDS], ratio[MAX_ROUNDS];
    bool ok = true;
    for (int w = 0; ok && w < WARMUP; w++)
        ok = cc_engine_run(e, in[0], out[0], err) &&
             cc_engine_run_batch(e, n, (const float *const *)in, out, err);
    for (int r = 0; ok && r < rounds; r++) {
        bool batch_first = r % 2;
        double a = time_way(e, batch_first, n, in, out, err);
        double b = a < 0 ? -1 : time_way(e, !batch_first, n, in, out, err);
        single[r] = batch_first ? b : a;
        batch[r] = batch_first ? a : b;
        ratio[r] = batch[r] / single[r];
        ok = a >= 0 && b >= 0;
    }
    if (ok) {
        double s = median(single, rounds), b = median(batch, rounds);
        printf("  N=%d  single %7.3f ms/image  batch %7.3f ms/image  batch/single %.3f "
               "(median of the rounds' ratios %.3f)\n",
               n, s, b, b / s, median(ratio, rounds));
    }
    for (int i = 0; i < n; i++) {
        free(in[i]);
        free(out[i]);
    }
    return ok;
}

int main(int argc, char **argv)
{
    bool xnnpack_only = argc > 1 && strcmp(argv[1], "--xnnpack-only") == 0;
    argc -= xnnpack_only;
    argv += xnnpack_only;
    int threads = argc > 2 ? atoi(argv[1]) : 0, rounds = argc > 2 ? atoi(argv[2]) : 0;
    if (argc < 4 || threads < 1 || threads > 16 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr,
                "usage: bench_batch [--xnnpack-only] THREADS(1..16) ROUNDS(1..%d) BUNDLE...\n",
                MAX_ROUNDS);
        return 2;
    }
    if (xnnpack_only && (setenv("CAMCLASS_CPU_STEM", "off", 1) != 0 ||
                         setenv("CAMCLASS_CPU_FUSED", "off", 1) != 0)) {
        perror("bench_batch: setenv");
        return 1;
    }
    print_load("before");
    for (int k = 3; k < argc; k++) {
        struct cc_error err = {0};
        struct cc_engine_options opt = cc_engine_options_default();
        opt.backend = CC_BACKEND_CPU;
        opt.cpu_threads = threads;
        if (xnnpack_only)
            opt.cpu_pointwise = CC_CPU_POINTWISE_XNNPACK;
        struct cc_engine *e = cc_engine_create(argv[k], &opt, &err);
        if (!e) {
            fprintf(stderr, "bench_batch: %s\n", err.msg);
            return 1;
        }
        printf("%s, %d thread%s, %d rounds of %d runs, single runs on %s, medians (%s):\n", argv[k],
               threads, threads > 1 ? "s" : "", rounds, RUNS,
               xnnpack_only ? "XNNPACK alone" : "the measured best per layer",
               cc_engine_can_batch(e) ? "one batch" : "the model runs one image at a time");
        bool ok = bench_n(e, 2, rounds, &err) && bench_n(e, 4, rounds, &err);
        cc_engine_destroy(e);
        if (!ok) {
            fprintf(stderr, "bench_batch: %s: %s\n", argv[k], err.msg);
            return 1;
        }
    }
    print_load("after");
    return 0;
}
