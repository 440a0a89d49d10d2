/* camclass — the int8 1x1 GEMM's AVX2 kernel (see q8_gemm.h), for hosts without a byte dot
 * product (AMD Zen 2/3, Intel up to Comet Lake), on q8_avx2.h's micro-kernel (vpmaddwd on
 * int16 pairs: the weights packed already widened, the inputs widened by the kernel a chunk
 * of KC inputs of a register block's pixels at a time into a buffer on the stack).
 *
 * Layers of a few pixels (the classifier), where each weight is read about once and memory is
 * the limit, keep the pairs as bytes, widened with vpmovsxbw as read (cc_q8_kernel_avx2_w8);
 * elsewhere that cost more than it saved.
 *
 * Register block: MR pixels x NV vectors (nr = NV * 8 outputs, CC_Q8_NR_AVX2). Then
 * XNNPACK's requantization of each vector, as q8_gemm_kern.h's. Pixels are read as the tile
 * says (lda, ldg: the int8 stem's 3x3 windows in place too).
 */
#include <immintrin.h>
#include <string.h>

#include "q8_avx2.h"
#include "q8_gemm.h"

#define TARGET CC_Q8A_TARGET
#define INLINE CC_Q8A_INLINE
#define UNROLL CC_Q8A_UNROLL

enum {
    N = CC_Q8A_N,           // int32 lanes a vector
    NV = CC_Q8_NR_AVX2 / N, // vectors a panel
    MR = CC_Q8A_MR,         // pixels a register block
    KC = 512,               // inputs widened at a time (a multiple of 16)
};
_Static_assert((int)NV <= (int)CC_Q8A_NV, "a panel fits the shared register block");

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

/* Pixels [p0, p0 + px) of t, nv vectors of outputs; px and nv constant at each call. */
INLINE void block(const struct cc_q8_tile *t, int p0, const int px, const int nv, const bool w16)
{
    __m256i acc[MR][CC_Q8A_NV];
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
            cc_q8a_widen(x[i], a + (size_t)i * t->lda, t->ldg, k0, kn);
        cc_q8a_dot(acc, x[0], KC + 16, w, (size_t)NV * N * 2 * (w16 ? 2 : 1), pairs, px, nv, w16);
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
