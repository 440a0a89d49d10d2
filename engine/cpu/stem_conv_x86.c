/* camclass — the direct stem's x86-64 kernels (see stem_conv.h): AVX-512 and AVX2+FMA, built
 * with per-function target attributes and called only where the CPU has them (stem_conv.c).
 *
 * Each computes a block of PX output pixels x 2 vectors of output channels (32 for AVX-512, 16
 * for AVX2): 2 x PX accumulators, 2 weight vectors loaded once per tap for the PX pixels, each
 * input value broadcast once per tap and chunk; 27 taps, then bias (the accumulators' start),
 * clamp and a masked store of the channels that exist (n need not be a multiple of the vector).
 * The edge pixels (whose taps reach into the padding) are blocks of one with column checks.
 */
#include <immintrin.h>

#include "stem_conv.h"

#define ALWAYS_INLINE __attribute__((always_inline)) inline

/* Output pixels a block computes at once: 2 x PX accumulators, enough independent FMA chains
 * to cover the FMA latency (4 cycles, 2 units), within the registers (AVX-512: 32, AVX2: 16).
 * Measured on a Zen 5 core (the stem alone, 224x224 -> 32, median of 400-500 runs, shared host):
 * AVX-512 with 4, 6, 8, 12 pixels 0.162, 0.115, 0.134, 0.136 ms; AVX2 with 4 and 6 pixels
 * 0.275 and 0.339 ms (6 x 2 accumulators spill with 16 registers). */
enum { PX512 = 6, PX256 = 4 };

/* ------------------------------------------------------------------------------------------
 * AVX-512: 16 floats a vector
 */

#define T512 __attribute__((target("avx512f")))

T512 static ALWAYS_INLINE void store512(float *y, __m512 v, int left, __m512 lo, __m512 hi)
{
    if (left <= 0)
        return;
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    if (left >= 16)
        _mm512_storeu_ps(y, v);
    else
        _mm512_mask_storeu_ps(y, (__mmask16)((1u << left) - 1), v);
}

/* Pixels [ox, ox + px) of r, channels [o0, o0 + 32); px and edge constants at each call.
 * edge (px 1): taps whose column is outside the input are skipped (the zero padding). */
T512 static ALWAYS_INLINE void block512(const struct cc_stem_conv *p, const struct cc_stem_row *r,
                                        int ox, const int px, int o0, const bool edge)
{
    __m512 acc[PX512][2];
    for (int i = 0; i < px; i++) {
        acc[i][0] = _mm512_loadu_ps(p->bias + o0);
        acc[i][1] = _mm512_loadu_ps(p->bias + o0 + 16);
    }
    const int ix = 2 * ox - p->pad_left;
    for (int ky = 0; ky < 3; ky++) {
        if (!r->in[ky][0])
            continue;
        for (int c = 0; c < 3; c++) {
            const float *row = r->in[ky][c];
            const float *w = p->w + (size_t)((ky * 3 + c) * 3) * p->n_pad + o0;
            for (int kx = 0; kx < 3; kx++, w += p->n_pad) {
                if (edge && (ix + kx < 0 || ix + kx >= p->w_in))
                    continue;
                __m512 w0 = _mm512_load_ps(w), w1 = _mm512_load_ps(w + 16);
                for (int i = 0; i < px; i++) {
                    __m512 v = _mm512_set1_ps(row[ix + 2 * i + kx]);
                    acc[i][0] = _mm512_fmadd_ps(v, w0, acc[i][0]);
                    acc[i][1] = _mm512_fmadd_ps(v, w1, acc[i][1]);
                }
            }
        }
    }
    __m512 lo = _mm512_set1_ps(p->lo), hi = _mm512_set1_ps(p->hi);
    for (int i = 0; i < px; i++) {
        float *y = r->y + (size_t)(ox + i) * p->n + o0;
        store512(y, acc[i][0], p->n - o0, lo, hi);
        store512(y + 16, acc[i][1], p->n - o0 - 16, lo, hi);
    }
}

