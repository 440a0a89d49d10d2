/* camclass — the int8 1x1 GEMM's AArch64 kernels (see q8_gemm.h): q8_gemm_kern.h
 * instantiated twice on 4-lane NEON vectors (q8_gemm_neon.h), both multiplying the signed
 * input bytes by the signed weights, so their panels' biases lack the 128 * sum(w) of the
 * unsigned x86 kernels (q8_gemm.c packs them so):
 *
 *  - neon (ARMv8.0, every AArch64 CPU: the Pi 4's Cortex-A72): q8_neon.h's smull / smull2 +
 *    2 sadalp into 2 vectors of partial sums a 4 outputs, 4 instructions a 16 multiply-adds;
 *    a register block of 4 pixels x 2 vectors (a panel of 8 outputs): 16 of the 32 registers
 *    accumulate, 2 hold weights, 4 the broadcast inputs, the rest the int16 products.
 *  - neondot (ARMv8.2 dot product, HWCAP asimddp: the Pi 5's A76): sdot, 16 multiply-adds in
 *    one instruction; 4 pixels x 4 vectors (a panel of 16 outputs, XNNPACK's 4x16c4 tile):
 *    16 accumulators, 4 weight vectors and 4 inputs a group of 4 inputs. Built by a function
 *    target attribute, called only where the CPU has it (q8_gemm.c, cc_fq8_isa_runs).
 *
 * docs/PERFORMANCE.md ("NEON int8 1x1") counts their instructions and loads per block.
 */
#include "q8_gemm.h"
#include "q8_neon.h"

#define QG_SFX neon
#define QG_TARGET
#define QG_NV 2
#define QG_MR 4
#define QG_ACC struct q8_neon_acc
#define QG_ACC_INIT(v) q8_neon_acc_init(v)
#define QG_ACC_SUM(acc) q8_neon_acc_sum(acc)
#define QG_DOT(acc, a, w) q8_neon_dot((acc), (a), (w))
#include "q8_gemm_neon.h"
#include "q8_gemm_kern.h"

#define QG_SFX neondot
#define QG_TARGET Q8_NEONDOT_TARGET
#define QG_NV 4
#define QG_MR 4
#define QG_DOT(acc, a, w) q8_neon_sdot((acc), (a), (w))
#include "q8_gemm_neon.h"
#include "q8_gemm_kern.h"
