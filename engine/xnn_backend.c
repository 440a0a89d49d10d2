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
 *   - Every node becomes one step. Computing nodes get an XNNPACK operator, created at load
 *     (weights packed then, in XNNPACK's own layout; our copies are freed straight after) and
 *     set up at load on fixed arena addresses, since shapes never change. A run is then only
 *     xnn_run_operator per step: nothing is allocated per frame.
 *   - Layout: 4-D activations [1,C,H,W] are kept NHWC, XNNPACK's layout; the input is
 *     transposed in at the start of a run and a 4-D output out at the end. A reshape/flatten
 *     whose input and output orders agree (C == 1 or H*W == 1, e.g. after global pooling) is
 *     free (cc_plan aliases it); otherwise it is a relayout through NCHW order into a buffer
 *     of its own.
 *   - Activations fuse into conv2d/linear/add as XNNPACK's output_min/output_max.
 *   - i8 weights are dequantized at load (float(q) * scale) and packed as f32.
 *
 * Threads: one pthreadpool per backend with cpu_threads threads (the calling thread is one of
 * them; none is made for one thread). pthreadpool's workers spin between the operators of a
 * run, which is what makes them fast, and the last operator carries XNN_FLAG_YIELD_WORKERS so
 * that they go to sleep at the end of every run: between frames they leave the cores to the
 * capture and preprocessing threads (see docs/PERFORMANCE.md for the measurements).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "backend.h"
#include "cpu_info.h"
#include "plan.h"

enum { ARENA_ALIGN = 64 }; // bytes; XNNPACK reads past nothing, but SIMD likes lines

enum step_kind {
    STEP_XNN,      // run op
    STEP_ALIAS,    // nothing to do: the output is the input's memory (or a copy when not)
    STEP_RELAYOUT, // reshape/flatten between NHWC and NCHW orders
};

struct step {
    enum step_kind kind;
    xnn_operator_t op; // STEP_XNN: owned, created and set up at load; NULL otherwise
};

struct xnn_state {
    const struct cc_model *model; // not owned
    struct cc_plan plan;
    void *arena;        // plan.arena_size bytes, ARENA_ALIGN-aligned, owned
    float **data;       // (n_tensors) where each tensor's values are, in this backend's layout
    float **owned;      // (n_tensors) buffers this backend made for a tensor (relayout outputs,
                        // NHWC copies of 4-D constants read as activations); owned, NULL if none
    float *nchw_tmp;    // (largest relayout) staging in NCHW order; owned; NULL if no relayout
    struct step *steps; // (n_nodes)
    pthreadpool_t pool; // NULL when running on one thread; owned
    struct cc_layer_timing *timings; // (n_nodes), of the last run
    int n_timings;
    char device_name[160];
};

/* ------------------------------------------------------------------------------------------
 * Errors and layout helpers
 */

static const char *status_name(enum xnn_status st)
{
    switch (st) {
    case xnn_status_success:
        return "xnn_status_success";
    case xnn_status_uninitialized:
        return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter:
        return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state:
        return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter:
        return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware:
        return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory:
        return "xnn_status_out_of_memory";
    }
    return "an unknown xnn_status";
}

/* Fails with one line naming the call, the node and XNNPACK's status. */
static bool xnn_failed(const char *call, const struct cc_node *n, enum xnn_status st,
                       struct cc_error *err)
{
    return cc_error_set(err,
                        "cpu backend: %s for node \"%s\" (%s) failed: %s; "
                        "--backend ref runs the plain C ops instead",
                        call, n->name, cc_op_name(n->op), status_name(st));
}

/* True when t is stored NHWC here and that order differs from its NCHW order. */
static bool permuted(const struct cc_tensor *t)
{
    return t->ndim == 4 && t->shape[1] > 1 && t->shape[2] * t->shape[3] > 1;
}

/* [N,C,HW] -> [N,HW,C] (to_nhwc) or back, for a permuted tensor t. */
static void relayout(const struct cc_tensor *t, const float *src, float *dst, bool to_nhwc)
{
    int64_t c = t->shape[1], hw = t->shape[2] * t->shape[3], n = t->shape[0];
    for (int64_t b = 0; b < n; b++, src += c * hw, dst += c * hw)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < hw; p++) {
                if (to_nhwc)
                    dst[p * c + ch] = src[ch * hw + p];
                else
                    dst[ch * hw + p] = src[p * c + ch];
            }
}

