/* camclass — Vulkan backend: per-node kernel choice and weight repacking (see vk_nodes.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vk_nodes.h"

/* What the setup functions read: the model and the plan's offsets. */
struct setup_ctx {
    const struct cc_model *model;
    const size_t *offset; // (model->n_tensors) bytes in the arena
    uint32_t subgroup;    // the device's subgroup size
};

/* ---------------------------------------------------------------------------------------- */
/* Weight packing: one host array, each blob at an aligned offset                             */

void cc_vk_weights_finish(struct cc_vk_weights *w)
{
    free(w->data);
    memset(w, 0, sizeof(*w));
}

uint32_t cc_vk_texel_bytes(VkFormat format)
{
    switch (format) {
    case VK_FORMAT_R8_SINT:
        return 1;
    case VK_FORMAT_R32G32B32A32_SFLOAT:
        return 16;
    default: // VK_FORMAT_R32_SFLOAT, VK_FORMAT_R8G8B8A8_SINT
        return 4;
    }
}

/* Reserves count zeroed floats at an aligned offset; returns a pointer to them (and the byte
 * offset in *off), NULL when out of memory. The pointer is valid until the next call. */
static float *weights_reserve(struct cc_vk_weights *w, size_t count, size_t *off)
{
    size_t start = (w->n + w->align_floats - 1) / w->align_floats * w->align_floats;
    size_t end = start + (count ? count : 4);
    if (end > w->cap) {
        size_t cap = w->cap ? w->cap : 1 << 16;
        while (cap < end)
            cap *= 2;
        float *d = realloc(w->data, cap * sizeof(float));
        if (!d)
            return NULL;
        memset(d + w->cap, 0, (cap - w->cap) * sizeof(float));
        w->data = d;
        w->cap = cap;
    }
    w->n = end;
    *off = start * sizeof(float);
    return w->data + start;
}

/* Reserves bytes zeroed bytes (int8 weights) the same way; NULL when out of memory. */
static int8_t *weights_reserve_bytes(struct cc_vk_weights *w, size_t bytes, size_t *off)
{
    return (int8_t *)weights_reserve(w, (bytes + 3) / 4, off);
}

/* ---------------------------------------------------------------------------------------- */
/* Per-node kernel choice                                                                    */

#define F32 VK_FORMAT_R32_SFLOAT
#define F32X4 VK_FORMAT_R32G32B32A32_SFLOAT
#define I8 VK_FORMAT_R8_SINT
#define I8X4 VK_FORMAT_R8G8B8A8_SINT

/* The WEIGHTS_I8 row of a kernel that reads weights (kernels.h): same shader, built with
 * -DWEIGHTS_I8, one more binding (the scales). */
static enum cc_kernel i8_row(enum cc_kernel k)
{
    switch (k) {
    case CC_KERNEL_CONV2D:
        return CC_KERNEL_CONV2D_I8;
    case CC_KERNEL_CONV2D_OC4:
        return CC_KERNEL_CONV2D_OC4_I8;
    case CC_KERNEL_CONV2D_PW:
        return CC_KERNEL_CONV2D_PW_I8;
    case CC_KERNEL_CONV2D_PW_VEC4:
        return CC_KERNEL_CONV2D_PW_VEC4_I8;
    default:
        return CC_KERNEL_LINEAR_I8;
    }
}

/* Global average pools over more values than this per channel use a workgroup per channel
 * (global_avg_pool.comp's GROUP); the zoo's last maps (7x7, 14x14 at 448) stay serial. */
#define GAP_SERIAL_MAX 4096

