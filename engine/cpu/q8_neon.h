/* camclass — AArch64 NEON helpers shared by the int8 kernels (fused_q8_arm.c, q8_gemm_arm.c):
 * bytes to and from int32 lanes, the ARMv8.0 dot product of 4 outputs x 4 inputs (smull and
 * sadalp into pairs of partial sums) and the ARMv8.2 one (sdot) with the target attribute that
 * builds it. Both multiply signed bytes: their kernels read the input as x, not x + 128, and
 * their biases lack the 128 * sum(w) of the unsigned x86 kernels (fused_q8.h, q8_gemm.h).
 */
#ifndef CC_Q8_NEON_H
#define CC_Q8_NEON_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

/* 4 int8 at p sign-extended to int32 lanes. */
static inline int32x4_t q8_neon_loadb(const int8_t *p)
{
    uint32_t u;
    memcpy(&u, p, sizeof(u));
    int8x8_t b = vreinterpret_s8_u32(vdup_n_u32(u));
    return vmovl_s16(vget_low_s16(vmovl_s8(b)));
}

/* 4 int32 lanes, each in -128..127, as 4 bytes at p. */
static inline void q8_neon_storeb(int8_t *p, int32x4_t v)
{
    int16x4_t h = vmovn_s32(v);
    uint32_t u = vget_lane_u32(vreinterpret_u32_s8(vmovn_s16(vcombine_s16(h, h))), 0);
    memcpy(p, &u, sizeof(u));
}

/* ARMv8.0: the partial sums of 4 outputs, 2 int32 lanes each (outputs 0, 1 in lo; 2, 3 in
 * hi), from a bias vector (the bias in the first lane of each pair); their sum; the dot: a
 * 16-byte weight vector (4 outputs x 4 inputs) times the 4 input bytes broadcast, smull /
 * smull2 into 2 x 8 int16 products (each fits: |-128 x -128| = 2^14; two can reach 2^15, so
 * no smlal into int16), sadalp adding neighbouring pairs into the partial sums: 4
 * instructions a 16 multiply-adds, one addp for the 4 sums at the end. */
struct q8_neon_acc {
    int32x4_t lo, hi;
};

static inline struct q8_neon_acc q8_neon_acc_init(int32x4_t bias)
{
    int32x4_t z = vdupq_n_s32(0);
    return (struct q8_neon_acc){vzip1q_s32(bias, z), vzip2q_s32(bias, z)};
}

static inline int32x4_t q8_neon_acc_sum(struct q8_neon_acc a)
{
    return vpaddq_s32(a.lo, a.hi);
}

static inline struct q8_neon_acc q8_neon_dot(struct q8_neon_acc a, int8x16_t x, int8x16_t w)
{
    a.lo = vpadalq_s16(a.lo, vmull_s8(vget_low_s8(x), vget_low_s8(w)));
    a.hi = vpadalq_s16(a.hi, vmull_high_s8(x, w));
    return a;
}

/* ARMv8.2 dot product (HWCAP asimddp, cc_cpu_arm_dotprod): sdot, 16 multiply-adds in one
 * instruction, in functions built with Q8_NEONDOT_TARGET and called only where the CPU has
 * it. clang (14, Debian 12's) declares vdotq_s32 only when the whole file is built for the
 * dot product, not in a function whose target attribute has it: the instruction itself, then. */
#if defined(__clang__)
#define Q8_NEONDOT_TARGET __attribute__((target("dotprod")))
Q8_NEONDOT_TARGET static inline int32x4_t q8_neon_sdot(int32x4_t acc, int8x16_t a, int8x16_t w)
{
    __asm__(".arch armv8.2-a+dotprod\n\tsdot %0.4s, %1.16b, %2.16b" : "+w"(acc) : "w"(a), "w"(w));
    return acc;
}
#else
#define Q8_NEONDOT_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))
#define q8_neon_sdot(acc, a, w) vdotq_s32((acc), (a), (w))
#endif

#endif
