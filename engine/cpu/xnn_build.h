/* camclass — the CPU backend's op table: how one node becomes XNNPACK operators (and C loops
 * where XNNPACK has none), internal to xnn_backend.c, xnn_build.c and xnn_build_zoo.c, the files
 * of the XNNPACK module (xnn_work.c: the pieces of a node's work); no other module includes
 * XNNPACK's headers.
 *
 * A node runs in f32, or in int8 (QS8 activations, per-output-channel QC8 weights, int32
 * biases) when the op has an int8 variant and its activation tensors carry a quantization
 * (model.h cc_act_quant). The backend decides which (cc_xnn_runs_int8), places every tensor in
 * the type its readers want, and calls the row's build once at load.
 */
#ifndef CC_XNN_BUILD_H
#define CC_XNN_BUILD_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include "error.h"
#include "model.h"

/* One piece of a node's work: an XNNPACK operator, or a C loop over the pool where XNNPACK has
 * no operator (hardsigmoid, the multiply of SiLU, PyTorch's count_include_pad pooling). */
struct cc_xnn_part {
    xnn_operator_t op;                  // owned, created and set up at load; NULL for a loop
    pthreadpool_task_1d_tile_1d_t task; // a loop: task(ctx, start, count) over [0, range)
    void *ctx;                          // the loop's arguments; owned (free())
    size_t range, tile;                 // the loop's items, and items per task
    uint32_t flags;                     // the loop's pthreadpool flags
};

/* The work of one node: its parts, run in order. Owned by the backend's step. */
struct cc_xnn_work {
    struct cc_xnn_part *parts; // (n_parts); owned
    int n_parts;
};

/* Runs w's parts in order on pool; false with err naming node n. */
bool cc_xnn_work_run(const struct cc_xnn_work *w, pthreadpool_t pool, const struct cc_node *n,
                     struct cc_error *err);

/* Deletes w's operators and frees its loops; leaves w empty. Accepts an empty w. */
void cc_xnn_work_finish(struct cc_xnn_work *w);

/* What a build function gets. Pointers are the node's tensors in this backend's layout (4-D
 * activations NHWC) and in the node's arithmetic type: float for f32, int8_t for int8. */
struct cc_xnn_build {
    const struct cc_model *model;
    const struct cc_node *node;
    bool int8;
    const void *in[CC_MAX_NODE_INPUTS]; // every input; weights are read from the model itself
    void *out;
    float *scratch;     // cc_xnn_scratch_floats(node) floats for this node's run alone; shared
                        // with other nodes, not owned; NULL when none is needed
    pthreadpool_t pool; // NULL: the calling thread alone
    uint32_t flags;     // XNN_FLAG_YIELD_WORKERS on the model's last operator: a build puts it
                        // on its last part
    struct cc_error *err;
};

struct cc_xnn_op_row {
    /* Appends the node's parts (operators created and set up) to *w; false with err set (what
     * it appended stays in *w for the caller to finish). NULL for layout ops. */
    bool (*build)(const struct cc_xnn_build *b, struct cc_xnn_work *w);
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

/* v as int8 in quantization q, saturated; an infinite v is the open end of the range. */
int8_t cc_xnn_quantize_bound(float v, struct cc_act_quant q);

/* n f32 biases as int32 at in_scale * w_scales[o], rounded half to even, saturated: what the
 * int8 convolutions get (also the int8 fused block's, fused_q8.c). */
void cc_xnn_bias_i32(const float *bias, int64_t n, float in_scale, const float *w_scales,
                     int32_t *q);

/* Floats of scratch memory node n's build needs in b->scratch (0: none). */
size_t cc_xnn_scratch_floats(const struct cc_model *m, const struct cc_node *n);

/* "xnn_status_invalid_parameter" etc. */
const char *cc_xnn_status_name(enum xnn_status st);

/* Fails with one line naming the call, the node and XNNPACK's status, and the way out. */
bool cc_xnn_failed(const char *call, const struct cc_node *n, enum xnn_status st,
                   struct cc_error *err);

/* ------------------------------------------------------------------------------------------
 * For the build functions (xnn_build.c, xnn_build_zoo.c)
 */

/* true when rc is xnn_status_success; else fails with cc_xnn_failed(call, b's node). */
bool cc_xnn_check(const struct cc_xnn_build *b, const char *call, enum xnn_status rc);

/* Fails b with "out of memory building node ..." (false). */
bool cc_xnn_no_memory(const struct cc_xnn_build *b);

/* A new, empty operator slot at the end of w (filled by an xnn_create_*), or NULL with b->err
 * set on out of memory. */
xnn_operator_t *cc_xnn_new_op(const struct cc_xnn_build *b, struct cc_xnn_work *w);

/* Appends a C loop: task(ctx, start, count) over [0, range) in tiles of tile items, on the
 * pool. w takes ctx (a malloc'd block) even when this fails (out of memory, b->err set).
 * last: the node's last part (it gets the yield of b->flags). */
bool cc_xnn_add_loop(const struct cc_xnn_build *b, struct cc_xnn_work *w,
                     pthreadpool_task_1d_tile_1d_t task, void *ctx, size_t range, size_t tile,
                     bool last);

/* The flags for the operator that computes the node's value before its activation: b->flags,
 * unless the activation runs as parts of its own after it (a kind other than clamp). */
uint32_t cc_xnn_main_flags(const struct cc_xnn_build *b);

/* Appends the parts that make y = act(x) for n f32 values (x == y: in place) where act is the
 * node's activation of a kind other than clamp (which fuses into the operators as their
 * output_min/output_max); appends nothing for a clamp. The last part gets b->flags. */
bool cc_xnn_act(const struct cc_xnn_build *b, struct cc_xnn_work *w, const float *x, float *y,
                size_t n);

#endif
