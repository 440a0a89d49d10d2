/* camclass — the in-memory model: builder and the finalize checks (see model.h); the op
 * table and the op and activation names are op_rules.c's.
 *
 * Every rule of docs/MODEL_FORMAT.md that concerns the graph itself (shapes, limits, order,
 * input/output spec, labels) is checked here, so that a model built by code is held to the
 * same rules as one read from a bundle. Messages name the tensor or node at fault; the bundle
 * loader prefixes them with the bundle path.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "op_rules.h"

// Limits from docs/MODEL_FORMAT.md ("Limits").
#define MAX_TENSORS 65536
#define MAX_NODES 65536
#define MAX_ELEMENTS ((int64_t)1 << 28)
#define MAX_DIM ((int64_t)1 << 20)
#define MAX_CONST_BYTES ((int64_t)2 << 30)
#define MAX_CLASSES 100000
#define MAX_LABEL_LEN 256
#define MAX_NAME_LEN 256
#define MAX_MODEL_NAME_LEN 128

/* ---------------------------------------------------------------------------------------- */
/* Names and activation helpers                                                              */
/* ---------------------------------------------------------------------------------------- */

static const char *const dtype_names[] = {
    [CC_DTYPE_F32] = "f32",
    [CC_DTYPE_F16] = "f16",
    [CC_DTYPE_I8] = "i8",
};

const char *cc_dtype_name(enum cc_dtype dtype)
{
    if ((unsigned)dtype >= sizeof(dtype_names) / sizeof(dtype_names[0]))
        return "?";
    return dtype_names[dtype];
}

struct cc_act cc_act_none(void)
{
    return (struct cc_act){-INFINITY, INFINITY};
}

struct cc_act cc_act_relu(void)
{
    return (struct cc_act){0.0f, INFINITY};
}

struct cc_act cc_act_relu6(void)
{
    return (struct cc_act){0.0f, 6.0f};
}

struct cc_act cc_act_of(enum cc_act_kind kind)
{
    return (struct cc_act){-INFINITY, INFINITY, kind};
}

float cc_act_apply(struct cc_act act, float x)
{
    switch (act.kind) {
    case CC_ACT_SIGMOID:
        return 1.0f / (1.0f + expf(-x));
    case CC_ACT_HARDSIGMOID:
        return fminf(fmaxf(x / 6.0f + 0.5f, 0.0f), 1.0f);
    case CC_ACT_HARDSWISH:
        return x * fminf(fmaxf(x / 6.0f + 0.5f, 0.0f), 1.0f);
    case CC_ACT_SILU:
        return x / (1.0f + expf(-x));
    default:
        return x < act.min ? act.min : x > act.max ? act.max : x;
    }
}

