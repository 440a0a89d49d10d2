/* camclass — the int8 stem's x86-64 quantizers (see q8_stem.h): XNNPACK's f32 -> QS8 convert
 * with AVX-512 and AVX2 intrinsics, built with function target attributes and called only
 * where the CPU has them (q8_stem.c). x * inv, min with the high end (a NaN takes it), max with
 * the low end, vcvtps2dq (rounding half to even, the default MXCSR mode), plus the zero point,
 * narrowed to bytes. */
#include <immintrin.h>

#include "q8_stem.h"

__attribute__((target("avx512f"))) void cc_q8_stem_quantize_avx512(const float *x, int n, int8_t *q,
                                                                   const struct cc_q8_stem_quant *p)
{
    __m512 inv = _mm512_set1_ps(p->inv), lo = _mm512_set1_ps(p->lo), hi = _mm512_set1_ps(p->hi);
    __m512i zp = _mm512_set1_epi32(p->zp);
    for (int i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), inv);
        v = _mm512_max_ps(_mm512_min_ps(v, hi), lo);
        __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
        _mm512_mask_cvtepi32_storeu_epi8(q + i, m, r);
    }
}

__attribute__((target("avx2"))) void cc_q8_stem_quantize_avx2(const float *x, int n, int8_t *q,
                                                              const struct cc_q8_stem_quant *p)
{
    __m256 inv = _mm256_set1_ps(p->inv), lo = _mm256_set1_ps(p->lo), hi = _mm256_set1_ps(p->hi);
    __m256i zp = _mm256_set1_epi32(p->zp);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), inv);
        v = _mm256_max_ps(_mm256_min_ps(v, hi), lo);
        __m256i r = _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
        __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storel_epi64((__m128i *)(void *)(q + i), _mm_packs_epi16(h, h));
    }
    for (; i < n; i++)
        q[i] = cc_q8_stem_quantize_one(x[i], p);
}
