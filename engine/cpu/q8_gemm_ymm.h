/* camclass — the 8-lane (256-bit) definitions of q8_gemm_kern.h shared by its AVX-VNNI and AVX2
 * sign-kernel families (q8_gemm_x86.c), included before each instantiation after the family's
 * own QG_SFX, QG_TARGET, QG_ABCAST and QG_DOT; no include guard: q8_gemm_kern.h undefines them.
 * qg_ymm_storeb is q8_gemm_x86.c's. */
#define QG_W __m256i
#define QG_WLOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define QG_A __m256i
#define QG_VI __m256i
#define QG_VF __m256
#define QG_N 8
#define QG_NV 2
#define QG_MR 4
#define QG_LOADI(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define QG_SET1I(x) _mm256_set1_epi32(x)
#define QG_ADDI(a, b) _mm256_add_epi32((a), (b))
#define QG_LOADF(p) _mm256_loadu_ps(p)
#define QG_SET1F(x) _mm256_set1_ps(x)
#define QG_MULF(a, b) _mm256_mul_ps((a), (b))
#define QG_MINF(a, b) _mm256_min_ps((a), (b))
#define QG_MAXF(a, b) _mm256_max_ps((a), (b))
#define QG_CVTF(v) _mm256_cvtepi32_ps(v)
#define QG_CVTI(v) _mm256_cvtps_epi32(v)
#define QG_STOREB(p, v) qg_ymm_storeb((p), (v))
