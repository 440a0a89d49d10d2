/* camclass — a 1x1 convolution (stride 1, no padding, one group) over NHWC activations as
 * BLIS GEMMs, split by rows over the CPU backend's pthreadpool (internal to engine/).
 *
 * Why: on x86-64, Debian's XNNPACK 2022 build spills an accumulator of its 5x16 FMA3 f32 GEMM
 * kernel to the stack on every step of the inner loop (GCC, 17 ymm values live for 16
 * registers), which halves its speed; BLIS's hand-written kernels do not. The CPU backend
 * times this against XNNPACK's operator for each such layer at load and keeps the faster,
 * so that on machines where XNNPACK's kernels are fine (ARM's assembly kernels) they stay.
 */
#ifndef CC_BLIS_POINTWISE_H
#define CC_BLIS_POINTWISE_H

#include <stddef.h>

#include <pthreadpool.h>

#include "model.h"

struct cc_blis_pointwise {
    const float *x;    // (m, k) NHWC input rows; not owned
    const float *w;    // (n, k) weights, as the model stores a 1x1 conv's; not owned
    const float *bias; // (n) or NULL; not owned
    float *y;          // (m, n) NHWC output rows; not owned
    size_t m, k, n;    // pixels, input channels, output channels
    struct cc_act act; // fused activation
    size_t rows;       // pixels per task: the work is split into ceil(m / rows) tasks
};

/* y = act(x w^T + bias), on pool (NULL: the calling thread). */
void cc_blis_pointwise_run(const struct cc_blis_pointwise *p, pthreadpool_t pool);

#endif
