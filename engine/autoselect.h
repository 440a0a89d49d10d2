/* camclass — backend auto (internal to engine/): which backend runs a model when the user
 * did not say.
 *
 * When both the Vulkan and the CPU backend can run the model, each is timed on it (one
 * warm-up run each, then runs taken in turn so that machine load hits both alike: at least
 * AUTO_MIN_RUNS each, about AUTO_BUDGET_MS in all, the median of each), the faster is kept
 * and the other destroyed. The choice is remembered per (model, Vulkan device, CPU backend
 * with its thread count) in a small text file in the user's cache directory, so that later
 * starts skip the measurement (and, when the CPU won, never build the Vulkan backend: its
 * device name comes from a Vulkan instance alone). One line on opts->notices says which and
 * why:
 *
 *     camclass: auto: cpu 6.1 ms, vulkan (llvmpipe (LLVM 15.0.6, 256 bits)) 41.0 ms -> cpu
 *     camclass: auto: cpu (measured earlier: cpu 6.1 ms, vulkan 41.0 ms; ~/.cache/camclass/...)
 *
 * A backend whose runs fail while being timed loses, the line says "failed (why)" in place
 * of its time, and nothing is remembered. When only one backend can be created, it is used
 * with a notice naming why the other could not. The ref backend is never chosen.
 */
#ifndef CC_AUTOSELECT_H
#define CC_AUTOSELECT_H

#include "backend.h"

/* Creates the chosen backend for model into *state; returns its table, or NULL with err set
 * when no backend can run the model. */
const struct cc_backend_ops *cc_autoselect(const struct cc_model *model,
                                           const struct cc_engine_options *opts, void **state,
                                           struct cc_error *err);

#endif
