/* camclass — an f32 convolution with one group over NHWC activations as BLIS GEMMs, split by
 * rows of output pixels over the CPU backend's pthreadpool (internal to engine/).
 *
 * A 1x1 convolution (stride 1, no padding) is one GEMM straight on the input rows; any other
 * (3x3, 7x7, strided, padded, dilated) first gathers each task's output pixels' input patches
 * into rows of (ky, kx, c) order (im2col in NHWC: every tap is a contiguous run of C values),
 * then multiplies them by the weights repacked to the same order.
 *
 * Why: on x86-64, Debian's XNNPACK 2022 build spills an accumulator of its 5x16 FMA3 f32 GEMM
 * kernel to the stack on every step of the inner loop (GCC, 17 ymm values live for 16
 * registers), which halves its speed for every convolution with one group; BLIS's hand-written
 * kernels do not. The CPU backend times this against XNNPACK's operator for each such layer at
 * load and keeps the faster, so that on machines where XNNPACK's kernels are fine (ARM's
 * assembly kernels) they stay.
 */
#ifndef CC_BLIS_CONV_H
#define CC_BLIS_CONV_H

#include <stdbool.h>
#include <stddef.h>

#include <pthreadpool.h>

#include "error.h"
#include "model.h"

/* Most floats of gathered patches a convolution keeps at once (16 MB): a large layer (VGG's
 * first 3x3 convs at 224x224 would need 115 MB for the whole patch matrix) is done in waves of
 * tasks whose patches fit. */
#define CC_BLIS_CONV_PATCH_BUDGET ((size_t)4 << 20)

/* How a convolution's output pixels are split: `rows` pixels per task, and `wave` tasks per
 * pool call, whose patches (wave * rows * k floats) are gathered at the same time. */
struct cc_blis_conv_split {
    size_t rows, tasks, wave;
};

struct cc_blis_conv {
    const float *x;    // (h, w, c) NHWC input; not owned
    const float *w;    // (n, kh, kw, c) weights in patch order (1x1: the model's (n, c)); not owned
    const float *bias; // (n) or NULL; not owned
    float *y;          // (ho, wo, n) NHWC output; not owned
    int h, wd, c;      // input height, width, channels
    int ho, wo, n;     // output height, width, channels
    int kh, kw;        // kernel
    struct cc_conv2d_attrs attrs; // stride, padding, dilation (groups must be 1)
    struct cc_act act;            // fused activation
    struct cc_blis_conv_split split;
    float *patches; // (split.wave * split.rows, kh * kw * c) scratch for gathered patches; not
                    // owned; NULL for a 1x1 convolution, which reads x directly
    bool yield;     // the run's last operator: its last wave lets the pool's workers sleep
                    // after it (PTHREADPOOL_FLAG_YIELD_WORKERS) instead of spinning for more
};

/* Whether node (a conv2d with one group) is a plain GEMM on its input: 1x1, stride 1, no
 * padding. */
bool cc_blis_conv_is_pointwise(const struct cc_model *m, const struct cc_node *node);

/* The split of node's output pixels over `threads` threads: few large tasks, since BLIS packs
 * the whole weight matrix for every call (tasks of a few rows, to keep patches in L2, ran 5x
 * slower), at most CC_BLIS_CONV_PATCH_BUDGET floats of patches at once (with at least 32
 * rows a task and `threads` tasks a wave). */
struct cc_blis_conv_split cc_blis_conv_split(const struct cc_model *m, const struct cc_node *node,
                                             size_t threads);

/* Floats of `patches` scratch node needs on `threads` threads (0 for a 1x1 convolution). */
size_t cc_blis_conv_patch_floats(const struct cc_model *m, const struct cc_node *node,
                                 size_t threads);

/* Writes the (n, c, kh, kw) weights w in patch order (n, kh, kw, c) into out. */
void cc_blis_conv_pack_weights(const float *w, int n, int c, int kh, int kw, float *out);

/* Sets BLIS up now, while the caller can still fail cleanly: BLIS builds its kernel tables and
 * memory pools on its first GEMM (about 90 KB in 350 small mallocs, Debian 12's libblis 0.9)
 * and aborts the process when malloc fails there, so under a tight address-space limit
 * (RLIMIT_AS, a 32-bit Pi) a network's first run would die with "libblis: Aborting". Here a
 * probe of CC_BLIS_SETUP_PROBE bytes comes first: when it fails, the error names the memory and
 * nothing of BLIS's has run. Then bli_init() and one small GEMM on this thread; later GEMMs of
 * one BLIS thread reuse what these allocated. Every user of BLIS calls this before its first
 * GEMM: the CPU backend's BLIS layers, and the reference ops' (ref backend, Vulkan's CPU nodes). */
bool cc_blis_conv_setup(struct cc_error *err);

/* The probe's size: over ten times what BLIS's setup was measured to take, for other libraries'
 * versions and the C library's own bookkeeping. */
#define CC_BLIS_SETUP_PROBE ((size_t)1 << 20)

/* y = act(conv(x) + bias), on pool (NULL: the calling thread). */
void cc_blis_conv_run(const struct cc_blis_conv *p, pthreadpool_t pool);

#endif
