/* camclass tests — makes XNNPACK pick the kernels of another x86-64 host.
 *
 * XNNPACK chooses its microkernels once, at xnn_initialize, from what cpuinfo (Debian's
 * libcpuinfo) says of the CPU: AVX-512, FMA3/AVX2 (5x16 kernels, or the "s4" ones whose weights
 * interleave K by 4 on AMD Zen), AVX, SSE. A test suite run on one host therefore runs one of
 * these families, and a fault in another (as one was: XNNPACK's f32 fully-connected operator,
 * wrong on Zen hosts only) passes there. Preloaded (LD_PRELOAD) into a test program, this
 * library wraps cpuinfo_initialize: after the real one, it takes away the ISA extensions above
 * the one CC_ISA_SHIM names, and for "zen" says the cores are Zen:
 *
 *   CC_ISA_SHIM=avx2  no AVX-512: the FMA3/AVX2 kernels of Intel and AMD Zen 2/3 hosts
 *   CC_ISA_SHIM=zen   the same, cores reported as Zen: XNNPACK's Zen choice (s4 kernels)
 *   CC_ISA_SHIM=sse   no AVX, AVX2, FMA or AVX-512: the SSE kernels of old or small hosts
 *
 * It can only take extensions away, so every mode runs on any x86-64 host that has the one it
 * keeps (all do for sse; avx2 and zen need an AVX2 host). cc_isa_shim_applied counts the
 * calls, so that a test can check the shim was used (test_kernels does, through dlsym).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuinfo.h>

int cc_isa_shim_applied; // cpuinfo_initialize calls that applied the mode (read by the tests)

static void drop_avx512(struct cpuinfo_x86_isa *isa)
{
    isa->avx512f = isa->avx512pf = isa->avx512er = isa->avx512cd = isa->avx512dq = false;
    isa->avx512bw = isa->avx512vl = isa->avx512ifma = isa->avx512vbmi = false;
    isa->avx512vbmi2 = isa->avx512bitalg = isa->avx512vpopcntdq = isa->avx512vnni = false;
    isa->avx512bf16 = isa->avx512vp2intersect = false;
    isa->avx512_4vnniw = isa->avx512_4fmaps = false;
}

static void drop_avx(struct cpuinfo_x86_isa *isa)
{
    drop_avx512(isa);
    isa->avx = isa->avx2 = isa->fma3 = isa->fma4 = isa->f16c = isa->xop = false;
}

bool cpuinfo_initialize(void)
{
    bool (*real)(void) = (bool (*)(void))dlsym(RTLD_NEXT, "cpuinfo_initialize");
    if (!real || !real())
        return false;
    const char *mode = getenv("CC_ISA_SHIM");
    if (!mode || !mode[0])
        return true;
    if (!strcmp(mode, "avx2") || !strcmp(mode, "zen")) {
        if (!cpuinfo_isa.avx2 || !cpuinfo_isa.fma3) {
            fprintf(stderr, "cpu_isa_shim: CC_ISA_SHIM=%s needs a host with AVX2 and FMA3\n",
                    mode);
            return false;
        }
        drop_avx512(&cpuinfo_isa);
    } else if (!strcmp(mode, "sse")) {
        drop_avx(&cpuinfo_isa);
    } else {
        fprintf(stderr, "cpu_isa_shim: unknown CC_ISA_SHIM \"%s\" (avx2, zen or sse)\n", mode);
        return false;
    }
    // The cores are cpuinfo's own array, const only in its interface.
    for (uint32_t i = 0; !strcmp(mode, "zen") && i < cpuinfo_get_cores_count(); i++)
        ((struct cpuinfo_core *)cpuinfo_get_core(i))->uarch = cpuinfo_uarch_zen;
    cc_isa_shim_applied++;
    return true;
}
