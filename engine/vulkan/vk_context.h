/* camclass — the Vulkan context: instance, physical device choice, one compute queue, memory
 * and buffer helpers (internal to engine/).
 *
 * Only Vulkan 1.1 core is required. Optional features (fp16/int8 arithmetic, 16-bit storage)
 * are detected and recorded in cc_vk.features, never required: the Raspberry Pi 4's v3dv has
 * none of them.
 *
 * Errors: every failing Vulkan call is reported once, where it fails, through cc_vk_check():
 * "vkCreateDevice failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (what to do)".
 *
 * Threads: a context is used by one thread at a time (the engine's).
 */
#ifndef CC_VK_CONTEXT_H
#define CC_VK_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <vulkan/vulkan.h>

#include "error.h"
#include "vk_fault.h"

struct cc_vk_features {
    bool shader_float16;       // VK_KHR_shader_float16_int8 shaderFloat16
    bool shader_int8;          // VK_KHR_shader_float16_int8 shaderInt8
    bool storage_buffer_16bit; // VkPhysicalDevice16BitStorageFeatures.storageBuffer16BitAccess
};

/* Fault injection, for tests only (cc_engine_options.vk_fault, docs/RELIABILITY.md): lavapipe
 * never runs out of memory or loses the device on demand, so our own wrappers around
 * vkAllocateMemory, vkQueueSubmit and vkWaitForFences return the error a driver would at the
 * at-th call, and every caller above them runs its real error path. Owned by the context (no
 * global state); touched only by the thread that uses the context. */
struct cc_vk {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props; // name, limits, vendor/device ids, timestampPeriod
    VkPhysicalDeviceMemoryProperties mem;
    struct cc_vk_features features;
    VkDevice device;
    uint32_t queue_family;
    uint32_t timestamp_valid_bits; // of queue_family; 0 = no timestamps
    uint32_t subgroup_size;        // invocations run in lockstep (Vulkan 1.1 property), >= 1
    VkQueue queue;
    VkCommandPool cmd_pool;   // for queue_family, resettable command buffers
    bool uma;                 // device-local memory is also host-visible: no staging copies needed
    const char *profile;      // the limits profile applied (vk_profile.h), static; NULL = none
    struct cc_vk_fault fault; // injected faults (tests); kind NONE normally
};

/* A buffer and its own memory. map is the persistent host mapping when the memory is
 * host-visible, NULL otherwise. */
struct cc_vk_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *map;
};

enum cc_vk_mem {
    CC_VK_MEM_DEVICE,  // fastest for the device (on UMA devices also mapped)
    CC_VK_MEM_STAGING, // host-visible + coherent, for copies in and out
};

/* Creates the context on device_index (-1 = best: discrete > integrated > virtual > CPU).
 * Returns NULL with err set. */
struct cc_vk *cc_vk_create(int device_index, struct cc_error *err);

/* Waits for the device to be idle and frees everything; accepts NULL and half-built
 * contexts. */
void cc_vk_destroy(struct cc_vk *vk);

/* Lists the Vulkan devices (index, type, name, API version) on out, one per line: their number,
 * or -1 with err when Vulkan cannot be loaded (engine.h's cc_engine_list_devices). */
int cc_vk_list_devices(FILE *out, struct cc_error *err);

/* The name of the device cc_vk_create(device_index) would choose, found with a Vulkan
 * instance only (no device, no pipelines): backend auto looks up its remembered choice with
 * it before paying for a Vulkan backend. False with err set as cc_vk_create would. */
bool cc_vk_device_name(int device_index, char *out, size_t size, struct cc_error *err);

/* Returns true when r is VK_SUCCESS; otherwise sets err to "<call> failed: <VK_NAME> (<hint>)"
 * and returns false. */
bool cc_vk_check(VkResult r, const char *call, struct cc_error *err);
const char *cc_vk_result_name(VkResult r);

/* Creates a buffer of size bytes with its own memory of the given kind. Returns false with err
 * set. */
bool cc_vk_buffer_init(struct cc_vk *vk, struct cc_vk_buffer *buf, VkDeviceSize size,
                       VkBufferUsageFlags usage, enum cc_vk_mem kind, struct cc_error *err);
/* Frees the buffer and zeroes it; accepts a zeroed or half-built buffer. */
void cc_vk_buffer_finish(struct cc_vk *vk, struct cc_vk_buffer *buf);

/* One-shot upload of size bytes to buf at offset: a memcpy when buf is mapped, otherwise a
 * temporary staging buffer, a copy command, and a wait. buf needs TRANSFER_DST usage when it is
 * not mapped. */
bool cc_vk_upload(struct cc_vk *vk, struct cc_vk_buffer *buf, VkDeviceSize offset, const void *data,
                  size_t size, struct cc_error *err);

/* Submits cmd on the queue and waits for fence (which is reset first). Counts toward an
 * oom/lost fault once it is armed. */
bool cc_vk_submit_wait(struct cc_vk *vk, VkCommandBuffer cmd, VkFence fence, struct cc_error *err);

#endif
