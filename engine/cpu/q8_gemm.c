/* camclass — the int8 1x1 GEMM (see q8_gemm.h): the portable C kernel, the kernel table, the
 * check, the packing, the threaded run and the match from a model. The x86-64 kernels are in
 * q8_gemm_x86.c and q8_gemm_avx2.c, the AArch64 ones in q8_gemm_arm.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "env_word.h"
#include "q8_gemm.h"
#include "xnn_build.h"

enum {
    NR_C = 16,       // the portable kernel's panel width (any would do)
    FEW_PIXELS = 16, // fewer: each weight is read about once (the classifier), memory the limit
    WIDE_MAX = 256 * 1024, // bytes of widened inputs a layer may keep (struct cc_q8_gemm wide)
    WIDE_K = 64,           // inputs at most per pixel, for that (more: read from L2, it was slower)
    SIGN_PIXELS = 64, // fewer (and FEW_PIXELS or more): AVX2's sign kernel where the weights allow
};

/* ------------------------------------------------------------------------------------------
 * The portable kernel: one value at a time, q8_gemm.h's formulas as they read.
 */

static void kernel_c(const struct cc_q8_tile *t)
{
    for (int p = 0; p < t->m; p++) {
        const int8_t *a = t->a + (size_t)p * t->lda;
        for (int o = 0; o < t->n_valid; o++) {
            int32_t acc = t->bias[o];
            for (int k = 0; k < t->k; k++) // unsigned input (x + 128): see q8_gemm.h
                acc += (int32_t)(uint8_t)(a[(size_t)(k / 4) * t->ldg + k % 4] ^ 0x80) *
                       t->w[((size_t)(k / 4) * NR_C + o) * 4 + k % 4];
            float f = (float)acc * t->scale[o];
            f = f < t->lo ? t->lo : f > t->hi ? t->hi : f;
            t->c[(size_t)p * t->ldc + o] = (int8_t)((int32_t)nearbyintf(f) + t->zp);
        }
    }
}

/* A family's kernel and panel width. */
struct row {
    cc_q8_kernel kernel;
    int nr;
    bool signed_x;     // the kernel multiplies x, not x + 128: no 128 * sum(w) in the bias
    bool pairs;        // weights in pairs of inputs (q8_gemm.h), int16 unless few
    cc_q8_kernel few;  // for layers of < FEW_PIXELS pixels: weights as byte pairs (NULL: kernel)
    cc_q8_widen widen; // the kernel reads inputs widened to int16 by this, where given
};

/* Each family's, by enum cc_fq8_isa (whose host checks say which run). */
static const struct row kernels[CC_FQ8_ISA_COUNT] = {
    [CC_FQ8_C] = {kernel_c, NR_C},
#if defined(__x86_64__)
    [CC_FQ8_AVX2] = {cc_q8_kernel_avx2, CC_Q8_NR_AVX2, true, true, cc_q8_kernel_avx2_w8,
                     cc_q8_widen_avx2},
    [CC_FQ8_AVXVNNI] = {cc_q8_kernel_avxvnni, CC_Q8_NR_YMM},
    [CC_FQ8_AVX512VNNI] = {cc_q8_kernel_avx512vnni, CC_Q8_NR_ZMM},
#endif
#if defined(__aarch64__)
    [CC_FQ8_NEON] = {cc_q8_kernel_neon, CC_Q8_NR_NEON, true},
    [CC_FQ8_NEONDOT] = {cc_q8_kernel_neondot, CC_Q8_NR_NEONDOT, true},
#endif
};

#if defined(__x86_64__)
/* AVX2's other kernel, for layers without a weight of -128 (cc_q8_kernel_avx2sign). */
static const struct row avx2_sign = {cc_q8_kernel_avx2sign, CC_Q8_NR_YMM, true};
#endif

bool cc_q8_gemm_isa_runs(enum cc_fq8_isa isa)
{
    return cc_fq8_isa_runs(isa) && kernels[isa].kernel;
}

