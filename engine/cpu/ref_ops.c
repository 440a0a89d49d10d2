/* camclass — plain C ops (see ref_ops.h).
 *
 * Sections: helpers; conv2d; the small ops; the node wrappers and their table.
 * conv2d takes one of three paths, all summing in float:
 *   - pointwise (1x1, stride 1, no padding): a GEMM (BLIS) straight on the input;
 *   - one input channel per group (depthwise): a row kernel over a zero-padded copy of the
 *     input plane;
 *   - anything else (the 3x3 stem, grouped convs): the same GEMM on im2col chunks.
 * Portable C with GCC/Clang vector extensions; no intrinsics, no CPU-specific flags: the
 * GEMM is BLIS's, which picks its kernels for the CPU at run time.
 */
#include <math.h>
#include <string.h>

#include <blis.h>

#include "ref_ops.h"

/* ------------------------------------------------------------------------------------------
 * Helpers
 */

// Four floats in one SIMD register where the target has one (SSE, NEON); GCC and Clang
// lower it to scalar code elsewhere (linear's dot product uses it). Loads go through memcpy:
// no alignment needed.
typedef float v4f __attribute__((vector_size(16)));

static inline v4f v4_load(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline v4f v4_splat(float s)
{
    return (v4f){s, s, s, s};
}

// Applies act to n values in place; the clamp is written so that compilers turn it into
// min/max instructions, the other kinds are cc_act_apply (model.c), the definition itself.
static void clamp_span(float *y, size_t n, struct cc_act act)
{
    if (cc_act_is_none(act))
        return;
    if (act.kind != CC_ACT_CLAMP) {
        for (size_t i = 0; i < n; i++)
            y[i] = cc_act_apply(act, y[i]);
        return;
    }
    const float lo = act.min, hi = act.max;
    for (size_t i = 0; i < n; i++) {
        float v = y[i];
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        y[i] = v;
    }
}

void cc_ref_act_span(float *y, size_t n, struct cc_act act)
{
    clamp_span(y, n, act);
}

/* Part p of n_parts of [0, n), with boundaries on multiples of granule. */
static void part_range(int n, struct cc_ref_part part, int granule, int *begin, int *end)
{
    int units = (n + granule - 1) / granule;
    int b = (int)((long long)units * part.p / part.n_parts) * granule;
    int e = (int)((long long)units * (part.p + 1) / part.n_parts) * granule;
    *begin = b < n ? b : n;
    *end = e < n ? e : n;
}

/* ------------------------------------------------------------------------------------------
 * conv2d
 */

/* y (rows, n) = act(w x + bias): x is (k, n) with rows x_stride apart, y has rows y_stride
 * apart; w (rows, k) and bias (rows) start at the first output row.
 * The product is BLIS's sgemm (Debian's libblis: kernels for the CPU it finds at run time,
 * AVX2/AVX-512 or NEON), 2.4x faster than our own register-tiled C over mobilenet_v2's 1x1
 * convs (docs/PERFORMANCE.md). One thread per call: the CPU backend's pool already runs parts
 * of a node on every core, and the per-call runtime object keeps BLIS free of global
 * settings. Bias and activation follow in one pass over each output row. */
static void gemm(const float *x, size_t x_stride, int k, size_t n, const float *w,
                 const float *bias, float *y, size_t y_stride, int rows, struct cc_act act)
{
    rntm_t rntm;
    bli_rntm_init(&rntm);
    bli_rntm_set_num_threads(1, &rntm);
    float one = 1.0f, zero = 0.0f;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, rows, (dim_t)n, k, &one, (float *)w, k, 1,
                 (float *)x, (inc_t)x_stride, 1, &zero, y, (inc_t)y_stride, 1, NULL, &rntm);
    for (int r = 0; r < rows; r++) {
        float *yr = y + (size_t)r * y_stride;
        if (bias)
            for (size_t p = 0; p < n; p++)
                yr[p] += bias[r];
        clamp_span(yr, n, act);
    }
}

enum {
    IM2COL_FLOATS = 1 << 16, // im2col chunk: 256 KiB, about an L2 cache's share
    IM2COL_ALIGN = 16,       // its width: a multiple of 16 pixels (64 bytes)
};

