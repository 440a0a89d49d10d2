/* camclass — the 4-lane (128-bit) operations of fused_q8_kern.h shared by its two AArch64
 * families (fused_q8_arm.c), included before each instantiation; no include guard:
 * fused_q8_kern.h undefines them. q8_neon_loadb and q8_neon_storeb are q8_neon.h's.
 * FQ_SRA: sshl by a negative count, an arithmetic shift that rounds down as C's >> does;
 * FQ_CVTI: fcvtns, to nearest with ties to even, as nearbyintf in the default mode. */
#define FQ_VI int32x4_t
#define FQ_VF float32x4_t
#define FQ_N 4
#define FQ_W int8x16_t
#define FQ_WLOAD(p) vld1q_s8(p)
#define FQ_A int8x16_t
#define FQ_ABCAST(u) vreinterpretq_s8_u32(vdupq_n_u32((u) ^ 0x80808080u))
#define FQ_LOADI(p) vld1q_s32(p)
#define FQ_SET1I(x) vdupq_n_s32(x)
#define FQ_ADDI(a, b) vaddq_s32((a), (b))
#define FQ_MULLOI(a, b) vmulq_s32((a), (b))
#define FQ_MINI(a, b) vminq_s32((a), (b))
#define FQ_MAXI(a, b) vmaxq_s32((a), (b))
#define FQ_SRA(v, n) vshlq_s32((v), vdupq_n_s32(-(n)))
#define FQ_LOADF(p) vld1q_f32(p)
#define FQ_SET1F(x) vdupq_n_f32(x)
#define FQ_MULF(a, b) vmulq_f32((a), (b))
#define FQ_MINF(a, b) vminq_f32((a), (b))
#define FQ_MAXF(a, b) vmaxq_f32((a), (b))
#define FQ_CVTF(v) vcvtq_f32_s32(v)
#define FQ_CVTI(v) vcvtnq_s32_f32(v)
#define FQ_LOADB(p) q8_neon_loadb(p)
#define FQ_STOREB(p, v) q8_neon_storeb((p), (v))
