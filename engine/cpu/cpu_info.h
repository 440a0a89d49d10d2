/* camclass — facts about the host CPU that both CPU backends use (internal to engine/). */
#ifndef CC_CPU_INFO_H
#define CC_CPU_INFO_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

enum {
    CC_CPU_MAX_THREADS = 16,    // upper bound for cpu_threads
    CC_CPU_DEFAULT_THREADS = 4, // cap when cpu_threads is 0
};

/* The thread count to use for a requested count: requested when > 0 (at most
 * CC_CPU_MAX_THREADS), else one less than the online CPUs (at least 1, at most
 * CC_CPU_DEFAULT_THREADS): camclass's capture, decoding and preprocessing threads need a core
 * too, and an inference pool that shares every core with them stalls (docs/PERFORMANCE.md,
 * "Threads under load": on 2 cores with one busy, 1 thread kept 161-168 results/s and a
 * 9 ms worst inference, 2 threads 137-149 results/s with 88-99 ms stalls). A Pi 4 gets 3. */
int cc_cpu_threads(int requested);

/* Writes "CPU: <model name> (N threads<extra>)" into out; the model name from /proc/cpuinfo
 * where it says one. extra may be "" (e.g. ", XNNPACK"). */
void cc_cpu_describe(char *out, size_t size, int threads, const char *extra);

/* Whether this is an AArch64 CPU (Linux) with the ARMv8.2 dot product instructions (sdot,
 * udot: HWCAP asimddp; the Pi 5's Cortex-A76 has them, the Pi 4's A72 not); false elsewhere. */
bool cc_cpu_arm_dotprod(void);

/* The most camclass's own kernels (stem, 1x1 GEMMs, k x k convolutions, fused blocks) may use of
 * the CPU, from CAMCLASS_CPU_ISA: "native" (unset: all it has), "avx2" (x86-64: AVX2 and FMA,
 * no AVX-512 and no VNNI of either width: the kernels a Zen 2/3 or a Haswell-to-Comet Lake host
 * runs) or "c" (the portable C kernels only). With tests/engine/cpu_isa_shim.c preloaded for
 * XNNPACK, this runs on one host the kernels another would (docs/PERFORMANCE.md). The
 * Winograd kernels' clones (conv3x3_wino.c) follow the CPU itself. */
enum cc_cpu_isa_cap { CC_CPU_ISA_NATIVE, CC_CPU_ISA_AVX2, CC_CPU_ISA_C };

/* CAMCLASS_CPU_ISA's value (NULL or "" is native) into cap; false with err naming a bad one. */
bool cc_cpu_isa_cap_parse(const char *value, enum cc_cpu_isa_cap *cap, struct cc_error *err);

/* The cap the environment sets now: what the kernels' host checks ask (a bad value, refused at
 * engine creation by cc_cpu_isa_cap_parse, reads as native here). */
enum cc_cpu_isa_cap cc_cpu_isa_cap(void);

/* Whether the cap lets the own kernels use a family above the portable C one (AVX2, NEON) /
 * the extensions above those (x86-64: AVX-512, AVX-VNNI, AVX512-VNNI; AArch64: the dot
 * product). Whether the CPU has them is the caller's question. */
bool cc_cpu_isa_allows_simd(void);
bool cc_cpu_isa_allows_extensions(void);

#endif
