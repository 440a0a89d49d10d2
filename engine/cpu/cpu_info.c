/* camclass — facts about the host CPU (see cpu_info.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20) // the kernel's uapi value, for older C libraries
#endif
#endif

#include "cpu_info.h"

int cc_cpu_threads(int requested)
{
    int n = requested;
    if (n <= 0) {
        long spare = sysconf(_SC_NPROCESSORS_ONLN) - 1;
        n = spare < 1 ? 1 : (spare > CC_CPU_DEFAULT_THREADS ? CC_CPU_DEFAULT_THREADS : (int)spare);
    }
    return n > CC_CPU_MAX_THREADS ? CC_CPU_MAX_THREADS : n;
}

void cc_cpu_describe(char *out, size_t size, int threads, const char *extra)
{
    char model[96] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f)) {
            char *colon = strchr(line, ':');
            if (!colon || (strncmp(line, "model name", 10) && strncmp(line, "Model", 5)))
                continue;
            const char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(model, sizeof(model), "%.*s", (int)strcspn(v, "\n"), v);
            break;
        }
        fclose(f);
    }
    snprintf(out, size, "CPU%s%s (%d thread%s%s)", model[0] ? ": " : "", model, threads,
             threads == 1 ? "" : "s", extra ? extra : "");
}

bool cc_cpu_arm_dotprod(void)
{
#if defined(__aarch64__) && defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
    return false;
#endif
}

bool cc_cpu_isa_cap_parse(const char *value, enum cc_cpu_isa_cap *cap, struct cc_error *err)
{
    *cap = CC_CPU_ISA_NATIVE;
    if (!value || !value[0] || !strcmp(value, "native"))
        return true;
    if (!strcmp(value, "c")) {
        *cap = CC_CPU_ISA_C;
        return true;
    }
    if (strcmp(value, "avx2"))
        return cc_error_set(err,
                            "CAMCLASS_CPU_ISA=\"%s\" is not a kernel ceiling: use native (the "
                            "default), avx2 or c",
                            value);
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return cc_error_set(err, "CAMCLASS_CPU_ISA=avx2: this CPU has no AVX2 and FMA; use c");
    *cap = CC_CPU_ISA_AVX2;
    return true;
#else
    return cc_error_set(err, "CAMCLASS_CPU_ISA=avx2 names x86-64 kernels; this CPU is not x86-64: "
                             "use native or c");
#endif
}

enum cc_cpu_isa_cap cc_cpu_isa_cap(void)
{
    enum cc_cpu_isa_cap cap;
    struct cc_error ignored = {0};
    return cc_cpu_isa_cap_parse(getenv("CAMCLASS_CPU_ISA"), &cap, &ignored) ? cap
                                                                            : CC_CPU_ISA_NATIVE;
}

bool cc_cpu_isa_allows_simd(void)
{
    return cc_cpu_isa_cap() != CC_CPU_ISA_C;
}

bool cc_cpu_isa_allows_extensions(void)
{
    return cc_cpu_isa_cap() == CC_CPU_ISA_NATIVE;
}
