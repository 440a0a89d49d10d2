/* camclass — activation memory plan, shared by the backends.
 *
 * Every activation tensor (no constant data) gets an offset in one arena; tensors whose
 * lifetimes (first producer .. last consumer, in node order) do not overlap share memory.
 * The graph input and the output tensor are never shared with anything, so they can be
 * written/read between runs; so is a kept tensor (cc_plan_init_keep: the engine's tap).
 */
#ifndef CC_PLAN_H
#define CC_PLAN_H

#include <stddef.h>

#include "error.h"
#include "model.h"

struct cc_plan {
    size_t *offset;    // (model->n_tensors) byte offset in the arena; SIZE_MAX for constants
    size_t arena_size; // bytes
    size_t naive_size; // bytes without reuse (for reports)
};

/* Plans model's activations with every offset a multiple of align (power of two).
 * Reshape/flatten outputs alias their input (same offset). */
bool cc_plan_init(struct cc_plan *plan, const struct cc_model *model, size_t align,
                  struct cc_error *err);
/* The same, with tensor keep (-1: none) live for the whole run like the output, so that it
 * can be read after a run (struct cc_engine_options.tap). */
bool cc_plan_init_keep(struct cc_plan *plan, const struct cc_model *model, size_t align, int keep,
                       struct cc_error *err);
/* The same, with tensor t also live until node until[t] where until[t] >= 0 (until: NULL, or
 * (n_tensors)): a backend that moves a read of t later (the CPU backend's residual fusion,
 * engine/cpu/xnn_resfuse.h, runs a convolution at its add's place) keeps t's memory whole. */
bool cc_plan_init_until(struct cc_plan *plan, const struct cc_model *model, size_t align, int keep,
                        const int *until, struct cc_error *err);

void cc_plan_finish(struct cc_plan *plan);

#endif
