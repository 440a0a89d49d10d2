/* camclass — the Vulkan backend (cc_vulkan_backend, see backend.h).
 *
 * At create: choose the device, pick a kernel and its specialization per node, build the
 * pipelines (one builder, kernels.c), repack and upload every weight once into one buffer (i8
 * weights stay int8 there, see vk_nodes.h), plan the activations into one arena (plan.h),
 * write one descriptor set per node, and record ONE command buffer holding every dispatch with
 * compute→compute barriers between them (plus the input/output copies on devices with separate
 * memory). run() copies the input in, re-submits that command buffer, waits on a fence and
 * copies the output out.
 *
 * Per-op fallback (as PyTorch's CPU fallback for a device backend): a node these kernels cannot
 * run (cc_vk_node_supported) runs on the CPU with the reference C op (ref_ops.h), between
 * Vulkan segments, one command buffer per segment. Create chooses those nodes and records the
 * segments here; their host side (mirror, CPU steps, the run through the segments, the load
 * notice) is vk_fallback.c's.
 *
 * Activations stay NCHW f32, exactly as the model declares them, so flatten/reshape alias their
 * input and results are read back without conversion.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include "backend.h"
#include "ref_ops.h"
#include "kernels.h"
#include "plan.h"
#include "vk_backend.h"
#include "vk_context.h"
#include "vk_fallback.h"
#include "vk_nodes.h"
#include "vk_profile.h"

static void vk_destroy(void *state);

/* ---------------------------------------------------------------------------------------- */
/* Descriptors                                                                               */

static bool make_view(struct cc_vk_state *s, VkBuffer buf, VkDeviceSize off, VkDeviceSize bytes,
                      VkFormat format, const char *what, VkBufferView *out, struct cc_error *err)
{
    uint64_t elems = bytes / cc_vk_texel_bytes(format);
    uint32_t limit = s->vk->props.limits.maxTexelBufferElements;
    if (elems > limit)
        return cc_error_set(err,
                            "%s has %llu texels, more than this Vulkan device's "
                            "maxTexelBufferElements (%u); use --backend cpu",
                            what, (unsigned long long)elems, limit);
    if (s->n_views == s->cap_views) {
        int cap = s->cap_views ? 2 * s->cap_views : 64;
        VkBufferView *v = realloc(s->views, (size_t)cap * sizeof(*v));
        if (!v)
            return cc_error_set(err, "out of memory");
        s->views = v;
        s->cap_views = cap;
    }
    VkBufferViewCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
        .buffer = buf,
        .format = format,
        .offset = off,
        .range = bytes,
    };
    if (!cc_vk_check(vkCreateBufferView(s->vk->device, &ci, NULL, out), "vkCreateBufferView", err))
        return false;
    s->views[s->n_views++] = *out;
    return true;
}

