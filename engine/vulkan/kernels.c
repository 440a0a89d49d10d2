/* camclass — the kernel table, the one pipeline builder, the pipeline cache (see kernels.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "cache_file.h"
#include "kernels.h"

/* ---------------------------------------------------------------------------------------- */
/* SPIR-V, embedded from the glslc-generated headers                                         */

static const uint32_t spv_conv2d[] =
#include "conv2d.spv.h"
    ;
static const uint32_t spv_conv2d_oc4[] =
#include "conv2d_oc4.spv.h"
    ;
static const uint32_t spv_conv2d_pw[] =
#include "conv2d_pw.spv.h"
    ;
static const uint32_t spv_conv2d_pw_vec4[] =
#include "conv2d_pw_vec4.spv.h"
    ;
static const uint32_t spv_add[] =
#include "add.spv.h"
    ;
static const uint32_t spv_mul[] =
#include "mul.spv.h"
    ;
static const uint32_t spv_clamp[] =
#include "clamp.spv.h"
    ;
static const uint32_t spv_global_avg_pool[] =
#include "global_avg_pool.spv.h"
    ;
static const uint32_t spv_max_pool2d[] =
#include "max_pool2d.spv.h"
    ;
static const uint32_t spv_avg_pool2d[] =
#include "avg_pool2d.spv.h"
    ;
static const uint32_t spv_channel_shuffle[] =
#include "channel_shuffle.spv.h"
    ;
static const uint32_t spv_linear[] =
#include "linear.spv.h"
    ;
static const uint32_t spv_softmax[] =
#include "softmax.spv.h"
    ;
static const uint32_t spv_conv2d_i8[] =
#include "conv2d_i8.spv.h"
    ;
static const uint32_t spv_conv2d_oc4_i8[] =
#include "conv2d_oc4_i8.spv.h"
    ;
static const uint32_t spv_conv2d_pw_i8[] =
#include "conv2d_pw_i8.spv.h"
    ;
static const uint32_t spv_conv2d_pw_vec4_i8[] =
#include "conv2d_pw_vec4_i8.spv.h"
    ;
static const uint32_t spv_linear_i8[] =
#include "linear_i8.spv.h"
    ;

/* ---------------------------------------------------------------------------------------- */
/* The table                                                                                 */

#define TEXEL VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
#define SSBO VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
#define SPV(a) .spirv = a, .spirv_size = sizeof(a)

/* Loads go through texel buffers (texelFetch): on Mesa 22.3 lavapipe they measured 2–4× cheaper
 * than storage-buffer loads. Results are written to storage buffers.
 *
 * What the kernels are shaped by (measured on lavapipe, where most of camclass's CI and
 * development runs; every choice is generic and helps or costs nothing on GPUs):
 * - A texel load is a per-lane gather; a vec4 texel costs little more than a scalar one, so
 *   data is bound as RGBA32F texels wherever the layout allows (weights repacked at upload).
 * - Storage-buffer stores (and loads) run lane by lane with a branch each; a vec4 store costs
 *   about what a scalar one does, so results are stored 4 at a time where aligned.
 * - Loads are not scalarized even when every lane reads the same address (weights indexed by
 *   the workgroup id and a loop counter), so register tiles (output channels × pixels per
 *   invocation) are what cuts loads per multiply-add; the pointwise tile is chosen per node.
 * - subgroupBroadcast costs a loop over the lanes per component (slower than reloading), and
 *   shared-memory tiling was slower too; neither is used.
 * - int8 weights (the _i8 rows) are fetched as R8_SINT / R8G8B8A8_SINT texels, a quarter of
 *   the bytes for the same number of texel loads, converted to float and multiplied by the
 *   output channel's scale once per output (the sum of q·x, then · scale + bias): integer or
 *   fp16 arithmetic is never needed (the Raspberry Pi 4's v3dv has neither).
 * - Every shape is a specialization constant: loops unroll and index arithmetic folds. An
 *   array indexed with a non-constant index spills to per-lane scratch memory (a 4-channel
 *   unrolled pointwise loop doing that ran 4-6× slower), so arrays are indexed by constants
 *   after unrolling.
 */