/* A tensor's values into dst in this backend's layout, from NCHW-order src. */
static void store_in(const struct cc_tensor *t, const float *src, float *dst)
{
    if (permuted(t))
        relayout(t, src, dst, true);
    else if (dst != src)
        memcpy(dst, src, (size_t)t->count * sizeof(float));
}

/* A tensor's values from this backend's layout src into NCHW-order dst. */
static void load_out(const struct cc_tensor *t, const float *src, float *dst)
{
    if (permuted(t))
        relayout(t, src, dst, false);
    else if (dst != src)
        memcpy(dst, src, (size_t)t->count * sizeof(float));
}

/* A constant's f32 values: its data, or (i8) a dequantized copy in *tmp that the caller frees.
 * NULL on out of memory. */
static const float *constant_f32(const struct cc_tensor *t, float **tmp)
{
    *tmp = NULL;
    if (t->data)
        return t->data;
    if (!(*tmp = malloc((size_t)t->count * sizeof(float))))
        return NULL;
    cc_tensor_dequantize(t, *tmp);
    return *tmp;
}

/* ------------------------------------------------------------------------------------------
 * One row per op: how a node becomes an XNNPACK operator (created and set up) or a layout step
 */

struct build {
    struct xnn_state *s;
    const struct cc_node *node;
    uint32_t flags; // XNN_FLAG_YIELD_WORKERS on the last operator of the model
    struct cc_error *err;
};

#define IN(b, i) ((b)->s->data[(b)->node->inputs[i]])
#define OUT(b) ((b)->s->data[(b)->node->outputs[0]])
#define TENSOR(b, t) (&(b)->s->model->tensors[t])

static const float *bias_of(const struct build *b)
{
    return b->node->n_inputs > 2 ? TENSOR(b, b->node->inputs[2])->data : NULL;
}

static bool build_conv2d(struct build *b, struct step *st)
{
    const struct cc_node *n = b->node;
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    const struct cc_tensor *x = TENSOR(b, n->inputs[0]), *w = TENSOR(b, n->inputs[1]);
    int64_t o = w->shape[0], cig = w->shape[1], kh = w->shape[2], kw = w->shape[3];
    int64_t g = a->groups;
    float *deq = NULL, *ohwi = NULL;
    const float *oihw = constant_f32(w, &deq);
    // XNNPACK wants [groups, O/groups, kh, kw, C/groups]: ours is [O, C/groups, kh, kw].
    if (oihw && cig > 1 && (ohwi = malloc((size_t)w->count * sizeof(float)))) {
        for (int64_t oc = 0; oc < o; oc++)
            for (int64_t ci = 0; ci < cig; ci++)
                for (int64_t k = 0; k < kh * kw; k++)
                    ohwi[(oc * kh * kw + k) * cig + ci] = oihw[(oc * cig + ci) * kh * kw + k];
    }
    const float *kernel = cig > 1 ? ohwi : oihw;
    if (!kernel) {
        free(deq);
        return cc_error_set(b->err, "cpu backend: out of memory for the weights of node \"%s\"",
                            n->name);
    }
    enum xnn_status rc = xnn_create_convolution2d_nhwc_f32(
        (uint32_t)a->pad[0], (uint32_t)a->pad[3], (uint32_t)a->pad[2], (uint32_t)a->pad[1],
        (uint32_t)kh, (uint32_t)kw, (uint32_t)a->stride[0], (uint32_t)a->stride[1],
        (uint32_t)a->dilation[0], (uint32_t)a->dilation[1], (uint32_t)g, (size_t)cig,
        (size_t)(o / g), (size_t)x->shape[1], (size_t)o, kernel, bias_of(b), n->act.min, n->act.max,
        b->flags, &st->op);
    free(ohwi);
    free(deq);
    if (rc != xnn_status_success)
        return xnn_failed("xnn_create_convolution2d_nhwc_f32", n, rc, b->err);
    rc = xnn_setup_convolution2d_nhwc_f32(st->op, 1, (size_t)x->shape[2], (size_t)x->shape[3],
                                          IN(b, 0), OUT(b), b->s->pool);
    return rc == xnn_status_success ||
           xnn_failed("xnn_setup_convolution2d_nhwc_f32", n, rc, b->err);
}