static int im2col_rows(const struct cc_conv2d_desc *d)
{
    return d->c / d->attrs.groups * d->kh * d->kw;
}

/* Output pixels per im2col chunk: a multiple of IM2COL_ALIGN that keeps the chunk near
 * IM2COL_FLOATS, at least IM2COL_ALIGN, at most the whole output. */
static size_t im2col_pixels(const struct cc_conv2d_desc *d)
{
    size_t hw = (size_t)d->ho * d->wo;
    size_t p = IM2COL_FLOATS / (size_t)im2col_rows(d) / IM2COL_ALIGN * IM2COL_ALIGN;
    p = p < IM2COL_ALIGN ? IM2COL_ALIGN : p;
    return p < hw ? p : hw;
}

/* Columns [p0, p0 + n) of the im2col matrix of group g into col (im2col_rows, n): row
 * (ci, ky, kx), column (oy, ox) holds x[g*cpg + ci][iy][ix], 0 where that is padding. */
static void im2col(const struct cc_conv2d_desc *d, const float *x, int g, size_t p0, size_t n,
                   float *col)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    const int cpg = d->c / a->groups;
    for (int ci = 0; ci < cpg; ci++) {
        const float *xc = x + (size_t)(g * cpg + ci) * d->h * d->w;
        for (int ky = 0; ky < d->kh; ky++)
            for (int kx = 0; kx < d->kw; kx++) {
                float *row = col + ((size_t)(ci * d->kh + ky) * d->kw + kx) * n;
                int oy = (int)(p0 / d->wo), ox = (int)(p0 % d->wo);
                for (size_t i = 0; i < n; i++) {
                    int iy = oy * a->stride[0] - a->pad[0] + ky * a->dilation[0];
                    int ix = ox * a->stride[1] - a->pad[1] + kx * a->dilation[1];
                    bool inside = iy >= 0 && iy < d->h && ix >= 0 && ix < d->w;
                    row[i] = inside ? xc[(size_t)iy * d->w + ix] : 0.0f;
                    if (++ox == d->wo)
                        ox = 0, oy++;
                }
            }
    }
}

/* One output row of a 3x3 kernel over padded input rows r0..r2: the nine taps summed in
 * registers, in the order of the general loop below (bias, then row by row, left to right),
 * so that both give the same floats. */
static inline __attribute__((always_inline)) void row3x3(float *restrict yr, const float *r0,
                                                         const float *r1, const float *r2,
                                                         const float *wk, float b, int wo, int sw,
                                                         int dw)
{
    const float w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3], w4 = wk[4], w5 = wk[5];
    const float w6 = wk[6], w7 = wk[7], w8 = wk[8];
    for (int ox = 0; ox < wo; ox++) {
        const int i = ox * sw;
        float s = b;
        s += w0 * r0[i];
        s += w1 * r0[i + dw];
        s += w2 * r0[i + 2 * dw];
        s += w3 * r1[i];
        s += w4 * r1[i + dw];
        s += w5 * r1[i + 2 * dw];
        s += w6 * r2[i];
        s += w7 * r2[i + dw];
        s += w8 * r2[i + 2 * dw];
        yr[ox] = s;
    }
}

/* Depthwise-like conv (one input channel per group), output channel o: the input plane is
 * copied with its zero padding into xp, then each output row starts at the bias and every
 * tap adds weight * (a strided input row) to it, with the row in the L1 cache. */
