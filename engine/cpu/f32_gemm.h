/* camclass — the CPU backend's own f32 1x1 convolution: y = clamp(x w^T + bias) (or hardswish)
 * over NHWC activations, a register-blocked GEMM with the bias and the activation fused
 * (internal to engine/).
 *
 * Why: mobilenet_v2's late blocks (features.7-18: 14x14 and 7x7 pixels, 64-1280 channels) are
 * mostly 1x1 convolutions, and there Debian's XNNPACK 2022 f32 GEMM (a 5x16 FMA3 kernel that
 * spills an accumulator on x86-64, blis_conv.h) and BLIS (which packs the whole weight matrix
 * at every call) both lose to ONNX Runtime's AVX-512 NCHWc kernels by 1.2-1.6x. Here the
 * weights are packed once at load into panels of NR output channels (c rows of NR values), and
 * a micro-kernel keeps MR pixels x NR channels in registers for the whole sum over c: every
 * weight vector loaded serves MR pixels, every input value broadcast serves NR channels. The
 * CPU backend keeps it per layer only where it measures faster at load than XNNPACK's and
 * BLIS's way (xnn_steps.c, 'p' in the layer-choice cache).
 *
 * Kernels (struct cc_f32_pw.isa, the stem's families: stem_conv.h): AVX-512 (7 pixels x 48
 * channels: 21 zmm accumulators), AVX2+FMA (6 x 16: 12 ymm), both in f32_gemm_x86.c, and
 * portable C that compilers vectorise (4 x 16). The work is split over the backend's
 * pthreadpool in tasks of whole micro-tiles (pixel ranges times panel ranges).
 */
#ifndef CC_F32_GEMM_H
#define CC_F32_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include <pthreadpool.h>

#include "error.h"
#include "model.h"
#include "stem_conv.h"

struct cc_f32_pw {
    const float *x; // (p, c) NHWC input rows; not owned
    float *y;       // (p, n) NHWC output rows; not owned
    float *w;       // packed weights: panels of nr output channels, each (c, nr), but the last
                    // (c, nr_last); zeros past n; 64-byte aligned; owned
    float *bias;    // (n_pad), zeros where there is none and past n; 64-byte aligned; owned
    size_t p;       // pixels (rows of x and y)
    int c, n, n_pad;
    int mr, nr;   // the kernel's pixels and channels at once (isa's)
    int nr_last;  // the last panel's channels: n's rest rounded up to the isa's vector, so
                  // that n = 64 wastes no 48 - 16 lanes of a second 48-wide panel
    float lo, hi; // the fused clamp (unused with hswish)
    bool hswish;  // the fused activation is hardswish, x * min(max(x * (1/6) + 1/2, 0), 1)
                  // (as XNNPACK's and the fused block's), not the clamp: mobilenet_v3's
                  // expand convs, otherwise an XNNPACK conv and a hardswish pass after it
    enum cc_stem_isa isa;
    size_t task_rows; // pixels a task computes (a multiple of mr), all panels of them or
    int task_panels;  // this many panels of them
    bool yield;       // the run's last operator: the pool's workers sleep after it
};

/* What CAMCLASS_CPU_PW asks for, as CAMCLASS_CPU_STEM does for the stem (struct
 * cc_stem_mode): unset or "measure" (default: where it measures faster, remembered in the
 * layer-choice cache), "off", "on" (every 1x1 convolution it applies to, the host's best
 * kernels) or a kernel family "avx512", "avx2", "c". False with one line in err otherwise, or
 * for kernels this CPU cannot run. */
bool cc_f32_pw_mode_parse(const char *value, struct cc_stem_mode *mode, struct cc_error *err);

/* The kernel of one isa: rows [r0, r0 + rows) (whole micro-tiles but maybe the last) times
 * panels [q0, q0 + panels) of p. */
typedef void cc_f32_pw_tile_fn(const struct cc_f32_pw *p, size_t r0, size_t rows, int q0,
                               int panels);

/* Panels of p's packed weights: ceil(n / nr). */
static inline int cc_f32_pw_panels(const struct cc_f32_pw *p)
{
    return (p->n + p->nr - 1) / p->nr;
}

/* Whether node (of m) is an f32 1x1 convolution this runs: f32 weights, stride 1, no padding,
 * one group, a clamp activation (ReLU6, ReLU, none) or hardswish. */
bool cc_f32_pw_applies(const struct cc_model *m, const struct cc_node *node);

/* Packs w (n, c) and bias (n, or NULL) for isa's kernels for p pixels over `threads` threads,
 * reading x and writing y at each run, act a clamp or hardswish; false with err set on out of
 * memory or an isa this build and CPU do not run. p is then finished with cc_f32_pw_finish. */
bool cc_f32_pw_init(struct cc_f32_pw *p, const float *w, const float *bias, size_t pixels, int c,
                    int n, struct cc_act act, enum cc_stem_isa isa, size_t threads,
                    struct cc_error *err);

/* cc_f32_pw_init for node's weights and bias (i8 weights dequantized), shapes and activation. */
bool cc_f32_pw_init_node(struct cc_f32_pw *p, const struct cc_model *m, const struct cc_node *node,
                         enum cc_stem_isa isa, size_t threads, struct cc_error *err);

/* y = act(x w^T + bias), on pool (NULL: the calling thread). */
void cc_f32_pw_run(const struct cc_f32_pw *p, pthreadpool_t pool);

/* Frees what init allocated; accepts a zeroed or half-built p. */
void cc_f32_pw_finish(struct cc_f32_pw *p);

#if defined(__x86_64__)
cc_f32_pw_tile_fn cc_f32_pw_tile_avx512, cc_f32_pw_tile_avx2;
enum { CC_F32_PW_MR512 = 7, CC_F32_PW_NR512 = 48, CC_F32_PW_MR256 = 6, CC_F32_PW_NR256 = 16 };
#endif

#endif
