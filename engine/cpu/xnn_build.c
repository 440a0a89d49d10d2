/* camclass — the CPU backend's op table: one build function per op (see xnn_build.h).
 *
 * Weights: ours are [O, C/groups, kh, kw] (PyTorch's order); XNNPACK wants
 * [groups, O/groups, kh, kw, C/groups], so they are transposed into a temporary copy that
 * XNNPACK packs at create and we free straight after. i8 weights go to the f32 operators
 * dequantized (float(q) * scale, as the other backends do) and to the int8 ones as they are,
 * with their per-output-channel scales (QC8). Biases of int8 operators are int32 at scale
 * input_scale * weight_scale[o], rounded to nearest as PyTorch's quantized ops do.
 *
 * linear runs as a 1x1 convolution of a 1x1 image, in f32 and in int8 (build_linear says
 * why: a wrong f32 fully-connected operator in this XNNPACK, one weight scale in its int8 one).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_build.h"
#include "xnn_build_zoo.h"

#define TENSOR(b, i) (&(b)->model->tensors[(b)->node->inputs[i]])
#define OUTPUT(b) (&(b)->model->tensors[(b)->node->outputs[0]])

/* ------------------------------------------------------------------------------------------
 * Quantization helpers
 */

int8_t cc_xnn_quantize_bound(float v, struct cc_act_quant q)
{
    float r = nearbyintf(v / q.scale) + (float)q.zero_point;
    return r <= -128.0f ? INT8_MIN : r >= 127.0f ? INT8_MAX : (int8_t)r;
}

/* The fused activation of node n as int8 bounds of its output's quantization. */
static void act_bounds(const struct cc_xnn_build *b, int8_t *lo, int8_t *hi)
{
    struct cc_act_quant q = OUTPUT(b)->act_quant;
    *lo = cc_xnn_quantize_bound(b->node->act.min, q);
    *hi = cc_xnn_quantize_bound(b->node->act.max, q);
}

static bool same_quant(const struct cc_tensor *a, const struct cc_tensor *b)
{
    return a->quantized && b->quantized && a->act_quant.scale == b->act_quant.scale &&
           a->act_quant.zero_point == b->act_quant.zero_point;
}

bool cc_xnn_runs_int8(const struct cc_model *m, const struct cc_node *n, bool in_int8)
{
    const struct cc_xnn_op_row *row = cc_xnn_op_row(n->op);
    const struct cc_tensor *x = &m->tensors[n->inputs[0]], *y = &m->tensors[n->outputs[0]];
    // An activation of a kind other than clamp has no int8 form here: the node runs in f32.
    if (!row || !row->has_int8 || !y->quantized || n->act.kind != CC_ACT_CLAMP)
        return false;
    switch (n->op) {
    case CC_OP_CONV2D:
    case CC_OP_LINEAR:
        return x->quantized && m->tensors[n->inputs[1]].dtype == CC_DTYPE_I8;
    case CC_OP_ADD:
        return x->quantized && m->tensors[n->inputs[1]].quantized;
    case CC_OP_GLOBAL_AVG_POOL:
        return x->quantized;
    case CC_OP_CLAMP:
        return same_quant(x, y);
    case CC_OP_FLATTEN:
    case CC_OP_RESHAPE:
        return in_int8 && same_quant(x, y);
    default:
        return false;
    }
}

/* ------------------------------------------------------------------------------------------
 * Weights
 */

/* [O, cig, khw] -> [O, khw, cig] of esize-byte elements, into a new buffer (NULL: no memory). */
static void *to_ohwi(const void *src, size_t esize, int64_t o, int64_t cig, int64_t khw)
{
    char *dst = malloc((size_t)(o * cig * khw) * esize);
    if (!dst)
        return NULL;
    const char *s = src;
    for (int64_t oc = 0; oc < o; oc++)
        for (int64_t ci = 0; ci < cig; ci++)
            for (int64_t k = 0; k < khw; k++)
                memcpy(dst + (size_t)((oc * khw + k) * cig + ci) * esize,
                       s + (size_t)((oc * cig + ci) * khw + k) * esize, esize);
    return dst;
}

