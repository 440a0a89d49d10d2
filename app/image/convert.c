/* camclass — whole-frame layout conversions for the file sources (see convert.h). */
#include <string.h>

#include "convert.h"

static inline __attribute__((always_inline)) int16_t clamp16(int16_t v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* cc_yuv_to_rgb rewritten for 16-bit lanes. With C = Y − 16, D = U − 128, E = V − 128,
 * 298·C = 256·C + 42·C, 409·E = 256·E + 153·E, −208·E = −256·E + 48·E, 516·D = 512·D + 4·D,
 * and floor((256·k + x) / 256) = k + floor(x / 256), so
 *   R = C + E   + ((42·C + 153·E + 128) >> 8)
 *   G = C − E   + ((42·C − 100·D + 48·E + 128) >> 8)
 *   B = C + 2·D + ((42·C + 4·D + 128) >> 8)
 * where every intermediate lies in [−20128, 29597] (fits int16). Checked against
 * cc_yuv_to_rgb for all 2^24 inputs by tests/image/test_preprocess.c. The steps are
 * constants after inlining, so GCC/Clang vectorize the loop (SSE2, NEON). */
static inline __attribute__((always_inline)) void
pairs_to_planar(const uint8_t *restrict y0p, const uint8_t *restrict y1p,
                const uint8_t *restrict up, const uint8_t *restrict vp, const int ys, const int cs,
                int n, uint8_t *restrict r, uint8_t *restrict g, uint8_t *restrict b)
{
    for (int k = 0; k < n; k++) {
        int16_t d = (int16_t)(up[cs * k] - 128), e = (int16_t)(vp[cs * k] - 128);
        int16_t cr = (int16_t)(153 * e + 128), cg = (int16_t)(48 * e - 100 * d + 128);
        int16_t cb = (int16_t)(4 * d + 128), d2 = (int16_t)(2 * d);
        int16_t c0 = (int16_t)(y0p[ys * k] - 16), c1 = (int16_t)(y1p[ys * k] - 16);
        int16_t l0 = (int16_t)(42 * c0), l1 = (int16_t)(42 * c1);
        r[2 * k] = (uint8_t)clamp16((int16_t)(c0 + e + (int16_t)((int16_t)(l0 + cr) >> 8)));
        r[2 * k + 1] = (uint8_t)clamp16((int16_t)(c1 + e + (int16_t)((int16_t)(l1 + cr) >> 8)));
        g[2 * k] = (uint8_t)clamp16((int16_t)(c0 - e + (int16_t)((int16_t)(l0 + cg) >> 8)));
        g[2 * k + 1] = (uint8_t)clamp16((int16_t)(c1 - e + (int16_t)((int16_t)(l1 + cg) >> 8)));
        b[2 * k] = (uint8_t)clamp16((int16_t)(c0 + d2 + (int16_t)((int16_t)(l0 + cb) >> 8)));
        b[2 * k + 1] = (uint8_t)clamp16((int16_t)(c1 + d2 + (int16_t)((int16_t)(l1 + cb) >> 8)));
    }
}

void cc_yuyv_row_to_planar(const uint8_t *row, int pair0, int pair1, uint8_t *r, uint8_t *g,
                           uint8_t *b)
{
    const uint8_t *p = row + 4 * pair0;
    int o = 2 * pair0;
    pairs_to_planar(p, p + 2, p + 1, p + 3, 4, 4, pair1 - pair0, r + o, g + o, b + o);
}

void cc_nv12_row_to_planar(const uint8_t *yrow, const uint8_t *uvrow, int pair0, int pair1,
                           uint8_t *r, uint8_t *g, uint8_t *b)
{
    const uint8_t *y = yrow + 2 * pair0, *uv = uvrow + 2 * pair0;
    int o = 2 * pair0;
    pairs_to_planar(y, y + 1, uv, uv + 1, 2, 2, pair1 - pair0, r + o, g + o, b + o);
}

size_t cc_nv12_size(int w, int h)
{
    size_t stride = (size_t)(w + 1) / 2 * 2;
    return stride * (size_t)h + stride * (size_t)((h + 1) / 2);
}

void cc_i420_to_nv12(const uint8_t *src, int w, int h, uint8_t *dst)
{
    size_t stride = (size_t)(w + 1) / 2 * 2;
    int cw = (w + 1) / 2, ch = (h + 1) / 2;
    const uint8_t *u = src + (size_t)w * h, *v = u + (size_t)cw * ch;
    for (int y = 0; y < h; y++) {
        memcpy(dst + y * stride, src + (size_t)y * w, (size_t)w);
        if (stride > (size_t)w)
            dst[y * stride + w] = 0; // padding byte of an odd width
    }
    uint8_t *uv = dst + stride * h;
    for (int y = 0; y < ch; y++) {
        uint8_t *row = uv + y * stride;
        for (int x = 0; x < cw; x++) {
            row[2 * x] = u[(size_t)y * cw + x];
            row[2 * x + 1] = v[(size_t)y * cw + x];
        }
    }
}

void cc_yuv444_to_rgb24(const uint8_t *src, int w, int h, uint8_t *dst)
{
    size_t n = (size_t)w * h;
    const uint8_t *u = src + n, *v = src + 2 * n;
    for (size_t i = 0; i < n; i++) {
        int rgb[3];
        cc_yuv_to_rgb(src[i], u[i], v[i], rgb);
        dst[3 * i] = (uint8_t)rgb[0];
        dst[3 * i + 1] = (uint8_t)rgb[1];
        dst[3 * i + 2] = (uint8_t)rgb[2];
    }
}
