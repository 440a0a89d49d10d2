/* camclass — the CPU backend's direct stem (see stem_conv.h): the mode switch, the packing,
 * the row driver and the portable C kernel. The x86-64 kernels are in stem_conv_x86.c, the
 * AArch64 one in stem_conv_arm.c. */
#include <stdlib.h>
#include <string.h>

#include "cpu_info.h"
#include "stem_conv.h"

enum {
    CHUNK = 16, // output channels of the C kernel's accumulators (a vector or two)
    BLOCK = 4,  // output pixels a kernel computes at once (weights loaded once for all)
    PACK = 32,  // n_pad's multiple: the widest kernel's channels at once (AVX-512: 2 x 16)
};

/* ------------------------------------------------------------------------------------------
 * Kernel families
 */

#if defined(__x86_64__)
static bool host_avx512(void)
{
    return __builtin_cpu_supports("avx512f") && cc_cpu_isa_allows_extensions();
}
static bool host_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           cc_cpu_isa_allows_simd();
}
#endif
static bool host_any(void)
{
    return true;
}

static void row_c(const struct cc_stem_conv *p, const struct cc_stem_row *r);

static const struct {
    const char *name;
    void (*row)(const struct cc_stem_conv *p, const struct cc_stem_row *r); // NULL: not built
    bool (*host_has)(void);
} isas[CC_STEM_ISA_COUNT] = {
    [CC_STEM_C] = {"c", row_c, host_any},
#if defined(__x86_64__)
    [CC_STEM_AVX2] = {"avx2", cc_stem_conv_row_avx2, host_avx2},
    [CC_STEM_AVX512] = {"avx512", cc_stem_conv_row_avx512, host_avx512},
#else
    [CC_STEM_AVX2] = {"avx2", NULL, NULL},
    [CC_STEM_AVX512] = {"avx512", NULL, NULL},
#endif
#if defined(__aarch64__)
    [CC_STEM_NEON] = {"neon", cc_stem_conv_row_neon, cc_cpu_isa_allows_simd}, // all AArch64
#else
    [CC_STEM_NEON] = {"neon", NULL, NULL},
#endif
};

const char *cc_stem_isa_name(enum cc_stem_isa isa)
{
    return (unsigned)isa < CC_STEM_ISA_COUNT ? isas[isa].name : "?";
}

bool cc_stem_isa_runs(enum cc_stem_isa isa)
{
    return isas[isa].row && isas[isa].host_has();
}

enum cc_stem_isa cc_stem_isa_best(void)
{
    enum cc_stem_isa best = CC_STEM_C;
    for (int i = 0; i < CC_STEM_ISA_COUNT; i++)
        best = cc_stem_isa_runs((enum cc_stem_isa)i) ? (enum cc_stem_isa)i : best;
    return best;
}

bool cc_isa_mode_parse(const struct cc_isa_mode_spec *spec, const char *value,
                       struct cc_stem_mode *mode, struct cc_error *err)
{
    enum cc_stem_isa best = CC_STEM_C;
    for (int i = 0; i < CC_STEM_ISA_COUNT; i++)
        if (spec->built((enum cc_stem_isa)i) && cc_stem_isa_runs((enum cc_stem_isa)i))
            best = (enum cc_stem_isa)i;
    *mode = (struct cc_stem_mode){CC_STEM_MEASURE, best};
    if (!value || !value[0] || !strcmp(value, "measure"))
        return true;
    if (!strcmp(value, "off") || !strcmp(value, "on")) {
        mode->kind = !strcmp(value, "off") ? CC_STEM_OFF : CC_STEM_ON;
        return true;
    }
    for (int i = 0; i < CC_STEM_ISA_COUNT; i++) {
        if (strcmp(value, isas[i].name))
            continue;
        if (!spec->built((enum cc_stem_isa)i) || !cc_stem_isa_runs((enum cc_stem_isa)i))
            return cc_error_set(err,
                                "%s=%s: this CPU (or build) has no %s %s; use on, off, measure "
                                "or c",
                                spec->var, value, value, spec->kernels);
        *mode = (struct cc_stem_mode){CC_STEM_ON, (enum cc_stem_isa)i};
        return true;
    }
    return cc_error_set(err,
                        "%s=\"%s\" is not %s: use measure (the default), off, on, or a kernel "
                        "family (%s)",
                        spec->var, value, spec->mode, spec->families);
}

