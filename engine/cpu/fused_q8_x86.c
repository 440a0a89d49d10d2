/* camclass — the int8 fused block's x86-64 kernels (see fused_q8.h): fused_q8_kern.h
 * instantiated for AVX-512 VNNI (16 lanes, vpdpbusd: 4 unsigned x signed byte products
 * summed into each int32 lane; 6 pixels x 2 vectors = 12 of 32 registers hold accumulators)
 * and AVX2 (8 lanes; no byte dot product without saturation (vpmaddubsw saturates at int16),
 * so the even and odd bytes are widened to int16 and summed with vpmaddwd: 4 pixels x 2
 * vectors) and AVX-VNNI (AVX2's layout and widths, vpdpbusd on 256-bit vectors), built with
 * function target attributes and called only where the CPU has them (fused_q8.c). */
#include <immintrin.h>

#include "fused_q8.h"

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

/* AVX2: a weight vector split into its even and odd bytes as int16 (sign-extended), the
 * input's 4 unsigned bytes likewise (zero-extended); their vpmaddwd sums are the dot. */
struct fq_avx2_pair {
    __m256i even, odd;
};

__attribute__((target("avx2"))) static inline struct fq_avx2_pair fq_avx2_w(const int8_t *p)
{
    __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)p);
    return (struct fq_avx2_pair){_mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8),
                                 _mm256_srai_epi16(w, 8)};
}

__attribute__((target("avx2"))) static inline struct fq_avx2_pair fq_avx2_a(uint32_t u)
{
    __m256i a = _mm256_set1_epi32((int)u);
    return (struct fq_avx2_pair){_mm256_and_si256(a, _mm256_set1_epi32(0x00ff00ff)),
                                 _mm256_srli_epi16(a, 8)};
}

__attribute__((target("avx2"))) static inline __m256i
fq_avx2_dot(__m256i acc, struct fq_avx2_pair a, struct fq_avx2_pair w)
{
    return _mm256_add_epi32(
        acc, _mm256_add_epi32(_mm256_madd_epi16(a.even, w.even), _mm256_madd_epi16(a.odd, w.odd)));
}

/* 8 int32 lanes in -128..127 as 8 bytes at p. */
__attribute__((target("avx2"))) static inline void fq_avx2_storeb(int8_t *p, __m256i v)
{
    __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packs_epi16(h, h));
}

#define FQ_SFX avx2
#define FQ_TARGET __attribute__((target("avx2")))
#define FQ_W struct fq_avx2_pair
#define FQ_WLOAD(p) fq_avx2_w(p)
#define FQ_A struct fq_avx2_pair
#define FQ_ABCAST(u) fq_avx2_a(u)
#define FQ_DOT(acc, a, w) fq_avx2_dot((acc), (a), (w))
#include "fused_q8_ymm.h"
#include "fused_q8_kern.h"

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