/* The f32 kernel of node b in XNNPACK's order; *tmp gets what the caller must free. */
static const float *kernel_f32(const struct cc_xnn_build *b, void **tmp)
{
    const struct cc_tensor *w = TENSOR(b, 1);
    float *deq = NULL;
    const float *f = w->data;
    if (!f) { // i8 weights: dequantized, as the other backends do
        if (!(deq = malloc((size_t)w->count * sizeof(float))))
            return NULL;
        cc_tensor_dequantize(w, deq);
        f = deq;
    }
    if (w->ndim != 4 || w->shape[1] == 1) {
        *tmp = deq;
        return f;
    }
    *tmp = to_ohwi(f, sizeof(float), w->shape[0], w->shape[1], w->shape[2] * w->shape[3]);
    free(deq);
    return *tmp;
}

/* The i8 kernel of node b in XNNPACK's order; *tmp gets what the caller must free. */
static const int8_t *kernel_i8(const struct cc_xnn_build *b, void **tmp)
{
    const struct cc_tensor *w = TENSOR(b, 1);
    *tmp = NULL;
    if (w->ndim != 4 || w->shape[1] == 1)
        return w->q;
    *tmp = to_ohwi(w->q, 1, w->shape[0], w->shape[1], w->shape[2] * w->shape[3]);
    return *tmp;
}

/* The f32 bias (input 2) as int32 at input_scale * weight_scale[o]; NULL when the node has
 * none (*ok stays true) or on out of memory (*ok false). */
static int32_t *bias_i32(const struct cc_xnn_build *b, bool *ok)
{
    *ok = true;
    if (b->node->n_inputs < 3)
        return NULL;
    const struct cc_tensor *bias = TENSOR(b, 2), *w = TENSOR(b, 1);
    int32_t *q = malloc((size_t)bias->count * sizeof(int32_t));
    if (!(*ok = q != NULL))
        return NULL;
    cc_xnn_bias_i32(bias->data, bias->count, TENSOR(b, 0)->act_quant.scale, w->scales, q);
    return q;
}

void cc_xnn_bias_i32(const float *bias, int64_t n, float in_scale, const float *w_scales,
                     int32_t *q)
{
    for (int64_t o = 0; o < n; o++) {
        double v = nearbyint((double)bias[o] / ((double)in_scale * w_scales[o]));
        q[o] = v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
    }
}

static const float *bias_f32(const struct cc_xnn_build *b)
{
    return b->node->n_inputs > 2 ? TENSOR(b, 2)->data : NULL;
}

/* ------------------------------------------------------------------------------------------
 * Builds
 */

/* A convolution's geometry in XNNPACK's terms: conv2d's from the node; linear's is a 1x1
 * kernel over a 1x1 image (see build_linear). Padding is top, right, bottom, left. */
struct conv_geom {
    uint32_t pad[4], k[2], stride[2], dil[2], groups;
    size_t height, width; // of the input
    size_t batch;         // images: the input's first dimension (1 but in a batch state)
};

static struct conv_geom linear_geom(size_t batch)
{
    return (struct conv_geom){.k = {1, 1},
                              .stride = {1, 1},
                              .dil = {1, 1},
                              .groups = 1,
                              .height = 1,
                              .width = 1,
                              .batch = batch};
}

