/* camclass — post-training static quantization (see calibrate.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "ref_ops.h"

struct cc_calibration {
    const struct cc_model *m; // not owned
    float **data;   // (n_tensors) values: f32 constants in place, the rest owned (i8 weights
                    // dequantized, activations and the input one buffer each)
    float *lo, *hi; // (n_tensors) observed range of each activation and of the input
    float *scratch; // the most scratch floats any node needs, owned; NULL when none does
    int runs;
};

/* Whether tensor t of c's model has its own buffer in c->data (everything but f32 data). */
static bool owns(const struct cc_calibration *c, int t)
{
    return c->m->tensors[t].data == NULL;
}

void cc_calibration_destroy(struct cc_calibration *c)
{
    if (!c)
        return;
    for (int t = 0; c->data && t < c->m->n_tensors; t++)
        if (owns(c, t))
            free(c->data[t]);
    free(c->data), free(c->lo), free(c->hi), free(c->scratch);
    free(c);
}

/* Buffers for every tensor and the ops' scratch; false on out of memory. */
static bool alloc_buffers(struct cc_calibration *c)
{
    const struct cc_model *m = c->m;
    size_t scratch = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_ref_op *op = cc_ref_op_find(m->nodes[n].op);
        size_t s = op->scratch ? op->scratch(m, &m->nodes[n]) : 0;
        scratch = s > scratch ? s : scratch;
    }
    if (scratch && !(c->scratch = malloc(scratch * sizeof(float))))
        return false;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct cc_tensor *ten = &m->tensors[t];
        if (!owns(c, t)) {
            c->data[t] = ten->data;
            continue;
        }
        if (!(c->data[t] = malloc((size_t)ten->count * sizeof(float))))
            return false;
        if (ten->q)
            cc_tensor_dequantize(ten, c->data[t]);
        c->lo[t] = INFINITY, c->hi[t] = -INFINITY;
    }
    return true;
}

struct cc_calibration *cc_calibration_new(const struct cc_model *m, struct cc_error *err)
{
    for (int n = 0; n < m->n_nodes; n++)
        if (!cc_ref_op_find(m->nodes[n].op)) {
            cc_error_set(err,
                         "node \"%s\": op %s has no reference implementation to calibrate "
                         "with",
                         m->nodes[n].name, cc_op_name(m->nodes[n].op));
            return NULL;
        }
    struct cc_calibration *c = calloc(1, sizeof(*c));
    if (c) {
        c->m = m;
        c->data = calloc((size_t)m->n_tensors, sizeof(float *));
        c->lo = malloc((size_t)m->n_tensors * sizeof(float));
        c->hi = malloc((size_t)m->n_tensors * sizeof(float));
    }
    if (!c || !c->data || !c->lo || !c->hi || !alloc_buffers(c)) {
        cc_calibration_destroy(c);
        cc_error_set(err, "out of memory for the calibration of model \"%s\"", m->name);
        return NULL;
    }
    return c;
}

/* Widens tensor t's range by its values; false when one is not finite. */
static bool observe(struct cc_calibration *c, int t)
{
    const float *v = c->data[t];
    float lo = c->lo[t], hi = c->hi[t];
    for (int64_t i = 0; i < c->m->tensors[t].count; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
        if (!isfinite(v[i]))
            return false;
    }
    c->lo[t] = lo, c->hi[t] = hi;
    return true;
}

bool cc_calibration_run(struct cc_calibration *c, const float *input, struct cc_error *err)
{
    const struct cc_model *m = c->m;
    int x = m->input.tensor;
    memcpy(c->data[x], input, (size_t)m->tensors[x].count * sizeof(float));
    if (!observe(c, x))
        return cc_error_set(err, "model \"%s\": an input value is not finite", m->name);
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        const float *in[CC_MAX_NODE_INPUTS] = {0};
        for (int i = 0; i < node->n_inputs; i++)
            in[i] = c->data[node->inputs[i]];
        int y = node->outputs[0];
        cc_ref_op_find(node->op)->run(m, node, in, c->data[y],
                                      (struct cc_ref_part){0, 1, c->scratch});
        if (!observe(c, y))
            return cc_error_set(err,
                                "model \"%s\": node \"%s\" computes a value that is not finite "
                                "(NaN or infinity), which no int8 range holds; the model "
                                "cannot be quantized",
                                m->name, node->name);
    }
    c->runs++;
    return true;
}

int cc_calibration_runs(const struct cc_calibration *c)
{
    return c->runs;
}

/* ------------------------------------------------------------------------------------------
 * The int8 model
 */

/* Asymmetric int8 quantization of [lo, hi] widened to hold 0 (as ccm_calibrate.act_quant). */
static struct cc_act_quant range_quant(double lo, double hi)
{
    lo = fmin(lo, 0.0), hi = fmax(hi, 0.0);
    if (hi - lo < 1e-12)
        hi = lo + 1e-6;
    float scale = (float)((hi - lo) / 255.0);
    double zp = nearbyint(-128.0 - lo / (double)scale);
    return (struct cc_act_quant){scale, (int)fmin(fmax(zp, -128.0), 127.0)};
}

/* The quantization of every activation and the input (quantized false: stays f32), in node
 * order so that a layout op's input is decided before its output. */
