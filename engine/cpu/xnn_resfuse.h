/* camclass — the CPU backend's residual fusion: a residual add (and its clamp, resnet's ReLU)
 * after one of our own k x k convolutions (conv3x3.h) done in that convolution's store, so the
 * convolution's output never goes to memory and the add's pass over it is gone (internal to the
 * files of the XNNPACK module). */
#ifndef CC_XNN_RESFUSE_H
#define CC_XNN_RESFUSE_H

#include <stdbool.h>

#include "xnn_state.h"

/* A residual add run by its convolution's step, as a profile names it (s->shown). */
struct xnn_shown {
    int node;    // the convolution
    char *label; // "<its name> (+ add, relu)"; owned; NULL: the add's node was not fused
};

/* The activation plan (cc_plan_init_until), with CAMCLASS_CPU_CONV3X3_RESIDUAL (on, the
 * default, or off; false with err naming any other value) read into s->resfuse (off also with
 * CAMCLASS_CPU_CONV3X3=off): where it is on, the input of every convolution that may be fused
 * below stays live until its add, so that the add's output and the nodes between the two never
 * take its memory. */
bool cc_xnn_resfuse_plan(struct xnn_state *s, struct cc_error *err);

/* With s->resfuse, for every f32 add with a clamp (resnet's ReLU, or none) whose one input is
 * the output of a k x k convolution run as STEP_DIRECT without an activation, read by that add
 * alone (not the graph's output, not tapped, wanted in no other type), the other input of the
 * same shape: the convolution's step moves to the add's place in the run, writing the add's
 * output as clamp(conv + bias + other), and the convolution's node is skipped. Not measured (it
 * only takes work away), so no letter in the layer-choice cache: called after its line is
 * written. Left alone where memory does not allow (cc_conv3x3_fuse_residual's conditions). */
void cc_xnn_resfuse(struct xnn_state *s);

/* What a profile names where node n runs: n itself; or, for an add whose convolution's step
 * runs in its place (cc_xnn_resfuse), that convolution, labelled "<conv> (+ add, relu)" (the
 * label in s->shown, owned by s), so that a reader finds the convolution's time under its own
 * name (camclass-bench --profile). */
struct cc_layer_timing cc_xnn_resfuse_timing(const struct xnn_state *s, int n, double ms);

#endif
