/* camclass — the CPU backend's own int8 depthwise convolution (internal to engine/): a QC8
 * depthwise 3x3 (one group per channel, one weight per channel and tap), stride 1 or 2,
 * padding 1 on every side, as one layer on NHWC int8 activations, computing exactly what
 * XNNPACK's QC8 convolution computes (fused_q8.h's formulas: acc = bias_q + sum (x - zx) * w
 * in int32, y = clamp(round-half-even((float)acc * s[c]) + zy), s[c] = sx * sw[c] / sy in
 * f32), so a layer run here equals XNNPACK's value for value. Kept per layer where it
 * measures faster than XNNPACK's operator (xnn_steps.c): Debian's XNNPACK's QC8 depthwise is
 * slow on AVX2 hosts.
 *
 * The row kernels are the int8 fused block's depthwise rows (fused_q8.h struct cc_fq8_dw,
 * cc_fq8_kernels_of: AVX-512 and AVX-VNNI (32-bit multiplies), AVX2 (vpmaddwd on pairs of taps),
 * NEON, portable C); this module gives them what the fused block's ring gives them: rows of
 * pixels c_pad channels apart with the zero point (the value 0) in the padding, and the packed
 * weights (cc_fq8_pack_dw). Where the channels are a multiple of CC_FQ8_PACK (c_pad = c), the
 * interior pixels read the input rows and write the output rows where they are, the edge pixels
 * go through a 3 x 3 pixel patch; else three input rows are copied into a ring of padded rows and
 * the output row through a row buffer.
 *
 * Threads: the pool splits the output rows into bands, one per thread, each with its own
 * scratch (the ring of 3 padded input rows that follow the band's rows, or the patch; a
 * zero-point row; an output row); every task writes its own output rows.
 */
#ifndef CC_Q8_DW_H
#define CC_Q8_DW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthreadpool.h>

#include "error.h"
#include "fused_block.h"
#include "fused_q8.h"
#include "model.h"

/* One layer: an (h, w, c) input to (ho, wo, c); weights and quantizations of the model. */
struct cc_q8_dw_desc {
    int h, w, c, stride;
    const int8_t *wt;  // (c, 9)
    const float *sw;   // (c) weight scales
    const float *bias; // (c) f32, or NULL
    struct cc_act_quant qx, qy;
    int8_t lo, hi; // the clamp, quantized
};

struct cc_q8_dw {
    struct cc_q8_dw_desc d; // shapes and quantizations (weight pointers NULL)
    int ho, wo, c_pad;
    int32_t *wt, *bias; // (9, c_pad), (c_pad); owned
    float *scale;       // (c_pad); owned
    int bands;
    size_t row_bytes;     // a padded input row: (w + 2) * c_pad
    size_t scratch_bytes; // a band's: 3 ring rows, the zero-point row, the output row
    int8_t *scratch;      // (bands, scratch_bytes); owned
    enum cc_fq8_isa isa;
    void (*row)(const struct cc_fq8_dw *d); // isa's depthwise row kernel
    bool yield; // the run's last operator: the pool's workers sleep after it
};

/* How CAMCLASS_CPU_Q8DW's value (NULL or "": measure) reads: measure (per layer, the faster
 * of this and XNNPACK's operator), off, on (every layer this code runs; for tests), or a
 * kernel family of fused_q8.h (on, with that family's kernels: "avx2" on an AVX-512 host, for
 * benchmarks); false with one line in err for another value or a family this host lacks. */
bool cc_q8_dw_mode_parse(const char *value, struct cc_fq8_mode *mode, struct cc_error *err);

/* Whether d is a layer this code runs; false with one line in err. */
bool cc_q8_dw_check(const struct cc_q8_dw_desc *d, struct cc_error *err);

/* Packs d for isa's kernels with scratch for threads bands; false with err (not a layer, a
 * kernel family this host lacks, out of memory). Finish with cc_q8_dw_finish. */
bool cc_q8_dw_init(struct cc_q8_dw *g, const struct cc_q8_dw_desc *d, enum cc_fq8_isa isa,
                   int threads, struct cc_error *err);
void cc_q8_dw_finish(struct cc_q8_dw *g); // accepts a zeroed or half-built g

/* y (ho, wo, c) from x (h, w, c), int8 NHWC, on pool (NULL: the calling thread); x, y apart. */
void cc_q8_dw_run(const struct cc_q8_dw *g, const int8_t *x, int8_t *y, pthreadpool_t pool);

/* Node n of m as a layer here, where it is one (an int8 conv2d with groups = channels = its
 * outputs, a 3x3 kernel, stride 1 or 2 both ways, padding 1 on every side, no dilation; i8
 * weights with per-channel scales; quantized input and output; a clamp (none: [-inf, inf]));
 * d points into m. False when not. */
bool cc_q8_dw_from_node(const struct cc_model *m, const struct cc_node *n, struct cc_q8_dw_desc *d);

#endif
