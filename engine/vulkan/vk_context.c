/* camclass — the Vulkan context (see vk_context.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include "vk_context.h"

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                    */

const char *cc_vk_result_name(VkResult r)
{
    // clang-format off
    switch (r) {
#define R(x) case x: return #x;
        R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_EVENT_SET) R(VK_EVENT_RESET)
        R(VK_INCOMPLETE) R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        R(VK_ERROR_INITIALIZATION_FAILED) R(VK_ERROR_DEVICE_LOST) R(VK_ERROR_MEMORY_MAP_FAILED)
        R(VK_ERROR_LAYER_NOT_PRESENT) R(VK_ERROR_EXTENSION_NOT_PRESENT)
        R(VK_ERROR_FEATURE_NOT_PRESENT) R(VK_ERROR_INCOMPATIBLE_DRIVER)
        R(VK_ERROR_TOO_MANY_OBJECTS) R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_FRAGMENTED_POOL)
        R(VK_ERROR_UNKNOWN) R(VK_ERROR_OUT_OF_POOL_MEMORY) R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        R(VK_PIPELINE_COMPILE_REQUIRED)
#undef R
    default:
        return "VK_ERROR_(unnamed)";
    }
    // clang-format on
}

/* What the user can do about r, in a few words. */
static const char *result_hint(VkResult r)
{
    switch (r) {
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED:
        return "no usable Vulkan driver; install mesa-vulkan-drivers (lavapipe) or your GPU's "
               "Vulkan driver, or use --backend cpu";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return "out of system memory; close other programs";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "out of GPU memory; use a smaller model or --backend cpu";
    case VK_ERROR_DEVICE_LOST:
        return "the GPU driver reset the device; check dmesg, update the driver";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "the driver lacks a required capability; update the driver or use --backend cpu";
    default:
        return "a driver error; try another --device or --backend cpu";
    }
}

bool cc_vk_check(VkResult r, const char *call, struct cc_error *err)
{
    if (r == VK_SUCCESS)
        return true;
    return cc_error_set(err, "%s failed: %s (%s)", call, cc_vk_result_name(r), result_hint(r));
}

/* ---------------------------------------------------------------------------------------- */
/* Fault injection (tests)                                                                   */

/* The counted call: true when it is the one that must fail. */
static bool fault_due(struct cc_vk_fault *f, enum cc_vk_fault_kind kind)
{
    if (f->kind != kind || (kind != CC_VK_FAULT_ALLOC && !f->armed))
        return false;
    return ++f->calls == f->at;
}

/* ---------------------------------------------------------------------------------------- */
/* Instance and device choice                                                                */

static bool create_instance(VkInstance *out, struct cc_error *err)
{
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "camclass",
        .applicationVersion = VK_MAKE_VERSION(0, 1, 0),
        .pEngineName = "camclass",
        .engineVersion = VK_MAKE_VERSION(0, 1, 0),
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    return cc_vk_check(vkCreateInstance(&ci, NULL, out), "vkCreateInstance", err);
}

/* Lists the physical devices into a malloc'd array. Returns the count, or -1 with err set. */
static int enumerate_devices(VkInstance inst, VkPhysicalDevice **out, struct cc_error *err)
{
    uint32_t n = 0;
    if (!cc_vk_check(vkEnumeratePhysicalDevices(inst, &n, NULL), "vkEnumeratePhysicalDevices", err))
        return -1;
    *out = calloc(n ? n : 1, sizeof(**out));
    if (!*out) {
        cc_error_set(err, "out of memory listing Vulkan devices");
        return -1;
    }
    VkResult r = vkEnumeratePhysicalDevices(inst, &n, *out);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(*out);
        *out = NULL;
        cc_vk_check(r, "vkEnumeratePhysicalDevices", err);
        return -1;
    }
    return (int)n;
}

static const char *device_type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return "cpu";
    default:
        return "other";
    }
}

/* Higher is preferred: discrete > integrated > virtual > CPU > other. */
static int device_rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return 1;
    default:
        return 0;
    }
}