T512 void cc_stem_conv_row_avx512(const struct cc_stem_conv *p, const struct cc_stem_row *r)
{
    for (int o0 = 0; o0 < p->n; o0 += 32) {
        int ox = r->ox0;
        for (; ox + PX512 <= r->ox1; ox += PX512)
            block512(p, r, ox, PX512, o0, false);
        for (; ox + 2 <= r->ox1; ox += 2)
            block512(p, r, ox, 2, o0, false);
        for (; ox < r->ox1; ox++)
            block512(p, r, ox, 1, o0, false);
        for (ox = 0; ox < r->ox0; ox++)
            block512(p, r, ox, 1, o0, true);
        for (ox = r->ox1; ox < p->wo; ox++)
            block512(p, r, ox, 1, o0, true);
    }
}

/* ------------------------------------------------------------------------------------------
 * AVX2 + FMA: 8 floats a vector
 */

#define T256 __attribute__((target("avx2,fma")))

T256 static ALWAYS_INLINE void store256(float *y, __m256 v, int left, __m256 lo, __m256 hi)
{
    if (left <= 0)
        return;
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    if (left >= 8) {
        _mm256_storeu_ps(y, v);
        return;
    }
    // Lane i is stored where its sign bit is set: lanes below left.
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
    _mm256_maskstore_ps(y, mask, v);
}

/* Pixels [ox, ox + px) of r, channels [o0, o0 + 16); px and edge constants at each call.
 * edge (px 1): taps whose column is outside the input are skipped (the zero padding). */
T256 static ALWAYS_INLINE void block256(const struct cc_stem_conv *p, const struct cc_stem_row *r,
                                        int ox, const int px, int o0, const bool edge)
{
    __m256 acc[PX256][2];
    for (int i = 0; i < px; i++) {
        acc[i][0] = _mm256_loadu_ps(p->bias + o0);
        acc[i][1] = _mm256_loadu_ps(p->bias + o0 + 8);
    }
    const int ix = 2 * ox - p->pad_left;
    for (int ky = 0; ky < 3; ky++) {
        if (!r->in[ky][0])
            continue;
        for (int c = 0; c < 3; c++) {
            const float *row = r->in[ky][c];
            const float *w = p->w + (size_t)((ky * 3 + c) * 3) * p->n_pad + o0;
            for (int kx = 0; kx < 3; kx++, w += p->n_pad) {
                if (edge && (ix + kx < 0 || ix + kx >= p->w_in))
                    continue;
                __m256 w0 = _mm256_load_ps(w), w1 = _mm256_load_ps(w + 8);
                for (int i = 0; i < px; i++) {
                    __m256 v = _mm256_broadcast_ss(&row[ix + 2 * i + kx]);
                    acc[i][0] = _mm256_fmadd_ps(v, w0, acc[i][0]);
                    acc[i][1] = _mm256_fmadd_ps(v, w1, acc[i][1]);
                }
            }
        }
    }
    __m256 lo = _mm256_set1_ps(p->lo), hi = _mm256_set1_ps(p->hi);
    for (int i = 0; i < px; i++) {
        float *y = r->y + (size_t)(ox + i) * p->n + o0;
        store256(y, acc[i][0], p->n - o0, lo, hi);
        store256(y + 8, acc[i][1], p->n - o0 - 8, lo, hi);
    }
}

T256 void cc_stem_conv_row_avx2(const struct cc_stem_conv *p, const struct cc_stem_row *r)
{
    for (int o0 = 0; o0 < p->n; o0 += 16) {
        int ox = r->ox0;
        for (; ox + PX256 <= r->ox1; ox += PX256)
            block256(p, r, ox, PX256, o0, false);
        for (; ox + 2 <= r->ox1; ox += 2)
            block256(p, r, ox, 2, o0, false);
        for (; ox < r->ox1; ox++)
            block256(p, r, ox, 1, o0, false);
        for (ox = 0; ox < r->ox0; ox++)
            block256(p, r, ox, 1, o0, true);
        for (ox = r->ox1; ox < p->wo; ox++)
            block256(p, r, ox, 1, o0, true);
    }
}