/* Smallest power of two ≥ n, within [8, 64]: small layers do not waste a 64-wide group. */
static uint32_t local_for(int64_t n)
{
    uint32_t l = 8;
    while (l < 64 && (int64_t)l < n)
        l *= 2;
    return l;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static struct cc_vk_binding arena_src(const struct setup_ctx *s, int t, bool vec4)
{
    const struct cc_tensor *ten = &s->model->tensors[t];
    return (struct cc_vk_binding){
        .off = s->offset[t],
        .bytes = (VkDeviceSize)ten->count * sizeof(float),
        .format = vec4 ? F32X4 : F32,
        .what = ten->name,
    };
}

/* count values of format's components (4 per texel for the x4 formats) at byte offset off. */
static struct cc_vk_binding weight_src(size_t off, size_t count, VkFormat format, const char *what)
{
    size_t elem = format == I8 || format == I8X4 ? 1 : sizeof(float);
    return (struct cc_vk_binding){
        .weights = true,
        .off = off,
        .bytes = count * elem,
        .format = format,
        .what = what,
    };
}

/* Packs weight tensor wt, seen as (rows, K), into the weights array: row r goes to texel
 * component ((r / 4) * K + k) * 4 + r % 4 when by4 (4 consecutive rows per vec4 texel; rows
 * padded with zeros up to rows_p, a multiple of 4), else to r * Kp + k (Kp >= K, zero padded).
 * f32 weights as floats; i8 weights as int8 (values only; the scales go with the bias).
 * Returns the binding, or .what = NULL when out of memory. */
static struct cc_vk_binding pack_weights(struct cc_vk_weights *w, const struct cc_tensor *wt,
                                         int64_t rows_p, int64_t K, int64_t Kp, bool by4)
{
    int64_t rows = wt->shape[0], n = by4 ? rows_p * K : rows * Kp;
    bool i8 = wt->dtype == CC_DTYPE_I8;
    size_t off;
    void *p = i8 ? (void *)weights_reserve_bytes(w, (size_t)n, &off)
                 : (void *)weights_reserve(w, (size_t)n, &off);
    if (!p)
        return (struct cc_vk_binding){.what = NULL};
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t k = 0; k < K; k++) {
            int64_t dst = by4 ? ((r / 4) * K + k) * 4 + r % 4 : r * Kp + k;
            if (i8)
                ((int8_t *)p)[dst] = wt->q[r * K + k];
            else
                ((float *)p)[dst] = wt->data[r * K + k];
        }
    }
    return weight_src(off, (size_t)n, i8 ? (by4 ? I8X4 : I8) : (by4 ? F32X4 : F32), wt->name);
}

/* Packs n_p floats (n of them from src, the rest zero) as a vec4 or scalar texel binding:
 * a bias (src NULL: zeros) or the scales of i8 weights. */
static struct cc_vk_binding pack_floats(struct cc_vk_weights *w, const float *src, int64_t n,
                                        int64_t n_p, bool vec4, const char *what)
{
    size_t off;
    float *p = weights_reserve(w, (size_t)n_p, &off);
    if (!p)
        return (struct cc_vk_binding){.what = NULL};
    if (src)
        memcpy(p, src, (size_t)n * sizeof(float));
    return weight_src(off, (size_t)n_p, vec4 ? F32X4 : F32, what);
}

/* Binds the bias (slot 2) and, for i8 weights, the scales (slot 4) of node n: n_p values,
 * the first O real. */
static bool bind_bias_scales(struct cc_vk_weights *w, const struct cc_model *m,
                             const struct cc_node *n, int64_t O, int64_t n_p, bool vec4,
                             struct cc_vk_node *ns, struct cc_error *err)
{
    const struct cc_tensor *wt = &m->tensors[n->inputs[1]];
    const struct cc_tensor *b = n->n_inputs > 2 ? &m->tensors[n->inputs[2]] : NULL;
    ns->bind[2] = pack_floats(w, b ? b->data : NULL, O, n_p, vec4, b ? b->name : "bias");
    if (wt->dtype == CC_DTYPE_I8)
        ns->bind[4] = pack_floats(w, wt->scales, O, n_p, vec4, wt->name);
    if (!ns->bind[2].what || (wt->dtype == CC_DTYPE_I8 && !ns->bind[4].what))
        return cc_error_set(err, "out of memory");
    return true;
}