/* Index of a queue family with compute, preferring one without graphics; -1 if none. */
static int find_compute_queue(VkPhysicalDevice phys)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, NULL);
    VkQueueFamilyProperties q[64];
    if (n > 64)
        n = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, q);
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0)
            continue;
        if (best < 0 || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
            best = (int)i;
        if (!(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
            break;
    }
    return best;
}

int cc_vk_list_devices(FILE *out, struct cc_error *err)
{
    VkInstance inst = VK_NULL_HANDLE;
    if (!create_instance(&inst, err))
        return -1;
    VkPhysicalDevice *devs = NULL;
    int n = enumerate_devices(inst, &devs, err);
    for (int i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devs[i], &p);
        if (out)
            fprintf(out, "%d: %s, %s, Vulkan %u.%u.%u\n", i, p.deviceName,
                    device_type_name(p.deviceType), VK_API_VERSION_MAJOR(p.apiVersion),
                    VK_API_VERSION_MINOR(p.apiVersion), VK_API_VERSION_PATCH(p.apiVersion));
    }
    free(devs);
    vkDestroyInstance(inst, NULL);
    return n;
}

static bool has_extension(VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS)
        return false;
    VkExtensionProperties *e = calloc(n ? n : 1, sizeof(*e));
    if (!e)
        return false;
    bool found = false;
    if (vkEnumerateDeviceExtensionProperties(phys, NULL, &n, e) == VK_SUCCESS) {
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(e[i].extensionName, name) == 0;
    }
    free(e);
    return found;
}

/* Records optional features (none is enabled or required) and the subgroup size. */
static void detect_features(struct cc_vk *vk)
{
    VkPhysicalDevice16BitStorageFeatures s16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
    };
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR,
        .pNext = &s16,
    };
    bool has_f16 = has_extension(vk->phys, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME) ||
                   vk->props.apiVersion >= VK_API_VERSION_1_2;
    VkPhysicalDeviceFeatures2 f2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = has_f16 ? (void *)&f16 : (void *)&s16,
    };
    vkGetPhysicalDeviceFeatures2(vk->phys, &f2);
    vk->features.shader_float16 = has_f16 && f16.shaderFloat16;
    vk->features.shader_int8 = has_f16 && f16.shaderInt8;
    vk->features.storage_buffer_16bit = s16.storageBuffer16BitAccess;

    VkPhysicalDeviceSubgroupProperties sg = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
    };
    VkPhysicalDeviceProperties2 p2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &sg,
    };
    vkGetPhysicalDeviceProperties2(vk->phys, &p2);
    vk->subgroup_size = sg.subgroupSize ? sg.subgroupSize : 1;
}

static bool choose_device(struct cc_vk *vk, int device_index, struct cc_error *err)
{
    VkPhysicalDevice *devs = NULL;
    int n = enumerate_devices(vk->instance, &devs, err);
    if (n < 0)
        return false;
    if (n == 0) {
        free(devs);
        return cc_error_set(err, "no Vulkan device found; install mesa-vulkan-drivers "
                                 "(lavapipe) or your GPU's Vulkan driver, or use --backend cpu");
    }
    if (device_index >= n) {
        free(devs);
        return cc_error_set(err,
                            "Vulkan device index %d is out of range: %d device%s "
                            "(0..%d); see --list-devices",
                            device_index, n, n == 1 ? "" : "s", n - 1);
    }
    int best = -1, best_rank = -1;
    for (int i = 0; i < n; i++) {
        if (device_index >= 0 && i != device_index)
            continue;
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devs[i], &p);
        bool usable = p.apiVersion >= VK_API_VERSION_1_1 && find_compute_queue(devs[i]) >= 0;
        if (device_index >= 0 && !usable) {
            free(devs);
            return cc_error_set(err,
                                "Vulkan device %d (%s) is not usable: it needs Vulkan 1.1 "
                                "and a compute queue; choose another --device",
                                device_index, p.deviceName);
        }
        if (usable && device_rank(p.deviceType) > best_rank) {
            best = i;
            best_rank = device_rank(p.deviceType);
        }
    }
    if (best < 0) {
        free(devs);
        return cc_error_set(err,
                            "none of the %d Vulkan devices supports Vulkan 1.1 with a "
                            "compute queue; update the driver or use --backend cpu",
                            n);
    }
    vk->phys = devs[best];
    free(devs);
    vkGetPhysicalDeviceProperties(vk->phys, &vk->props);
    vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem);
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Create / destroy                                                                          */

