/* camclass — the per-op rules of the model: input counts, fused activations and shape
 * inference for every op of docs/MODEL_FORMAT.md, one table row per op (see op_rules.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op_rules.h"

#define MAX_KERNEL 64 // also stride, dilation and padding (docs/MODEL_FORMAT.md "Limits")
#define MAX_DIM_VALUE ((int64_t)1 << 20)

/* ---------------------------------------------------------------------------------------- */
/* Shapes                                                                                    */
/* ---------------------------------------------------------------------------------------- */

// A computed shape, compared against the declared one.
struct shape {
    int ndim;
    int64_t d[CC_MAX_DIMS];
};

/* Writes "[1,3,224,224]" into buf (always NUL-terminated). */
const char *cc_shape_str(char *buf, size_t size, int ndim, const int64_t *d)
{
    size_t n = 0;
    buf[0] = 0;
    n += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)d[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

static bool shape_equal(const struct cc_tensor *t, const struct shape *s)
{
    if (t->ndim != s->ndim)
        return false;
    for (int i = 0; i < s->ndim; i++)
        if (t->shape[i] != s->d[i])
            return false;
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Per-op rules                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Computes a node's output shape from its inputs (and, for reshape, the declared output),
 * checking the input shapes on the way. Returns false with err naming node and tensor. */
typedef bool (*infer_fn)(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                         struct cc_error *err);

static bool infer_conv2d(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                         struct cc_error *err);
static bool infer_add(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                      struct cc_error *err);
static bool infer_gap(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                      struct cc_error *err);
static bool infer_linear(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                         struct cc_error *err);
static bool infer_flatten(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err);
static bool infer_reshape(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err);
static bool infer_softmax(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err);
static bool infer_same(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                       struct cc_error *err);
static bool infer_pool(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                       struct cc_error *err);
static bool infer_concat(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                         struct cc_error *err);
static bool infer_slice(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                        struct cc_error *err);
static bool infer_shuffle(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err);
static bool infer_mul(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                      struct cc_error *err);

struct op_rule {
    const char *name;
    int min_inputs, max_inputs;
    bool has_act; // accepts a fused activation
    infer_fn infer;
    int params_from; // inputs from this one on (weight, bias) must be constants; 0: none. The
                     // backends pack them at load (XNNPACK, BLIS, the Vulkan kernels' buffers).
};

static const struct op_rule op_rules[CC_OP_COUNT] = {
    [CC_OP_CONV2D] = {"conv2d", 2, 3, true, infer_conv2d, 1},
    [CC_OP_ADD] = {"add", 2, 2, true, infer_add},
    [CC_OP_GLOBAL_AVG_POOL] = {"global_avg_pool", 1, 1, false, infer_gap},
    [CC_OP_LINEAR] = {"linear", 2, 3, true, infer_linear, 1},
    [CC_OP_FLATTEN] = {"flatten", 1, 1, false, infer_flatten},
    [CC_OP_RESHAPE] = {"reshape", 1, 1, false, infer_reshape},
    [CC_OP_SOFTMAX] = {"softmax", 1, 1, false, infer_softmax},
    [CC_OP_CLAMP] = {"clamp", 1, 1, true, infer_same},
    [CC_OP_MAX_POOL2D] = {"max_pool2d", 1, 1, false, infer_pool},
    [CC_OP_AVG_POOL2D] = {"avg_pool2d", 1, 1, false, infer_pool},
    [CC_OP_CONCAT] = {"concat", 2, CC_MAX_NODE_INPUTS, false, infer_concat},
    [CC_OP_SLICE] = {"slice", 1, 1, false, infer_slice},
    [CC_OP_CHANNEL_SHUFFLE] = {"channel_shuffle", 1, 1, false, infer_shuffle},
    [CC_OP_MUL] = {"mul", 2, 2, true, infer_mul},
};

static const char *const act_kind_names[CC_ACT_KIND_COUNT] = {
    [CC_ACT_CLAMP] = "clamp",         [CC_ACT_SIGMOID] = "sigmoid", [CC_ACT_HARDSIGMOID] = "hardsigmoid",
    [CC_ACT_HARDSWISH] = "hardswish", [CC_ACT_SILU] = "silu",
};

const char *cc_act_kind_name(enum cc_act_kind kind)
{
    return (unsigned)kind < CC_ACT_KIND_COUNT ? act_kind_names[kind] : "?";
}

const char *cc_op_name(enum cc_op op)
{
    if ((unsigned)op >= CC_OP_COUNT)
        return "?";
    return op_rules[op].name;
}

enum cc_op cc_op_from_name(const char *name)
{
    for (int i = 0; name && i < CC_OP_COUNT; i++)
        if (strcmp(op_rules[i].name, name) == 0)
            return (enum cc_op)i;
    return CC_OP_COUNT;
}

/* Fails with "node N (op): input "t" has shape [..], expected <what>". */
static bool bad_input(const struct cc_model *m, const struct cc_node *n, int slot,
                      const char *expected, struct cc_error *err)
{
    const struct cc_tensor *t = &m->tensors[n->inputs[slot]];
    char buf[CC_SHAPE_BUF];
    return cc_error_set(err, "node \"%s\" (%s): input \"%s\" has shape %s, expected %s", n->name,
                        cc_op_name(n->op), t->name, CC_TSHAPE(buf, t), expected);
}

/* Checks that input slot is [1, C, H, W]. */
static bool want_nchw(const struct cc_model *m, const struct cc_node *n, int slot,
                      struct cc_error *err)
{
    const struct cc_tensor *t = &m->tensors[n->inputs[slot]];
    if (t->ndim != 4 || t->shape[0] != 1)
        return bad_input(m, n, slot, "[1,C,H,W]", err);
    return true;
}

/* Checks that the optional bias in slot 2 (if present) is [count]. */
static bool want_bias(const struct cc_model *m, const struct cc_node *n, int64_t count,
                      struct cc_error *err)
{
    if (n->n_inputs < 3)
        return true;
    const struct cc_tensor *b = &m->tensors[n->inputs[2]];
    if (b->ndim != 1 || b->shape[0] != count) {
        char want[CC_SHAPE_BUF];
        return bad_input(m, n, 2, cc_shape_str(want, sizeof(want), 1, &count), err);
    }
    return true;
}

static bool in_range(int v, int lo, int hi)
{
    return v >= lo && v <= hi;
}

static bool infer_conv2d(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                         struct cc_error *err)
{
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    if (!want_nchw(m, n, 0, err))
        return false;
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    const struct cc_tensor *w = &m->tensors[n->inputs[1]];
    const char *what = NULL;
    for (int i = 0; i < 2 && !what; i++) {
        if (!in_range(a->stride[i], 1, MAX_KERNEL))
            what = "stride";
        else if (!in_range(a->dilation[i], 1, MAX_KERNEL))
            what = "dilation";
    }
    for (int i = 0; i < 4 && !what; i++)
        if (!in_range(a->pad[i], 0, MAX_KERNEL))
            what = "padding";
    if (what)
        return cc_error_set(err,
                            "node \"%s\" (conv2d): %s out of range (stride and dilation "
                            "1..%d, padding 0..%d)",
                            n->name, what, MAX_KERNEL, MAX_KERNEL);
    int64_t c = x->shape[1], g = a->groups;
    if (g < 1 || c % g != 0 || w->ndim < 1 || w->shape[0] % g != 0)
        return cc_error_set(err,
                            "node \"%s\" (conv2d): groups %lld must divide the input "
                            "channels (%lld) and the output channels (weight \"%s\" dim 0)",
                            n->name, (long long)g, (long long)c, w->name);
    if (w->ndim != 4 || w->shape[1] != c / g || w->shape[2] > MAX_KERNEL ||
        w->shape[3] > MAX_KERNEL) {
        char want[CC_SHAPE_BUF];
        snprintf(want, sizeof(want), "[O,%lld,kh,kw] (C/groups, kernel 1..%d)", (long long)(c / g),
                 MAX_KERNEL);
        return bad_input(m, n, 1, want, err);
    }
    int64_t o = w->shape[0];
    if (!want_bias(m, n, o, err))
        return false;
    out->ndim = 4;
    out->d[0] = 1;
    out->d[1] = o;
    for (int i = 0; i < 2; i++) {
        // All terms are bounded (dims <= 2^20, attrs <= 64), so int64 cannot overflow.
        int64_t span = x->shape[2 + i] + a->pad[i] + a->pad[i + 2] -
                       (int64_t)a->dilation[i] * (w->shape[2 + i] - 1) - 1;
        if (span < 0)
            return cc_error_set(err,
                                "node \"%s\" (conv2d): kernel of weight \"%s\" is larger "
                                "than the padded input \"%s\"",
                                n->name, w->name, x->name);
        out->d[2 + i] = span / a->stride[i] + 1;
    }
    return true;
}

static bool infer_add(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                      struct cc_error *err)
{
    const struct cc_tensor *a = &m->tensors[n->inputs[0]];
    struct shape s = {a->ndim, {0}};
    memcpy(s.d, a->shape, sizeof(s.d));
    if (!shape_equal(&m->tensors[n->inputs[1]], &s)) {
        char want[CC_SHAPE_BUF];
        return bad_input(m, n, 1, CC_TSHAPE(want, a), err);
    }
    *out = s;
    return true;
}

static bool infer_gap(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                      struct cc_error *err)
{
    if (!want_nchw(m, n, 0, err))
        return false;
    *out = (struct shape){4, {1, m->tensors[n->inputs[0]].shape[1], 1, 1}};
    return true;
}

static bool infer_linear(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                         struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    const struct cc_tensor *w = &m->tensors[n->inputs[1]];
    if (x->ndim != 2 || x->shape[0] != 1)
        return bad_input(m, n, 0, "[1,K]", err);
    if (w->ndim != 2 || w->shape[1] != x->shape[1]) {
        char want[CC_SHAPE_BUF];
        snprintf(want, sizeof(want), "[N,%lld]", (long long)x->shape[1]);
        return bad_input(m, n, 1, want, err);
    }
    if (!want_bias(m, n, w->shape[0], err))
        return false;
    *out = (struct shape){2, {1, w->shape[0]}};
    return true;
}

static bool infer_flatten(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    if (x->shape[0] != 1)
        return bad_input(m, n, 0, "batch 1 ([1,...])", err);
    *out = (struct shape){2, {1, x->count}};
    return true;
}

static bool infer_reshape(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    const struct cc_tensor *y = &m->tensors[n->outputs[0]];
    if (x->count != y->count) {
        char bx[CC_SHAPE_BUF], by[CC_SHAPE_BUF];
        return cc_error_set(err,
                            "node \"%s\" (reshape): input \"%s\" %s has %lld elements but "
                            "output \"%s\" %s has %lld",
                            n->name, x->name, CC_TSHAPE(bx, x), (long long)x->count, y->name,
                            CC_TSHAPE(by, y), (long long)y->count);
    }
    out->ndim = y->ndim;
    memcpy(out->d, y->shape, sizeof(out->d));
    return true;
}

static bool infer_softmax(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    if (x->ndim != 2 || x->shape[0] != 1)
        return bad_input(m, n, 0, "[1,N]", err);
    return infer_same(m, n, out, err);
}

static bool infer_same(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                       struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    out->ndim = x->ndim;
    memcpy(out->d, x->shape, sizeof(out->d));
    return true;
}

/* PyTorch's pooled size: floor or ceil of (in + pads - kernel) / stride, plus one; with
 * ceil_mode the last window must still start inside the input or the leading padding. */
int64_t cc_pool_out_size(int64_t in, int k, int s, int pad_lo, int pad_hi, bool ceil_mode)
{
    int64_t span = in + pad_lo + pad_hi - k;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + pad_lo)
        out--;
    return out;
}

static bool infer_pool(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                       struct cc_error *err)
{
    const struct cc_pool_attrs *a = &n->attrs.pool;
    if (!want_nchw(m, n, 0, err))
        return false;
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    bool ok = (a->ceil_mode == 0 || a->ceil_mode == 1) &&
              (a->count_include_pad == 0 || a->count_include_pad == 1);
    for (int i = 0; i < 2 && ok; i++)
        ok = in_range(a->kernel[i], 1, MAX_KERNEL) && in_range(a->stride[i], 1, MAX_KERNEL) &&
             in_range(a->pad[i], 0, a->kernel[i] / 2) && in_range(a->pad[i + 2], 0, a->kernel[i] / 2);
    if (!ok)
        return cc_error_set(err,
                            "node \"%s\" (%s): kernel and stride must be 1..%d, each padding "
                            "0..kernel/2, ceil_mode and count_include_pad 0 or 1",
                            n->name, cc_op_name(n->op), MAX_KERNEL);
    out->ndim = 4;
    out->d[0] = 1;
    out->d[1] = x->shape[1];
    for (int i = 0; i < 2; i++) {
        if (x->shape[2 + i] + a->pad[i] + a->pad[i + 2] < a->kernel[i])
            return cc_error_set(err,
                                "node \"%s\" (%s): the %dx%d window is larger than the padded "
                                "input \"%s\"",
                                n->name, cc_op_name(n->op), a->kernel[0], a->kernel[1], x->name);
        out->d[2 + i] = cc_pool_out_size(x->shape[2 + i], a->kernel[i], a->stride[i], a->pad[i],
                                         a->pad[i + 2], a->ceil_mode);
    }
    return true;
}

/* concat: inputs of one rank (2 or 4), batch 1, equal past axis 1; output sums axis 1. */
static bool infer_concat(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                         struct cc_error *err)
{
    const struct cc_tensor *a = &m->tensors[n->inputs[0]];
    if ((a->ndim != 2 && a->ndim != 4) || a->shape[0] != 1)
        return bad_input(m, n, 0, "[1,C,H,W] or [1,C]", err);
    out->ndim = a->ndim;
    memcpy(out->d, a->shape, sizeof(out->d));
    out->d[1] = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        const struct cc_tensor *t = &m->tensors[n->inputs[i]];
        bool same = t->ndim == a->ndim && t->shape[0] == 1;
        for (int d = 2; d < a->ndim && same; d++)
            same = t->shape[d] == a->shape[d];
        if (!same) {
            char want[CC_SHAPE_BUF];
            int64_t d[CC_MAX_DIMS];
            memcpy(d, a->shape, sizeof(d));
            d[1] = t->shape[1];
            return bad_input(m, n, i, cc_shape_str(want, sizeof(want), a->ndim, d), err);
        }
        out->d[1] += t->shape[1]; // <= 64 inputs of <= 2^20 each
    }
    if (out->d[1] > MAX_DIM_VALUE)
        return cc_error_set(err, "node \"%s\" (concat): %lld channels, above %lld", n->name,
                            (long long)out->d[1], (long long)MAX_DIM_VALUE);
    return true;
}