// One row per kernel reads better than one field per line:
// clang-format off
// The rows of the kernels that read weights, f32 or (I8) int8 with the scales in binding 4.
#define CONV2D_SPEC                                                                                \
    .n_spec = 19,                                                                                  \
    .spec = {"C", "H", "W", "O", "HO", "WO", "KH", "KW", "SH", "SW", "DH", "DW", "PADT", "PADL",    \
             "GROUPS", "ACT_MIN", "ACT_MAX", "PX", "ACT_KIND"}
#define PW_SPEC                                                                                    \
    .n_spec = 9, .spec = {"C", "HW", "O", "ACT_MIN", "ACT_MAX", "OB", "PB", "FLAT", "ACT_KIND"}
#define LINEAR_SPEC .n_spec = 5, .spec = {"K", "N", "ACT_MIN", "ACT_MAX", "ACT_KIND"}
#define POOL_SPEC                                                                                  \
    .n_spec = 15, .spec = {"C", "H", "W", "HO", "WO", "KH", "KW", "SH", "SW", "PADT", "PADL",      \
                           "PADB", "PADR", "INCLUDE_PAD", "PX"}
#define ELTWISE_SPEC .n_spec = 4, .spec = {"N", "ACT_MIN", "ACT_MAX", "ACT_KIND"}
#define WEIGHT_BINDINGS .n_bindings = 4, .bindings = {TEXEL, TEXEL, TEXEL, SSBO} // x, w, bias, y
#define I8_BINDINGS .n_bindings = 5, .bindings = {TEXEL, TEXEL, TEXEL, SSBO, TEXEL} // + scales