enum cc_fq8_isa cc_q8_gemm_isa_best(void)
{
    enum cc_fq8_isa best = CC_FQ8_C;
    for (int i = 0; i < CC_FQ8_ISA_COUNT; i++)
        best = cc_q8_gemm_isa_runs((enum cc_fq8_isa)i) ? (enum cc_fq8_isa)i : best;
    return best;
}

/* ------------------------------------------------------------------------------------------
 * Setup
 */

bool cc_q8_gemm_check(const struct cc_q8_gemm_desc *d, struct cc_error *err)
{
    const char *bad = NULL;
    if (d->m < 1 || d->k < 1 || d->n < 1)
        bad = "a pixel, input or output count below 1";
    else if (!d->w || !d->sw)
        bad = "missing weights or weight scales";
    else if (!(d->qx.scale > 0) || !(d->qy.scale > 0))
        bad = "an activation scale that is not positive";
    else if (d->lo > d->hi)
        bad = "a clamp whose low end is above its high end";
    if (bad)
        return cc_error_set(err, "int8 1x1 conv: %s (%d pixels, %d -> %d)", bad, d->m, d->k, d->n);
    return true;
}

static void *aligned_zeros(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1))
        return NULL;
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

/* d's weights into g's panels (g->layout); bias = the int32 bias
 * at sx * sw[o] (XNNPACK's rounding, cc_xnn_bias_i32) less (zx + 128) * sum(w[o]) (zx * sum(w[o])
 * for the kernels of signed products); scale = (sx * sw[o]) / sy in f32, XNNPACK's order. */
static void pack(struct cc_q8_gemm *g, const struct cc_q8_gemm_desc *d, const struct row *row)
{
    int x_add = row->signed_x ? 0 : 128;
    for (int o = 0; o < d->n; o++) {
        int8_t *panel = g->w + (size_t)(o / g->nr) * g->panel_bytes;
        int64_t sum = 0;
        for (int i = 0; i < d->k; i++) {
            int8_t v = d->w[(size_t)o * d->k + i];
            size_t at = g->layout == CC_Q8_GROUPS
                            ? ((size_t)(i / 4) * g->nr + o % g->nr) * 4 + i % 4
                            : ((size_t)(i / 2) * g->nr + o % g->nr) * 2 + i % 2;
            if (g->layout == CC_Q8_PAIRS16)
                ((int16_t *)(void *)panel)[at] = v;
            else
                panel[at] = v;
            sum += v;
        }
        int32_t q = 0;
        if (d->bias)
            cc_xnn_bias_i32(d->bias + o, 1, d->qx.scale, d->sw + o, &q);
        g->bias[o] = (int32_t)((int64_t)q - (int64_t)(d->qx.zero_point + x_add) * sum);
        float s = d->qx.scale * d->sw[o];
        g->scale[o] = s / d->qy.scale;
    }
}

/* Pixels per task: all of them where the panels alone give every thread two tasks, else
 * split so they do (a multiple of 6 pixels, the widest kernel's block). */
static int tile_pixels(int m, int panels, int threads)
{
    if (threads <= 1 || panels >= 2 * threads)
        return m;
    int parts = (2 * threads + panels - 1) / panels, per = (m + parts - 1) / parts;
    per = (per + 5) / 6 * 6;
    return per < m ? per : m;
}

/* The bytes of tasks copies of m pixels' k inputs widened to int16 (k rounded up to 4), or 0
 * where a layer's inputs are not widened once for its panels: more than WIDE_K inputs a pixel,
 * or more than WIDE_MAX bytes (plan_widen). */
static size_t wide_bytes(int m, int k, size_t tasks)
{
    size_t ldw = (size_t)(k + 3) / 4 * 4, bytes = tasks * (size_t)m * ldw * sizeof(int16_t);
    return ldw <= WIDE_K && bytes <= WIDE_MAX ? bytes : 0;
}