static bool infer_slice(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                        struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    const struct cc_slice_attrs *a = &n->attrs.slice;
    if ((x->ndim != 2 && x->ndim != 4) || x->shape[0] != 1)
        return bad_input(m, n, 0, "[1,C,H,W] or [1,C]", err);
    if (a->start < 0 || a->end <= a->start || a->end > x->shape[1])
        return cc_error_set(err,
                            "node \"%s\" (slice): channels [%d, %d) of input \"%s\" with %lld; "
                            "need 0 <= start < end <= channels",
                            n->name, a->start, a->end, x->name, (long long)x->shape[1]);
    out->ndim = x->ndim;
    memcpy(out->d, x->shape, sizeof(out->d));
    out->d[1] = a->end - a->start;
    return true;
}

static bool infer_shuffle(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                          struct cc_error *err)
{
    if (!want_nchw(m, n, 0, err))
        return false;
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    int g = n->attrs.shuffle.groups;
    if (g < 1 || x->shape[1] % g != 0)
        return cc_error_set(err,
                            "node \"%s\" (channel_shuffle): groups %d must be >= 1 and divide "
                            "the %lld channels of \"%s\"",
                            n->name, g, (long long)x->shape[1], x->name);
    return infer_same(m, n, out, err);
}

/* mul: input 1 is input 0's shape, or [1,C,1,1] scaling each channel of a [1,C,H,W] input 0. */
static bool infer_mul(const struct cc_model *m, const struct cc_node *n, struct shape *out,
                      struct cc_error *err)
{
    const struct cc_tensor *a = &m->tensors[n->inputs[0]];
    const struct cc_tensor *b = &m->tensors[n->inputs[1]];
    bool same = a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof(a->shape)) == 0;
    bool per_channel = a->ndim == 4 && b->ndim == 4 && a->shape[0] == 1 && b->shape[0] == 1 &&
                       b->shape[1] == a->shape[1] && b->shape[2] == 1 && b->shape[3] == 1;
    if (!same && !per_channel) {
        char want[CC_SHAPE_BUF], sa[CC_SHAPE_BUF];
        snprintf(want, sizeof(want), "%s or [1,%lld,1,1]", CC_TSHAPE(sa, a),
                 (long long)a->shape[1]);
        return bad_input(m, n, 1, want, err);
    }
    return infer_same(m, n, out, err);
}

