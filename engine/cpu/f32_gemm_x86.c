/* camclass — the f32 1x1 convolution's x86-64 kernels (see f32_gemm.h): AVX-512 and AVX2+FMA,
 * built with per-function target attributes and called only where the CPU has them
 * (cc_stem_isa_runs).
 *
 * A micro-tile is MR pixels x NV vectors of output channels: MR x NV accumulators that start
 * as the bias; for each input channel k the panel's NV weight vectors are loaded once and each
 * pixel's x[k] broadcast once, MR x NV FMAs; then the clamp and the store (masked past n). The
 * pixel count of the last tile (p mod MR) is a constant of its own copy of the kernel, so the
 * accumulators stay in registers there too.
 */
#include <immintrin.h>

#include "f32_gemm.h"

#define ALWAYS_INLINE __attribute__((always_inline)) inline
/* Fully unrolled loops over the accumulators (GCC at -O2 keeps a loop, and the accumulators
 * in memory, without it). */
#define UNROLL _Pragma("GCC unroll 8")

/* Panel q + 1 of p's packed weights and its width in floats (0 when q is the last: nothing to
 * fetch). The AVX2 kernel's first tile of panel q asks for it to come into L2, a line per input
 * channel, so that the next panel's tiles do not wait for memory: in a network each layer's
 * weights come from memory or L3 (0.6-1.6 MB at 7x7), and with the hardware prefetcher alone
 * the 7x7 layers ran 9-12 % slower than with their weights in L2 (features.15's 160 -> 960:
 * 0.18 against 0.16 ms). The AVX-512 kernel does not: asked in its every tile, the requests
 * made layers of many pixels and one or two panels 10-35 % slower and the 7x7 ones 3 % faster;
 * in its first tile only, features.17.conv.2 slower (docs/PERFORMANCE.md). */
static inline const float *next_panel(const struct cc_f32_pw *p, int q, size_t *width)
{
    int panels = cc_f32_pw_panels(p);
    *width = q + 1 >= panels ? 0 : (size_t)(q + 2 < panels ? p->nr : p->nr_last);
    return p->w + (size_t)(q + 1 < panels ? q + 1 : q) * (size_t)p->c * (size_t)p->nr;
}

/* ------------------------------------------------------------------------------------------
 * AVX-512: 16 floats a vector, 7 pixels x 3 vectors (21 accumulators, 3 weights, a broadcast)
 */

#define T512 __attribute__((target("avx512f")))

/* The fused activation: hardswish v * min(max(v * (1/6) + 1/2, 0), 1) when p->hswish (the
 * fused block's form, fused_block_kern.h), else the clamp to lo..hi. */
T512 static ALWAYS_INLINE __m512 act512(const struct cc_f32_pw *p, __m512 v, __m512 lo, __m512 hi)
{
    if (!p->hswish)
        return _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    __m512 t = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(1.0f));
    return _mm512_mul_ps(v, t);
}

/* Pixels [r, r + mr) x panel q, whose channels are nv vectors (the last panel may be narrower). */
T512 static ALWAYS_INLINE void mk512(const struct cc_f32_pw *p, size_t r, const int mr, int q,
                                     const int nv)
{
    const size_t c = (size_t)p->c, nr = (size_t)(16 * nv);
    const float *wq = p->w + (size_t)q * c * CC_F32_PW_NR512;
    const float *b = p->bias + (size_t)q * CC_F32_PW_NR512;
    const float *x = p->x + r * c;
    __m512 acc[CC_F32_PW_MR512][CC_F32_PW_NR512 / 16];
    UNROLL
    for (int i = 0; i < mr; i++) {
        UNROLL
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm512_load_ps(b + 16 * v);
    }
    for (size_t k = 0; k < c; k++, wq += nr) {
        __m512 w[CC_F32_PW_NR512 / 16];
        UNROLL
        for (int v = 0; v < nv; v++)
            w[v] = _mm512_load_ps(wq + 16 * v);
        UNROLL
        for (int i = 0; i < mr; i++) {
            __m512 xb = _mm512_set1_ps(x[(size_t)i * c + k]);
            UNROLL
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm512_fmadd_ps(xb, w[v], acc[i][v]);
        }
    }
    const __m512 lo = _mm512_set1_ps(p->lo), hi = _mm512_set1_ps(p->hi);
    int o0 = q * CC_F32_PW_NR512;
    UNROLL
    for (int v = 0; v < nv; v++) {
        int left = p->n - o0 - 16 * v;
        if (left <= 0)
            break;
        __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
        UNROLL
        for (int i = 0; i < mr; i++) {
            float *y = p->y + (r + (size_t)i) * (size_t)p->n + (size_t)(o0 + 16 * v);
            _mm512_mask_storeu_ps(y, m, act512(p, acc[i][v], lo, hi));
        }
    }
}

