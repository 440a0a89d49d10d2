/* camclass — writing memory back out of the CPU caches (see evict.h). */
#include <stdint.h>
#include <unistd.h>

#include "evict.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { LINE = 64 }; // bytes one flush covers at least (x86-64; AArch64's Cortex-A, Neoverse)

void cc_evict(const void *p, size_t bytes)
{
    if (!p || !bytes)
        return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(LINE - 1), end = (uintptr_t)p + bytes;
#if defined(__x86_64__)
    for (; a < end; a += LINE)
        _mm_clflush((const void *)a);
    _mm_mfence();
#elif defined(__aarch64__)
    for (; a < end; a += LINE)
        __asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
    __asm__ volatile("dsb ish" : : : "memory");
#else
    (void)a, (void)end;
#endif
}

size_t cc_evict_l2_bytes(void)
{
#ifdef _SC_LEVEL2_CACHE_SIZE
    long n = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (n > 0)
        return (size_t)n;
#endif
    return (size_t)1 << 20;
}