/* Register tile of a pointwise conv: ob output channels × pb pixels per invocation. A bigger
 * tile needs fewer loads per multiply-add ((ob + pb) / (ob * pb)), but pads O up to a multiple
 * of ob and HW up to a multiple of pb with wasted work; the estimate weighs both (the load
 * weight 2 was fitted to lavapipe timings of 8x8, 16x8 and 8x16 tiles on mobilenet_v2's
 * pointwise layers). */
static void pointwise_tile(int64_t O, int64_t HW, int64_t *ob, int64_t *pb)
{
    static const int tiles[][2] = {{8, 8}, {16, 8}, {8, 16}}; // {ob, pb}, first wins ties
    double best = 0;
    for (size_t i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
        int64_t o = tiles[i][0], p = tiles[i][1];
        double padded = (double)(ceil_div(O, o) * o) * (double)(ceil_div(HW, p) * p);
        double cost = padded * (1.0 + 2.0 * (double)(o + p) / (double)(o * p));
        if (i == 0 || cost < best) {
            best = cost;
            *ob = o;
            *pb = p;
        }
    }
}

/* Output columns per invocation of the general conv2d kernel: 16 where a row has more than 8
 * and the stride is 1 (neighbouring outputs share more of their input, and one vec4 load row
 * covers them: single depthwise layers ran 10-30% faster on lavapipe), otherwise 8. Tiles of
 * 4 channels stay at 8 (16 × 4 accumulators spill), and so do rows whose taps would not fit
 * in the shader's 8 quads (see conv2d.comp). */
static int64_t conv_columns(bool oc4, int64_t W, int64_t WO, int64_t KW,
                            const struct cc_conv2d_attrs *a)
{
    const int64_t px = 16;
    int64_t seg = (px - 1) * a->stride[1] + (KW - 1) * a->dilation[1] + 1;
    int64_t off = (4 - a->pad[1] % 4) % 4;
    bool fits = W % 4 != 0 || (off + seg + 3) / 4 <= 8;
    return !oc4 && a->stride[1] == 1 && WO > 8 && fits ? px : 8;
}

/* A 1x1, stride 1, unpadded, ungrouped conv: the pointwise kernel, register-tiled. */
static bool setup_pointwise(const struct setup_ctx *s, const struct cc_node *n,
                            struct cc_vk_weights *w, struct cc_vk_node *ns, struct cc_error *err)
{
    const struct cc_tensor *x = &s->model->tensors[n->inputs[0]];
    const struct cc_tensor *wt = &s->model->tensors[n->inputs[1]];
    const struct cc_tensor *y = &s->model->tensors[n->outputs[0]];
    int64_t C = x->shape[1], H = x->shape[2], W = x->shape[3], O = y->shape[1];
    bool vec4 = (H * W) % 4 == 0;
    int64_t ob, pb;
    pointwise_tile(O, H * W, &ob, &pb);
    int64_t Op = ceil_div(O, ob) * ob;
    ns->kernel = vec4 ? CC_KERNEL_CONV2D_PW_VEC4 : CC_KERNEL_CONV2D_PW;
    uint32_t spec[] = {(uint32_t)C,
                       (uint32_t)(H * W),
                       (uint32_t)O,
                       cc_kernel_spec_float(n->act.min),
                       cc_kernel_spec_float(n->act.max),
                       (uint32_t)ob,
                       (uint32_t)pb,
                       0,
                       (uint32_t)n->act.kind};
    memcpy(ns->spec, spec, sizeof(spec));
    /* Weights (O, C) -> vec4 texels (O4, C) of 4 consecutive output channels. */
    ns->bind[1] = pack_weights(w, wt, Op, C, C, true);
    if (!ns->bind[1].what || !bind_bias_scales(w, s->model, n, O, Op, true, ns, err))
        return cc_error_set(err, "out of memory");
    ns->bind[0] = arena_src(s, n->inputs[0], vec4);
    /* Pixel blocks along x and channel blocks along y, unless the pixel blocks would leave
     * a subgroup part-empty in every channel block: then both share x (FLAT). */
    int64_t npb = ceil_div(H * W, pb), nob = Op / ob;
    if (npb % s->subgroup != 0) {
        ns->spec[7] = 1;
        ns->local[0] = local_for(npb * nob);
        ns->groups[0] = ceil_div(npb * nob, ns->local[0]);
    } else {
        ns->local[0] = local_for(npb);
        ns->groups[0] = ceil_div(npb, ns->local[0]);
        ns->groups[1] = nob;
    }
    return true;
}

