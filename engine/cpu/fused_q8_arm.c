/* camclass — the int8 fused block's AArch64 kernels (see fused_q8.h): fused_q8_kern.h
 * instantiated twice on 4-lane NEON vectors (their dot products and byte loads and stores:
 * q8_neon.h, shared with q8_gemm_arm.c), both multiplying the signed input bytes by the
 * signed weights (so their blocks' biases lack the 128 * sum(w) of the unsigned x86 kernels):
 *
 *  - neon (ARMv8.0, every AArch64 CPU: the Pi 4's Cortex-A72): a 16-byte weight vector holds
 *    4 outputs x 4 inputs; smull / smull2 multiply it by the 4 broadcast input bytes into 2 x 8
 *    int16 products (each fits: |-128 x -128| = 2^14), sadalp adds neighbouring pairs into
 *    the int32 partial sums, 2 vectors a 4 outputs, which one addp reduces after the sum
 *    (FQ_ACC): 4 instructions a 16 multiply-adds. Two products can reach 2^15, so no smlal
 *    into int16 before the widening. 4 pixels x 2 x 2 = 16 of the 32 registers accumulate.
 *  - neondot (ARMv8.2 dot product, HWCAP asimddp: the Pi 5's A76): sdot, 16 multiply-adds in
 *    one instruction; 6 pixels x 2 vectors = 12 accumulators, as the AVX-512 kernel. Built by
 *    a function target attribute, called only where the CPU has it (fused_q8.c).
 *
 * The depthwise (one for both) widens to int16 and multiply-adds into int32 with smlal /
 * smlal2: 8 channels in 4 instructions a tap (load, sxtl, 2 smlal), where the template's
 * int32 lanes take 4 for 4 channels.
 */
#include "fused_q8.h"
#include "q8_neon.h"

#define FQ_SFX neon
#define FQ_TARGET
#define FQ_PX 4
#define FQ_ACC struct q8_neon_acc
#define FQ_ACC_INIT(v) q8_neon_acc_init(v)
#define FQ_ACC_SUM(acc) q8_neon_acc_sum(acc)
#define FQ_DOT(acc, a, w) q8_neon_dot((acc), (a), (w))
#define FQ_NO_DW
#include "fused_q8_neon.h"
#include "fused_q8_kern.h"

#define FQ_TARGET Q8_NEONDOT_TARGET
#define FQ_DOT(acc, a, w) q8_neon_sdot((acc), (a), (w))
#define FQ_SFX neondot
#define FQ_PX 6
#define FQ_NO_DW
#include "fused_q8_neon.h"
#include "fused_q8_kern.h"

enum { DW_PX = 4 }; // pixels of a depthwise block: 8 accumulators, 9 weights in registers

/* Pixels [ox, ox + px) of d, channels [c0, c0 + 8); w: the 9 taps' weights as int16. */
static inline __attribute__((always_inline)) void dw_block(const struct cc_fq8_dw *d, int ox,
                                                           const int px, int c0, const int16x8_t *w)
{
    int32x4_t lo[DW_PX], hi[DW_PX];
    for (int i = 0; i < px; i++) {
        lo[i] = vld1q_s32(d->bias + c0);
        hi[i] = vld1q_s32(d->bias + c0 + 4);
    }
    for (int ky = 0; ky < 3; ky++) {
        const int8_t *row = d->rows[ky] + (size_t)d->stride * ox * d->c_pad + c0;
        for (int kx = 0; kx < 3; kx++)
            for (int i = 0; i < px; i++) {
                int16x8_t x = vmovl_s8(vld1_s8(row + (size_t)(d->stride * i + kx) * d->c_pad));
                lo[i] = vmlal_s16(lo[i], vget_low_s16(x), vget_low_s16(w[ky * 3 + kx]));
                hi[i] = vmlal_high_s16(hi[i], x, w[ky * 3 + kx]);
            }
    }
    for (int i = 0; i < px; i++) {
        int8_t *y = d->y + (size_t)(ox + i) * d->c_pad + c0;
        q8_neon_storeb(y, fq_req_neon(lo[i], d->scale + c0, d->lo, d->hi, d->zp));
        q8_neon_storeb(y + 4, fq_req_neon(hi[i], d->scale + c0 + 4, d->lo, d->hi, d->zp));
    }
}

/* Channels 8 at a time (c_pad is a multiple of 32), pixels DW_PX at a time. */
void cc_fq8_dw_neon(const struct cc_fq8_dw *d)
{
    for (int c0 = 0; c0 < d->c; c0 += 8) {
        int16x8_t w[9];
        for (int t = 0; t < 9; t++) {
            const int32_t *wt = d->w + (size_t)t * d->c_pad + c0;
            w[t] = vcombine_s16(vmovn_s32(vld1q_s32(wt)), vmovn_s32(vld1q_s32(wt + 4)));
        }
        int ox = 0;
        for (; ox + DW_PX <= d->wo; ox += DW_PX)
            dw_block(d, ox, DW_PX, c0, w);
        for (; ox < d->wo; ox++)
            dw_block(d, ox, 1, c0, w);
    }
}