static void choose_act_quant(const struct cc_calibration *c, struct cc_tensor *q)
{
    const struct cc_model *m = c->m;
    for (int t = 0; t < m->n_tensors; t++)
        q[t].quantized = false;
    int x = m->input.tensor;
    q[x] = (struct cc_tensor){.quantized = true, .act_quant = range_quant(c->lo[x], c->hi[x])};
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        int in = node->inputs[0], y = node->outputs[0];
        bool layout =
            node->op == CC_OP_FLATTEN || node->op == CC_OP_RESHAPE || node->op == CC_OP_CLAMP;
        if (node->op == CC_OP_SOFTMAX)
            continue;
        q[y].quantized = true;
        q[y].act_quant =
            layout && q[in].quantized ? q[in].act_quant : range_quant(c->lo[y], c->hi[y]);
    }
}

/* Per-output-channel symmetric int8 of f32 weight w into q and scales (as the exporter's
 * quantize_int8: in double, scales rounded to f32, q in [-127, 127] ties to even). */
static void quantize_weight(const struct cc_tensor *w, int8_t *q, float *scales)
{
    int64_t rows = w->shape[0], per = w->count / rows;
    for (int64_t o = 0; o < rows; o++) {
        const float *v = w->data + o * per;
        // |v| and their maximum are exact in float. (GCC 12 for aarch64 fails with an internal
        // error vectorizing the same reduction written with fmax over doubles.)
        float amax = 0;
        for (int64_t i = 0; i < per; i++)
            amax = fabsf(v[i]) > amax ? fabsf(v[i]) : amax;
        scales[o] = amax > 0 ? (float)((double)amax / 127.0) : 1.0f;
        for (int64_t i = 0; i < per; i++) {
            double r = nearbyint((double)v[i] / (double)scales[o]);
            q[o * per + i] = (int8_t)fmin(fmax(r, -127.0), 127.0);
        }
    }
}

/* Which f32 constants become i8: input 1 of a conv2d or linear, used nowhere else. False on
 * out of memory. */
static bool choose_weights(const struct cc_model *m, bool *weight)
{
    bool *other = calloc((size_t)m->n_tensors, 1);
    if (!other)
        return false;
    for (int t = 0; t < m->n_tensors; t++)
        weight[t] = false;
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        for (int i = 0; i < node->n_inputs; i++) {
            int t = node->inputs[i];
            bool w = i == 1 && (node->op == CC_OP_CONV2D || node->op == CC_OP_LINEAR);
            if (w && m->tensors[t].data)
                weight[t] = true;
            else
                other[t] = true;
        }
    }
    for (int t = 0; t < m->n_tensors; t++)
        weight[t] = weight[t] && !other[t];
    free(other);
    return true;
}

/* Adds tensor t of the calibrated model to out (at index t: tensors go in the same order) as
 * i8 when weight, with quantization q when it is an activation. False with err. */
static bool add_tensor(struct cc_model *out, const struct cc_tensor *s, bool weight,
                       const struct cc_tensor *q, struct cc_error *err)
{
    int i;
    if (s->q) {
        i = cc_model_add_tensor_i8(out, s->name, s->ndim, s->shape, s->q, s->scales, err);
    } else if (weight) {
        int8_t *qv;
        float *scales;
        i = cc_model_add_tensor(out, s->name, CC_DTYPE_I8, s->ndim, s->shape, NULL, err);
        if (i >= 0 && !cc_model_alloc_tensor_i8(out, i, &qv, &scales, err))
            return false;
        if (i >= 0)
            quantize_weight(s, qv, scales);
    } else {
        i = cc_model_add_tensor(out, s->name, CC_DTYPE_F32, s->ndim, s->shape, s->data, err);
    }
    if (i >= 0 && q->quantized && !cc_model_set_act_quant(out, i, q->act_quant, err))
        return false;
    return i >= 0;
}

/* Name, input and output specs, labels and training record of c's model into out. */
static bool copy_specs(const struct cc_model *m, struct cc_model *out, struct cc_error *err)
{
    out->input = m->input;
    out->output = m->output;
    for (int k = 0; k < m->n_labels; k++)
        if (!cc_model_add_label(out, m->labels[k], err))
            return false;
    if (m->training_json && !(out->training_json = strdup(m->training_json)))
        return cc_error_set(err, "out of memory for the training record");
    return true;
}

struct cc_model *cc_calibration_quantize(const struct cc_calibration *c, const char *name,
                                         struct cc_error *err)
{
    const struct cc_model *m = c->m;
    if (c->runs == 0) {
        cc_error_set(err, "model \"%s\": no image was run to calibrate it", m->name);
        return NULL;
    }
    struct cc_model *out = cc_model_new(name ? name : m->name);
    bool *weight = malloc((size_t)m->n_tensors * sizeof(bool));
    struct cc_tensor *q = malloc((size_t)m->n_tensors * sizeof(*q));
    bool ok = out && weight && q && choose_weights(m, weight);
    if (!ok)
        cc_error_set(err, "out of memory for the int8 model of \"%s\"", m->name);
    else
        choose_act_quant(c, q);
    for (int t = 0; ok && t < m->n_tensors; t++)
        ok = add_tensor(out, &m->tensors[t], weight[t], &q[t], err);
    for (int n = 0; ok && n < m->n_nodes; n++) {
        const struct cc_node *s = &m->nodes[n];
        ok = cc_model_add_node(out, s->op, s->name, s->n_inputs, s->inputs, s->n_outputs,
                               s->outputs, &s->attrs, s->act, err) >= 0;
    }
    ok = ok && copy_specs(m, out, err) && cc_model_finalize(out, err);
    free(weight);
    free(q);
    if (!ok) {
        cc_model_destroy(out);
        return NULL;
    }
    return out;
}
