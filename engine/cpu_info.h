/* camclass — facts about the host CPU that both CPU backends use (internal to engine/). */
#ifndef CC_CPU_INFO_H
#define CC_CPU_INFO_H

#include <stddef.h>

enum {
    CC_CPU_MAX_THREADS = 16,    // upper bound for cpu_threads
    CC_CPU_DEFAULT_THREADS = 4, // cap when cpu_threads is 0 (a Raspberry Pi 4 has 4 cores)
};

/* The thread count to use for a requested count: requested when > 0 (at most
 * CC_CPU_MAX_THREADS), else the online CPUs, at most CC_CPU_DEFAULT_THREADS. */
int cc_cpu_threads(int requested);

/* Writes "CPU: <model name> (N threads<extra>)" into out; the model name from /proc/cpuinfo
 * where it says one. extra may be "" (e.g. ", XNNPACK"). */
void cc_cpu_describe(char *out, size_t size, int threads, const char *extra);

#endif