/* Any other conv (depthwise, strided, padded, grouped, KxK): the general kernel. */
static bool setup_general_conv(const struct setup_ctx *s, const struct cc_node *n,
                               struct cc_vk_weights *w, struct cc_vk_node *ns, struct cc_error *err)
{
    const struct cc_tensor *x = &s->model->tensors[n->inputs[0]];
    const struct cc_tensor *wt = &s->model->tensors[n->inputs[1]];
    const struct cc_tensor *y = &s->model->tensors[n->outputs[0]];
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    int64_t C = x->shape[1], H = x->shape[2], W = x->shape[3];
    int64_t O = y->shape[1], HO = y->shape[2], WO = y->shape[3];
    int64_t KH = wt->shape[2], KW = wt->shape[3];
    /* Four output channels per invocation share every input load, when they are in one
     * group; otherwise (depthwise) one channel per invocation. */
    bool oc4 = (O / a->groups) % 4 == 0;
    ns->kernel = oc4 ? CC_KERNEL_CONV2D_OC4 : CC_KERNEL_CONV2D;
    const struct cc_kernel_info *row = &cc_kernel_table[ns->kernel];
    int64_t K = wt->count / O; // (C/groups) * KH * KW
    int64_t px = conv_columns(oc4, W, WO, KW, a);
    uint32_t spec[] = {(uint32_t)C,
                       (uint32_t)H,
                       (uint32_t)W,
                       (uint32_t)O,
                       (uint32_t)HO,
                       (uint32_t)WO,
                       (uint32_t)KH,
                       (uint32_t)KW,
                       (uint32_t)a->stride[0],
                       (uint32_t)a->stride[1],
                       (uint32_t)a->dilation[0],
                       (uint32_t)a->dilation[1],
                       (uint32_t)a->pad[0],
                       (uint32_t)a->pad[1],
                       (uint32_t)a->groups,
                       cc_kernel_spec_float(n->act.min),
                       cc_kernel_spec_float(n->act.max),
                       (uint32_t)px,
                       (uint32_t)n->act.kind};
    memcpy(ns->spec, spec, sizeof(spec));
    // oc4: (O, K) -> vec4 texels (O/4, K) of 4 consecutive output channels; else as is.
    ns->bind[1] = pack_weights(w, wt, O, K, K, oc4);
    if (!ns->bind[1].what || !bind_bias_scales(w, s->model, n, O, O, oc4, ns, err))
        return cc_error_set(err, "out of memory");
    ns->bind[0] = arena_src(s, n->inputs[0], W % 4 == 0); // rows read as vec4s
    int64_t nx = HO * ceil_div(WO, px);
    ns->local[0] = local_for(nx);
    ns->groups[0] = ceil_div(nx, ns->local[0]);
    ns->groups[1] = O / row->block[1];
    return true;
}

static bool setup_conv(const struct setup_ctx *s, const struct cc_node *n, struct cc_vk_weights *w,
                       struct cc_vk_node *ns, struct cc_error *err)
{
    const struct cc_tensor *wt = &s->model->tensors[n->inputs[1]];
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    bool pointwise = wt->shape[2] == 1 && wt->shape[3] == 1 && a->stride[0] == 1 &&
                     a->stride[1] == 1 && a->pad[0] == 0 && a->pad[1] == 0 && a->pad[2] == 0 &&
                     a->pad[3] == 0 && a->groups == 1;
    if (!(pointwise ? setup_pointwise(s, n, w, ns, err) : setup_general_conv(s, n, w, ns, err)))
        return false;
    if (wt->dtype == CC_DTYPE_I8)
        ns->kernel = i8_row(ns->kernel);
    ns->bind[3] = arena_src(s, n->outputs[0], false);
    return true;
}

