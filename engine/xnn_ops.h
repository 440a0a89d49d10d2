/* camclass — the CPU backend's op table: how one node becomes an XNNPACK operator
 * (internal to xnn_backend.c and xnn_ops.c, the two files of the XNNPACK module; no other
 * module includes XNNPACK's headers).
 *
 * A node runs in f32, or in int8 (QS8 activations, per-output-channel QC8 weights, int32
 * biases) when the op has an int8 variant and its activation tensors carry a quantization
 * (model.h cc_act_quant). The backend decides which (cc_xnn_runs_int8), places every tensor in
 * the type its readers want, and calls the row's build once at load.
 */
#ifndef CC_XNN_OPS_H
#define CC_XNN_OPS_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include "error.h"
#include "model.h"

/* What a build function gets. Pointers are the node's tensors in this backend's layout (4-D
 * activations NHWC) and in the node's arithmetic type: float for f32, int8_t for int8. */
struct cc_xnn_build {
    const struct cc_model *model;
    const struct cc_node *node;
    bool int8;
    const void *in[CC_MAX_NODE_INPUTS]; // every input; weights are read from the model itself
    void *out;
    pthreadpool_t pool; // NULL: the calling thread alone
    uint32_t flags;     // XNN_FLAG_YIELD_WORKERS on the model's last operator
    struct cc_error *err;
};

struct cc_xnn_op_row {
    /* Creates and sets up the node's operator into *op; false with err set. NULL for
     * layout ops. */
    bool (*build)(const struct cc_xnn_build *b, xnn_operator_t *op);
    bool has_int8; // build takes b->int8 (layout ops: move int8 values as they are)
    bool layout;   // reshape/flatten: no operator, a layout step done by the backend itself
};

/* The row of op; NULL when the CPU backend does not implement it. */
const struct cc_xnn_op_row *cc_xnn_op_row(enum cc_op op);

/* Whether node n runs in int8: its op has an int8 variant, its activation inputs and its output
 * are quantized, conv2d/linear weights are i8, and (clamp, reshape, flatten: ops that only move
 * or clip values) input and output share one quantization. in_int8: whether its first input is
 * stored as int8 here (reshape/flatten follow their input). */
bool cc_xnn_runs_int8(const struct cc_model *m, const struct cc_node *n, bool in_int8);

/* "xnn_status_invalid_parameter" etc. */
const char *cc_xnn_status_name(enum xnn_status st);

/* Fails with one line naming the call, the node and XNNPACK's status, and the way out. */
bool cc_xnn_failed(const char *call, const struct cc_node *n, enum xnn_status st,
                   struct cc_error *err);

#endif
