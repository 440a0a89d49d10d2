/* camclass — the int8 fused block's x86-64 kernels (see fused_q8.h): fused_q8_kern.h
 * instantiated for AVX-512 VNNI (16 lanes, vpdpbusd: 4 unsigned x signed byte products
 * summed into each int32 lane; 6 pixels x 2 vectors = 12 of 32 registers hold accumulators)
 * and AVX-VNNI (8 lanes, vpdpbusd on 256-bit vectors: 4 pixels x 2 vectors); AVX2 (no byte
 * dot product without saturation: vpmaddubsw saturates at int16) has the template's
 * requantization but its GEMM on q8_avx2.h's micro-kernel, shared with the int8 1x1 GEMM:
 * int16 weight pairs, the row's inputs widened once, 4 pixels x 3 vectors; and a depthwise of
 * its own, vpmaddwd on pairs of taps (below). Built
 * with function target attributes and called only where the CPU has them (fused_q8.c). */
#include <immintrin.h>

#include "fused_q8.h"
#include "q8_avx2.h"

#define FQ_SFX avx512vnni
#define FQ_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define FQ_VI __m512i
#define FQ_VF __m512
#define FQ_N 16
#define FQ_PX 6
#define FQ_W __m512i
#define FQ_WLOAD(p) _mm512_loadu_si512((const void *)(p))
#define FQ_A __m512i
#define FQ_ABCAST(u) _mm512_set1_epi32((int)(u))
#define FQ_DOT(acc, a, w) _mm512_dpbusd_epi32((acc), (a), (w))
#define FQ_LOADI(p) _mm512_loadu_si512((const void *)(p))
#define FQ_SET1I(x) _mm512_set1_epi32(x)
#define FQ_ADDI(a, b) _mm512_add_epi32((a), (b))
#define FQ_MULLOI(a, b) _mm512_mullo_epi32((a), (b))
#define FQ_MINI(a, b) _mm512_min_epi32((a), (b))
#define FQ_MAXI(a, b) _mm512_max_epi32((a), (b))
#define FQ_SRA(v, n) _mm512_sra_epi32((v), _mm_cvtsi32_si128(n))
#define FQ_LOADF(p) _mm512_loadu_ps(p)
#define FQ_SET1F(x) _mm512_set1_ps(x)
#define FQ_MULF(a, b) _mm512_mul_ps((a), (b))
#define FQ_MINF(a, b) _mm512_min_ps((a), (b))
#define FQ_MAXF(a, b) _mm512_max_ps((a), (b))
#define FQ_CVTF(v) _mm512_cvtepi32_ps(v)
#define FQ_CVTI(v) _mm512_cvtps_epi32(v)
#define FQ_LOADB(p) _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define FQ_STOREB(p, v) _mm_storeu_si128((__m128i *)(void *)(p), _mm512_cvtepi32_epi8(v))
#include "fused_q8_kern.h"

/* 8 int32 lanes in -128..127 as 8 bytes at p. */
__attribute__((target("avx2"))) static inline void fq_avx2_storeb(int8_t *p, __m256i v)
{
    __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packs_epi16(h, h));
}

/* AVX2: the template's requantization, add and store (fq_put_avx2); the GEMM is q8_avx2.h's
 * micro-kernel and the depthwise vpmaddwd on tap pairs, both below. */
#define FQ_SFX avx2
#define FQ_TARGET __attribute__((target("avx2")))
#define FQ_NO_GEMM
#define FQ_NO_DW
#include "fused_q8_ymm.h"
#include "fused_q8_kern.h"

/* ------------------------------------------------------------------------------------------
 * The AVX2 depthwise: vpmaddwd on pairs of taps, 16 products an instruction (vpmulld makes 8)
 * and exact: x and w are int8 (at most 2 * 128 * 128 a pair, in int32). 16 channels a block
 * as two vectors of 8 int32 lanes; an input column's two rows (ky 0 and 1) sign-extended to
 * int16 and interleaved once (vpunpcklwd/hwd) for the pixels that read it: the low vector
 * holds channels 0-3 and 8-11, the high one 4-7 and 12-15 (the unpacks work per 128-bit lane;
 * the weights, biases and scales packed so (cc_fq8_pack_dw), and the packs of the requantization
 * put the channels back in order). Row 2 pairs column j with j + 1: a pixel at column j takes taps
 * (2, 0) and (2, 1) from pair j, tap (2, 2) from the high half of pair j + 1 (a weight 0 in
 * the low half), so no column past the pixels' own is read.
 */
enum { DWA_PX = 4 }; // pixels a block: 8 accumulators, 10 weight pairs (some from L1)

