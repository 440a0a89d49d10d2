/* camclass — the fused inverted-residual block (engine/cpu/fused_block.h) against the same
 * layers run one by one by the CPU backend on XNNPACK (figures only, no timed assertions;
 * docs/PERFORMANCE.md, "The fused block").
 *
 *     bench_fused [THREADS [ROUNDS]]
 *
 * For each of mobilenet_v2's first four blocks at 224x224 input and two later ones
 * (28x28 32 -> 32, 14x14 64 -> 64), random weights: a model of the block alone ([1, 3, h, w]
 * -> conv 1x1 3 -> cin (a model's input has 3 channels; not timed) -> conv 1x1 + ReLU6 ->
 * depthwise 3x3 + ReLU6 -> conv 1x1 (-> add) -> flatten (not timed)) on the CPU backend
 * (cpu_pointwise xnnpack, no layer-choice cache), timed as the sum of its layers' times (the
 * engine's layer timing: not the input's and output's relayouts, which a whole network does not
 * have), and the fused block with the host's best kernels on a pool of THREADS, timed around
 * cc_fused_block_run. Rounds alternate the two, 50 runs each (after 3 untimed). Prints the median
 * and the 10th percentile of every round's runs, and the bytes each moves to and from memory beyond
 * the caches: layer by layer, each layer's input and output (the expanded tensor twice); fused, the
 * block's input (twice with a residual) and output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine.h"
#include "fused_block.h"
#include "model.h"
#include "testutil.h"

enum { RUNS = 50, WARMUP = 3, MAX_ROUNDS = 100 };

/* [size, cin, t, cout, stride] */
static const int shapes[][5] = {
    {112, 32, 1, 16, 1}, {112, 16, 6, 24, 2}, {56, 24, 6, 24, 1},
    {56, 24, 6, 32, 2},  {28, 32, 6, 32, 1},  {14, 64, 6, 64, 1},
};
#define N_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

struct bench {
    struct cc_fused_block_desc d;
    float *w[6]; // we, be, wd, bd, wp, bp
    struct cc_engine *e;
    struct cc_fused_block fb;
    float *x_nchw, *x_nhwc, *y;
    float *pre; // (cin, 3): the model's first conv, which makes the block's input
    double ms[2][MAX_ROUNDS * RUNS]; // [layers, fused]
};

static int add_t(struct cc_model *m, const char *name, int ndim, int64_t a, int64_t b, int64_t c,
                 int64_t d, const float *data, struct cc_error *err)
{
    int64_t shape[4] = {a, b, c, d};
    return cc_model_add_tensor(m, name, CC_DTYPE_F32, ndim, shape, data, err);
}

/* conv node name: x -> t with weights w (o, c/groups, k, k) and bias b. */
static int conv(struct cc_model *m, const char *name, int x, int o, int cpg, int k, int stride,
                int ho, int wo, const float *w, const float *b, struct cc_act act,
                struct cc_error *err)
{
    char wn[32], bn[32];
    snprintf(wn, sizeof(wn), "%s.w", name);
    snprintf(bn, sizeof(bn), "%s.b", name);
    int p = k / 2,
        in[3] = {x, add_t(m, wn, 4, o, cpg, k, k, w, err), add_t(m, bn, 1, o, 0, 0, 0, b, err)};
    int t = add_t(m, name, 4, 1, o, ho, wo, NULL, err);
    union cc_attrs a = {
        .conv = {{stride, stride}, {p, p, p, p}, {1, 1}, cpg == 1 && k == 3 ? o : 1}};
    cc_model_add_node(m, CC_OP_CONV2D, name, 3, in, 1, &t, &a, act, err);
    return t;
}

