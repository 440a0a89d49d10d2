/* camclass — the AVX2 int8 dot-product micro-kernel shared by the int8 1x1 GEMM
 * (q8_gemm_avx2.c) and the int8 fused block (fused_q8_x86.c), internal to engine/cpu/, for
 * hosts without a byte dot product (AMD Zen 2/3, Intel up to Comet Lake). Included only by
 * files built for x86-64; its functions are static inline with the avx2 target attribute.
 *
 * vpmaddwd multiplies int16 pairs and sums each pair into an int32 lane: with the weights
 * packed already widened (int16 pairs of inputs 2q, 2q + 1 for 8 outputs a vector) and the
 * pixel's pair of inputs broadcast, one vpmaddwd and one vpaddd make 16 of the products,
 * nothing else in the inner loop (splitting bytes into even and odd halves with shifts at every
 * load and broadcast costs about 50 operations per 256 products, this 32). The inputs are
 * signed (x itself: the bias has no 128 * sum(w)), widened to int16 beforehand
 * (cc_q8a_widen) and read back with vpbroadcastd (a load). Weights may also stay bytes,
 * widened with vpmovsxbw as read (w16 false): for layers where each weight is read about once.
 *
 * Register block: up to CC_Q8A_MR pixels x CC_Q8A_NV vectors of 8 outputs (or CC_Q8A_MR2 x 2):
 * 12 accumulators, the weight vectors and a broadcast in the 16 ymm registers (at 4 x 3 GCC
 * keeps one accumulator on the stack: 17 with the vpmaddwd temporary).
 */
#ifndef CC_Q8_AVX2_H
#define CC_Q8_AVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CC_Q8A_TARGET __attribute__((target("avx2")))
#define CC_Q8A_INLINE CC_Q8A_TARGET static inline __attribute__((always_inline))
// Register-block loops unrolled early, or GCC keeps the accumulators on the stack.
#define CC_Q8A_UNROLL _Pragma("GCC unroll 8")

enum {
    CC_Q8A_N = 8,   // int32 lanes a vector
    CC_Q8A_NV = 3,  // vectors a register block
    CC_Q8A_MR = 4,  // pixels a register block
    CC_Q8A_MR2 = 6, // pixels a register block of 2 vectors (12 accumulators)
};

/* Inputs [k0, k0 + kn) of one pixel (group g's 4 bytes at a + g * ldg) as int16 into x, zeros
 * past them to a multiple of 4; k0 a multiple of 4 (of 16 where ldg is 4). */
CC_Q8A_INLINE void cc_q8a_widen(int16_t *x, const int8_t *a, size_t ldg, int k0, int kn)
{
    int i = 0;
    if (ldg == 4) // a GEMM's row: 16 at a time
        for (; i + 16 <= kn; i += 16)
            _mm256_storeu_si256(
                (__m256i *)(void *)(x + i),
                _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(a + k0 + i))));
    for (; i < kn; i += 4) { // the rest, 4 at a time (fewer at the end of a row)
        const int8_t *g = a + (size_t)((k0 + i) / 4) * ldg;
        int32_t u = 0;
        if (kn - i >= 4)
            memcpy(&u, g, 4);
        else
            for (int j = 0; j < kn - i; j++)
                u |= (int32_t)((uint32_t)(uint8_t)g[j] << (8 * j));
        _mm_storel_epi64((__m128i *)(void *)(x + i), _mm_cvtepi8_epi16(_mm_cvtsi32_si128(u)));
    }
}

/* A vector of 8 outputs' int16 weight pairs at w: stored so (w16), or as bytes. */
CC_Q8A_INLINE __m256i cc_q8a_weights(const int8_t *w, const bool w16)
{
    if (w16)
        return _mm256_loadu_si256((const __m256i *)(const void *)w);
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)w));
}

/* acc += pairs [0, pairs) (an even count) of the widened inputs of pixels [0, px) times the
 * weight pairs at w: pixel i's group g (its inputs 4g .. 4g + 3) at x + i * ldx + g * ldgx
 * (ldgx 4 where a pixel's inputs are contiguous), pair q's nv weight vectors at w + q * wstep,
 * one after another (16 bytes each as bytes, 32 as int16); px, nv and w16 constant at each
 * call. */
