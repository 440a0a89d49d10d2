/* camclass — the CPU backend's builds for the ops of the torchvision zoo: max and
 * average pooling, concat, slice and shuffle of channels, mul. Rows of xnn_build.c's table
 * (internal to the XNNPACK module, see xnn_build.h); f32 only for now.
 */
#ifndef CC_XNN_BUILD_ZOO_H
#define CC_XNN_BUILD_ZOO_H

#include "xnn_build.h"

/* max_pool2d and avg_pool2d: XNNPACK's pooling where it computes PyTorch's semantics exactly,
 * a C loop over NHWC rows where it cannot (see xnn_build_zoo.c). */
bool cc_xnn_build_pool2d(const struct cc_xnn_build *b, struct cc_xnn_work *w);

/* concat along channels: in NHWC one strided copy per input into its channels of each pixel. */
bool cc_xnn_build_concat(const struct cc_xnn_build *b, struct cc_xnn_work *w);

/* slice of channels: one strided copy. */
bool cc_xnn_build_slice(const struct cc_xnn_build *b, struct cc_xnn_work *w);

/* channel_shuffle: XNNPACK's channel shuffle over pixels. */
bool cc_xnn_build_channel_shuffle(const struct cc_xnn_build *b, struct cc_xnn_work *w);

/* mul: elementwise, or input 1 [1,C,1,1] broadcast over the pixels; fused activation. */
bool cc_xnn_build_mul(const struct cc_xnn_build *b, struct cc_xnn_work *w);

#endif
