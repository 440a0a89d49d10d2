/* camclass — the CPU backend ("cpu"): runs a finalized model on XNNPACK's operators.
 *
 * XNNPACK (Debian's libxnnpack-dev) is the CPU library under TensorFlow Lite, PyTorch Mobile
 * and ExecuTorch, with tuned kernels for x86-64 (SSE2..AVX-512) and ARM (NEON, the Pi 4's
 * Cortex-A72). This module is the only one that includes its headers.
 *
 * XNNPACK's global state: xnn_initialize() is called here, at every create, and nowhere else
 * in camclass (it is idempotent: the library guards it with pthread_once). We never call
 * xnn_deinitialize(): it has nothing to free in this version, and another engine in the same
 * process may still be running.
 *
 * How a model runs:
 *   - Every node becomes one step. Computing nodes get XNNPACK operators (usually one; a
 *     concat one copy per input), created at load (weights packed then, in XNNPACK's own
 *     layout; our copies are freed straight after) and set up at load on fixed arena
 *     addresses, since shapes never change. What XNNPACK has no operator for runs as a C loop
 *     over the same pthreadpool (xnn_build.h struct cc_xnn_work). A run is then only
 *     xnn_run_operator (or the loop) per part: nothing is allocated per frame.
 *   - Layout: 4-D activations [1,C,H,W] are kept NHWC, XNNPACK's layout; the input is
 *     transposed in at the start of a run and a 4-D output out at the end. A reshape/flatten
 *     whose input and output orders agree (C == 1 or H*W == 1, e.g. after global pooling) is
 *     free (cc_plan aliases it); otherwise it is a relayout through NCHW order into a buffer
 *     of its own.
 *   - Clamp activations fuse into conv2d/linear/add/mul as XNNPACK's output_min/output_max;
 *     the other kinds (sigmoid, hardswish, SiLU, hardsigmoid) run after the operator, in
 *     place on its output (xnn_build.c).
 *   - f32 convolutions with one group (1x1 and k x k) are also built as BLIS GEMMs
 *     (blis_conv.h) and timed against XNNPACK's operator at load; the faster is kept per layer.
 *     A 3x3 stride-2 one that reads the 3-channel graph input (mobilenet_v2's stem) may run as
 *     the direct stem instead (stem_conv.h), reading the caller's NCHW input where it is: when
 *     it is the input's only reader, the input is then not transposed at all. Kept where it
 *     measures faster than the other path plus that transpose; CAMCLASS_CPU_STEM (off, on,
 *     avx512, avx2, c) switches it for benchmarks and tests (docs/PERFORMANCE.md).
 *   - An f32 inverted-residual block (expand 1x1 -> depthwise 3x3 -> project 1x1 -> add, as
 *     consecutive nodes) may run as one fused step over bands of rows (fused_block.h) at its
 *     last node, the others skipped: kept where it measures faster than its steps, remembered
 *     as 'f'; CAMCLASS_CPU_FUSED (off, on) switches it.
 *   - int8: a node runs in int8 arithmetic when its op has an int8 variant and its tensors
 *     are quantized (xnn_build.h); its output is then stored as int8. A tensor whose readers
 *     want the other type also gets a copy in that type, converted by an XNNPACK convert
 *     operator right after its producer (or, for the graph input, after the input is stored):
 *     so an int8 model takes its f32 input, quantizes it once, and dequantizes its logits.
 *     In an f32 node, i8 weights are dequantized at load and packed as f32.
 *
 * Threads: one pthreadpool per backend with cpu_threads threads (the calling thread is one of
 * them; none is made for one thread). pthreadpool's workers spin between the operators of a
 * run, which is what makes them fast, and the last operator carries XNN_FLAG_YIELD_WORKERS so
 * that they go to sleep at the end of every run: between frames they leave the cores to the
 * capture and preprocessing threads (see docs/PERFORMANCE.md for the measurements).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "blis_conv.h"
#include "cache_file.h"
#include "cpu_info.h"
#include "fused_block.h"
#include "plan.h"
#include "poison.h"
#include "stem_conv.h"
#include "xnn_build.h"
#include "clock.h"

enum { ARENA_ALIGN = 64 }; // bytes: one cache line

/* Every buffer this backend hands XNNPACK as an operator's input has XNN_EXTRA_BYTES more after
 * its end: XNNPACK's kernels may read that far past a tensor (xnnpack.h: "The number of bytes
 * XNNPACK may read beyond array bounds"), and the bytes must be ours to read. Their values do
 * not matter to a correct kernel; tests poison them (struct cc_engine_options.poison). */
static size_t padded(size_t bytes)
{
    return bytes + XNN_EXTRA_BYTES;
}

enum store { STORE_F32, STORE_QS8 };

/* One tensor as this backend keeps it. */
struct place {
    enum store type;        // of data
    void *data;             // values: arena, or own buffer (owns_data)
    bool owns_data;         // data is a buffer of this backend's (relayout output, or a copy
                            // of a constant read as an activation: constant)
    bool constant;          // data is a constant's copy, written at load (never poisoned)
    bool want_other;        // some reader wants the values in the other type
    void *other;            // the values in the other type; own buffer; NULL if not wanted
    xnn_operator_t convert; // data -> other, run right after the producer; owned
};

enum step_kind {
    STEP_XNN,      // run work: XNNPACK operators and C loops
    STEP_ALIAS,    // reshape/flatten in place: the output is the input's memory
    STEP_RELAYOUT, // reshape/flatten through NCHW order into the output's own buffer
    STEP_BLIS,     // f32 one-group convolution as BLIS GEMMs (blis_conv.h), measured faster
    STEP_STEM,     // the direct stem from the caller's NCHW input (stem_conv.h)
    STEP_FUSED,    // a whole inverted-residual block, at its last node (fused_block.h)
    STEP_SKIP,     // a node that a block's STEP_FUSED computes
};

