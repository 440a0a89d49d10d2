/* camclass — the 4-lane (128-bit) operations of q8_gemm_kern.h shared by its two AArch64
 * families (q8_gemm_arm.c), included before each instantiation; no include guard:
 * q8_gemm_kern.h undefines them. q8_neon_storeb is q8_neon.h's. QG_ABCAST undoes the
 * template's x + 128 (u ^ 0x80808080): both families multiply signed bytes. QG_CVTI: fcvtns,
 * to nearest with ties to even, as nearbyintf in the default mode. */
#define QG_VI int32x4_t
#define QG_VF float32x4_t
#define QG_N 4
#define QG_W int8x16_t
#define QG_WLOAD(p) vld1q_s8(p)
#define QG_A int8x16_t
#define QG_ABCAST(u) vreinterpretq_s8_u32(vdupq_n_u32((u) ^ 0x80808080u))
#define QG_LOADI(p) vld1q_s32(p)
#define QG_SET1I(x) vdupq_n_s32(x)
#define QG_ADDI(a, b) vaddq_s32((a), (b))
#define QG_LOADF(p) vld1q_f32(p)
#define QG_SET1F(x) vdupq_n_f32(x)
#define QG_MULF(a, b) vmulq_f32((a), (b))
#define QG_MINF(a, b) vminq_f32((a), (b))
#define QG_MAXF(a, b) vmaxq_f32((a), (b))
#define QG_CVTF(v) vcvtq_f32_s32(v)
#define QG_CVTI(v) vcvtnq_s32_f32(v)
#define QG_STOREB(p, v) q8_neon_storeb((p), (v))
