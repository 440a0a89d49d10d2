/* camclass — the CPU backend's own f32 1x1 convolution (see f32_gemm.h): the packing, the
 * split into tasks, the loop over micro-tiles and the portable C kernel. The x86-64 kernels are
 * in f32_gemm_x86.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "f32_gemm.h"

enum {
    MR_C = 4,  // the C kernel's pixels at once
    NR_C = 16, // and channels (a vector or two that compilers make of them)
    // Floats of input rows a row block keeps for all its panels (256 KB: in a 512 KB-1 MB L2
    // with room for a panel of weights). Each block reads all its panels' weights once: in a
    // network they come from L3 or memory (mobilenet_v2's 960 -> 320 has 1.2 MB), so at 7x7
    // all 49 rows are one block. 64 KB blocks (4 at 49 x 960) took features.17.conv.2 0.218
    // ms, these 0.172 ms (0.14 ms alone, its weights in L2).
    BLOCK_FLOATS = 64 << 10,
};

/* ------------------------------------------------------------------------------------------
 * The portable C kernel: MR_C x NR_C accumulators, summed in c order as the others.
 */

/* p's activation of one value: hardswish as the vector kernels compute it, or the clamp. */
static inline float act_c(const struct cc_f32_pw *p, float v)
{
    if (p->hswish) {
        float t = v * (1.0f / 6.0f) + 0.5f;
        return v * (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
    }
    v = v < p->lo ? p->lo : v;
    return v > p->hi ? p->hi : v;
}

static void tile_c(const struct cc_f32_pw *p, size_t r0, size_t rows, int q0, int panels)
{
    const size_t c = (size_t)p->c;
    for (int q = q0; q < q0 + panels; q++) {
        const float *wq = p->w + (size_t)q * c * NR_C;
        int o0 = q * NR_C, cols = p->n - o0 < NR_C ? p->n - o0 : NR_C;
        for (size_t r = r0; r < r0 + rows; r += MR_C) {
            int mr = r0 + rows - r < MR_C ? (int)(r0 + rows - r) : MR_C;
            float acc[MR_C][NR_C];
            for (int i = 0; i < mr; i++)
                memcpy(acc[i], p->bias + o0, sizeof(acc[i]));
            for (size_t k = 0; k < c; k++)
                for (int i = 0; i < mr; i++) {
                    float xv = p->x[(r + (size_t)i) * c + k];
                    for (int j = 0; j < NR_C; j++)
                        acc[i][j] += xv * wq[k * NR_C + (size_t)j];
                }
            for (int i = 0; i < mr; i++)
                for (int j = 0; j < cols; j++)
                    p->y[(r + (size_t)i) * (size_t)p->n + (size_t)(o0 + j)] = act_c(p, acc[i][j]);
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * Kernel families
 */

static const struct {
    cc_f32_pw_tile_fn *tile; // NULL: not built for this CPU family
    int mr, nr, vector;      // vector: the last panel's channels are a multiple of it
} isas[CC_STEM_ISA_COUNT] = {
    [CC_STEM_C] = {tile_c, MR_C, NR_C, NR_C},
#if defined(__x86_64__)
    [CC_STEM_AVX2] = {cc_f32_pw_tile_avx2, CC_F32_PW_MR256, CC_F32_PW_NR256, 8},
    [CC_STEM_AVX512] = {cc_f32_pw_tile_avx512, CC_F32_PW_MR512, CC_F32_PW_NR512, 16},
#endif
};

/* ------------------------------------------------------------------------------------------
 * Setup
 */

bool cc_f32_pw_applies(const struct cc_model *m, const struct cc_node *node)
{
    if (node->op != CC_OP_CONV2D || node->n_inputs < 2 ||
        (node->act.kind != CC_ACT_CLAMP && node->act.kind != CC_ACT_HARDSWISH))
        return false;
    const struct cc_conv2d_attrs *a = &node->attrs.conv;
    const struct cc_tensor *w = &m->tensors[node->inputs[1]];
    const struct cc_tensor *x = &m->tensors[node->inputs[0]];
    return a->groups == 1 && w->ndim == 4 && w->shape[2] == 1 && w->shape[3] == 1 &&
           a->stride[0] == 1 && a->stride[1] == 1 && !a->pad[0] && !a->pad[1] && !a->pad[2] &&
           !a->pad[3] && x->ndim == 4 && x->shape[0] == 1 && x->dtype == CC_DTYPE_F32 &&
           (w->dtype == CC_DTYPE_F32 || w->dtype == CC_DTYPE_I8) &&
           (node->n_inputs < 3 || m->tensors[node->inputs[2]].data);
}

/* Pixels and panels a task takes on `threads` threads: one task on one thread; else about
 * four tasks a thread, of whole micro-tiles and panels, split so that the tasks read the
 * fewest bytes in all. Splitting the pixels r ways and the panels q ways, every task reads its
 * pixels' inputs and its panels' weights: r x (the weights) + q x (the inputs). Splitting the
 * pixels alone, as before, had every task of a 7x7 layer read all its weights (features.18,
 * 320 -> 1280: 1.6 MB, eight times at 2 threads); splitting the panels there reads the
 * 63 KB of inputs eight times instead. Ties keep more pixel tasks. */
static void split(struct cc_f32_pw *p, size_t threads)
{
    size_t tiles = (p->p + (size_t)p->mr - 1) / (size_t)p->mr;
    size_t panels = (size_t)cc_f32_pw_panels(p), want = threads > 1 ? 4 * threads : 1;
    double inputs = (double)p->p * p->c, weights = (double)p->c * p->n;
    size_t row_tasks = 1, panel_tasks = 1;
    double best = INFINITY;
    for (size_t r = tiles < want ? tiles : want; r >= 1; r--) {
        size_t q = (want + r - 1) / r;
        q = q < panels ? q : panels ? panels : 1;
        double cost = (double)r * weights + (double)q * inputs;
        if (r * q >= (want < tiles * panels ? want : tiles * panels) && cost < best)
            best = cost, row_tasks = r, panel_tasks = q;
    }
    p->task_rows = (tiles + row_tasks - 1) / row_tasks * (size_t)p->mr;
    p->task_panels = (int)((panels + panel_tasks - 1) / panel_tasks);
}

bool cc_f32_pw_init(struct cc_f32_pw *p, const float *w, const float *bias, size_t pixels, int c,
                    int n, struct cc_act act, enum cc_stem_isa isa, size_t threads,
                    struct cc_error *err)
{
    *p = (struct cc_f32_pw){0};
    if ((unsigned)isa >= CC_STEM_ISA_COUNT || !isas[isa].tile || !cc_stem_isa_runs(isa))
        return cc_error_set(err, "cpu backend: this CPU (or build) has no %s 1x1 kernels",
                            cc_stem_isa_name(isa));
    if (act.kind != CC_ACT_CLAMP && act.kind != CC_ACT_HARDSWISH)
        return cc_error_set(err, "cpu backend: the own 1x1 convolution has no %s activation",
                            cc_act_kind_name(act.kind));
    int nr = isas[isa].nr, vec = isas[isa].vector, full = (n - 1) / nr;
    int last = (n - full * nr + vec - 1) / vec * vec;
    *p = (struct cc_f32_pw){.p = pixels,
                            .c = c,
                            .n = n,
                            .n_pad = full * nr + last,
                            .mr = isas[isa].mr,
                            .nr = nr,
                            .nr_last = last,
                            .lo = act.min,
                            .hi = act.max,
                            .hswish = act.kind == CC_ACT_HARDSWISH,
                            .isa = isa};
    size_t wbytes = ((size_t)p->n_pad * (size_t)c * sizeof(float) + 63) / 64 * 64;
    size_t bbytes = ((size_t)p->n_pad * sizeof(float) + 63) / 64 * 64;
    p->w = aligned_alloc(64, wbytes ? wbytes : 64);
    p->bias = aligned_alloc(64, bbytes);
    if (!p->w || !p->bias) {
        cc_f32_pw_finish(p);
        return cc_error_set(err, "cpu backend: out of memory for a 1x1 convolution's weights");
    }
    memset(p->bias, 0, bbytes);
    for (int o = 0; o < p->n_pad; o++) {
        size_t width = (size_t)(o / nr < full ? nr : last);
        float *dst = p->w + (size_t)(o / nr) * (size_t)c * (size_t)nr + (size_t)(o % nr);
        for (int k = 0; k < c; k++)
            dst[(size_t)k * width] = o < n ? w[(size_t)o * (size_t)c + (size_t)k] : 0.0f;
        if (o < n && bias)
            p->bias[o] = bias[o];
    }
    split(p, threads);
    return true;
}

bool cc_f32_pw_init_node(struct cc_f32_pw *p, const struct cc_model *m, const struct cc_node *node,
                         enum cc_stem_isa isa, size_t threads, struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    const float *weights = w->data;
    float *f32 = NULL;
    if (!weights) { // i8 weights in an f32 node
        if (!(f32 = malloc((size_t)w->count * sizeof(float))))
            return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
        cc_tensor_dequantize(w, f32);
        weights = f32;
    }
    const float *bias = node->n_inputs > 2 ? m->tensors[node->inputs[2]].data : NULL;
    bool ok = cc_f32_pw_init(p, weights, bias, (size_t)(x->shape[2] * x->shape[3]),
                             (int)x->shape[1], (int)w->shape[0], node->act, isa, threads, err);
    free(f32);
    return ok;
}

void cc_f32_pw_finish(struct cc_f32_pw *p)
{
    free(p->w);
    free(p->bias);
    p->w = p->bias = NULL;
}

/* ------------------------------------------------------------------------------------------
 * Running
 */

/* Task (i, j): pixels from i * task_rows, panels from j * task_panels, in row blocks whose
 * input rows stay in cache while every panel of the task passes over them. */
static void run_task(void *ctx, size_t i, size_t j)
{
    const struct cc_f32_pw *p = ctx;
    cc_f32_pw_tile_fn *tile = isas[p->isa].tile;
    size_t r0 = i * p->task_rows, r1 = r0 + p->task_rows < p->p ? r0 + p->task_rows : p->p;
    int q0 = (int)j * p->task_panels, panels = cc_f32_pw_panels(p) - q0;
    panels = panels < p->task_panels ? panels : p->task_panels;
    size_t block = (size_t)BLOCK_FLOATS / (size_t)p->c / (size_t)p->mr * (size_t)p->mr;
    block = block ? block : (size_t)p->mr;
    for (size_t r = r0; r < r1; r += block)
        tile(p, r, r1 - r < block ? r1 - r : block, q0, panels);
}

void cc_f32_pw_run(const struct cc_f32_pw *p, pthreadpool_t pool)
{
    size_t row_tasks = (p->p + p->task_rows - 1) / p->task_rows;
    size_t panels = (size_t)cc_f32_pw_panels(p);
    size_t panel_tasks = (panels + (size_t)p->task_panels - 1) / (size_t)p->task_panels;
    pthreadpool_parallelize_2d(pool, run_task, (void *)p, row_tasks, panel_tasks,
                               PTHREADPOOL_FLAG_DISABLE_DENORMALS |
                                   (p->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
}

/* ------------------------------------------------------------------------------------------
 * The switch
 */

static bool pw_built(enum cc_stem_isa isa)
{
    return isas[isa].tile != NULL;
}

bool cc_f32_pw_mode_parse(const char *value, struct cc_stem_mode *mode, struct cc_error *err)
{
    static const struct cc_isa_mode_spec spec = {"CAMCLASS_CPU_PW", "a 1x1 kernel mode",
                                                 "1x1 kernels", "avx512, avx2, c", pw_built};
    return cc_isa_mode_parse(&spec, value, mode, err);
}
