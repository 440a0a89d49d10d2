/* camclass — the CPU backend's fused inverted-residual block, fp32, NHWC
 * (internal to engine/): mobilenet_v2's expand 1x1 conv (+ clamp) -> depthwise 3x3, stride 1
 * or 2, padding 1 (+ clamp) -> project 1x1 (+ clamp, usually none) (+ the residual input when
 * stride 1 and in == out channels), in one pass over bands of output rows; also mobilenet_v3's
 * blocks without squeeze-excitation: hardswish after the expand and the depthwise, and 5x5
 * depthwise kernels (padding 2: a ring of 5 rows, below read "k" for the 3).
 *
 * Why: run layer by layer, the expanded tensor of an early block (112x112x96 f32 = 4.8 MB)
 * is written to memory by the expand conv and read back by the depthwise, and the depthwise's
 * output again by the project conv: mobilenet_v2 on a small CPU is bound by that traffic.
 * Here a band keeps a ring of the 3 expanded input rows the depthwise needs for one output
 * row (each computed once per band: output row oy needs input rows s*oy-1 .. s*oy+1, and the
 * next output row reuses 2 of them at stride 1, 1 at stride 2), one depthwise output row,
 * and the packed weights; only the block's input and output go to memory.
 *
 * Working set of one band (floats): k + 1 rows of (w + 2 * pad) x cexp_pad (the ring and a
 * zero row for the padding above and below the image) + wo x cexp_pad (the depthwise row) + the
 * packed weights. It does not grow with the band's height, so the band height is not chosen from
 * the cache: there is one band per thread (cc_fused_block_init's bands), and the only cost of
 * a band edge is its halo, the 1 (stride 2) or 2 (stride 1) expanded rows the band before
 * computes too. cc_fused_block_working_set says the bytes: for mobilenet_v2 at 224x224,
 * 76 to 325 KB a block, within the L2 of every CPU we support (Zen: 512 KiB - 1 MiB a core;
 * Cortex-A72: 1 MiB for 4 cores); a much wider input still runs, and the backend's load-time
 * measurement keeps its layers where that is slower (docs/PERFORMANCE.md, "The fused
 * inverted-residual block").
 *
 * Packed weights (64-byte aligned, zeros past the real channels, owned): expand (cin,
 * cexp_pad): input channel k's row of expanded channels; depthwise (k * k, cexp_pad): tap
 * ky * k + kx's row of channels; project (cexp, cout_pad): expanded channel k's row of output
 * channels; biases (cexp_pad) and (cout_pad), zeros where the model has none. *_pad: the
 * channels rounded up to 32 (the widest kernel's block: 2 AVX-512 vectors), 16 or fewer to 16
 * (one AVX-512 vector: the kernels take a second one only where channels remain past the first).
 *
 * Kernels (enum cc_stem_isa, the stem's families): AVX-512 and AVX2+FMA (x86-64, chosen at
 * run time), NEON (AArch64) and portable C; all are one source, fused_block_kern.h,
 * instantiated with the vector width (fused_block.c, fused_block_x86.c, fused_block_arm.c).
 */
#ifndef CC_FUSED_BLOCK_H
#define CC_FUSED_BLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include <pthreadpool.h>

#include "error.h"
#include "model.h"
#include "stem_conv.h"

enum { CC_FUSED_KMAX = 5 }; // the largest depthwise kernel (mobilenet_v3's 5x5)