/* A fused block's step: the block and its input and output in the arena (not owned). */
struct fused_step {
    struct cc_fused_block b;
    const float *x;
    float *y;
};

struct step {
    enum step_kind kind;
    bool int8;                      // the node computes in int8 (its output is stored as int8)
    struct cc_xnn_work work;        // STEP_XNN: owned, created and set up at load; else empty
    struct cc_blis_conv *gemm; // STEP_BLIS: owned; NULL otherwise
    float *gemm_weights;       // STEP_BLIS: weights in patch order, or an i8 1x1's f32 copy;
                               // owned; NULL when the model's f32 weights serve as they are
    struct cc_stem_conv *stem; // STEP_STEM: owned (cc_stem_conv_finish, free); NULL otherwise
    struct fused_step *fused;  // STEP_FUSED: owned (cc_fused_block_finish, free); NULL otherwise
};

struct xnn_state {
    const struct cc_model *model; // not owned
    struct cc_plan plan;
    void *arena;                     // plan.arena_size bytes, ARENA_ALIGN-aligned, owned
    struct place *places;            // (n_tensors)
    void *nchw_tmp;                  // relayout staging, (nchw_bytes); owned
    float *scratch;                  // (scratch_floats): the most a node needs; owned
    float *patches;                  // (patch_floats): the most a conv's im2col needs; owned
    size_t nchw_bytes, scratch_floats, patch_floats;
    bool poison;                     // poison the memory before every run (poison.h)
    struct step *steps;              // (n_nodes)
    pthreadpool_t pool;              // NULL when running on one thread; owned
    struct cc_layer_timing *timings; // (n_nodes), of the last run
    int n_timings;
    int n_int8;              // nodes computing in int8 (for the device name)
    int n_gemm, n_blis;     // f32 one-group convolutions, and how many of them BLIS runs
    const char *remembered; // measured choices from the cache, 'b'/'x'/'s'/'f' per such conv;
                            // or NULL
    struct cc_stem_mode stem_mode; // CAMCLASS_CPU_STEM, read at create
    int n_stem;                    // steps that are the direct stem
    enum cc_fused_mode fused_mode; // CAMCLASS_CPU_FUSED, read at create
    int n_fused;                   // steps that are a fused block
    bool input_direct;  // only direct stems read the graph input: it is not transposed in
    const float *input; // the caller's NCHW input during a run (the stems read it); not owned
    int tap;            // the tapped tensor (kept by the plan), -1 for none
    float *tap_f32;     // (its count) an int8 tap dequantized, NHWC; owned; NULL otherwise
    char device_name[160];
};

/* Threads the backend's pool runs work on (the calling thread included). */
static size_t pool_threads(const struct xnn_state *s)
{
    return s->pool ? pthreadpool_get_threads_count(s->pool) : 1;
}

/* Whether node n is an f32 convolution with one group, which BLIS can run as GEMMs. */
static bool blis_can_run(const struct cc_model *m, const struct cc_node *n, const struct step *st)
{
    (void)m;
    return n->op == CC_OP_CONV2D && !st->int8 && n->attrs.conv.groups == 1;
}

/* ------------------------------------------------------------------------------------------
 * Layout
 */

static size_t elem_size(enum store type)
{
    return type == STORE_QS8 ? 1 : sizeof(float);
}

/* True when t is stored NHWC here and that order differs from its NCHW order. */
static bool permuted(const struct cc_tensor *t)
{
    return t->ndim == 4 && t->shape[1] > 1 && t->shape[2] * t->shape[3] > 1;
}

/* [N,C,HW] -> [N,HW,C] (to_nhwc) or back, of esize-byte values, for a permuted tensor t. */
static void relayout(const struct cc_tensor *t, const void *src, void *dst, bool to_nhwc,
                     size_t esize)
{
    int64_t c = t->shape[1], hw = t->shape[2] * t->shape[3], n = t->shape[0];
    for (int64_t b = 0; b < n; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < hw; p++) {
                size_t nchw = (size_t)((b * c + ch) * hw + p),
                       nhwc = (size_t)((b * hw + p) * c + ch);
                size_t from = to_nhwc ? nchw : nhwc, to = to_nhwc ? nhwc : nchw;
                if (esize == sizeof(float))
                    ((float *)dst)[to] = ((const float *)src)[from];
                else
                    ((int8_t *)dst)[to] = ((const int8_t *)src)[from];
            }
}

/* t's values from NCHW-order src into this backend's layout (to_nhwc) or back. */
static void move(const struct cc_tensor *t, const void *src, void *dst, bool to_nhwc, size_t esize)
{
    if (permuted(t))
        relayout(t, src, dst, to_nhwc, esize);
    else if (dst != src)
        memcpy(dst, src, (size_t)t->count * esize);
}

/* ------------------------------------------------------------------------------------------
 * Placement: where every tensor lives and in which type
 */

/* The values of tensor t in type type: its data, or its copy in the other type. */
static void *values(const struct xnn_state *s, int t, enum store type)
{
    const struct place *p = &s->places[t];
    return p->type == type ? p->data : p->other;
}

/* Whether a reshape/flatten node needs a buffer of its own for its output (else it aliases
 * its input's memory, as cc_plan laid it out). */
static bool reshape_moves(const struct xnn_state *s, const struct cc_node *n)
{
    const struct cc_model *m = s->model;
    return permuted(&m->tensors[n->inputs[0]]) || permuted(&m->tensors[n->outputs[0]]) ||
           s->places[n->inputs[0]].type != s->places[n->outputs[0]].type;
}

/* Whether input slot i of node n is an activation read (weights and biases are not). */
static bool reads_activation(const struct cc_node *n, int i)
{
    return i == 0 || (n->op != CC_OP_CONV2D && n->op != CC_OP_LINEAR);
}

