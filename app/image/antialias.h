/* camclass — PIL's bilinear resampling with antialiasing, the two passes preprocessing runs
 * when a bundle asks for `"antialias": true` (docs/PREPROCESSING.md §3b).
 *
 * Semantics are those of PIL's Image.resize(size, Image.BILINEAR) on 8-bit images, which is
 * what torchvision's Resize does on PIL images: per axis, output position d of a resized length
 * r from `in` source pixels (scale = in / r) takes the source pixels within `support` of its
 * centre (d + 0.5)·scale, weighted by the triangle filter 1 − |x| stretched by
 * max(scale, 1), the weights divided by their sum and rounded to fixed point with
 * CC_ANTIALIAS_BITS fraction bits. The horizontal pass runs first and rounds to bytes, the
 * vertical pass runs on those bytes and rounds again — so the result is PIL's bytes exactly.
 *
 * A tap table covers the outputs [crop, crop + n) of one axis only, so only the window that
 * preprocessing keeps is computed, with the numbers the whole resize would use.
 *
 * Ownership: a cc_antialias_taps is caller-owned memory (init to zero, build, finish); the
 * passes only read it. Everything here is pure otherwise.
 */
#ifndef CC_ANTIALIAS_H
#define CC_ANTIALIAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Fraction bits of the fixed-point weights, as PIL's (32 − 8 − 2: a weighted sum of bytes
// with weights summing to ~1 stays within int32).
#define CC_ANTIALIAS_BITS 22

/* The taps of one axis: output o reads source positions first[o] … first[o] + k − 1, all
 * inside [0, in); weights past an output's own taps are 0 (a fixed k keeps the loops short
 * and unrollable). */
struct cc_antialias_taps {
    int n;        // output positions
    int k;        // taps per position: the widest window, about 2·support, at most in
    int *first;   // (n) first source position, non-decreasing
    int32_t *w;   // (n, k) weights, CC_ANTIALIAS_BITS fraction bits
    int lo, hi;   // source positions [lo, hi) that any output reads
    int cap_n;    // allocated entries of first
    size_t cap_w; // allocated entries of w
};

/* Builds the taps for outputs crop … crop + n − 1 of an axis of `in` source pixels resized to
 * `resized` (in, resized, n > 0, crop + n <= resized). False when out of memory. */
bool cc_antialias_taps_build(struct cc_antialias_taps *t, int in, int resized, int crop, int n);

/* Frees the tables; the struct may be built again. Accepts a zeroed struct. */
void cc_antialias_taps_finish(struct cc_antialias_taps *t);

/* Horizontal pass over one plane: dst[o] (t->n bytes) from src, a row of one byte per pixel
 * (positions t->lo … t->hi − 1 are read). */
void cc_antialias_hpass(const struct cc_antialias_taps *t, const uint8_t *src, uint8_t *dst);

/* The same over three planes at once (src0 → dst0, …): one pass for R, G and B. */
void cc_antialias_hpass_planar3(const struct cc_antialias_taps *t, const uint8_t *src0,
                                const uint8_t *src1, const uint8_t *src2, uint8_t *dst0,
                                uint8_t *dst1, uint8_t *dst2);

/* The same over a packed row of three bytes per pixel: byte c of each pixel goes to plane
 * dst<c> (so BGR24 passes its planes in reverse to get R, G, B). */
void cc_antialias_hpass_packed3(const struct cc_antialias_taps *t, const uint8_t *src,
                                uint8_t *dst0, uint8_t *dst1, uint8_t *dst2);

/* Vertical pass of output row o, fused with normalization: rows points at source row
 * t->first[o] of a plane of horizontally resampled rows `stride` bytes apart, n columns;
 * dst[x] = (float)byte · scale + bias, the byte being PIL's. */
void cc_antialias_vpass(const struct cc_antialias_taps *t, int o, const uint8_t *rows,
                        size_t stride, int n, float scale, float bias, float *dst);

#endif
