/* camclass — the CPU backend's own int8 stem (internal to engine/): the first convolution of an
 * int8 image network (stem_conv.h's shape: 3x3, stride 2, 3 input channels, one group, a clamp;
 * mobilenet_v2's features.0.0, 3 -> 32 at 224x224) with QC8 weights, computed from the caller's
 * f32 NCHW input with the input's quantization fused into the read. It computes exactly what
 * the per-layer path computes: XNNPACK's f32 -> QS8 convert of the input (q = clamp(round-half-
 * even(x * (1 / sx)) + zx), the multiplier 1 / sx in f32), then XNNPACK's QC8 convolution
 * (q8_gemm.h's formulas), so the stem's int8 output equals XNNPACK's value for value.
 *
 * Why: XNNPACK runs the int8 stem as an indirect GEMM with K = 27 (its QC8 kernels multiply
 * with vpmaddwd), after the backend has transposed the input to NHWC and converted it to int8
 * in two passes of their own. Here each band of output rows quantizes the input rows it reads
 * (three channels of a row side by side, padded with the zero point: the padding's value) into
 * a buffer of its own, and q8_gemm.h's kernels read each output pixel's 3x3 window from there in
 * place: group g = ky * 3 + c of the 4-byte groups is the 4 bytes at column 2 * ox + (0..3)
 * of input row ky's channel c (the fourth with a zero weight), so K = 36, pixels 2 bytes apart
 * (lda 2), groups one buffer row apart (ldg): no transposed copy, no int8 copy, no im2col.
 *
 * Kernels: q8_gemm.h's (AVX-512 VNNI, AVX-VNNI, AVX2, NEON dot product, NEON, portable C), and
 * for the quantization AVX-512 / AVX2 intrinsics (q8_stem_x86.c: vcvtps2dq rounds half to even,
 * as XNNPACK's convert does), NEON (q8_stem_arm.c: fcvtns, the same rounding) or portable C.
 * The buffer holds the signed int8 values: the x86 VNNI kernels read them as x + 128 (their
 * biases hold the 128 * sum(w)), the NEON and AVX2 ones as they are (q8_gemm.h). Threads: the
 * pool splits the bands; every task writes its own buffer and output rows.
 */
#ifndef CC_Q8_STEM_H
#define CC_Q8_STEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthreadpool.h>

#include "error.h"
#include "fused_q8.h"
#include "model.h"
#include "q8_gemm.h"

/* What CAMCLASS_CPU_Q8STEM asks for: unset or "measure" (default: the stem where it measures
 * faster than XNNPACK's path, remembered in the layer-choice cache), "off" (never), "on"
 * (always where it applies, with the host's best kernels) or a kernel family of fused_q8.h
 * ("avx512vnni", "avxvnni", "avx2", "neondot", "neon", "c": always, with those kernels). Parses
 * CAMCLASS_CPU_Q8STEM's value (NULL: unset); false with one line in err when it is not one of the
 * values above, or names kernels this CPU (or this code) does not run. */
bool cc_q8_stem_mode_parse(const char *value, struct cc_fq8_mode *mode, struct cc_error *err);

/* Whether this build and CPU run isa's kernels here; the best family that does. */
bool cc_q8_stem_isa_runs(enum cc_fq8_isa isa);
enum cc_fq8_isa cc_q8_stem_isa_best(void);

/* XNNPACK's f32 -> QS8 convert for one quantization. */
struct cc_q8_stem_quant {
    float inv;    // 1 / scale, in f32
    float lo, hi; // -128 and 127 less the zero point
    int32_t zp;
};

/* One value as XNNPACK converts it: x * inv clamped to [lo, hi] (the high end first, NaN
 * taking it: as minps(v, hi) then maxps; XNNPACK's AArch64 convert gives NaN the zero point,
 * every family here the high end), rounded half to even (by the 1.5 * 2^23 bias:
 * |value| < 2^22 after the clamp), plus the zero point. */
static inline int8_t cc_q8_stem_quantize_one(float x, const struct cc_q8_stem_quant *q)
{
    float f = x * q->inv;
    f = !(f <= q->hi) ? q->hi : f;
    f = f < q->lo ? q->lo : f;
    float r = (f + 12582912.0f) - 12582912.0f; // IEEE: not folded (no -ffast-math here)
    return (int8_t)((int32_t)r + q->zp);
}

/* n values of x quantized into q. */
typedef void (*cc_q8_stem_quantizer)(const float *x, int n, int8_t *q,
                                     const struct cc_q8_stem_quant *p);

/* isa's quantizer; NULL where this build has none (whether the CPU runs it: isa_runs above). */
cc_q8_stem_quantizer cc_q8_stem_quantizer_of(enum cc_fq8_isa isa);

/* The x86-64 quantizers (q8_stem_x86.c); the AArch64 one, both NEON families' (q8_stem_arm.c). */
void cc_q8_stem_quantize_avx512(const float *x, int n, int8_t *q, const struct cc_q8_stem_quant *p);
void cc_q8_stem_quantize_avx2(const float *x, int n, int8_t *q, const struct cc_q8_stem_quant *p);
void cc_q8_stem_quantize_neon(const float *x, int n, int8_t *q, const struct cc_q8_stem_quant *p);

/* One stem: weights and quantizations of the model. */
struct cc_q8_stem_desc {
    int h, w, ho, wo, n; // input (3, h, w) NCHW f32; output (ho, wo, n) NHWC int8
    int pad_top, pad_left;
    const int8_t *weights;  // (n, 3, 3, 3)
    const float *sw, *bias; // (n) weight scales; (n) f32 bias or NULL
    struct cc_act_quant qx, qy;
    int8_t lo, hi; // the clamp, quantized
};

struct cc_q8_stem {
    struct cc_q8_stem_desc d; // weights NULL after init
    struct cc_q8_gemm g;      // the packed (n, 36) weights, their biases and scales; owned
    struct cc_q8_stem_quant q;
    cc_q8_stem_quantizer quantize;
    int band_rows; // output rows per band (a task)
    int bands;
    size_t wp;        // bytes of a buffer row: pad_left + w + the right padding
    size_t band_size; // bytes of a band's buffer: (2 * band_rows + 1) rows x 3 channels x wp
    int8_t *buf;      // (bands, band_size), the zero point where no input is written; owned
    bool yield;       // the run's last operator: the pool's workers sleep after it
};

/* Whether node (of m) is an int8 stem: cc_stem_conv_applies's shape with i8 weights and
 * per-channel scales, a quantized input and output; fills d (pointing into m) when it is. */
bool cc_q8_stem_from_node(const struct cc_model *m, const struct cc_node *node,
                          struct cc_q8_stem_desc *d);

/* Whether d is a stem this code runs; false with one line in err. */
bool cc_q8_stem_check(const struct cc_q8_stem_desc *d, struct cc_error *err);

/* Packs d for isa's kernels; false with err (not a stem, a family this host or code lacks, out
 * of memory). Finish with cc_q8_stem_finish (also after a failure). */
bool cc_q8_stem_init(struct cc_q8_stem *p, const struct cc_q8_stem_desc *d, enum cc_fq8_isa isa,
                     struct cc_error *err);
void cc_q8_stem_finish(struct cc_q8_stem *p); // accepts a zeroed or half-built p

/* y (ho, wo, n) int8 NHWC from x (3, h, w) f32 NCHW (any alignment), on pool (NULL: the
 * calling thread), one band per task. */
void cc_q8_stem_run(const struct cc_q8_stem *p, const float *x, int8_t *y, pthreadpool_t pool);

#endif
