/* camclass — the CPU backend's direct f32 convolution for k x k kernels with one group over NHWC
 * activations (resnet's 3x3 layers: 64-512 channels at 56x56 down to 7x7, strides 1 and 2),
 * with the bias and the clamp (ReLU, ReLU6, none) fused (internal to engine/).
 *
 * An indirect GEMM with our own register blocking: a block of MR (6) output pixels x NR (64)
 * output channels stays in registers (AVX-512: 24 zmm accumulators) for all k*k taps x C input
 * channels; each input value is broadcast once per block and tap and multiplied by a row of
 * 64 packed weights. The pixels' input rows come through an indirection buffer made at init
 * (the input's place in the arena does not move), whose taps in the padding point at a row of
 * zeros, so there is no im2col copy and the kernel has no edge cases. Where one output-channel
 * panel's weights for all taps do not fit in L2, the taps are done in groups whose weights do
 * (the block's sums go through the output between groups), so every weight is read from
 * memory once per task, not once per pixel block.
 *
 * Why: on the Zen 5 host, Debian's XNNPACK 2022 and BLIS (engine/cpu/blis_conv.h) ran
 * resnet18's 3x3 layers 1.3-1.4x slower than ONNX Runtime's AVX-512 NCHWc convolutions; the
 * CPU backend times this way against theirs per layer at load and keeps the fastest
 * (xnn_steps.c, the layer-choice cache's 'd').
 *
 * Kernels (enum cc_stem_isa, stem_conv.h): AVX-512, AVX2+FMA (conv3x3_x86.c, chosen at run
 * time from what the CPU has) and portable C that compilers vectorise (every other CPU). Tasks
 * (one output-channel panel x a run of pixel blocks) go over the backend's pthreadpool.
 */
#ifndef CC_CONV3X3_H
#define CC_CONV3X3_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <pthreadpool.h>

#include "error.h"
#include "model.h"
#include "stem_conv.h"

enum { CC_CONV3X3_MR = 6, CC_CONV3X3_NR = 64 };

/* One convolution's shapes, as a caller gives them. */
struct cc_conv3x3_desc {
    int h, w, c;                  // input height, width, channels
    int ho, wo, n;                // output height, width, channels
    int kh, kw;                   // kernel
    struct cc_conv2d_attrs attrs; // stride, padding, dilation (groups must be 1)
    struct cc_act act;            // a clamp (kind 0)
};

/* The ways: direct (any k x k), or Winograd F(2x2, 3x3) or F(4x4, 3x3) (3x3, stride 1,
 * padding 1). */
enum cc_conv3x3_algo { CC_CONV3X3_DIRECT, CC_CONV3X3_WINOGRAD, CC_CONV3X3_WINOGRAD4 };

struct cc_conv3x3 {
    struct cc_conv3x3_desc d;
    float *w;             // (panels, taps, c, NR) packed weights (Winograd: 16 transformed
                          // "taps"), zeros past n; owned
    float *bias;          // (panels * NR), zeros where there is none and past n; owned
    float *zeros;         // (max(c, NR)) zeros: what taps in the padding read; owned
    const float **indir;  // direct: (blocks, taps, MR) input rows of each block's pixels per tap
                          // (a block's missing pixels repeat its first); owned; else NULL
    const float *x;       // (h, w, c) NHWC input; not owned
    float *y;             // (ho, wo, n) NHWC output; not owned
    const float *res;     // (ho, wo, n) NHWC added before the clamp (a residual,
                          // cc_conv3x3_fuse_residual): not owned; NULL: none
    bool wino;            // the Winograd way (conv3x3_wino.c): the fields below
    int wino_m;           // output tiles' side: 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3))
    int tiles_y, tiles_x; // output tiles
    int tile_blocks, panel_groups; // tasks: tile blocks (runs of MR-tile blocks, even to one) x
                                   // groups of panels (cc_conv3x3_wino_init's split)
    int tile_block;                // the most tiles a task transforms
    float *scratch;     // (slots, slot_floats): a running task's transformed inputs and products;
                        // owned
    size_t slot_floats; // taps * tile_block * (c + NR), and a skew per plane
    int slots;          // the threads: at most that many tasks run at once
    atomic_int *busy;   // (slots) 1 while a task holds that slot (claimed by exchange); owned
    atomic_int *slot_block; // (slots) the tile block whose transformed inputs the slot holds in
                            // this run, -1 none: set by the slot's holder (the run resets it),
                            // read by tasks looking for a slot (relaxed: a hint); owned
    int taps, panels, blocks;
    int group;  // taps per group (weights of one panel's group fit in L2)
    int chunks; // runs of pixel blocks per panel: tasks = panels * chunks
    enum cc_stem_isa isa;
    bool yield; // the run's last operator: the pool's workers sleep after it
};

