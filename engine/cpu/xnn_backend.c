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
 *     A k x k one is then also timed as our own direct convolution and, 3x3 stride 1, as
 *     Winograd F(2x2, 3x3) or F(4x4, 3x3) (conv3x3.h), kept where fastest, remembered as
 *     'd' / 'w' / 'v'; CAMCLASS_CPU_CONV3X3 (off, on, winograd, winograd4) switches it. An add
 *     (with its clamp) after such a convolution, its only reader, then runs in that
 *     convolution's store, the convolution moved to the add's place (xnn_resfuse.h);
 *     CAMCLASS_CPU_CONV3X3_RESIDUAL=off switches it.
 *     A 3x3 stride-2 one that reads the 3-channel graph input (mobilenet_v2's stem) may run as
 *     the direct stem instead (stem_conv.h), reading the caller's NCHW input where it is: when
 *     it is the input's only reader, the input is then not transposed at all. Kept where it
 *     measures faster than the other path plus that transpose; CAMCLASS_CPU_STEM (off, on,
 *     avx512, avx2, c) switches it for benchmarks and tests (docs/PERFORMANCE.md).
 *   - An f32 inverted-residual block (expand 1x1 -> depthwise 3x3 or 5x5 -> [squeeze-excitation]
 *     -> project 1x1 -> add, as consecutive nodes; clamps or hardswish) may run as one fused
 *     step over bands of rows (fused_block.h) at its last node, the others skipped: kept where
 *     it measures faster than its steps, remembered as 'f'; CAMCLASS_CPU_FUSED (off, on)
 *     switches it.
 *   - An f32 1x1 convolution with a clamp may run as our own register-blocked GEMM
 *     (f32_gemm.h) instead of XNNPACK's or BLIS's: kept where it measures faster, remembered
 *     as 'p'; CAMCLASS_CPU_PW (off, on, avx512, avx2, c) switches it.
 *   - int8: a node runs in int8 arithmetic when its op has an int8 variant and its tensors
 *     are quantized (xnn_build.h); its output is then stored as int8. A tensor whose readers
 *     want the other type also gets a copy in that type, converted by an XNNPACK convert
 *     operator right after its producer (or, for the graph input, after the input is stored):
 *     so an int8 model takes its f32 input, quantizes it once, and dequantizes its logits.
 *     In an f32 node, i8 weights are dequantized at load and packed as f32. An int8 1x1 conv
 *     (and linear) may run on our own GEMM (q8_gemm.h: vpdpbusd where the CPU has it, the
 *     same values as XNNPACK's QC8 operator), kept per layer where it measures faster,
 *     remembered as 'q'; CAMCLASS_CPU_Q8GEMM (off, on) switches it. An int8 stem (the 3x3
 *     stride-2 conv on the 3-channel f32 input) may run as our own int8 stem (q8_stem.h),
 *     which quantizes the caller's NCHW input as XNNPACK's convert would, in its own read: when
 *     stems are the input's only readers, the input is then neither transposed nor converted.
 *     Kept where it measures faster than the XNNPACK conv plus that transpose and convert,
 *     remembered as 'S'; CAMCLASS_CPU_Q8STEM (off, on, a kernel family: avx512vnni, avxvnni,
 *     avx2, neondot, neon, c) switches it. An int8 depthwise 3x3 may run likewise on our
 *     own (q8_dw.h: the fused block's depthwise rows), remembered as 'e'; CAMCLASS_CPU_Q8DW
 *     (off, on, a kernel family) switches it.
 *
 * Threads: one pthreadpool per backend with cpu_threads threads (the calling thread is one of
 * them; none is made for one thread). pthreadpool's workers spin between the operators of a
 * run, which is what makes them fast, and the last operator carries XNN_FLAG_YIELD_WORKERS so
 * that they go to sleep at the end of every run: between frames they leave the cores to the
 * capture and preprocessing threads (see docs/PERFORMANCE.md for the measurements). On a
 * crowded machine a run goes on the calling thread alone instead (pool_choice.h: the calling
 * thread waits for every worker at the end of each loop, and a worker waiting for a core made
 * runs ten times slower); CAMCLASS_CPU_POOL=always keeps the pool (benchmarks).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cpu_info.h"
#include "xnn_batch.h"
#include "xnn_resfuse.h"
#include "xnn_state.h"
#include "xnn_steps.h"

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
        if (s->steps[n].direct)
            cc_conv3x3_finish(s->steps[n].direct);
        free(s->steps[n].direct);
        if (s->steps[n].fused)
            cc_xnn_fused_step_finish(s->steps[n].fused);
        free(s->steps[n].fused);
        if (s->steps[n].pw)
            cc_f32_pw_finish(s->steps[n].pw);
        free(s->steps[n].pw);
        if (s->steps[n].q8)
            cc_q8_gemm_finish(s->steps[n].q8);
        free(s->steps[n].q8);
        if (s->steps[n].q8stem)
            cc_q8_stem_finish(s->steps[n].q8stem);
        free(s->steps[n].q8stem);
        if (s->steps[n].q8dw)
            cc_q8_dw_finish(s->steps[n].q8dw);
        free(s->steps[n].q8dw);
    }
    for (int t = 0; s->places && t < s->model->n_tensors; t++) {
        struct place *pl = &s->places[t];
        if (pl->convert)
            xnn_delete_operator(pl->convert);
        if (pl->owns_data)
            free(pl->data);
        free(pl->other);
    }
    for (int n = 0; s->batches && n <= CC_ENGINE_BATCH_MAX; n++) {
        xnn_destroy(s->batches[n].s);
        cc_xnn_batch_model_finish(&s->batches[n].model);
    }
    free(s->batches);
    if (s->pool)
        pthreadpool_destroy(s->pool);
    free(s->places);
    free(s->nchw_tmp);
    free(s->scratch);
    free(s->patches);
    free(s->tap_f32);
    free(s->steps);
    free(s->timings);
    for (int n = 0; s->shown && n < s->model->n_nodes; n++)
        free(s->shown[n].label);
    free(s->shown);
    free(s->arena);
    cc_plan_finish(&s->plan);
    free(s);
}
/* XNNPACK started, and every node an op this backend has; false with err. */
static bool check_ops(const struct cc_model *m, struct cc_error *err)
{
    enum xnn_status rc = xnn_initialize(NULL);
    if (rc != xnn_status_success)
        return cc_error_set(err,
                            "cpu backend: xnn_initialize failed: %s (XNNPACK needs SSE2 on x86, "
                            "NEON on ARM); --backend ref runs the plain C ops instead",
                            cc_xnn_status_name(rc));
    for (int n = 0; n < m->n_nodes; n++)
        if (!cc_xnn_op_row(m->nodes[n].op))
            return cc_error_set(err,
                                "cpu backend: op %s (node \"%s\") is not implemented; "
                                "--backend ref or vulkan may run it",
                                cc_op_name(m->nodes[n].op), m->nodes[n].name);
    return true;
}

/* The CAMCLASS_CPU_* switches read into s; false with err naming a bad value. */
static bool read_modes(struct xnn_state *s, struct cc_error *err)
{
    enum cc_pool_mode pool_mode;
    enum cc_cpu_isa_cap cap;
    if (!cc_cpu_isa_cap_parse(getenv("CAMCLASS_CPU_ISA"), &cap, err) ||
        !cc_stem_mode_parse(getenv("CAMCLASS_CPU_STEM"), &s->stem_mode, err) ||
        !cc_fused_mode_parse(getenv("CAMCLASS_CPU_FUSED"), &s->fused_mode, err) ||
        !cc_pool_mode_parse(getenv("CAMCLASS_CPU_POOL"), &pool_mode, err) ||
        !cc_f32_pw_mode_parse(getenv("CAMCLASS_CPU_PW"), &s->pw_mode, err) ||
        !cc_conv3x3_mode_parse(getenv("CAMCLASS_CPU_CONV3X3"), &s->direct_mode, err) ||
        !cc_q8_gemm_mode_parse(getenv("CAMCLASS_CPU_Q8GEMM"), &s->q8_mode, err) ||
        !cc_q8_stem_mode_parse(getenv("CAMCLASS_CPU_Q8STEM"), &s->q8stem_mode, err) ||
        !cc_q8_dw_mode_parse(getenv("CAMCLASS_CPU_Q8DW"), &s->q8dw_mode, err))
        return false;
    cc_pool_choice_init(&s->pool_choice, pool_mode);
    return true;
}

/* The plan, the arena, the tables and the pool of threads threads; false with err. */
static bool alloc_state(struct xnn_state *s, int threads, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    if (!cc_xnn_resfuse_plan(s, err))
        return false;
    size_t n_tensors = (size_t)(m->n_tensors > 0 ? m->n_tensors : 1);
    size_t n_nodes = (size_t)(m->n_nodes > 0 ? m->n_nodes : 1);
    size_t arena = cc_xnn_padded(s->plan.arena_size);
    if (posix_memalign(&s->arena, ARENA_ALIGN, arena) != 0)
        s->arena = NULL;
    s->places = calloc(n_tensors, sizeof(*s->places));
    s->steps = calloc(n_nodes, sizeof(*s->steps));
    s->timings = calloc(n_nodes, sizeof(*s->timings));
    if (!s->arena || !s->places || !s->steps || !s->timings)
        return cc_error_set(err, "cpu backend: out of memory for a %zu-byte activation arena",
                            arena);
    memset(s->arena, 0, arena);
    if (threads > 1 && !(s->pool = pthreadpool_create((size_t)threads)))
        return cc_error_set(err, "cpu backend: pthreadpool_create(%d) failed; try --threads 1",
                            threads);
    return true;
}

/* s->device_name: the CPU and what runs on it (how many layers each own kernel took). */
static void describe(struct xnn_state *s)
{
    char extra[224] = ", XNNPACK";
    size_t cap = sizeof(extra);
#define APPEND(...) snprintf(extra + strlen(extra), cap - strlen(extra), __VA_ARGS__)
    if (s->n_blis)
        snprintf(extra, cap, ", XNNPACK + BLIS for %d of %d convs", s->n_blis, s->n_gemm);
    if (s->n_pw)
        APPEND(", own 1x1 for %d (%s)", s->n_pw, cc_stem_isa_name(s->pw_mode.isa));
    if (s->n_direct)
        APPEND(", %d direct convs (%d Winograd, %d F(4x4), %d with the residual, %s)", s->n_direct,
               s->n_wino, s->n_wino4, s->n_residual, cc_stem_isa_name(cc_stem_isa_best()));
    if (s->n_stem)
        APPEND(", direct stem (%s)", cc_stem_isa_name(s->stem_mode.isa));
    if (s->n_fused)
        APPEND(", %d fused blocks (%s)", s->n_fused,
               s->n_int8 ? cc_fq8_isa_name(cc_fq8_isa_best())
                         : cc_stem_isa_name(cc_stem_isa_best()));
    if (s->n_q8)
        APPEND(", %d int8 1x1 GEMMs (%s)", s->n_q8, cc_fq8_isa_name(cc_q8_gemm_isa_best()));
    if (s->n_q8stem)
        APPEND(", int8 stem (%s)", cc_fq8_isa_name(s->q8stem_mode.isa));
    if (s->n_q8dw)
        APPEND(", %d int8 depthwise (%s)", s->n_q8dw, cc_fq8_isa_name(s->q8dw_mode.isa));
    if (s->n_int8)
        APPEND(", int8");
#undef APPEND
    cc_cpu_describe(s->device_name, sizeof(s->device_name),
                    s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1, extra);
}

static void *xnn_create(const struct cc_model *m, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    if (!check_ops(m, err))
        return NULL;
    struct xnn_state *s = calloc(1, sizeof(*s));
    if (!s) {
        cc_error_set(err, "cpu backend: out of memory");
        return NULL;
    }
    s->model = m;
    s->poison = opts && opts->poison;
    int threads = cc_cpu_threads(opts ? opts->cpu_threads : 0);
    if (!read_modes(s, err))
        goto error;
    s->tap = cc_backend_tap(m, opts);
    if (!alloc_state(s, threads, err) || !cc_xnn_state_place(s, err))
        goto error;
    if (s->tap >= 0 && !cc_xnn_state_values(s, s->tap, STORE_F32) &&
        !(s->tap_f32 = malloc((size_t)m->tensors[s->tap].count * sizeof(float)))) {
        cc_error_set(err, "cpu backend: out of memory for tap \"%s\"", m->tensors[s->tap].name);
        goto error;
    }
    if (!cc_xnn_steps_build(s, opts, threads, err))
        goto error;
    cc_xnn_resfuse(s); // after the layer-choice cache's line: it has no letter
    bool only_stems;
    // Stems read the caller's input as it is (an int8 one quantizes it itself).
    s->input_direct = cc_xnn_steps_input_reads(s, &only_stems) > 0 && only_stems &&
                      m->input.tensor != m->output.tensor;
    // A batch state runs XNNPACK's operators alone on as many threads, writes no cache.
    s->batch_opts = (struct cc_engine_options){.backend = CC_BACKEND_CPU,
                                               .cpu_threads = threads,
                                               .cpu_pointwise = CC_CPU_POINTWISE_XNNPACK,
                                               .cpu_cache = "",
                                               .poison = s->poison};
    describe(s);
    return s;

error:
    xnn_destroy(s);
    return NULL;
}

static bool run_operator(xnn_operator_t op, const struct xnn_state *s, const char *what,
                         const struct cc_node *node, struct cc_error *err)
{
    enum xnn_status rc = xnn_run_operator(op, s->run_pool);
    return rc == xnn_status_success || cc_xnn_failed(what, node, rc, err);
}

static bool run_node(struct xnn_state *s, int n, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    const struct step *st = &s->steps[n];
    int x = node->inputs[0], y = node->outputs[0];
    enum store type = s->places[y].type;
    size_t esize = cc_xnn_elem_size(type);
    const void *in = cc_xnn_state_values(s, x, type);
    void *out = s->places[y].data;
    switch (st->kind) {
    case STEP_XNN:
        if (!cc_xnn_work_run(&st->work, s->run_pool, node, err))
            return false;
        break;
    case STEP_BLIS:
        cc_blis_conv_run(st->gemm, s->run_pool);
        break;
    case STEP_DIRECT:
        cc_conv3x3_run(st->direct, s->run_pool);
        break;
    case STEP_STEM:
        cc_stem_conv_run(st->stem, s->input, s->run_pool);
        break;
    case STEP_FUSED:
        cc_xnn_fused_step_run(st->fused, s->run_pool);
        break;
    case STEP_PW:
        cc_f32_pw_run(st->pw, s->run_pool);
        break;
    case STEP_Q8GEMM:
        cc_q8_gemm_run(st->q8, in, out, s->run_pool);
        break;
    case STEP_Q8STEM:
        cc_q8_stem_run(st->q8stem, s->input, out, s->run_pool);
        break;
    case STEP_Q8DW:
        cc_q8_dw_run(st->q8dw, in, out, s->run_pool);
        break;
    case STEP_SKIP:
    case STEP_ALIAS:
        break;
    case STEP_RELAYOUT: // NHWC (x) -> NCHW order -> NHWC (y), skipping what is not permuted
        if (!cc_xnn_state_permuted(&m->tensors[x])) {
            cc_xnn_state_move(&m->tensors[y], in, out, true, esize);
        } else if (!cc_xnn_state_permuted(&m->tensors[y])) {
            cc_xnn_state_move(&m->tensors[x], in, out, false, esize);
        } else {
            cc_xnn_state_move(&m->tensors[x], in, s->nchw_tmp, false, esize);
            cc_xnn_state_move(&m->tensors[y], s->nchw_tmp, out, true, esize);
        }
        break;
    }
    return !s->places[y].convert ||
           run_operator(s->places[y].convert, s, "xnn_run_operator (convert)", node, err);
}

/* run_steps on s->run_pool. */
static bool run_steps_on(struct xnn_state *s, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    struct place *in = &s->places[m->input.tensor];
    if (in->convert && !s->input_direct) {
        enum xnn_status rc = xnn_run_operator(in->convert, s->run_pool);
        if (rc != xnn_status_success)
            return cc_error_set(err, "cpu backend: quantizing the input failed: %s",
                                cc_xnn_status_name(rc));
    }
    s->n_timings = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        double t0 = cc_now_ms();
        if (!run_node(s, n, err))
            return false;
        s->timings[s->n_timings++] = cc_xnn_resfuse_timing(s, n, cc_now_ms() - t0);
    }
    return true;
}