static bool setup_linear(const struct setup_ctx *s, const struct cc_node *n,
                         struct cc_vk_weights *w, struct cc_vk_node *ns, struct cc_error *err)
{
    const struct cc_tensor *x = &s->model->tensors[n->inputs[0]];
    const struct cc_tensor *wt = &s->model->tensors[n->inputs[1]];
    int64_t K = x->count, N = wt->shape[0], K4 = ceil_div(K, 4);
    ns->kernel = wt->dtype == CC_DTYPE_I8 ? CC_KERNEL_LINEAR_I8 : CC_KERNEL_LINEAR;
    uint32_t spec[] = {(uint32_t)K, (uint32_t)N, cc_kernel_spec_float(n->act.min),
                       cc_kernel_spec_float(n->act.max), (uint32_t)n->act.kind};
    memcpy(ns->spec, spec, sizeof(spec));
    /* (N, K) -> (N, K4*4), zero padded, read as vec4 texels. */
    ns->bind[1] = pack_weights(w, wt, N, K, K4 * 4, false);
    if (!ns->bind[1].what || !bind_bias_scales(w, s->model, n, N, N, false, ns, err))
        return cc_error_set(err, "out of memory");
    ns->bind[1].format = wt->dtype == CC_DTYPE_I8 ? I8X4 : F32X4; // 4 values per texel
    ns->bind[0] = arena_src(s, n->inputs[0], false);
    ns->bind[3] = arena_src(s, n->outputs[0], false);
    ns->local[0] = local_for(N);
    ns->groups[0] = ceil_div(N, ns->local[0]);
    return true;
}

/* add, mul, clamp: eltwise.comp with the fused activation; 4 elements per invocation, as vec4
 * texels, when the count allows. mul's second operand may be a [1,C,1,1] scale: one value per
 * B_EVERY = H*W elements, bound as scalars. */
static void setup_eltwise(const struct setup_ctx *s, const struct cc_node *n, struct cc_vk_node *ns)
{
    const struct cc_tensor *x = &s->model->tensors[n->inputs[0]];
    bool two = n->op != CC_OP_CLAMP;
    ns->kernel = n->op == CC_OP_ADD   ? CC_KERNEL_ADD
                 : n->op == CC_OP_MUL ? CC_KERNEL_MUL
                                      : CC_KERNEL_CLAMP;
    uint32_t spec[] = {(uint32_t)x->count, cc_kernel_spec_float(n->act.min),
                       cc_kernel_spec_float(n->act.max), (uint32_t)n->act.kind};
    memcpy(ns->spec, spec, sizeof(spec));
    int64_t every = two ? x->count / s->model->tensors[n->inputs[1]].count : 1;
    if (n->op == CC_OP_MUL)
        ns->spec[4] = (uint32_t)every; // B_EVERY
    bool v4 = x->count % 4 == 0;
    ns->bind[0] = arena_src(s, n->inputs[0], v4);
    if (two)
        ns->bind[1] = arena_src(s, n->inputs[1], v4 && every == 1);
    ns->bind[two ? 2 : 1] = arena_src(s, n->outputs[0], false);
    ns->groups[0] = ceil_div(v4 ? x->count / 4 : x->count, 64);
}

/* max_pool2d, avg_pool2d: pool2d.comp. The output size (ceil_mode) is the output tensor's,
 * checked by finalize against cc_pool_out_size. 4 outputs of a row per invocation share each
 * row of loaded taps when the row has 4 and the taps fit a small unrolled array (every zoo
 * pool: 3x3 and 2x2, strides 1 and 2); otherwise one output per invocation. */
