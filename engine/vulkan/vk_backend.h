/* camclass — the Vulkan backend's state, shared by its two halves: vk_backend.c (create:
 * kernels, pipelines, weights, arena, descriptor sets, command buffers; run; destroy) and
 * vk_fallback.c (the nodes that run on the CPU between Vulkan segments).
 *
 * Other modules do not include this: they use cc_vulkan_backend (backend.h). One state per
 * backend instance, made by create and freed by destroy (vk_backend.c), which own everything
 * the fields below call owned; used by one thread at a time (the engine's).
 */
#ifndef CC_VK_BACKEND_H
#define CC_VK_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "ref_ops.h"
#include "engine.h"
#include "kernels.h"
#include "model.h"
#include "plan.h"
#include "vk_context.h"

/* One step: a dispatch, or the arena copies of a node that only moves memory (concat, slice,
 * a reshape the plan did not alias), both recorded; or a node run on the CPU between segments. */
struct cc_vk_step {
    int node;              // index into model->nodes
    enum cc_kernel kernel; // CC_KERNEL_COUNT for a copy or CPU step
    VkPipeline pipeline;   // not owned (cc_vk_state.pipelines owns it)
    VkDescriptorSet set;
    uint32_t groups[3];
    int first_copy, n_copies; // copy steps: cc_vk_state.copies[first_copy .. + n_copies)
    bool cpu;                 // a CPU step: runs cpu_op on in/out between segments
    const struct cc_ref_op *cpu_op;
    const float *in[CC_MAX_NODE_INPUTS]; // CPU steps: inputs in the host view of the arena, or
                                         // constants; not owned
    float *out;                          // CPU steps: the output in the host view; not owned
};

/* A unique specialization; nodes with identical ones share the pipeline. */
struct cc_vk_pipeline {
    enum cc_kernel kernel;
    uint32_t local[3];
    uint32_t spec[CC_KERNEL_MAX_SPEC];
    VkPipeline pipeline; // owned
};

/* One backend instance: the state pointer cc_vulkan_backend's functions are given. */
struct cc_vk_state {
    const struct cc_model *model; // not owned; outlives the state
    struct cc_vk *vk;
    struct cc_kernels *kernels;
    struct cc_plan plan;
    bool plan_ok;
    VkDeviceSize align; // offset alignment for views and storage descriptors

    struct cc_vk_buffer weights;                 // repacked constants, uploaded once
    struct cc_vk_buffer arena;                   // every activation, planned by cc_plan
    struct cc_vk_buffer staging_in;              // devices without UMA: input copied from here
    struct cc_vk_buffer staging_out;             // devices without UMA: output copied to here
    size_t in_off, in_bytes, out_off, out_bytes; // in the arena
    int tap;                                     // the tapped tensor (kept by the plan), or -1
    size_t tap_off, tap_bytes; // in the arena; !shared: copied to staging_out after the output

    struct cc_vk_pipeline *pipelines; // (n_pipelines)
    int n_pipelines;
    VkBufferView *views; // (n_views)
    int n_views, cap_views;
    VkDescriptorPool pool;
    struct cc_vk_step *steps; // (n_steps) in node order
    int n_steps;
    VkBufferCopy *copies; // (n_copies) the copy steps' regions, owned
    int n_copies;

    VkCommandBuffer *cmds; // (n_cmds) one per segment, recorded once at create, re-submitted
    int n_cmds;            // per run; 1 + the number of runs of consecutive CPU steps
    VkFence fence;

    /* Per-op fallback (CPU steps; vk_fallback.h). */
    bool shared;                // the host reads and writes the arena in place (mapped, and not
                                // opts->vk_staging); else through staging and the mirror
    struct cc_vk_buffer mirror; // !shared with CPU steps: host copy of the arena, same offsets
    char *host;                 // the arena as the CPU steps see it: arena.map or mirror.map
    float *cpu_consts;          // dequantized int8 constants that CPU steps read; owned
    float *cpu_scratch;         // the largest scratch of a CPU step's op; owned
    int n_cpu;                  // CPU steps
    bool *on_cpu;               // (n_nodes) the node runs on the CPU
    char (*cpu_why)[200];       // (n_nodes) why, for the load notice
    VkQueryPool queries;        // 2 per step when profiling, else VK_NULL_HANDLE
    uint64_t *stamps;           // (2 * n_timings) query results
    struct cc_layer_timing *timings; // (n_timings), one per step
    int n_timings;
};

#endif
