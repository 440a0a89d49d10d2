/* camclass — the CPU backend's fused inverted-residual block in int8 (internal to
 * engine/): fused_block.h's block (expand 1x1 -> depthwise 3x3 -> project 1x1 (+ add))
 * over bands of output rows with a ring of 3 expanded rows, for an int8 model's block whose
 * nodes the backend would run in int8 on XNNPACK's QC8/QS8 operators, computing what they
 * compute, exactly:
 *   - each conv: acc = bias_q + sum (x - zx) * w (int32; bias_q = round-half-even(bias /
 *     (sx * sw[o])), as xnn_build.c gives XNNPACK), then XNNPACK's "fp32" requantization:
 *     y = clamp(round-half-even((float)acc * s[o]) + zy) with s[o] = sx * sw[o] / sy in f32
 *     (XNNPACK's formula and order), the clamp the node's activation quantized;
 *   - the add: XNNPACK's QS8 add: multipliers lrintf((sa / sy) * 2^shift) with shift from
 *     the larger ratio's exponent (20 multiplier bits), y = ((bias + rounding + a * ma + b *
 *     mb) >> shift) + zy, clamped.
 * So a fused block's output equals the per-layer path's, value for value (tests/engine:
 * fused-q8 against a plain C composition of those formulas, exact; mobilenet_v2-int8 fused
 * against unfused).
 *
 * Layout: int8 NHWC activations; the ring's and the depthwise row's padding hold the
 * depthwise input's zero point (the value of 0). 1x1 weights are packed for dot products of
 * 4 input channels: (k4, n_pad, 4) bytes, group g's 4 weights of output o at (g * n_pad + o)
 * * 4; the input is read as unsigned (x + 128), the 128 * sum(w) folded into the bias with
 * the zero point. Depthwise weights (9, c_pad) int32. *_pad: channels rounded up to 32.
 * The AVX2 family's 1x1 weights are int16 pairs instead (q8_avx2.h's micro-kernel): (k4 * 2,
 * n_pad, 2), the weights of inputs 2q, 2q + 1 of output o at element (q * n_pad + o) * 2,
 * and its GEMMs widen their input rows once into the band's scratch (struct cc_fq8_gemm wide).
 *
 * Kernels (struct cc_fq8_kernels): AVX-512 VNNI (vpdpbusd: 4 products a lane per
 * instruction; needs AVX512F/BW/VNNI), AVX-VNNI (the same on 256-bit vectors: Alder Lake and
 * later, Zen 5), AVX2 (vpmaddwd on int16 pairs), on AArch64 NEON (ARMv8.0: smull
 * and sadalp, the Pi 4's Cortex-A72) and NEON dot product (ARMv8.2 sdot, the Pi 5's A76), and
 * portable C; chosen by cc_fq8_isa_best (the last of those the host runs). The NEON kernels
 * and AVX2 kernels multiply signed values (x itself, not x + 128): their blocks' biases are
 * packed without the 128 * sum(w).
 */
#ifndef CC_FUSED_Q8_H
#define CC_FUSED_Q8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthreadpool.h>

#include "error.h"
#include "fused_block.h"
#include "model.h"

/* One int8 block: shapes as fused_block.h's desc; weights and quantizations of the model. */
struct cc_fq8_desc {
    int h, w, cin, cexp, cout, stride;
    bool expand, residual;
    const int8_t *we, *wd, *wp;   // (cexp, cin), (cexp, 9), (cout, cexp); we NULL: !expand
    const float *swe, *swd, *swp; // their per-output-channel scales
    const float *be, *bd, *bp;    // f32 biases or NULL
    struct cc_act_quant qx, qe, qd, qp, qy; // input, expand, depthwise, project, add outputs
    int8_t lo[4], hi[4]; // the clamps of expand, depthwise, project and add, quantized
};

/* A 1x1 GEMM as the kernels see it: m pixels, pixel p's k int8 inputs at a + p * lda, its
 * n_store outputs at c + p * ldc; with res, XNNPACK's add of res + p * ldc after. */
struct cc_fq8_gemm {
    const int8_t *a;
    size_t lda;
    const int8_t *w;     // (k4, n_pad, 4), or int16 pairs (the AVX2 family; above)
    const int32_t *bias; // (n_pad), zero points folded in
    const float *scale;  // (n_pad)
    int m, k, n, n_pad, n_store;
    int8_t *c;
    size_t ldc;
    float lo, hi; // the clamp less the zero point
    int32_t zp;
    const int8_t *res; // NULL: no add
    int32_t add_a, add_b, add_bias, add_shift, add_zp, add_lo, add_hi;
    int16_t *wide; // the AVX2 family's: room for the m rows' inputs widened (k rounded up to 4)
};

/* One depthwise row (fused_block.h's struct cc_fused_dw, int8). */
struct cc_fq8_dw {
    const int8_t *rows[3];
    const int32_t *w, *bias; // (9, c_pad), (c_pad)
    const float *scale;      // (c_pad)
    int c, c_pad, wo, stride;
    int8_t *y; // (wo, c_pad)
    float lo, hi;
    int32_t zp;
};

struct cc_fq8_kernels {
    void (*gemm)(const struct cc_fq8_gemm *g);
    void (*dw)(const struct cc_fq8_dw *d);
};

enum cc_fq8_isa {
    CC_FQ8_C,
    CC_FQ8_AVX2,
    CC_FQ8_AVXVNNI,
    CC_FQ8_AVX512VNNI,
    CC_FQ8_NEON,    // AArch64: every one
    CC_FQ8_NEONDOT, // AArch64 with the dot product (HWCAP asimddp)
    CC_FQ8_ISA_COUNT
};