static bool build_linear(struct build *b, struct step *st)
{
    const struct cc_node *n = b->node;
    const struct cc_tensor *w = TENSOR(b, n->inputs[1]);
    size_t out_ch = (size_t)w->shape[0], in_ch = (size_t)w->shape[1];
    float *deq = NULL;
    const float *kernel = constant_f32(w, &deq); // [N, K]: XNNPACK's own order
    if (!kernel)
        return cc_error_set(b->err, "cpu backend: out of memory for the weights of node \"%s\"",
                            n->name);
    enum xnn_status rc =
        xnn_create_fully_connected_nc_f32(in_ch, out_ch, in_ch, out_ch, kernel, bias_of(b),
                                          n->act.min, n->act.max, b->flags, &st->op);
    free(deq);
    if (rc != xnn_status_success)
        return xnn_failed("xnn_create_fully_connected_nc_f32", n, rc, b->err);
    rc = xnn_setup_fully_connected_nc_f32(st->op, 1, IN(b, 0), OUT(b), b->s->pool);
    return rc == xnn_status_success ||
           xnn_failed("xnn_setup_fully_connected_nc_f32", n, rc, b->err);
}

static bool build_add(struct build *b, struct step *st)
{
    const struct cc_node *n = b->node;
    // Same shapes (ops.c), same layout: element order does not matter.
    size_t shape[1] = {(size_t)TENSOR(b, n->outputs[0])->count};
    enum xnn_status rc = xnn_create_add_nd_f32(n->act.min, n->act.max, b->flags, &st->op);
    if (rc != xnn_status_success)
        return xnn_failed("xnn_create_add_nd_f32", n, rc, b->err);
    rc = xnn_setup_add_nd_f32(st->op, 1, shape, 1, shape, IN(b, 0), IN(b, 1), OUT(b), b->s->pool);
    return rc == xnn_status_success || xnn_failed("xnn_setup_add_nd_f32", n, rc, b->err);
}

static bool build_global_avg_pool(struct build *b, struct step *st)
{
    const struct cc_node *n = b->node;
    const struct cc_tensor *x = TENSOR(b, n->inputs[0]);
    size_t c = (size_t)x->shape[1];
    enum xnn_status rc =
        xnn_create_global_average_pooling_nwc_f32(c, c, c, -INFINITY, INFINITY, b->flags, &st->op);
    if (rc != xnn_status_success)
        return xnn_failed("xnn_create_global_average_pooling_nwc_f32", n, rc, b->err);
    rc = xnn_setup_global_average_pooling_nwc_f32(st->op, 1, (size_t)(x->shape[2] * x->shape[3]),
                                                  IN(b, 0), OUT(b), b->s->pool);
    return rc == xnn_status_success ||
           xnn_failed("xnn_setup_global_average_pooling_nwc_f32", n, rc, b->err);
}

static bool build_softmax(struct build *b, struct step *st)
{
    const struct cc_node *n = b->node;
    size_t c = (size_t)TENSOR(b, n->inputs[0])->shape[1]; // [1, N] (ops.c)
    enum xnn_status rc = xnn_create_softmax_nc_f32(c, c, c, b->flags, &st->op);
    if (rc != xnn_status_success)
        return xnn_failed("xnn_create_softmax_nc_f32", n, rc, b->err);
    rc = xnn_setup_softmax_nc_f32(st->op, 1, IN(b, 0), OUT(b), b->s->pool);
    return rc == xnn_status_success || xnn_failed("xnn_setup_softmax_nc_f32", n, rc, b->err);
}

static bool build_clamp(struct build *b, struct step *st)
{
    const struct cc_node *n = b->node;
    size_t count = (size_t)TENSOR(b, n->outputs[0])->count; // elementwise: any order
    enum xnn_status rc =
        xnn_create_clamp_nc_f32(count, count, count, n->act.min, n->act.max, b->flags, &st->op);
    if (rc != xnn_status_success)
        return xnn_failed("xnn_create_clamp_nc_f32", n, rc, b->err);
    rc = xnn_setup_clamp_nc_f32(st->op, 1, IN(b, 0), OUT(b), b->s->pool);
    return rc == xnn_status_success || xnn_failed("xnn_setup_clamp_nc_f32", n, rc, b->err);
}

/* Reshape and flatten: free when both sides keep NCHW element order here, a relayout into a
 * buffer of the output's own otherwise (made by create before the steps are built). */