const struct cc_kernel_info cc_kernel_table[CC_KERNEL_COUNT] = {
    [CC_KERNEL_CONV2D] = {
        .name = "conv2d", SPV(spv_conv2d), WEIGHT_BINDINGS, // w, bias scalar
        .local_size = {64, 1, 1}, .block = {8, 1}, // PX output columns; one channel per y
        CONV2D_SPEC,
    },
    [CC_KERNEL_CONV2D_OC4] = {
        .name = "conv2d_oc4", SPV(spv_conv2d_oc4), WEIGHT_BINDINGS, // w, bias vec4
        .local_size = {64, 1, 1}, .block = {8, 4}, // PX output columns × 4 channels
        CONV2D_SPEC,
    },
    [CC_KERNEL_CONV2D_PW] = {
        .name = "conv2d_pw", SPV(spv_conv2d_pw), WEIGHT_BINDINGS, // w, bias vec4
        .local_size = {64, 1, 1}, .block = {8, 8}, // default PB pixels × OB channels
        PW_SPEC,
    },
    [CC_KERNEL_CONV2D_PW_VEC4] = {
        .name = "conv2d_pw_vec4", SPV(spv_conv2d_pw_vec4), WEIGHT_BINDINGS, // x vec4 too
        .local_size = {64, 1, 1}, .block = {8, 8},
        PW_SPEC,
    },
    [CC_KERNEL_ADD] = {
        .name = "add", SPV(spv_add),
        .n_bindings = 3, .bindings = {TEXEL, TEXEL, SSBO}, // a, b, y
        .local_size = {64, 1, 1}, .block = {1, 1},
        ELTWISE_SPEC,
    },
    [CC_KERNEL_MUL] = {
        .name = "mul", SPV(spv_mul),
        .n_bindings = 3, .bindings = {TEXEL, TEXEL, SSBO}, // a, b, y
        .local_size = {64, 1, 1}, .block = {1, 1},
        .n_spec = 5, .spec = {"N", "ACT_MIN", "ACT_MAX", "ACT_KIND", "B_EVERY"},
    },
    [CC_KERNEL_CLAMP] = {
        .name = "clamp", SPV(spv_clamp),
        .n_bindings = 2, .bindings = {TEXEL, SSBO}, // x, y
        .local_size = {64, 1, 1}, .block = {1, 1},
        ELTWISE_SPEC,
    },
    [CC_KERNEL_GLOBAL_AVG_POOL] = {
        .name = "global_avg_pool", SPV(spv_global_avg_pool),
        .n_bindings = 2, .bindings = {TEXEL, SSBO}, // x, y
        .local_size = {64, 1, 1}, .block = {1, 1},
        .n_spec = 3, .spec = {"C", "HW", "GROUP"},
    },
    [CC_KERNEL_MAX_POOL2D] = {
        .name = "max_pool2d", SPV(spv_max_pool2d),
        .n_bindings = 2, .bindings = {TEXEL, SSBO}, // x, y
        .local_size = {64, 1, 1}, .block = {4, 1}, // PX (1 or 4) outputs of a row
        POOL_SPEC,
    },
    [CC_KERNEL_AVG_POOL2D] = {
        .name = "avg_pool2d", SPV(spv_avg_pool2d),
        .n_bindings = 2, .bindings = {TEXEL, SSBO}, // x, y
        .local_size = {64, 1, 1}, .block = {4, 1},
        POOL_SPEC,
    },
    [CC_KERNEL_CHANNEL_SHUFFLE] = {
        .name = "channel_shuffle", SPV(spv_channel_shuffle),
        .n_bindings = 2, .bindings = {TEXEL, SSBO}, // x, y
        .local_size = {64, 1, 1}, .block = {1, 1}, // one texel (4 pixels when HW % 4 == 0)
        .n_spec = 3, .spec = {"C", "HW", "GROUPS"},
    },
    [CC_KERNEL_LINEAR] = {
        .name = "linear", SPV(spv_linear), WEIGHT_BINDINGS, // w vec4 (N, K4), bias scalar
        .local_size = {64, 1, 1}, .block = {1, 1},
        LINEAR_SPEC,
    },
    [CC_KERNEL_SOFTMAX] = {
        .name = "softmax", SPV(spv_softmax),
        .n_bindings = 2, .bindings = {TEXEL, SSBO}, // x, y
        .local_size = {64, 1, 1}, .block = {0, 0}, // one workgroup (power-of-two size)
        .n_spec = 1, .spec = {"N"},
    },
    [CC_KERNEL_CONV2D_I8] = {
        .name = "conv2d_i8", SPV(spv_conv2d_i8), I8_BINDINGS, // w R8_SINT, bias/scales scalar
        .local_size = {64, 1, 1}, .block = {8, 1},
        CONV2D_SPEC,
    },
    [CC_KERNEL_CONV2D_OC4_I8] = {
        .name = "conv2d_oc4_i8", SPV(spv_conv2d_oc4_i8), I8_BINDINGS, // w RGBA8_SINT, vec4s
        .local_size = {64, 1, 1}, .block = {8, 4},
        CONV2D_SPEC,
    },
    [CC_KERNEL_CONV2D_PW_I8] = {
        .name = "conv2d_pw_i8", SPV(spv_conv2d_pw_i8), I8_BINDINGS, // w RGBA8_SINT, vec4s
        .local_size = {64, 1, 1}, .block = {8, 8},
        PW_SPEC,
    },
    [CC_KERNEL_CONV2D_PW_VEC4_I8] = {
        .name = "conv2d_pw_vec4_i8", SPV(spv_conv2d_pw_vec4_i8), I8_BINDINGS,
        .local_size = {64, 1, 1}, .block = {8, 8},
        PW_SPEC,
    },
    [CC_KERNEL_LINEAR_I8] = {
        .name = "linear_i8", SPV(spv_linear_i8), I8_BINDINGS, // w RGBA8_SINT, scalar scales
        .local_size = {64, 1, 1}, .block = {1, 1},
        LINEAR_SPEC,
    },
};
// clang-format on