/* A buffer of bytes (and XNN_EXTRA_BYTES) of p's own. */
static void *own(struct place *p, size_t bytes)
{
    p->data = malloc(padded(bytes));
    p->owns_data = p->data != NULL;
    return p->data;
}

/* Types (node by node: an int8 node stores its output as int8), then memory: activations in
 * the arena, moving reshape outputs and NHWC copies of 4-D constants read as activations in
 * buffers of their own, then which tensors a reader wants in the other type. */
static bool place_tensors(struct xnn_state *s, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct cc_tensor *ten = &m->tensors[t];
        s->places[t].type = STORE_F32;
        if (!cc_tensor_is_const(ten))
            s->places[t].data = (char *)s->arena + s->plan.offset[t];
    }
    size_t tmp_bytes = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        struct place *out = &s->places[node->outputs[0]];
        bool in_int8 = s->places[node->inputs[0]].type == STORE_QS8;
        s->steps[n].int8 = cc_xnn_runs_int8(m, node, in_int8);
        s->n_int8 += s->steps[n].int8;
        out->type = s->steps[n].int8 ? STORE_QS8 : STORE_F32;
        enum store want = out->type;
        for (int i = 0; i < node->n_inputs; i++) {
            int t = node->inputs[i];
            const struct cc_tensor *ten = &m->tensors[t];
            struct place *p = &s->places[t];
            if (!reads_activation(node, i))
                continue;
            if (ten->data && !p->data) { // a constant read as an activation (f32): a
                                         // copy, in NHWC order and padded for XNNPACK
                if (!own(p, (size_t)ten->count * sizeof(float)))
                    return cc_error_set(err, "cpu backend: out of memory for constant \"%s\"",
                                        ten->name);
                move(ten, ten->data, p->data, true, sizeof(float));
                p->constant = true;
            }
            if (p->type != want)
                p->want_other = true;
        }
        const struct cc_xnn_op_row *row = cc_xnn_op_row(node->op);
        if (row->layout && reshape_moves(s, node)) {
            const struct cc_tensor *y = &m->tensors[node->outputs[0]];
            size_t bytes = (size_t)y->count * elem_size(out->type);
            if (!own(out, bytes))
                return cc_error_set(err, "cpu backend: out of memory for reshape \"%s\"",
                                    node->name);
            tmp_bytes = bytes > tmp_bytes ? bytes : tmp_bytes;
        }
    }
    // The caller reads the output as f32; an int8 tensor the model holds as its input is
    // quantized from the f32 input the caller gives.
    s->places[m->output.tensor].want_other |= s->places[m->output.tensor].type != STORE_F32;
    s->nchw_bytes = tmp_bytes;
    if (tmp_bytes && !(s->nchw_tmp = malloc(tmp_bytes)))
        return cc_error_set(err, "cpu backend: out of memory for %zu bytes of relayout staging",
                            tmp_bytes);
    size_t scratch = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        size_t f = s->steps[n].int8 ? 0 : cc_xnn_scratch_floats(m, &m->nodes[n]);
        scratch = f > scratch ? f : scratch;
    }
    s->scratch_floats = scratch;
    if (scratch && !(s->scratch = malloc(scratch * sizeof(float))))
        return cc_error_set(err, "cpu backend: out of memory for %zu floats of scratch", scratch);
    size_t patches = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        size_t f = blis_can_run(m, &m->nodes[n], &s->steps[n])
                       ? cc_blis_conv_patch_floats(m, &m->nodes[n], pool_threads(s))
                       : 0;
        patches = f > patches ? f : patches;
    }
    s->patch_floats = patches;
    if (patches && !(s->patches = malloc(patches * sizeof(float))))
        return cc_error_set(err, "cpu backend: out of memory for %zu floats of im2col patches",
                            patches);
    return true;
}

/* With s->poison, before a run or a timing run (poison.h): the arena and every buffer of a
 * tensor that is not a constant, each in its type and with its padding, the copies in the other
 * type, the relayout staging, the scratch and the im2col patches. */
static void poison_memory(const struct xnn_state *s)
{
    if (!s->poison)
        return;
    const struct cc_model *m = s->model;
    cc_poison_f32(s->arena, padded(s->plan.arena_size));
    for (int t = 0; t < m->n_tensors; t++) {
        const struct place *p = &s->places[t];
        size_t count = (size_t)m->tensors[t].count;
        bool i8 = p->type == STORE_QS8;
        if (p->data && !p->constant && (i8 || p->owns_data))
            (i8 ? cc_poison_i8 : cc_poison_f32)(p->data, padded(count * elem_size(p->type)));
        if (p->other)
            (i8 ? cc_poison_f32 : cc_poison_i8)(p->other, padded(count * (i8 ? sizeof(float) : 1)));
    }
    if (s->nchw_tmp)
        cc_poison_f32(s->nchw_tmp, s->nchw_bytes);
    if (s->scratch)
        cc_poison_f32(s->scratch, s->scratch_floats * sizeof(float));
    if (s->patches)
        cc_poison_f32(s->patches, s->patch_floats * sizeof(float));
}