/* Panels per task (g->tile_n) and g->wide: where the kernels widen their inputs to int16, the
 * buffer fits WIDE_MAX and pixels have at most WIDE_K inputs, each pixel is widened once for all
 * the panels, not once a panel (the AVX2 kernel does without, a register block at a time): there
 * the kernel's own widening is mostly its per-block overhead (28x28 and 56x56 expands, k 24 and
 * 32: 0.33 -> 0.27 ms each); with more inputs the widened rows come from L2 instead of a register
 * block's buffer in L1, and the projects at 14x14 and 7x7 (k 384..960) were 5-25% slower. On one
 * thread one task has it all. On more, where each thread gets two tasks of 6 pixels or more, the
 * tasks split the pixels (g->tile_m) and take every panel, so a pixel is widened once in all: when
 * they split the panels instead, each widened all the pixels (2 threads, same rounds: features.4's
 * expand 24 -> 144 at 56x56 0.223 -> 0.178 ms, 32 -> 192 at 28x28 0.076 -> 0.066, 64 -> 384 at
 * 14x14 0.059 -> 0.054; the weights, at most 64 x n, are small). Else, a task with every pixel,
 * enough panels for two tasks a thread. False: out of memory. */
static bool plan_widen(struct cc_q8_gemm *g, int threads, const struct row *row)
{
    g->tile_n = 1;
    if (!row->widen || g->panels < 2)
        return true;
    size_t tasks = 1;
    if (threads > 1 && g->m >= 12 * threads && wide_bytes(g->m, g->k, 1)) {
        g->tile_m = ((g->m + 2 * threads - 1) / (2 * threads) + 5) / 6 * 6;
        g->tile_n = g->panels;
    } else if (g->tile_m == g->m) {
        int tn = threads <= 1 ? g->panels : (g->panels + 2 * threads - 1) / (2 * threads);
        tasks = (size_t)((g->panels + tn - 1) / tn);
        g->tile_n = tn >= 2 && wide_bytes(g->m, g->k, tasks) ? tn : 1;
    }
    if (g->tile_n == 1)
        return true;
    g->ldw = (size_t)(g->k + 3) / 4 * 4;
    g->wide = aligned_zeros(wide_bytes(g->m, g->k, tasks));
    g->widen = row->widen;
    return g->wide != NULL;
}

#if defined(__x86_64__)
/* Whether no weight of d is -128 (cc_q8_kernel_avx2sign's condition). */
static bool no_min_weight(const struct cc_q8_gemm_desc *d)
{
    for (size_t i = 0; i < (size_t)d->n * (size_t)d->k; i++)
        if (d->w[i] == INT8_MIN)
            return false;
    return true;
}
#endif

/* g's kernel, weight layout and panel width nr for d on g->isa. Panels of 16 outputs, 6-pixel
 * blocks (cc_q8_kernel_avx2_nr16) on AVX2 for 32 outputs, not 24 + 8, whose last panel passes every
 * pixel again for one vector (the int8 stem, 1 thread: 0.27 -> 0.24 ms; the 32-output projects
 * 0.95x), and for any multiple of 16 outputs from at most WIDE_K inputs widened once for
 * all panels (plan_widen: its tasks, about 2 a thread, each hold all the pixels): there the 4 x 3
 * block's accumulator on the stack shows (a Zen 3, 1 thread: 64 -> 384 at 14x14 0.105 -> 0.082 ms,
 * 32 -> 192 at 28x28 0.113 -> 0.093, 24 -> 144 at 56x56 0.28 -> 0.24). Not where the kernel widens
 * a block's inputs itself, once a panel (1 thread 16 -> 96 at 112x112 0.55 -> 0.61 ms; 2 threads 24
 * -> 144 0.21 -> 0.23), nor for longer loops (96 -> 576 0.180 -> 0.184). On AVX2, layers of
 * FEW_PIXELS to SIGN_PIXELS pixels (7x7) whose weights are all in -127..127 take the sign kernel
 * (cc_q8_kernel_avx2sign): each weight byte serves few pixels there, and its bytes, a quarter of
 * the pair kernel's loads, beat its extra vpsignb a product (bench_q8_gemm, a Zen 3, 10th
 * percentiles, pairs -> sign: 1 thread 320 -> 1280 0.375 -> 0.343 ms, 960 -> 320 0.282 -> 0.249;
 * 2 threads 0.214 -> 0.187, 0.173 -> 0.142); with more pixels it lost (14x14 576 -> 96 0.180 ->
 * 0.205, 56x56 96 -> 24 0.112 -> 0.182). Returns the family row whose packing g takes. */
