/* camclass — the in-memory model: tensors, nodes, input/output spec, labels.
 *
 * A struct cc_model is built either by the bundle loader (bundle.c, from a zip on disk) or by
 * code (tests build one-node models this way) through the same builder functions below, and
 * is checked by cc_model_finalize() before any backend sees it. After finalize it is
 * read-only: backends keep a const pointer to it and never change it.
 *
 * Ownership: the model owns every string, array and tensor byte it points to;
 * cc_model_destroy() frees them all and accepts NULL or a half-built model.
 */
#ifndef CC_MODEL_H
#define CC_MODEL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "roi.h"

#define CC_MAX_DIMS 4
#define CC_MAX_NODE_INPUTS 64 // concat of a densenet block; conv2d/linear: x, weight, bias
#define CC_MAX_NODE_OUTPUTS 1

enum cc_dtype {
    CC_DTYPE_F32,
    CC_DTYPE_F16, // reserved in format v1, rejected by the loader
    CC_DTYPE_I8,  // int8 with per-output-channel f32 scales; only conv2d/linear weights
};

enum cc_op {
    CC_OP_CONV2D,
    CC_OP_ADD,
    CC_OP_GLOBAL_AVG_POOL,
    CC_OP_LINEAR,
    CC_OP_FLATTEN,
    CC_OP_RESHAPE,
    CC_OP_SOFTMAX,
    CC_OP_CLAMP, // the standalone activation: y = act(x), any activation kind
    CC_OP_MAX_POOL2D,
    CC_OP_AVG_POOL2D,
    CC_OP_CONCAT,          // along channels (axis 1)
    CC_OP_SLICE,           // channels [start, end) (axis 1)
    CC_OP_CHANNEL_SHUFFLE, // ShuffleNet's view(g, C/g) -> transpose -> view
    CC_OP_MUL,             // elementwise; input 1 may be [1,C,1,1] (broadcast over H, W)
    CC_OP_COUNT
};

/* The function of a fused (or standalone, op clamp) activation. */
enum cc_act_kind {
    CC_ACT_CLAMP,       // clamp to [min, max]: none = [-inf, inf], relu = [0, inf], relu6 = [0, 6]
    CC_ACT_SIGMOID,     // 1 / (1 + exp(-x))
    CC_ACT_HARDSIGMOID, // clamp(x / 6 + 1/2, 0, 1), as PyTorch's Hardsigmoid
    CC_ACT_HARDSWISH,   // x * hardsigmoid(x)
    CC_ACT_SILU,        // x * sigmoid(x) (swish)
    CC_ACT_KIND_COUNT
};

/* Fused activation. kind CC_ACT_CLAMP clamps to [min, max]; the other kinds have min = -inf
 * and max = inf (finalize checks it), so that {min, max} alone still says "a clamp". */
struct cc_act {
    float min, max;
    enum cc_act_kind kind; // 0 = clamp: (struct cc_act){lo, hi} is a clamp
};

struct cc_conv2d_attrs {
    int stride[2];   // (h, w)
    int pad[4];      // (top, left, bottom, right)
    int dilation[2]; // (h, w)
    int groups;
};

/* max_pool2d / avg_pool2d, with PyTorch's semantics: padding counts as -inf for max and as 0
 * for avg; ceil_mode rounds the output size up, but a window must start inside the input or
 * its top/left padding; avg divides by the window clipped to the padded input
 * (count_include_pad) or to the input alone. */
struct cc_pool_attrs {
    int kernel[2]; // (h, w)
    int stride[2]; // (h, w)
    int pad[4];    // (top, left, bottom, right)
    int ceil_mode;         // 0 or 1
    int count_include_pad; // avg_pool2d: 0 or 1
};

/* slice: channels [start, end) of its input. */
struct cc_slice_attrs {
    int start, end;
};

/* channel_shuffle: output channel i * groups + j is input channel j * (C / groups) + i. */
struct cc_shuffle_attrs {
    int groups;
};

/* Per-op attributes; only the member of the node's op is meaningful (the rest is zero). */
union cc_attrs {
    struct cc_conv2d_attrs conv;
    struct cc_pool_attrs pool;
    struct cc_slice_attrs slice;
    struct cc_shuffle_attrs shuffle;
};

/* Per-tensor int8 quantization of an activation (format version 2): the tensor's real value
 * is scale * (q - zero_point) for int8 q. A backend with int8 arithmetic (the CPU backend)
 * stores such a tensor as int8 where the ops around it allow; the others compute in f32 and
 * ignore it (docs/MODEL_FORMAT.md says how far apart they are). */
struct cc_act_quant {
    float scale;    // finite, > 0
    int zero_point; // -128 .. 127
};

