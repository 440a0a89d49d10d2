/* camclass — per-op rules used by cc_model_finalize (internal to engine/).
 *
 * The op table (names, input counts, whether a fused activation is allowed, shape inference)
 * is in op_rules.c; cc_op_name/cc_op_from_name (model.h) read it too.
 */
#ifndef CC_OP_RULES_H
#define CC_OP_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "model.h"

/* Writes "[1,3,224,224]" into buf (always NUL-terminated) and returns buf. */
const char *cc_shape_str(char *buf, size_t size, int ndim, const int64_t *d);
#define CC_SHAPE_BUF 64
#define CC_TSHAPE(buf, t) cc_shape_str((buf), sizeof(buf), (t)->ndim, (t)->shape)

/* Checks one node against its op's rules: input count, activation, input shapes, and the
 * computed output shape against the declared one. err names the node and tensor at fault. */
bool cc_op_check_node(const struct cc_model *m, const struct cc_node *n, struct cc_error *err);

/* The output height or width of a max_pool2d/avg_pool2d over `in` (PyTorch's rule, see
 * struct cc_pool_attrs). */
int64_t cc_pool_out_size(int64_t in, int k, int s, int pad_lo, int pad_hi, bool ceil_mode);

#endif