/* Returns the shared pipeline for a specialization, building it on first use. */
static bool get_pipeline(struct cc_vk_state *s, const struct cc_vk_node *ns, VkPipeline *out,
                         struct cc_error *err)
{
    int n_spec = cc_kernel_table[ns->kernel].n_spec;
    for (int i = 0; i < s->n_pipelines; i++) {
        struct cc_vk_pipeline *p = &s->pipelines[i];
        if (p->kernel == ns->kernel && !memcmp(p->local, ns->local, sizeof(p->local)) &&
            !memcmp(p->spec, ns->spec, (size_t)n_spec * sizeof(uint32_t))) {
            *out = p->pipeline;
            return true;
        }
    }
    struct cc_vk_pipeline *p = &s->pipelines[s->n_pipelines];
    p->kernel = ns->kernel;
    memcpy(p->local, ns->local, sizeof(p->local));
    memcpy(p->spec, ns->spec, sizeof(p->spec));
    if (!cc_kernels_pipeline(s->kernels, ns->kernel, ns->local, ns->spec, n_spec, &p->pipeline,
                             err))
        return false;
    s->n_pipelines++;
    *out = p->pipeline;
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Create                                                                                    */

/* i8 weights are read through R8_SINT and R8G8B8A8_SINT uniform texel buffers. Vulkan makes
 * both mandatory for uniform texel buffers, but a driver that lacks them gets a clear message
 * here rather than a failed view later. */
static bool check_i8_formats(struct cc_vk_state *s, struct cc_error *err)
{
    bool any = false;
    for (int i = 0; i < s->model->n_tensors; i++)
        any |= s->model->tensors[i].dtype == CC_DTYPE_I8;
    static const struct {
        VkFormat format;
        const char *name;
    } formats[] = {{VK_FORMAT_R8_SINT, "R8_SINT"}, {VK_FORMAT_R8G8B8A8_SINT, "R8G8B8A8_SINT"}};
    for (size_t f = 0; any && f < sizeof(formats) / sizeof(formats[0]); f++) {
        VkFormatProperties fp;
        vkGetPhysicalDeviceFormatProperties(s->vk->phys, formats[f].format, &fp);
        if (!(fp.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT))
            return cc_error_set(err,
                                "Vulkan device %s cannot read %s uniform texel buffers, which "
                                "int8 weights need; use --backend cpu or an f32 bundle",
                                s->vk->props.deviceName, formats[f].name);
    }
    return true;
}

static bool write_set(struct cc_vk_state *s, struct cc_vk_step *st, const struct cc_vk_node *ns,
                      struct cc_error *err)
{
    const struct cc_kernel_info *row = &cc_kernel_table[ns->kernel];
    VkDescriptorSetLayout layout = s->kernels->set_layout[ns->kernel];
    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = s->pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &layout,
    };
    if (!cc_vk_check(vkAllocateDescriptorSets(s->vk->device, &ai, &st->set),
                     "vkAllocateDescriptorSets", err))
        return false;
    VkWriteDescriptorSet wr[CC_KERNEL_MAX_BINDINGS];
    VkBufferView views[CC_KERNEL_MAX_BINDINGS];
    VkDescriptorBufferInfo infos[CC_KERNEL_MAX_BINDINGS];
    for (int b = 0; b < row->n_bindings; b++) {
        const struct cc_vk_binding *src = &ns->bind[b];
        VkBuffer buf = src->weights ? s->weights.buffer : s->arena.buffer;
        wr[b] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = st->set,
            .dstBinding = (uint32_t)b,
            .descriptorCount = 1,
            .descriptorType = row->bindings[b],
        };
        if (row->bindings[b] == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER) {
            if (!make_view(s, buf, src->off, src->bytes, src->format, src->what, &views[b], err))
                return false;
            wr[b].pTexelBufferView = &views[b];
        } else {
            if (src->bytes > s->vk->props.limits.maxStorageBufferRange)
                return cc_error_set(err,
                                    "tensor %s (%llu bytes) exceeds this Vulkan device's "
                                    "maxStorageBufferRange; use --backend cpu",
                                    src->what, (unsigned long long)src->bytes);
            infos[b] =
                (VkDescriptorBufferInfo){.buffer = buf, .offset = src->off, .range = src->bytes};
            wr[b].pBufferInfo = &infos[b];
        }
    }
    vkUpdateDescriptorSets(s->vk->device, (uint32_t)row->n_bindings, wr, 0, NULL);
    return true;
}

static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access,
                    VkPipelineStageFlags dst, VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = src_access,
        .dstAccessMask = dst_access,
    };
    vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

static bool begin_cmd(struct cc_vk_state *s, int seg, struct cc_error *err)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    return cc_vk_check(vkBeginCommandBuffer(s->cmds[seg], &bi), "vkBeginCommandBuffer", err);
}

/* The stages and accesses the recorded barriers name. */
#define CS VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
#define XFER VK_PIPELINE_STAGE_TRANSFER_BIT
#define HOST VK_PIPELINE_STAGE_HOST_BIT
#define RW (VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT)
#define WRITES (VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT)
#define ALL (RW | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT)

/* The run of CPU steps [i, end) between two segments: ends segment *seg (the steps' inputs out
 * to the host) and begins the next with their outputs back in the arena. ranges: room for
 * (end - i) * CC_MAX_NODE_INPUTS copies. */