struct cc_tensor {
    char *name;
    enum cc_dtype dtype;
    int ndim;
    int64_t shape[CC_MAX_DIMS]; // (ndim) positive; unused dims are 1
    int64_t count;              // product of shape
    float *data;                // f32 constants: (count) values, 64-byte aligned, owned;
                                // NULL for activations, the graph input and i8 tensors
    int8_t *q;                  // i8 constants: (count) values in the same row-major order,
                                // 64-byte aligned, owned; NULL otherwise
    float *scales;              // i8 constants: (shape[0]) per-output-channel scales, finite
                                // and > 0 (checked by finalize), owned; NULL otherwise.
                                // Element (o, ...) stands for (float)q * scales[o].
    int producer;               // index of the node that writes it; -1 for constants/input
    bool quantized;             // act_quant is given: an activation or the graph input only
    struct cc_act_quant act_quant;
};

struct cc_node {
    enum cc_op op;
    char *name;
    int n_inputs;
    int inputs[CC_MAX_NODE_INPUTS]; // tensor indices; optional bias is the 3rd input
    int n_outputs;
    int outputs[CC_MAX_NODE_OUTPUTS];
    union cc_attrs attrs;
    struct cc_act act; // fused activation (conv2d, linear, add, mul, clamp); none otherwise
};

enum cc_color_order { CC_COLOR_RGB, CC_COLOR_BGR };
enum cc_resize_policy { CC_RESIZE_SQUASH, CC_RESIZE_CENTER_CROP };
enum cc_output_kind { CC_OUTPUT_LOGITS, CC_OUTPUT_PROBABILITIES };

struct cc_input_spec {
    int tensor;                // index into tensors
    enum cc_color_order color; // channel order the model expects
    float mean[3], std[3];     // per model channel: (x/255 - mean) / std
    enum cc_resize_policy resize;
    int resize_size; // center_crop: shorter side is resized to this
    bool antialias;  // resize as PIL's bilinear with antialiasing (format version 3), else
                     // PyTorch's bilinear without (docs/PREPROCESSING.md)

    // The part of the frame that is resized (the manifest's input.roi, fractions); zero: the
    // whole frame. camclass --roi and /predict?roi= override it.
    struct cc_roi roi;
};

struct cc_output_spec {
    int tensor; // index into tensors, shape [1, classes]
    enum cc_output_kind kind;
    int classes;
    float unknown_threshold; // the lowest top probability that is an answer; below it the
                             // answer is "unknown" (format version 4); 0: none
};

/* A name -> index hash table (open addressing, linear probing); private to model.c. */
struct cc_name_index {
    int *slots;  // (mask + 1) item index + 1, 0 = empty; owned; NULL before the first item
    size_t mask; // slot count - 1; the count is a power of two, twice the item array's capacity
};

struct cc_model {
    char *name;
    struct cc_input_spec input;
    struct cc_output_spec output;
    char **labels; // (n_labels) owned strings; n_labels == output.classes after finalize
    int n_labels;
    char *training_json; // owned; NULL when absent: the manifest's "training" object as compact
                         // JSON text (what the model was trained on), kept for display only
    struct cc_tensor *tensors; // (n_tensors)
    int n_tensors;
    int cap_tensors;
    struct cc_node *nodes; // (n_nodes) in topological order
    int n_nodes;
    int cap_nodes;
    // Private to model.c: tensor and node names -> indices, kept by the builder so that adding
    // and finding are O(1) (a hostile bundle may declare 65 536 of each).
    struct cc_name_index tensor_names, node_names;
};

/* Activation helpers. */
struct cc_act cc_act_none(void);
struct cc_act cc_act_relu(void);
struct cc_act cc_act_relu6(void);
struct cc_act cc_act_of(enum cc_act_kind kind); // a non-clamp kind (min/max open)
const char *cc_act_kind_name(enum cc_act_kind kind); // "clamp", "sigmoid", ... (op_rules.c)

/* Whether act is a clamp to [-inf, inf]: no activation. */
static inline bool cc_act_is_none(struct cc_act act)
{
    return act.kind == CC_ACT_CLAMP && isinf(act.min) && act.min < 0 && isinf(act.max) &&
           act.max > 0;
}

/* y = act(x) for one value, in float: the reference every backend is compared with. */
float cc_act_apply(struct cc_act act, float x);

/* Op table lookups: "conv2d" <-> CC_OP_CONV2D. cc_op_from_name returns CC_OP_COUNT when
 * unknown. Defined in op_rules.c, with the table. */
const char *cc_op_name(enum cc_op op);
enum cc_op cc_op_from_name(const char *name);
const char *cc_dtype_name(enum cc_dtype dtype);