void cc_tensor_dequantize(const struct cc_tensor *t, float *out)
{
    if (t->data) {
        memcpy(out, t->data, (size_t)t->count * sizeof(float));
        return;
    }
    int64_t per = t->count / t->shape[0]; // elements per output channel (axis 0)
    for (int64_t o = 0; o < t->shape[0]; o++) {
        float s = t->scales[o];
        for (int64_t i = o * per; i < (o + 1) * per; i++)
            out[i] = (float)t->q[i] * s;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Builder; the name index (tensor and node names -> indices)                                */
/* ---------------------------------------------------------------------------------------- */

// Reads the name of item i (a tensor or a node) of m: tensor_name or node_name.
typedef const char *(*name_fn)(const struct cc_model *m, int i);

static const char *tensor_name(const struct cc_model *m, int i)
{
    return m->tensors[i].name;
}

static const char *node_name(const struct cc_model *m, int i)
{
    return m->nodes[i].name;
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot of ix holding name, or the empty one where it would go (ix is at most half full). */
static size_t index_slot(const struct cc_model *m, const struct cc_name_index *ix, name_fn name_of,
                         const char *name)
{
    size_t h = (size_t)hash_name(name) & ix->mask;
    while (ix->slots[h] && strcmp(name_of(m, ix->slots[h] - 1), name) != 0)
        h = (h + 1) & ix->mask;
    return h;
}

/* Index of the item named name; -1 when absent. */
static int index_find(const struct cc_model *m, const struct cc_name_index *ix, name_fn name_of,
                      const char *name)
{
    return ix->slots ? ix->slots[index_slot(m, ix, name_of, name)] - 1 : -1;
}

/* Records item i (already in its array, name unique, room reserved) in ix. */
static void index_add(const struct cc_model *m, struct cc_name_index *ix, name_fn name_of, int i)
{
    ix->slots[index_slot(m, ix, name_of, name_of(m, i))] = i + 1;
}

/* Gives ix 2 * cap slots (cap: the item array's capacity, a power of two) when it has fewer,
 * re-adding items 0..n-1: called after every grow() of the array, so that the table grows with
 * it and stays at most half full. False on out of memory (ix unchanged). */
static bool index_reserve(const struct cc_model *m, struct cc_name_index *ix, name_fn name_of,
                          int n, int cap)
{
    size_t want = 2 * (size_t)cap;
    if (ix->slots && ix->mask + 1 >= want)
        return true;
    int *slots = calloc(want, sizeof(*slots));
    if (!slots)
        return false;
    free(ix->slots);
    *ix = (struct cc_name_index){slots, want - 1};
    for (int i = 0; i < n; i++)
        index_add(m, ix, name_of, i);
    return true;
}

/* Grows *arr (of elem-sized items, *cap of them) to hold at least need; false on OOM. */
static bool grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return true;
    int ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

static bool name_ok(const char *what, const char *name, struct cc_error *err)
{
    size_t len = name ? strlen(name) : 0;
    if (len < 1 || len > MAX_NAME_LEN)
        return cc_error_set(err, "%s name \"%.40s\" must be 1..%d bytes", what, name ? name : "",
                            MAX_NAME_LEN);
    return true;
}

struct cc_model *cc_model_new(const char *name)
{
    struct cc_model *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->name = strdup(name ? name : "");
    if (!m->name) {
        free(m);
        return NULL;
    }
    m->input.tensor = -1;
    m->output.tensor = -1;
    for (int c = 0; c < 3; c++)
        m->input.std[c] = 1.0f;
    return m;
}

int cc_model_find_tensor(const struct cc_model *m, const char *name)
{
    return m && name ? index_find(m, &m->tensor_names, tensor_name, name) : -1;
}

int cc_model_add_tensor(struct cc_model *m, const char *name, enum cc_dtype dtype, int ndim,
                        const int64_t *shape, const float *data, struct cc_error *err)
{
    if (!name_ok("tensor", name, err))
        return -1;
    if (dtype != CC_DTYPE_F32 && dtype != CC_DTYPE_I8) {
        cc_error_set(err,
                     "tensor \"%s\": dtype %s is not supported by this camclass (f32 and i8 "
                     "only)",
                     name, cc_dtype_name(dtype));
        return -1;
    }
    if (dtype == CC_DTYPE_I8 && data) {
        cc_error_set(err,
                     "tensor \"%s\": i8 values are added with cc_model_add_tensor_i8 (a "
                     "camclass bug)",
                     name);
        return -1;
    }
    if (cc_model_find_tensor(m, name) >= 0) {
        cc_error_set(err, "duplicate tensor name \"%s\"; tensor names must be unique", name);
        return -1;
    }
    if (m->n_tensors >= MAX_TENSORS) {
        cc_error_set(err, "too many tensors (limit %d) at \"%s\"", MAX_TENSORS, name);
        return -1;
    }
    if (ndim < 1 || ndim > CC_MAX_DIMS || !shape) {
        cc_error_set(err, "tensor \"%s\": %d dimensions; a shape has 1..%d", name, ndim,
                     CC_MAX_DIMS);
        return -1;
    }
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1 || shape[i] > MAX_DIM) {
            cc_error_set(err, "tensor \"%s\": dimension %d is %lld, outside 1..%lld", name, i,
                         (long long)shape[i], (long long)MAX_DIM);
            return -1;
        }
        // count <= MAX_ELEMENTS and shape[i] <= MAX_DIM, so the product fits in int64.
        count *= shape[i];
        if (count > MAX_ELEMENTS) {
            cc_error_set(err, "tensor \"%s\": more than %lld elements (limit of one tensor)", name,
                         (long long)MAX_ELEMENTS);
            return -1;
        }
    }
    if (!grow((void **)&m->tensors, &m->cap_tensors, m->n_tensors + 1, sizeof(*m->tensors)) ||
        !index_reserve(m, &m->tensor_names, tensor_name, m->n_tensors, m->cap_tensors)) {
        cc_error_set(err, "out of memory adding tensor \"%s\"", name);
        return -1;
    }
    struct cc_tensor t = {.dtype = dtype, .ndim = ndim, .count = count, .producer = -1};
    for (int i = 0; i < CC_MAX_DIMS; i++)
        t.shape[i] = i < ndim ? shape[i] : 1;
    if (!(t.name = strdup(name))) {
        cc_error_set(err, "out of memory adding tensor \"%s\"", name);
        return -1;
    }
    m->tensors[m->n_tensors] = t;
    int idx = m->n_tensors++;
    if (data) {
        float *dst = cc_model_alloc_tensor_data(m, idx, err);
        if (!dst) {
            free(m->tensors[--m->n_tensors].name);
            return -1;
        }
        memcpy(dst, data, (size_t)count * sizeof(float));
    }
    index_add(m, &m->tensor_names, tensor_name, idx); // last: nothing above needs undoing
    return idx;
}

int cc_model_add_tensor_i8(struct cc_model *m, const char *name, int ndim, const int64_t *shape,
                           const int8_t *q, const float *scales, struct cc_error *err)
{
    int idx = cc_model_add_tensor(m, name, CC_DTYPE_I8, ndim, shape, NULL, err);
    int8_t *dq;
    float *ds;
    if (idx < 0 || !cc_model_alloc_tensor_i8(m, idx, &dq, &ds, err))
        return -1; // the tensor stays, without values: finalize would reject it
    const struct cc_tensor *t = &m->tensors[idx];
    memcpy(dq, q, (size_t)t->count);
    memcpy(ds, scales, (size_t)t->shape[0] * sizeof(float));
    return idx;
}

bool cc_model_alloc_tensor_i8(struct cc_model *m, int tensor, int8_t **q, float **scales,
                              struct cc_error *err)
{
    if (tensor < 0 || tensor >= m->n_tensors || m->tensors[tensor].dtype != CC_DTYPE_I8 ||
        m->tensors[tensor].q)
        return cc_error_set(err, "tensor index %d does not exist, is not i8 or already has data",
                            tensor);
    struct cc_tensor *t = &m->tensors[tensor];
    // count <= 2^28 and shape[0] <= 2^20: both fit; rounded up to the alignment.
    size_t qbytes = ((size_t)t->count + 63) & ~(size_t)63;
    size_t sbytes = ((size_t)t->shape[0] * sizeof(float) + 63) & ~(size_t)63;
    t->q = aligned_alloc(64, qbytes);
    t->scales = aligned_alloc(64, sbytes);
    if (!t->q || !t->scales) {
        free(t->q);
        free(t->scales);
        t->q = NULL;
        t->scales = NULL;
        return cc_error_set(err, "out of memory for the data of tensor \"%s\" (%zu bytes)", t->name,
                            qbytes + sbytes);
    }
    memset(t->q, 0, qbytes);
    memset(t->scales, 0, sbytes);
    *q = t->q;
    *scales = t->scales;
    return true;
}

float *cc_model_alloc_tensor_data(struct cc_model *m, int tensor, struct cc_error *err)
{
    if (tensor < 0 || tensor >= m->n_tensors || m->tensors[tensor].data ||
        m->tensors[tensor].dtype != CC_DTYPE_F32) {
        cc_error_set(err, "tensor index %d does not exist, is not f32 or already has data", tensor);
        return NULL;
    }
    struct cc_tensor *t = &m->tensors[tensor];
    // count <= 2^28, so bytes fit; aligned_alloc wants a multiple of the alignment. At least
    // 16 bytes more than the values: the libraries the backends hand constants to may read that
    // far past them (XNNPACK's XNN_EXTRA_BYTES; BLIS, seen past a weight matrix).
    size_t bytes = ((size_t)t->count * sizeof(float) + 16 + 63) & ~(size_t)63;
    t->data = aligned_alloc(64, bytes);
    if (!t->data) {
        cc_error_set(err, "out of memory for the data of tensor \"%s\" (%zu bytes)", t->name,
                     bytes);
        return NULL;
    }
    memset(t->data, 0, bytes);
    return t->data;
}

int cc_model_add_node(struct cc_model *m, enum cc_op op, const char *name, int n_inputs,
                      const int *inputs, int n_outputs, const int *outputs,
                      const union cc_attrs *attrs, struct cc_act act, struct cc_error *err)
{
    if (!name_ok("node", name, err))
        return -1;
    if ((unsigned)op >= CC_OP_COUNT) {
        cc_error_set(err, "node \"%s\": unknown op %d", name, (int)op);
        return -1;
    }
    if (index_find(m, &m->node_names, node_name, name) >= 0) {
        cc_error_set(err, "duplicate node name \"%s\"; node names must be unique", name);
        return -1;
    }
    if (m->n_nodes >= MAX_NODES) {
        cc_error_set(err, "too many nodes (limit %d) at \"%s\"", MAX_NODES, name);
        return -1;
    }
    if (n_inputs < 1 || n_inputs > CC_MAX_NODE_INPUTS || n_outputs != CC_MAX_NODE_OUTPUTS) {
        cc_error_set(err,
                     "node \"%s\" (%s): %d inputs and %d outputs; a node has 1..%d inputs "
                     "and %d output",
                     name, cc_op_name(op), n_inputs, n_outputs, CC_MAX_NODE_INPUTS,
                     CC_MAX_NODE_OUTPUTS);
        return -1;
    }
    for (int i = 0; i < n_inputs + n_outputs; i++) {
        int t = i < n_inputs ? inputs[i] : outputs[i - n_inputs];
        if (t < 0 || t >= m->n_tensors) {
            cc_error_set(err, "node \"%s\" (%s): tensor index %d does not exist", name,
                         cc_op_name(op), t);
            return -1;
        }
    }
    if (!grow((void **)&m->nodes, &m->cap_nodes, m->n_nodes + 1, sizeof(*m->nodes)) ||
        !index_reserve(m, &m->node_names, node_name, m->n_nodes, m->cap_nodes)) {
        cc_error_set(err, "out of memory adding node \"%s\"", name);
        return -1;
    }
    struct cc_node n;
    memset(&n, 0, sizeof(n)); // attrs of other ops stay zero: the model hash reads them all
    n.op = op;
    n.n_inputs = n_inputs;
    n.n_outputs = n_outputs;
    n.act = act;
    memcpy(n.inputs, inputs, (size_t)n_inputs * sizeof(int));
    memcpy(n.outputs, outputs, (size_t)n_outputs * sizeof(int));
    if (attrs)
        n.attrs = *attrs;
    else if (op == CC_OP_CONV2D)
        n.attrs.conv = (struct cc_conv2d_attrs){{1, 1}, {0, 0, 0, 0}, {1, 1}, 1};
    n.name = strdup(name);
    if (!n.name) {
        cc_error_set(err, "out of memory adding node \"%s\"", name);
        return -1;
    }
    m->nodes[m->n_nodes] = n;
    index_add(m, &m->node_names, node_name, m->n_nodes);
    return m->n_nodes++;
}

bool cc_model_add_label(struct cc_model *m, const char *label, struct cc_error *err)
{
    size_t len = label ? strlen(label) : 0;
    if (len < 1 || len > MAX_LABEL_LEN)
        return cc_error_set(err, "label %d is %zu bytes; a label has 1..%d", m->n_labels + 1, len,
                            MAX_LABEL_LEN);
    if (m->n_labels >= MAX_CLASSES)
        return cc_error_set(err, "more than %d labels", MAX_CLASSES);
    char **nl = realloc(m->labels, (size_t)(m->n_labels + 1) * sizeof(*nl));
    if (!nl)
        return cc_error_set(err, "out of memory adding label %d", m->n_labels + 1);
    m->labels = nl;
    if (!(m->labels[m->n_labels] = strdup(label)))
        return cc_error_set(err, "out of memory adding label %d", m->n_labels + 1);
    m->n_labels++;
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Finalize                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Sets every tensor's producer; checks that activations are produced exactly once and that
 * nodes come in topological order. */
static bool check_order(struct cc_model *m, struct cc_error *err)
{
    for (int i = 0; i < m->n_tensors; i++)
        m->tensors[i].producer = -1;
    for (int k = 0; k < m->n_nodes; k++) {
        const struct cc_node *n = &m->nodes[k];
        struct cc_tensor *y = &m->tensors[n->outputs[0]];
        if (cc_tensor_is_const(y) || n->outputs[0] == m->input.tensor)
            return cc_error_set(err, "node \"%s\" writes to tensor \"%s\", which is %s", n->name,
                                y->name, cc_tensor_is_const(y) ? "a constant" : "the graph input");
        if (y->producer >= 0)
            return cc_error_set(err,
                                "tensor \"%s\" is produced by both node \"%s\" and node "
                                "\"%s\"; each tensor has one producer",
                                y->name, m->nodes[y->producer].name, n->name);
        y->producer = k;
    }
    for (int k = 0; k < m->n_nodes; k++) {
        const struct cc_node *n = &m->nodes[k];
        for (int i = 0; i < n->n_inputs; i++) {
            const struct cc_tensor *x = &m->tensors[n->inputs[i]];
            if (cc_tensor_is_const(x) || n->inputs[i] == m->input.tensor)
                continue;
            if (x->producer < 0)
                return cc_error_set(err,
                                    "node \"%s\" reads tensor \"%s\", which has no data and "
                                    "is produced by no node",
                                    n->name, x->name);
            if (x->producer >= k)
                return cc_error_set(err,
                                    "node \"%s\" reads tensor \"%s\" before node \"%s\" "
                                    "produces it (cycle or wrong order; nodes must be in "
                                    "topological order)",
                                    n->name, x->name, m->nodes[x->producer].name);
        }
    }
    for (int i = 0; i < m->n_tensors; i++) {
        const struct cc_tensor *t = &m->tensors[i];
        if (!cc_tensor_is_const(t) && t->producer < 0 && i != m->input.tensor)
            return cc_error_set(err,
                                "tensor \"%s\" has no data and is produced by no node "
                                "(only the graph input may be)",
                                t->name);
    }
    return true;
}

static bool check_input_spec(const struct cc_model *m, struct cc_error *err)
{
    const struct cc_input_spec *in = &m->input;
    if (in->tensor < 0 || in->tensor >= m->n_tensors)
        return cc_error_set(err, "model has no input tensor; set the input spec");
    const struct cc_tensor *t = &m->tensors[in->tensor];
    char b[CC_SHAPE_BUF];
    if (cc_tensor_is_const(t))
        return cc_error_set(err,
                            "input tensor \"%s\" has data; the graph input must be a "
                            "tensor without data",
                            t->name);
    if (t->ndim != 4 || t->shape[0] != 1 || t->shape[1] != 3)
        return cc_error_set(err, "input tensor \"%s\" has shape %s; the input must be [1,3,H,W]",
                            t->name, CC_TSHAPE(b, t));
    for (int c = 0; c < 3; c++) {
        if (!(in->std[c] > 0) || !isfinite(in->std[c]) || !isfinite(in->mean[c]))
            return cc_error_set(err,
                                "input std[%d] = %g, mean[%d] = %g; every std must be > 0 "
                                "and both finite",
                                c, (double)in->std[c], c, (double)in->mean[c]);
    }
    if (in->resize == CC_RESIZE_CENTER_CROP &&
        (in->resize_size < t->shape[2] || in->resize_size < t->shape[3] ||
         in->resize_size > MAX_DIM))
        return cc_error_set(err,
                            "input resize size %d is smaller than the input %lldx%lld (or "
                            "above %lld); center_crop needs size >= max(H, W)",
                            in->resize_size, (long long)t->shape[3], (long long)t->shape[2],
                            (long long)MAX_DIM);
    return true;
}

static bool check_output_spec(struct cc_model *m, struct cc_error *err)
{
    struct cc_output_spec *out = &m->output;
    if (out->tensor < 0 || out->tensor >= m->n_tensors)
        return cc_error_set(err, "model has no output tensor; set the output spec");
    const struct cc_tensor *t = &m->tensors[out->tensor];
    if (t->producer < 0)
        return cc_error_set(err, "output tensor \"%s\" is produced by no node", t->name);
    // classes 0: a model built by code (kernel tests) takes any [1,N] output; the class limit
    // applies to what a bundle declares.
    if (out->classes == 0 && t->ndim == 2)
        out->classes = (int)t->shape[1];
    else if (out->classes < 1 || out->classes > MAX_CLASSES)
        return cc_error_set(err, "output has %d classes; the limit is 1..%d", out->classes,
                            MAX_CLASSES);
    if (t->ndim != 2 || t->shape[0] != 1 || t->shape[1] != out->classes) {
        char b[CC_SHAPE_BUF];
        return cc_error_set(err, "output tensor \"%s\" has shape %s, expected [1,%d] (classes)",
                            t->name, CC_TSHAPE(b, t), out->classes);
    }
    if (m->n_labels && m->n_labels != out->classes)
        return cc_error_set(err,
                            "%d labels for %d classes; the label count must equal the "
                            "class count",
                            m->n_labels, out->classes);
    return true;
}

/* Quantized activations: never constants, scale finite and > 0, zero point in int8 range. */
static bool check_act_quant(const struct cc_tensor *t, struct cc_act_quant q, struct cc_error *err)
{
    if (t->data || t->q)
        return cc_error_set(err,
                            "tensor \"%s\" is a constant with an activation quantization; "
                            "only activations and the graph input take one",
                            t->name);
    if (!(q.scale > 0) || !isfinite(q.scale) || q.zero_point < -128 || q.zero_point > 127)
        return cc_error_set(err,
                            "tensor \"%s\": quantization scale %g, zero point %d; the scale "
                            "must be finite and > 0, the zero point -128..127",
                            t->name, (double)q.scale, q.zero_point);
    return true;
}

/* i8 tensors are constants whose every scale is finite and > 0; quantized activations are
 * activations with a valid quantization. */
static bool check_i8_tensors(const struct cc_model *m, struct cc_error *err)
{
    for (int i = 0; i < m->n_tensors; i++) {
        const struct cc_tensor *t = &m->tensors[i];
        if (t->quantized && !check_act_quant(t, t->act_quant, err))
            return false;
        if (t->dtype != CC_DTYPE_I8)
            continue;
        if (!t->q)
            return cc_error_set(err,
                                "tensor \"%s\" is i8 but has no data; only constants (the "
                                "weights of conv2d and linear nodes) may be i8",
                                t->name);
        for (int64_t o = 0; o < t->shape[0]; o++) {
            float s = t->scales[o];
            if (!(s > 0) || !isfinite(s))
                return cc_error_set(err,
                                    "tensor \"%s\": scale %lld is %g; every i8 scale must be "
                                    "finite and > 0",
                                    t->name, (long long)o, (double)s);
        }
    }
    return true;
}

bool cc_model_set_act_quant(struct cc_model *m, int tensor, struct cc_act_quant q,
                            struct cc_error *err)
{
    if (tensor < 0 || tensor >= m->n_tensors)
        return cc_error_set(err, "tensor index %d out of range", tensor);
    struct cc_tensor *t = &m->tensors[tensor];
    if (!check_act_quant(t, q, err))
        return false;
    t->quantized = true;
    t->act_quant = q;
    return true;
}

/* i8 tensors are read only as the weight (input 1) of conv2d and linear nodes: the backends
 * dequantize there and nowhere else. */
static bool check_i8_uses(const struct cc_model *m, struct cc_error *err)
{
    for (int k = 0; k < m->n_nodes; k++) {
        const struct cc_node *n = &m->nodes[k];
        for (int i = 0; i < n->n_inputs; i++) {
            const struct cc_tensor *t = &m->tensors[n->inputs[i]];
            if (t->dtype == CC_DTYPE_I8 &&
                (i != 1 || (n->op != CC_OP_CONV2D && n->op != CC_OP_LINEAR)))
                return cc_error_set(err,
                                    "node \"%s\" (%s): input %d \"%s\" is i8; only the weight "
                                    "(input 1) of conv2d and linear may be i8",
                                    n->name, cc_op_name(n->op), i, t->name);
        }
    }
    return true;
}

/* cc_model_hash: FNV-1a over 64-bit words (14 MB of mobilenet_v2 in ~2 ms). */
#define FNV_PRIME 0x100000001b3ull

static uint64_t mix(uint64_t h, const void *data, size_t size)
{
    const unsigned char *p = data;
    for (; size >= 8; size -= 8, p += 8) { // a word at a time: 14 MB in ~2 ms
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * FNV_PRIME;
    }
    for (; size; size--, p++)
        h = (h ^ *p) * FNV_PRIME;
    return h;
}

uint64_t cc_model_hash(const struct cc_model *m)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct cc_tensor *ten = &m->tensors[t];
        int64_t head[2 + CC_MAX_DIMS] = {ten->dtype, ten->ndim};
        memcpy(head + 2, ten->shape, sizeof(ten->shape));
        h = mix(h, head, sizeof(head));
        if (ten->data)
            h = mix(h, ten->data, (size_t)ten->count * sizeof(float));
        if (ten->q) {
            h = mix(h, ten->q, (size_t)ten->count);
            h = mix(h, ten->scales, (size_t)ten->shape[0] * sizeof(float));
        }
        if (ten->quantized)
            h = mix(h, &ten->act_quant, sizeof(ten->act_quant));
    }
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        int head[2 + CC_MAX_NODE_INPUTS + CC_MAX_NODE_OUTPUTS] = {node->op, node->n_inputs};
        memcpy(head + 2, node->inputs, sizeof(node->inputs));
        memcpy(head + 2 + CC_MAX_NODE_INPUTS, node->outputs, sizeof(node->outputs));
        h = mix(h, head, sizeof(head));
        h = mix(h, &node->attrs, sizeof(node->attrs)); // zeroed past the op's member
        h = mix(h, &node->act, sizeof(node->act));
    }
    return h;
}

