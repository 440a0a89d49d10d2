/* camclass — the fused block's x86-64 kernels (see fused_block.h): fused_block_kern.h
 * instantiated for AVX-512 (16 floats a vector, 6 pixels x 2 vectors: 12 of 32 registers hold
 * accumulators; 3x3 depthwise blocks of 8 pixels: 9 registers of weights, 8 accumulators) and
 * AVX2+FMA (8 floats, 6 pixels x 2 vectors: 12 of 16, as the f32 1x1 GEMM's; depthwise 4
 * pixels), built with function target attributes and called only where the CPU has them
 * (fused_block.c). AVX2's 6 pixels, not 4: 8 loads for 12 FMAs, not 6 for 8; alike on a quiet
 * core, 15-20 % faster per block where another thread shares it (a real Zen 3 VM whose core's
 * other hyperthread is busy in spells of about a second: docs/PERFORMANCE.md). */
#include <immintrin.h>

#include "fused_block.h"

#define FB_SFX avx512
#define FB_LINKAGE
#define FB_TARGET __attribute__((target("avx512f")))
#define FB_VEC __m512
#define FB_PX 6
#define FB_DWPX3 8
#define FB_LOAD(p) _mm512_loadu_ps(p)
#define FB_STORE(p, v) _mm512_storeu_ps((p), (v))
#define FB_SET1(x) _mm512_set1_ps(x)
#define FB_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define FB_MIN(a, b) _mm512_min_ps((a), (b))
#define FB_MAX(a, b) _mm512_max_ps((a), (b))
#include "fused_block_kern.h"

#define FB_SFX avx2
#define FB_LINKAGE
#define FB_TARGET __attribute__((target("avx2,fma")))
#define FB_VEC __m256
#define FB_PX 6
#define FB_LOAD(p) _mm256_loadu_ps(p)
#define FB_STORE(p, v) _mm256_storeu_ps((p), (v))
#define FB_SET1(x) _mm256_set1_ps(x)
#define FB_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define FB_MIN(a, b) _mm256_min_ps((a), (b))
#define FB_MAX(a, b) _mm256_max_ps((a), (b))
#include "fused_block_kern.h"