/* Whether t is a constant (f32 data or i8 values): a tensor no node writes. */
static inline bool cc_tensor_is_const(const struct cc_tensor *t)
{
    return t->data != NULL || t->q != NULL;
}

/* Writes t's count values as f32 into out: data as it is, or for an i8 tensor
 * (float)q[i] * scales[o] (one f32 multiply, the same the shaders do). t must be a constant. */
void cc_tensor_dequantize(const struct cc_tensor *t, float *out);

/* Builder. cc_model_new returns an empty model (NULL on out of memory) with input.tensor and
 * output.tensor = -1 (not set), std = {1,1,1}, mean = 0, RGB, squash, logits, classes 0.
 * The caller must set input.tensor and output.tensor before finalize; output.classes 0 means
 * "take it from the output tensor's shape [1, N]" (then without the 100 000 class limit, for
 * kernel tests); labels are optional (n_labels == 0 skips the label check; otherwise n_labels
 * must equal classes). */
struct cc_model *cc_model_new(const char *name);

/* Adds a tensor and returns its index, or -1 with err set (duplicate name, bad shape, out of
 * memory, dtype f16; i8 with data). data, when not NULL, is copied (count f32 values) into
 * 64-byte aligned storage owned by the model. An i8 tensor added here has no values yet:
 * cc_model_alloc_tensor_i8 gives it storage. Limits: see docs/MODEL_FORMAT.md. */
int cc_model_add_tensor(struct cc_model *m, const char *name, enum cc_dtype dtype, int ndim,
                        const int64_t *shape, const float *data, struct cc_error *err);

/* Adds an i8 constant: q (count int8 values) and scales (shape[0] f32 values, one per output
 * channel, axis 0) are copied into storage owned by the model. Returns its index, or -1 with
 * err set (when only the storage could not be had, the tensor stays without values, which
 * finalize rejects). Scales and where the tensor may be used are checked by finalize. */
int cc_model_add_tensor_i8(struct cc_model *m, const char *name, int ndim, const int64_t *shape,
                           const int8_t *q, const float *scales, struct cc_error *err);

/* Gives i8 tensor (added without values) zeroed 64-byte aligned storage for its count int8
 * values (*q) and shape[0] scales (*scales), owned by the model, for the caller to fill (the
 * bundle loader reads straight into them). False with err set on out of memory, a tensor that
 * is not i8 or already has values. */
bool cc_model_alloc_tensor_i8(struct cc_model *m, int tensor, int8_t **q, float **scales,
                              struct cc_error *err);

/* Gives f32 tensor (added without data) zeroed 64-byte aligned storage for its count f32 values,
 * owned by the model, and returns it for the caller to fill: the tensor becomes a constant.
 * The bundle loader reads weights straight into it. NULL with err set on out of memory or when
 * the tensor already has data. */
float *cc_model_alloc_tensor_data(struct cc_model *m, int tensor, struct cc_error *err);

/* Gives activation tensor t (no data) the int8 quantization q. False with err set when t is
 * a constant or q is out of range (scale finite and > 0, zero point -128..127). */
bool cc_model_set_act_quant(struct cc_model *m, int tensor, struct cc_act_quant q,
                            struct cc_error *err);

/* Looks a tensor up by name; -1 when absent. */
int cc_model_find_tensor(const struct cc_model *m, const char *name);

/* Appends a node and returns its index, or -1 with err set. inputs/outputs are tensor
 * indices; attrs may be NULL for ops without attributes. */
int cc_model_add_node(struct cc_model *m, enum cc_op op, const char *name, int n_inputs,
                      const int *inputs, int n_outputs, const int *outputs,
                      const union cc_attrs *attrs, struct cc_act act, struct cc_error *err);

/* Adds one label (copied). */
bool cc_model_add_label(struct cc_model *m, const char *label, struct cc_error *err);

/* Checks the whole model: topological order (no cycle, each activation produced once),
 * per-op input counts and shapes (computed output shape == declared shape), input/output
 * spec, label count == classes, i8 tensors (constants with scales finite and > 0, used only
 * as the weight, input 1, of conv2d and linear nodes). Sets tensor.producer. Returns false with err
 * naming the node/tensor at fault. Must succeed before a backend is created. */
bool cc_model_finalize(struct cc_model *m, struct cc_error *err);

/* A 64-bit hash of the model's graph, shapes, attributes, every weight byte and quantization:
 * what caches of per-model measurements (backend auto, the CPU backend's layer choices) key
 * on, so that re-exported weights are measured again and a copied bundle is not. */
uint64_t cc_model_hash(const struct cc_model *m);

/* Frees everything; accepts NULL and half-built models. */
void cc_model_destroy(struct cc_model *m);

#endif
