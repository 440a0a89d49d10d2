/* camclass — the CPU backend's direct stem: the first convolution of an image network (3x3,
 * stride 2, 3 input channels, one group: mobilenet_v2's features.0.0, 3 -> 32 at 224x224)
 * computed straight from the caller's NCHW input into the NHWC output the next layer reads,
 * with the bias and the clamp (ReLU6, ReLU, none) fused (internal to engine/).
 *
 * Why: XNNPACK runs this layer as an indirect GEMM with K = 27 on an NHWC copy of the input,
 * which the backend first transposes from the caller's NCHW order in a scalar pass of its
 * own: 1.84 ms, 7.5 % of a mobilenet_v2 run at ~6 GFLOP/s on a Zen 3 core. Here
 * every output pixel reads its 27 inputs from the three planes where they are and multiplies
 * them by the weights packed as 27 rows of output channels, so a block of 4 pixels x 32
 * channels stays in registers for all 27 taps; there is no transposed copy and no indirection
 * buffer. The CPU backend keeps it only where it measures faster at load than the layer's
 * other path plus the input transpose (xnn_backend.c), and CAMCLASS_CPU_STEM switches it for
 * benchmarks and tests (cc_stem_mode_parse).
 *
 * Kernels (struct cc_stem_conv.isa): AVX-512 and AVX2+FMA (intrinsics, x86-64, chosen at run
 * time from what the CPU has), NEON (AArch64: stem_conv_arm.c), and portable C that compilers
 * vectorise (every other CPU). All
 * split the output rows over the backend's pthreadpool, one row per task.
 */
#ifndef CC_STEM_CONV_H
#define CC_STEM_CONV_H

#include <stdbool.h>

#include <pthreadpool.h>

#include "error.h"
#include "model.h"

/* The kernel families, worst to best of those a CPU runs (x86-64: c, avx2, avx512; AArch64: c,
 * neon). */
enum cc_stem_isa { CC_STEM_C, CC_STEM_AVX2, CC_STEM_AVX512, CC_STEM_NEON, CC_STEM_ISA_COUNT };

/* What CAMCLASS_CPU_STEM asks for: unset or "measure" (default: the stem where it measures
 * faster, remembered in the layer-choice cache), "off" (never: the layer runs as before), "on"
 * (always where it applies, with the host's best kernels) or a kernel family "avx512",
 * "avx2", "neon", "c" (always, with those kernels). */
struct cc_stem_mode {
    enum { CC_STEM_MEASURE, CC_STEM_OFF, CC_STEM_ON } kind;
    enum cc_stem_isa isa; // CC_STEM_ON: the kernels; else the host's best
};

/* Parses CAMCLASS_CPU_STEM's value (NULL: unset); false with one line in err when it is not
 * one of the values above, or names kernels this CPU cannot run. */
bool cc_stem_mode_parse(const char *value, struct cc_stem_mode *mode, struct cc_error *err);

/* A variable that picks kernels of these families as CAMCLASS_CPU_STEM does (measure, off, on,
 * or a family), for the other kernels that share them (CAMCLASS_CPU_PW: f32_gemm.h). */
struct cc_isa_mode_spec {
    const char *var;      // the variable, for messages: "CAMCLASS_CPU_STEM"
    const char *mode;     // what a value is, for messages: "a stem mode"
    const char *kernels;  // what a family has, for messages: "kernels"
    const char *families; // the families one may name, for messages: "avx512, avx2, neon, c"
    bool (*built)(enum cc_stem_isa isa); // whether this code has the family's kernels
};

/* value (NULL or "": measure) read as spec says into mode, the host's best built family
 * chosen for measure and on; false with one line in err naming the variable and the way out. */
bool cc_isa_mode_parse(const struct cc_isa_mode_spec *spec, const char *value,
                       struct cc_stem_mode *mode, struct cc_error *err);

/* Whether this build and CPU run isa's kernels (the fused block's too: fused_block.h), and
 * the best family that they do. */
bool cc_stem_isa_runs(enum cc_stem_isa isa);
enum cc_stem_isa cc_stem_isa_best(void);

/* "avx512", "avx2", "neon", "c". */
const char *cc_stem_isa_name(enum cc_stem_isa isa);

/* Whether node (of m) is a convolution the stem computes: f32 weights or i8 ones (dequantized
 * here), [O, 3, 3, 3], stride 2, dilation 1, one group, a clamp activation (any padding). The
 * backend also asks that it read the graph input, stored f32. */
bool cc_stem_conv_applies(const struct cc_model *m, const struct cc_node *node);

struct cc_stem_conv {
    float *w;    // (27, n_pad): tap ((ky * 3 + c) * 3 + kx)'s row of output channels, zeros
                 // past n; 64-byte aligned; owned
    float *bias; // (n_pad), zeros where the model has none and past n; owned
    float *y;    // (ho, wo, n) NHWC output; not owned
    int h, w_in, ho, wo, n, n_pad;
    int pad_top, pad_left;
    float lo, hi; // the fused clamp
    enum cc_stem_isa isa;
    bool yield; // the model's last operator: the pool's workers sleep after it, as after
                // XNNPACK's last (XNN_FLAG_YIELD_WORKERS), instead of spinning between frames
};

/* Packs node's weights and bias for isa's kernels and writes y (the output's NHWC buffer);
 * false with err set on out of memory. p is then finished with cc_stem_conv_finish. */
bool cc_stem_conv_init(struct cc_stem_conv *p, const struct cc_model *m, const struct cc_node *node,
                       enum cc_stem_isa isa, float *y, bool yield, struct cc_error *err);

/* Frees what init allocated; accepts a zeroed or half-built p. */
void cc_stem_conv_finish(struct cc_stem_conv *p);

/* y = clamp(conv(x) + bias) with x the (3, h, w_in) NCHW input (any alignment), on pool
 * (NULL: the calling thread), one output row per task. */
void cc_stem_conv_run(const struct cc_stem_conv *p, const float *x, pthreadpool_t pool);

/* ------------------------------------------------------------------------------------------
 * For the kernels (stem_conv.c, stem_conv_x86.c)
 */

/* One output row as a kernel sees it. */
struct cc_stem_row {
    const float *in[3][3]; // [ky][c]: input row 2 * oy - pad_top + ky of channel c; NULL (for
                           // every c) where that row is in the padding
    float *y;              // the output row: (wo, n)
    int ox0, ox1;          // the interior pixels [ox0, ox1): their 3 columns are all inside
};

/* Every pixel and channel of row r (the x86-64 and AArch64 kernels): the interior ones in blocks,
 * the others one by one with their columns checked. */
void cc_stem_conv_row_avx512(const struct cc_stem_conv *p, const struct cc_stem_row *r);
void cc_stem_conv_row_avx2(const struct cc_stem_conv *p, const struct cc_stem_row *r);
void cc_stem_conv_row_neon(const struct cc_stem_conv *p, const struct cc_stem_row *r);

#endif