uint32_t cc_kernel_spec_float(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

/* ---------------------------------------------------------------------------------------- */
/* Pipeline cache file                                                                       */

/* VkPipelineCacheHeaderVersionOne, as the spec lays it out at the start of the cache data. */
struct cache_header {
    uint32_t header_size;
    uint32_t header_version;
    uint32_t vendor_id;
    uint32_t device_id;
    uint8_t uuid[VK_UUID_SIZE];
};

static char *default_cache_path(const VkPhysicalDeviceProperties *props)
{
    char name[96];
    snprintf(name, sizeof(name), "pipeline-cache-%04x-%04x-%u.bin", props->vendorID,
             props->deviceID, props->driverVersion);
    return cc_cache_file_default(name);
}

/* Reads the cache file if it is valid for this device. Returns a malloc'd buffer or NULL. */
static void *read_cache_file(const char *path, const VkPhysicalDeviceProperties *props,
                             size_t *size, FILE *notices)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL; // first start: nothing to say
    void *data = NULL;
    const char *why = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n < (long)sizeof(struct cache_header) || n > (256L << 20) || fseek(f, 0, SEEK_SET)) {
        why = "too short or unreadable";
        goto out;
    }
    data = malloc((size_t)n);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
        why = "unreadable";
        goto out;
    }
    struct cache_header h;
    memcpy(&h, data, sizeof(h));
    if (h.header_size < sizeof(h) || h.header_size > (uint32_t)n)
        why = "bad header size";
    else if (h.header_version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
        why = "unknown header version";
    else if (h.vendor_id != props->vendorID || h.device_id != props->deviceID)
        why = "made for another device";
    else if (memcmp(h.uuid, props->pipelineCacheUUID, VK_UUID_SIZE) != 0)
        why = "made by another driver build";
out:
    fclose(f);
    if (why) {
        if (notices)
            fprintf(notices, "camclass: ignoring pipeline cache %s: %s; it will be rebuilt\n", path,
                    why);
        free(data);
        return NULL;
    }
    *size = (size_t)n;
    return data;
}

struct cc_kernels *cc_kernels_create(struct cc_vk *vk, const char *cache_path, FILE *notices,
                                     struct cc_error *err)
{
    struct cc_kernels *k = calloc(1, sizeof(*k));
    if (!k) {
        cc_error_set(err, "out of memory creating kernels");
        return NULL;
    }
    k->vk = vk;
    if (!cache_path)
        k->cache_path = default_cache_path(&vk->props);
    else if (cache_path[0])
        k->cache_path = strdup(cache_path);

    size_t size = 0;
    void *data = k->cache_path ? read_cache_file(k->cache_path, &vk->props, &size, notices) : NULL;
    VkPipelineCacheCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = size,
        .pInitialData = data,
    };
    VkResult r = vkCreatePipelineCache(vk->device, &ci, NULL, &k->cache);
    if (r != VK_SUCCESS && data) {
        /* The driver refused data that passed the header checks: start empty. */
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        size = 0;
        r = vkCreatePipelineCache(vk->device, &ci, NULL, &k->cache);
    }
    free(data);
    k->loaded_size = size;
    if (!cc_vk_check(r, "vkCreatePipelineCache", err)) {
        cc_kernels_destroy(k);
        return NULL;
    }
    return k;
}

bool cc_kernels_save_cache(struct cc_kernels *k, struct cc_error *err)
{
    if (!k->cache_path)
        return true;
    size_t size = 0;
    if (!cc_vk_check(vkGetPipelineCacheData(k->vk->device, k->cache, &size, NULL),
                     "vkGetPipelineCacheData", err))
        return false;
    if (size == k->loaded_size)
        return true; // nothing new was compiled: keep the file as it is
    void *data = malloc(size ? size : 1);
    if (!data)
        return cc_error_set(err, "out of memory saving the pipeline cache");
    VkResult r = vkGetPipelineCacheData(k->vk->device, k->cache, &size, data);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(data);
        return cc_vk_check(r, "vkGetPipelineCacheData", err);
    }
    bool ok = cc_cache_file_write(k->cache_path, data, size, err);
    free(data);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* The one pipeline builder                                                                  */

