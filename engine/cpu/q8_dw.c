/* camclass — the int8 depthwise convolution as a layer (see q8_dw.h): the check, the packing,
 * the band driver over fused_q8.h's depthwise row kernels, the mode and the match from a
 * model. */
#include <stdlib.h>
#include <string.h>

#include "q8_dw.h"
#include "xnn_build.h"

/* ------------------------------------------------------------------------------------------
 * Mode
 */

bool cc_q8_dw_mode_parse(const char *value, struct cc_fq8_mode *mode, struct cc_error *err)
{
    static const struct cc_fq8_mode_spec spec = {"CAMCLASS_CPU_Q8DW", "an int8 depthwise mode",
                                                 "c, avx2, avxvnni, avx512vnni, neon, neondot",
                                                 cc_fq8_isa_runs, cc_fq8_isa_best};
    return cc_fq8_mode_parse(&spec, value, mode, err);
}

/* ------------------------------------------------------------------------------------------
 * Setup
 */

bool cc_q8_dw_check(const struct cc_q8_dw_desc *d, struct cc_error *err)
{
    const char *bad = NULL;
    if (d->h < 1 || d->w < 1 || d->c < 1)
        bad = "a size or channel count below 1";
    else if (d->stride != 1 && d->stride != 2)
        bad = "a stride other than 1 or 2";
    else if (!d->wt || !d->sw)
        bad = "missing weights or weight scales";
    else if (!(d->qx.scale > 0) || !(d->qy.scale > 0))
        bad = "an activation scale that is not positive";
    else if (d->lo > d->hi)
        bad = "a clamp whose low end is above its high end";
    if (bad)
        return cc_error_set(err, "int8 depthwise: %s (%dx%d, %d channels, stride %d)", bad, d->h,
                            d->w, d->c, d->stride);
    return true;
}

static void *aligned_zeros(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1))
        return NULL;
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

bool cc_q8_dw_init(struct cc_q8_dw *g, const struct cc_q8_dw_desc *d, enum cc_fq8_isa isa,
                   int threads, struct cc_error *err)
{
    *g = (struct cc_q8_dw){.d = *d, .isa = isa};
    if (!cc_q8_dw_check(d, err))
        return false;
    const struct cc_fq8_kernels *k = cc_fq8_kernels_of(isa);
    if (!k)
        return cc_error_set(err, "int8 depthwise: this CPU (or build) has no %s kernels",
                            cc_fq8_isa_name(isa));
    g->d.wt = NULL;
    g->d.sw = g->d.bias = NULL;
    g->row = k->dw;
    g->ho = (d->h - 1) / d->stride + 1;
    g->wo = (d->w - 1) / d->stride + 1;
    g->c_pad = (d->c + CC_FQ8_PACK - 1) / CC_FQ8_PACK * CC_FQ8_PACK;
    g->bands = threads < 1 ? 1 : threads > g->ho ? g->ho : threads;
    g->row_bytes = (size_t)(d->w + 2) * g->c_pad;
    g->scratch_bytes = (4 * g->row_bytes + (size_t)g->wo * g->c_pad + 63) / 64 * 64;
    g->scratch = aligned_zeros(g->scratch_bytes * g->bands);
    g->wt = aligned_zeros((size_t)9 * g->c_pad * sizeof(int32_t));
    g->bias = aligned_zeros((size_t)g->c_pad * sizeof(int32_t));
    g->scale = aligned_zeros((size_t)g->c_pad * sizeof(float));
    if (!g->scratch || !g->wt || !g->bias || !g->scale) {
        cc_q8_dw_finish(g);
        return cc_error_set(err, "int8 depthwise: out of memory");
    }
    cc_fq8_pack_dw(g->wt, g->bias, g->scale, g->c_pad, d->wt, d->sw, d->bias, d->c, d->qx, d->qy,
                   isa);
    // The rows' padding and the zero row hold the value 0: the input's zero point.
    memset(g->scratch, d->qx.zero_point, g->scratch_bytes * g->bands);
    return true;
}

void cc_q8_dw_finish(struct cc_q8_dw *g)
{
    free(g->wt);
    free(g->bias);
    free(g->scale);
    free(g->scratch);
    g->wt = g->bias = NULL;
    g->scale = NULL;
    g->scratch = NULL;
}

/* ------------------------------------------------------------------------------------------
 * Run
 */