/* The block d alone as a model (see the top). */
static struct cc_model *block_model(const struct bench *b, struct cc_error *err)
{
    const struct cc_fused_block_desc *d = &b->d;
    int ho = (d->h - 1) / d->stride + 1, wo = (d->w - 1) / d->stride + 1;
    struct cc_model *m = cc_model_new("block");
    int in = add_t(m, "input", 4, 1, 3, d->h, d->w, NULL, err);
    int x = conv(m, "pre", in, d->cin, 3, 1, 1, d->h, d->w, b->pre, b->w[1], cc_act_none(), err);
    int e = x;
    if (d->expand)
        e = conv(m, "expand", x, d->cexp, d->cin, 1, 1, d->h, d->w, d->we, d->be, d->act_expand,
                 err);
    int t = conv(m, "dw", e, d->cexp, 1, 3, d->stride, ho, wo, d->wd, d->bd, d->act_dw, err);
    t = conv(m, "project", t, d->cout, d->cexp, 1, 1, ho, wo, d->wp, d->bp, d->act_project, err);
    if (d->residual) {
        int ab[2] = {t, x}, sum = add_t(m, "sum", 4, 1, d->cout, ho, wo, NULL, err);
        cc_model_add_node(m, CC_OP_ADD, "add", 2, ab, 1, &sum, NULL, cc_act_none(), err);
        t = sum;
    }
    int y = add_t(m, "output", 2, 1, (int64_t)d->cout * ho * wo, 0, 0, NULL, err);
    cc_model_add_node(m, CC_OP_FLATTEN, "flatten", 1, &t, 1, &y, NULL, cc_act_none(), err);
    m->input.tensor = in;
    m->input.resize = CC_RESIZE_SQUASH;
    for (int c = 0; c < 3; c++)
        m->input.std[c] = 1.0f;
    m->output.tensor = y;
    if (!cc_model_finalize(m, err)) {
        cc_model_destroy(m);
        return NULL;
    }
    return m;
}

static float *random_floats(struct tu_rng *r, size_t n, float scale)
{
    float *p = malloc(n * sizeof(float));
    tu_rng_fill(r, p, n, -scale, scale);
    return p;
}

/* b for shape s: weights, both paths; false with a message. */
static bool setup(struct bench *b, const int *s, int threads, struct tu_rng *r)
{
    int size = s[0], cin = s[1], cexp = s[1] * s[2], cout = s[3];
    b->d = (struct cc_fused_block_desc){
        .h = size,
        .w = size,
        .cin = cin,
        .cexp = cexp,
        .cout = cout,
        .stride = s[4],
        .kernel = 3,
        .expand = s[2] != 1,
        .residual = s[4] == 1 && cin == cout,
        .act_expand = cc_act_relu6(),
        .act_dw = cc_act_relu6(),
        .act_project = cc_act_none(),
    };
    size_t n_w[6] = {(size_t)cexp * cin, cexp, (size_t)cexp * 9, cexp, (size_t)cout * cexp, cout};
    for (int i = 0; i < 6; i++)
        b->w[i] = random_floats(r, n_w[i], i == 4 ? 0.2f : 0.5f);
    b->d.we = b->w[0], b->d.be = b->w[1], b->d.wd = b->w[2];
    b->d.bd = b->w[3], b->d.wp = b->w[4], b->d.bp = b->w[5];
    size_t n_x = (size_t)size * size * cin;
    b->pre = random_floats(r, (size_t)cin * 3, 1.0f);
    b->x_nchw = random_floats(r, (size_t)size * size * 3, 2.0f);
    b->x_nhwc = random_floats(r, n_x, 2.0f);
    b->y = malloc((size_t)size * size * cout * sizeof(float));
    struct cc_error err = {0};
    struct cc_model *m = block_model(b, &err);
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_CPU;
    opt.cpu_threads = threads;
    opt.cpu_pointwise = CC_CPU_POINTWISE_XNNPACK;
    opt.cpu_cache = "";
    b->e = m ? cc_engine_create_from_model(m, &opt, &err) : NULL;
    if (!b->e || !cc_fused_block_init(&b->fb, &b->d, cc_stem_isa_best(), threads, &err)) {
        fprintf(stderr, "bench_fused: %dx%d %d -> %d: %s\n", size, size, cin, cout, err.msg);
        return false;
    }
    b->fb.yield = true; // as the engine's last operator: no spinning worker between the two
    return true;
}