static bool record_cpu_run(struct cc_vk_state *s, int i, int end, int *seg, VkBufferCopy *ranges,
                           struct cc_error *err)
{
    VkCommandBuffer cmd = s->cmds[*seg];
    if (!s->shared) {
        uint32_t n = cc_vk_fallback_ranges(s, i, end, true, ranges);
        /* The copy reads what the steps before wrote (the barrier at the top covers
         * i == 0). */
        if (n && i > 0)
            barrier(cmd, XFER | CS, WRITES, XFER, VK_ACCESS_TRANSFER_READ_BIT);
        if (n)
            vkCmdCopyBuffer(cmd, s->arena.buffer, s->mirror.buffer, n, ranges);
    }
    barrier(cmd, XFER | CS, WRITES, HOST, VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
    if (!cc_vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer", err) ||
        !begin_cmd(s, ++*seg, err))
        return false;
    cmd = s->cmds[*seg];
    if (!s->shared) {
        uint32_t n = cc_vk_fallback_ranges(s, i, end, false, ranges);
        vkCmdCopyBuffer(cmd, s->mirror.buffer, s->arena.buffer, n, ranges);
    }
    barrier(cmd, HOST | XFER | CS, VK_ACCESS_HOST_WRITE_BIT | WRITES, XFER | CS, ALL);
    return true;
}

/* Step i, a dispatch or the arena copies, with its timestamps when profiling. */
static void record_step(struct cc_vk_state *s, VkCommandBuffer cmd, int i)
{
    const struct cc_vk_step *st = &s->steps[i];
    if (i > 0)
        barrier(cmd, XFER | CS, WRITES, XFER | CS, ALL);
    /* Both timestamps at the step's own stage: the first is written once the previous
     * step has finished (a top-of-pipe one may be written while it still runs). */
    VkPipelineStageFlags stage = st->kernel == CC_KERNEL_COUNT ? XFER : CS;
    if (s->queries)
        vkCmdWriteTimestamp(cmd, stage, s->queries, (uint32_t)(2 * i));
    if (st->kernel == CC_KERNEL_COUNT) {
        vkCmdCopyBuffer(cmd, s->arena.buffer, s->arena.buffer, (uint32_t)st->n_copies,
                        &s->copies[st->first_copy]);
    } else {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, st->pipeline);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->kernels->layout[st->kernel],
                                0, 1, &st->set, 0, NULL);
        vkCmdDispatch(cmd, st->groups[0], st->groups[1], st->groups[2]);
    }
    if (s->queries)
        vkCmdWriteTimestamp(cmd, stage, s->queries, (uint32_t)(2 * i + 1));
}

/* Every step, segment by segment (the first begun by record); then the output out to the
 * host. */
static bool record_steps(struct cc_vk_state *s, VkBufferCopy *ranges, struct cc_error *err)
{
    int seg = 0;
    for (int i = 0; i < s->n_steps; i++) {
        if (!s->steps[i].cpu) {
            record_step(s, s->cmds[seg], i);
            continue;
        }
        if (i > 0 && s->steps[i - 1].cpu)
            continue; // recorded with the first step of its run
        int end = i;
        while (end < s->n_steps && s->steps[end].cpu)
            end++;
        if (!record_cpu_run(s, i, end, &seg, ranges, err))
            return false;
    }
    VkCommandBuffer cmd = s->cmds[seg];
    if (!s->shared) {
        barrier(cmd, XFER | CS, WRITES, XFER, VK_ACCESS_TRANSFER_READ_BIT);
        VkBufferCopy c[2] = {
            {.srcOffset = s->out_off, .dstOffset = 0, .size = s->out_bytes},
            {.srcOffset = s->tap_off, .dstOffset = s->out_bytes, .size = s->tap_bytes}};
        vkCmdCopyBuffer(cmd, s->arena.buffer, s->staging_out.buffer, s->tap_bytes ? 2 : 1, c);
        barrier(cmd, XFER, VK_ACCESS_TRANSFER_WRITE_BIT, HOST, VK_ACCESS_HOST_READ_BIT);
    } else {
        barrier(cmd, XFER | CS, WRITES, HOST, VK_ACCESS_HOST_READ_BIT);
    }
    return cc_vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer", err);
}

/* Allocates and records the command buffers, one per segment: the input in, every step, the
 * output out. */