static void conv_depthwise_channel(const struct cc_conv2d_desc *d, const float *x, const float *w,
                                   const float *bias, float *y, int o, float *restrict xp)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    const int sh = a->stride[0], sw = a->stride[1], dh = a->dilation[0], dw = a->dilation[1];
    const int wp = d->w + a->pad[1] + a->pad[3], hp = d->h + a->pad[0] + a->pad[2];
    const int c = o / (d->o / a->groups); // its one input channel

    memset(xp, 0, (size_t)wp * hp * sizeof(*xp));
    for (int iy = 0; iy < d->h; iy++)
        memcpy(xp + (size_t)(iy + a->pad[0]) * wp + a->pad[1], x + ((size_t)c * d->h + iy) * d->w,
               (size_t)d->w * sizeof(*xp));

    const float *wk = w + (size_t)o * d->kh * d->kw;
    const float b = bias ? bias[o] : 0.0f;
    for (int oy = 0; oy < d->ho; oy++) {
        float *restrict yr = y + ((size_t)o * d->ho + oy) * d->wo;
        if (d->kh == 3 && d->kw == 3) {
            const float *r0 = xp + (size_t)(oy * sh) * wp, *r1 = r0 + (size_t)dh * wp;
            if (sw == 1) // the constant stride lets the compiler vectorize
                row3x3(yr, r0, r1, r1 + (size_t)dh * wp, wk, b, d->wo, 1, dw);
            else
                row3x3(yr, r0, r1, r1 + (size_t)dh * wp, wk, b, d->wo, sw, dw);
            clamp_span(yr, (size_t)d->wo, d->act);
            continue;
        }
        for (int ox = 0; ox < d->wo; ox++)
            yr[ox] = b;
        for (int ky = 0; ky < d->kh; ky++) {
            const float *xr = xp + (size_t)(oy * sh + ky * dh) * wp;
            for (int kx = 0; kx < d->kw; kx++) {
                const float wv = wk[ky * d->kw + kx];
                const float *xt = xr + kx * dw;
                if (sw == 1) {
                    for (int ox = 0; ox < d->wo; ox++)
                        yr[ox] += wv * xt[ox];
                } else {
                    for (int ox = 0; ox < d->wo; ox++)
                        yr[ox] += wv * xt[ox * sw];
                }
            }
        }
        clamp_span(yr, (size_t)d->wo, d->act);
    }
}

static bool conv_is_pointwise(const struct cc_conv2d_desc *d)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    return d->kh == 1 && d->kw == 1 && a->stride[0] == 1 && a->stride[1] == 1 && a->pad[0] == 0 &&
           a->pad[1] == 0 && a->pad[2] == 0 && a->pad[3] == 0;
}

size_t cc_cpu_conv2d_scratch(const struct cc_conv2d_desc *d)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    if (conv_is_pointwise(d))
        return 0;
    if (d->c == a->groups) // one input channel per group: the padded plane
        return (size_t)(d->h + a->pad[0] + a->pad[2]) * (d->w + a->pad[1] + a->pad[3]);
    return (size_t)im2col_rows(d) * im2col_pixels(d);
}