/* One block, weights in the bundle's layouts (not kept: init packs them). */
struct cc_fused_block_desc {
    int h, w;             // input height, width
    int cin, cexp, cout;  // channels in, expanded (cin when !expand), out
    int stride;           // the depthwise's, 1 or 2
    int kernel;           // the depthwise's, 3 or 5 (0: 3); padding kernel / 2 on every side
    bool expand;          // an expand conv (expand ratio != 1)
    bool residual;        // y += x (stride 1, cin == cout)
    const float *we, *be; // expand (cexp, cin), bias (cexp) or NULL
    const float *wd, *bd; // depthwise (cexp, 1, kernel, kernel), bias (cexp) or NULL
    const float *wp, *bp; // project (cout, cexp), bias (cout) or NULL
    // Clamps (cc_act_none(): none); act_expand and act_dw may also be hardswish
    // (mobilenet_v3), computed as x * min(max(x * (1/6) + 1/2, 0), 1).
    struct cc_act act_expand, act_dw, act_project;
    // Squeeze-excitation between the depthwise and the project (mobilenet_v3) when cse > 0:
    // the project reads dw x g per channel, g = act_se2(w2 act_se1(w1 mean(dw) + b1) + b2),
    // mean over the depthwise output's pixels. Such a block runs in two passes over its bands
    // (cc_fused_block_run): expand and depthwise into the whole depthwise output (ho x wo x
    // cexp_pad floats, owned: it goes to memory, or L2) and each band's channel sums; the gate
    // on the calling thread; then the scale and the project conv.
    int cse;
    const float *w1, *b1;           // (cse, cexp), (cse) or NULL
    const float *w2, *b2;           // (cexp, cse), (cexp) or NULL
    struct cc_act act_se1, act_se2; // any kind
};

/* Whether d is a block this code runs (shapes, strides and kernels above, clamp or hardswish
 * activations); false with one line in err naming what is not. */
bool cc_fused_block_check(const struct cc_fused_block_desc *d, struct cc_error *err);

/* A 1x1 GEMM as the kernels see it: m pixels, pixel p's k inputs at a + p * lda, its
 * outputs at c + p * ldc, channels [0, n_store) of y = act(a w + bias) (+ res + p * ldc),
 * act: the clamp to lo..hi, or hardswish when hswish (then lo, hi are unused). */
struct cc_fused_gemm {
    const float *a;
    size_t lda;
    const float *w, *bias; // (k, n_pad), (n_pad)
    int m, k, n, n_pad, n_store;
    float *c;
    size_t ldc;
    const float *res; // NULL: no residual
    float lo, hi;
    bool hswish;
};

/* One depthwise row: y pixel ox, channels [0, c) = act(bias + sum over ky, kx < k of
 * rows[ky][(stride * ox + kx) * c_pad] * w[ky * k + kx]), rows: k padded input rows; act as
 * the GEMM's. */
struct cc_fused_dw {
    const float *rows[CC_FUSED_KMAX];
    const float *w, *bias; // (k * k, c_pad), (c_pad)
    int c, c_pad, wo, stride, k;
    float *y; // (wo, c_pad)
    float lo, hi;
    bool hswish;
};

struct cc_fused_kernels {
    void (*gemm)(const struct cc_fused_gemm *g);
    void (*dw)(const struct cc_fused_dw *d);
};

struct cc_fused_block {
    struct cc_fused_block_desc d; // shapes and clamps (its weight pointers: NULL)
    int ho, wo, cexp_pad, cout_pad;
    int ksize, pad;                     // the depthwise's kernel (3 or 5), padding ksize / 2
    float *we, *be, *wd, *bd, *wp, *bp; // packed (above); owned
    // SE: w1 (cexp, cse_pad), b1 (cse_pad), w2 (cse, cexp_pad), b2 (cexp_pad), packed as the
    // convs'; se: the depthwise output (ho, wo, cexp_pad), the bands' sums (bands, cexp_pad),
    // z (cse_pad), g (cexp_pad); all owned, NULL without SE
    float *w1, *b1, *w2, *b2, *se, *se_sums, *se_z, *se_g;
    int cse_pad;
    int bands;             // one scratch each
    size_t scratch_floats; // a band's
    float *scratch;        // (bands, scratch_floats), 64-byte aligned; owned
    enum cc_stem_isa isa;
    struct cc_fused_kernels k;
    bool yield; // the run's last work: the pool's workers sleep after it, as after XNNPACK's
                // last operator (XNN_FLAG_YIELD_WORKERS), instead of spinning; false after
                // init, set by the caller
};