static bool record(struct cc_vk_state *s, struct cc_error *err)
{
    VkCommandBufferAllocateInfo cai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = s->vk->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = (uint32_t)s->n_cmds,
    };
    if (!cc_vk_check(vkAllocateCommandBuffers(s->vk->device, &cai, s->cmds),
                     "vkAllocateCommandBuffers", err) ||
        !begin_cmd(s, 0, err))
        return false;
    VkCommandBuffer cmd = s->cmds[0];
    if (s->queries)
        vkCmdResetQueryPool(cmd, s->queries, 0, (uint32_t)(2 * s->n_timings));
    if (!s->shared) {
        VkBufferCopy c = {.srcOffset = 0, .dstOffset = s->in_off, .size = s->in_bytes};
        vkCmdCopyBuffer(cmd, s->staging_in.buffer, s->arena.buffer, 1, &c);
    }
    /* Every step waits for the one before: in a chain network each consumes the previous
     * result, and arena reuse makes later writes depend on earlier reads (WAR). */
    barrier(cmd, XFER | CS, WRITES, XFER | CS, ALL);
    VkBufferCopy *ranges = NULL;
    if (s->n_cpu && !(ranges = calloc((size_t)s->n_cpu * CC_MAX_NODE_INPUTS, sizeof(*ranges))))
        return cc_error_set(err, "out of memory");
    bool ok = record_steps(s, ranges, err);
    free(ranges);
    return ok;
}

#undef CS
#undef XFER
#undef HOST
#undef RW
#undef WRITES
#undef ALL

/* The device, its limits and faults, the kernels and the activation plan. */
static bool open_device(struct cc_vk_state *s, const struct cc_engine_options *opts,
                        struct cc_vk_weights *w, struct cc_error *err)
{
    if (!(s->vk = cc_vk_create(opts->device_index, err)) ||
        !cc_vk_fault_parse(opts->vk_fault, &s->vk->fault, err) ||
        !cc_vk_profile_apply(s->vk, opts->vk_profile, err) || !check_i8_formats(s, err))
        return false;
    const VkPhysicalDeviceLimits *lim = &s->vk->props.limits;
    s->align = 16; // vec4 texel views
    if (lim->minTexelBufferOffsetAlignment > s->align)
        s->align = lim->minTexelBufferOffsetAlignment;
    if (lim->minStorageBufferOffsetAlignment > s->align)
        s->align = lim->minStorageBufferOffsetAlignment;
    w->align_floats = (size_t)s->align / sizeof(float);
    if (!(s->kernels = cc_kernels_create(s->vk, opts->pipeline_cache, opts->notices, err)))
        return false;
    s->tap = cc_backend_tap(s->model, opts);
    if (!cc_plan_init_keep(&s->plan, s->model, (size_t)s->align, s->tap, err))
        return false;
    s->plan_ok = true;
    return true;
}

/* Node i runs on the CPU: why says for the load notice. False when the CPU lacks its op too. */
static bool place_on_cpu(struct cc_vk_state *s, int i, const struct cc_error *why,
                         struct cc_vk_node *ns, struct cc_error *err)
{
    if (!cc_ref_op_find(s->model->nodes[i].op))
        return cc_error_set(err, "vulkan backend: %s, and the CPU has no such op either", why->msg);
    snprintf(s->cpu_why[i], sizeof(s->cpu_why[i]), "%.199s", why->msg);
    s->on_cpu[i] = true;
    ns->kernel = CC_KERNEL_COUNT;
    ns->n_copies = 0;
    s->n_cpu++;
    s->n_cmds += i == 0 || !s->on_cpu[i - 1];
    return true;
}

/* Kernel choice and weight packing per node (setups, one per node), the state's per-node
 * arrays and the copy regions. *n_dispatch: the nodes that dispatch a kernel. */
static bool place_nodes(struct cc_vk_state *s, struct cc_vk_weights *w, struct cc_vk_node *setups,
                        int *n_dispatch, struct cc_error *err)
{
    const struct cc_model *model = s->model;
    size_t nn = (size_t)(model->n_nodes ? model->n_nodes : 1);
    s->steps = calloc(nn, sizeof(*s->steps));
    s->pipelines = calloc(nn, sizeof(*s->pipelines));
    s->on_cpu = calloc(nn, sizeof(*s->on_cpu));
    s->cpu_why = calloc(nn, sizeof(*s->cpu_why));
    if (!s->steps || !s->pipelines || !s->on_cpu || !s->cpu_why)
        return cc_error_set(err, "out of memory");
    int n_copies = 0;
    *n_dispatch = 0;
    for (int i = 0; i < model->n_nodes; i++) {
        /* A node the kernels lack, or whose kernel or tensors exceed this device's limits,
         * runs on the CPU (its weights may already be packed: unused, harmless). */
        struct cc_error why = {0};
        bool gpu = cc_vk_node_supported(model, i, &why);
        if (gpu &&
            !cc_vk_node_setup(model, s->plan.offset, s->vk->subgroup_size, i, w, &setups[i], err))
            return false;
        if (gpu && !cc_vk_node_fits(model, &s->vk->props.limits, i, &setups[i], &why))
            gpu = false;
        if (!gpu) {
            if (!place_on_cpu(s, i, &why, &setups[i], err))
                return false;
            continue;
        }
        if (setups[i].kernel != CC_KERNEL_COUNT)
            (*n_dispatch)++;
        n_copies += setups[i].n_copies;
    }
    s->copies = calloc((size_t)(n_copies ? n_copies : 1), sizeof(*s->copies));
    if (!s->copies)
        return cc_error_set(err, "out of memory");
    return true;
}