/* A QC8 convolution (int8 weights with per-output-channel scales). */
static bool build_qc8(const struct cc_xnn_build *b, struct cc_xnn_work *work,
                      const struct conv_geom *g)
{
    const struct cc_tensor *x = TENSOR(b, 0), *w = TENSOR(b, 1), *y = OUTPUT(b);
    size_t o = (size_t)w->shape[0], cig = (size_t)w->shape[1];
    size_t c = (size_t)x->shape[1]; // conv2d [1,C,H,W], linear [1,K]
    void *tmp = NULL;
    bool ok = true;
    xnn_operator_t *op = cc_xnn_new_op(b, work);
    if (!op)
        return false;
    const int8_t *kernel = kernel_i8(b, &tmp);
    int32_t *bias = bias_i32(b, &ok);
    if (!kernel || !ok) {
        free(tmp);
        free(bias);
        return cc_xnn_no_memory(b);
    }
    int8_t lo, hi;
    act_bounds(b, &lo, &hi);
    enum xnn_status rc = xnn_create_convolution2d_nhwc_qc8(
        g->pad[0], g->pad[1], g->pad[2], g->pad[3], g->k[0], g->k[1], g->stride[0], g->stride[1],
        g->dil[0], g->dil[1], g->groups, cig, o / g->groups, c, o, (int8_t)x->act_quant.zero_point,
        x->act_quant.scale, w->scales, kernel, bias, (int8_t)y->act_quant.zero_point,
        y->act_quant.scale, lo, hi, b->flags, op);
    free(tmp);
    free(bias);
    return cc_xnn_check(b, "xnn_create_convolution2d_nhwc_qc8", rc) &&
           cc_xnn_check(b, "xnn_setup_convolution2d_nhwc_qc8",
                        xnn_setup_convolution2d_nhwc_qc8(*op, g->batch, g->height, g->width,
                                                         b->in[0], b->out, b->pool));
}

/* An f32 convolution (i8 weights dequantized), then the activation if it is not a clamp. */
static bool build_f32_conv(const struct cc_xnn_build *b, struct cc_xnn_work *work,
                           const struct conv_geom *g)
{
    const struct cc_tensor *x = TENSOR(b, 0), *w = TENSOR(b, 1);
    size_t o = (size_t)w->shape[0], cig = (size_t)w->shape[1];
    xnn_operator_t *op = cc_xnn_new_op(b, work);
    if (!op)
        return false;
    void *tmp = NULL;
    const float *kernel = kernel_f32(b, &tmp);
    if (!kernel)
        return cc_xnn_no_memory(b);
    enum xnn_status rc = xnn_create_convolution2d_nhwc_f32(
        g->pad[0], g->pad[1], g->pad[2], g->pad[3], g->k[0], g->k[1], g->stride[0], g->stride[1],
        g->dil[0], g->dil[1], g->groups, cig, o / g->groups, (size_t)x->shape[1], o, kernel,
        bias_f32(b), b->node->act.min, b->node->act.max, cc_xnn_main_flags(b), op);
    free(tmp);
    return cc_xnn_check(b, "xnn_create_convolution2d_nhwc_f32", rc) &&
           cc_xnn_check(b, "xnn_setup_convolution2d_nhwc_f32",
                        xnn_setup_convolution2d_nhwc_f32(*op, g->batch, g->height, g->width,
                                                         b->in[0], b->out, b->pool)) &&
           cc_xnn_act(b, work, b->out, b->out, (size_t)OUTPUT(b)->count);
}

static bool build_conv2d(const struct cc_xnn_build *b, struct cc_xnn_work *work)
{
    const struct cc_conv2d_attrs *a = &b->node->attrs.conv;
    const struct cc_tensor *x = TENSOR(b, 0), *w = TENSOR(b, 1);
    // XNNPACK's padding order is top, right, bottom, left; ours top, left, bottom, right.
    struct conv_geom g = {
        .pad = {(uint32_t)a->pad[0], (uint32_t)a->pad[3], (uint32_t)a->pad[2], (uint32_t)a->pad[1]},
        .k = {(uint32_t)w->shape[2], (uint32_t)w->shape[3]},
        .stride = {(uint32_t)a->stride[0], (uint32_t)a->stride[1]},
        .dil = {(uint32_t)a->dilation[0], (uint32_t)a->dilation[1]},
        .groups = (uint32_t)a->groups,
        .height = (size_t)x->shape[2],
        .width = (size_t)x->shape[3],
        .batch = (size_t)x->shape[0],
    };
    return b->int8 ? build_qc8(b, work, &g) : build_f32_conv(b, work, &g);
}

