/* camclass — the int8 fused block's x86-64 kernels (see fused_q8.h): fused_q8_kern.h
 * instantiated for AVX-512 VNNI (16 lanes, vpdpbusd: 4 unsigned x signed byte products
 * summed into each int32 lane; 6 pixels x 2 vectors = 12 of 32 registers hold accumulators)
 * and AVX-VNNI (8 lanes, vpdpbusd on 256-bit vectors: 4 pixels x 2 vectors); AVX2 (no byte
 * dot product without saturation: vpmaddubsw saturates at int16) has the template's
 * depthwise and requantization but its GEMM on q8_avx2.h's micro-kernel, shared with the int8
 * 1x1 GEMM: int16 weight pairs, the row's inputs widened once, 4 pixels x 3 vectors. Built
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

/* AVX2: the template's requantization, add and store (fq_put_avx2) and depthwise; the GEMM is
 * q8_avx2.h's micro-kernel, below. */
#define FQ_SFX avx2
#define FQ_TARGET __attribute__((target("avx2")))
#define FQ_NO_GEMM
#include "fused_q8_ymm.h"
#include "fused_q8_kern.h"

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
    CC_Q8A_UNROLL
    for (int i = 0; i < px; i++)
        CC_Q8A_UNROLL
    for (int v = 0; v < nv; v++)
        fq_put_avx2(g, p0 + i, n0 + v * 8, acc[i][v]);
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