static bool build_reshape(struct build *b, struct step *st)
{
    const struct cc_model *m = b->s->model;
    bool moves =
        permuted(&m->tensors[b->node->inputs[0]]) || permuted(&m->tensors[b->node->outputs[0]]);
    st->kind = moves ? STEP_RELAYOUT : STEP_ALIAS;
    return true;
}

#undef IN
#undef OUT
#undef TENSOR

struct op_row {
    bool (*build)(struct build *b, struct step *st);
    bool makes_operator; // an XNNPACK operator (false: a layout step done here)
};

static const struct op_row op_rows[CC_OP_COUNT] = {
    [CC_OP_CONV2D] = {build_conv2d, true},
    [CC_OP_ADD] = {build_add, true},
    [CC_OP_GLOBAL_AVG_POOL] = {build_global_avg_pool, true},
    [CC_OP_LINEAR] = {build_linear, true},
    [CC_OP_FLATTEN] = {build_reshape, false},
    [CC_OP_RESHAPE] = {build_reshape, false},
    [CC_OP_SOFTMAX] = {build_softmax, true},
    [CC_OP_CLAMP] = {build_clamp, true},
};

/* ------------------------------------------------------------------------------------------
 * Backend
 */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void xnn_destroy(void *p)
{
    struct xnn_state *s = p;
    if (!s)
        return;
    for (int n = 0; s->steps && n < s->model->n_nodes; n++)
        if (s->steps[n].op)
            xnn_delete_operator(s->steps[n].op);
    if (s->pool)
        pthreadpool_destroy(s->pool);
    for (int t = 0; s->owned && t < s->model->n_tensors; t++)
        free(s->owned[t]);
    free(s->owned);
    free(s->nchw_tmp);
    free(s->steps);
    free(s->timings);
    free(s->data);
    free(s->arena);
    cc_plan_finish(&s->plan);
    free(s);
}

/* Gives tensor t a buffer of its own (relayout outputs; NHWC copies of constants). */
static float *own_buffer(struct xnn_state *s, int t)
{
    if (!s->owned[t])
        s->owned[t] = malloc((size_t)s->model->tensors[t].count * sizeof(float));
    return s->owned[t];
}

/* Where every tensor lives: constants in place (4-D ones that an op reads as an activation in
 * an NHWC copy), activations in the arena, relayout outputs in buffers of their own. */
static bool place_tensors(struct xnn_state *s, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    size_t tmp_count = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct cc_tensor *ten = &m->tensors[t];
        if (!ten->data && !ten->q)
            s->data[t] = (float *)((char *)s->arena + s->plan.offset[t]);
    }
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        bool weighted = node->op == CC_OP_CONV2D || node->op == CC_OP_LINEAR;
        for (int i = 0; i < node->n_inputs; i++) {
            int t = node->inputs[i];
            const struct cc_tensor *ten = &m->tensors[t];
            if (!ten->data || s->data[t])
                continue;
            if (weighted && i > 0) { // weights and bias: read by build_*, packed by XNNPACK
                s->data[t] = ten->data;
                continue;
            }
            if (!permuted(ten)) {
                s->data[t] = ten->data;
            } else if (own_buffer(s, t)) {
                s->data[t] = s->owned[t];
                store_in(ten, ten->data, s->data[t]);
            } else {
                return cc_error_set(err, "cpu backend: out of memory for constant \"%s\"",
                                    ten->name);
            }
        }
        if ((node->op == CC_OP_RESHAPE || node->op == CC_OP_FLATTEN) &&
            (permuted(&m->tensors[node->inputs[0]]) || permuted(&m->tensors[node->outputs[0]]))) {
            int t = node->outputs[0];
            if (!own_buffer(s, t))
                return cc_error_set(err, "cpu backend: out of memory for reshape \"%s\"",
                                    node->name);
            s->data[t] = s->owned[t];
            if ((size_t)m->tensors[t].count > tmp_count)
                tmp_count = (size_t)m->tensors[t].count;
        }
    }
    if (tmp_count && !(s->nchw_tmp = malloc(tmp_count * sizeof(float))))
        return cc_error_set(err, "cpu backend: out of memory for %zu floats of relayout staging",
                            tmp_count);
    return true;
}