/* Buffers: weights uploaded once (w is freed after), the arena, staging when memory is not
 * shared. */
static bool create_buffers(struct cc_vk_state *s, const struct cc_engine_options *opts,
                           struct cc_vk_weights *w, struct cc_error *err)
{
    const struct cc_model *model = s->model;
    const VkBufferUsageFlags XFER_DST = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (!cc_vk_buffer_init(s->vk, &s->weights, w->n * sizeof(float),
                           VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | XFER_DST, CC_VK_MEM_DEVICE,
                           err) ||
        !cc_vk_upload(s->vk, &s->weights, 0, w->data, w->n * sizeof(float), err))
        return false;
    cc_vk_weights_finish(w);
    if (!cc_vk_buffer_init(s->vk, &s->arena, s->plan.arena_size,
                           VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | XFER_DST,
                           CC_VK_MEM_DEVICE, err))
        return false;
    s->in_off = s->plan.offset[model->input.tensor];
    s->in_bytes = (size_t)model->tensors[model->input.tensor].count * sizeof(float);
    s->out_off = s->plan.offset[model->output.tensor];
    s->out_bytes = (size_t)model->tensors[model->output.tensor].count * sizeof(float);
    if (s->tap >= 0) {
        s->tap_off = s->plan.offset[s->tap];
        s->tap_bytes = (size_t)model->tensors[s->tap].count * sizeof(float);
    }
    s->shared = s->arena.map && !opts->vk_staging;
    return s->shared ||
           (cc_vk_buffer_init(s->vk, &s->staging_in, s->in_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                              CC_VK_MEM_STAGING, err) &&
            cc_vk_buffer_init(s->vk, &s->staging_out, s->out_bytes + s->tap_bytes, XFER_DST,
                              CC_VK_MEM_STAGING, err));
}

/* Descriptor pool: one set per dispatch (at most 4 texel bindings: x, w, bias, scales). */
static bool create_descriptor_pool(struct cc_vk_state *s, int n_dispatch, struct cc_error *err)
{
    VkDescriptorPoolSize sizes[] = {
        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, (uint32_t)(4 * n_dispatch + 1)},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t)(n_dispatch + 1)},
    };
    VkDescriptorPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = (uint32_t)(n_dispatch + 1),
        .poolSizeCount = 2,
        .pPoolSizes = sizes,
    };
    return cc_vk_check(vkCreateDescriptorPool(s->vk->device, &pci, NULL, &s->pool),
                       "vkCreateDescriptorPool", err);
}

/* Steps: pipelines (shared between equal specializations) and descriptor sets; CPU steps
 * pointed at the host view of the arena. */
static bool build_steps(struct cc_vk_state *s, const struct cc_vk_node *setups,
                        struct cc_error *err)
{
    if (!cc_vk_fallback_prepare(s, err))
        return false;
    size_t consts_used = 0;
    for (int i = 0; i < s->model->n_nodes; i++) {
        const struct cc_vk_node *ns = &setups[i];
        struct cc_vk_step *st = &s->steps[s->n_steps];
        st->node = i;
        st->kernel = ns->kernel;
        if (s->on_cpu[i]) {
            cc_vk_fallback_step(s, st, &consts_used);
            s->n_steps++;
            continue;
        }
        if (ns->kernel == CC_KERNEL_COUNT) {
            if (ns->n_copies == 0)
                continue; // a reshape aliased by the plan: nothing to do
            st->first_copy = s->n_copies;
            st->n_copies = ns->n_copies;
            memcpy(&s->copies[s->n_copies], ns->copies, (size_t)ns->n_copies * sizeof(*ns->copies));
            s->n_copies += ns->n_copies;
            s->n_steps++;
            continue;
        }
        if (!get_pipeline(s, ns, &st->pipeline, err) || !write_set(s, st, ns, err))
            return false;
        for (int d = 0; d < 3; d++)
            st->groups[d] = (uint32_t)ns->groups[d];
        s->n_steps++;
    }
    return true;
}

