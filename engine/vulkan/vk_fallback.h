/* camclass — the Vulkan backend's per-op fallback (as PyTorch's CPU fallback for a device
 * backend): a node the Vulkan kernels cannot run (cc_vk_node_supported) runs on the CPU with
 * the reference C op (ref_ops.h), between Vulkan segments.
 *
 * Owns the host side of those CPU steps, kept in the backend's state (vk_backend.h, the
 * "per-op fallback" fields): the host mirror of the arena where it is not shared, the int8
 * constants the CPU steps read dequantized, their ops' scratch, the mirror copies at segment
 * ends, the run through the segments (one command buffer each: submit one, wait, run the CPU
 * steps that follow it on the host, submit the next) and the load notice. vk_backend.c chooses
 * which nodes run on the CPU (on_cpu, cpu_why, n_cpu, n_cmds), records the segments and frees
 * all of it in destroy. Called from the engine's thread only, as the rest of the backend.
 */
#ifndef CC_VK_FALLBACK_H
#define CC_VK_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <vulkan/vulkan.h>

#include "error.h"
#include "vk_backend.h"

/* The arena ranges a run of CPU steps [first, end) exchanges with the mirror: inputs (tensors
 * they read that no step of the run wrote before, constants aside) or outputs. Returns the
 * count written to out (room for (end - first) * CC_MAX_NODE_INPUTS). */
uint32_t cc_vk_fallback_ranges(const struct cc_vk_state *s, int first, int end, bool inputs,
                               VkBufferCopy *out);

/* The host side of the CPU steps: the mirror where the arena is not shared, int8 constants
 * they read dequantized, their ops' scratch. Nothing when there are no CPU steps. */
bool cc_vk_fallback_prepare(struct cc_vk_state *s, struct cc_error *err);

/* Makes st (node st->node, on the CPU) point at its tensors in the host view of the arena;
 * its int8 constants are dequantized into cpu_consts from *used on (which it advances). */
void cc_vk_fallback_step(struct cc_vk_state *s, struct cc_vk_step *st, size_t *used);

/* One run: each segment submitted and waited for, the CPU steps after it run on this thread.
 * cpu_ms: the time in CPU steps. */
bool cc_vk_fallback_run(struct cc_vk_state *s, double *cpu_ms, struct cc_error *err);

/* With CPU steps, one more run measures what they cost, and the load notice on notices (when
 * not NULL) names the nodes, why, and that cost. Nothing without CPU steps. */
bool cc_vk_fallback_measure(struct cc_vk_state *s, FILE *notices, struct cc_error *err);

#endif
