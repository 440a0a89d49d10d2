/* camclass — plain C ops (see cpu_ops.h).
 *
 * Sections: helpers, conv2d (a GEMM path for 1x1 convs and a direct path for the rest),
 * the small ops, the node wrappers and their table.
 */
#include <math.h>
#include <string.h>

#include "cpu_ops.h"

/* ------------------------------------------------------------------------------------------
 * Helpers
 */

// Four floats in one SIMD register where the target has one (SSE, NEON); GCC and Clang
// lower it to scalar code elsewhere. Loads and stores go through memcpy: no alignment needed.
typedef float v4f __attribute__((vector_size(16)));

static inline v4f v4_load(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void v4_store(float *p, v4f v)
{
    memcpy(p, &v, sizeof(v));
}

static inline v4f v4_splat(float s)
{
    return (v4f){s, s, s, s};
}

static bool act_is_none(struct cc_act act)
{
    return isinf(act.min) && act.min < 0 && isinf(act.max) && act.max > 0;
}

// Clamps n values in place; written so that compilers turn it into min/max instructions.
static void clamp_span(float *y, size_t n, struct cc_act act)
{
    if (act_is_none(act))
        return;
    const float lo = act.min, hi = act.max;
    for (size_t i = 0; i < n; i++) {
        float v = y[i];
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        y[i] = v;
    }
}

/* Part p of n_parts of [0, n), with boundaries on multiples of granule. */
static void part_range(int n, struct cc_cpu_part part, int granule, int *begin, int *end)
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

enum { TILE_ROWS = 4, TILE_PIXELS = 8 }; // GEMM register tile: output channels x pixels

/* One tile of a 1x1 conv: rows output channels (<= TILE_ROWS) x TILE_PIXELS pixels.
 * x: column p of (k, hw); w: first row of (rows, k); y: row 0, column p of (rows, hw).
 * Inlined with rows == TILE_ROWS so that the accumulators live in registers. */
static inline __attribute__((always_inline)) void gemm_tile(int rows, const float *x, size_t hw,
                                                            const float *w, int k,
                                                            const float *bias, float *y,
                                                            struct cc_act act)
{
    v4f acc[TILE_ROWS][2];
    for (int r = 0; r < rows; r++)
        acc[r][0] = acc[r][1] = v4_splat(bias ? bias[r] : 0.0f);
    for (int c = 0; c < k; c++) {
        const float *xc = x + (size_t)c * hw;
        v4f x0 = v4_load(xc), x1 = v4_load(xc + 4);
        for (int r = 0; r < rows; r++) {
            v4f wv = v4_splat(w[(size_t)r * k + c]);
            acc[r][0] += wv * x0;
            acc[r][1] += wv * x1;
        }
    }
    for (int r = 0; r < rows; r++) {
        float *yr = y + (size_t)r * hw;
        v4_store(yr, acc[r][0]);
        v4_store(yr + 4, acc[r][1]);
        clamp_span(yr, TILE_PIXELS, act);
    }
}

/* 1x1 conv, stride 1, no padding, one group: y (o_end-o_begin, hw) = w x + bias, where x is
 * (k, hw) and w, bias, y point at row o_begin. */
static void conv1x1_gemm(const float *x, int k, size_t hw, const float *w, const float *bias,
                         float *y, int rows, struct cc_act act)
{
    size_t p = 0;
    for (; p + TILE_PIXELS <= hw; p += TILE_PIXELS) {
        int r = 0;
        for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
            gemm_tile(TILE_ROWS, x + p, hw, w + (size_t)r * k, k, bias ? bias + r : NULL,
                      y + (size_t)r * hw + p, act);
        if (r < rows)
            gemm_tile(rows - r, x + p, hw, w + (size_t)r * k, k, bias ? bias + r : NULL,
                      y + (size_t)r * hw + p, act);
    }
    // The last hw % TILE_PIXELS pixels, one at a time.
    for (; p < hw; p++) {
        for (int r = 0; r < rows; r++) {
            float s = bias ? bias[r] : 0.0f;
            for (int c = 0; c < k; c++)
                s += w[(size_t)r * k + c] * x[(size_t)c * hw + p];
            y[(size_t)r * hw + p] = s;
            clamp_span(&y[(size_t)r * hw + p], 1, act);
        }
    }
}

/* Output columns [*ox0, *ox1) whose input column ox*stride + off lies inside [0, w). */
static void valid_span(int off, int stride, int w, int wo, int *ox0, int *ox1)
{
    int lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int hi = w - 1 - off < 0 ? 0 : (w - 1 - off) / stride + 1;
    *ox0 = lo < wo ? lo : wo;
    *ox1 = hi < wo ? hi : wo;
    if (*ox1 < *ox0)
        *ox1 = *ox0;
}

/* Any conv, one output channel o: the plane starts at the bias, then every (input channel,
 * ky, kx) adds weight * (shifted input plane) to it. Inner loops run over output columns,
 * contiguous in memory when the stride is 1. */
static void conv_direct_channel(const struct cc_conv2d_desc *d, const float *x, const float *w,
                                const float *bias, float *y, int o)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    const int sh = a->stride[0], sw = a->stride[1], dh = a->dilation[0], dw = a->dilation[1];
    const int pt = a->pad[0], pl = a->pad[1];
    const int cpg = d->c / a->groups, opg = d->o / a->groups;
    const int c0 = (o / opg) * cpg;
    const size_t plane_out = (size_t)d->ho * d->wo, plane_in = (size_t)d->h * d->w;

    float *yo = y + (size_t)o * plane_out;
    const float b = bias ? bias[o] : 0.0f;
    for (size_t i = 0; i < plane_out; i++)
        yo[i] = b;

    for (int ci = 0; ci < cpg; ci++) {
        const float *xc = x + (size_t)(c0 + ci) * plane_in;
        const float *wk = w + ((size_t)o * cpg + ci) * d->kh * d->kw;
        for (int ky = 0; ky < d->kh; ky++) {
            int oy0, oy1;
            valid_span(ky * dh - pt, sh, d->h, d->ho, &oy0, &oy1);
            for (int kx = 0; kx < d->kw; kx++) {
                const float wv = wk[ky * d->kw + kx];
                const int offx = kx * dw - pl;
                int ox0, ox1;
                valid_span(offx, sw, d->w, d->wo, &ox0, &ox1);
                for (int oy = oy0; oy < oy1; oy++) {
                    const int iy = oy * sh + ky * dh - pt;
                    const float *xr = xc + (size_t)iy * d->w;
                    float *yr = yo + (size_t)oy * d->wo;
                    if (sw == 1) {
                        for (int ox = ox0; ox < ox1; ox++)
                            yr[ox] += wv * xr[ox + offx];
                    } else {
                        for (int ox = ox0; ox < ox1; ox++)
                            yr[ox] += wv * xr[ox * sw + offx];
                    }
                }
            }
        }
    }
    clamp_span(yo, plane_out, d->act);
}