void cc_cpu_conv2d(const struct cc_conv2d_desc *d, const float *x, const float *w,
                   const float *bias, float *y, int o_begin, int o_end, float *scratch)
{
    const int groups = d->attrs.groups, cpg = d->c / groups, opg = d->o / groups;
    if (cpg == 1 && !conv_is_pointwise(d)) {
        for (int o = o_begin; o < o_end; o++)
            conv_depthwise_channel(d, x, w, bias, y, o, scratch);
        return;
    }
    // A GEMM per group, over the part of [o_begin, o_end) in that group: on the input itself
    // for pointwise convs, else on chunks of its im2col matrix.
    const size_t hw = (size_t)d->ho * d->wo, chunk = conv_is_pointwise(d) ? hw : im2col_pixels(d);
    const int k = cpg * d->kh * d->kw;
    for (int g = 0; g < groups; g++) {
        int ob = o_begin > g * opg ? o_begin : g * opg;
        int oe = o_end < (g + 1) * opg ? o_end : (g + 1) * opg;
        for (size_t p0 = 0; ob < oe && p0 < hw; p0 += chunk) {
            size_t n = hw - p0 < chunk ? hw - p0 : chunk;
            const float *cols = x + (size_t)g * cpg * hw + p0;
            size_t stride = hw;
            if (!conv_is_pointwise(d)) {
                im2col(d, x, g, p0, n, scratch);
                cols = scratch;
                stride = n;
            }
            gemm(cols, stride, k, n, w + (size_t)ob * k, bias ? bias + ob : NULL,
                 y + (size_t)ob * hw + p0, hw, oe - ob, d->act);
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * The small ops
 */

void cc_ref_add(const float *a, const float *b, float *y, size_t n, struct cc_act act)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
    clamp_span(y, n, act);
}

void cc_ref_global_avg_pool(const float *x, float *y, int c, int hw)
{
    for (int ch = 0; ch < c; ch++) {
        const float *xc = x + (size_t)ch * hw;
        double s = 0.0;
        for (int i = 0; i < hw; i++)
            s += xc[i];
        y[ch] = (float)(s / hw);
    }
}

// Sum of a[i] * b[i], in eight interleaved partial sums.
static float dot(const float *a, const float *b, int k)
{
    v4f acc0 = v4_splat(0.0f), acc1 = v4_splat(0.0f);
    int i = 0;
    for (; i + 8 <= k; i += 8) {
        acc0 += v4_load(a + i) * v4_load(b + i);
        acc1 += v4_load(a + i + 4) * v4_load(b + i + 4);
    }
    v4f acc = acc0 + acc1;
    float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (; i < k; i++)
        s += a[i] * b[i];
    return s;
}

void cc_ref_linear(const float *x, const float *w, const float *bias, float *y, int k, int n_begin,
                   int n_end, struct cc_act act)
{
    for (int n = n_begin; n < n_end; n++)
        y[n] = dot(w + (size_t)n * k, x, k) + (bias ? bias[n] : 0.0f);
    if (n_end > n_begin)
        clamp_span(y + n_begin, (size_t)(n_end - n_begin), act);
}

void cc_ref_softmax(const float *x, float *y, int n)
{
    if (n <= 0)
        return;
    float max = x[0];
    for (int i = 1; i < n; i++)
        max = x[i] > max ? x[i] : max;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        float e = expf(x[i] - max);
        y[i] = e;
        sum += e;
    }
    for (int i = 0; i < n; i++)
        y[i] = (float)(y[i] / sum);
}

void cc_ref_clamp(const float *x, float *y, size_t n, struct cc_act act)
{
    if (y != x)
        memcpy(y, x, n * sizeof(*y));
    clamp_span(y, n, act);
}

void cc_cpu_pool2d(const struct cc_pool_desc *d, const float *x, float *y, int c_begin, int c_end)
{
    const struct cc_pool_attrs *a = &d->attrs;
    for (int c = c_begin; c < c_end; c++) {
        const float *xc = x + (size_t)c * d->h * d->w;
        float *yc = y + (size_t)c * d->ho * d->wo;
        for (int oy = 0; oy < d->ho; oy++) {
            // The window, clipped to the padded input (what count_include_pad counts), then
            // to the input itself (what is read).
            int hs = oy * a->stride[0] - a->pad[0];
            int he = hs + a->kernel[0] < d->h + a->pad[2] ? hs + a->kernel[0] : d->h + a->pad[2];
            int hs0 = hs > 0 ? hs : 0, he0 = he < d->h ? he : d->h;
            for (int ox = 0; ox < d->wo; ox++) {
                int ws = ox * a->stride[1] - a->pad[1];
                int we =
                    ws + a->kernel[1] < d->w + a->pad[3] ? ws + a->kernel[1] : d->w + a->pad[3];
                int ws0 = ws > 0 ? ws : 0, we0 = we < d->w ? we : d->w;
                float acc = d->max ? -INFINITY : 0.0f;
                for (int iy = hs0; iy < he0; iy++)
                    for (int ix = ws0; ix < we0; ix++) {
                        float v = xc[(size_t)iy * d->w + ix];
                        acc = d->max ? (v > acc ? v : acc) : acc + v;
                    }
                if (!d->max) {
                    int count = a->count_include_pad ? (he - hs) * (we - ws)
                                                     : (he0 - hs0) * (we0 - ws0);
                    acc /= (float)count;
                }
                yc[(size_t)oy * d->wo + ox] = acc;
            }
        }
    }
}

void cc_ref_mul(const float *a, const float *b, float *y, size_t n, size_t b_every,
                struct cc_act act)
{
    if (b_every == 1) {
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] * b[i];
    } else {
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] * b[i / b_every];
    }
    clamp_span(y, n, act);
}

