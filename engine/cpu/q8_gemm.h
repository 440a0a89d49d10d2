/* camclass — the CPU backend's own int8 1x1 convolution (internal to engine/): a QC8 conv
 * with a 1x1 kernel, stride 1, no padding, one group (and the classifier's linear, a 1x1
 * conv of a 1x1 image) as one GEMM over NHWC pixels, computing exactly what XNNPACK's QC8
 * convolution computes (fused_q8.h's formulas: acc = bias_q + sum (x - zx) * w in int32,
 * y = clamp(round-half-even((float)acc * s[o]) + zy), s[o] = sx * sw[o] / sy in f32), so a
 * layer run here equals XNNPACK's value for value. Kept per layer where it measures faster
 * than XNNPACK's operator (xnn_steps.c): Debian's XNNPACK has no dot-product kernels, and
 * vpdpbusd does 4 byte products per int32 lane in one instruction.
 *
 * Layout: weights in panels of nr output channels (the kernel family's register block),
 * each (k4, nr, 4) bytes: the 4 weights of inputs 4g..4g+3 of output o of panel j at
 * ((j * k4 + g) * nr + o) * 4, zeros past k and n; the input is read as unsigned (x + 128)
 * and 128 * sum(w) folded into the bias with the zero point (as fused_q8.h), except by the
 * NEON and AVX2 kernels, which multiply signed values (x itself; their biases lack the
 * 128 * sum(w)). The AVX2 kernels' panels hold the weights in pairs of inputs: each
 * (k4 * 2, nr, 2), the weights of inputs 2q, 2q + 1 of output o of panel j at element
 * ((j * k4 * 2 + q) * nr + o) * 2, widened to int16 (twice the bytes; enum cc_q8_layout),
 * except in layers of a few pixels, where each weight is read about once and memory is the
 * limit: there bytes, widened as read. They widen their pixels' inputs to int16 themselves (AVX2
 * has no byte dot product without saturation, but vpmaddwd: one per pixel, 8 outputs and 2
 * inputs).
 *
 * Threads: the pool splits (pixel tiles x panels); every task writes its own outputs. The AVX2
 * kernels' tasks take several panels where they have every pixel, widening the pixels once
 * for them into a buffer of the layer's (cc_q8_widen).
 * Kernels: those of fused_q8.h's families (enum cc_fq8_isa: AVX-512 VNNI, AVX-VNNI, AVX2,
 * NEON dot product (sdot), NEON (ARMv8.0), portable C), the best the host runs chosen by
 * cc_q8_gemm_isa_best.
 */
#ifndef CC_Q8_GEMM_H
#define CC_Q8_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthreadpool.h>

#include "error.h"
#include "fused_block.h"
#include "fused_q8.h"
#include "model.h"

/* One layer: m pixels of k inputs to n outputs; weights and quantizations of the model. */
struct cc_q8_gemm_desc {
    int m, k, n;
    const int8_t *w;   // (n, k)
    const float *sw;   // (n) weight scales
    const float *bias; // (n) f32, or NULL
    struct cc_act_quant qx, qy;
    int8_t lo, hi; // the clamp, quantized
};

/* One task's part as a kernel sees it: pixels [0, m) of a times panel w (nr outputs, n_valid
 * of them real) into c (row stride ldc). Pixel p's inputs 4g..4g+3 are the 4 bytes at
 * a + p * lda + g * ldg: a GEMM's rows are contiguous (ldg 4); the int8 stem (q8_stem.h) reads
 * its 3x3 windows in place, one group per input row, with ldg the distance between rows. */
struct cc_q8_tile {
    const int8_t *a;
    size_t lda, ldg;
    const int8_t *w;     // (k4, nr, 4)
    const int32_t *bias; // (nr), zero points folded in
    const float *scale;  // (nr)
    int m, k, n_valid;
    int8_t *c;
    size_t ldc;
    float lo, hi; // the clamp less the zero point
    int32_t zp;
    const int16_t *wide; // or NULL: the AVX2 kernels' pixels widened already (cc_q8_widen), pixel
    size_t ldw;          // p's inputs at wide + p * ldw (k rounded up to 4, zeros past k)
};

typedef void (*cc_q8_kernel)(const struct cc_q8_tile *t);
/* m pixels' k inputs (pixel p's at a + p * lda) as int16 at x + p * ldx, zeros to a multiple of 4.
 */
typedef void (*cc_q8_widen)(int16_t *x, size_t ldx, const int8_t *a, size_t lda, int m, int k);