struct run {
    const struct cc_q8_dw *g;
    const int8_t *x;
    int8_t *y;
};

/* Input row iy (-1 .. h: the zero row outside) as a padded row of band's ring, copied in when
 * the ring's slot holds another; held: the rows the 3 slots hold. */
static const int8_t *input_row(const struct run *r, int8_t *band, int held[3], int iy)
{
    const struct cc_q8_dw *g = r->g;
    if (iy < 0 || iy >= g->d.h)
        return band + 3 * g->row_bytes;
    int slot = iy % 3;
    int8_t *row = band + (size_t)slot * g->row_bytes;
    if (held[slot] != iy) {
        const int8_t *in = r->x + (size_t)iy * g->d.w * g->d.c;
        if (g->d.c == g->c_pad)
            memcpy(row + g->c_pad, in, (size_t)g->d.w * g->d.c);
        else
            for (int p = 0; p < g->d.w; p++)
                memcpy(row + (size_t)(p + 1) * g->c_pad, in + (size_t)p * g->d.c, (size_t)g->d.c);
        held[slot] = iy;
    }
    return row;
}

/* wo output pixels at y (pixel stride c_pad) from the kernel's 3 rows (pixel stride c_pad). */
static void dw_row(const struct cc_q8_dw *g, const int8_t *const rows[3], int8_t *y, int wo)
{
    struct cc_fq8_dw dd = {
        .rows = {rows[0], rows[1], rows[2]},
        .w = g->wt,
        .bias = g->bias,
        .scale = g->scale,
        .c = g->d.c,
        .c_pad = g->c_pad,
        .wo = wo,
        .stride = g->d.stride,
        .y = y,
        .lo = (float)(g->d.lo - g->d.qy.zero_point),
        .hi = (float)(g->d.hi - g->d.qy.zero_point),
        .zp = g->d.qy.zero_point,
    };
    g->row(&dd);
}

/* Output row oy into y through band's ring of padded rows and its output row (any c). */
static void row_ring(const struct run *r, int8_t *band, int held[3], int oy, int8_t *y)
{
    const struct cc_q8_dw *g = r->g;
    int8_t *out = band + 4 * g->row_bytes;
    int iy = oy * g->d.stride - 1;
    const int8_t *top = input_row(r, band, held, iy), *mid = input_row(r, band, held, iy + 1);
    const int8_t *rows[3] = {top, mid, input_row(r, band, held, iy + 2)};
    dw_row(g, rows, out, g->wo);
    for (int p = 0; p < g->wo; p++)
        memcpy(y + (size_t)p * g->d.c, out + (size_t)p * g->c_pad, (size_t)g->d.c);
}

/* Output pixel ox of row oy (input rows from iy) into y from a 3 x 3 pixel patch in band, the
 * padding the zero point: the columns at the image's edges. */
static void pixel_patch(const struct run *r, int8_t *band, int iy, int ox, int8_t *y)
{
    const struct cc_q8_dw *g = r->g;
    size_t c = (size_t)g->d.c;
    int x0 = ox * g->d.stride - 1;
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            int8_t *dst = band + (size_t)(ky * 3 + kx) * c;
            bool inside = iy + ky >= 0 && iy + ky < g->d.h && x0 + kx >= 0 && x0 + kx < g->d.w;
            if (inside)
                memcpy(dst, r->x + ((size_t)(iy + ky) * g->d.w + (size_t)(x0 + kx)) * c, c);
            else
                memset(dst, g->d.qx.zero_point, c);
        }
    const int8_t *rows[3] = {band, band + 3 * c, band + 6 * c};
    dw_row(g, rows, y + (size_t)ox * c, 1);
}

/* Output row oy into y with c == c_pad: the interior pixels (whose 3 columns are inside the
 * image) read the input rows where they are (rows above or below the image: the zero row),
 * the edge pixels through pixel_patch. */