static void *xnn_create(const struct cc_model *m, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    enum xnn_status rc = xnn_initialize(NULL);
    if (rc != xnn_status_success) {
        cc_error_set(err,
                     "cpu backend: xnn_initialize failed: %s (XNNPACK needs SSE2 on x86, NEON "
                     "on ARM); --backend ref runs the plain C ops instead",
                     status_name(rc));
        return NULL;
    }
    for (int n = 0; n < m->n_nodes; n++)
        if ((unsigned)m->nodes[n].op >= CC_OP_COUNT || !op_rows[m->nodes[n].op].build) {
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
    if (!cc_plan_init(&s->plan, m, ARENA_ALIGN, err))
        goto error;
    size_t n_tensors = (size_t)(m->n_tensors > 0 ? m->n_tensors : 1);
    size_t n_nodes = (size_t)(m->n_nodes > 0 ? m->n_nodes : 1);
    size_t arena = s->plan.arena_size ? s->plan.arena_size : ARENA_ALIGN;
    if (posix_memalign(&s->arena, ARENA_ALIGN, arena) != 0)
        s->arena = NULL;
    s->data = calloc(n_tensors, sizeof(*s->data));
    s->owned = calloc(n_tensors, sizeof(*s->owned));
    s->steps = calloc(n_nodes, sizeof(*s->steps));
    s->timings = calloc(n_nodes, sizeof(*s->timings));
    if (!s->arena || !s->data || !s->owned || !s->steps || !s->timings) {
        cc_error_set(err, "cpu backend: out of memory for a %zu-byte activation arena", arena);
        goto error;
    }
    memset(s->arena, 0, arena);
    if (!place_tensors(s, err))
        goto error;

    int threads = cc_cpu_threads(opts ? opts->cpu_threads : 0);
    if (threads > 1 && !(s->pool = pthreadpool_create((size_t)threads))) {
        cc_error_set(err, "cpu backend: pthreadpool_create(%d) failed; try --threads 1", threads);
        goto error;
    }
    int last_op = -1;
    for (int n = 0; n < m->n_nodes; n++)
        if (op_rows[m->nodes[n].op].makes_operator)
            last_op = n;
    for (int n = 0; n < m->n_nodes; n++) {
        struct build b = {s, &m->nodes[n], n == last_op ? XNN_FLAG_YIELD_WORKERS : 0, err};
        s->steps[n].kind = STEP_XNN;
        if (!op_rows[m->nodes[n].op].build(&b, &s->steps[n]))
            goto error;
    }
    cc_cpu_describe(s->device_name, sizeof(s->device_name),
                    s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1, ", XNNPACK");
    return s;

error:
    xnn_destroy(s);
    return NULL;
}

static bool run_step(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                     struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *y = &m->tensors[node->outputs[0]];
    const float *in = s->data[node->inputs[0]];
    float *out = s->data[node->outputs[0]];
    switch (st->kind) {
    case STEP_XNN: {
        enum xnn_status rc = xnn_run_operator(st->op, s->pool);
        return rc == xnn_status_success || xnn_failed("xnn_run_operator", node, rc, err);
    }
    case STEP_ALIAS:
        if (out != in)
            memcpy(out, in, (size_t)y->count * sizeof(float));
        return true;
    case STEP_RELAYOUT: // NHWC (x) -> NCHW order -> NHWC (y), skipping what is not permuted
        if (!permuted(x)) {
            store_in(y, in, out);
        } else if (!permuted(y)) {
            load_out(x, in, out);
        } else {
            load_out(x, in, s->nchw_tmp);
            store_in(y, s->nchw_tmp, out);
        }
        return true;
    }
    return cc_error_set(err, "cpu backend: node \"%s\" has no step", node->name);
}

static bool xnn_run(void *p, const float *input, float *output, struct cc_error *err)
{
    struct xnn_state *s = p;
    const struct cc_model *m = s->model;
    store_in(&m->tensors[m->input.tensor], input, s->data[m->input.tensor]);
    s->n_timings = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        double t0 = now_ms();
        if (!run_step(s, &m->nodes[n], &s->steps[n], err))
            return false;
        s->timings[s->n_timings++] = (struct cc_layer_timing){n, now_ms() - t0};
    }
    load_out(&m->tensors[m->output.tensor], s->data[m->output.tensor], output);
    return true;
}

static int xnn_layer_timings(void *p, const struct cc_layer_timing **out)
{
    struct xnn_state *s = p;
    *out = s->timings;
    return s->n_timings;
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
    .destroy = xnn_destroy,
};
