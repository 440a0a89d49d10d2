/* camclass — the CPU backend's builds for the zoo's ops (see xnn_build_zoo.h).
 *
 * Activations are NHWC here: a pixel's channels are contiguous, so the channel ops (concat,
 * slice, shuffle) are strided copies over pixels, and mul by a [1,C,1,1] tensor is a
 * broadcast of one row of C values over every pixel.
 */
#include <math.h>
#include <stdlib.h>

#include "xnn_build_zoo.h"

#define TENSOR(b, i) (&(b)->model->tensors[(b)->node->inputs[i]])
#define OUTPUT(b) (&(b)->model->tensors[(b)->node->outputs[0]])

/* Pixels of a [1,C,H,W] or [1,C] tensor: the rows of C values the copies run over. */
static size_t pixels(const struct cc_tensor *t)
{
    return (size_t)(t->count / t->shape[1]);
}

/* ------------------------------------------------------------------------------------------
 * Pooling
 *
 * XNNPACK's pooling against PyTorch's (read in XNNPACK's sources at Debian's snapshot):
 *   - max: XNNPACK clamps each tap to the input's border, which for a maximum is the same as
 *     leaving padding out. Every PyTorch window holds at least one input pixel (padding is at
 *     most half the kernel, a ceil_mode window starts inside the input), so max pooling is
 *     exact with any padding.
 *   - avg: without padding XNNPACK divides by the window size; with any padding, each output
 *     by the input pixels its window covers ("pixelwise" average pooling): PyTorch's
 *     count_include_pad=False. count_include_pad=True is the same where nothing is padded
 *     explicitly (the window clipped to the padded input is then the window clipped to the
 *     input), and different otherwise.
 *   - ceil_mode: XNNPACK's output size is floor((in + pads - kernel) / stride) + 1; ceil_mode's
 *     last window comes from padding the bottom/right edge further. Those pixels count as
 *     -inf for max and are left out of avg's divisor, as in PyTorch (count_include_pad counts
 *     only the declared padding).
 *   - XNNPACK refuses 1x1 windows ("1x1 pooling is meaningless").
 * What XNNPACK cannot express (avg with count_include_pad and declared padding, 1x1 windows)
 * runs as a C loop over output rows with the reference's arithmetic (ref_ops.c).
 */

/* The arguments of the C pooling loop. */
struct pool_loop {
    const float *x;      // (n, h, w, c) NHWC; not owned
    float *y;            // (n, ho, wo, c) NHWC; not owned
    int c, h, w, ho, wo; // n: the batch (1 but in a batch state), rows of all images / ho
    struct cc_pool_attrs a;
    bool max;
};

/* Output rows [r0, r0 + rows) of a pool, counted over the images of the batch (row r is row
 * r % ho of image r / ho), as cc_cpu_pool2d computes them but over NHWC: the channels of a
 * pixel are the inner loop. */
static void pool_rows(void *ctx, size_t r0, size_t rows)
{
    const struct pool_loop *l = ctx;
    const struct cc_pool_attrs *a = &l->a;
    size_t c = (size_t)l->c;
    for (size_t r = r0; r < r0 + rows; r++) {
        size_t img = r / (size_t)l->ho;
        int oy = (int)(r % (size_t)l->ho);
        const float *xi = l->x + img * (size_t)l->h * (size_t)l->w * c;
        float *yi = l->y + img * (size_t)l->ho * (size_t)l->wo * c;
        // The window, clipped to the padded input (what count_include_pad counts), then to the
        // input itself (what is read).
        int hs = oy * a->stride[0] - a->pad[0];
        int he = hs + a->kernel[0] < l->h + a->pad[2] ? hs + a->kernel[0] : l->h + a->pad[2];
        int hs0 = hs > 0 ? hs : 0, he0 = he < l->h ? he : l->h;
        for (int ox = 0; ox < l->wo; ox++) {
            int ws = ox * a->stride[1] - a->pad[1];
            int we = ws + a->kernel[1] < l->w + a->pad[3] ? ws + a->kernel[1] : l->w + a->pad[3];
            int ws0 = ws > 0 ? ws : 0, we0 = we < l->w ? we : l->w;
            float *y = yi + ((size_t)oy * (size_t)l->wo + (size_t)ox) * c;
            for (size_t ch = 0; ch < c; ch++)
                y[ch] = l->max ? -INFINITY : 0.0f;
            for (int iy = hs0; iy < he0; iy++)
                for (int ix = ws0; ix < we0; ix++) {
                    const float *x = xi + ((size_t)iy * (size_t)l->w + (size_t)ix) * c;
                    if (l->max)
                        for (size_t ch = 0; ch < c; ch++)
                            y[ch] = x[ch] > y[ch] ? x[ch] : y[ch];
                    else
                        for (size_t ch = 0; ch < c; ch++)
                            y[ch] += x[ch];
                }
            if (!l->max) {
                int count =
                    a->count_include_pad ? (he - hs) * (we - ws) : (he0 - hs0) * (we0 - ws0);
                for (size_t ch = 0; ch < c; ch++)
                    y[ch] /= (float)count;
            }
        }
    }
}