static const struct row *choose_kernel(struct cc_q8_gemm *g, const struct cc_q8_gemm_desc *d,
                                       int threads)
{
    enum cc_fq8_isa isa = g->isa;
    const struct row *row = &kernels[isa];
    bool few = d->m < FEW_PIXELS && row->few;
#if defined(__x86_64__)
    if (isa == CC_FQ8_AVX2 && !few && d->m < SIGN_PIXELS && no_min_weight(d))
        row = &avx2_sign;
#endif
    g->kernel = few ? row->few : row->kernel;
    g->layout = !row->pairs ? CC_Q8_GROUPS : few ? CC_Q8_PAIRS8 : CC_Q8_PAIRS16;
    g->nr = row->nr;
#if defined(__x86_64__)
    size_t tasks = (size_t)(threads <= 1 ? 1 : 2 * threads); // plan_widen's at most
    bool short_k = d->n % 16 == 0 && wide_bytes(d->m, d->k, tasks) != 0;
    if (row == &kernels[CC_FQ8_AVX2] && !few && (d->n == 32 || short_k)) {
        g->kernel = cc_q8_kernel_avx2_nr16;
        g->nr = CC_Q8_NR_AVX2_2;
    }
#endif
    return row;
}

bool cc_q8_gemm_init(struct cc_q8_gemm *g, const struct cc_q8_gemm_desc *d, enum cc_fq8_isa isa,
                     int threads, struct cc_error *err)
{
    *g = (struct cc_q8_gemm){.m = d->m, .k = d->k, .n = d->n, .isa = isa};
    if (!cc_q8_gemm_check(d, err))
        return false;
    if (!cc_q8_gemm_isa_runs(isa))
        return cc_error_set(err, "int8 1x1 conv: this CPU (or build) has no %s kernels",
                            cc_fq8_isa_name(isa));
    const struct row *row = choose_kernel(g, d, threads);
    g->panels = (d->n + g->nr - 1) / g->nr;
    g->tile_m = tile_pixels(d->m, g->panels, threads);
    size_t outs = (size_t)g->panels * g->nr;
    g->panel_bytes =
        (size_t)g->nr * (size_t)((d->k + 3) / 4) * 4 * (g->layout == CC_Q8_PAIRS16 ? 2 : 1);
    g->w = aligned_zeros((size_t)g->panels * g->panel_bytes);
    g->bias = aligned_zeros(outs * sizeof(int32_t));
    g->scale = aligned_zeros(outs * sizeof(float));
    if (!g->w || !g->bias || !g->scale || !plan_widen(g, threads, row)) {
        cc_q8_gemm_finish(g);
        return cc_error_set(err, "int8 1x1 conv: out of memory");
    }
    pack(g, d, row);
    g->zp = d->qy.zero_point;
    g->lo = (float)(d->lo - d->qy.zero_point);
    g->hi = (float)(d->hi - d->qy.zero_point);
    return true;
}

void cc_q8_gemm_finish(struct cc_q8_gemm *g)
{
    free(g->w);
    free(g->bias);
    free(g->scale);
    free(g->wide);
    g->wide = NULL;
    g->w = NULL;
    g->bias = NULL;
    g->scale = NULL;
}

/* ------------------------------------------------------------------------------------------
 * Run
 */

struct run {
    const struct cc_q8_gemm *g;
    const int8_t *x;
    int8_t *y;
};