/* linear runs as a 1x1 convolution of a 1x1 image, never as XNNPACK's fully-connected
 * operator: in f32, that operator of this XNNPACK (Debian's 2022-02 snapshot) computes wrong
 * results where its kernels interleave K by 4 (the "s4" kernels XNNPACK picks for AMD Zen)
 * and the pool splits N: setup steps from one block of N to the next by K rounded up to 1,
 * where the weights were packed with K rounded up to 4, so every block after the first reads
 * its weights shifted, mixed with the neighbours' and with the input's bytes past K (upstream
 * fixed it in May 2022, "Fix bug in Fully Connected operator when using SR>1
 * microkernels"). The convolution steps by K rounded up to 4 and is as fast (1280 -> 1000:
 * 0.093 ms either way at 1 thread). In int8, the fully-connected operator (QS8) takes one
 * weight scale; ours have one per output channel (QC8). */
static bool build_linear(const struct cc_xnn_build *b, struct cc_xnn_work *work)
{
    struct conv_geom g = linear_geom((size_t)TENSOR(b, 0)->shape[0]);
    return b->int8 ? build_qc8(b, work, &g) : build_f32_conv(b, work, &g);
}

static bool build_add(const struct cc_xnn_build *b, struct cc_xnn_work *work)
{
    // Same shapes (op_rules.c), same layout: element order does not matter.
    size_t shape[1] = {(size_t)OUTPUT(b)->count};
    xnn_operator_t *op = cc_xnn_new_op(b, work);
    if (!op)
        return false;
    if (b->int8) {
        struct cc_act_quant qa = TENSOR(b, 0)->act_quant, qb = TENSOR(b, 1)->act_quant;
        struct cc_act_quant qy = OUTPUT(b)->act_quant;
        int8_t lo, hi;
        act_bounds(b, &lo, &hi);
        return cc_xnn_check(b, "xnn_create_add_nd_qs8",
                            xnn_create_add_nd_qs8(
                                (int8_t)qa.zero_point, qa.scale, (int8_t)qb.zero_point, qb.scale,
                                (int8_t)qy.zero_point, qy.scale, lo, hi, b->flags, op)) &&
               cc_xnn_check(b, "xnn_setup_add_nd_qs8",
                            xnn_setup_add_nd_qs8(*op, 1, shape, 1, shape, b->in[0], b->in[1],
                                                 b->out, b->pool));
    }
    return cc_xnn_check(b, "xnn_create_add_nd_f32",
                        xnn_create_add_nd_f32(b->node->act.min, b->node->act.max,
                                              cc_xnn_main_flags(b), op)) &&
           cc_xnn_check(b, "xnn_setup_add_nd_f32",
                        xnn_setup_add_nd_f32(*op, 1, shape, 1, shape, b->in[0], b->in[1], b->out,
                                             b->pool)) &&
           cc_xnn_act(b, work, b->out, b->out, shape[0]);
}

static bool build_global_avg_pool(const struct cc_xnn_build *b, struct cc_xnn_work *work)
{
    const struct cc_tensor *x = TENSOR(b, 0);
    size_t c = (size_t)x->shape[1], hw = (size_t)(x->shape[2] * x->shape[3]);
    size_t batch = (size_t)x->shape[0];
    xnn_operator_t *op = cc_xnn_new_op(b, work);
    if (!op)
        return false;
    if (b->int8) {
        struct cc_act_quant qx = x->act_quant, qy = OUTPUT(b)->act_quant;
        return cc_xnn_check(b, "xnn_create_global_average_pooling_nwc_qs8",
                            xnn_create_global_average_pooling_nwc_qs8(
                                c, c, c, (int8_t)qx.zero_point, qx.scale, (int8_t)qy.zero_point,
                                qy.scale, INT8_MIN, INT8_MAX, b->flags, op)) &&
               cc_xnn_check(b, "xnn_setup_global_average_pooling_nwc_qs8",
                            xnn_setup_global_average_pooling_nwc_qs8(*op, batch, hw, b->in[0],
                                                                     b->out, b->pool));
    }
    return cc_xnn_check(b, "xnn_create_global_average_pooling_nwc_f32",
                        xnn_create_global_average_pooling_nwc_f32(c, c, c, -INFINITY, INFINITY,
                                                                  b->flags, op)) &&
           cc_xnn_check(
               b, "xnn_setup_global_average_pooling_nwc_f32",
               xnn_setup_global_average_pooling_nwc_f32(*op, batch, hw, b->in[0], b->out, b->pool));
}

