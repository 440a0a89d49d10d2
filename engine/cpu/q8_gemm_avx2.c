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
 * says (lda, ldg: the int8 stem's 3x3 windows in place too; their rows, which neighbouring
 * windows share, widened once a tile: rows_stride).
 */
#include <immintrin.h>
#include <string.h>

#include "q8_avx2.h"
#include "q8_gemm.h"

#define TARGET CC_Q8A_TARGET
#define INLINE CC_Q8A_INLINE
#define UNROLL CC_Q8A_UNROLL

enum {
    N = CC_Q8A_N,              // int32 lanes a vector
    NV = CC_Q8_NR_AVX2 / N,    // vectors a panel
    MR = CC_Q8A_MR,            // pixels a register block
    NV2 = CC_Q8_NR_AVX2_2 / N, // the same of the narrow panels (cc_q8_kernel_avx2_nr16)
    MR2 = CC_Q8A_MR2,
    KC = 512,    // inputs widened at a time (a multiple of 16)
    ROWS = 2304, // int16 of a tile's group rows widened once (the stem's: 9 x 226)
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

/* Pixel rows ca, cb's outputs [va * N, ..) and [vb * N, ..) from acc a, b, requantized
 * together (cc_q8a_requant2) where both vectors' outputs all exist, else one by one. */
INLINE void put2(const struct cc_q8_tile *t, int8_t *ca, int va, __m256i a, int8_t *cb, int vb,
                 __m256i b)
{
    if (t->n_valid - va * N < N || t->n_valid - vb * N < N) {
        put(t, ca, va, a);
        put(t, cb, vb, b);
        return;
    }
    __m128i q = cc_q8a_requant2(a, t->scale + va * N, b, t->scale + vb * N, t->lo, t->hi, t->zp);
    cc_q8a_store2(ca + va * N, cb + vb * N, q);
}

/* A tile's inputs widened for the pair dot: from x (pixel i's group g at x + i * ldx + g * ldgx),
 * or, x NULL, by each register block into a buffer of its own, KC inputs at a time. */
struct wide {
    const int16_t *x;
    size_t ldx, ldgx;
    int pairs;
};

/* Pixels [p0, p0 + px) of t, nv of the pnv vectors of a panel; px, nv, pnv constant at each
 * call. */
INLINE void block(const struct cc_q8_tile *t, const struct wide *wd, int p0, const int px,
                  const int nv, const int pnv, const bool w16)
{
    __m256i acc[MR2][CC_Q8A_NV];
    UNROLL
    for (int v = 0; v < nv; v++) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(t->bias + v * N));
        UNROLL
        for (int i = 0; i < px; i++)
            acc[i][v] = b;
    }
    const int8_t *w = t->w;
    const size_t wstep = (size_t)pnv * N * 2 * (w16 ? 2 : 1);
    if (wd->x && wd->ldgx == 4) { // a constant group stride: the dot's steps fold
        cc_q8a_dot(acc, wd->x + (size_t)p0 * wd->ldx, wd->ldx, 4, w, wstep, wd->pairs, px, nv, w16);
    } else if (wd->x) {
        cc_q8a_dot(acc, wd->x + (size_t)p0 * wd->ldx, wd->ldx, wd->ldgx, w, wstep, wd->pairs, px,
                   nv, w16);
    } else {
        int16_t x[MR2][KC + 16] __attribute__((aligned(32)));
        const int8_t *a = t->a + (size_t)p0 * t->lda;
        for (int k0 = 0; k0 < t->k; k0 += KC) {
            int kn = t->k - k0 < KC ? t->k - k0 : KC, pairs = (kn + 3) / 4 * 2;
            for (int i = 0; i < px; i++)
                cc_q8a_widen(x[i], a + (size_t)i * t->lda, t->ldg, k0, kn);
            cc_q8a_dot(acc, x[0], KC + 16, 4, w, wstep, pairs, px, nv, w16);
            w += (size_t)pairs * wstep;
        }
    }
    int8_t *c = t->c + (size_t)p0 * t->ldc;
