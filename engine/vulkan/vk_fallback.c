/* camclass — the Vulkan backend's per-op fallback: nodes on the CPU (see vk_fallback.h).
 *
 * Where the arena is mapped (UMA: integrated GPUs, lavapipe) the CPU op reads and writes it in
 * place; elsewhere a host mirror of the arena takes the CPU nodes' inputs at the end of the
 * segment before them and gives their outputs back at the start of the segment after them
 * (vkCmdCopyBuffer, only the tensors they touch). The load notice names each such node and
 * what it costs per run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <vulkan/vulkan.h>

#include "blis_conv.h"
#include "ref_ops.h"
#include "vk_backend.h"
#include "vk_context.h"
#include "vk_fallback.h"
#include "clock.h"

uint32_t cc_vk_fallback_ranges(const struct cc_vk_state *s, int first, int end, bool inputs,
                               VkBufferCopy *out)
{
    const struct cc_model *m = s->model;
    uint32_t n = 0;
    for (int i = first; i < end; i++) {
        const struct cc_node *node = &m->nodes[s->steps[i].node];
        for (int k = 0; inputs && k < node->n_inputs; k++) {
            int t = node->inputs[k];
            bool made_here = false;
            for (int j = first; j < i; j++)
                made_here |= m->nodes[s->steps[j].node].outputs[0] == t;
            if (cc_tensor_is_const(&m->tensors[t]) || made_here)
                continue;
            VkDeviceSize off = s->plan.offset[t];
            out[n++] = (VkBufferCopy){off, off, (VkDeviceSize)m->tensors[t].count * sizeof(float)};
        }
        if (!inputs) {
            int t = node->outputs[0];
            VkDeviceSize off = s->plan.offset[t];
            out[n++] = (VkBufferCopy){off, off, (VkDeviceSize)m->tensors[t].count * sizeof(float)};
        }
    }
    return n;
}

bool cc_vk_fallback_prepare(struct cc_vk_state *s, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    if (!s->n_cpu)
        return true;
    if (!cc_blis_conv_setup(err)) // a conv2d or linear node on the CPU runs BLIS's GEMM
        return false;
    if (!s->shared &&
        !cc_vk_buffer_init(s->vk, &s->mirror, s->plan.arena_size,
                           VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           CC_VK_MEM_STAGING, err))
        return false;
    s->host = s->shared ? s->arena.map : s->mirror.map;
    if (!s->host)
        return cc_error_set(err, "vulkan backend: no host-visible memory for the nodes that run "
                                 "on the CPU; use --backend cpu");
    size_t consts = 0, scratch = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        if (!s->on_cpu[i])
            continue;
        const struct cc_node *n = &m->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (m->tensors[n->inputs[k]].q)
                consts += (size_t)m->tensors[n->inputs[k]].count;
        const struct cc_ref_op *op = cc_ref_op_find(n->op);
        size_t need = op->scratch ? op->scratch(m, n) : 0;
        scratch = need > scratch ? need : scratch;
    }
    if ((consts && !(s->cpu_consts = malloc(consts * sizeof(float)))) ||
        (scratch && !(s->cpu_scratch = malloc(scratch * sizeof(float)))))
        return cc_error_set(err, "vulkan backend: out of memory for the nodes that run on the CPU");
    return true;
}

void cc_vk_fallback_step(struct cc_vk_state *s, struct cc_vk_step *st, size_t *used)
{
    const struct cc_model *m = s->model;
    const struct cc_node *n = &m->nodes[st->node];
    st->cpu = true;
    st->cpu_op = cc_ref_op_find(n->op);
    for (int k = 0; k < n->n_inputs; k++) {
        const struct cc_tensor *t = &m->tensors[n->inputs[k]];
        if (t->q) {
            float *f = s->cpu_consts + *used;
            cc_tensor_dequantize(t, f);
            *used += (size_t)t->count;
            st->in[k] = f;
        } else if (cc_tensor_is_const(t)) {
            st->in[k] = t->data;
        } else {
            st->in[k] = (const float *)(s->host + s->plan.offset[n->inputs[k]]);
        }
    }
    st->out = (float *)(s->host + s->plan.offset[n->outputs[0]]);
}

bool cc_vk_fallback_run(struct cc_vk_state *s, double *cpu_ms, struct cc_error *err)
{
    *cpu_ms = 0;
    int i = 0;
    for (int seg = 0; seg < s->n_cmds; seg++) {
        if (!cc_vk_submit_wait(s->vk, s->cmds[seg], s->fence, err))
            return false;
        while (i < s->n_steps && !s->steps[i].cpu)
            i++;
        for (; i < s->n_steps && s->steps[i].cpu; i++) {
            const struct cc_vk_step *st = &s->steps[i];
            double t0 = cc_now_ms();
            st->cpu_op->run(s->model, &s->model->nodes[st->node], st->in, st->out,
                            (struct cc_ref_part){.p = 0, .n_parts = 1, .scratch = s->cpu_scratch});
            double ms = cc_now_ms() - t0;
            *cpu_ms += ms;
            if (s->timings)
                s->timings[i].ms = ms;
        }
    }
    return true;
}

/* The load notice: which nodes run on the CPU, why, and what they cost per run. */
static void cpu_notice(const struct cc_vk_state *s, FILE *out, double cpu_ms, double total_ms)
{
    const struct cc_model *m = s->model;
    fprintf(out, "camclass: vulkan backend: %d node%s run%s on the CPU between Vulkan segments:",
            s->n_cpu, s->n_cpu == 1 ? "" : "s", s->n_cpu == 1 ? "s" : "");
    int named = 0;
    for (int i = 0; i < m->n_nodes && named < 3; i++) {
        if (!s->on_cpu[i])
            continue;
        fprintf(out, "%s %s", named ? ";" : "", s->cpu_why[i]);
        named++;
    }
    if (s->n_cpu > named)
        fprintf(out, "; and %d more", s->n_cpu - named);
    size_t bytes = 0;
    if (!s->shared)
        for (int i = 0; i < s->n_steps; i++)
            if (s->steps[i].cpu) {
                const struct cc_node *n = &m->nodes[s->steps[i].node];
                bytes += (size_t)m->tensors[n->outputs[0]].count * sizeof(float);
                for (int k = 0; k < n->n_inputs; k++)
                    if (!cc_tensor_is_const(&m->tensors[n->inputs[k]]))
                        bytes += (size_t)m->tensors[n->inputs[k]].count * sizeof(float);
            }
    fprintf(out, ". A run of %.2f ms spends %.2f ms in them, with %d more Vulkan submission%s",
            total_ms, cpu_ms, s->n_cmds - 1, s->n_cmds == 2 ? "" : "s");
    if (bytes)
        fprintf(out, " and up to %.2f MB copied between the device and the host", bytes / 1e6);
    fprintf(out, "\n");
}

bool cc_vk_fallback_measure(struct cc_vk_state *s, FILE *notices, struct cc_error *err)
{
    if (s->n_cpu) {
        double cpu_ms = 0, total_ms = 0;
        double t0 = cc_now_ms();
        if (!cc_vk_fallback_run(s, &cpu_ms, err))
            return false;
        total_ms = cc_now_ms() - t0;
        if (notices)
            cpu_notice(s, notices, cpu_ms, total_ms);
    }
    return true;
}