/* Makes t's copy in the other type and the operator that converts into it. */
static bool make_other(struct xnn_state *s, int t, uint32_t flags, struct cc_error *err)
{
    const struct cc_tensor *ten = &s->model->tensors[t];
    struct place *p = &s->places[t];
    size_t count = (size_t)ten->count;
    struct cc_act_quant q = ten->act_quant; // set: an int8 reader or writer needs it
    enum xnn_status rc;
    if (!(p->other = malloc(padded(count * (p->type == STORE_F32 ? 1 : sizeof(float))))))
        return cc_error_set(err, "cpu backend: out of memory for a copy of \"%s\"", ten->name);
    const char *call;
    if (p->type == STORE_F32) {
        call = "xnn_create_convert_nc_f32_qs8";
        rc = xnn_create_convert_nc_f32_qs8(count, count, count, q.scale, (int8_t)q.zero_point,
                                           INT8_MIN, INT8_MAX, flags, &p->convert);
        if (rc == xnn_status_success) {
            call = "xnn_setup_convert_nc_f32_qs8";
            rc = xnn_setup_convert_nc_f32_qs8(p->convert, 1, p->data, p->other, s->pool);
        }
    } else {
        call = "xnn_create_convert_nc_qs8_f32";
        rc = xnn_create_convert_nc_qs8_f32(count, count, count, q.scale, (int8_t)q.zero_point,
                                           flags, &p->convert);
        if (rc == xnn_status_success) {
            call = "xnn_setup_convert_nc_qs8_f32";
            rc = xnn_setup_convert_nc_qs8_f32(p->convert, 1, p->data, p->other, s->pool);
        }
    }
    if (rc != xnn_status_success)
        return cc_error_set(err,
                            "cpu backend: %s for tensor \"%s\" (scale %g, zero point %d) "
                            "failed: %s; --backend ref runs the plain C ops instead",
                            call, ten->name, (double)q.scale, q.zero_point, cc_xnn_status_name(rc));
    return true;
}

/* ------------------------------------------------------------------------------------------
 * Backend
 */

static void xnn_destroy(void *p)
{
    struct xnn_state *s = p;
    if (!s)
        return;
    for (int n = 0; s->steps && n < s->model->n_nodes; n++) {
        cc_xnn_work_finish(&s->steps[n].work);
        free(s->steps[n].gemm);
        free(s->steps[n].gemm_weights);
        if (s->steps[n].stem)
            cc_stem_conv_finish(s->steps[n].stem);
        free(s->steps[n].stem);
        if (s->steps[n].fused)
            cc_fused_block_finish(&s->steps[n].fused->b);
        free(s->steps[n].fused);
    }
    for (int t = 0; s->places && t < s->model->n_tensors; t++) {
        struct place *pl = &s->places[t];
        if (pl->convert)
            xnn_delete_operator(pl->convert);
        if (pl->owns_data)
            free(pl->data);
        free(pl->other);
    }
    if (s->pool)
        pthreadpool_destroy(s->pool);
    free(s->places);
    free(s->nchw_tmp);
    free(s->scratch);
    free(s->patches);
    free(s->tap_f32);
    free(s->steps);
    free(s->timings);
    free(s->arena);
    cc_plan_finish(&s->plan);
    free(s);
}

/* An earlier such convolution with the same input and weight shapes and attributes
 * (mobilenet_v2 has 34 1x1 layers of 19 shapes, resnet50 16 3x3 ones of 4): node n takes its
 * measured choice instead of timing again, which matters where timing is slow (a Pi, an
 * emulator). -1 when there is none. */
static int same_shape_before(const struct xnn_state *s, int n)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    for (int k = 0; k < n; k++) {
        const struct cc_node *other = &m->nodes[k];
        if (!blis_can_run(m, other, &s->steps[k]))
            continue;
        const struct cc_tensor *x2 = &m->tensors[other->inputs[0]];
        const struct cc_tensor *w2 = &m->tensors[other->inputs[1]];
        if (!memcmp(x->shape, x2->shape, sizeof(x->shape)) &&
            !memcmp(w->shape, w2->shape, sizeof(w->shape)) &&
            !memcmp(&node->attrs.conv, &other->attrs.conv, sizeof(node->attrs.conv)))
            return k;
    }
    return -1;
}

/* The least time of runs runs of step st. probe: an NCHW input for a stem step, or (others)
 * the input to transpose into the graph input's place first, in the timed time (NULL: none). */
static double min_time(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                       const float *probe, int runs)
{
    const struct cc_model *m = s->model;
    double best = INFINITY;
    for (int i = 0; i < runs; i++) {
        poison_memory(s);
        double t0 = cc_now_ms();
        if (probe && st->kind != STEP_STEM)
            move(&m->tensors[m->input.tensor], probe, s->places[m->input.tensor].data, true,
                 sizeof(float));
        if (st->kind == STEP_BLIS)
            cc_blis_conv_run(st->gemm, s->pool);
        else if (st->kind == STEP_STEM)
            cc_stem_conv_run(st->stem, probe, s->pool);
        else if (st->kind == STEP_FUSED)
            cc_fused_block_run(&st->fused->b, st->fused->x, st->fused->y, s->pool);
        else
            cc_xnn_work_run(&st->work, s->pool, node, NULL);
        double t = cc_now_ms() - t0;
        best = t < best ? t : best;
    }
    return best;
}

/* For an f32 one-group convolution whose XNNPACK operator is built: prepares the BLIS way too
 * and keeps whichever opts->cpu_pointwise says, or (measure) the faster of the two on this
 * machine, timed here on the arena (min of 2 runs after one warm-up each; a layer of a shape
 * already measured takes that choice). */