CC_Q8A_INLINE void cc_q8a_dot(__m256i acc[][CC_Q8A_NV], const int16_t *x, size_t ldx, size_t ldgx,
                              const int8_t *w, size_t wstep, int pairs, const int px, const int nv,
                              const bool w16)
{
    const int vbytes = CC_Q8A_N * 2 * (w16 ? 2 : 1);
    // Each pixel's row start in a register and one offset o (pair q's inputs) for all: it steps
    // 2, then into the next group ldgx - 2, which folds to 2 where ldgx is the constant 4; no
    // index arithmetic per pair or per pixel (a runtime ldx cost a lea a broadcast).
    const int16_t *xr[CC_Q8A_MR2];
    CC_Q8A_UNROLL
    for (int i = 0; i < px; i++)
        xr[i] = x + (size_t)i * ldx;
    size_t o = 0;
    for (int q = 0; q < pairs; q++, w += wstep) {
        __m256i wv[CC_Q8A_NV];
        CC_Q8A_UNROLL
        for (int v = 0; v < nv; v++)
            wv[v] = cc_q8a_weights(w + v * vbytes, w16);
        CC_Q8A_UNROLL
        for (int i = 0; i < px; i++) {
            int32_t u;
            memcpy(&u, xr[i] + o, 4);
            __m256i xv = _mm256_set1_epi32(u);
            CC_Q8A_UNROLL
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(xv, wv[v]));
        }
        o += q % 2 ? ldgx - 2 : 2;
    }
}

/* XNNPACK's fp32 requantization of two vectors a, b (scales sa, sb; lo, hi the clamp less the
 * zero point, whole numbers) as 16 bytes: a's 8 outputs, then b's. As q8_gemm_kern.h's, with
 * the low clamp after the rounding (the same value: lo is whole; a value below int16 saturates
 * in the packs, still below it) on the packed bytes, and the zero point added to int16: 14
 * operations for 16 outputs, not 20. The high clamp stays before the conversion: past 2^31 it
 * would give INT_MIN. */
CC_Q8A_INLINE __m128i cc_q8a_requant2(__m256i a, const float *sa, __m256i b, const float *sb,
                                      float lo, float hi, int32_t zp)
{
    __m256 h = _mm256_set1_ps(hi);
    __m256i ya = _mm256_cvtps_epi32(
        _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(sa)), h));
    __m256i yb = _mm256_cvtps_epi32(
        _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(b), _mm256_loadu_ps(sb)), h));
    // int16: a0-3 b0-3 | a4-7 b4-7; bytes: the same twice per 128-bit lane; dwords 0 4 1 5.
    __m256i s = _mm256_adds_epi16(_mm256_packs_epi32(ya, yb), _mm256_set1_epi16((short)zp));
    s = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(s, s),
                                    _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5));
    return _mm_max_epi8(_mm256_castsi256_si128(s), _mm_set1_epi8((char)((int)lo + zp)));
}

/* cc_q8a_requant2's 16 bytes stored: the low 8 at a, the high 8 at b. */
CC_Q8A_INLINE void cc_q8a_store2(int8_t *a, int8_t *b, __m128i q)
{
    _mm_storel_epi64((__m128i *)(void *)a, q);
    _mm_storeh_pd((double *)(void *)b, _mm_castsi128_pd(q));
}

/* A register block's px x nv accumulators requantized two at a time (cc_q8a_requant2): PUT2(i,
 * v, j, w) for pixel i's vector v with pixel j's vector w, a pixel's vectors by twos, an odd
 * last vector two pixels at a time; PUT1(i, v) for the one left where px and nv are odd. */
#define CC_Q8A_PUT_PAIRS(px, nv, PUT2, PUT1)                                                       \
    do {                                                                                           \
        CC_Q8A_UNROLL                                                                              \
        for (int i_ = 0; i_ < (px); i_++)                                                          \
            CC_Q8A_UNROLL                                                                          \
        for (int v_ = 0; v_ + 1 < (nv); v_ += 2)                                                   \
            PUT2(i_, v_, i_, v_ + 1);                                                              \
        if ((nv) % 2) {                                                                            \
            CC_Q8A_UNROLL                                                                          \
            for (int i_ = 0; i_ + 1 < (px); i_ += 2)                                               \
                PUT2(i_, (nv)-1, i_ + 1, (nv)-1);                                                  \
            if ((px) % 2)                                                                          \
                PUT1((px)-1, (nv)-1);                                                              \
        }                                                                                          \
    } while (0)

#endif
