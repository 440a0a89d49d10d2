/* camclass — the int8 1x1 GEMM's x86-64 kernels (see q8_gemm.h): q8_gemm_kern.h instantiated
 * for AVX-512 VNNI (16 lanes, vpdpbusd; a panel of 4 vectors = 64 outputs, 6 pixels: 24 of
 * 32 registers hold accumulators), AVX-VNNI (vpdpbusd on 256-bit vectors; 2 vectors = 16
 * outputs, 4 pixels: 8 of 16 registers), built with function target attributes and called only
 * where the CPU has them; and for AVX2, on the same groups of 4 bytes, vpmaddubsw on |x| and
 * the weights with x's sign (layers without a weight of -128). The AVX2 kernels on int16 pairs
 * are q8_gemm_avx2.c's. */
#include <immintrin.h>

#include "q8_gemm.h"

#define QG_SFX avx512vnni
#define QG_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define QG_VI __m512i
#define QG_VF __m512
#define QG_N 16
#define QG_NV 4
#define QG_MR 6
#define QG_W __m512i
#define QG_WLOAD(p) _mm512_loadu_si512((const void *)(p))
#define QG_A __m512i
#define QG_ABCAST(u) _mm512_set1_epi32((int)(u))
#define QG_DOT(acc, a, w) _mm512_dpbusd_epi32((acc), (a), (w))
#define QG_LOADI(p) _mm512_loadu_si512((const void *)(p))
#define QG_SET1I(x) _mm512_set1_epi32(x)
#define QG_ADDI(a, b) _mm512_add_epi32((a), (b))
#define QG_LOADF(p) _mm512_loadu_ps(p)
#define QG_SET1F(x) _mm512_set1_ps(x)
#define QG_MULF(a, b) _mm512_mul_ps((a), (b))
#define QG_MINF(a, b) _mm512_min_ps((a), (b))
#define QG_MAXF(a, b) _mm512_max_ps((a), (b))
#define QG_CVTF(v) _mm512_cvtepi32_ps(v)
#define QG_CVTI(v) _mm512_cvtps_epi32(v)
#define QG_STOREB(p, v) _mm_storeu_si128((__m128i *)(void *)(p), _mm512_cvtepi32_epi8(v))
#include "q8_gemm_kern.h"

/* 8 int32 lanes in -128..127 as 8 bytes at p. */
__attribute__((target("avx2"))) static inline void qg_ymm_storeb(int8_t *p, __m256i v)
{
    __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packs_epi16(h, h));
}

/* AVX-VNNI (the VEX-encoded vpdpbusd of Alder Lake and Zen 5 on 256-bit vectors). */
#define QG_SFX avxvnni
#define QG_TARGET __attribute__((target("avx2,avxvnni")))
#define QG_ABCAST(u) _mm256_set1_epi32((int)(u))
#define QG_DOT(acc, a, w) _mm256_dpbusd_avx_epi32((acc), (a), (w))
#include "q8_gemm_ymm.h"
#include "q8_gemm_kern.h"

/* AVX2 without a byte dot product, for layers whose weights are all in -127..127 (signed x):
 * vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16, which saturates for
 * x + 128 against full int8 weights. Here the unsigned side is |x| (at most 128) and the signed
 * one w with x's sign (vpsignb: -w stays in -127..127; 0 where x is 0), so a pair is at most
 * 2 * 128 * 127 = 32512: exact. vpmaddwd by ones then sums the pairs into int32. As many vector
 * operations for 32 products as the int16 pair kernels (q8_avx2.h: 2 vpmaddwd, 2 vpaddd), one
 * vpabsb a broadcast more, but half their loads: weights as bytes, 4 inputs a broadcast, and no
 * widening. q8_gemm.c gives it the layers of few pixels, where that wins. */
__attribute__((target("avx2"))) static inline __m256i qg_sign_dot(__m256i acc, __m256i x, __m256i w)
{
    __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(w, x));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

#define QG_SFX avx2sign
#define QG_TARGET __attribute__((target("avx2")))
// x itself: the template's u is x ^ 0x80 in each byte (the unsigned input of vpdpbusd)
#define QG_ABCAST(u) _mm256_set1_epi32((int)((u) ^ 0x80808080u))
#define QG_DOT(acc, a, w) qg_sign_dot((acc), (a), (w))
#include "q8_gemm_ymm.h"
#include "q8_gemm_kern.h"