static bool stem_built(enum cc_stem_isa isa)
{
    return isas[isa].row != NULL;
}

bool cc_stem_mode_parse(const char *value, struct cc_stem_mode *mode, struct cc_error *err)
{
    static const struct cc_isa_mode_spec spec = {"CAMCLASS_CPU_STEM", "a stem mode", "kernels",
                                                 "avx512, avx2, neon, c", stem_built};
    return cc_isa_mode_parse(&spec, value, mode, err);
}

/* ------------------------------------------------------------------------------------------
 * Setup
 */

bool cc_stem_conv_applies(const struct cc_model *m, const struct cc_node *node)
{
    if (node->op != CC_OP_CONV2D || node->n_inputs < 2 || node->act.kind != CC_ACT_CLAMP)
        return false;
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    const struct cc_conv2d_attrs *a = &node->attrs.conv;
    return x->ndim == 4 && x->shape[0] == 1 && x->shape[1] == 3 && w->ndim == 4 &&
           w->shape[1] == 3 && w->shape[2] == 3 && w->shape[3] == 3 && a->groups == 1 &&
           a->stride[0] == 2 && a->stride[1] == 2 && a->dilation[0] == 1 && a->dilation[1] == 1 &&
           (w->dtype == CC_DTYPE_F32 || w->dtype == CC_DTYPE_I8);
}

bool cc_stem_conv_init(struct cc_stem_conv *p, const struct cc_model *m, const struct cc_node *node,
                       enum cc_stem_isa isa, float *y, bool yield, struct cc_error *err)
{
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    const struct cc_tensor *out = &m->tensors[node->outputs[0]];
    int n = (int)w->shape[0], n_pad = (n + PACK - 1) / PACK * PACK;
    *p = (struct cc_stem_conv){
        .y = y,
        .h = (int)x->shape[2],
        .w_in = (int)x->shape[3],
        .ho = (int)out->shape[2],
        .wo = (int)out->shape[3],
        .n = n,
        .n_pad = n_pad,
        .pad_top = node->attrs.conv.pad[0],
        .pad_left = node->attrs.conv.pad[1],
        .lo = node->act.min,
        .hi = node->act.max,
        .isa = isa,
        .yield = yield,
    };
    float *f32 = malloc((size_t)w->count * sizeof(float));
    if (posix_memalign((void **)&p->w, 64, (size_t)27 * n_pad * sizeof(float)))
        p->w = NULL;
    p->bias = calloc((size_t)n_pad, sizeof(float));
    if (!f32 || !p->w || !p->bias) {
        free(f32);
        cc_stem_conv_finish(p);
        return cc_error_set(err, "cpu backend: out of memory for the stem \"%s\"", node->name);
    }
    cc_tensor_dequantize(w, f32); // f32 weights: copied as they are
    memset(p->w, 0, (size_t)27 * n_pad * sizeof(float));
    for (int o = 0; o < n; o++)
        for (int c = 0; c < 3; c++)
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++)
                    p->w[((ky * 3 + c) * 3 + kx) * n_pad + o] =
                        f32[((o * 3 + c) * 3 + ky) * 3 + kx];
    free(f32);
    if (node->n_inputs > 2)
        memcpy(p->bias, m->tensors[node->inputs[2]].data, (size_t)n * sizeof(float));
    return true;
}

void cc_stem_conv_finish(struct cc_stem_conv *p)
{
    free(p->w);
    free(p->bias);
    p->w = p->bias = NULL;
}