void cc_ref_channel_shuffle(const float *x, float *y, int c, size_t hw, int groups)
{
    int per = c / groups;
    for (int i = 0; i < per; i++)
        for (int j = 0; j < groups; j++)
            memcpy(y + (size_t)(i * groups + j) * hw, x + (size_t)(j * per + i) * hw,
                   hw * sizeof(*y));
}

/* ------------------------------------------------------------------------------------------
 * Node wrappers and the table
 */

static const struct cc_tensor *tensor_of(const struct cc_model *m, int index)
{
    return &m->tensors[index];
}

void cc_cpu_conv2d_desc_from_node(const struct cc_model *m, const struct cc_node *node,
                                  struct cc_conv2d_desc *d)
{
    const struct cc_tensor *x = tensor_of(m, node->inputs[0]);
    const struct cc_tensor *w = tensor_of(m, node->inputs[1]);
    const struct cc_tensor *y = tensor_of(m, node->outputs[0]);
    *d = (struct cc_conv2d_desc){
        .c = (int)x->shape[1],
        .h = (int)x->shape[2],
        .w = (int)x->shape[3],
        .o = (int)w->shape[0],
        .kh = (int)w->shape[2],
        .kw = (int)w->shape[3],
        .ho = (int)y->shape[2],
        .wo = (int)y->shape[3],
        .attrs = node->attrs.conv,
        .act = node->act,
    };
}

// Parts of a conv split its output channels on multiples of this.
enum { CONV_PART_ROWS = 4 };

static const float *bias_input(const struct cc_node *node, const float *const *in)
{
    return node->n_inputs > 2 ? in[2] : NULL;
}

static void run_conv2d(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                       float *out, struct cc_ref_part part)
{
    struct cc_conv2d_desc d;
    cc_cpu_conv2d_desc_from_node(m, node, &d);
    int ob, oe;
    part_range(d.o, part, CONV_PART_ROWS, &ob, &oe);
    cc_cpu_conv2d(&d, in[0], in[1], bias_input(node, in), out, ob, oe, part.scratch);
}

static size_t scratch_conv2d(const struct cc_model *m, const struct cc_node *node)
{
    struct cc_conv2d_desc d;
    cc_cpu_conv2d_desc_from_node(m, node, &d);
    return cc_cpu_conv2d_scratch(&d);
}

static void run_add(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                    float *out, struct cc_ref_part part)
{
    int b, e;
    part_range((int)tensor_of(m, node->outputs[0])->count, part, 16, &b, &e);
    cc_ref_add(in[0] + b, in[1] + b, out + b, (size_t)(e - b), node->act);
}

static void run_global_avg_pool(const struct cc_model *m, const struct cc_node *node,
                                const float *const *in, float *out, struct cc_ref_part part)
{
    if (part.p != 0)
        return;
    const struct cc_tensor *x = tensor_of(m, node->inputs[0]);
    cc_ref_global_avg_pool(in[0], out, (int)x->shape[1], (int)(x->shape[2] * x->shape[3]));
}

static void run_linear(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                       float *out, struct cc_ref_part part)
{
    const struct cc_tensor *w = tensor_of(m, node->inputs[1]);
    int b, e;
    part_range((int)w->shape[0], part, 4, &b, &e);
    cc_ref_linear(in[0], in[1], bias_input(node, in), out, (int)w->shape[1], b, e, node->act);
}

// flatten, reshape: the same values under another shape; a no-op when the planner aliased.
static void run_copy(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                     float *out, struct cc_ref_part part)
{
    if (part.p != 0 || in[0] == out)
        return;
    memmove(out, in[0], (size_t)tensor_of(m, node->outputs[0])->count * sizeof(float));
}

static void run_softmax(const struct cc_model *m, const struct cc_node *node,
                        const float *const *in, float *out, struct cc_ref_part part)
{
    if (part.p != 0)
        return;
    cc_ref_softmax(in[0], out, (int)tensor_of(m, node->outputs[0])->count);
}

static void run_clamp(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                      float *out, struct cc_ref_part part)
{
    int b, e;
    part_range((int)tensor_of(m, node->outputs[0])->count, part, 16, &b, &e);
    cc_ref_clamp(in[0] + b, out + b, (size_t)(e - b), node->act);
}