CC_Q8A_INLINE __m256i dwa_load8(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* 16 int8 at p as int16. */
CC_Q8A_INLINE __m256i dwa_load16(const int8_t *p)
{
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* acc (16 channels at pixel i, both halves) requantized as fq_req_avx2 and stored at y; the
 * clamp below after the conversion (lo is whole: the same value) and on the packed bytes. */
CC_Q8A_INLINE void dwa_put(const struct cc_fq8_dw *d, const __m256i acc[2], const __m256 sc[2],
                           int8_t *y)
{
    __m256i v[2];
    for (int h = 0; h < 2; h++) {
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[h]), sc[h]);
        v[h] = _mm256_cvtps_epi32(_mm256_min_ps(f, _mm256_set1_ps(d->hi)));
    }
    __m256i s = _mm256_adds_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_set1_epi16((short)d->zp));
    s = _mm256_permute4x64_epi64(_mm256_packs_epi16(s, s), 0x08);
    __m128i b = _mm_max_epi8(_mm256_castsi256_si128(s), _mm_set1_epi8((char)((int)d->lo + d->zp)));
    _mm_storeu_si128((__m128i *)(void *)y, b);
}

/* Pixels [ox, ox + px) of d, channels [c0, c0 + 16), stride st (px, st constant at each call). */
CC_Q8A_INLINE void dwa_block(const struct cc_fq8_dw *d, int ox, const int px, int c0,
                             const __m256i w[2][5], const __m256i bias[2], const __m256 sc[2],
                             const int st)
{
    __m256i acc[DWA_PX][2];
    CC_Q8A_UNROLL
    for (int i = 0; i < px; i++)
        acc[i][0] = bias[0], acc[i][1] = bias[1];
    size_t cp = (size_t)d->c_pad, o = (size_t)st * ox * cp + c0;
    const int8_t *r0 = d->rows[0] + o, *r1 = d->rows[1] + o, *r2 = d->rows[2] + o;
    CC_Q8A_UNROLL
    for (int j = 0; j < st * (px - 1) + 3; j++) {
        __m256i a = dwa_load16(r0 + j * cp), b = dwa_load16(r1 + j * cp);
        __m256i p[2] = {_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b)};
        CC_Q8A_UNROLL
        for (int i = 0; i < px; i++)
            if (j - st * i >= 0 && j - st * i < 3)
                for (int h = 0; h < 2; h++)
                    acc[i][h] =
                        _mm256_add_epi32(acc[i][h], _mm256_madd_epi16(p[h], w[h][j - st * i]));
    }
    __m256i prev = dwa_load16(r2);
    CC_Q8A_UNROLL
    for (int j = 0; j < st * (px - 1) + 2; j++) {
        __m256i next = dwa_load16(r2 + (j + 1) * cp);
        __m256i p[2] = {_mm256_unpacklo_epi16(prev, next), _mm256_unpackhi_epi16(prev, next)};
        prev = next;
        CC_Q8A_UNROLL
        for (int i = 0; i < px; i++)
            if (j - st * i == 0 || j - st * i == 1)
                for (int h = 0; h < 2; h++)
                    acc[i][h] =
                        _mm256_add_epi32(acc[i][h], _mm256_madd_epi16(p[h], w[h][3 + j - st * i]));
    }
    CC_Q8A_UNROLL
    for (int i = 0; i < px; i++)
        dwa_put(d, acc[i], sc, d->y + (size_t)(ox + i) * cp + c0);
}

/* The row of d at stride st (constant at each call); c_pad, a multiple of 32, covers the
 * 16 channels of the last block; the pixels past the blocks of DWA_PX in blocks of 2, 1. */
CC_Q8A_INLINE void dwa_row(const struct cc_fq8_dw *d, const int st)
{
    for (int c0 = 0; c0 < d->c; c0 += 16) {
        __m256i w[2][5], bias[2];
        __m256 sc[2];
        for (int h = 0; h < 2; h++) {
            for (int k = 0; k < 5; k++)
                w[h][k] = dwa_load8(d->w + (size_t)c0 * 5 + (size_t)(h * 5 + k) * 8);
            bias[h] = dwa_load8(d->bias + c0 + h * 8);
            sc[h] = _mm256_loadu_ps(d->scale + c0 + h * 8);
        }
        int ox = 0;
        for (; ox + DWA_PX <= d->wo; ox += DWA_PX)
            dwa_block(d, ox, DWA_PX, c0, w, bias, sc, st);
        if (ox + 2 <= d->wo)
            dwa_block(d, ox, 2, c0, w, bias, sc, st), ox += 2;
        if (ox < d->wo)
            dwa_block(d, ox, 1, c0, w, bias, sc, st);
    }
}