static bool pool_as_loop(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    const struct cc_tensor *x = TENSOR(b, 0), *y = OUTPUT(b);
    struct pool_loop *l = malloc(sizeof(*l));
    if (l)
        *l = (struct pool_loop){
            .x = b->in[0],
            .y = b->out,
            .c = (int)x->shape[1],
            .h = (int)x->shape[2],
            .w = (int)x->shape[3],
            .ho = (int)y->shape[2],
            .wo = (int)y->shape[3],
            .a = b->node->attrs.pool,
            .max = b->node->op == CC_OP_MAX_POOL2D,
        };
    return cc_xnn_add_loop(b, w, pool_rows, l, (size_t)(y->shape[0] * y->shape[2]), 1, true);
}

bool cc_xnn_build_pool2d(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    const struct cc_pool_attrs *a = &b->node->attrs.pool;
    const struct cc_tensor *x = TENSOR(b, 0), *y = OUTPUT(b);
    bool max = b->node->op == CC_OP_MAX_POOL2D;
    bool declared_pad = a->pad[0] || a->pad[1] || a->pad[2] || a->pad[3];
    if (a->kernel[0] * a->kernel[1] == 1 || (!max && a->count_include_pad && declared_pad))
        return pool_as_loop(b, w);

    // ceil_mode: padding at the bottom/right edge for the last window, (h, w).
    uint32_t extra[2];
    for (int i = 0; i < 2; i++) {
        int64_t need = (y->shape[2 + i] - 1) * a->stride[i] + a->kernel[i] -
                       (x->shape[2 + i] + a->pad[i] + a->pad[i + 2]);
        extra[i] = need > 0 ? (uint32_t)need : 0;
        int64_t got =
            (x->shape[2 + i] + a->pad[i] + a->pad[i + 2] + extra[i] - a->kernel[i]) / a->stride[i] +
            1;
        if (got != y->shape[2 + i])
            return cc_error_set(b->err,
                                "cpu backend: node \"%s\" (%s): XNNPACK's pooling would give "
                                "%lld outputs on axis %d, the model says %lld; --backend ref "
                                "runs it",
                                b->node->name, cc_op_name(b->node->op), (long long)got, 2 + i,
                                (long long)y->shape[2 + i]);
    }
    // XNNPACK's padding order is top, right, bottom, left; ours top, left, bottom, right.
    uint32_t top = (uint32_t)a->pad[0], right = (uint32_t)a->pad[3] + extra[1];
    uint32_t bottom = (uint32_t)a->pad[2] + extra[0], left = (uint32_t)a->pad[1];
    uint32_t kh = (uint32_t)a->kernel[0], kw = (uint32_t)a->kernel[1];
    uint32_t sh = (uint32_t)a->stride[0], sw = (uint32_t)a->stride[1];
    size_t c = (size_t)x->shape[1], h = (size_t)x->shape[2], wd = (size_t)x->shape[3];
    size_t batch = (size_t)x->shape[0];
    xnn_operator_t *op = cc_xnn_new_op(b, w);
    if (!op)
        return false;
    if (max)
        return cc_xnn_check(b, "xnn_create_max_pooling2d_nhwc_f32",
                            xnn_create_max_pooling2d_nhwc_f32(top, right, bottom, left, kh, kw, sh,
                                                              sw, 1, 1, c, c, c, -INFINITY,
                                                              INFINITY, b->flags, op)) &&
               cc_xnn_check(
                   b, "xnn_setup_max_pooling2d_nhwc_f32",
                   xnn_setup_max_pooling2d_nhwc_f32(*op, batch, h, wd, b->in[0], b->out, b->pool));
    return cc_xnn_check(b, "xnn_create_average_pooling2d_nhwc_f32",
                        xnn_create_average_pooling2d_nhwc_f32(top, right, bottom, left, kh, kw, sh,
                                                              sw, c, c, c, -INFINITY, INFINITY,
                                                              b->flags, op)) &&
           cc_xnn_check(
               b, "xnn_setup_average_pooling2d_nhwc_f32",
               xnn_setup_average_pooling2d_nhwc_f32(*op, batch, h, wd, b->in[0], b->out, b->pool));
}