static void run_pool2d(const struct cc_model *m, const struct cc_node *node,
                       const float *const *in, float *out, struct cc_ref_part part)
{
    const struct cc_tensor *x = tensor_of(m, node->inputs[0]);
    const struct cc_tensor *y = tensor_of(m, node->outputs[0]);
    struct cc_pool_desc d = {(int)x->shape[1], (int)x->shape[2], (int)x->shape[3],
                             (int)y->shape[2], (int)y->shape[3], node->attrs.pool,
                             node->op == CC_OP_MAX_POOL2D};
    int b, e;
    part_range(d.c, part, 1, &b, &e);
    cc_cpu_pool2d(&d, in[0], out, b, e);
}

// Elements per channel of t ([1,C,...]): what concat, slice and shuffle move as one block.
static size_t channel_size(const struct cc_tensor *t)
{
    return (size_t)(t->count / t->shape[1]);
}

static void run_concat(const struct cc_model *m, const struct cc_node *node,
                       const float *const *in, float *out, struct cc_ref_part part)
{
    if (part.p != 0)
        return;
    for (int i = 0; i < node->n_inputs; i++) {
        size_t n = (size_t)tensor_of(m, node->inputs[i])->count;
        memcpy(out, in[i], n * sizeof(*out));
        out += n;
    }
}

static void run_slice(const struct cc_model *m, const struct cc_node *node,
                      const float *const *in, float *out, struct cc_ref_part part)
{
    if (part.p != 0)
        return;
    const struct cc_tensor *y = tensor_of(m, node->outputs[0]);
    memcpy(out, in[0] + (size_t)node->attrs.slice.start * channel_size(y),
           (size_t)y->count * sizeof(*out));
}

static void run_channel_shuffle(const struct cc_model *m, const struct cc_node *node,
                                const float *const *in, float *out, struct cc_ref_part part)
{
    if (part.p != 0)
        return;
    const struct cc_tensor *x = tensor_of(m, node->inputs[0]);
    cc_ref_channel_shuffle(in[0], out, (int)x->shape[1], channel_size(x),
                           node->attrs.shuffle.groups);
}

static void run_mul(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                    float *out, struct cc_ref_part part)
{
    const struct cc_tensor *x = tensor_of(m, node->inputs[0]);
    const struct cc_tensor *s = tensor_of(m, node->inputs[1]);
    if (s->count == x->count) {
        int b, e;
        part_range((int)x->count, part, 16, &b, &e);
        cc_ref_mul(in[0] + b, in[1] + b, out + b, (size_t)(e - b), 1, node->act);
        return;
    }
    size_t hw = channel_size(x); // [1,C,1,1] scales each channel of [1,C,H,W]
    int b, e;
    part_range((int)x->shape[1], part, 1, &b, &e);
    cc_ref_mul(in[0] + b * hw, in[1] + b, out + b * hw, (size_t)(e - b) * hw, hw, node->act);
}

static const struct cc_ref_op cpu_ops[] = {
    {CC_OP_CONV2D, run_conv2d, true, scratch_conv2d},
    {CC_OP_ADD, run_add, true},
    {CC_OP_GLOBAL_AVG_POOL, run_global_avg_pool, false},
    {CC_OP_LINEAR, run_linear, true},
    {CC_OP_FLATTEN, run_copy, false},
    {CC_OP_RESHAPE, run_copy, false},
    {CC_OP_SOFTMAX, run_softmax, false},
    {CC_OP_CLAMP, run_clamp, true},
    {CC_OP_MAX_POOL2D, run_pool2d, true},
    {CC_OP_AVG_POOL2D, run_pool2d, true},
    {CC_OP_CONCAT, run_concat, false},
    {CC_OP_SLICE, run_slice, false},
    {CC_OP_CHANNEL_SHUFFLE, run_channel_shuffle, false},
    {CC_OP_MUL, run_mul, true},
};

const struct cc_ref_op *cc_ref_op_find(enum cc_op op)
{
    for (size_t i = 0; i < sizeof(cpu_ops) / sizeof(cpu_ops[0]); i++)
        if (cpu_ops[i].op == op)
            return &cpu_ops[i];
    return NULL;
}
