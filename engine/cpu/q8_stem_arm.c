/* camclass — the int8 stem's AArch64 quantizer (see q8_stem.h), for both NEON families:
 * XNNPACK's f32 -> QS8 convert on 4-lane vectors, as cc_q8_stem_quantize_one documents it.
 * x * inv; fminnm with the high end (a NaN takes it, as minps(v, hi) on x86: fminnm returns the
 * number where one operand is a quiet NaN, and the product of a signalling NaN is quiet; fmin
 * would keep the NaN); fmax with the low end; fcvtns (to nearest, ties to even: vcvtps2dq's
 * rounding in the default mode); narrowed to int16 (|value| <= 255 after the clamp: exact), plus
 * the zero point, narrowed to bytes (in -128..127: exact). 16 values a step, the tail one by one.
 */
#include <arm_neon.h>

#include "q8_stem.h"

/* 4 values clamped and rounded, still less the zero point. */
static inline int32x4_t quantize4(float32x4_t x, float32x4_t inv, float32x4_t lo, float32x4_t hi)
{
    float32x4_t v = vminnmq_f32(vmulq_f32(x, inv), hi);
    return vcvtnq_s32_f32(vmaxq_f32(v, lo));
}

/* 8 values at x as int16 lanes, the zero point added. */
static inline int16x8_t quantize8(const float *x, float32x4_t inv, float32x4_t lo, float32x4_t hi,
                                  int16x8_t zp)
{
    int32x4_t a = quantize4(vld1q_f32(x), inv, lo, hi);
    int32x4_t b = quantize4(vld1q_f32(x + 4), inv, lo, hi);
    return vaddq_s16(vcombine_s16(vmovn_s32(a), vmovn_s32(b)), zp);
}

void cc_q8_stem_quantize_neon(const float *x, int n, int8_t *q, const struct cc_q8_stem_quant *p)
{
    float32x4_t inv = vdupq_n_f32(p->inv), lo = vdupq_n_f32(p->lo), hi = vdupq_n_f32(p->hi);
    int16x8_t zp = vdupq_n_s16((int16_t)p->zp);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        int16x8_t a = quantize8(x + i, inv, lo, hi, zp), b = quantize8(x + i + 8, inv, lo, hi, zp);
        vst1q_s8(q + i, vcombine_s8(vmovn_s16(a), vmovn_s16(b)));
    }
    if (i + 8 <= n) {
        vst1_s8(q + i, vmovn_s16(quantize8(x + i, inv, lo, hi, zp)));
        i += 8;
    }
    for (; i < n; i++)
        q[i] = cc_q8_stem_quantize_one(x[i], p);
}