static bool conv_is_pointwise(const struct cc_conv2d_desc *d)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    return d->kh == 1 && d->kw == 1 && a->stride[0] == 1 && a->stride[1] == 1 && a->pad[0] == 0 &&
           a->pad[1] == 0 && a->pad[2] == 0 && a->pad[3] == 0;
}

void cc_cpu_conv2d(const struct cc_conv2d_desc *d, const float *x, const float *w,
                   const float *bias, float *y, int o_begin, int o_end)
{
    if (!conv_is_pointwise(d)) {
        for (int o = o_begin; o < o_end; o++)
            conv_direct_channel(d, x, w, bias, y, o);
        return;
    }
    // Pointwise: one GEMM per group, over the part of [o_begin, o_end) in that group.
    const int groups = d->attrs.groups, cpg = d->c / groups, opg = d->o / groups;
    const size_t hw = (size_t)d->h * d->w;
    for (int g = 0; g < groups; g++) {
        int ob = o_begin > g * opg ? o_begin : g * opg;
        int oe = o_end < (g + 1) * opg ? o_end : (g + 1) * opg;
        if (ob >= oe)
            continue;
        conv1x1_gemm(x + (size_t)g * cpg * hw, cpg, hw, w + (size_t)ob * cpg,
                     bias ? bias + ob : NULL, y + (size_t)ob * hw, oe - ob, d->act);
    }
}

/* ------------------------------------------------------------------------------------------
 * The small ops
 */

void cc_cpu_add(const float *a, const float *b, float *y, size_t n, struct cc_act act)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
    clamp_span(y, n, act);
}

void cc_cpu_global_avg_pool(const float *x, float *y, int c, int hw)
{
    for (int ch = 0; ch < c; ch++) {
        const float *xc = x + (size_t)ch * hw;
        double s = 0.0;
        for (int i = 0; i < hw; i++)
            s += xc[i];
        y[ch] = (float)(s / hw);
    }
}

