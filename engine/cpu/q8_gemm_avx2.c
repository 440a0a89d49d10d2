/* camclass — the int8 1x1 GEMM's AVX2 kernel (see q8_gemm.h), for hosts without a byte dot
 * product (AMD Zen 2/3, Intel up to Comet Lake). vpmaddwd multiplies int16 pairs and sums each
 * pair into an int32 lane: with the weights packed already widened (q8_gemm.h: int16 pairs of
 * inputs 2q, 2q + 1 for 8 outputs a vector) and the pixel's pair of inputs broadcast, one
 * vpmaddwd and one vpaddd make 16 of the products, nothing else in the inner loop (the former
 * kernel split bytes into even and odd halves with shifts at every load and broadcast: about
 * 50 operations per 256 products, now 32). The inputs are signed (x itself: the bias has no
 * 128 * sum(w)), widened to int16 by the kernel a chunk of KC inputs of a register block's
 * pixels at a time into a buffer on the stack, read back with vpbroadcastd (a load).
 *
 * Layers of a few pixels (the classifier), where each weight is read about once and memory is
 * the limit, keep the pairs as bytes, widened with vpmovsxbw as read (cc_q8_kernel_avx2_w8);
 * elsewhere that cost more than it saved.
 *
 * Register block: MR pixels x NV vectors (nr = NV * 8 outputs, CC_Q8_NR_AVX2): MR * NV
 * accumulators, NV weight vectors, a broadcast and a product in the 16 ymm registers. Then
 * XNNPACK's requantization of each vector, as q8_gemm_kern.h's. Pixels are read as the tile
 * says (lda, ldg: the int8 stem's 3x3 windows in place too).
 */
#include <immintrin.h>
#include <string.h>

#include "q8_gemm.h"

#define TARGET __attribute__((target("avx2")))
#define INLINE TARGET static inline __attribute__((always_inline))
// Register-block loops unrolled early, or GCC keeps the accumulators on the stack (q8_gemm_kern.h).
#define UNROLL _Pragma("GCC unroll 8")

enum {
    N = 8,                  // int32 lanes a vector
    NV = CC_Q8_NR_AVX2 / N, // vectors a panel
    MR = 4,                 // pixels a register block
    KC = 512,               // inputs widened at a time (a multiple of 16)
};

/* Inputs [k0, k0 + kn) of one pixel (group g's 4 bytes at a + g * ldg) as int16 into x, zeros
 * past them to a multiple of 4; k0 a multiple of 4 (of 16 where ldg is 4). */
INLINE void widen(int16_t *x, const int8_t *a, size_t ldg, int k0, int kn)
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

/* Outputs [v * N, ..) of pixel row c: XNNPACK's fp32 requantization of acc, stored. */
INLINE void put(const struct cc_q8_tile *t, int8_t *c, int v, __m256i acc)
{
    int n0 = v * N, left = t->n_valid - n0;
    if (left <= 0)
        return;
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(t->scale + n0));
    f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(t->lo)), _mm256_set1_ps(t->hi));
    __m256i y = _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(t->zp));
    __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
    h = _mm_packs_epi16(h, h);
    if (left >= N) {
        _mm_storel_epi64((__m128i *)(void *)(c + n0), h);
        return;
    }
    int8_t buf[16];
    _mm_storeu_si128((__m128i *)(void *)buf, h);
    memcpy(c + n0, buf, (size_t)left);
}

/* A vector of 8 outputs' int16 weight pairs at w: stored so (w16), or as bytes. */
INLINE __m256i weights(const int8_t *w, const bool w16)
{
    if (w16)
        return _mm256_loadu_si256((const __m256i *)(const void *)w);
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)w));
}

/* acc += pairs [0, pairs) of the widened inputs x (px rows of KC + 16) times the panel's pairs
 * at w (int16 where w16, else bytes), nv vectors; px, nv and w16 constant at each call. */
INLINE void pairs_dot(__m256i acc[MR][NV], int16_t x[MR][KC + 16], const int8_t *w, int pairs,
                      const int px, const int nv, const bool w16)
{
    const int vbytes = N * 2 * (w16 ? 2 : 1);
    for (int q = 0; q < pairs; q++, w += NV * vbytes) {
        __m256i wv[NV];
        UNROLL
        for (int v = 0; v < nv; v++)
            wv[v] = weights(w + v * vbytes, w16);
        UNROLL
        for (int i = 0; i < px; i++) {
            int32_t u;
            memcpy(&u, x[i] + 2 * q, 4);
            __m256i xv = _mm256_set1_epi32(u);
            UNROLL
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(xv, wv[v]));
        }
    }
}

/* Pixels [p0, p0 + px) of t, nv vectors of outputs; px and nv constant at each call. */
INLINE void block(const struct cc_q8_tile *t, int p0, const int px, const int nv, const bool w16)
{
    __m256i acc[MR][NV];
    UNROLL
    for (int v = 0; v < nv; v++) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(t->bias + v * N));
        UNROLL
        for (int i = 0; i < px; i++)
            acc[i][v] = b;
    }
    int16_t x[MR][KC + 16] __attribute__((aligned(32)));
    const int8_t *a = t->a + (size_t)p0 * t->lda;
    const int8_t *w = t->w;
    for (int k0 = 0; k0 < t->k; k0 += KC) {
        int kn = t->k - k0 < KC ? t->k - k0 : KC, pairs = (kn + 3) / 4 * 2;
        for (int i = 0; i < px; i++)
            widen(x[i], a + (size_t)i * t->lda, t->ldg, k0, kn);
        pairs_dot(acc, x, w, pairs, px, nv, w16);
        w += (size_t)pairs * NV * N * 2 * (w16 ? 2 : 1);
    }
    UNROLL
    for (int i = 0; i < px; i++)
        UNROLL
    for (int v = 0; v < nv; v++)
        put(t, t->c + (size_t)(p0 + i) * t->ldc, v, acc[i][v]);
}

/* Every pixel of t, nv vectors of outputs (constant at each call). */
INLINE void rows(const struct cc_q8_tile *t, const int nv, const bool w16)
{
    int p = 0;
    for (; p + MR <= t->m; p += MR)
        block(t, p, MR, nv, w16);
    for (; p + 2 <= t->m; p += 2)
        block(t, p, 2, nv, w16);
    for (; p < t->m; p++)
        block(t, p, 1, nv, w16);
}

_Static_assert(NV == 2 || NV == 3, "the panel width CC_Q8_NR_AVX2: 16 or 24 outputs");

/* Every pixel of t (nv vectors of its outputs), weights int16 (w16) or bytes. */
INLINE void tile(const struct cc_q8_tile *t, const bool w16)
{
    int nv = (t->n_valid + N - 1) / N;
    if (nv >= NV)
        rows(t, NV, w16);
    else if (nv == 2) // NV 3 only
        rows(t, 2, w16);
    else
        rows(t, 1, w16);
}

TARGET void cc_q8_kernel_avx2(const struct cc_q8_tile *t)
{
    tile(t, true);
}

TARGET void cc_q8_kernel_avx2_w8(const struct cc_q8_tile *t)
{
    tile(t, false);
}