static void row_in_place(const struct run *r, int8_t *band, int oy, int8_t *y)
{
    const struct cc_q8_dw *g = r->g;
    int s = g->d.stride, iy = oy * s - 1, w = g->d.w;
    size_t c = (size_t)g->d.c;
    int lo = 1, hi = w >= 2 ? (w - 2) / s + 1 : 0; // interior: [lo, hi)
    hi = hi < g->wo ? hi : g->wo;
    if (hi > lo) {
        const int8_t *zero = band + 3 * g->row_bytes, *rows[3];
        for (int ky = 0; ky < 3; ky++)
            rows[ky] = iy + ky < 0 || iy + ky >= g->d.h
                           ? zero
                           : r->x + ((size_t)(iy + ky) * w + (size_t)(lo * s - 1)) * c;
        dw_row(g, rows, y + (size_t)lo * c, hi - lo);
    }
    for (int ox = 0; ox < g->wo; ox++)
        if (ox < lo || ox >= hi)
            pixel_patch(r, band, iy, ox, y);
}

/* Output rows of band b: [b * ho / bands, (b + 1) * ho / bands). */
static void run_band(void *ctx, size_t b)
{
    const struct run *r = ctx;
    const struct cc_q8_dw *g = r->g;
    int8_t *band = g->scratch + b * g->scratch_bytes;
    int held[3] = {-1, -1, -1};
    int r0 = (int)(b * (size_t)g->ho / (size_t)g->bands);
    int r1 = (int)((b + 1) * (size_t)g->ho / (size_t)g->bands);
    for (int oy = r0; oy < r1; oy++) {
        int8_t *y = r->y + (size_t)oy * g->wo * g->d.c;
        if (g->d.c == g->c_pad)
            row_in_place(r, band, oy, y);
        else
            row_ring(r, band, held, oy, y);
    }
}

void cc_q8_dw_run(const struct cc_q8_dw *g, const int8_t *x, int8_t *y, pthreadpool_t pool)
{
    struct run r = {g, x, y};
    pthreadpool_parallelize_1d(pool, run_band, &r, (size_t)g->bands,
                               g->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0);
}

/* ------------------------------------------------------------------------------------------
 * In a graph
 */

/* Whether node n is a depthwise 3x3 conv2d, stride 1 or 2 both ways, padding 1 all round. */
static bool depthwise_3x3(const struct cc_model *m, const struct cc_node *n)
{
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    const struct cc_tensor *x = &m->tensors[n->inputs[0]], *w = &m->tensors[n->inputs[1]];
    return n->op == CC_OP_CONV2D && x->ndim == 4 && x->shape[0] == 1 && w->ndim == 4 &&
           a->groups == x->shape[1] && w->shape[0] == x->shape[1] && w->shape[1] == 1 &&
           w->shape[2] == 3 && w->shape[3] == 3 && a->stride[0] == a->stride[1] &&
           (a->stride[0] == 1 || a->stride[0] == 2) && a->dilation[0] == 1 && a->dilation[1] == 1 &&
           a->pad[0] == 1 && a->pad[1] == 1 && a->pad[2] == 1 && a->pad[3] == 1;
}

bool cc_q8_dw_from_node(const struct cc_model *m, const struct cc_node *n, struct cc_q8_dw_desc *d)
{
    if (n->op != CC_OP_CONV2D || n->n_inputs < 2 || !depthwise_3x3(m, n) ||
        n->act.kind != CC_ACT_CLAMP)
        return false;
    const struct cc_tensor *x = &m->tensors[n->inputs[0]], *w = &m->tensors[n->inputs[1]];
    const struct cc_tensor *y = &m->tensors[n->outputs[0]];
    const float *bias = n->n_inputs > 2 ? m->tensors[n->inputs[2]].data : NULL;
    if (w->dtype != CC_DTYPE_I8 || !w->q || !w->scales || (n->n_inputs > 2 && !bias) ||
        !x->quantized || !y->quantized)
        return false;
    *d = (struct cc_q8_dw_desc){
        .h = (int)x->shape[2],
        .w = (int)x->shape[3],
        .c = (int)x->shape[1],
        .stride = n->attrs.conv.stride[0],
        .wt = w->q,
        .sw = w->scales,
        .bias = bias,
        .qx = x->act_quant,
        .qy = y->act_quant,
        .lo = cc_xnn_quantize_bound(n->act.min, y->act_quant),
        .hi = cc_xnn_quantize_bound(n->act.max, y->act_quant),
    };
    int64_t ho = (d->h - 1) / d->stride + 1, wo = (d->w - 1) / d->stride + 1;
    struct cc_error ignored = {0};
    return y->ndim == 4 && y->shape[1] == d->c && y->shape[2] == ho && y->shape[3] == wo &&
           cc_q8_dw_check(d, &ignored);
}