/* Runs s's steps on the input already stored (or, input_direct, at s->input): quantizing it
 * first where a reader wants it int8 (not input_direct: the stems read s->input), timing every
 * node; on the pool or on the calling thread alone, as s->pool_choice says (pool_choice.h). */
static bool run_steps(struct xnn_state *s, struct cc_error *err)
{
    s->run_pool = s->pool && cc_pool_choice_begin(&s->pool_choice) ? s->pool : NULL;
    bool ok = run_steps_on(s, err);
    if (s->pool)
        cc_pool_choice_end(&s->pool_choice);
    return ok;
}

static bool xnn_run(void *p, const float *input, float *output, struct cc_error *err)
{
    struct xnn_state *s = p;
    const struct cc_model *m = s->model;
    cc_xnn_state_poison(s);
    s->input = input;
    if (!s->input_direct)
        cc_xnn_state_move(&m->tensors[m->input.tensor], input, s->places[m->input.tensor].data,
                          true, sizeof(float));
    if (!run_steps(s, err))
        return false;
    cc_xnn_state_move(&m->tensors[m->output.tensor],
                      cc_xnn_state_values(s, m->output.tensor, STORE_F32), output, false,
                      sizeof(float));
    return true;
}

/* The batch state for n images: made at its first use (the model copied with n images per
 * activation, a state built on it); NULL with err when that fails. */
