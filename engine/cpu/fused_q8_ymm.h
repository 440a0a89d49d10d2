/* camclass — the 8-lane (256-bit) operations of fused_q8_kern.h shared by its AVX2 and
 * AVX-VNNI families (fused_q8_x86.c), included before each instantiation; no include guard:
 * fused_q8_kern.h undefines them. fq_avx2_storeb is fused_q8_x86.c's. */
#define FQ_VI __m256i
#define FQ_VF __m256
#define FQ_N 8
#define FQ_PX 4
#define FQ_LOADI(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define FQ_SET1I(x) _mm256_set1_epi32(x)
#define FQ_ADDI(a, b) _mm256_add_epi32((a), (b))
#define FQ_MULLOI(a, b) _mm256_mullo_epi32((a), (b))
#define FQ_MINI(a, b) _mm256_min_epi32((a), (b))
#define FQ_MAXI(a, b) _mm256_max_epi32((a), (b))
#define FQ_SRA(v, n) _mm256_sra_epi32((v), _mm_cvtsi32_si128(n))
#define FQ_LOADF(p) _mm256_loadu_ps(p)
#define FQ_SET1F(x) _mm256_set1_ps(x)
#define FQ_MULF(a, b) _mm256_mul_ps((a), (b))
#define FQ_MINF(a, b) _mm256_min_ps((a), (b))
#define FQ_MAXF(a, b) _mm256_max_ps((a), (b))
#define FQ_CVTF(v) _mm256_cvtepi32_ps(v)
#define FQ_CVTI(v) _mm256_cvtps_epi32(v)
#define FQ_LOADB(p) _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define FQ_STOREB(p, v) fq_avx2_storeb((p), (v))