/* Packs d's weights for isa's kernels (one the host runs: cc_stem_isa_runs) with scratch for
 * bands bands (1 or more: the threads that will run it); false with err set when d is not a
 * block (cc_fused_block_check) or on out of memory. b is then finished with
 * cc_fused_block_finish. */
bool cc_fused_block_init(struct cc_fused_block *b, const struct cc_fused_block_desc *d,
                         enum cc_stem_isa isa, int bands, struct cc_error *err);

/* Frees what init allocated; accepts a zeroed or half-built b. */
void cc_fused_block_finish(struct cc_fused_block *b);

/* Bytes one band reads and writes besides the block's input and output (above). */
size_t cc_fused_block_working_set(const struct cc_fused_block *b);

/* Output rows [r0, r1) of y (ho, wo, cout) from x (h, w, cin), both NHWC, with band's
 * scratch (0 <= band < b->bands; no other call may use it meanwhile). With SE (d.cse > 0):
 * the first pass only, the depthwise rows into b->se and their sums into band's. */
void cc_fused_block_band(const struct cc_fused_block *b, const float *x, float *y, int r0, int r1,
                         int band);

/* The whole block on pool (NULL: the calling thread), one band per task. x and y must not
 * overlap. */
void cc_fused_block_run(const struct cc_fused_block *b, const float *x, float *y,
                        pthreadpool_t pool);

/* ------------------------------------------------------------------------------------------
 * In a graph (the CPU backend: xnn_backend.c)
 */

/* What CAMCLASS_CPU_FUSED asks for: unset or "measure" (default: each block fused where it
 * measures faster than its layers at load, remembered in the layer-choice cache), "off"
 * (never) or "on" (every block it finds), with the host's best kernels. */
enum cc_fused_mode { CC_FUSED_MEASURE, CC_FUSED_OFF, CC_FUSED_ON };

/* The modes' words, in the enum's order (CAMCLASS_CPU_Q8GEMM takes the same). */
extern const char *const cc_fused_mode_words[3];

/* Parses CAMCLASS_CPU_FUSED's value (NULL: unset); false with one line in err otherwise. */
bool cc_fused_mode_parse(const char *value, enum cc_fused_mode *mode, struct cc_error *err);

/* A block found in a finalized model: consecutive nodes [first, last] (expand conv, optional;
 * depthwise; project conv; add, optional), its input and output tensors, and d with its
 * weights (dequantized copies where the model's are int8: owned). */
struct cc_fused_match {
    int first, last;
    int x, y;
    struct cc_fused_block_desc d;
    float *owned[10];
};

/* Whether m's node p is the project conv of a block this code runs: node p - 1 a depthwise
 * 3x3 or 5x5 (stride 1 or 2, padding 1 or 2) whose output only p reads (or node p - 5, with
 * a squeeze-excitation between: global average pool, 1x1 conv, 1x1 conv, multiply of the
 * depthwise output by the gate, each read by the next only), after (optional)
 * node p - 2, a 1x1 conv whose output only p - 1 reads; then (optional) node p + 1 adds the
 * block's input to p's output, which only it reads; clamps (the expand's and the depthwise's
 * may be hardswish); f32 or int8 weights; batch 1; no intermediate the graph output; the
 * input not the graph input. Fills f (free with cc_fused_match_free)
 * and returns true; false when not (or out of memory). */
bool cc_fused_block_match(const struct cc_model *m, int p, struct cc_fused_match *f);
void cc_fused_match_free(struct cc_fused_match *f);

/* The kernels of the x86-64 families (fused_block_x86.c). */
void cc_fused_gemm_avx512(const struct cc_fused_gemm *g);
void cc_fused_dw_avx512(const struct cc_fused_dw *d);
void cc_fused_gemm_avx2(const struct cc_fused_gemm *g);
void cc_fused_dw_avx2(const struct cc_fused_dw *d);
/* And AArch64's (fused_block_arm.c). */
void cc_fused_gemm_neon(const struct cc_fused_gemm *g);
void cc_fused_dw_neon(const struct cc_fused_dw *d);

#endif