static struct xnn_state *batch_state(struct xnn_state *s, int n, struct cc_error *err)
{
    if (!s->batches && !(s->batches = calloc(CC_ENGINE_BATCH_MAX + 1, sizeof(*s->batches)))) {
        cc_error_set(err, "cpu backend: out of memory for a batch of %d", n);
        return NULL;
    }
    struct xnn_batch_slot *slot = &s->batches[n];
    if (slot->s || !cc_xnn_batch_model(s->model, n, &slot->model, err))
        return slot->s;
    if (!(slot->s = xnn_create(&slot->model, &s->batch_opts, err)))
        cc_xnn_batch_model_finish(&slot->model);
    return slot->s;
}

static bool xnn_can_batch(void *p)
{
    struct cc_error why = {0};
    return cc_xnn_batch_possible(((struct xnn_state *)p)->model, &why);
}

/* n images as one batch: each input moved into its slice of the batch state's input (the
 * per-image layout is the model's, as in xnn_run), the steps run once, each image's output
 * moved out of its slice. */
static bool xnn_run_batch(void *p, int n, const float *const *inputs, float *const *outputs,
                          struct cc_error *err)
{
    struct xnn_state *s = p;
    const struct cc_model *m = s->model;
    struct xnn_state *b = batch_state(s, n, err);
    if (!b)
        return false;
    const struct cc_tensor *in_t = &m->tensors[m->input.tensor];
    const struct cc_tensor *out_t = &m->tensors[m->output.tensor];
    float *in = b->places[m->input.tensor].data;
    const float *out = cc_xnn_state_values(b, m->output.tensor, STORE_F32);
    cc_xnn_state_poison(b);
    for (int i = 0; i < n; i++)
        cc_xnn_state_move(in_t, inputs[i], in + (size_t)i * (size_t)in_t->count, true,
                          sizeof(float));
    if (!run_steps(b, err))
        return false;
    for (int i = 0; i < n; i++)
        cc_xnn_state_move(out_t, out + (size_t)i * (size_t)out_t->count, outputs[i], false,
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
    const float *f32 = cc_xnn_state_values(s, s->tap, STORE_F32);
    if (!f32) {
        const int8_t *q = pl->data;
        for (int64_t i = 0; i < t->count; i++)
            s->tap_f32[i] = t->act_quant.scale * (float)(q[i] - t->act_quant.zero_point);
        f32 = s->tap_f32;
    }
    cc_xnn_state_move(t, f32, out, false, sizeof(float));
}

static const char *xnn_device_name(void *p)
{
    return ((struct xnn_state *)p)->device_name;
}

const struct cc_backend_ops cc_xnn_backend = {
    .name = "cpu",
    .create = xnn_create,
    .run = xnn_run,
    .can_batch = xnn_can_batch,
    .run_batch = xnn_run_batch,
    .layer_timings = xnn_layer_timings,
    .device_name = xnn_device_name,
    .tap_read = xnn_tap_read,
    .destroy = xnn_destroy,
};