bool cc_vk_device_name(int device_index, char *out, size_t size, struct cc_error *err)
{
    struct cc_vk vk = {0};
    bool ok = create_instance(&vk.instance, err) && choose_device(&vk, device_index, err);
    if (ok)
        snprintf(out, size, "%s", vk.props.deviceName);
    if (vk.instance)
        vkDestroyInstance(vk.instance, NULL);
    return ok;
}

struct cc_vk *cc_vk_create(int device_index, struct cc_error *err)
{
    struct cc_vk *vk = calloc(1, sizeof(*vk));
    if (!vk) {
        cc_error_set(err, "out of memory creating the Vulkan context");
        return NULL;
    }
    if (!create_instance(&vk->instance, err) || !choose_device(vk, device_index, err))
        goto error;
    detect_features(vk);

    vk->queue_family = (uint32_t)find_compute_queue(vk->phys);
    {
        uint32_t n = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, NULL);
        VkQueueFamilyProperties q[64];
        if (n > 64)
            n = 64;
        vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, q);
        vk->timestamp_valid_bits = q[vk->queue_family].timestampValidBits;
    }

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = vk->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
    };
    if (!cc_vk_check(vkCreateDevice(vk->phys, &dci, NULL, &vk->device), "vkCreateDevice", err))
        goto error;
    vkGetDeviceQueue(vk->device, vk->queue_family, 0, &vk->queue);

    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = vk->queue_family,
    };
    if (!cc_vk_check(vkCreateCommandPool(vk->device, &pci, NULL, &vk->cmd_pool),
                     "vkCreateCommandPool", err))
        goto error;

    /* UMA when every device-local type is also host-visible (integrated GPUs, lavapipe). */
    vk->uma = true;
    bool any_local = false;
    for (uint32_t i = 0; i < vk->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = vk->mem.memoryTypes[i].propertyFlags;
        if (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
            any_local = true;
            if (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ||
                !(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
                vk->uma = false;
        }
    }
    vk->uma = vk->uma && any_local;
    return vk;

error:
    cc_vk_destroy(vk);
    return NULL;
}

void cc_vk_destroy(struct cc_vk *vk)
{
    if (!vk)
        return;
    if (vk->device) {
        vkDeviceWaitIdle(vk->device);
        if (vk->cmd_pool)
            vkDestroyCommandPool(vk->device, vk->cmd_pool, NULL);
        vkDestroyDevice(vk->device, NULL);
    }
    if (vk->instance)
        vkDestroyInstance(vk->instance, NULL);
    free(vk);
}

/* ---------------------------------------------------------------------------------------- */
/* Memory and buffers                                                                        */

/* First memory type allowed by type_bits that has all of want; -1 if none. */
static int find_memory_type(const struct cc_vk *vk, uint32_t type_bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < vk->mem.memoryTypeCount; i++) {
        if ((type_bits & (1u << i)) && (vk->mem.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    }
    return -1;
}

bool cc_vk_buffer_init(struct cc_vk *vk, struct cc_vk_buffer *buf, VkDeviceSize size,
                       VkBufferUsageFlags usage, enum cc_vk_mem kind, struct cc_error *err)
{
    memset(buf, 0, sizeof(*buf));
    buf->size = size;
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size ? size : 16,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    if (!cc_vk_check(vkCreateBuffer(vk->device, &bci, NULL, &buf->buffer), "vkCreateBuffer", err))
        return false;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(vk->device, buf->buffer, &req);

    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = -1;
    if (kind == CC_VK_MEM_DEVICE && vk->uma)
        type = find_memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
    else if (kind == CC_VK_MEM_DEVICE)
        type = find_memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    else {
        /* Cached host memory makes reading results back fast; take it when there is one. */
        type = find_memory_type(vk, req.memoryTypeBits, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
        if (type < 0)
            type = find_memory_type(vk, req.memoryTypeBits, host);
    }
    if (type < 0)
        type = find_memory_type(vk, req.memoryTypeBits, 0);
    if (type < 0) {
        cc_vk_buffer_finish(vk, buf);
        return cc_error_set(err,
                            "no Vulkan memory type fits a %llu-byte buffer; the driver "
                            "looks broken, try --backend cpu",
                            (unsigned long long)size);
    }
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    VkResult r = fault_due(&vk->fault, CC_VK_FAULT_ALLOC)
                     ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                     : vkAllocateMemory(vk->device, &mai, NULL, &buf->memory);
    if (!cc_vk_check(r, "vkAllocateMemory", err) ||
        !cc_vk_check(vkBindBufferMemory(vk->device, buf->buffer, buf->memory, 0),
                     "vkBindBufferMemory", err)) {
        cc_vk_buffer_finish(vk, buf);
        return false;
    }
    /* Mapped only when coherent: run() memcpys without flushes. */
    const VkMemoryPropertyFlags flags = vk->mem.memoryTypes[type].propertyFlags;
    if ((flags & host) == host) {
        if (!cc_vk_check(vkMapMemory(vk->device, buf->memory, 0, VK_WHOLE_SIZE, 0, &buf->map),
                         "vkMapMemory", err)) {
            cc_vk_buffer_finish(vk, buf);
            return false;
        }
    }
    return true;
}

void cc_vk_buffer_finish(struct cc_vk *vk, struct cc_vk_buffer *buf)
{
    if (!vk || !buf)
        return;
    if (buf->buffer)
        vkDestroyBuffer(vk->device, buf->buffer, NULL);
    if (buf->memory)
        vkFreeMemory(vk->device, buf->memory, NULL); // also unmaps
    memset(buf, 0, sizeof(*buf));
}

bool cc_vk_submit_wait(struct cc_vk *vk, VkCommandBuffer cmd, VkFence fence, struct cc_error *err)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &cmd,
    };
    // An injected fault replaces the driver's answer; a lost device answers every submission.
    struct cc_vk_fault *f = &vk->fault;
    bool oom = fault_due(f, CC_VK_FAULT_OOM), lose = fault_due(f, CC_VK_FAULT_LOST);
    if (!cc_vk_check(vkResetFences(vk->device, 1, &fence), "vkResetFences", err))
        return false;
    VkResult r = f->lost ? VK_ERROR_DEVICE_LOST
                 : oom   ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                         : vkQueueSubmit(vk->queue, 1, &si, fence);
    if (!cc_vk_check(r, "vkQueueSubmit", err))
        return false;
    r = vkWaitForFences(vk->device, 1, &fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS && lose) {
        f->lost = true; // the work ran, but the wait reports the loss as a driver's reset would
        r = VK_ERROR_DEVICE_LOST;
    }
    return cc_vk_check(r, "vkWaitForFences", err);
}

bool cc_vk_upload(struct cc_vk *vk, struct cc_vk_buffer *buf, VkDeviceSize offset, const void *data,
                  size_t size, struct cc_error *err)
{
    if (size == 0)
        return true;
    if (buf->map) {
        memcpy((char *)buf->map + offset, data, size);
        return true;
    }
    struct cc_vk_buffer staging = {0};
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    bool ok = false;
    if (!cc_vk_buffer_init(vk, &staging, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, CC_VK_MEM_STAGING,
                           err))
        return false;
    memcpy(staging.map, data, size);
    VkCommandBufferAllocateInfo cai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = vk->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    if (!cc_vk_check(vkAllocateCommandBuffers(vk->device, &cai, &cmd), "vkAllocateCommandBuffers",
                     err) ||
        !cc_vk_check(vkCreateFence(vk->device, &fci, NULL, &fence), "vkCreateFence", err) ||
        !cc_vk_check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer", err))
        goto out;
    VkBufferCopy region = {.srcOffset = 0, .dstOffset = offset, .size = size};
    vkCmdCopyBuffer(cmd, staging.buffer, buf->buffer, 1, &region);
    if (!cc_vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer", err) ||
        !cc_vk_submit_wait(vk, cmd, fence, err))
        goto out;
    ok = true;
out:
    if (fence)
        vkDestroyFence(vk->device, fence, NULL);
    if (cmd)
        vkFreeCommandBuffers(vk->device, vk->cmd_pool, 1, &cmd);
    cc_vk_buffer_finish(vk, &staging);
    return ok;
}
