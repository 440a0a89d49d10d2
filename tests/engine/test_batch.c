/* camclass — cc_engine_run_batch against single runs (engine.h), on the CPU backend.
 *
 *     test_batch [b:|a:]BUNDLE...
 *
 * For each bundle, at 1 and 2 threads and batches of 2, 3, 4 and CC_ENGINE_BATCH_MAX ("a:"
 * bundles: 2 threads, a batch of 3, to keep the test short): distinct
 * random inputs run one at a time (cc_engine_run) and as one batch; each batch row must equal its
 * single run within TOL of the logits' scale (a batch runs on XNNPACK's operators alone, a single
 * run may take BLIS GEMMs, the direct stem or fused blocks: other float rounding). The engine
 * poisons its memory before every run (cc_engine_options.poison) and the outputs are NaN before
 * the batch writes them, so a row read from memory nobody wrote, a row left unwritten and rows
 * swapped all fail (the test checks that the rows differ from one another by more than TOL).
 * "b:" bundles must run as one batch (cc_engine_can_batch); "a:" ones may run singly. Also: the
 * batch sizes the engine refuses, with one line each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "model.h"
#include "testutil.h"

#define TOL 1e-4 // of max(1, the largest |logit|)

/* Whether every row of got equals its row of want (n rows of count) within TOL; *seen: the
 * largest difference so far, over the scale. */
static bool rows_match(const char *what, int n, size_t count, float *const *want, float *const *got,
                       double *seen)
{
    bool ok = true;
    for (int i = 0; i < n; i++) {
        size_t worst = 0;
        double scale = fmax(1.0, tu_max_abs(want[i], count));
        double d = tu_max_abs_diff(got[i], want[i], count, &worst);
        *seen = fmax(*seen, d / scale);
        ok &= CHECKF(d <= TOL * scale, "%s: row %d differs by %g at %zu (%g vs %g), tolerance %g",
                     what, i, d, worst, (double)got[i][worst], (double)want[i][worst], TOL * scale);
    }
    return ok;
}

/* The rows of want differ pairwise by more than TOL: a swap would be seen. */
static void rows_distinct(const char *what, int n, size_t count, float *const *want)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double scale = fmax(1.0, tu_max_abs(want[i], count));
            CHECKF(tu_max_abs_diff(want[i], want[j], count, NULL) > TOL * scale,
                   "%s: rows %d and %d are equal; the inputs do not tell rows apart", what, i, j);
        }
}

/* Batches of n on e: n distinct inputs, single runs, one batch run. */
static void check_batch(struct cc_engine *e, const char *what, int n, struct tu_rng *rng,
                        double *seen)
{
    size_t in_count = cc_engine_input_count(e), out_count = cc_engine_output_count(e);
    float *in[CC_ENGINE_BATCH_MAX] = {0}, *want[CC_ENGINE_BATCH_MAX] = {0};
    float *got[CC_ENGINE_BATCH_MAX] = {0};
    struct cc_error err = {0};
    for (int i = 0; i < n; i++) {
        in[i] = malloc(in_count * sizeof(float));
        want[i] = malloc(out_count * sizeof(float));
        got[i] = malloc(out_count * sizeof(float));
        tu_rng_fill(rng, in[i], in_count, -2.0f, 2.0f);
        for (size_t k = 0; k < out_count; k++)
            got[i][k] = NAN;
        CHECKF(cc_engine_run(e, in[i], want[i], &err), "%s: single run: %s", what, err.msg);
    }
    rows_distinct(what, n, out_count, want);
    if (CHECKF(cc_engine_run_batch(e, n, (const float *const *)in, got, &err), "%s: %s", what,
               err.msg))
        rows_match(what, n, out_count, want, got, seen);
    // Again, after single runs in between: the batch state is kept and poisoned anew.
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < out_count; k++)
            got[i][k] = NAN;
    if (CHECKF(cc_engine_run_batch(e, n, (const float *const *)in, got, &err), "%s again: %s", what,
               err.msg))
        rows_match(what, n, out_count, want, got, seen);
    for (int i = 0; i < n; i++) {
        free(in[i]);
        free(want[i]);
        free(got[i]);
    }
}

