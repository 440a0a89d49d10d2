/* camclass — writing memory back out of the CPU caches (internal to engine/).
 *
 * The CPU backend's load-time choice between a fused inverted-residual block and its layers
 * (xnn_steps.c, fused_faster) times each way as a network run meets it: the block's input just
 * written, in cache, but the memory its layers write (the expanded tensor, the depthwise output,
 * the block's output: 0.3-5 MB for mobilenet_v2's early blocks) last touched a whole run before,
 * under other load long gone from every cache. Timed over and over at load, that memory stays in
 * L2/L3 and writing it costs no reads from memory, so the layers measured faster than the fused
 * block (which never writes the expanded tensor) where in the network they are slower.
 * cc_evict puts such memory back where a run finds it before each timing run; the caller does so
 * for tensors larger than cc_evict_l2_bytes only: a smaller one the arena planner gives memory
 * that the layers just before used, still in L2 in a network run too.
 */
#ifndef CC_EVICT_H
#define CC_EVICT_H

#include <stddef.h>

/* Writes back and drops from every cache level the lines of the bytes bytes at p (x86-64:
 * clflush; AArch64: dc civac); nothing on other CPUs. The contents do not change. */
void cc_evict(const void *p, size_t bytes);

/* A core's L2 cache in bytes (sysconf: glibc asks the CPU on x86-64), 1 MiB where it does not
 * say. */
size_t cc_evict_l2_bytes(void);

#endif