/* "conv2d, linear, add, mul and clamp": the ops that take a fused activation. */
static const char *act_ops(char *buf, size_t size)
{
    size_t len = 0;
    int count = 0, k = 0;
    for (int i = 0; i < CC_OP_COUNT; i++)
        count += op_rules[i].has_act;
    buf[0] = 0;
    for (int i = 0; i < CC_OP_COUNT && len < size; i++) {
        if (!op_rules[i].has_act)
            continue;
        k++;
        len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                k == 1 ? "" : k == count ? " and " : ", ", op_rules[i].name);
    }
    return buf;
}

/* Checks one node: input count, activation, input shapes, computed vs declared output. */
bool cc_op_check_node(const struct cc_model *m, const struct cc_node *n, struct cc_error *err)
{
    const struct op_rule *r = &op_rules[n->op];
    if (n->n_inputs < r->min_inputs || n->n_inputs > r->max_inputs) {
        if (r->min_inputs == r->max_inputs)
            return cc_error_set(err, "node \"%s\" (%s) has %d inputs; %s takes %d", n->name,
                                r->name, n->n_inputs, r->name, r->min_inputs);
        return cc_error_set(err, "node \"%s\" (%s) has %d inputs; %s takes %d..%d", n->name,
                            r->name, n->n_inputs, r->name, r->min_inputs, r->max_inputs);
    }
    for (int i = r->params_from; r->params_from && i < n->n_inputs; i++) {
        const struct cc_tensor *p = &m->tensors[n->inputs[i]];
        if (!cc_tensor_is_const(p))
            return cc_error_set(err,
                                "node \"%s\" (%s): its %s \"%s\" is not a constant; %s's weight "
                                "and bias must be stored in the bundle (re-export the model)",
                                n->name, r->name, i == r->params_from ? "weight" : "bias", p->name,
                                r->name);
    }
    char list[128];
    if (!r->has_act && !cc_act_is_none(n->act))
        return cc_error_set(err, "node \"%s\" (%s) has a fused activation; only %s take one",
                            n->name, r->name, act_ops(list, sizeof(list)));
    if ((unsigned)n->act.kind >= CC_ACT_KIND_COUNT)
        return cc_error_set(err, "node \"%s\" (%s): unknown activation kind %d", n->name,
                            r->name, (int)n->act.kind);
    if (n->act.kind != CC_ACT_CLAMP && !(isinf(n->act.min) && n->act.min < 0 &&
                                         isinf(n->act.max) && n->act.max > 0))
        return cc_error_set(err, "node \"%s\" (%s): a %s activation has no clamp range",
                            n->name, r->name, cc_act_kind_name(n->act.kind));
    if (isnan(n->act.min) || isnan(n->act.max) || n->act.min > n->act.max)
        return cc_error_set(err, "node \"%s\" (%s): activation clamp_min %g > clamp_max %g",
                            n->name, r->name, (double)n->act.min, (double)n->act.max);
    struct shape s;
    if (!r->infer(m, n, &s, err))
        return false;
    const struct cc_tensor *y = &m->tensors[n->outputs[0]];
    if (!shape_equal(y, &s)) {
        char bs[CC_SHAPE_BUF], by[CC_SHAPE_BUF];
        return cc_error_set(err,
                            "node \"%s\" (%s): computed output shape %s but tensor \"%s\" "
                            "is declared %s",
                            n->name, r->name, cc_shape_str(bs, sizeof(bs), s.ndim, s.d), y->name,
                            CC_TSHAPE(by, y));
    }
    return true;
}
