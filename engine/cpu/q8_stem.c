/* camclass — the CPU backend's own int8 stem (see q8_stem.h): the mode switch, the match from a
 * model, the packing (through q8_gemm.h), the portable quantizer and the band driver. The x86-64
 * quantizers are in q8_stem_x86.c, the AArch64 one in q8_stem_arm.c; the GEMM kernels are
 * q8_gemm.h's. */
#include <stdlib.h>
#include <string.h>

#include "q8_stem.h"
#include "stem_conv.h"
#include "xnn_build.h"

enum {
    GROUPS = 9,     // 4-byte groups per pixel: (ky, c)
    K = GROUPS * 4, // inputs per pixel as the GEMM kernels see them (27 taps, 9 zero weights)
    BAND_ROWS = 4,  // output rows per band: 9 input rows, 1 of them shared with the next band
    ROW_ALIGN = 16, // a buffer row's multiple of bytes
};

/* ------------------------------------------------------------------------------------------
 * Kernel families
 */

static void quantize_c(const float *x, int n, int8_t *q, const struct cc_q8_stem_quant *p)
{
    for (int i = 0; i < n; i++)
        q[i] = cc_q8_stem_quantize_one(x[i], p);
}

/* Each family's quantizer, NULL where this build has none. */
static const cc_q8_stem_quantizer quantizers[CC_FQ8_ISA_COUNT] = {
    [CC_FQ8_C] = quantize_c,
#if defined(__x86_64__)
    [CC_FQ8_AVX2] = cc_q8_stem_quantize_avx2,
    [CC_FQ8_AVXVNNI] = cc_q8_stem_quantize_avx2,
    [CC_FQ8_AVX512VNNI] = cc_q8_stem_quantize_avx512,
#endif
#if defined(__aarch64__)
    [CC_FQ8_NEON] = cc_q8_stem_quantize_neon,
    [CC_FQ8_NEONDOT] = cc_q8_stem_quantize_neon,
#endif
};

cc_q8_stem_quantizer cc_q8_stem_quantizer_of(enum cc_fq8_isa isa)
{
    return (unsigned)isa < CC_FQ8_ISA_COUNT ? quantizers[isa] : NULL;
}

bool cc_q8_stem_isa_runs(enum cc_fq8_isa isa)
{
    return cc_q8_stem_quantizer_of(isa) && cc_q8_gemm_isa_runs(isa);
}

enum cc_fq8_isa cc_q8_stem_isa_best(void)
{
    enum cc_fq8_isa best = CC_FQ8_C;
    for (int i = 0; i < CC_FQ8_ISA_COUNT; i++)
        best = cc_q8_stem_isa_runs((enum cc_fq8_isa)i) ? (enum cc_fq8_isa)i : best;
    return best;
}

bool cc_q8_stem_mode_parse(const char *value, struct cc_fq8_mode *mode, struct cc_error *err)
{
    static const struct cc_fq8_mode_spec spec = {"CAMCLASS_CPU_Q8STEM", "an int8 stem mode",
                                                 "avx512vnni, avxvnni, avx2, neondot, neon, c",
                                                 cc_q8_stem_isa_runs, cc_q8_stem_isa_best};
    return cc_fq8_mode_parse(&spec, value, mode, err);
}

/* ------------------------------------------------------------------------------------------
 * Setup
 */

bool cc_q8_stem_from_node(const struct cc_model *m, const struct cc_node *node,
                          struct cc_q8_stem_desc *d)
{
    if (!cc_stem_conv_applies(m, node))
        return false;
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    const struct cc_tensor *y = &m->tensors[node->outputs[0]];
    const float *bias = node->n_inputs > 2 ? m->tensors[node->inputs[2]].data : NULL;
    if (w->dtype != CC_DTYPE_I8 || !w->q || !w->scales || (node->n_inputs > 2 && !bias) ||
        !x->quantized || !y->quantized || y->ndim != 4)
        return false;
    *d = (struct cc_q8_stem_desc){
        .h = (int)x->shape[2],
        .w = (int)x->shape[3],
        .ho = (int)y->shape[2],
        .wo = (int)y->shape[3],
        .n = (int)w->shape[0],
        .pad_top = node->attrs.conv.pad[0],
        .pad_left = node->attrs.conv.pad[1],
        .weights = w->q,
        .sw = w->scales,
        .bias = bias,
        .qx = x->act_quant,
        .qy = y->act_quant,
        .lo = cc_xnn_quantize_bound(node->act.min, y->act_quant),
        .hi = cc_xnn_quantize_bound(node->act.max, y->act_quant),
    };
    struct cc_error ignored = {0};
    return y->shape[1] == d->n && cc_q8_stem_check(d, &ignored);
}

bool cc_q8_stem_check(const struct cc_q8_stem_desc *d, struct cc_error *err)
{
    const char *bad = NULL;
    if (d->h < 1 || d->w < 1 || d->ho < 1 || d->wo < 1 || d->n < 1)
        bad = "a size below 1";
    else if (d->pad_top < 0 || d->pad_left < 0)
        bad = "a negative padding";
    else if (d->qx.zero_point < -128 || d->qx.zero_point > 127 || d->qy.zero_point < -128 ||
             d->qy.zero_point > 127)
        bad = "a zero point outside -128..127";
    else if (!d->weights || !d->sw)
        bad = "missing weights or weight scales";
    else if (!(d->qx.scale > 0) || !(d->qy.scale > 0))
        bad = "an activation scale that is not positive";
    else if (d->lo > d->hi)
        bad = "a clamp whose low end is above its high end";
    if (bad)
        return cc_error_set(err, "int8 stem: %s (%dx%d -> %dx%d x %d)", bad, d->h, d->w, d->ho,
                            d->wo, d->n);
    return true;
}