static void setup_pool(const struct setup_ctx *s, const struct cc_node *n, struct cc_vk_node *ns)
{
    const struct cc_tensor *x = &s->model->tensors[n->inputs[0]];
    const struct cc_tensor *y = &s->model->tensors[n->outputs[0]];
    const struct cc_pool_attrs *a = &n->attrs.pool;
    ns->kernel = n->op == CC_OP_MAX_POOL2D ? CC_KERNEL_MAX_POOL2D : CC_KERNEL_AVG_POOL2D;
    int64_t wo = y->shape[3], px = wo >= 4 && 3 * a->stride[1] + a->kernel[1] <= 16 ? 4 : 1;
    uint32_t spec[] = {(uint32_t)x->shape[1],
                       (uint32_t)x->shape[2],
                       (uint32_t)x->shape[3],
                       (uint32_t)y->shape[2],
                       (uint32_t)wo,
                       (uint32_t)a->kernel[0],
                       (uint32_t)a->kernel[1],
                       (uint32_t)a->stride[0],
                       (uint32_t)a->stride[1],
                       (uint32_t)a->pad[0],
                       (uint32_t)a->pad[1],
                       (uint32_t)a->pad[2],
                       (uint32_t)a->pad[3],
                       (uint32_t)a->count_include_pad,
                       (uint32_t)px};
    memcpy(ns->spec, spec, sizeof(spec));
    ns->bind[0] = arena_src(s, n->inputs[0], false);
    ns->bind[1] = arena_src(s, n->outputs[0], false);
    ns->groups[0] = ceil_div(y->count / wo * ceil_div(wo, px), 64);
}

/* The ops that move whole blocks: activations are NCHW with batch 1, so a channel range is
 * one contiguous range of floats. concat: input i lands after inputs 0..i-1; slice: channels
 * [start, end) are one range of the input; reshape/flatten: the whole tensor, unless the plan
 * aliased it (the usual case: nothing to do). Recorded as copy commands, no kernel. */
static void setup_copies(const struct setup_ctx *s, const struct cc_node *n, struct cc_vk_node *ns)
{
    const struct cc_tensor *y = &s->model->tensors[n->outputs[0]];
    VkDeviceSize dst = s->offset[n->outputs[0]];
    ns->kernel = CC_KERNEL_COUNT;
    if (n->op == CC_OP_CONCAT) {
        for (int i = 0; i < n->n_inputs; i++) {
            VkDeviceSize bytes =
                (VkDeviceSize)s->model->tensors[n->inputs[i]].count * sizeof(float);
            ns->copies[ns->n_copies++] = (VkBufferCopy){
                .srcOffset = s->offset[n->inputs[i]], .dstOffset = dst, .size = bytes};
            dst += bytes;
        }
        return;
    }
    VkDeviceSize src = s->offset[n->inputs[0]];
    if (n->op == CC_OP_SLICE)
        src += (VkDeviceSize)n->attrs.slice.start * (VkDeviceSize)(y->count / y->shape[1]) *
               sizeof(float);
    if (src != dst)
        ns->copies[ns->n_copies++] = (VkBufferCopy){
            .srcOffset = src, .dstOffset = dst, .size = (VkDeviceSize)y->count * sizeof(float)};
}

/* What finalize allows but these kernels cannot run: an op without a kernel row; an
 * activation kind shaders/act.glsl does not know; conv2d/linear weights or bias that are not
 * constants (they are repacked at upload); a constant where a kernel reads an activation
 * (kernels read inputs from the arena, where constants have no place). */
