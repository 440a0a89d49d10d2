/* camclass — Vulkan backend: per-node kernel choice and weight repacking (internal to
 * engine/, used by vk_backend.c).
 *
 * For each node, cc_vk_node_setup() picks the kernel row (kernels.h) and its specialization,
 * computes the dispatch size, repacks the node's weights into a host array in the layout the
 * kernel reads (e.g. pointwise weights as vec4 texels of 4 output channels), and says where
 * every binding lives (weights array or activation arena, as planned by cc_plan).
 *
 * i8 weights stay int8 on the device (a quarter of the f32 bytes to upload and to read): the
 * node gets the kernel's WEIGHTS_I8 row, its weights repacked in the same order as int8 texels
 * (R8_SINT, or R8G8B8A8_SINT where the f32 layout has vec4s) and its per-output-channel scales
 * bound beside the bias; the shader converts to float and applies the scale.
 */
#ifndef CC_VK_NODES_H
#define CC_VK_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "error.h"
#include "kernels.h"
#include "model.h"

/* Host copy of every repacked constant, uploaded once. Each blob starts at a multiple of
 * align_floats floats (set by the caller before the first node); padding is zero. int8 blobs
 * take whole floats too (their bytes rounded up to 4). */
struct cc_vk_weights {
    float *data; // (cap) floats (or int8 bytes, in int8 blobs)
    size_t n, cap;
    size_t align_floats;
};

void cc_vk_weights_finish(struct cc_vk_weights *w);

/* One binding's source: a texel view of a range (weights or arena), or a storage range. */
struct cc_vk_binding {
    bool weights;     // in the weights buffer (else the arena)
    VkDeviceSize off; // bytes
    VkDeviceSize bytes;
    VkFormat format;  // texel view format: R32_SFLOAT, R32G32B32A32_SFLOAT, R8_SINT or
                      // R8G8B8A8_SINT (i8 weights); unused for storage bindings
    const char *what; // tensor name for messages
};

/* Bytes of one texel of a format cc_vk_binding uses. */
uint32_t cc_vk_texel_bytes(VkFormat format);

/* What a node needs: kernel, specialization, dispatch, bindings (weights already packed); or,
 * for the ops that only move whole blocks of memory, the copies within the arena. */
struct cc_vk_node {
    enum cc_kernel kernel; // CC_KERNEL_COUNT: no dispatch; the node is its copies
    uint32_t spec[CC_KERNEL_MAX_SPEC];
    uint32_t local[3];
    int64_t groups[3];
    struct cc_vk_binding bind[CC_KERNEL_MAX_BINDINGS];
    // Arena byte ranges, recorded as one vkCmdCopyBuffer: concat, one per input; slice and a
    // reshape/flatten the plan did not alias, one; an aliased reshape/flatten, none.
    int n_copies;
    VkBufferCopy copies[CC_MAX_NODE_INPUTS];
};

/* Whether these kernels can run node `node` of model: false with why set (one clause naming the
 * node, op and what is missing, no "vulkan backend:" prefix) when they cannot; the backend then
 * runs the node on the CPU between Vulkan segments (vk_backend.c). */
bool cc_vk_node_supported(const struct cc_model *model, int node, struct cc_error *why);

/* Fills ns for node `node` of model; offset is the plan's byte offset per tensor, subgroup the
 * device's subgroup size. Returns false with err set (unsupported op, out of memory). */
bool cc_vk_node_setup(const struct cc_model *model, const size_t *offset, uint32_t subgroup,
                      int node, struct cc_vk_weights *w, struct cc_vk_node *ns,
                      struct cc_error *err);

/* Whether node `node`'s kernel, dispatch and bindings as ns describes them fit the limits l (as a
 * profile may have clamped them, vk_profile.h): false with why naming the node and the limit;
 * the backend then runs the node on the CPU. Copy-only nodes (no kernel) always fit. */
bool cc_vk_node_fits(const struct cc_model *model, const VkPhysicalDeviceLimits *l, int node,
                     const struct cc_vk_node *ns, struct cc_error *why);

#endif
