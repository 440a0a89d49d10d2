/* camclass — the direct k x k convolution's x86-64 kernels (see conv3x3.h): AVX-512 and
 * AVX2+FMA, built with per-function target attributes and called only where the CPU has them
 * (conv3x3.c).
 *
 * AVX-512: the whole MR x NR (6 x 64) tile in 24 zmm accumulators; per input channel 4 weight
 * vectors loaded and each of the 6 pixels' values broadcast once: 24 FMAs for 10 loads, 28 of
 * the 32 registers, so nothing spills. AVX2 (16 ymm): the tile's 64 channels in 4 passes of
 * 16 (6 x 2 accumulators, 2 weight vectors, 1 broadcast), each over all taps and channels.
 * A residual (t->res) is added to the sums before the clamp; y may be the residual itself (in
 * place): each row's residual is read before that row is stored.
 * The clamp is max(lo, v) then min(hi, v), which keep a NaN sum NaN (PyTorch's clamp does).
 */
#include <immintrin.h>

#include "conv3x3.h"

#define ALWAYS_INLINE __attribute__((always_inline)) inline

enum { MR = CC_CONV3X3_MR, NR = CC_CONV3X3_NR };

/* ------------------------------------------------------------------------------------------
 * AVX-512: 16 floats a vector, 4 a row of the tile
 */

#define T512 __attribute__((target("avx512f")))

T512 void cc_conv3x3_tile_avx512(const struct cc_conv3x3_tile *t)
{
    __m512 acc[MR][4];
    for (int j = 0; j < MR; j++)
        for (int q = 0; q < 4; q++)
            acc[j][q] = _mm512_loadu_ps((t->init ? t->init : t->y + (size_t)j * t->ldy) + 16 * q);
    const float *w = t->w;
    for (int tap = 0; tap < t->taps; tap++) {
        const float *const *r = t->rows + tap * MR;
        const float *a0 = r[0], *a1 = r[1], *a2 = r[2], *a3 = r[3], *a4 = r[4], *a5 = r[5];
        for (int k = 0; k < t->c; k++, w += NR) {
            __m512 w0 = _mm512_load_ps(w), w1 = _mm512_load_ps(w + 16);
            __m512 w2 = _mm512_load_ps(w + 32), w3 = _mm512_load_ps(w + 48);
#define ROW512(j, a)                                                                               \
    do {                                                                                           \
        __m512 v = _mm512_set1_ps(a[k]);                                                           \
        acc[j][0] = _mm512_fmadd_ps(v, w0, acc[j][0]);                                             \
        acc[j][1] = _mm512_fmadd_ps(v, w1, acc[j][1]);                                             \
        acc[j][2] = _mm512_fmadd_ps(v, w2, acc[j][2]);                                             \
        acc[j][3] = _mm512_fmadd_ps(v, w3, acc[j][3]);                                             \
    } while (0)
            ROW512(0, a0);
            ROW512(1, a1);
            ROW512(2, a2);
            ROW512(3, a3);
            ROW512(4, a4);
            ROW512(5, a5);
#undef ROW512
        }
    }
    const __m512 lo = _mm512_set1_ps(t->lo), hi = _mm512_set1_ps(t->hi);
    if (t->res)
        for (int j = 0; j < MR; j++)
            for (int q = 0; q < 4; q++)
                acc[j][q] =
                    _mm512_add_ps(acc[j][q], _mm512_loadu_ps(t->res + (size_t)j * t->ldr + 16 * q));
    for (int j = 0; j < MR; j++)
        for (int q = 0; q < 4; q++)
            _mm512_storeu_ps(t->y + (size_t)j * t->ldy + 16 * q,
                             _mm512_min_ps(hi, _mm512_max_ps(lo, acc[j][q])));
}

/* ------------------------------------------------------------------------------------------
 * AVX2+FMA: 8 floats a vector, the tile's 64 channels in 4 passes of 16
 */

#define T256 __attribute__((target("avx2,fma")))

T256 static ALWAYS_INLINE void pass256(const struct cc_conv3x3_tile *t, int o0)
{
    __m256 acc[MR][2];
    for (int j = 0; j < MR; j++)
        for (int q = 0; q < 2; q++)
            acc[j][q] =
                _mm256_loadu_ps((t->init ? t->init : t->y + (size_t)j * t->ldy) + o0 + 8 * q);
    const float *w = t->w + o0;
    for (int tap = 0; tap < t->taps; tap++) {
        const float *const *r = t->rows + tap * MR;
        const float *a0 = r[0], *a1 = r[1], *a2 = r[2], *a3 = r[3], *a4 = r[4], *a5 = r[5];
        for (int k = 0; k < t->c; k++, w += NR) {
            __m256 w0 = _mm256_load_ps(w), w1 = _mm256_load_ps(w + 8);
#define ROW256(j, a)                                                                               \
    do {                                                                                           \
        __m256 v = _mm256_broadcast_ss(a + k);                                                     \
        acc[j][0] = _mm256_fmadd_ps(v, w0, acc[j][0]);                                             \
        acc[j][1] = _mm256_fmadd_ps(v, w1, acc[j][1]);                                             \
    } while (0)
            ROW256(0, a0);
            ROW256(1, a1);
            ROW256(2, a2);
            ROW256(3, a3);
            ROW256(4, a4);
            ROW256(5, a5);
#undef ROW256
        }
    }
    const __m256 lo = _mm256_set1_ps(t->lo), hi = _mm256_set1_ps(t->hi);
    if (t->res)
        for (int j = 0; j < MR; j++)
            for (int q = 0; q < 2; q++)
                acc[j][q] = _mm256_add_ps(
                    acc[j][q], _mm256_loadu_ps(t->res + (size_t)j * t->ldr + o0 + 8 * q));
    for (int j = 0; j < MR; j++)
        for (int q = 0; q < 2; q++)
            _mm256_storeu_ps(t->y + (size_t)j * t->ldy + o0 + 8 * q,
                             _mm256_min_ps(hi, _mm256_max_ps(lo, acc[j][q])));
}

T256 void cc_conv3x3_tile_avx2(const struct cc_conv3x3_tile *t)
{
    for (int o0 = 0; o0 < NR; o0 += 16)
        pass256(t, o0);
}
