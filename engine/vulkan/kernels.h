/* camclass — the Vulkan compute kernels: one table row per kernel and one pipeline builder
 * (internal to engine/).
 *
 * A kernel is a row of cc_kernel_table: its SPIR-V (compiled by glslc at build time and
 * embedded), its descriptor bindings, push-constant size, default workgroup size, the names of
 * its specialization constants and how many output elements one invocation computes. Adding an
 * op is adding a shader and a row, never a new pipeline function.
 *
 * Specialization constants: ids 0..n_spec-1 are the row's `spec` names, each 4 bytes (int32,
 * or float bits for ACT_MIN/ACT_MAX); ids 100, 101, 102 are the workgroup size. Every kernel
 * with a fused activation takes ACT_MIN, ACT_MAX and ACT_KIND (enum cc_act_kind), read by
 * shaders/act.glsl.
 *
 * Ownership: struct cc_kernels owns the pipeline cache, the shader modules and the layouts;
 * pipelines returned by cc_kernels_pipeline() belong to the caller (vkDestroyPipeline) and
 * must be destroyed before cc_kernels_destroy(). Used by one thread at a time.
 */
#ifndef CC_KERNELS_H
#define CC_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <vulkan/vulkan.h>

#include "error.h"
#include "vk_context.h"

enum cc_kernel {
    CC_KERNEL_CONV2D,         // general conv2d (groups, stride, padding, dilation)
    CC_KERNEL_CONV2D_OC4,     // same, 4 output channels per invocation ((O/groups) % 4 == 0)
    CC_KERNEL_CONV2D_PW,      // 1×1 stride 1 unpadded groups 1, scalar pixel loads
    CC_KERNEL_CONV2D_PW_VEC4, // same, vec4 pixel loads/stores (HW % 4 == 0)
    CC_KERNEL_ADD,
    CC_KERNEL_MUL, // b of a's shape, or one value per B_EVERY elements (a [1,C,1,1] scale)
    CC_KERNEL_CLAMP,
    CC_KERNEL_GLOBAL_AVG_POOL,
    CC_KERNEL_MAX_POOL2D, // PyTorch's max_pool2d / avg_pool2d (padding, ceil_mode,
    CC_KERNEL_AVG_POOL2D, // count_include_pad), 1 or 4 outputs of a row per invocation
    CC_KERNEL_CHANNEL_SHUFFLE,
    CC_KERNEL_LINEAR,
    CC_KERNEL_SOFTMAX,
    // i8 weights: the rows above built with -DWEIGHTS_I8 (int8 texels converted to float in the
    // shader, per-output-channel scales in binding 4); f32 arithmetic throughout
    CC_KERNEL_CONV2D_I8,
    CC_KERNEL_CONV2D_OC4_I8,
    CC_KERNEL_CONV2D_PW_I8,
    CC_KERNEL_CONV2D_PW_VEC4_I8,
    CC_KERNEL_LINEAR_I8,
    CC_KERNEL_COUNT
};

#define CC_KERNEL_MAX_BINDINGS 5
#define CC_KERNEL_MAX_SPEC 19
#define CC_KERNEL_SPEC_LOCAL_SIZE_ID 100 // ids 100..102: workgroup size x, y, z

struct cc_kernel_info {
    const char *name;
    const uint32_t *spirv; // SPIR-V words
    size_t spirv_size;     // bytes
    int n_bindings;
    VkDescriptorType bindings[CC_KERNEL_MAX_BINDINGS]; // binding i's type
    uint32_t push_size;                                // push-constant bytes (0: none)
    uint32_t local_size[3];                            // default workgroup size
    int block[2]; // output elements per invocation along the dispatch's x and y
    int n_spec;
    const char *spec[CC_KERNEL_MAX_SPEC]; // specialization constant names, ids 0..n_spec-1
};

extern const struct cc_kernel_info cc_kernel_table[CC_KERNEL_COUNT];

struct cc_kernels {
    struct cc_vk *vk; // not owned
    VkPipelineCache cache;
    char *cache_path;   // NULL: no cache file
    size_t loaded_size; // bytes of cache data loaded from the file (0: none)
    VkDescriptorSetLayout set_layout[CC_KERNEL_COUNT]; // created on first use of a row
    VkPipelineLayout layout[CC_KERNEL_COUNT];
    VkShaderModule module[CC_KERNEL_COUNT];
};

/* Creates the pipeline cache, loaded from cache_path when it is valid for this device.
 * cache_path: NULL = $XDG_CACHE_HOME/camclass/pipeline-cache-<vendor>-<device>-<driver>.bin
 * (fallback ~/.cache), "" = no cache file. A missing, unreadable or foreign cache file is not an
 * error (it is said on notices, which may be NULL). Returns NULL with err set. */
struct cc_kernels *cc_kernels_create(struct cc_vk *vk, const char *cache_path, FILE *notices,
                                     struct cc_error *err);

/* The one pipeline builder: makes (once per row) the descriptor set layout, pipeline layout and
 * shader module of kernel id, then a compute pipeline specialized with spec[0..n_spec-1]
 * (n_spec must equal the row's) and workgroup size local (NULL: the row's default). */
bool cc_kernels_pipeline(struct cc_kernels *k, enum cc_kernel id, const uint32_t local[3],
                         const uint32_t *spec, int n_spec, VkPipeline *out, struct cc_error *err);

/* Writes the pipeline cache to its file atomically (temp file + rename). No-op without a
 * cache path. Returns false with err set on failure (the caller may only warn). */
bool cc_kernels_save_cache(struct cc_kernels *k, struct cc_error *err);

/* Frees everything; accepts NULL. */
void cc_kernels_destroy(struct cc_kernels *k);

/* Float bits for a float specialization constant. */
uint32_t cc_kernel_spec_float(float f);

#endif