/* ------------------------------------------------------------------------------------------
 * The portable kernel
 */

/* Pixels [ox, ox + px) of row r (px <= BLOCK), every channel, in chunks of CHUNK channels;
 * edge: taps whose column is outside the input are skipped (the zero padding). */
static void c_block(const struct cc_stem_conv *p, const struct cc_stem_row *r, int ox, int px,
                    bool edge)
{
    for (int o0 = 0; o0 < p->n; o0 += CHUNK) {
        float acc[BLOCK][CHUNK];
        for (int i = 0; i < px; i++)
            memcpy(acc[i], p->bias + o0, sizeof(acc[i]));
        for (int ky = 0; ky < 3; ky++) {
            for (int c = 0; r->in[ky][0] && c < 3; c++) {
                for (int kx = 0; kx < 3; kx++) {
                    const float *w = p->w + ((ky * 3 + c) * 3 + kx) * p->n_pad + o0;
                    for (int i = 0; i < px; i++) {
                        int ix = 2 * (ox + i) - p->pad_left + kx;
                        if (edge && (ix < 0 || ix >= p->w_in))
                            continue;
                        float v = r->in[ky][c][ix];
                        for (int j = 0; j < CHUNK; j++)
                            acc[i][j] += v * w[j];
                    }
                }
            }
        }
        int count = p->n - o0 < CHUNK ? p->n - o0 : CHUNK;
        for (int i = 0; i < px; i++) {
            float *y = r->y + (size_t)(ox + i) * p->n + o0;
            for (int j = 0; j < count; j++) {
                float v = acc[i][j] < p->lo ? p->lo : acc[i][j];
                y[j] = v > p->hi ? p->hi : v;
            }
        }
    }
}

static void row_c(const struct cc_stem_conv *p, const struct cc_stem_row *r)
{
    int ox = r->ox0;
    for (; ox + BLOCK <= r->ox1; ox += BLOCK)
        c_block(p, r, ox, BLOCK, false);
    for (; ox < r->ox1; ox++)
        c_block(p, r, ox, 1, false);
    for (ox = 0; ox < r->ox0; ox++)
        c_block(p, r, ox, 1, true);
    for (ox = r->ox1; ox < p->wo; ox++)
        c_block(p, r, ox, 1, true);
}

/* ------------------------------------------------------------------------------------------
 * Rows over the pool
 */

struct run {
    const struct cc_stem_conv *p;
    const float *x; // (3, h, w_in)
};

static void run_row(void *ctx, size_t oy)
{
    const struct run *run = ctx;
    const struct cc_stem_conv *p = run->p;
    struct cc_stem_row r = {.y = p->y + oy * (size_t)p->wo * p->n};
    for (int ky = 0; ky < 3; ky++) {
        int iy = 2 * (int)oy - p->pad_top + ky;
        for (int c = 0; c < 3; c++)
            r.in[ky][c] = iy < 0 || iy >= p->h ? NULL : run->x + ((size_t)c * p->h + iy) * p->w_in;
    }
    // Interior: 2 * ox - pad_left >= 0 and 2 * ox - pad_left + 2 <= w_in - 1.
    r.ox0 = (p->pad_left + 1) / 2;
    r.ox1 = p->w_in - 3 + p->pad_left >= 0 ? (p->w_in - 3 + p->pad_left) / 2 + 1 : 0;
    r.ox0 = r.ox0 > p->wo ? p->wo : r.ox0;
    r.ox1 = r.ox1 > p->wo ? p->wo : r.ox1 < r.ox0 ? r.ox0 : r.ox1;
    isas[p->isa].row(p, &r);
}

void cc_stem_conv_run(const struct cc_stem_conv *p, const float *x, pthreadpool_t pool)
{
    struct run run = {p, x};
    pthreadpool_parallelize_1d(pool, run_row, &run, (size_t)p->ho,
                               PTHREADPOOL_FLAG_DISABLE_DENORMALS |
                                   (p->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
}