/* ------------------------------------------------------------------------------------------
 * Channel copies
 */

/* Copies channels columns of pixels rows, rows in_stride apart in in and out_stride apart in
 * out (in floats), as one XNNPACK copy operator appended to w. */
static bool strided_copy(const struct cc_xnn_build *b, struct cc_xnn_work *w, size_t channels,
                         size_t in_stride, size_t out_stride, size_t rows, const float *in,
                         float *out, uint32_t flags)
{
    xnn_operator_t *op = cc_xnn_new_op(b, w);
    return op &&
           cc_xnn_check(b, "xnn_create_copy_nc_x32",
                        xnn_create_copy_nc_x32(channels, in_stride, out_stride, flags, op)) &&
           cc_xnn_check(b, "xnn_setup_copy_nc_x32",
                        xnn_setup_copy_nc_x32(*op, rows, in, out, b->pool));
}

bool cc_xnn_build_concat(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    const struct cc_tensor *y = OUTPUT(b);
    size_t total = (size_t)y->shape[1], rows = pixels(y), offset = 0;
    for (int i = 0; i < b->node->n_inputs; i++) {
        size_t c = (size_t)TENSOR(b, i)->shape[1];
        uint32_t flags = i == b->node->n_inputs - 1 ? b->flags : 0;
        if (!strided_copy(b, w, c, c, total, rows, b->in[i], (float *)b->out + offset, flags))
            return false;
        offset += c;
    }
    return true;
}

bool cc_xnn_build_slice(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    const struct cc_tensor *x = TENSOR(b, 0);
    const struct cc_slice_attrs *a = &b->node->attrs.slice;
    size_t c = (size_t)(a->end - a->start);
    return strided_copy(b, w, c, (size_t)x->shape[1], c, pixels(x),
                        (const float *)b->in[0] + a->start, b->out, b->flags);
}

bool cc_xnn_build_channel_shuffle(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    const struct cc_tensor *x = TENSOR(b, 0);
    size_t c = (size_t)x->shape[1], groups = (size_t)b->node->attrs.shuffle.groups;
    if (groups == 1 || groups == c) // the identity; XNNPACK wants 2+ groups of 1+ channels
        return strided_copy(b, w, c, c, c, pixels(x), b->in[0], b->out, b->flags);
    xnn_operator_t *op = cc_xnn_new_op(b, w);
    return op &&
           cc_xnn_check(
               b, "xnn_create_channel_shuffle_nc_x32",
               xnn_create_channel_shuffle_nc_x32(groups, c / groups, c, c, b->flags, op)) &&
           cc_xnn_check(
               b, "xnn_setup_channel_shuffle_nc_x32",
               xnn_setup_channel_shuffle_nc_x32(*op, pixels(x), b->in[0], b->out, b->pool));
}

/* ------------------------------------------------------------------------------------------
 * mul
 */

bool cc_xnn_build_mul(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    const struct cc_tensor *x = TENSOR(b, 0), *s = TENSOR(b, 1);
    size_t n = (size_t)x->count;
    // Same shapes: element order does not matter. [1,C,1,1]: one row of C scales broadcast
    // over the pixels of the NHWC input; in a batch state ([B,C,H,W] times [B,C,1,1]) each
    // image's row over its own pixels, a constant [1,C,1,1] over all of them.
    size_t dims = 1, x_shape[3] = {n, 1, 1}, s_shape[3] = {n, 1, 1};
    if (s->count != x->count) {
        size_t batch = (size_t)x->shape[0], c = (size_t)x->shape[1];
        dims = 3;
        x_shape[0] = batch;
        x_shape[1] = n / batch / c;
        x_shape[2] = c;
        s_shape[0] = (size_t)s->shape[0];
        s_shape[1] = 1;
        s_shape[2] = c;
    }
    xnn_operator_t *op = cc_xnn_new_op(b, w);
    return op &&
           cc_xnn_check(b, "xnn_create_multiply_nd_f32",
                        xnn_create_multiply_nd_f32(b->node->act.min, b->node->act.max,
                                                   cc_xnn_main_flags(b), op)) &&
           cc_xnn_check(b, "xnn_setup_multiply_nd_f32",
                        xnn_setup_multiply_nd_f32(*op, dims, x_shape, dims, s_shape, b->in[0],
                                                  b->in[1], b->out, b->pool)) &&
           cc_xnn_act(b, w, b->out, b->out, n);
}