static bool choose_gemm(struct xnn_state *s, int n, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    struct step *st = &s->steps[n];
    enum cc_cpu_pointwise how = opts ? opts->cpu_pointwise : CC_CPU_POINTWISE_MEASURE;
    if (!blis_can_run(m, node, st) || how == CC_CPU_POINTWISE_XNNPACK)
        return true;
    s->n_gemm++;
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    const struct cc_tensor *y = &m->tensors[node->outputs[0]];
    int o = (int)w->shape[0], c = (int)x->shape[1], kh = (int)w->shape[2], kw = (int)w->shape[3];
    bool pointwise = cc_blis_conv_is_pointwise(m, node);
    const float *weights = w->data;
    if (!weights || !pointwise) { // dequantized (i8 weights in an f32 node) and/or repacked;
                                  // padded: BLIS too reads past a small weight matrix (valgrind:
                                  // 4 bytes past a 1x2 one)
        size_t bytes = padded((size_t)w->count * sizeof(float));
        float *f32 = malloc(bytes);
        st->gemm_weights = f32 && !pointwise ? malloc(bytes) : f32;
        if (!f32 || !st->gemm_weights) {
            if (f32 != st->gemm_weights)
                free(f32);
            return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
        }
        cc_tensor_dequantize(w, f32);
        if (!pointwise) {
            cc_blis_conv_pack_weights(f32, o, c, kh, kw, st->gemm_weights);
            free(f32);
        }
        weights = st->gemm_weights;
    }
    if (!(st->gemm = malloc(sizeof(*st->gemm))))
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    *st->gemm = (struct cc_blis_conv){
        .x = values(s, node->inputs[0], STORE_F32),
        .w = weights,
        .bias = node->n_inputs > 2 ? m->tensors[node->inputs[2]].data : NULL,
        .y = s->places[node->outputs[0]].data,
        .h = (int)x->shape[2],
        .wd = (int)x->shape[3],
        .c = c,
        .ho = (int)y->shape[2],
        .wo = (int)y->shape[3],
        .n = o,
        .kh = kh,
        .kw = kw,
        .attrs = node->attrs.conv,
        .act = node->act,
        .split = cc_blis_conv_split(m, node, pool_threads(s)),
        .patches = pointwise ? NULL : s->patches,
    };
    bool blis = how == CC_CPU_POINTWISE_BLIS;
    int twin = how == CC_CPU_POINTWISE_MEASURE ? same_shape_before(s, n) : -1;
    // A remembered stem ('s') or fused block ('f') switched off: this layer is measured again.
    bool stem_off = s->stem_mode.kind == CC_STEM_OFF, fused_off = s->fused_mode == CC_FUSED_OFF;
    char was = s->remembered ? s->remembered[s->n_gemm - 1] : 0;
    if (how == CC_CPU_POINTWISE_MEASURE && s->remembered && !(stem_off && was == 's') &&
        !(fused_off && was == 'f')) {
        blis = s->remembered[s->n_gemm - 1] == 'b';
    } else if (twin >= 0) {
        blis = s->steps[twin].kind == STEP_BLIS;
    } else if (how == CC_CPU_POINTWISE_MEASURE) {
        struct step xnn = {.kind = STEP_XNN, .work = st->work},
                    gemm = {.kind = STEP_BLIS, .gemm = st->gemm};
        min_time(s, node, &xnn, NULL, 1);
        min_time(s, node, &gemm, NULL, 1);
        blis = min_time(s, node, &gemm, NULL, 2) < min_time(s, node, &xnn, NULL, 2);
    }
    if (blis) {
        cc_xnn_work_finish(&st->work);
        st->kind = STEP_BLIS;
        s->n_blis++;
    } else {
        free(st->gemm);
        free(st->gemm_weights);
        st->gemm = NULL;
        st->gemm_weights = NULL;
    }
    return true;
}

/* Activation reads of the graph input: how many (only_stems: whether all are direct stems). */
static int input_reads(const struct xnn_state *s, bool *only_stems)
{
    const struct cc_model *m = s->model;
    int reads = 0;
    *only_stems = true;
    for (int n = 0; n < m->n_nodes; n++)
        for (int i = 0; i < m->nodes[n].n_inputs; i++)
            if (m->nodes[n].inputs[i] == m->input.tensor && reads_activation(&m->nodes[n], i)) {
                reads++;
                *only_stems &= s->steps[n].kind == STEP_STEM;
            }
    return reads;
}

/* Frees node n's operators (or GEMM): the stem or a fused block computes it now. */
static void release_step(struct xnn_state *s, int n)
{
    struct step *st = &s->steps[n];
    s->n_blis -= st->kind == STEP_BLIS;
    cc_xnn_work_finish(&st->work);
    free(st->gemm);
    free(st->gemm_weights);
    st->gemm = NULL;
    st->gemm_weights = NULL;
    st->kind = STEP_SKIP;
}

/* Makes node n's step the direct stem (stem_conv.h) in place of what choose_gemm left (yield:
 * n's is the run's last operator, see build_steps), where
 * the stem applies to n and reads the f32 graph input: always with CAMCLASS_CPU_STEM on (or a
 * kernel family); where the cache remembers it ('s'); else (measured, as choose_gemm does: not
 * with a forced cpu_pointwise) where it is faster than that step plus the transpose of the
 * input that it saves when n is the input's only reader, min of 3 runs after a warm-up each. */
static bool choose_stem(struct xnn_state *s, int n, const struct cc_engine_options *opts,
                        bool yield, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    struct step *st = &s->steps[n];
    int in = m->input.tensor;
    bool forced = s->stem_mode.kind == CC_STEM_ON, only_stems;
    bool measure = s->stem_mode.kind == CC_STEM_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    if ((!forced && !measure) || st->int8 || node->inputs[0] != in ||
        s->places[in].type != STORE_F32 || !cc_stem_conv_applies(m, node))
        return true;
    if (!(st->stem = calloc(1, sizeof(*st->stem))))
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    if (!cc_stem_conv_init(st->stem, m, node, s->stem_mode.isa, s->places[node->outputs[0]].data,
                           yield, err))
        return false; // st->stem: freed by xnn_destroy
    bool keep = forced;
    if (!forced && s->remembered) {
        keep = s->remembered[s->n_gemm - 1] == 's';
    } else if (!forced) {
        float *probe = calloc((size_t)m->tensors[in].count, sizeof(float));
        if (!probe)
            return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
        const float *moved = input_reads(s, &only_stems) == 1 ? probe : NULL;
        struct step stem = {.kind = STEP_STEM, .stem = st->stem};
        min_time(s, node, st, moved, 1);
        min_time(s, node, &stem, probe, 1);
        keep = min_time(s, node, &stem, probe, 3) < min_time(s, node, st, moved, 3);
        free(probe);
    }
    if (!keep) {
        cc_stem_conv_finish(st->stem);
        free(st->stem);
        st->stem = NULL;
        return true;
    }
    release_step(s, n);
    st->kind = STEP_STEM;
    s->n_stem++;
    return true;
}

