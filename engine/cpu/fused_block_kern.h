/* camclass — the fused block's kernels (see fused_block.h), written once for any vector width
 * and included once per kernel family, no include guard, after the includer defines:
 *   FB_SFX        the family's name suffix (cc_fused_gemm_<FB_SFX>, cc_fused_dw_<FB_SFX>)
 *   FB_LINKAGE    the two kernels' linkage (empty or static)
 *   FB_TARGET     the functions' target attribute (empty for portable C)
 *   FB_VEC        the vector type of FB_VW floats; FB_PX: pixels a GEMM block computes at once
 *   FB_LOAD(p), FB_STORE(p, v), FB_SET1(x), FB_FMA(a, b, c) (a * b + c), FB_MIN, FB_MAX
 * and, optionally (a family with 32 vector registers: AVX-512):
 *   FB_DWPX3      depthwise pixels at once for a 3x3 kernel (undefined: 4)
 * It undefines them all at its end.
 *
 * GEMM: blocks of FB_PX pixels x nv (1 or 2) vectors of output channels: FB_PX x nv
 * accumulators (independent FMA chains enough to cover the FMA latency), nv weight vectors
 * loaded once per input channel for the FB_PX pixels, each input broadcast once per channel
 * and block; then the clamp, the residual and the store, whole vectors where the channels
 * exist, else through a buffer. Depthwise: blocks of FB_DWPX3 (3x3; 5x5: 4) pixels x one
 * vector of channels, the stride and kernel constants of each copy; each input column of a
 * block is loaded once a row and used by every tap that reads it (8 pixels of a 3x3 read 10
 * columns a row at stride 1, 17 at stride 2, not 24); the k x k tap weights in registers for
 * the whole row (25 of AVX-512's 32 for a 5x5; AVX2 and the portable C reload some from the
 * stack). Each output's sum runs in the same order (ky, then kx) whatever the block.
 */
#include <stdbool.h>
#include <string.h>

#define FB_CAT2(a, b) a##b
#define FB_CAT(a, b) FB_CAT2(a, b)
#define FB_NAME(x) FB_CAT(x, FB_SFX)
#define FB_VW ((int)(sizeof(FB_VEC) / sizeof(float)))
#define FB_INLINE FB_TARGET static inline __attribute__((always_inline))
#define FB_PUT FB_NAME(fb_put_)
#define FB_GEMM_BLOCK FB_NAME(fb_gemm_block_)
#define FB_GEMM_COLS FB_NAME(fb_gemm_cols_)
#define FB_DW_BLOCK FB_NAME(fb_dw_block_)
#define FB_DWPX5 FB_NAME(fb_dwpx5_)
#define FB_DWPXMAX FB_NAME(fb_dwpxmax_)
#define FB_ACT FB_NAME(fb_act_)
#define FB_DW_ROW FB_NAME(fb_dw_row_)
#define FB_DW_STRIDE FB_NAME(fb_dw_stride_)
#define FB_UNROLL _Pragma("GCC unroll 32")
#ifndef FB_DWPX3
#define FB_DWPX3 4
#endif

enum {
    FB_DWPX5 = 4, // 5x5 depthwise pixels at once: 4 chains of 25 FMAs (25 registers of weights)
    FB_DWPXMAX = FB_DWPX3 > FB_DWPX5 ? FB_DWPX3 : FB_DWPX5,
};

/* act(v): hardswish, v * min(max(v * (1/6) + 1/2, 0), 1), when hswish; else the clamp to lo..hi. */
FB_INLINE FB_VEC FB_ACT(FB_VEC v, FB_VEC lo, FB_VEC hi, bool hswish)
{
    if (!hswish)
        return FB_MIN(FB_MAX(v, lo), hi);
    FB_VEC t = FB_FMA(v, FB_SET1(1.0f / 6.0f), FB_SET1(0.5f));
    return v * FB_MIN(FB_MAX(t, FB_SET1(0.0f)), FB_SET1(1.0f));
}

