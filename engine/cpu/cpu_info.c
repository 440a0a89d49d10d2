/* camclass — facts about the host CPU (see cpu_info.h). */
#include <stdio.h>
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