/* Whether no operator runs after node n's (its output's conversion included): n's is then the
 * run's last, whose pool workers sleep after it (XNN_FLAG_YIELD_WORKERS, see build_steps). */
static bool runs_last(const struct xnn_state *s, int n)
{
    const struct cc_model *m = s->model;
    for (int k = n; k < m->n_nodes; k++)
        if ((k > n && cc_xnn_op_row(m->nodes[k].op)->build) ||
            s->places[m->nodes[k].outputs[0]].want_other)
            return false;
    return true;
}

/* Whether f's nodes run as f32 XNNPACK or BLIS steps and its input and output do not overlap
 * (the planner may give the output the memory of an input that dies inside the block). */
static bool fusable(const struct xnn_state *s, const struct cc_fused_match *f)
{
    const struct cc_model *m = s->model;
    for (int k = f->first; k <= f->last; k++)
        if (s->steps[k].int8 || (s->steps[k].kind != STEP_XNN && s->steps[k].kind != STEP_BLIS))
            return false;
    const struct place *x = &s->places[f->x], *y = &s->places[f->y];
    const char *xb = x->data, *yb = y->data;
    size_t xn = m->tensors[f->x].count * sizeof(float), yn = m->tensors[f->y].count * sizeof(float);
    return x->type == STORE_F32 && y->type == STORE_F32 && (xb + xn <= yb || yb + yn <= xb);
}

/* The least time of f's steps (fused: the fused step instead), runs runs each. */
static double block_time(struct xnn_state *s, const struct cc_fused_match *f,
                         const struct step *fused, int runs)
{
    if (fused)
        return min_time(s, &s->model->nodes[f->last], fused, NULL, runs);
    double sum = 0;
    for (int k = f->first; k <= f->last; k++)
        sum += min_time(s, &s->model->nodes[k], &s->steps[k], NULL, runs);
    return sum;
}

/* Node n's index among the convolutions that have a character in the layer-choice cache. */
static int choice_index(const struct xnn_state *s, int n)
{
    int i = 0;
    for (int k = 0; k < n; k++)
        i += blis_can_run(s->model, &s->model->nodes[k], &s->steps[k]);
    return i;
}

/* Makes the block whose project conv is node p (fused_block.h, cc_fused_block_match) one
 * fused step at its last node, the others skipped, where it applies: always with
 * CAMCLASS_CPU_FUSED=on; where the cache remembers it ('f' for p); else (measured, not with a
 * forced cpu_pointwise) where it is faster than its steps, min of 3 runs after a warm-up. */
static bool choose_fused(struct xnn_state *s, int p, const struct cc_engine_options *opts,
                         struct cc_error *err)
{
    bool forced = s->fused_mode == CC_FUSED_ON;
    bool measure = s->fused_mode == CC_FUSED_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    struct cc_fused_match f;
    if ((!forced && !measure) || !cc_fused_block_match(s->model, p, &f))
        return true;
    struct fused_step *fs = fusable(s, &f) ? calloc(1, sizeof(*fs)) : NULL;
    if (fs && !cc_fused_block_init(&fs->b, &f.d, cc_stem_isa_best(), (int)pool_threads(s), err)) {
        free(fs);
        cc_fused_match_free(&f);
        return false;
    }
    cc_fused_match_free(&f);
    if (!fs)
        return true;
    fs->x = s->places[f.x].data;
    fs->y = s->places[f.y].data;
    fs->b.yield = runs_last(s, f.last);
    struct step st = {.kind = STEP_FUSED, .fused = fs};
    bool keep = forced;
    if (!forced && s->remembered) {
        keep = s->remembered[choice_index(s, p)] == 'f';
    } else if (!forced) {
        block_time(s, &f, NULL, 1);
        block_time(s, &f, &st, 1);
        keep = block_time(s, &f, &st, 3) < block_time(s, &f, NULL, 3);
    }
    if (!keep) {
        cc_fused_block_finish(&fs->b);
        free(fs);
        return true;
    }
    for (int k = f.first; k <= f.last; k++)
        release_step(s, k);
    s->steps[f.last] = st;
    s->n_fused++;
    return true;
}

/* Creates every node's operator (and the conversions after it) in run order; the last
 * operator of a run gets XNN_FLAG_YIELD_WORKERS. */
static bool build_steps(struct xnn_state *s, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    const struct cc_model *m = s->model;
    int in = m->input.tensor;
    // Which operator runs last: a node's own, or the conversion of its output after it.
    int last = -1;
    bool last_is_convert = false;
    for (int n = 0; n < m->n_nodes; n++) {
        if (cc_xnn_op_row(m->nodes[n].op)->build)
            last = n, last_is_convert = false;
        if (s->places[m->nodes[n].outputs[0]].want_other)
            last = n, last_is_convert = true;
    }
    if (s->places[in].want_other && !make_other(s, in, last < 0 ? XNN_FLAG_YIELD_WORKERS : 0, err))
        return false;
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        const struct cc_xnn_op_row *row = cc_xnn_op_row(node->op);
        struct step *st = &s->steps[n];
        enum store want = st->int8 ? STORE_QS8 : STORE_F32;
        if (row->layout) {
            st->kind = reshape_moves(s, node) ? STEP_RELAYOUT : STEP_ALIAS;
        } else {
            struct cc_xnn_build b = {
                .model = m,
                .node = node,
                .int8 = st->int8,
                .out = s->places[node->outputs[0]].data,
                .scratch = s->scratch,
                .pool = s->pool,
                .flags = n == last && !last_is_convert ? XNN_FLAG_YIELD_WORKERS : 0,
                .err = err,
            };
            for (int i = 0; i < node->n_inputs; i++)
                b.in[i] = values(s, node->inputs[i], want);
            st->kind = STEP_XNN;
            if (!row->build(&b, &st->work) || !choose_gemm(s, n, opts, err) ||
                !choose_stem(s, n, opts, b.flags & XNN_FLAG_YIELD_WORKERS, err))
                return false;
            if (st->kind == STEP_BLIS) // as the XNNPACK operator it replaces would have
                st->gemm->yield = b.flags & XNN_FLAG_YIELD_WORKERS;
        }
        int out = node->outputs[0];
        uint32_t flags = n == last && last_is_convert ? XNN_FLAG_YIELD_WORKERS : 0;
        if (s->places[out].want_other && !make_other(s, out, flags, err))
            return false;
    }
    return true;
}