/* Stores act(v) (plus res) to left channels at c (all FB_VW when left >= FB_VW). */
FB_INLINE void FB_PUT(float *c, const float *res, FB_VEC v, int left, FB_VEC lo, FB_VEC hi,
                      bool hswish)
{
    v = FB_ACT(v, lo, hi, hswish);
    if (left >= FB_VW) {
        if (res)
            v = v + FB_LOAD(res);
        FB_STORE(c, v);
        return;
    }
    float t[sizeof(FB_VEC) / sizeof(float)];
    FB_STORE(t, v);
    for (int j = 0; j < left; j++)
        c[j] = t[j] + (res ? res[j] : 0.0f);
}

/* Pixels [p0, p0 + px), channels [n0, n0 + nv * FB_VW) of g; px and nv constant at each call,
 * px * nv <= 2 * FB_PX (one vector of channels takes twice the pixels: as many accumulators). */
FB_INLINE void FB_GEMM_BLOCK(const struct cc_fused_gemm *g, int p0, const int px, int n0,
                             const int nv)
{
    FB_VEC acc[2 * FB_PX];
    FB_VEC b0 = FB_LOAD(g->bias + n0), b1 = nv > 1 ? FB_LOAD(g->bias + n0 + FB_VW) : b0;
    for (int i = 0; i < px; i++) {
        acc[i * nv] = b0;
        if (nv > 1)
            acc[i * nv + 1] = b1;
    }
    const float *a = g->a + (size_t)p0 * g->lda, *w = g->w + n0;
    for (int k = 0; k < g->k; k++, w += g->n_pad) {
        FB_VEC w0 = FB_LOAD(w), w1 = nv > 1 ? FB_LOAD(w + FB_VW) : w0;
        for (int i = 0; i < px; i++) {
            FB_VEC v = FB_SET1(a[(size_t)i * g->lda + k]);
            acc[i * nv] = FB_FMA(v, w0, acc[i * nv]);
            if (nv > 1)
                acc[i * nv + 1] = FB_FMA(v, w1, acc[i * nv + 1]);
        }
    }
    FB_VEC lo = FB_SET1(g->lo), hi = FB_SET1(g->hi);
    for (int i = 0; i < px; i++) {
        size_t at = (size_t)(p0 + i) * g->ldc + n0;
        const float *res = g->res ? g->res + at : NULL;
        FB_PUT(g->c + at, res, acc[i * nv], g->n_store - n0, lo, hi, g->hswish);
        if (nv > 1)
            FB_PUT(g->c + at + FB_VW, res ? res + FB_VW : NULL, acc[i * nv + 1],
                   g->n_store - n0 - FB_VW, lo, hi, g->hswish);
    }
}

/* Every pixel of g for channels [n0, n0 + nv * FB_VW). */
FB_INLINE void FB_GEMM_COLS(const struct cc_fused_gemm *g, int n0, const int nv)
{
    int p = 0;
    if (nv == 1)
        for (; p + 2 * FB_PX <= g->m; p += 2 * FB_PX)
            FB_GEMM_BLOCK(g, p, 2 * FB_PX, n0, 1);
    for (; p + FB_PX <= g->m; p += FB_PX)
        FB_GEMM_BLOCK(g, p, FB_PX, n0, nv);
    for (; p + 2 <= g->m; p += 2)
        FB_GEMM_BLOCK(g, p, 2, n0, nv);
    for (; p < g->m; p++)
        FB_GEMM_BLOCK(g, p, 1, n0, nv);
}

FB_TARGET FB_LINKAGE void FB_NAME(cc_fused_gemm_)(const struct cc_fused_gemm *g)
{
    int n0 = 0;
    for (; n0 + FB_VW < g->n; n0 += 2 * FB_VW)
        FB_GEMM_COLS(g, n0, 2);
    if (n0 < g->n)
        FB_GEMM_COLS(g, n0, 1);
}

/* Pixels [ox, ox + px) of d, channels [c0, c0 + FB_VW); w: the k x k tap vectors; px, k and the
 * stride s constant at each call. Input column j of the block (s * px + k - s of them) is read
 * once a row, by the taps kx = j - s * i of the pixels i it falls on. */