bool cc_vk_node_supported(const struct cc_model *model, int i, struct cc_error *why)
{
    const struct cc_node *n = &model->nodes[i];
    switch (n->op) {
    case CC_OP_CONV2D:
    case CC_OP_LINEAR:
    case CC_OP_ADD:
    case CC_OP_MUL:
    case CC_OP_CLAMP:
    case CC_OP_GLOBAL_AVG_POOL:
    case CC_OP_MAX_POOL2D:
    case CC_OP_AVG_POOL2D:
    case CC_OP_CHANNEL_SHUFFLE:
    case CC_OP_SOFTMAX:
    case CC_OP_FLATTEN:
    case CC_OP_RESHAPE:
    case CC_OP_CONCAT:
    case CC_OP_SLICE:
        break;
    default:
        return cc_error_set(why, "op %s (node \"%s\") has no Vulkan kernel", cc_op_name(n->op),
                            n->name);
    }
    // act.glsl has one branch per kind: a new kind needs its branch there first.
    _Static_assert(CC_ACT_KIND_COUNT == 5, "shaders/act.glsl knows 5 activation kinds");
    if ((unsigned)n->act.kind >= CC_ACT_KIND_COUNT)
        return cc_error_set(why, "activation kind %d of node \"%s\" (%s) has no Vulkan kernel",
                            (int)n->act.kind, n->name, cc_op_name(n->op));
    bool weights = n->op == CC_OP_CONV2D || n->op == CC_OP_LINEAR; // inputs 1, 2 constant
    for (int k = 0; k < n->n_inputs; k++) {
        const struct cc_tensor *t = &model->tensors[n->inputs[k]];
        bool want_const = weights && k > 0;
        if (cc_tensor_is_const(t) != want_const)
            return cc_error_set(why,
                                "input \"%s\" of node \"%s\" (%s) is %s, where the Vulkan "
                                "kernel reads %s",
                                t->name, n->name, cc_op_name(n->op),
                                want_const ? "computed" : "a constant",
                                want_const ? "constant weights" : "a computed tensor");
    }
    return true;
}

bool cc_vk_node_setup(const struct cc_model *model, const size_t *offset, uint32_t subgroup, int i,
                      struct cc_vk_weights *w, struct cc_vk_node *ns, struct cc_error *err)
{
    const struct setup_ctx ctx = {model, offset, subgroup}, *s = &ctx;
    const struct cc_node *n = &s->model->nodes[i];
    const struct cc_tensor *x = &s->model->tensors[n->inputs[0]];
    memset(ns, 0, sizeof(*ns));
    struct cc_error why = {0};
    if (!cc_vk_node_supported(model, i, &why))
        return cc_error_set(err, "vulkan backend: %s; --backend cpu may run it", why.msg);
    ns->local[0] = 64;
    ns->local[1] = ns->local[2] = 1;
    ns->groups[0] = ns->groups[1] = ns->groups[2] = 1;
    switch (n->op) {
    case CC_OP_CONV2D:
        return setup_conv(s, n, w, ns, err);
    case CC_OP_LINEAR:
        return setup_linear(s, n, w, ns, err);
    case CC_OP_ADD:
    case CC_OP_MUL:
    case CC_OP_CLAMP:
        setup_eltwise(s, n, ns);
        return true;
    case CC_OP_GLOBAL_AVG_POOL: {
        ns->kernel = CC_KERNEL_GLOBAL_AVG_POOL;
        int64_t C = x->shape[1], HW = x->shape[2] * x->shape[3];
        ns->spec[0] = (uint32_t)C;
        ns->spec[1] = (uint32_t)HW;
        ns->bind[0] = arena_src(s, n->inputs[0], false);
        ns->bind[1] = arena_src(s, n->outputs[0], false);
        if (HW > GAP_SERIAL_MAX) { // a workgroup of 64 per channel (GROUP)
            ns->spec[2] = 1;
            ns->groups[0] = C;
        } else {
            ns->local[0] = local_for(C);
            ns->groups[0] = ceil_div(C, ns->local[0]);
        }
        return true;
    }
    case CC_OP_MAX_POOL2D:
    case CC_OP_AVG_POOL2D:
        setup_pool(s, n, ns);
        return true;
    case CC_OP_CHANNEL_SHUFFLE: {
        ns->kernel = CC_KERNEL_CHANNEL_SHUFFLE;
        int64_t C = x->shape[1], hw = x->count / C;
        bool v4 = hw % 4 == 0;
        ns->spec[0] = (uint32_t)C;
        ns->spec[1] = (uint32_t)hw;
        ns->spec[2] = (uint32_t)n->attrs.shuffle.groups;
        ns->bind[0] = arena_src(s, n->inputs[0], v4);
        ns->bind[1] = arena_src(s, n->outputs[0], false);
        ns->groups[0] = ceil_div(v4 ? x->count / 4 : x->count, 64);
        return true;
    }
    case CC_OP_SOFTMAX:
        ns->kernel = CC_KERNEL_SOFTMAX;
        ns->spec[0] = (uint32_t)x->count;
        ns->bind[0] = arena_src(s, n->inputs[0], false);
        ns->bind[1] = arena_src(s, n->outputs[0], false);
        return true;
    case CC_OP_FLATTEN:
    case CC_OP_RESHAPE:
    case CC_OP_CONCAT:
    case CC_OP_SLICE:
        setup_copies(s, n, ns);
        return true;
    default:
        return cc_error_set(err,
                            "vulkan backend: op %s (node \"%s\") is not supported; --backend "
                            "cpu or ref may run it",
                            cc_op_name(n->op), n->name);
    }
}