static bool build_softmax(const struct cc_xnn_build *b, struct cc_xnn_work *work)
{
    size_t c = (size_t)TENSOR(b, 0)->shape[1]; // [1, N] (op_rules.c); [B, N] in a batch state
    size_t batch = (size_t)TENSOR(b, 0)->shape[0];
    xnn_operator_t *op = cc_xnn_new_op(b, work);
    return op &&
           cc_xnn_check(b, "xnn_create_softmax_nc_f32",
                        xnn_create_softmax_nc_f32(c, c, c, b->flags, op)) &&
           cc_xnn_check(b, "xnn_setup_softmax_nc_f32",
                        xnn_setup_softmax_nc_f32(*op, batch, b->in[0], b->out, b->pool));
}

/* The standalone activation: a clamp operator, or the parts of another kind from input to
 * output. */
static bool build_clamp(const struct cc_xnn_build *b, struct cc_xnn_work *work)
{
    size_t count = (size_t)OUTPUT(b)->count; // elementwise: any order
    struct cc_act act = b->node->act;
    if (act.kind != CC_ACT_CLAMP) // f32 (cc_xnn_runs_int8)
        return cc_xnn_act(b, work, b->in[0], b->out, count);
    xnn_operator_t *op = cc_xnn_new_op(b, work);
    if (!op)
        return false;
    if (b->int8) { // input and output share one quantization (cc_xnn_runs_int8)
        int8_t lo, hi;
        act_bounds(b, &lo, &hi);
        return cc_xnn_check(b, "xnn_create_clamp_nc_s8",
                            xnn_create_clamp_nc_s8(count, count, count, lo, hi, b->flags, op)) &&
               cc_xnn_check(b, "xnn_setup_clamp_nc_s8",
                            xnn_setup_clamp_nc_s8(*op, 1, b->in[0], b->out, b->pool));
    }
    return cc_xnn_check(
               b, "xnn_create_clamp_nc_f32",
               xnn_create_clamp_nc_f32(count, count, count, act.min, act.max, b->flags, op)) &&
           cc_xnn_check(b, "xnn_setup_clamp_nc_f32",
                        xnn_setup_clamp_nc_f32(*op, 1, b->in[0], b->out, b->pool));
}

static const struct cc_xnn_op_row op_rows[CC_OP_COUNT] = {
    [CC_OP_CONV2D] = {build_conv2d, true, false},
    [CC_OP_ADD] = {build_add, true, false},
    [CC_OP_GLOBAL_AVG_POOL] = {build_global_avg_pool, true, false},
    [CC_OP_LINEAR] = {build_linear, true, false},
    [CC_OP_FLATTEN] = {NULL, true, true},
    [CC_OP_RESHAPE] = {NULL, true, true},
    [CC_OP_SOFTMAX] = {build_softmax, false, false},
    [CC_OP_CLAMP] = {build_clamp, true, false},
    [CC_OP_MAX_POOL2D] = {cc_xnn_build_pool2d, false, false},
    [CC_OP_AVG_POOL2D] = {cc_xnn_build_pool2d, false, false},
    [CC_OP_CONCAT] = {cc_xnn_build_concat, false, false},
    [CC_OP_SLICE] = {cc_xnn_build_slice, false, false},
    [CC_OP_CHANNEL_SHUFFLE] = {cc_xnn_build_channel_shuffle, false, false},
    [CC_OP_MUL] = {cc_xnn_build_mul, false, false},
};

const struct cc_xnn_op_row *cc_xnn_op_row(enum cc_op op)
{
    if ((unsigned)op >= CC_OP_COUNT || (!op_rows[op].build && !op_rows[op].layout))
        return NULL;
    return &op_rows[op];
}