CC_Q8A_TARGET void cc_fq8_dw_avx2(const struct cc_fq8_dw *d)
{
    if (d->stride == 1)
        dwa_row(d, 1);
    else
        dwa_row(d, 2);
}

/* Pixel pa's outputs [na, na + 8) and pb's [nb, nb + 8) of g from a, b: requantized together
 * (cc_q8a_requant2) where both exist whole and there is no add, else one by one. */
CC_Q8A_INLINE void fq_avx2_put2(const struct cc_fq8_gemm *g, int pa, int na, __m256i a, int pb,
                                int nb, __m256i b)
{
    if (g->res || g->n_store - na < 8 || g->n_store - nb < 8) {
        fq_put_avx2(g, pa, na, a);
        fq_put_avx2(g, pb, nb, b);
        return;
    }
    __m128i q = cc_q8a_requant2(a, g->scale + na, b, g->scale + nb, g->lo, g->hi, g->zp);
    cc_q8a_store2(g->c + (size_t)pa * g->ldc + na, g->c + (size_t)pb * g->ldc + nb, q);
}

/* Pixels [p0, p0 + px), outputs [n0, n0 + nv * 8) of g (weights: int16 pairs, fused_q8.h);
 * px and nv constant at each call. */
CC_Q8A_INLINE void fq_avx2_block(const struct cc_fq8_gemm *g, size_t kp, int p0, const int px,
                                 int n0, const int nv)
{
    __m256i acc[CC_Q8A_MR][CC_Q8A_NV];
    CC_Q8A_UNROLL
    for (int v = 0; v < nv; v++) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(g->bias + n0 + v * 8));
        CC_Q8A_UNROLL
        for (int i = 0; i < px; i++)
            acc[i][v] = b;
    }
    cc_q8a_dot(acc, g->wide + (size_t)p0 * kp, kp, 4, g->w + (size_t)n0 * 4, (size_t)g->n_pad * 4,
               (int)kp / 2, px, nv, true);
#define PUT2(i, v, j, w)                                                                           \
    fq_avx2_put2(g, p0 + (i), n0 + (v)*8, acc[i][v], p0 + (j), n0 + (w)*8, acc[j][w])
#define PUT1(i, v) fq_put_avx2(g, p0 + (i), n0 + (v)*8, acc[i][v])
    CC_Q8A_PUT_PAIRS(px, nv, PUT2, PUT1);
#undef PUT2
#undef PUT1
}

/* Every pixel of g, outputs [n0, n0 + nv * 8) (nv constant at each call). */
CC_Q8A_INLINE void fq_avx2_cols(const struct cc_fq8_gemm *g, size_t kp, int n0, const int nv)
{
    int p = 0;
    for (; p + CC_Q8A_MR <= g->m; p += CC_Q8A_MR)
        fq_avx2_block(g, kp, p, CC_Q8A_MR, n0, nv);
    for (; p + 2 <= g->m; p += 2)
        fq_avx2_block(g, kp, p, 2, n0, nv);
    for (; p < g->m; p++)
        fq_avx2_block(g, kp, p, 1, n0, nv);
}

/* The row's inputs widened once into g->wide, then 24 outputs at a time over every pixel (the
 * weights of 24 outputs stay in L1 while the pixels pass). */
CC_Q8A_TARGET void cc_fq8_gemm_avx2(const struct cc_fq8_gemm *g)
{
    size_t kp = (size_t)(g->k + 3) / 4 * 4;
    for (int p = 0; p < g->m; p++)
        cc_q8a_widen(g->wide + (size_t)p * kp, g->a + (size_t)p * g->lda, 4, 0, g->k);
    int vecs = (g->n + 7) / 8;
    for (int v0 = 0; v0 < vecs; v0 += CC_Q8A_NV) {
        if (vecs - v0 >= 3)
            fq_avx2_cols(g, kp, v0 * 8, 3);
        else if (vecs - v0 == 2)
            fq_avx2_cols(g, kp, v0 * 8, 2);
        else
            fq_avx2_cols(g, kp, v0 * 8, 1);
    }
}

/* AVX-VNNI (the VEX-encoded vpdpbusd of Alder Lake and Zen 5 on 256-bit vectors). */
#define FQ_SFX avxvnni
#define FQ_TARGET __attribute__((target("avx2,avxvnni")))
#define FQ_W __m256i
#define FQ_WLOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define FQ_A __m256i
#define FQ_ABCAST(u) _mm256_set1_epi32((int)(u))
#define FQ_DOT(acc, a, w) _mm256_dpbusd_avx_epi32((acc), (a), (w))
#include "fused_q8_ymm.h"
#include "fused_q8_kern.h"
