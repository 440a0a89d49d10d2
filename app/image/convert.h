/* camclass — per-pixel colour conversion shared by preprocessing and the file sources.
 *
 * The YUV → RGB conversion is the one docs/PREPROCESSING.md specifies: BT.601, limited range,
 * 8-bit fixed point with coefficients in 1/256 units, so that C, PyTorch references and every
 * source give bit-identical RGB bytes:
 *   C = Y − 16, D = U − 128, E = V − 128
 *   R = clamp((298·C + 409·E + 128) >> 8)
 *   G = clamp((298·C − 100·D − 208·E + 128) >> 8)
 *   B = clamp((298·C + 516·D + 128) >> 8)
 * where >> is an arithmetic shift (floor division by 256) and clamp limits to [0, 255].
 * Everything here is pure; nothing keeps state.
 */
#ifndef CC_CONVERT_H
#define CC_CONVERT_H

#include <stddef.h>
#include <stdint.h>

static inline int cc_clamp_u8(int v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* One BT.601 limited-range YUV pixel to R, G, B in [0, 255] (out has 3 ints). */
static inline void cc_yuv_to_rgb(int y, int u, int v, int out[3])
{
    int c = 298 * (y - 16) + 128, d = u - 128, e = v - 128;
    // >> on a negative int is arithmetic with GCC and Clang (the floor the spec asks for).
    out[0] = cc_clamp_u8((c + 409 * e) >> 8);
    out[1] = cc_clamp_u8((c - 100 * d - 208 * e) >> 8);
    out[2] = cc_clamp_u8((c + 516 * d) >> 8);
}

/* Converts the pixel pairs [pair0, pair1) of one row to planar R, G, B bytes (pixel x of the
 * row goes to r[x], g[x], b[x]), bit-identical to cc_yuv_to_rgb but vectorizable: the
 * arithmetic is rearranged to fit 16-bit lanes (see convert.c). yuyv: the row (Y0 U Y1 V per
 * pair); nv12: the Y row and the UV row that covers it. */
void cc_yuyv_row_to_planar(const uint8_t *row, int pair0, int pair1, uint8_t *r, uint8_t *g,
                           uint8_t *b);
void cc_nv12_row_to_planar(const uint8_t *yrow, const uint8_t *uvrow, int pair0, int pair1,
                           uint8_t *r, uint8_t *g, uint8_t *b);

/* Planar 4:2:0 (I420: Y plane, U plane, V plane, each tightly packed, chroma planes
 * ceil(w/2) × ceil(h/2)) to NV12 with stride w rounded up to even (Y rows, then interleaved
 * UV rows). dst holds cc_nv12_size(w, h) bytes. */
size_t cc_nv12_size(int w, int h);
void cc_i420_to_nv12(const uint8_t *src, int w, int h, uint8_t *dst);

/* Planar 4:4:4 YUV (three tightly packed w × h planes) to packed RGB24 (stride 3w) with the
 * conversion above. */
void cc_yuv444_to_rgb24(const uint8_t *src, int w, int h, uint8_t *dst);

#endif