/* The weights (n, 3, 3, 3) as (n, K): tap (c, ky, kx) at (ky * 3 + c) * 4 + kx, zero at kx 3. */
static int8_t *widen_weights(const struct cc_q8_stem_desc *d)
{
    int8_t *w = calloc((size_t)d->n * K, 1);
    for (int o = 0; w && o < d->n; o++)
        for (int c = 0; c < 3; c++)
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++)
                    w[(size_t)o * K + (ky * 3 + c) * 4 + kx] =
                        d->weights[((o * 3 + c) * 3 + ky) * 3 + kx];
    return w;
}

bool cc_q8_stem_init(struct cc_q8_stem *p, const struct cc_q8_stem_desc *d, enum cc_fq8_isa isa,
                     struct cc_error *err)
{
    *p = (struct cc_q8_stem){.d = *d};
    p->d.weights = NULL;
    p->d.sw = p->d.bias = NULL;
    if (!cc_q8_stem_check(d, err))
        return false;
    if (!cc_q8_stem_isa_runs(isa))
        return cc_error_set(err, "int8 stem: this CPU (or build) has no %s kernels",
                            cc_fq8_isa_name(isa));
    int8_t *w = widen_weights(d);
    if (!w)
        return cc_error_set(err, "int8 stem: out of memory");
    struct cc_q8_gemm_desc g = {d->wo, K, d->n, w, d->sw, d->bias, d->qx, d->qy, d->lo, d->hi};
    bool packed = cc_q8_gemm_init(&p->g, &g, isa, 1, err);
    free(w);
    if (!packed)
        return false;
    p->quantize = quantizers[isa];
    p->q = (struct cc_q8_stem_quant){1.0f / d->qx.scale, (float)(-128 - d->qx.zero_point),
                                     (float)(127 - d->qx.zero_point), d->qx.zero_point};
    // Columns read: 2 * ox + 0..3 for ox < wo (the fourth with a zero weight), past the input
    // the zero point; rows: 2 * oy + 0..2 of the band's.
    size_t need = (size_t)(2 * d->wo + 2), have = (size_t)(d->pad_left + d->w);
    p->wp = ((need > have ? need : have) + ROW_ALIGN - 1) / ROW_ALIGN * ROW_ALIGN;
    p->band_rows = d->ho < BAND_ROWS ? d->ho : BAND_ROWS;
    p->bands = (d->ho + p->band_rows - 1) / p->band_rows;
    p->band_size = (size_t)(2 * p->band_rows + 1) * 3 * p->wp;
    if (!(p->buf = malloc((size_t)p->bands * p->band_size)))
        return cc_error_set(err, "int8 stem: out of memory");
    memset(p->buf, (int)(int8_t)d->qx.zero_point, (size_t)p->bands * p->band_size);
    return true;
}

void cc_q8_stem_finish(struct cc_q8_stem *p)
{
    cc_q8_gemm_finish(&p->g);
    free(p->buf);
    p->buf = NULL;
}

/* ------------------------------------------------------------------------------------------
 * Run
 */

struct run {
    const struct cc_q8_stem *p;
    const float *x; // (3, h, w)
    int8_t *y;      // (ho, wo, n)
};

/* Band b: its input rows quantized into its buffer (rows outside the input stay the zero
 * point), then its output rows, each one GEMM tile per panel over the buffer in place. */
static void run_band(void *ctx, size_t b)
{
    const struct run *r = ctx;
    const struct cc_q8_stem *p = r->p;
    const struct cc_q8_stem_desc *d = &p->d;
    const struct cc_q8_gemm *g = &p->g;
    int8_t *buf = p->buf + b * p->band_size;
    int oy0 = (int)b * p->band_rows, rows = d->ho - oy0 < p->band_rows ? d->ho - oy0 : p->band_rows;
    for (int i = 0; i < 2 * rows + 1; i++) {
        int iy = 2 * oy0 - d->pad_top + i;
        for (int c = 0; iy >= 0 && iy < d->h && c < 3; c++)
            p->quantize(r->x + ((size_t)c * d->h + iy) * d->w, d->w,
                        buf + ((size_t)i * 3 + c) * p->wp + d->pad_left, &p->q);
    }
    for (int j = 0; j < rows; j++) {
        for (int panel = 0; panel < g->panels; panel++) {
            int n0 = panel * g->nr, left = d->n - n0;
            struct cc_q8_tile t = {
                .a = buf + (size_t)(2 * j) * 3 * p->wp,
                .lda = 2,
                .ldg = p->wp,
                .w = g->w + (size_t)panel * g->panel_bytes,
                .bias = g->bias + n0,
                .scale = g->scale + n0,
                .m = d->wo,
                .k = K,
                .n_valid = left < g->nr ? left : g->nr,
                .c = r->y + (size_t)(oy0 + j) * d->wo * d->n + n0,
                .ldc = (size_t)d->n,
                .lo = g->lo,
                .hi = g->hi,
                .zp = g->zp,
            };
            g->kernel(&t);
        }
    }
}

void cc_q8_stem_run(const struct cc_q8_stem *p, const float *x, int8_t *y, pthreadpool_t pool)
{
    struct run r = {p, x, y};
    pthreadpool_parallelize_1d(pool, run_band, &r, (size_t)p->bands,
                               p->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0);
}
