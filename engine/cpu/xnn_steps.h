/* camclass — the CPU backend's steps (xnn_state.h struct step): each node's XNNPACK operators
 * built in run order, and where another way may be faster — BLIS GEMMs, the direct stem, a
 * fused inverted-residual block — the choice between them, measured at load or remembered in
 * the layer-choice cache (see xnn_backend.c's header for the ways). */
#ifndef CC_XNN_STEPS_H
#define CC_XNN_STEPS_H

#include <stdbool.h>

#include "xnn_state.h"

/* Activation reads of the graph input: how many (only_stems: whether all are direct stems). */
int cc_xnn_steps_input_reads(const struct xnn_state *s, bool *only_stems);

/* Whether no operator runs after node n's (its output's conversion included): n's is then the
 * run's last, whose pool workers sleep after it (XNN_FLAG_YIELD_WORKERS, see build_steps). */
bool cc_xnn_steps_runs_last(const struct xnn_state *s, int n);

/* build_steps with the measured BLIS/XNNPACK/stem choices remembered in the cache file
 * (xnn_choices.h), keyed by the model hash, thread count, CPU and CAMCLASS_CPU_ISA: a later start
 * with the same key times nothing (that matters on a Pi or in an emulator, where timing 34 layers
 * takes seconds). A file that does not parse, or whose line does not fit the model, is measured
 * again and rewritten; one that cannot be written is not an error (the next start measures again).
 * With CAMCLASS_CPU_STEM set, the file is read but not written: a benchmark switching the stem
 * leaves the other layers' choices as the cache has them and the cache as it was. Timed on a
 * crowded machine (choice_watch.h), they serve this engine and are not written. */
bool cc_xnn_steps_build(struct xnn_state *s, const struct cc_engine_options *opts, int threads,
                        struct cc_error *err);

#endif