/* Whether this build and CPU run isa's kernels; the best that does; its name; its kernels
 * (NULL where it does not run: the per-layer depthwise, q8_dw.h, runs the dw row kernel too). */
bool cc_fq8_isa_runs(enum cc_fq8_isa isa);
enum cc_fq8_isa cc_fq8_isa_best(void);
const char *cc_fq8_isa_name(enum cc_fq8_isa isa);

/* A CAMCLASS_CPU_* switch of an own int8 kernel (the int8 stem's, the int8 depthwise's): measure
 * (unset), off, on, or a kernel family by name (always, with those kernels). */
struct cc_fq8_mode {
    enum cc_fused_mode kind;
    enum cc_fq8_isa isa; // the kernels: the host's best unless a family was named
};

/* What one such switch is: its variable, what its values are called, the families it names in
 * its message, and which of them this build and CPU run for it (and the best of those). */
struct cc_fq8_mode_spec {
    const char *var, *what, *families;
    bool (*runs)(enum cc_fq8_isa isa);
    enum cc_fq8_isa (*best)(void);
};

/* value (NULL or "": measure) into mode; false with one line in err naming a bad value or a
 * family this host or build lacks. */
bool cc_fq8_mode_parse(const struct cc_fq8_mode_spec *spec, const char *value,
                       struct cc_fq8_mode *mode, struct cc_error *err);
const struct cc_fq8_kernels *cc_fq8_kernels_of(enum cc_fq8_isa isa);

/* Channel padding of the kernels' buffers: the widest kernel's block (AVX-512: 2 x 16). */
enum { CC_FQ8_PACK = 32 };

/* A depthwise 3x3's (c, 9) weights w as (9, c_pad) int32 into wd (zeroed); bias (c_pad) = the
 * f32 bias b (or none) at in.scale * sw[ch] less in.zero_point * sum(w[ch]) (the kernels read
 * x as it is, the padding holding the zero point); scale (c_pad) its requantization to out.
 * For isa's kernels: the AVX2 family's are int16 pairs of taps instead, per block of 16
 * channels two vectors of 8 lanes (channels 0-3 and 8-11, then 4-7 and 12-15: the order of
 * its unpacks), each 5 pairs: taps (0, kx) and (1, kx) for kx 0..2, (2, 0) and (2, 1), then 0
 * and (2, 2); its biases and scales in that channel order too. */
void cc_fq8_pack_dw(int32_t *wd, int32_t *bias, float *scale, int c_pad, const int8_t *w,
                    const float *sw, const float *b, int c, struct cc_act_quant in,
                    struct cc_act_quant out, enum cc_fq8_isa isa);

struct cc_fq8_block {
    struct cc_fq8_desc d; // shapes and quantizations (weight pointers NULL)
    int ho, wo, cexp_pad, cout_pad;
    int8_t *we, *wp;                           // packed 1x1 weights; owned
    int32_t *wd, *be, *bd, *bp;                // depthwise weights, biases with zero points; owned
    float *se, *sd, *sp;                       // requantization scales; owned
    int32_t add_a, add_b, add_bias, add_shift; // the add's (residual only)
    int bands;
    size_t scratch_bytes; // a band's: ring of 3 rows, the zero-point row, the depthwise row,
                          // the AVX2 family's widened row
    int8_t *scratch;      // (bands, scratch_bytes); owned
    enum cc_fq8_isa isa;
    struct cc_fq8_kernels k;
    bool yield; // as struct cc_fused_block's
};

/* Whether d is a block this code runs (fused_block.h's shapes, weights and scales given,
 * positive activation scales); false with one line in err. */
bool cc_fq8_check(const struct cc_fq8_desc *d, struct cc_error *err);

/* Packs d for isa's kernels with scratch for bands bands; false with err (not a block, a
 * kernel family this host lacks, out of memory). Finish with cc_fq8_finish. */
bool cc_fq8_init(struct cc_fq8_block *b, const struct cc_fq8_desc *d, enum cc_fq8_isa isa,
                 int bands, struct cc_error *err);
void cc_fq8_finish(struct cc_fq8_block *b); // accepts a zeroed or half-built b

/* Output rows [r0, r1) of y (ho, wo, cout) from x (h, w, cin), int8 NHWC, with scratch band. */
void cc_fq8_band(const struct cc_fq8_block *b, const int8_t *x, int8_t *y, int r0, int r1,
                 int band);

/* The whole block on pool (NULL: the calling thread), one band per task; x, y apart. */
void cc_fq8_run(const struct cc_fq8_block *b, const int8_t *x, int8_t *y, pthreadpool_t pool);

/* The int8 block of match f in m (cc_fused_block_match: nodes f->first .. f->last), where
 * every tensor of it is quantized and its weights i8; d points into m. False when not. */
bool cc_fq8_from_match(const struct cc_model *m, const struct cc_fused_match *f,
                       struct cc_fq8_desc *d);

/* The x86-64 kernels (fused_q8_x86.c). */
void cc_fq8_gemm_avx512vnni(const struct cc_fq8_gemm *g);
void cc_fq8_dw_avx512vnni(const struct cc_fq8_dw *d);
void cc_fq8_gemm_avx2(const struct cc_fq8_gemm *g);
void cc_fq8_dw_avx2(const struct cc_fq8_dw *d);
void cc_fq8_gemm_avxvnni(const struct cc_fq8_gemm *g);
void cc_fq8_dw_avxvnni(const struct cc_fq8_dw *d);

/* The AArch64 kernels (fused_q8_arm.c). */
void cc_fq8_gemm_neon(const struct cc_fq8_gemm *g);
void cc_fq8_gemm_neondot(const struct cc_fq8_gemm *g);
void cc_fq8_dw_neon(const struct cc_fq8_dw *d); // both families'

#endif