#define CHOICES_NAME "cpu-layer-choices.txt"
// 2: every one-group conv, not only 1x1; 3: 's', the direct stem; 4: 'f', a fused block's conv
#define CHOICES_HEADER "camclass cpu layer choices 4\n"

/* build_steps with the measured BLIS/XNNPACK/stem choices remembered in the cache file, keyed
 * by the model hash, thread count and CPU: a later start with the same key times nothing (that
 * matters on a Pi or in an emulator, where timing 34 layers takes seconds). A file that does
 * not parse, or whose line does not fit the model, is measured again and rewritten; one that
 * cannot be written is not an error (the next start measures again). With CAMCLASS_CPU_STEM
 * set, the file is read but not written: a benchmark switching the stem leaves the other
 * layers' choices as the cache has them and the cache as it was. */
static bool build_steps_remembered(struct xnn_state *s, const struct cc_engine_options *opts,
                                   int threads, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    bool measure = !opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE;
    const char *cfg = opts ? opts->cpu_cache : NULL;
    char *path = !measure ? NULL
                 : cfg    ? (cfg[0] ? strdup(cfg) : NULL)
                          : cc_cache_file_default(CHOICES_NAME);
    char *old = path ? cc_cache_lines_read(path, CHOICES_HEADER) : NULL;
    char key[320], cpu[160], got[512] = "";
    cc_cpu_describe(cpu, sizeof(cpu), threads, "");
    snprintf(key, sizeof(key), "%016llx %s", (unsigned long long)cc_model_hash(m), cpu);
    int count = 0;
    for (int n = 0; n < m->n_nodes; n++)
        count += blis_can_run(m, &m->nodes[n], &s->steps[n]);
    if (old && cc_cache_lines_find(old, key, got, sizeof(got)) && (int)strlen(got) == count &&
        strspn(got, "bxsf") == strlen(got))
        s->remembered = got;
    bool ok = build_steps(s, opts, err);
    for (int n = 0; ok && n < m->n_nodes; n++)
        ok = choose_fused(s, n, opts, err);
    if (ok && path && count && !s->remembered && count < (int)sizeof(got) &&
        s->stem_mode.kind == CC_STEM_MEASURE && s->fused_mode == CC_FUSED_MEASURE) {
        int i = 0;
        for (int n = 0; n < m->n_nodes; n++)
            if (blis_can_run(m, &m->nodes[n], &s->steps[n]))
                got[i++] = s->steps[n].kind == STEP_BLIS                                     ? 'b'
                           : s->steps[n].kind == STEP_STEM                                   ? 's'
                           : s->steps[n].kind == STEP_FUSED || s->steps[n].kind == STEP_SKIP ? 'f'
                                                                                             : 'x';
        got[i] = '\0';
        struct cc_error ignored = {0};
        cc_cache_lines_store(path, CHOICES_HEADER, old, key, got, &ignored);
    }
    s->remembered = NULL;
    free(old);
    free(path);
    return ok;
}

static void *xnn_create(const struct cc_model *m, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    enum xnn_status rc = xnn_initialize(NULL);
    if (rc != xnn_status_success) {
        cc_error_set(err,
                     "cpu backend: xnn_initialize failed: %s (XNNPACK needs SSE2 on x86, NEON "
                     "on ARM); --backend ref runs the plain C ops instead",
                     cc_xnn_status_name(rc));
        return NULL;
    }
    for (int n = 0; n < m->n_nodes; n++)
        if (!cc_xnn_op_row(m->nodes[n].op)) {
            cc_error_set(err,
                         "cpu backend: op %s (node \"%s\") is not implemented; "
                         "--backend ref or vulkan may run it",
                         cc_op_name(m->nodes[n].op), m->nodes[n].name);
            return NULL;
        }

    struct xnn_state *s = calloc(1, sizeof(*s));
    if (!s) {
        cc_error_set(err, "cpu backend: out of memory");
        return NULL;
    }
    s->model = m;
    s->poison = opts && opts->poison;
    if (!cc_stem_mode_parse(getenv("CAMCLASS_CPU_STEM"), &s->stem_mode, err) ||
        !cc_fused_mode_parse(getenv("CAMCLASS_CPU_FUSED"), &s->fused_mode, err))
        goto error;
    s->tap = cc_backend_tap(m, opts);
    if (!cc_plan_init_keep(&s->plan, m, ARENA_ALIGN, s->tap, err))
        goto error;
    size_t n_tensors = (size_t)(m->n_tensors > 0 ? m->n_tensors : 1);
    size_t n_nodes = (size_t)(m->n_nodes > 0 ? m->n_nodes : 1);
    size_t arena = padded(s->plan.arena_size);
    if (posix_memalign(&s->arena, ARENA_ALIGN, arena) != 0)
        s->arena = NULL;
    s->places = calloc(n_tensors, sizeof(*s->places));
    s->steps = calloc(n_nodes, sizeof(*s->steps));
    s->timings = calloc(n_nodes, sizeof(*s->timings));
    if (!s->arena || !s->places || !s->steps || !s->timings) {
        cc_error_set(err, "cpu backend: out of memory for a %zu-byte activation arena", arena);
        goto error;
    }
    memset(s->arena, 0, arena);
    int threads = cc_cpu_threads(opts ? opts->cpu_threads : 0);
    if (threads > 1 && !(s->pool = pthreadpool_create((size_t)threads))) {
        cc_error_set(err, "cpu backend: pthreadpool_create(%d) failed; try --threads 1", threads);
        goto error;
    }
    if (!place_tensors(s, err))
        goto error;
    if (s->tap >= 0 && !values(s, s->tap, STORE_F32) &&
        !(s->tap_f32 = malloc((size_t)m->tensors[s->tap].count * sizeof(float)))) {
        cc_error_set(err, "cpu backend: out of memory for tap \"%s\"", m->tensors[s->tap].name);
        goto error;
    }
    if (!build_steps_remembered(s, opts, threads, err))
        goto error;
    bool only_stems;
    s->input_direct = input_reads(s, &only_stems) > 0 && only_stems &&
                      !s->places[m->input.tensor].want_other && m->input.tensor != m->output.tensor;
    char extra[96] = ", XNNPACK";
    if (s->n_blis)
        snprintf(extra, sizeof(extra), ", XNNPACK + BLIS for %d of %d convs", s->n_blis, s->n_gemm);
    if (s->n_stem)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", direct stem (%s)",
                 cc_stem_isa_name(s->stem_mode.isa));
    if (s->n_fused)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", %d fused blocks (%s)",
                 s->n_fused, cc_stem_isa_name(cc_stem_isa_best()));
    if (s->n_int8)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", int8");
    cc_cpu_describe(s->device_name, sizeof(s->device_name),
                    s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1, extra);
    return s;