bool cc_vk_node_fits(const struct cc_model *model, const VkPhysicalDeviceLimits *l, int i,
                     const struct cc_vk_node *ns, struct cc_error *why)
{
    const struct cc_node *n = &model->nodes[i];
    if (ns->kernel == CC_KERNEL_COUNT)
        return true;
    const struct cc_kernel_info *row = &cc_kernel_table[ns->kernel];
#define TOO_MUCH(what, have, limit)                                                                \
    cc_error_set(why, "node \"%s\" (%s) needs " what ", more than this device's %s (%llu)",        \
                 n->name, cc_op_name(n->op), (unsigned long long)(have), #limit,                   \
                 (unsigned long long)(l->limit))
    uint32_t texel = 0, storage = 0;
    for (int b = 0; b < row->n_bindings; b++) {
        const struct cc_vk_binding *src = &ns->bind[b];
        if (row->bindings[b] == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER) {
            texel++;
            uint64_t elems = src->bytes / cc_vk_texel_bytes(src->format);
            if (elems > l->maxTexelBufferElements)
                return TOO_MUCH("a texel view of %llu elements", elems, maxTexelBufferElements);
        } else {
            storage++;
            if (src->bytes > l->maxStorageBufferRange)
                return TOO_MUCH("a storage range of %llu bytes", src->bytes, maxStorageBufferRange);
        }
    }
    if (texel > l->maxPerStageDescriptorSampledImages)
        return TOO_MUCH("%llu uniform texel buffers", texel, maxPerStageDescriptorSampledImages);
    if (storage > l->maxPerStageDescriptorStorageBuffers)
        return TOO_MUCH("%llu storage buffers", storage, maxPerStageDescriptorStorageBuffers);
    if (texel + storage > l->maxPerStageResources)
        return TOO_MUCH("%llu descriptors", texel + storage, maxPerStageResources);
    if (row->push_size > l->maxPushConstantsSize)
        return TOO_MUCH("%llu push-constant bytes", row->push_size, maxPushConstantsSize);
    uint64_t invocations = (uint64_t)ns->local[0] * ns->local[1] * ns->local[2];
    if (invocations > l->maxComputeWorkGroupInvocations)
        return TOO_MUCH("%llu invocations per workgroup", invocations,
                        maxComputeWorkGroupInvocations);
    for (int d = 0; d < 3; d++) {
        if (ns->local[d] > l->maxComputeWorkGroupSize[d])
            return TOO_MUCH("workgroups %llu invocations wide", ns->local[d],
                            maxComputeWorkGroupSize[d]);
        if (ns->groups[d] > (int64_t)l->maxComputeWorkGroupCount[d])
            return TOO_MUCH("%llu workgroups along one axis", ns->groups[d],
                            maxComputeWorkGroupCount[d]);
    }
    // softmax.comp and global_avg_pool.comp reduce through one float of shared memory per
    // invocation (a shared array is sized by the workgroup, used or not)
    bool reduces = ns->kernel == CC_KERNEL_SOFTMAX || ns->kernel == CC_KERNEL_GLOBAL_AVG_POOL;
    uint64_t shared = reduces ? invocations * sizeof(float) : 0;
    if (shared > l->maxComputeSharedMemorySize)
        return TOO_MUCH("%llu bytes of shared memory", shared, maxComputeSharedMemorySize);
#undef TOO_MUCH
    return true;
}