/* Pixels [p0, p0 + pn) times panels [j0, j0 + jn). */
static void run_tile(void *ctx, size_t p0, size_t j0, size_t pn, size_t jn)
{
    const struct run *r = ctx;
    const struct cc_q8_gemm *g = r->g;
    int16_t *wide = NULL; // this task's pixels widened once for its panels (plan_widen)
    if (g->wide) {
        wide = g->wide + ((j0 / (size_t)g->tile_n) * (size_t)g->m + p0) * g->ldw;
        g->widen(wide, g->ldw, r->x + p0 * (size_t)g->k, (size_t)g->k, (int)pn, g->k);
    }
    for (size_t j = j0; j < j0 + jn; j++) {
        int n0 = (int)j * g->nr, left = g->n - n0;
        struct cc_q8_tile t = {
            .a = r->x + p0 * (size_t)g->k,
            .lda = (size_t)g->k,
            .ldg = 4,
            .w = g->w + j * g->panel_bytes,
            .bias = g->bias + n0,
            .scale = g->scale + n0,
            .m = (int)pn,
            .k = g->k,
            .n_valid = left < g->nr ? left : g->nr,
            .c = r->y + p0 * (size_t)g->n + n0,
            .ldc = (size_t)g->n,
            .lo = g->lo,
            .hi = g->hi,
            .zp = g->zp,
            .wide = wide,
            .ldw = g->ldw,
        };
        g->kernel(&t);
    }
}

void cc_q8_gemm_run(const struct cc_q8_gemm *g, const int8_t *x, int8_t *y, pthreadpool_t pool)
{
    struct run r = {g, x, y};
    pthreadpool_parallelize_2d_tile_2d(pool, run_tile, &r, (size_t)g->m, (size_t)g->panels,
                                       (size_t)g->tile_m, (size_t)g->tile_n,
                                       g->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0);
}

/* ------------------------------------------------------------------------------------------
 * In a graph
 */

bool cc_q8_gemm_mode_parse(const char *value, enum cc_fused_mode *mode, struct cc_error *err)
{
    static const struct cc_env_word spec = {"CAMCLASS_CPU_Q8GEMM", "an int8 1x1 GEMM mode",
                                            "measure (the default), off or on", cc_fused_mode_words,
                                            3};
    int i;
    bool ok = cc_env_word_parse(&spec, value, &i, err);
    *mode = (enum cc_fused_mode)i;
    return ok;
}

/* Whether node n is a 1x1 stride-1 unpadded one-group conv2d, or a linear. */
static bool pointwise(const struct cc_model *m, const struct cc_node *n)
{
    if (n->op == CC_OP_LINEAR)
        return true;
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    const struct cc_tensor *w = &m->tensors[n->inputs[1]];
    return n->op == CC_OP_CONV2D && a->groups == 1 && w->ndim == 4 && w->shape[2] == 1 &&
           w->shape[3] == 1 && a->stride[0] == 1 && a->stride[1] == 1 && a->dilation[0] == 1 &&
           a->dilation[1] == 1 && !a->pad[0] && !a->pad[1] && !a->pad[2] && !a->pad[3];
}

bool cc_q8_gemm_from_node(const struct cc_model *m, const struct cc_node *n,
                          struct cc_q8_gemm_desc *d)
{
    if ((n->op != CC_OP_CONV2D && n->op != CC_OP_LINEAR) || n->n_inputs < 2 || !pointwise(m, n) ||
        n->act.kind != CC_ACT_CLAMP)
        return false;
    const struct cc_tensor *x = &m->tensors[n->inputs[0]], *w = &m->tensors[n->inputs[1]];
    const struct cc_tensor *y = &m->tensors[n->outputs[0]];
    const float *bias = n->n_inputs > 2 ? m->tensors[n->inputs[2]].data : NULL;
    if (w->dtype != CC_DTYPE_I8 || !w->q || !w->scales || (n->n_inputs > 2 && !bias) ||
        !x->quantized || !y->quantized)
        return false;
    int64_t k = w->shape[1], o = w->shape[0];
    *d = (struct cc_q8_gemm_desc){
        .m = (int)(y->count / o),
        .k = (int)k,
        .n = (int)o,
        .w = w->q,
        .sw = w->scales,
        .bias = bias,
        .qx = x->act_quant,
        .qy = y->act_quant,
        .lo = cc_xnn_quantize_bound(n->act.min, y->act_quant),
        .hi = cc_xnn_quantize_bound(n->act.max, y->act_quant),
    };
    struct cc_error ignored = {0};
    return x->count == (int64_t)d->m * k && cc_q8_gemm_check(d, &ignored);
}
