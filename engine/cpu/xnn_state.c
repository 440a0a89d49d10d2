/* camclass — the CPU backend's tensors (xnn_state.h): NHWC layout, where each lives (the
 * arena, or a buffer of its own), in which type, and its copy in the other type. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "poison.h"
#include "xnn_state.h"

/* ------------------------------------------------------------------------------------------
 * Layout
 */

/* True when t is stored NHWC here and that order differs from its NCHW order. */
bool cc_xnn_state_permuted(const struct cc_tensor *t)
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
void cc_xnn_state_move(const struct cc_tensor *t, const void *src, void *dst, bool to_nhwc,
                       size_t esize)
{
    if (cc_xnn_state_permuted(t))
        relayout(t, src, dst, to_nhwc, esize);
    else if (dst != src)
        memcpy(dst, src, (size_t)t->count * esize);
}

/* ------------------------------------------------------------------------------------------
 * Placement: where every tensor lives and in which type
 */

/* The values of tensor t in type type: its data, or its copy in the other type. */
void *cc_xnn_state_values(const struct xnn_state *s, int t, enum store type)
{
    const struct place *p = &s->places[t];
    return p->type == type ? p->data : p->other;
}

/* Whether a reshape/flatten node needs a buffer of its own for its output (else it aliases
 * its input's memory, as cc_plan laid it out). */
bool cc_xnn_state_reshape_moves(const struct xnn_state *s, const struct cc_node *n)
{
    const struct cc_model *m = s->model;
    return cc_xnn_state_permuted(&m->tensors[n->inputs[0]]) ||
           cc_xnn_state_permuted(&m->tensors[n->outputs[0]]) ||
           s->places[n->inputs[0]].type != s->places[n->outputs[0]].type;
}

/* Whether input slot i of node n is an activation read (weights and biases are not). */
bool cc_xnn_state_reads_activation(const struct cc_node *n, int i)
{
    return i == 0 || (n->op != CC_OP_CONV2D && n->op != CC_OP_LINEAR);
}

/* A buffer of bytes (and XNN_EXTRA_BYTES) of p's own. */
static void *own(struct place *p, size_t bytes)
{
    p->data = malloc(cc_xnn_padded(bytes));
    p->owns_data = p->data != NULL;
    return p->data;
}

/* Types (node by node: an int8 node stores its output as int8), then memory: activations in
 * the arena, moving reshape outputs and NHWC copies of 4-D constants read as activations in
 * buffers of their own, then which tensors a reader wants in the other type. */
bool cc_xnn_state_place(struct xnn_state *s, struct cc_error *err)
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
            if (!cc_xnn_state_reads_activation(node, i))
                continue;
            if (ten->data && !p->data) { // a constant read as an activation (f32): a
                                         // copy, in NHWC order and padded for XNNPACK
                if (!own(p, (size_t)ten->count * sizeof(float)))
                    return cc_error_set(err, "cpu backend: out of memory for constant \"%s\"",
                                        ten->name);
                cc_xnn_state_move(ten, ten->data, p->data, true, sizeof(float));
                p->constant = true;
            }
            if (p->type != want)
                p->want_other = true;
        }
        const struct cc_xnn_op_row *row = cc_xnn_op_row(node->op);
        if (row->layout && cc_xnn_state_reshape_moves(s, node)) {
            const struct cc_tensor *y = &m->tensors[node->outputs[0]];
            size_t bytes = (size_t)y->count * cc_xnn_elem_size(out->type);
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
        size_t f = cc_xnn_blis_can_run(m, &m->nodes[n], &s->steps[n])
                       ? cc_blis_conv_patch_floats(m, &m->nodes[n], cc_xnn_pool_threads(s))
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
void cc_xnn_state_poison(const struct xnn_state *s)
{
    if (!s->poison)
        return;
    const struct cc_model *m = s->model;
    cc_poison_f32(s->arena, cc_xnn_padded(s->plan.arena_size));
    for (int t = 0; t < m->n_tensors; t++) {
        const struct place *p = &s->places[t];
        size_t count = (size_t)m->tensors[t].count;
        bool i8 = p->type == STORE_QS8;
        if (p->data && !p->constant && (i8 || p->owns_data))
            (i8 ? cc_poison_i8 : cc_poison_f32)(p->data,
                                                cc_xnn_padded(count * cc_xnn_elem_size(p->type)));
        if (p->other)
            (i8 ? cc_poison_f32 : cc_poison_i8)(p->other,
                                                cc_xnn_padded(count * (i8 ? sizeof(float) : 1)));
    }
    if (s->nchw_tmp)
        cc_poison_f32(s->nchw_tmp, s->nchw_bytes);
    if (s->scratch)
        cc_poison_f32(s->scratch, s->scratch_floats * sizeof(float));
    if (s->patches)
        cc_poison_f32(s->patches, s->patch_floats * sizeof(float));
}

/* Makes t's copy in the other type and the operator that converts into it. */
bool cc_xnn_state_make_other(struct xnn_state *s, int t, uint32_t flags, struct cc_error *err)
{
    const struct cc_tensor *ten = &s->model->tensors[t];
    struct place *p = &s->places[t];
    size_t count = (size_t)ten->count;
    struct cc_act_quant q = ten->act_quant; // set: an int8 reader or writer needs it
    enum xnn_status rc;
    if (!(p->other = malloc(cc_xnn_padded(count * (p->type == STORE_F32 ? 1 : sizeof(float))))))
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
