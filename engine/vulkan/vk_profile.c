/* camclass — named Vulkan device profiles (see vk_profile.h).
 *
 * One row per profile, holding only the limits and features the engine reads; docs/PLATFORMS.md
 * gives each value's source line.
 */
#include <stdio.h>
#include <string.h>

#include "vk_profile.h"

struct profile {
    const char *name;
    const char *device; // appended to the device name: "llvmpipe (…) as Raspberry Pi 4 (v3dv)"
    uint32_t max_invocations, max_size[3], max_count[3], max_shared;
    uint32_t max_storage_range, max_texel_elements, max_push;
    uint32_t max_sampled, max_storage_buffers, max_resources; // per stage
    VkDeviceSize min_texel_align, min_storage_align;
    uint32_t subgroup_size;
    struct cc_vk_features features; // what the profile has (ANDed with the device's)
};

/* Mesa's v3dv, Raspberry Pi 4 (V3D 4.2): v3dv_GetPhysicalDeviceProperties in
 * src/broadcom/vulkan/v3dv_device.c, Mesa 23.2.1 (Raspberry Pi OS 12) and 22.3.7 (Debian 12)
 * alike. Uniform texel buffers share the 16 sampled-image slots per stage. */
static const struct profile profiles[] = {
    {
        .name = "pi4",
        .device = "Raspberry Pi 4 (v3dv)",
        .max_invocations = 256,
        .max_size = {256, 256, 256},
        .max_count = {65535, 65535, 65535},
        .max_shared = 16384,
        .max_storage_range = 1u << 30,
        .max_texel_elements = 1u << 28,
        .max_push = 128,
        .max_sampled = 16,
        .max_storage_buffers = 8,
        .max_resources = 128,
        .min_texel_align = 64,
        .min_storage_align = 32,
        .subgroup_size = 16,
        .features = {.shader_float16 = false, .shader_int8 = false, .storage_buffer_16bit = true},
    },
};

#define KNOWN "pi4" // the names above, for messages

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static const struct profile *find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(profiles) / sizeof(profiles[0]); i++)
        if (!strcmp(profiles[i].name, name))
            return &profiles[i];
    return NULL;
}

bool cc_vk_profile_known(const char *name, const char **known)
{
    if (known)
        *known = KNOWN;
    return find(name) != NULL;
}

bool cc_vk_profile_apply(struct cc_vk *vk, const char *name, struct cc_error *err)
{
    if (!name || !*name)
        return true;
    const struct profile *p = find(name);
    if (!p)
        return cc_error_set(err, "unknown Vulkan limits profile \"%s\"; known: %s", name, KNOWN);
    VkPhysicalDeviceLimits *l = &vk->props.limits;
    l->maxComputeWorkGroupInvocations =
        min_u32(l->maxComputeWorkGroupInvocations, p->max_invocations);
    for (int d = 0; d < 3; d++) {
        l->maxComputeWorkGroupSize[d] = min_u32(l->maxComputeWorkGroupSize[d], p->max_size[d]);
        l->maxComputeWorkGroupCount[d] = min_u32(l->maxComputeWorkGroupCount[d], p->max_count[d]);
    }
    l->maxComputeSharedMemorySize = min_u32(l->maxComputeSharedMemorySize, p->max_shared);
    l->maxStorageBufferRange = min_u32(l->maxStorageBufferRange, p->max_storage_range);
    l->maxTexelBufferElements = min_u32(l->maxTexelBufferElements, p->max_texel_elements);
    l->maxPushConstantsSize = min_u32(l->maxPushConstantsSize, p->max_push);
    l->maxPerStageDescriptorSampledImages =
        min_u32(l->maxPerStageDescriptorSampledImages, p->max_sampled);
    l->maxPerStageDescriptorStorageBuffers =
        min_u32(l->maxPerStageDescriptorStorageBuffers, p->max_storage_buffers);
    l->maxPerStageResources = min_u32(l->maxPerStageResources, p->max_resources);
    if (l->minTexelBufferOffsetAlignment < p->min_texel_align)
        l->minTexelBufferOffsetAlignment = p->min_texel_align;
    if (l->minStorageBufferOffsetAlignment < p->min_storage_align)
        l->minStorageBufferOffsetAlignment = p->min_storage_align;
    vk->subgroup_size = p->subgroup_size; // the kernels use no subgroup operations: the size
                                          // only steers conv2d_pw's layout choice
    vk->features.shader_float16 &= p->features.shader_float16;
    vk->features.shader_int8 &= p->features.shader_int8;
    vk->features.storage_buffer_16bit &= p->features.storage_buffer_16bit;
    char named[sizeof(vk->props.deviceName)];
    snprintf(named, sizeof(named), "%.*s as %s", (int)(sizeof(named) / 2), vk->props.deviceName,
             p->device);
    memcpy(vk->props.deviceName, named, sizeof(named));
    vk->profile = p->name;
    return true;
}
