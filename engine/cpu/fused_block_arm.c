/* camclass — the fused block's AArch64 kernels (see fused_block.h): fused_block_kern.h
 * instantiated for NEON/ASIMD, which every AArch64 CPU has (the Pi 4's Cortex-A72, the Pi 5's
 * A76): 4 floats a vector, 6 pixels x 2 vectors, so 12 of the 32 vector registers hold
 * accumulators, 2 the weights and 1 the broadcast input, as the AVX-512 kernel on x86-64. */
#include <arm_neon.h>

#include "fused_block.h"

#define FB_SFX neon
#define FB_LINKAGE
#define FB_TARGET
#define FB_VEC float32x4_t
#define FB_PX 6
#define FB_LOAD(p) vld1q_f32(p)
#define FB_STORE(p, v) vst1q_f32((p), (v))
#define FB_SET1(x) vdupq_n_f32(x)
#define FB_FMA(a, b, c) vfmaq_f32((c), (a), (b))
#define FB_MIN(a, b) vminq_f32((a), (b))
#define FB_MAX(a, b) vmaxq_f32((a), (b))
#include "fused_block_kern.h"