#define PUT2(i, v, j, w)                                                                           \
    put2(t, c + (size_t)(i)*t->ldc, v, acc[i][v], c + (size_t)(j)*t->ldc, w, acc[j][w])
#define PUT1(i, v) put(t, c + (size_t)(i)*t->ldc, v, acc[i][v])
    CC_Q8A_PUT_PAIRS(px, nv, PUT2, PUT1);
#undef PUT2
#undef PUT1
}

/* Every pixel of t, nv of the pnv vectors of a panel, mr pixels a block (constant at each call). */
INLINE void rows(const struct cc_q8_tile *t, const struct wide *wd, const int nv, const int pnv,
                 const int mr, const bool w16)
{
    int p = 0;
    for (; p + mr <= t->m; p += mr)
        block(t, wd, p, mr, nv, pnv, w16);
    for (; p + 2 <= t->m; p += 2)
        block(t, wd, p, 2, nv, pnv, w16);
    for (; p < t->m; p++)
        block(t, wd, p, 1, nv, pnv, w16);
}

_Static_assert(NV == 2 || NV == 3, "the panel width CC_Q8_NR_AVX2: 16 or 24 outputs");
_Static_assert(NV2 == 2, "the narrow panels: 16 outputs, 6 pixels a block");

/* The int16 row stride of t's group rows widened once for all its pixels, or 0 where that does
 * not apply: only for groups read in place from rows (the int8 stem's 3x3 windows, ldg not 4:
 * neighbouring pixels' windows overlap, so a register block would widen each byte twice, and
 * again for each panel), whole groups (k a multiple of 4), rows that fit in ROWS. */
INLINE size_t rows_stride(const struct cc_q8_tile *t)
{
    if (t->ldg == 4 || t->k % 4)
        return 0;
    size_t span = t->lda * (size_t)(t->m - 1) + 4, rs = (span + 15) / 16 * 16;
    return rs * (size_t)(t->k / 4) <= ROWS ? rs : 0;
}

/* Every pixel of t (nv vectors of its outputs) on panels of pnv vectors, mr pixels a block;
 * weights int16 (w16) or bytes. */
INLINE void tile(const struct cc_q8_tile *t, const int pnv, const int mr, const bool w16)
{
    int16_t buf[ROWS] __attribute__((aligned(32)));
    struct wide wd = {NULL, 0, 0, 0};
    size_t rs = rows_stride(t);
    if (t->wide) {
        wd = (struct wide){t->wide, t->ldw, 4, (t->k + 3) / 4 * 2};
    } else if (rs) {
        for (int g = 0; g < t->k / 4; g++)
            cc_q8a_widen(buf + (size_t)g * rs, t->a + (size_t)g * t->ldg, 4, 0,
                         (int)(t->lda * (size_t)(t->m - 1) + 4));
        wd = (struct wide){buf, t->lda, rs, t->k / 2};
    }
    int nv = (t->n_valid + N - 1) / N;
    if (nv >= pnv)
        rows(t, &wd, pnv, pnv, mr, w16);
    else if (nv == 2) // pnv 3 only
        rows(t, &wd, 2, pnv, mr, w16);
    else
        rows(t, &wd, 1, pnv, mr, w16);
}

TARGET void cc_q8_widen_avx2(int16_t *x, size_t ldx, const int8_t *a, size_t lda, int m, int k)
{
    for (int p = 0; p < m; p++)
        cc_q8a_widen(x + (size_t)p * ldx, a + (size_t)p * lda, 4, 0, k);
}

TARGET void cc_q8_kernel_avx2(const struct cc_q8_tile *t)
{
    tile(t, NV, MR, true);
}

TARGET void cc_q8_kernel_avx2_w8(const struct cc_q8_tile *t)
{
    tile(t, NV, MR, false);
}

TARGET void cc_q8_kernel_avx2_nr16(const struct cc_q8_tile *t)
{
    tile(t, NV2, MR2, true);
}
