/* camclass — CAMCLASS_CPU_ISA, the ceiling on the CPU backend's own kernels (cpu_info.h):
 * - the values it takes, and one line naming a bad one with the choices;
 * - "c": every own-kernel family (stem, f32 1x1 and k x k, fp32 and int8 fused blocks, int8
 *   GEMM, int8 stem) picks its portable C kernels;
 * - "avx2" (x86-64 hosts with AVX2): no family picks anything above AVX2, and on a host with
 *   AVX-512 or VNNI the best kernels do change;
 * - unset: the host's best again (the cap is read at every ask, not once).
 * Whether the kernels are right under each family is their own tests' question. */
#include <stdlib.h>
#include <string.h>

#include "cpu_info.h"
#include "fused_q8.h"
#include "q8_gemm.h"
#include "q8_stem.h"
#include "stem_conv.h"
#include "testutil.h"

static void test_parse(void)
{
    enum cc_cpu_isa_cap cap = CC_CPU_ISA_C;
    struct cc_error err = {0};
    CHECK(cc_cpu_isa_cap_parse(NULL, &cap, &err) && cap == CC_CPU_ISA_NATIVE);
    CHECK(cc_cpu_isa_cap_parse("", &cap, &err) && cap == CC_CPU_ISA_NATIVE);
    CHECK(cc_cpu_isa_cap_parse("native", &cap, &err) && cap == CC_CPU_ISA_NATIVE);
    CHECK(cc_cpu_isa_cap_parse("c", &cap, &err) && cap == CC_CPU_ISA_C);
    CHECKF(!cc_cpu_isa_cap_parse("avx3", &cap, &err) && strstr(err.msg, "\"avx3\"") &&
               strstr(err.msg, "native") && strstr(err.msg, "avx2") && !strchr(err.msg, '\n'),
           "a bad value: %s", err.msg);
#if defined(__x86_64__)
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    CHECKF(cc_cpu_isa_cap_parse("avx2", &cap, &err) == avx2 && (!avx2 || cap == CC_CPU_ISA_AVX2),
           "avx2 %s on a host %s AVX2", avx2 ? "refused" : "taken", avx2 ? "with" : "without");
#else
    CHECKF(!cc_cpu_isa_cap_parse("avx2", &cap, &err) && strstr(err.msg, "x86-64"),
           "avx2 off x86-64: %s", err.msg);
#endif
}

/* The best family of each own-kernel table now. */
struct best {
    enum cc_stem_isa stem;
    enum cc_fq8_isa fq8, q8gemm, q8stem;
};

static struct best best_now(void)
{
    return (struct best){cc_stem_isa_best(), cc_fq8_isa_best(), cc_q8_gemm_isa_best(),
                         cc_q8_stem_isa_best()};
}

static void test_caps(void)
{
    struct best native = best_now();
    setenv("CAMCLASS_CPU_ISA", "c", 1);
    struct best c = best_now();
    CHECKF(c.stem == CC_STEM_C && c.fq8 == CC_FQ8_C && c.q8gemm == CC_FQ8_C && c.q8stem == CC_FQ8_C,
           "c: stem %s, int8 blocks %s, int8 GEMM %s, int8 stem %s", cc_stem_isa_name(c.stem),
           cc_fq8_isa_name(c.fq8), cc_fq8_isa_name(c.q8gemm), cc_fq8_isa_name(c.q8stem));
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        setenv("CAMCLASS_CPU_ISA", "avx2", 1);
        struct best a = best_now();
        CHECKF(a.stem == CC_STEM_AVX2 && a.fq8 == CC_FQ8_AVX2 && a.q8gemm == CC_FQ8_AVX2 &&
                   a.q8stem == CC_FQ8_AVX2,
               "avx2: stem %s, int8 blocks %s, int8 GEMM %s, int8 stem %s",
               cc_stem_isa_name(a.stem), cc_fq8_isa_name(a.fq8), cc_fq8_isa_name(a.q8gemm),
               cc_fq8_isa_name(a.q8stem));
    }
#endif
    unsetenv("CAMCLASS_CPU_ISA");
    struct best again = best_now();
    CHECKF(!memcmp(&again, &native, sizeof(native)), "unset: the host's best again (stem %s)",
           cc_stem_isa_name(again.stem));
}

int main(void)
{
    unsetenv("CAMCLASS_CPU_ISA");
    test_parse();
    test_caps();
    return tu_exit_code();
}