/* Profiling: two timestamps per step (dispatch or copies), when asked and the queue has them. */
static bool create_queries(struct cc_vk_state *s, const struct cc_engine_options *opts,
                           struct cc_error *err)
{
    s->n_timings = s->n_steps;
    if (opts->profile && s->vk->timestamp_valid_bits > 0 && s->n_steps > 0) {
        s->timings = calloc((size_t)s->n_steps, sizeof(*s->timings));
        s->stamps = calloc((size_t)(2 * s->n_steps), sizeof(*s->stamps));
        VkQueryPoolCreateInfo qci = {
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = VK_QUERY_TYPE_TIMESTAMP,
            .queryCount = (uint32_t)(2 * s->n_steps),
        };
        if (!s->timings || !s->stamps)
            return cc_error_set(err, "out of memory");
        if (!cc_vk_check(vkCreateQueryPool(s->vk->device, &qci, NULL, &s->queries),
                         "vkCreateQueryPool", err))
            return false;
        for (int i = 0; i < s->n_steps; i++)
            s->timings[i].node = s->steps[i].node;
    } else if (opts->profile && opts->notices) {
        fprintf(opts->notices, "camclass: this Vulkan queue has no timestamps; no per-layer "
                               "timings\n");
    }
    return true;
}

/* The fence and the command buffers, one per segment, recorded once. */
static bool create_commands(struct cc_vk_state *s, struct cc_error *err)
{
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    s->n_cmds++; // the segment before the first run of CPU steps (or the only one)
    if (!(s->cmds = calloc((size_t)s->n_cmds, sizeof(*s->cmds))))
        return cc_error_set(err, "out of memory");
    return cc_vk_check(vkCreateFence(s->vk->device, &fci, NULL, &s->fence), "vkCreateFence", err) &&
           record(s, err);
}

static void *vk_create(const struct cc_model *model, const struct cc_engine_options *opts,
                       struct cc_error *err)
{
    struct cc_vk_state *s = calloc(1, sizeof(*s));
    struct cc_vk_node *setups = NULL;
    struct cc_vk_weights w = {0};
    if (!s) {
        cc_error_set(err, "out of memory");
        return NULL;
    }
    s->model = model;
    if (!open_device(s, opts, &w, err))
        goto error;
    if (!(setups = calloc((size_t)(model->n_nodes ? model->n_nodes : 1), sizeof(*setups)))) {
        cc_error_set(err, "out of memory");
        goto error;
    }
    int n_dispatch = 0;
    if (!place_nodes(s, &w, setups, &n_dispatch, err) || !create_buffers(s, opts, &w, err) ||
        !create_descriptor_pool(s, n_dispatch, err) || !build_steps(s, setups, err))
        goto error;
    free(setups);
    setups = NULL;

