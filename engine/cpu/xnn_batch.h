/* camclass — the CPU backend's batch model (cc_engine_run_batch, internal to the XNNPACK module):
 * the model with every activation's first dimension (the batch, 1 in every model camclass
 * loads) set to n, so that a second backend state built on it (xnn_backend.c) sets XNNPACK's
 * operators up for n images at once. The copy shares everything with the model but its tensor
 * table: names, constants and nodes are the model's, not copied and not owned.
 *
 * Only XNNPACK's own operators run a batch: the state made on it is built with cpu_pointwise
 * XNNPACK (no BLIS GEMMs), and the direct stem and the fused blocks refuse a first dimension
 * other than 1 (stem_conv.c, fused_block.c), so they are not used either.
 */
#ifndef CC_XNN_BATCH_H
#define CC_XNN_BATCH_H

#include <stdbool.h>

#include "error.h"
#include "model.h"

/* Whether m can run as a batch here; false with err saying why otherwise: a node reads a
 * constant as an activation (that constant has no batch dimension), or an activation's first
 * dimension is not 1. */
bool cc_xnn_batch_possible(const struct cc_model *m, struct cc_error *err);

/* The batch-n copy of m into *out; its tensor table is owned (cc_xnn_batch_model_finish). False
 * with err when m cannot run as a batch here: a node reads a constant as an activation (that
 * constant has no batch dimension), or an activation's first dimension is not 1. */
bool cc_xnn_batch_model(const struct cc_model *m, int n, struct cc_model *out,
                        struct cc_error *err);

/* Frees what cc_xnn_batch_model made; accepts a zeroed model. */
void cc_xnn_batch_model_finish(struct cc_model *batch);

#endif