FB_INLINE void FB_DW_BLOCK(const struct cc_fused_dw *d, int ox, const int px, int c0,
                           const FB_VEC *w, FB_VEC bias, FB_VEC lo, FB_VEC hi, const int k,
                           const int s)
{
    FB_VEC acc[FB_DWPXMAX];
    FB_UNROLL
    for (int i = 0; i < px; i++)
        acc[i] = bias;
    for (int ky = 0; ky < k; ky++) {
        const float *row = d->rows[ky] + (size_t)s * ox * d->c_pad + c0;
        FB_UNROLL
        for (int j = 0; j < s * (px - 1) + k; j++) {
            FB_VEC x = FB_LOAD(row + (size_t)j * d->c_pad);
            FB_UNROLL
            for (int kx = 0; kx < k; kx++) {
                int i = (j - kx) / s;
                if (j >= kx && (j - kx) % s == 0 && i < px)
                    acc[i] = FB_FMA(x, w[ky * k + kx], acc[i]);
            }
        }
    }
    FB_UNROLL
    for (int i = 0; i < px; i++)
        FB_STORE(d->y + (size_t)(ox + i) * d->c_pad + c0, FB_ACT(acc[i], lo, hi, d->hswish));
}

/* The row d for a k x k kernel at stride s (both constant at each call): blocks of px pixels,
 * then of 4 and 1. */
FB_INLINE void FB_DW_ROW(const struct cc_fused_dw *d, const int k, const int s, const int px)
{
    FB_VEC lo = FB_SET1(d->lo), hi = FB_SET1(d->hi);
    for (int c0 = 0; c0 < d->c; c0 += FB_VW) {
        FB_VEC w[CC_FUSED_KMAX * CC_FUSED_KMAX];
        for (int t = 0; t < k * k; t++)
            w[t] = FB_LOAD(d->w + (size_t)t * d->c_pad + c0);
        FB_VEC bias = FB_LOAD(d->bias + c0);
        int ox = 0;
        for (; ox + px <= d->wo; ox += px)
            FB_DW_BLOCK(d, ox, px, c0, w, bias, lo, hi, k, s);
        if (px > 4)
            for (; ox + 4 <= d->wo; ox += 4)
                FB_DW_BLOCK(d, ox, 4, c0, w, bias, lo, hi, k, s);
        for (; ox < d->wo; ox++)
            FB_DW_BLOCK(d, ox, 1, c0, w, bias, lo, hi, k, s);
    }
}

/* FB_DW_ROW for d's stride (1 or 2) and a k x k kernel. */
FB_INLINE void FB_DW_STRIDE(const struct cc_fused_dw *d, const int k, const int px)
{
    if (d->stride == 1)
        FB_DW_ROW(d, k, 1, px);
    else
        FB_DW_ROW(d, k, 2, px);
}

FB_TARGET FB_LINKAGE void FB_NAME(cc_fused_dw_)(const struct cc_fused_dw *d)
{
    if (d->k == 5)
        FB_DW_STRIDE(d, 5, FB_DWPX5);
    else
        FB_DW_STRIDE(d, 3, FB_DWPX3);
}

#undef FB_PUT
#undef FB_GEMM_BLOCK
#undef FB_GEMM_COLS
#undef FB_DW_BLOCK
#undef FB_DW_STRIDE
#undef FB_DWPX5
#undef FB_DWPXMAX
#undef FB_UNROLL
#undef FB_DWPX3
#undef FB_ACT
#undef FB_DW_ROW
#undef FB_INLINE
#undef FB_VW
#undef FB_NAME
#undef FB_CAT
#undef FB_CAT2
#undef FB_SFX
#undef FB_LINKAGE
#undef FB_TARGET
#undef FB_VEC
#undef FB_PX
#undef FB_LOAD
#undef FB_STORE
#undef FB_SET1
#undef FB_FMA
#undef FB_MIN
#undef FB_MAX