/* Pixels [r0, r0 + rows) x panel q of nv vectors: whole tiles, then the rest's own copy. */
T512 static ALWAYS_INLINE void panel512(const struct cc_f32_pw *p, size_t r0, size_t rows, int q,
                                        const int nv)
{
    const size_t mr = CC_F32_PW_MR512;
    size_t whole = rows / mr * mr;
    for (size_t r = r0; r < r0 + whole; r += mr)
        mk512(p, r, CC_F32_PW_MR512, q, nv);
    switch (rows - whole) { // CC_F32_PW_MR512 - 1 cases
    case 1:
        mk512(p, r0 + whole, 1, q, nv);
        break;
    case 2:
        mk512(p, r0 + whole, 2, q, nv);
        break;
    case 3:
        mk512(p, r0 + whole, 3, q, nv);
        break;
    case 4:
        mk512(p, r0 + whole, 4, q, nv);
        break;
    case 5:
        mk512(p, r0 + whole, 5, q, nv);
        break;
    case 6:
        mk512(p, r0 + whole, 6, q, nv);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------------------------------
 * AVX2+FMA: 8 floats a vector, 6 pixels x 2 vectors (12 accumulators of 16 registers)
 */

#define T256 __attribute__((target("avx2,fma")))

/* act512's 8-float twin. */
T256 static ALWAYS_INLINE __m256 act256(const struct cc_f32_pw *p, __m256 v, __m256 lo, __m256 hi)
{
    if (!p->hswish)
        return _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    __m256 t = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
    t = _mm256_min_ps(_mm256_max_ps(t, _mm256_setzero_ps()), _mm256_set1_ps(1.0f));
    return _mm256_mul_ps(v, t);
}

T256 static ALWAYS_INLINE void store256(float *y, __m256 v, int left)
{
    if (left >= 8) {
        _mm256_storeu_ps(y, v);
        return;
    }
    float tmp[8];
    _mm256_storeu_ps(tmp, v);
    for (int j = 0; j < left; j++)
        y[j] = tmp[j];
}

/* Pixels [r, r + mr) x panel q, whose channels are nv vectors (the last panel may be narrower);
 * when ahead (a constant at each call: a copy of its own), also the prefetch of panel q + 1
 * (next_panel). */
T256 static ALWAYS_INLINE void mk256(const struct cc_f32_pw *p, size_t r, const int mr, int q,
                                     const int nv, const bool ahead)
{
    const size_t c = (size_t)p->c, nr = (size_t)(8 * nv);
    const float *wq = p->w + (size_t)q * c * CC_F32_PW_NR256;
    const float *b = p->bias + (size_t)q * CC_F32_PW_NR256;
    const float *x = p->x + r * c;
    __m256 acc[CC_F32_PW_MR256][CC_F32_PW_NR256 / 8];
    UNROLL
    for (int i = 0; i < mr; i++) {
        UNROLL
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm256_load_ps(b + 8 * v);
    }
    size_t pw;
    const float *pf = next_panel(p, q, &pw);
    pw = ahead ? pw : 0;
    for (size_t k = 0; k < c; k++, wq += nr, pf += pw) {
        if (pw) // the next panel's line of channel k (8 or 16 floats)
            _mm_prefetch((const char *)pf, _MM_HINT_T1);
        __m256 w[CC_F32_PW_NR256 / 8];
        UNROLL
        for (int v = 0; v < nv; v++)
            w[v] = _mm256_load_ps(wq + 8 * v);
        UNROLL
        for (int i = 0; i < mr; i++) {
            __m256 xb = _mm256_broadcast_ss(x + (size_t)i * c + k);
            UNROLL
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm256_fmadd_ps(xb, w[v], acc[i][v]);
        }
    }
    const __m256 lo = _mm256_set1_ps(p->lo), hi = _mm256_set1_ps(p->hi);
    int o0 = q * CC_F32_PW_NR256;
    UNROLL
    for (int v = 0; v < nv; v++) {
        int left = p->n - o0 - 8 * v;
        if (left <= 0)
            break;
        UNROLL
        for (int i = 0; i < mr; i++)
            store256(p->y + (r + (size_t)i) * (size_t)p->n + (size_t)(o0 + 8 * v),
                     act256(p, acc[i][v], lo, hi), left);
    }
}

/* A whole tile of panel q that also asks for panel q + 1: out of line, so that the compiler
 * allocates the registers of the other tiles' loops as without it (inlined, one of them kept
 * an accumulator on the stack: 3136 pixels 24 -> 144 and 12544 16 -> 96 5-10 % slower). */
T256 static __attribute__((noinline)) void ahead256(const struct cc_f32_pw *p, size_t r, int q,
                                                    int nv)
{
    if (nv == 2)
        mk256(p, r, CC_F32_PW_MR256, q, 2, true);
    else
        mk256(p, r, CC_F32_PW_MR256, q, 1, true);
}

/* Pixels [r0, r0 + rows) x panel q of nv vectors: whole tiles, then the rest's own copy. The
 * first whole tile asks for the next panel (ahead256; in every tile, the requests for lines
 * already in L2 cost layers of many tiles up to 12 %: 3136 pixels, 96 -> 24). */
T256 static ALWAYS_INLINE void panel256(const struct cc_f32_pw *p, size_t r0, size_t rows, int q,
                                        const int nv)
{
    const size_t mr = CC_F32_PW_MR256;
    size_t whole = rows / mr * mr;
    if (whole)
        ahead256(p, r0, q, nv);
    for (size_t r = r0 + mr; r < r0 + whole; r += mr)
        mk256(p, r, CC_F32_PW_MR256, q, nv, false);
    switch (rows - whole) { // CC_F32_PW_MR256 - 1 cases
    case 1:
        mk256(p, r0 + whole, 1, q, nv, false);
        break;
    case 2:
        mk256(p, r0 + whole, 2, q, nv, false);
        break;
    case 3:
        mk256(p, r0 + whole, 3, q, nv, false);
        break;
    case 4:
        mk256(p, r0 + whole, 4, q, nv, false);
        break;
    case 5:
        mk256(p, r0 + whole, 5, q, nv, false);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------------------------------
 * The tiles: every panel 3 (AVX-512) or 2 (AVX2) vectors wide, but the last, nr_last wide
 */

T512 void cc_f32_pw_tile_avx512(const struct cc_f32_pw *p, size_t r0, size_t rows, int q0,
                                int panels)
{
    int last = cc_f32_pw_panels(p) - 1;
    for (int q = q0; q < q0 + panels; q++) {
        int nv = q < last ? 3 : p->nr_last / 16;
        if (nv == 3)
            panel512(p, r0, rows, q, 3);
        else if (nv == 2)
            panel512(p, r0, rows, q, 2);
        else
            panel512(p, r0, rows, q, 1);
    }
}

T256 void cc_f32_pw_tile_avx2(const struct cc_f32_pw *p, size_t r0, size_t rows, int q0, int panels)
{
    int last = cc_f32_pw_panels(p) - 1;
    for (int q = q0; q < q0 + panels; q++) {
        if (q < last || p->nr_last == 16)
            panel256(p, r0, rows, q, 2);
        else
            panel256(p, r0, rows, q, 1);
    }
}