/* What CAMCLASS_CPU_CONV3X3 asks for: unset or "measure" (the default: each layer this applies
 * to, direct, Winograd F(2x2, 3x3) or F(4x4, 3x3), where it measures faster than the layer's
 * other ways, remembered in the layer-choice cache), "off" (never), "on" (every layer it
 * applies to, direct), "winograd" (every layer, F(2x2, 3x3) where it applies) or "winograd4"
 * (every layer, F(4x4, 3x3) where it applies), with the host's best kernels. */
enum cc_conv3x3_mode {
    CC_CONV3X3_MODE_MEASURE,
    CC_CONV3X3_MODE_OFF,
    CC_CONV3X3_MODE_ON,
    CC_CONV3X3_MODE_WINOGRAD,
    CC_CONV3X3_MODE_WINOGRAD4
};

/* Parses CAMCLASS_CPU_CONV3X3's value (NULL: unset); false with one line in err when it is not
 * one of the values above. */
bool cc_conv3x3_mode_parse(const char *value, enum cc_conv3x3_mode *mode, struct cc_error *err);

/* Whether node (of m) is a convolution this computes: one group, a kernel larger than 1x1, a
 * clamp activation (the caller gives the weights as f32, i8 ones dequantized). */
bool cc_conv3x3_applies(const struct cc_model *m, const struct cc_node *node);

/* Packs weights w ((n, c, kh, kw), f32; algo CC_CONV3X3_WINOGRAD: transformed, where
 * cc_conv3x3_wino_applies) and bias ((n) or NULL), and the indirection buffer for
 * input x ((h, w, c) NHWC, which must stay where it is) and output y, for isa's kernels and
 * `threads` threads; false with err set on out of memory. p is then finished with
 * cc_conv3x3_finish. */
bool cc_conv3x3_init(struct cc_conv3x3 *p, const struct cc_conv3x3_desc *d, const float *w,
                     const float *bias, const float *x, float *y, enum cc_conv3x3_algo algo,
                     enum cc_stem_isa isa, size_t threads, struct cc_error *err);

/* Whether the Winograd way computes d: 3x3, stride 1, dilation 1, padding 1 (same size). */
bool cc_conv3x3_wino_applies(const struct cc_conv3x3_desc *d);

/* Makes p compute y = act(conv(x) + bias + res) (res: (ho, wo, n) NHWC): a residual add and
 * its activation after a convolution without one, fused into the store, so that the sums do
 * not go through memory and back. False (p unchanged) where it cannot: p has an activation of
 * its own, y overlaps the input x, or res overlaps y other than exactly (in place), or exactly
 * while the direct way's taps go in groups (their partial sums pass through y). */
bool cc_conv3x3_fuse_residual(struct cc_conv3x3 *p, const float *res, float *y, struct cc_act act);

/* Frees what init allocated; accepts a zeroed or half-built p. */
void cc_conv3x3_finish(struct cc_conv3x3 *p);

/* y = clamp(conv(x) + bias (+ res)), on pool (NULL: the calling thread). */
void cc_conv3x3_run(const struct cc_conv3x3 *p, pthreadpool_t pool);

/* ------------------------------------------------------------------------------------------
 * For the kernels (conv3x3.c, conv3x3_x86.c)
 */

/* One MR x NR tile: rows[t * MR + j] is pixel j's input row (c floats) under tap t, for taps
 * taps; w the panel's weights for those taps ((taps, c, NR)); init the NR floats every row
 * starts from (the bias), or NULL: start from y's sums of earlier taps; y the MR rows of NR
 * outputs, ldy floats apart; res NULL, or MR rows of NR floats, ldr apart, added to the sums
 * (y may be res); the result is clamped to [lo, hi]. */
struct cc_conv3x3_tile {
    const float *const *rows;
    const float *w;
    const float *init;
    float *y;
    size_t ldy;
    const float *res;
    size_t ldr;
    int taps, c;
    float lo, hi;
};

typedef void (*cc_conv3x3_tile_fn)(const struct cc_conv3x3_tile *t);

void cc_conv3x3_tile_avx512(const struct cc_conv3x3_tile *t);
void cc_conv3x3_tile_avx2(const struct cc_conv3x3_tile *t);

/* The Winograd way (conv3x3_wino.c): the rest of init after the bias and zeros for output
 * tiles of m x m (2 or 4; false: out of memory), and the run with tile's kernels. */
bool cc_conv3x3_wino_init(struct cc_conv3x3 *p, const float *w, int m, size_t threads);
void cc_conv3x3_wino_run(const struct cc_conv3x3 *p, cc_conv3x3_tile_fn tile, pthreadpool_t pool);

#endif