/* The panels' weights (above): groups of 4 bytes, or pairs of inputs as int16 or as bytes. */
enum cc_q8_layout { CC_Q8_GROUPS, CC_Q8_PAIRS16, CC_Q8_PAIRS8 };

struct cc_q8_gemm {
    int m, k, n, nr, panels; // nr: outputs per panel; panels: n rounded up / nr
    int tile_m, tile_n;      // pixels and panels per task
    int8_t *w;               // (panels, k4, nr, 4), or int16 pairs (above); owned
    size_t panel_bytes;      // one panel of w
    enum cc_q8_layout layout;
    int32_t *bias; // (panels * nr); owned
    float *scale;  // (panels * nr); owned
    float lo, hi;
    int32_t zp;
    int16_t *wide; // NULL, or (tasks along the panels, m, ldw): each task's pixels widened once
    size_t ldw;    // for its panels (the AVX2 kernels; cc_q8_widen); owned
    enum cc_fq8_isa isa;
    cc_q8_kernel kernel;
    cc_q8_widen widen;
    bool yield; // the run's last operator: the pool's workers sleep after it
};

/* Whether this build and CPU run isa's kernels here (fused_q8.h's families may be more than
 * this code has); the best that does (at worst portable C). */
bool cc_q8_gemm_isa_runs(enum cc_fq8_isa isa);
enum cc_fq8_isa cc_q8_gemm_isa_best(void);

/* Whether d is a layer this code runs; false with one line in err. */
bool cc_q8_gemm_check(const struct cc_q8_gemm_desc *d, struct cc_error *err);

/* Packs d for isa's kernels, tiles for threads threads; false with err (not a layer, a kernel
 * family this host lacks, out of memory). Finish with cc_q8_gemm_finish. */
bool cc_q8_gemm_init(struct cc_q8_gemm *g, const struct cc_q8_gemm_desc *d, enum cc_fq8_isa isa,
                     int threads, struct cc_error *err);
void cc_q8_gemm_finish(struct cc_q8_gemm *g); // accepts a zeroed or half-built g

/* y (m, n) from x (m, k), int8 NHWC, on pool (NULL: the calling thread); x, y apart. */
void cc_q8_gemm_run(const struct cc_q8_gemm *g, const int8_t *x, int8_t *y, pthreadpool_t pool);

/* CAMCLASS_CPU_Q8GEMM's value (NULL or "": measure) as a mode of fused_block.h's kind:
 * measure (per layer, the faster of this and XNNPACK's operator), off, or on (every layer this
 * code runs; for tests); false with one line in err for another value. */
bool cc_q8_gemm_mode_parse(const char *value, enum cc_fused_mode *mode, struct cc_error *err);

/* Node n of m as a layer here, where it is one (an int8 conv2d 1x1, stride 1, no padding, one
 * group, or a linear; i8 weights with per-channel scales; quantized input and output; a
 * clamp); d points into m. False when not. */
bool cc_q8_gemm_from_node(const struct cc_model *m, const struct cc_node *n,
                          struct cc_q8_gemm_desc *d);

/* The x86-64 kernels (q8_gemm_x86.c; AVX2: q8_gemm_avx2.c) and their panel widths. */
enum { CC_Q8_NR_ZMM = 64, CC_Q8_NR_YMM = 16, CC_Q8_NR_AVX2 = 24, CC_Q8_NR_AVX2_2 = 16 };
void cc_q8_kernel_avx512vnni(const struct cc_q8_tile *t);
void cc_q8_kernel_avxvnni(const struct cc_q8_tile *t);
// CC_Q8_GROUPS, CC_Q8_NR_YMM outputs a panel, signed x: weights in -127..127 only
void cc_q8_kernel_avx2sign(const struct cc_q8_tile *t);
void cc_q8_kernel_avx2(const struct cc_q8_tile *t);    // CC_Q8_PAIRS16
void cc_q8_kernel_avx2_w8(const struct cc_q8_tile *t); // CC_Q8_PAIRS8
// CC_Q8_PAIRS16 on panels of CC_Q8_NR_AVX2_2 outputs, 6 pixels a block (layers of 32 outputs)
void cc_q8_kernel_avx2_nr16(const struct cc_q8_tile *t);
void cc_q8_widen_avx2(int16_t *x, size_t ldx, const int8_t *a, size_t lda, int m, int k);

/* The AArch64 kernels (q8_gemm_arm.c) and their panel widths. */
enum { CC_Q8_NR_NEON = 8, CC_Q8_NR_NEONDOT = 16 };
void cc_q8_kernel_neon(const struct cc_q8_tile *t);
void cc_q8_kernel_neondot(const struct cc_q8_tile *t);

#endif
