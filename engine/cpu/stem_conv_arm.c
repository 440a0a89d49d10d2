/* camclass — the direct stem's AArch64 kernel (see stem_conv.h): NEON/ASIMD, which every
 * AArch64 CPU has. As the x86-64 ones (stem_conv_x86.c): a block of PX output pixels x 2
 * vectors of output channels (8) in 2 x PX accumulators, 2 weight vectors loaded once per tap
 * for the PX pixels, each input value broadcast once per tap; 27 taps, then the bias (the
 * accumulators' start), the clamp and a store of the channels that exist. The edge pixels
 * (whose taps reach into the padding) are blocks of one with column checks.
 *
 * PX = 6: 12 accumulators, 2 weights and a broadcast of the 32 registers; a Cortex-A72 issues
 * one 128-bit FMA a cycle with a 7-cycle latency, so 12 independent chains keep it busy. Not
 * measured on a Pi yet (the arm64 suite runs it under qemu for correctness only). */
#include <arm_neon.h>

#include "stem_conv.h"

#define ALWAYS_INLINE __attribute__((always_inline)) inline

enum { PX = 6 };

static ALWAYS_INLINE void store4(float *y, float32x4_t v, int left, float32x4_t lo, float32x4_t hi)
{
    if (left <= 0)
        return;
    v = vminq_f32(vmaxq_f32(v, lo), hi);
    if (left >= 4) {
        vst1q_f32(y, v);
        return;
    }
    float t[4];
    vst1q_f32(t, v);
    for (int j = 0; j < left; j++)
        y[j] = t[j];
}

/* Pixels [ox, ox + px) of r, channels [o0, o0 + 8); px and edge constants at each call.
 * edge (px 1): taps whose column is outside the input are skipped (the zero padding). */
static ALWAYS_INLINE void block(const struct cc_stem_conv *p, const struct cc_stem_row *r, int ox,
                                const int px, int o0, const bool edge)
{
    float32x4_t acc[PX][2];
    for (int i = 0; i < px; i++) {
        acc[i][0] = vld1q_f32(p->bias + o0);
        acc[i][1] = vld1q_f32(p->bias + o0 + 4);
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
                float32x4_t w0 = vld1q_f32(w), w1 = vld1q_f32(w + 4);
                for (int i = 0; i < px; i++) {
                    float32x4_t v = vdupq_n_f32(row[ix + 2 * i + kx]);
                    acc[i][0] = vfmaq_f32(acc[i][0], v, w0);
                    acc[i][1] = vfmaq_f32(acc[i][1], v, w1);
                }
            }
        }
    }
    float32x4_t lo = vdupq_n_f32(p->lo), hi = vdupq_n_f32(p->hi);
    for (int i = 0; i < px; i++) {
        float *y = r->y + (size_t)(ox + i) * p->n + o0;
        store4(y, acc[i][0], p->n - o0, lo, hi);
        store4(y + 4, acc[i][1], p->n - o0 - 4, lo, hi);
    }
}

void cc_stem_conv_row_neon(const struct cc_stem_conv *p, const struct cc_stem_row *r)
{
    for (int o0 = 0; o0 < p->n; o0 += 8) {
        int ox = r->ox0;
        for (; ox + PX <= r->ox1; ox += PX)
            block(p, r, ox, PX, o0, false);
        for (; ox + 2 <= r->ox1; ox += 2)
            block(p, r, ox, 2, o0, false);
        for (; ox < r->ox1; ox++)
            block(p, r, ox, 1, o0, false);
        for (ox = 0; ox < r->ox0; ox++)
            block(p, r, ox, 1, o0, true);
        for (ox = r->ox1; ox < p->wo; ox++)
            block(p, r, ox, 1, o0, true);
    }
}