void cc_cpu_linear(const float *x, const float *w, const float *bias, float *y, int k, int n_begin,
                   int n_end, struct cc_act act)
{
    for (int n = n_begin; n < n_end; n++) {
        const float *wn = w + (size_t)n * k;
        float s = 0.0f;
        for (int i = 0; i < k; i++)
            s += wn[i] * x[i];
        y[n] = s + (bias ? bias[n] : 0.0f);
    }
    if (n_end > n_begin)
        clamp_span(y + n_begin, (size_t)(n_end - n_begin), act);
}

void cc_cpu_softmax(const float *x, float *y, int n)
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

void cc_cpu_clamp(const float *x, float *y, size_t n, struct cc_act act)
{
    if (y != x)
        memcpy(y, x, n * sizeof(*y));
    clamp_span(y, n, act);
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

static const float *bias_input(const struct cc_node *node, const float *const *in)
{
    return node->n_inputs > 2 ? in[2] : NULL;
}

static void run_conv2d(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                       float *out, struct cc_cpu_part part)
{
    struct cc_conv2d_desc d;
    cc_cpu_conv2d_desc_from_node(m, node, &d);
    int ob, oe;
    part_range(d.o, part, TILE_ROWS, &ob, &oe);
    cc_cpu_conv2d(&d, in[0], in[1], bias_input(node, in), out, ob, oe);
}

static void run_add(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                    float *out, struct cc_cpu_part part)
{
    int b, e;
    part_range((int)tensor_of(m, node->outputs[0])->count, part, 16, &b, &e);
    cc_cpu_add(in[0] + b, in[1] + b, out + b, (size_t)(e - b), node->act);
}

static void run_global_avg_pool(const struct cc_model *m, const struct cc_node *node,
                                const float *const *in, float *out, struct cc_cpu_part part)
{
    if (part.p != 0)
        return;
    const struct cc_tensor *x = tensor_of(m, node->inputs[0]);
    cc_cpu_global_avg_pool(in[0], out, (int)x->shape[1], (int)(x->shape[2] * x->shape[3]));
}

static void run_linear(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                       float *out, struct cc_cpu_part part)
{
    const struct cc_tensor *w = tensor_of(m, node->inputs[1]);
    int b, e;
    part_range((int)w->shape[0], part, 4, &b, &e);
    cc_cpu_linear(in[0], in[1], bias_input(node, in), out, (int)w->shape[1], b, e, node->act);
}

// flatten, reshape: the same values under another shape; a no-op when the planner aliased.
static void run_copy(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                     float *out, struct cc_cpu_part part)
{
    if (part.p != 0 || in[0] == out)
        return;
    memmove(out, in[0], (size_t)tensor_of(m, node->outputs[0])->count * sizeof(float));
}

static void run_softmax(const struct cc_model *m, const struct cc_node *node,
                        const float *const *in, float *out, struct cc_cpu_part part)
{
    if (part.p != 0)
        return;
    cc_cpu_softmax(in[0], out, (int)tensor_of(m, node->outputs[0])->count);
}

static void run_clamp(const struct cc_model *m, const struct cc_node *node, const float *const *in,
                      float *out, struct cc_cpu_part part)
{
    int b, e;
    part_range((int)tensor_of(m, node->outputs[0])->count, part, 16, &b, &e);
    cc_cpu_clamp(in[0] + b, out + b, (size_t)(e - b), node->act);
}

static const struct cc_cpu_op cpu_ops[] = {
    {CC_OP_CONV2D, run_conv2d, true},
    {CC_OP_ADD, run_add, true},
    {CC_OP_GLOBAL_AVG_POOL, run_global_avg_pool, false},
    {CC_OP_LINEAR, run_linear, true},
    {CC_OP_FLATTEN, run_copy, false},
    {CC_OP_RESHAPE, run_copy, false},
    {CC_OP_SOFTMAX, run_softmax, false},
    {CC_OP_CLAMP, run_clamp, true},
};

const struct cc_cpu_op *cc_cpu_op_find(enum cc_op op)
{
    for (size_t i = 0; i < sizeof(cpu_ops) / sizeof(cpu_ops[0]); i++)
        if (cpu_ops[i].op == op)
            return &cpu_ops[i];
    return NULL;
}