    struct cc_error cache_err = {0};
    if (!cc_kernels_save_cache(s->kernels, &cache_err) && opts->notices)
        fprintf(opts->notices, "camclass: %s\n", cache_err.msg);
    if (!create_queries(s, opts, err) || !create_commands(s, err))
        goto error;
    /* One warm-up run: drivers may finish compiling pipelines at their first dispatch
     * (lavapipe does: its first run took ~500 ms against ~50 ms after), which belongs to the
     * load, not to the first frame. The arena holds no input yet; its results are unused.
     * With CPU steps, a second run measures what they cost for the load notice. */
    double cpu_ms = 0;
    if (!cc_vk_fallback_run(s, &cpu_ms, err) || !cc_vk_fallback_measure(s, opts->notices, err))
        goto error;
    s->vk->fault.armed = true; // an injected oom/lost fault counts the runs' submissions
    return s;

error:
    free(setups);
    cc_vk_weights_finish(&w);
    vk_destroy(s);
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Run                                                                                       */

static bool vk_run(void *state, const float *input, float *output, struct cc_error *err)
{
    struct cc_vk_state *s = state;
    if (s->shared)
        memcpy((char *)s->arena.map + s->in_off, input, s->in_bytes);
    else
        memcpy(s->staging_in.map, input, s->in_bytes);
    double cpu_ms;
    if (!cc_vk_fallback_run(s, &cpu_ms, err))
        return false;
    if (s->shared)
        memcpy(output, (const char *)s->arena.map + s->out_off, s->out_bytes);
    else
        memcpy(output, s->staging_out.map, s->out_bytes);

    if (s->queries) {
        uint32_t bits = s->vk->timestamp_valid_bits;
        uint64_t mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        double period = s->vk->props.limits.timestampPeriod; // ns per tick
        for (int i = 0; i < s->n_timings; i++) {
            if (s->steps[i].cpu)
                continue; // timed on the host by cc_vk_fallback_run; its queries are never written
            uint64_t *ts = &s->stamps[2 * i];
            VkResult r = vkGetQueryPoolResults(s->vk->device, s->queries, (uint32_t)(2 * i), 2,
                                               2 * sizeof(uint64_t), ts, sizeof(uint64_t),
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
            if (!cc_vk_check(r, "vkGetQueryPoolResults", err))
                return false;
            uint64_t d = ((ts[1] & mask) - (ts[0] & mask)) & mask;
            s->timings[i].ms = (double)d * period * 1e-6;
        }
    }
    return true;
}

/* The tap where the last run left it: in the arena, or in staging_out after the output. */
static void vk_tap_read(void *state, float *out)
{
    struct cc_vk_state *s = state;
    if (s->shared)
        memcpy(out, (const char *)s->arena.map + s->tap_off, s->tap_bytes);
    else
        memcpy(out, (const char *)s->staging_out.map + s->out_bytes, s->tap_bytes);
}

static int vk_layer_timings(void *state, const struct cc_layer_timing **out)
{
    struct cc_vk_state *s = state;
    if (!s->queries)
        return 0;
    *out = s->timings;
    return s->n_timings;
}

static const char *vk_device_name(void *state)
{
    struct cc_vk_state *s = state;
    return s->vk->props.deviceName;
}

static void vk_destroy(void *state)
{
    struct cc_vk_state *s = state;
    if (!s)
        return;
    if (s->vk) {
        VkDevice dev = s->vk->device;
        vkDeviceWaitIdle(dev);
        if (s->fence)
            vkDestroyFence(dev, s->fence, NULL);
        for (int i = 0; s->cmds && i < s->n_cmds; i++)
            if (s->cmds[i])
                vkFreeCommandBuffers(dev, s->vk->cmd_pool, 1, &s->cmds[i]);
        if (s->queries)
            vkDestroyQueryPool(dev, s->queries, NULL);
        if (s->pool)
            vkDestroyDescriptorPool(dev, s->pool, NULL);
        for (int i = 0; i < s->n_views; i++)
            vkDestroyBufferView(dev, s->views[i], NULL);
        for (int i = 0; i < s->n_pipelines; i++)
            vkDestroyPipeline(dev, s->pipelines[i].pipeline, NULL);
        cc_vk_buffer_finish(s->vk, &s->weights);
        cc_vk_buffer_finish(s->vk, &s->arena);
        cc_vk_buffer_finish(s->vk, &s->staging_in);
        cc_vk_buffer_finish(s->vk, &s->staging_out);
        cc_vk_buffer_finish(s->vk, &s->mirror);
        cc_kernels_destroy(s->kernels);
        cc_vk_destroy(s->vk);
    }
    if (s->plan_ok)
        cc_plan_finish(&s->plan);
    free(s->views);
    free(s->pipelines);
    free(s->steps);
    free(s->copies);
    free(s->timings);
    free(s->stamps);
    free(s->cmds);
    free(s->on_cpu);
    free(s->cpu_why);
    free(s->cpu_consts);
    free(s->cpu_scratch);
    free(s);
}

const struct cc_backend_ops cc_vulkan_backend = {
    .name = "vulkan",
    .create = vk_create,
    .run = vk_run,
    .layer_timings = vk_layer_timings,
    .device_name = vk_device_name,
    .tap_read = vk_tap_read,
    .destroy = vk_destroy,
};