/* RUNS timed runs of both paths of b into round r's slots; false with a message. */
static bool time_round(struct bench *b, int r, pthreadpool_t pool)
{
    struct cc_error err = {0};
    for (int i = 0; i < WARMUP + RUNS; i++) {
        if (!cc_engine_run(b->e, b->x_nchw, b->y, &err)) {
            fprintf(stderr, "bench_fused: run: %s\n", err.msg);
            return false;
        }
        const struct cc_layer_timing *lt = NULL;
        int n = cc_engine_layer_timings(b->e, &lt);
        double sum = 0;
        for (int k = 1; k < n - 1; k++)
            sum += lt[k].ms;
        if (i >= WARMUP) // the layers less the first and last
            b->ms[0][r * RUNS + i - WARMUP] = sum;
    }
    for (int i = 0; i < WARMUP + RUNS; i++) {
        double t0 = cc_now_ms();
        cc_fused_block_run(&b->fb, b->x_nhwc, b->y, pool);
        if (i >= WARMUP)
            b->ms[1][r * RUNS + i - WARMUP] = cc_now_ms() - t0;
    }
    return true;
}

static void report(struct bench *b, int rounds)
{
    const struct cc_fused_block_desc *d = &b->d;
    size_t n = (size_t)rounds * RUNS, in = (size_t)d->h * d->w, out = in / d->stride / d->stride;
    double mb = 4e-6, x = in * d->cin * mb, e = in * d->cexp * mb, dw = out * d->cexp * mb;
    double y = out * d->cout * mb, res = d->residual ? x : 0;
    double layers = (d->expand ? x + e : 0) + e + dw + dw + y + (d->residual ? y + res + y : 0);
    tu_sort_doubles(b->ms[0], n);
    tu_sort_doubles(b->ms[1], n);
    printf("%3dx%-3d %2d -> %3d -> %2d s%d%s  layers %.3f (%.3f)  fused %.3f (%.3f)  x%.2f  "
           "MB %.2f -> %.2f  fused set %zu KB\n",
           d->h, d->w, d->cin, d->cexp, d->cout, d->stride, d->residual ? " res" : "    ",
           b->ms[0][n / 2], b->ms[0][n / 10], b->ms[1][n / 2], b->ms[1][n / 10],
           b->ms[0][n / 2] / b->ms[1][n / 2], layers, x + res + y,
           cc_fused_block_working_set(&b->fb) / 1024);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (argc > 3 || threads < 1 || threads > 16 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: %s [THREADS (1-16) [ROUNDS (1-%d)]]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    static struct bench b[N_SHAPES];
    struct tu_rng rng;
    tu_rng_seed(&rng, 26);
    bool ok = true;
    for (size_t s = 0; ok && s < N_SHAPES; s++)
        ok = setup(&b[s], shapes[s], threads, &rng);
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    for (int r = 0; ok && r < rounds; r++) // rounds alternate the paths: load hits both alike
        for (size_t s = 0; ok && s < N_SHAPES; s++)
            ok = time_round(&b[s], r, pool);
    if (ok) {
        printf("%s; fused: %s kernels\n", cc_engine_device_name(b[0].e),
               cc_stem_isa_name(b[0].fb.isa));
        printf("%d thread(s), %d rounds x %d runs; ms: median (10th percentile); layers / "
               "fused; MB moved layer by layer -> fused\n",
               threads, rounds, RUNS);
        for (size_t s = 0; s < N_SHAPES; s++)
            report(&b[s], rounds);
    }
    for (size_t s = 0; s < N_SHAPES; s++) {
        cc_engine_destroy(b[s].e);
        cc_fused_block_finish(&b[s].fb);
        for (int i = 0; i < 6; i++)
            free(b[s].w[i]);
        free(b[s].x_nchw), free(b[s].x_nhwc), free(b[s].y), free(b[s].pre);
    }
    pthreadpool_destroy(pool);
    return ok ? 0 : 1;
}