/* Makes the row's set layout, pipeline layout and shader module on first use. */
static bool prepare_row(struct cc_kernels *k, enum cc_kernel id, struct cc_error *err)
{
    VkDevice dev = k->vk->device;
    const struct cc_kernel_info *row = &cc_kernel_table[id];
    if (k->module[id])
        return true;
    VkDescriptorSetLayoutBinding b[CC_KERNEL_MAX_BINDINGS];
    for (int i = 0; i < row->n_bindings; i++) {
        b[i] = (VkDescriptorSetLayoutBinding){
            .binding = (uint32_t)i,
            .descriptorType = row->bindings[i],
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    VkDescriptorSetLayoutCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = (uint32_t)row->n_bindings,
        .pBindings = b,
    };
    if (!cc_vk_check(vkCreateDescriptorSetLayout(dev, &dci, NULL, &k->set_layout[id]),
                     "vkCreateDescriptorSetLayout", err))
        return false;
    VkPushConstantRange pc = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .size = row->push_size,
    };
    VkPipelineLayoutCreateInfo lci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &k->set_layout[id],
        .pushConstantRangeCount = row->push_size ? 1 : 0,
        .pPushConstantRanges = &pc,
    };
    if (!cc_vk_check(vkCreatePipelineLayout(dev, &lci, NULL, &k->layout[id]),
                     "vkCreatePipelineLayout", err))
        return false;
    VkShaderModuleCreateInfo sci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = row->spirv_size,
        .pCode = row->spirv,
    };
    return cc_vk_check(vkCreateShaderModule(dev, &sci, NULL, &k->module[id]),
                       "vkCreateShaderModule", err);
}

bool cc_kernels_pipeline(struct cc_kernels *k, enum cc_kernel id, const uint32_t local[3],
                         const uint32_t *spec, int n_spec, VkPipeline *out, struct cc_error *err)
{
    const struct cc_kernel_info *row = &cc_kernel_table[id];
    if (n_spec != row->n_spec)
        return cc_error_set(err,
                            "kernel %s takes %d specialization constants, got %d (a "
                            "camclass bug)",
                            row->name, row->n_spec, n_spec);
    if (!prepare_row(k, id, err))
        return false;
    if (!local)
        local = row->local_size;

    uint32_t values[CC_KERNEL_MAX_SPEC + 3];
    VkSpecializationMapEntry map[CC_KERNEL_MAX_SPEC + 3];
    int n = 0;
    for (int i = 0; i < n_spec + 3; i++) {
        values[n] = i < n_spec ? spec[i] : local[i - n_spec];
        map[n] = (VkSpecializationMapEntry){
            .constantID =
                i < n_spec ? (uint32_t)i : (uint32_t)(CC_KERNEL_SPEC_LOCAL_SIZE_ID + i - n_spec),
            .offset = (uint32_t)(n * sizeof(uint32_t)),
            .size = sizeof(uint32_t),
        };
        n++;
    }
    VkSpecializationInfo si = {
        .mapEntryCount = (uint32_t)n,
        .pMapEntries = map,
        .dataSize = (size_t)n * sizeof(uint32_t),
        .pData = values,
    };
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->module[id],
                .pName = "main",
                .pSpecializationInfo = &si,
            },
        .layout = k->layout[id],
    };
    VkResult r = vkCreateComputePipelines(k->vk->device, k->cache, 1, &ci, NULL, out);
    if (r != VK_SUCCESS) {
        char call[96];
        snprintf(call, sizeof(call), "vkCreateComputePipelines (kernel %s)", row->name);
        return cc_vk_check(r, call, err);
    }
    return true;
}

void cc_kernels_destroy(struct cc_kernels *k)
{
    if (!k)
        return;
    VkDevice dev = k->vk->device;
    for (int i = 0; i < CC_KERNEL_COUNT; i++) {
        if (k->module[i])
            vkDestroyShaderModule(dev, k->module[i], NULL);
        if (k->layout[i])
            vkDestroyPipelineLayout(dev, k->layout[i], NULL);
        if (k->set_layout[i])
            vkDestroyDescriptorSetLayout(dev, k->set_layout[i], NULL);
    }
    if (k->cache)
        vkDestroyPipelineCache(dev, k->cache, NULL);
    free(k->cache_path);
    free(k);
}