bool cc_model_finalize(struct cc_model *m, struct cc_error *err)
{
    size_t len = strlen(m->name);
    if (len < 1 || len > MAX_MODEL_NAME_LEN)
        return cc_error_set(err, "model name \"%.40s\" must be 1..%d bytes", m->name,
                            MAX_MODEL_NAME_LEN);
    if (m->n_nodes < 1)
        return cc_error_set(err, "model \"%s\" has no nodes", m->name);
    int64_t const_bytes = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const struct cc_tensor *t = &m->tensors[i];
        if (t->data)
            const_bytes += t->count * (int64_t)sizeof(float);
        else if (t->q) // one byte per value, plus the scales
            const_bytes += t->count + t->shape[0] * (int64_t)sizeof(float);
        if (const_bytes > MAX_CONST_BYTES)
            return cc_error_set(err, "constant data exceeds %lld bytes at tensor \"%s\"",
                                (long long)MAX_CONST_BYTES, t->name);
    }
    if (!check_i8_tensors(m, err) || !check_input_spec(m, err) || !check_order(m, err) ||
        !check_i8_uses(m, err))
        return false;
    for (int k = 0; k < m->n_nodes; k++)
        if (!cc_op_check_node(m, &m->nodes[k], err))
            return false;
    return check_output_spec(m, err);
}

void cc_model_destroy(struct cc_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_tensors; i++) {
        free(m->tensors[i].name);
        free(m->tensors[i].data);
        free(m->tensors[i].q);
        free(m->tensors[i].scales);
    }
    for (int i = 0; i < m->n_nodes; i++)
        free(m->nodes[i].name);
    for (int i = 0; i < m->n_labels; i++)
        free(m->labels[i]);
    free(m->tensors);
    free(m->nodes);
    free(m->labels);
    free(m->training_json);
    free(m->tensor_names.slots);
    free(m->node_names.slots);
    free(m->name);
    free(m);
}
