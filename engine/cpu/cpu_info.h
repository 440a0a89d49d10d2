/* camclass — facts about the host CPU that both CPU backends use (internal to engine/). */
#ifndef CC_CPU_INFO_H
#define CC_CPU_INFO_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