static void check_bundle(const char *arg)
{
    bool must = strncmp(arg, "b:", 2) == 0;
    const char *path = must || strncmp(arg, "a:", 2) == 0 ? arg + 2 : arg;
    struct tu_rng rng;
    tu_rng_seed(&rng, 23);
    // The zoo ("a:"): one batch size, 2 threads (a pool splitting the batch); the rest all.
    int all[] = {2, 3, 4, CC_ENGINE_BATCH_MAX}, one[] = {3};
    int *sizes = must ? all : one, n_sizes = must ? 4 : 1;
    for (int threads = must ? 1 : 2; threads <= 2; threads++) {
        double seen = 0;
        struct cc_error err = {0};
        struct cc_engine_options opt = cc_engine_options_default();
        opt.backend = CC_BACKEND_CPU;
        opt.cpu_threads = threads;
        opt.cpu_cache = "";
        opt.poison = true;
        struct cc_engine *e = cc_engine_create(path, &opt, &err);
        if (!CHECKF(e, "%s: %s", path, err.msg))
            return;
        bool batched = cc_engine_can_batch(e);
        if (must)
            CHECKF(batched, "%s: cc_engine_can_batch is false; it must run as one batch", path);
        for (int k = 0; k < n_sizes; k++) {
            char what[600];
            snprintf(what, sizeof(what), "%s, %d threads, batch of %d", path, threads, sizes[k]);
            check_batch(e, what, sizes[k], &rng, &seen);
        }
        printf("%s, %d threads: %s, largest difference %.2g of the logits' scale\n", path, threads,
               batched ? "one batch" : "one image at a time", seen);
        cc_engine_destroy(e);
    }
}

/* A model no bundle reaches: [1,3,9,9] -> avg_pool2d 3x3 stride 2, padding 1 counted
 * (count_include_pad: the CPU backend's C pooling loop, xnn_build_zoo.c) -> flatten. NULL with
 * err on failure. */
static struct cc_model *pool_loop_model(struct cc_error *err)
{
    struct cc_model *m = cc_model_new("pool-loop");
    int64_t si[4] = {1, 3, 9, 9}, sp[4] = {1, 3, 5, 5}, so[2] = {1, 75};
    int x = cc_model_add_tensor(m, "input", CC_DTYPE_F32, 4, si, NULL, err);
    int t = cc_model_add_tensor(m, "pooled", CC_DTYPE_F32, 4, sp, NULL, err);
    int y = cc_model_add_tensor(m, "output", CC_DTYPE_F32, 2, so, NULL, err);
    union cc_attrs a = {
        .pool = {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .count_include_pad = 1}};
    cc_model_add_node(m, CC_OP_AVG_POOL2D, "pool", 1, &x, 1, &t, &a, cc_act_none(), err);
    cc_model_add_node(m, CC_OP_FLATTEN, "flatten", 1, &t, 1, &y, NULL, cc_act_none(), err);
    m->input.tensor = x;
    for (int c = 0; c < 3; c++)
        m->input.std[c] = 1.0f;
    m->output.tensor = y;
    m->output.kind = CC_OUTPUT_LOGITS;
    if (!cc_model_finalize(m, err)) {
        cc_model_destroy(m);
        return NULL;
    }
    return m;
}

static void check_pool_loop(void)
{
    struct cc_error err = {0};
    struct cc_model *m = pool_loop_model(&err);
    if (!CHECKF(m, "pool-loop model: %s", err.msg))
        return;
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_CPU;
    opt.cpu_threads = 2;
    opt.cpu_cache = "";
    opt.poison = true;
    struct cc_engine *e = cc_engine_create_from_model(m, &opt, &err);
    if (!CHECKF(e, "pool-loop engine: %s", err.msg))
        return;
    struct tu_rng rng;
    tu_rng_seed(&rng, 24);
    double seen = 0;
    CHECK(cc_engine_can_batch(e));
    check_batch(e, "pool-loop, 2 threads, batch of 3", 3, &rng, &seen);
    printf("pool-loop model, 2 threads: largest difference %.2g of the scale\n", seen);
    cc_engine_destroy(e);
}

/* Batch sizes out of range and missing buffers: false, one line. */
static void check_refusals(const char *arg)
{
    const char *path = arg[0] && arg[1] == ':' ? arg + 2 : arg;
    struct cc_error err = {0};
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_CPU;
    opt.cpu_threads = 1;
    opt.cpu_cache = "";
    struct cc_engine *e = cc_engine_create(path, &opt, &err);
    if (!CHECKF(e, "%s: %s", path, err.msg))
        return;
    float x = 0.0f, *out = &x;
    const float *in = &x;
    CHECK(!cc_engine_run_batch(e, 0, &in, &out, &err) && strstr(err.msg, "1 to 8"));
    CHECK(!cc_engine_run_batch(e, CC_ENGINE_BATCH_MAX + 1, &in, &out, &err) &&
          strstr(err.msg, "got 9"));
    const float *ins[2] = {&x, NULL};
    float *outs[2] = {&x, &x};
    CHECK(!cc_engine_run_batch(e, 2, ins, outs, &err) && strstr(err.msg, "batch image 1"));
    cc_engine_destroy(e);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_batch [b:|a:]BUNDLE...\n");
        return 2;
    }
    check_refusals(argv[1]);
    check_pool_loop();
    for (int i = 1; i < argc; i++)
        check_bundle(argv[i]);
    return tu_exit_code();
}