error:
    xnn_destroy(s);
    return NULL;
}

static bool run_operator(xnn_operator_t op, const struct xnn_state *s, const char *what,
                         const struct cc_node *node, struct cc_error *err)
{
    enum xnn_status rc = xnn_run_operator(op, s->pool);
    return rc == xnn_status_success || cc_xnn_failed(what, node, rc, err);
}

static bool run_node(struct xnn_state *s, int n, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    const struct step *st = &s->steps[n];
    int x = node->inputs[0], y = node->outputs[0];
    enum store type = s->places[y].type;
    size_t esize = elem_size(type);
    const void *in = values(s, x, type);
    void *out = s->places[y].data;
    switch (st->kind) {
    case STEP_XNN:
        if (!cc_xnn_work_run(&st->work, s->pool, node, err))
            return false;
        break;
    case STEP_BLIS:
        cc_blis_conv_run(st->gemm, s->pool);
        break;
    case STEP_STEM:
        cc_stem_conv_run(st->stem, s->input, s->pool);
        break;
    case STEP_FUSED:
        cc_fused_block_run(&st->fused->b, st->fused->x, st->fused->y, s->pool);
        break;
    case STEP_SKIP:
    case STEP_ALIAS:
        break;
    case STEP_RELAYOUT: // NHWC (x) -> NCHW order -> NHWC (y), skipping what is not permuted
        if (!permuted(&m->tensors[x])) {
            move(&m->tensors[y], in, out, true, esize);
        } else if (!permuted(&m->tensors[y])) {
            move(&m->tensors[x], in, out, false, esize);
        } else {
            move(&m->tensors[x], in, s->nchw_tmp, false, esize);
            move(&m->tensors[y], s->nchw_tmp, out, true, esize);
        }
        break;
    }
    return !s->places[y].convert ||
           run_operator(s->places[y].convert, s, "xnn_run_operator (convert)", node, err);
}

static bool xnn_run(void *p, const float *input, float *output, struct cc_error *err)
{
    struct xnn_state *s = p;
    const struct cc_model *m = s->model;
    const struct cc_tensor *in_t = &m->tensors[m->input.tensor];
    struct place *in = &s->places[m->input.tensor];
    poison_memory(s);
    s->input = input;
    if (!s->input_direct)
        move(in_t, input, in->data, true, sizeof(float));
    if (in->convert) {
        enum xnn_status rc = xnn_run_operator(in->convert, s->pool);
        if (rc != xnn_status_success)
            return cc_error_set(err, "cpu backend: quantizing the input failed: %s",
                                cc_xnn_status_name(rc));
    }
    s->n_timings = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        double t0 = cc_now_ms();
        if (!run_node(s, n, err))
            return false;
        s->timings[s->n_timings++] = (struct cc_layer_timing){n, cc_now_ms() - t0};
    }
    move(&m->tensors[m->output.tensor], values(s, m->output.tensor, STORE_F32), output, false,
         sizeof(float));
    return true;
}

static int xnn_layer_timings(void *p, const struct cc_layer_timing **out)
{
    struct xnn_state *s = p;
    *out = s->timings;
    return s->n_timings;
}

/* The tap in NCHW f32: an f32 tensor moved out of NHWC, an int8 one dequantized with its
 * activation quantization first (here, on demand: nothing is added to the runs). */
static void xnn_tap_read(void *p, float *out)
{
    struct xnn_state *s = p;
    const struct cc_tensor *t = &s->model->tensors[s->tap];
    const struct place *pl = &s->places[s->tap];
    const float *f32 = values(s, s->tap, STORE_F32);
    if (!f32) {
        const int8_t *q = pl->data;
        for (int64_t i = 0; i < t->count; i++)
            s->tap_f32[i] = t->act_quant.scale * (float)(q[i] - t->act_quant.zero_point);
        f32 = s->tap_f32;
    }
    move(t, f32, out, false, sizeof(float));
}

static const char *xnn_device_name(void *p)
{
    return ((struct xnn_state *)p)->device_name;
}

const struct cc_backend_ops cc_xnn_backend = {
    .name = "cpu",
    .create = xnn_create,
    .run = xnn_run,
    .layer_timings = xnn_layer_timings,
    .device_name = xnn_device_name,
    .tap_read = xnn_tap_read,
    .destroy = xnn_destroy,
};
