/* camclass — timing the CPU backend's candidate steps (internal to engine/cpu): how
 * xnn_steps.c measures one way of running a node (or a fused block) against another at engine
 * creation, on the arena, each timed run judged by the load-time watch (choice_watch.h). */
#ifndef CC_XNN_TIMING_H
#define CC_XNN_TIMING_H

#include <stdbool.h>

#include "xnn_state.h"

/* The least time of runs runs of step st on node, each run watched (choice_watch.h).
 * probe: an NCHW input for a stem step, or (others) the input to transpose into the graph
 * input's place first (and, for an int8 step, to convert to int8), in the timed time (NULL:
 * none). */
double cc_xnn_min_time(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                       const float *probe, int runs);

/* One run of st before it is timed, not watched: its time is discarded (first touches of
 * memory). */
void cc_xnn_warm_up(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                    const float *probe);

/* Whether step a (with input pa, as cc_xnn_min_time's probe) measures faster than b (pb) on
 * node: a warm-up run of each, then the least of runs runs each, a and b in turn, so that a
 * slow spell of a shared host (docs/PERFORMANCE.md) falls on both. With all of a's runs before
 * b's, one load of the int8 mobilenet_v2 gave XNNPACK the 7x7 projects, which ours runs 30 %
 * faster in the network. */
bool cc_xnn_faster(struct xnn_state *s, const struct cc_node *node, const struct step *a,
                   const float *pa, const struct step *b, const float *pb, int runs);

/* Whether f's fused step measures faster than its steps. Each run starts as in a network run,
 * with the tensors larger than L2 that the block writes out of the caches (xnn_timing.c's
 * block_evict): timed hot, over and over, the layers never paid for writing their expanded tensor
 * to memory, and measured faster than the fused block where in the network they are slower
 * (mobilenet_v2's features.2, 0.62 against 0.49 ms in the network, 0.41 against 0.46 at load). The
 * two ways run in turn, one run each (the layers' run: each step once), 5 times (FUSED_RUNS) after
 * a warm-up pair, so that a burst of other load hits both alike, and their least times are compared
 * (the layers' least whole run, not the sum of each step's least time, which no run reaches under
 * load). */
bool cc_xnn_fused_faster(struct xnn_state *s, const struct cc_fused_match *f,
                         const struct step *fused);

#endif
