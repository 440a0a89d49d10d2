/* camclass — plain C implementation of every op: the reference that each Vulkan kernel is
 * tested against, and what the ref backend runs (ref_backend.c).
 *
 * Layouts are the bundle's: activations NCHW with batch 1 (so [C][H][W] contiguous), conv
 * weights [O][C/groups][kh][kw], linear weights [N][K]. Sums are accumulated in float, as
 * PyTorch's CPU kernels do; the order of the terms may differ from PyTorch's, which is why
 * tests compare with a tolerance.
 *
 * Every function here is pure: it reads its inputs, writes its output and keeps no state, so
 * several threads may run different parts of one op at once (see struct cc_ref_part).
 * Inputs and output must not overlap, except for flatten/reshape (which may alias).
 */
#ifndef CC_REF_OPS_H
#define CC_REF_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* Everything one conv2d needs besides its data. */
struct cc_conv2d_desc {
    int c, h, w;   // input channels, height, width
    int o, kh, kw; // output channels, kernel height, width
    int ho, wo;    // output height, width
    struct cc_conv2d_attrs attrs;
    struct cc_act act;
};

/* Floats of scratch memory cc_cpu_conv2d needs for d (0 when none). */
size_t cc_cpu_conv2d_scratch(const struct cc_conv2d_desc *d);

/* Computes output channels [o_begin, o_end) of a conv2d (0, d->o for all of it).
 * x: (c, h, w); w: (o, c/groups, kh, kw); bias: (o) or NULL; y: (o, ho, wo); scratch:
 * cc_cpu_conv2d_scratch(d) floats for this call alone (NULL when that is 0). */
void cc_cpu_conv2d(const struct cc_conv2d_desc *d, const float *x, const float *w,
                   const float *bias, float *y, int o_begin, int o_end, float *scratch);

/* y = act(a + b); n values. */
void cc_ref_add(const float *a, const float *b, float *y, size_t n, struct cc_act act);

/* y[c] = mean of x[c][0..hw). */
void cc_ref_global_avg_pool(const float *x, float *y, int c, int hw);

/* Computes outputs [n_begin, n_end) of y = act(w x + bias). x: (k); w: (n, k); bias: (n) or
 * NULL; y: (n). */
void cc_ref_linear(const float *x, const float *w, const float *bias, float *y, int k, int n_begin,
                   int n_end, struct cc_act act);

/* y = softmax(x) over n values, max-subtracted (stable for large inputs). y may alias x. */
void cc_ref_softmax(const float *x, float *y, int n);

/* y = act(x); n values. y may alias x. */
void cc_ref_clamp(const float *x, float *y, size_t n, struct cc_act act);

/* Applies act (any kind) to n values in place. */
void cc_ref_act_span(float *y, size_t n, struct cc_act act);

/* Everything one max_pool2d/avg_pool2d needs besides its data. */
struct cc_pool_desc {
    int c, h, w;  // channels, input height, width
    int ho, wo;   // output height, width
    struct cc_pool_attrs attrs;
    bool max;     // max_pool2d; else avg_pool2d
};

/* Computes channels [c_begin, c_end) of a pool. x: (c, h, w); y: (c, ho, wo). */
void cc_cpu_pool2d(const struct cc_pool_desc *d, const float *x, float *y, int c_begin, int c_end);

/* y = act(a * b) over n values; b_every = 1: b has n values too; else b[i / b_every] (one
 * scale per channel of b_every values). */
void cc_ref_mul(const float *a, const float *b, float *y, size_t n, size_t b_every,
                struct cc_act act);

/* ShuffleNet's channel shuffle: y channel i * groups + j = x channel j * (c / groups) + i, each
 * channel hw values. */
void cc_ref_channel_shuffle(const float *x, float *y, int c, size_t hw, int groups);

/* ------------------------------------------------------------------------------------------
 * Node level: the op table.
 */

/* Which share of a node's work to do: part p of n_parts (0 <= p < n_parts). Ops that cannot
 * split do everything in part 0 and nothing in the others. scratch: the op's scratch floats
 * (see struct cc_ref_op), this part's alone. */
struct cc_ref_part {
    int p, n_parts;
    float *scratch;
};

/* Runs one node of a finalized model. in[i]: data of node->inputs[i] (NULL for an absent
 * optional bias); out: data of node->outputs[0]. */
typedef void (*cc_ref_op_fn)(const struct cc_model *m, const struct cc_node *node,
                             const float *const *in, float *out, struct cc_ref_part part);

struct cc_ref_op {
    enum cc_op op;
    cc_ref_op_fn run;
    bool splits; // run divides the work over parts (worth handing to several threads)
    // Floats of scratch memory each part needs for node; NULL when the op needs none.
    size_t (*scratch)(const struct cc_model *m, const struct cc_node *node);
};

/* The table entry for op; NULL when the CPU has no implementation. */
const struct cc_ref_op *cc_ref_op_find(enum cc_op op);

/* Fills d from a conv2d node of a finalized model (shapes from its tensors). */
void cc_cpu_conv2d_desc_from_node(const struct cc_model *m, const struct cc_node *node,
                                  struct cc_conv2d_desc *d);

#endif
