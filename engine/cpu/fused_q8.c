/* camclass — the int8 fused inverted-residual block (see fused_q8.h): the portable C
 * kernels, the check, the packing, the band driver and the match from a model. The x86-64
 * kernels are in fused_q8_x86.c, the AArch64 ones in fused_q8_arm.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_info.h"
#include "fused_q8.h"
#include "fused_ring.h"
#include "xnn_build.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* ------------------------------------------------------------------------------------------
 * The portable kernels: one value at a time, the formulas of fused_q8.h as they read.
 */

/* XNNPACK's fp32 requantization of acc: clamp((float)acc * scale, lo, hi) rounded half to
 * even, plus zp (lo and hi: the clamp less zp, so the sum is inside it). */
static inline int32_t requant(int32_t acc, float scale, float lo, float hi, int32_t zp)
{
    float f = (float)acc * scale;
    f = f < lo ? lo : f > hi ? hi : f;
    return (int32_t)nearbyintf(f) + zp;
}

static inline int32_t add_q8(const struct cc_fq8_gemm *g, int32_t a, int32_t b)
{
    int32_t v = ((g->add_bias + a * g->add_a + b * g->add_b) >> g->add_shift) + g->add_zp;
    return v < g->add_lo ? g->add_lo : v > g->add_hi ? g->add_hi : v;
}

static void cc_fq8_gemm_c(const struct cc_fq8_gemm *g)
{
    for (int p = 0; p < g->m; p++) {
        const int8_t *a = g->a + (size_t)p * g->lda;
        int8_t *c = g->c + (size_t)p * g->ldc;
        for (int o = 0; o < g->n_store; o++) {
            int32_t acc = g->bias[o];
            for (int k = 0; k < g->k; k++) // unsigned input (x + 128): see fused_q8.h
                acc += (int32_t)(uint8_t)(a[k] ^ 0x80) *
                       g->w[((size_t)(k / 4) * g->n_pad + o) * 4 + k % 4];
            int32_t v = requant(acc, g->scale[o], g->lo, g->hi, g->zp);
            c[o] = (int8_t)(g->res ? add_q8(g, v, g->res[(size_t)p * g->ldc + o]) : v);
        }
    }
}

static void cc_fq8_dw_c(const struct cc_fq8_dw *d)
{
    for (int ox = 0; ox < d->wo; ox++)
        for (int c = 0; c < d->c; c++) {
            int32_t acc = d->bias[c];
            for (int t = 0; t < 9; t++)
                acc += d->rows[t / 3][(size_t)(d->stride * ox + t % 3) * d->c_pad + c] *
                       d->w[(size_t)t * d->c_pad + c];
            d->y[(size_t)ox * d->c_pad + c] =
                (int8_t)requant(acc, d->scale[c], d->lo, d->hi, d->zp);
        }
}

/* ------------------------------------------------------------------------------------------
 * Kernel families
 */

static bool host_c(void)
{
    return true;
}

#if defined(__x86_64__)
static bool host_avx2(void)
{
    return __builtin_cpu_supports("avx2") && cc_cpu_isa_allows_simd();
}

/* AVX-VNNI: CPUID leaf 7 subleaf 1, EAX bit 4 (by hand: not every compiler's
 * __builtin_cpu_supports knows it); AVX2 says the OS keeps the 256-bit state. */
static bool host_avxvnni(void)
{
    unsigned a, b, c, d;
    return host_avx2() && cc_cpu_isa_allows_extensions() &&
           __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1);
}

static bool host_vnni(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni") && cc_cpu_isa_allows_extensions();
}
#endif

#if defined(__aarch64__)
static bool host_neondot(void)
{
    return cc_cpu_arm_dotprod() && cc_cpu_isa_allows_extensions();
}
#endif

static const struct {
    const char *name;
    bool (*host_has)(void);
    struct cc_fq8_kernels k;
    bool signed_x; // the GEMMs multiply x, not x + 128: no 128 * sum(w) in the bias
    bool pairs;    // the GEMMs read int16 weight pairs and widened rows (fused_q8.h)
} isas[CC_FQ8_ISA_COUNT] = {
    [CC_FQ8_C] = {"c", host_c, {cc_fq8_gemm_c, cc_fq8_dw_c}},
#if defined(__x86_64__)
    [CC_FQ8_AVX2] = {"avx2", host_avx2, {cc_fq8_gemm_avx2, cc_fq8_dw_avx2}, true, true},
    [CC_FQ8_AVXVNNI] = {"avxvnni", host_avxvnni, {cc_fq8_gemm_avxvnni, cc_fq8_dw_avxvnni}},
    [CC_FQ8_AVX512VNNI] = {"avx512vnni", host_vnni, {cc_fq8_gemm_avx512vnni, cc_fq8_dw_avx512vnni}},
#else // named, not built (no host_has)
    [CC_FQ8_AVX2] = {"avx2"},
    [CC_FQ8_AVXVNNI] = {"avxvnni"},
    [CC_FQ8_AVX512VNNI] = {"avx512vnni"},
#endif
#if defined(__aarch64__)
    [CC_FQ8_NEON] = {"neon", cc_cpu_isa_allows_simd, {cc_fq8_gemm_neon, cc_fq8_dw_neon}, true},
    [CC_FQ8_NEONDOT] = {"neondot", host_neondot, {cc_fq8_gemm_neondot, cc_fq8_dw_neon}, true},
#else
    [CC_FQ8_NEON] = {"neon"},
    [CC_FQ8_NEONDOT] = {"neondot"},
#endif
};

bool cc_fq8_isa_runs(enum cc_fq8_isa isa)
{
    return (unsigned)isa < CC_FQ8_ISA_COUNT && isas[isa].host_has && isas[isa].host_has();
}

enum cc_fq8_isa cc_fq8_isa_best(void)
{
    enum cc_fq8_isa best = CC_FQ8_C;
    for (int i = 0; i < CC_FQ8_ISA_COUNT; i++)
        best = cc_fq8_isa_runs((enum cc_fq8_isa)i) ? (enum cc_fq8_isa)i : best;
    return best;
}

bool cc_fq8_mode_parse(const struct cc_fq8_mode_spec *spec, const char *value,
                       struct cc_fq8_mode *mode, struct cc_error *err)
{
    *mode = (struct cc_fq8_mode){CC_FUSED_MEASURE, spec->best()};
    if (!value || !value[0] || !strcmp(value, "measure"))
        return true;
    if (!strcmp(value, "off") || !strcmp(value, "on")) {
        mode->kind = !strcmp(value, "off") ? CC_FUSED_OFF : CC_FUSED_ON;
        return true;
    }
    for (int i = 0; i < CC_FQ8_ISA_COUNT; i++) {
        if (strcmp(value, cc_fq8_isa_name((enum cc_fq8_isa)i)))
            continue;
        if (!spec->runs((enum cc_fq8_isa)i))
            return cc_error_set(err,
                                "%s=\"%s\": this CPU (or build) has no %s kernels for it; use "
                                "measure, off, on or %s",
                                spec->var, value, value, cc_fq8_isa_name(spec->best()));
        *mode = (struct cc_fq8_mode){CC_FUSED_ON, (enum cc_fq8_isa)i};
        return true;
    }
    return cc_error_set(err,
                        "%s=\"%s\" is not %s: use measure (the default), off, on, or a kernel "
                        "family (%s)",
                        spec->var, value, spec->what, spec->families);
}

const struct cc_fq8_kernels *cc_fq8_kernels_of(enum cc_fq8_isa isa)
{
    return cc_fq8_isa_runs(isa) ? &isas[isa].k : NULL;
}

const char *cc_fq8_isa_name(enum cc_fq8_isa isa)
{
    return (unsigned)isa < CC_FQ8_ISA_COUNT && isas[isa].name ? isas[isa].name : "?";
}

/* ------------------------------------------------------------------------------------------
 * Setup
 */

/* The requantization scale XNNPACK computes for a QC8 conv: in f32, in this order. */
static float conv_scale(float in, float w, float out)
{
    float s = in * w;
    return s / out;
}

bool cc_fq8_check(const struct cc_fq8_desc *d, struct cc_error *err)
{
    const char *bad = NULL;
    if (d->h < 1 || d->w < 1 || d->cin < 1 || d->cexp < 1 || d->cout < 1)
        bad = "a size or channel count below 1";
    else if (d->stride != 1 && d->stride != 2)
        bad = "a depthwise stride other than 1 or 2";
    else if (!d->expand && d->cexp != d->cin)
        bad = "no expand conv but expanded channels != input channels";
    else if (d->residual && (d->stride != 1 || d->cin != d->cout))
        bad = "a residual with stride 2 or input channels != output channels";
    else if ((d->expand && (!d->we || !d->swe)) || !d->wd || !d->swd || !d->wp || !d->swp)
        bad = "missing weights or weight scales";
    else if (!(d->qx.scale > 0) || !(d->qe.scale > 0 || !d->expand) || !(d->qd.scale > 0) ||
             !(d->qp.scale > 0) || !(d->qy.scale > 0 || !d->residual))
        bad = "an activation scale that is not positive";
    if (bad)
        return cc_error_set(err, "int8 fused block: %s (%dx%d, %d -> %d -> %d, stride %d)", bad,
                            d->h, d->w, d->cin, d->cexp, d->cout, d->stride);
    return true;
}

static int round_up(int n, int to)
{
    return (n + to - 1) / to * to;
}

static void *aligned_zeros(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1))
        return NULL;
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

/* A 1x1 conv's weights w (n, k) packed (k4, n_pad, 4) into dst, or as int16 pairs (pairs;
 * fused_q8.h); bias (n_pad) = the int32 bias at in.scale * sw[o] less (in.zero_point + x_add)
 * * sum(w[o]) (x_add: what the kernels add to x, 128 or 0); scale (n_pad) its requant. */
static void pack_1x1(int8_t *dst, int32_t *bias, float *scale, const int8_t *w, const float *sw,
                     const float *b, int n, int k, int n_pad, struct cc_act_quant in,
                     struct cc_act_quant out, int x_add, bool pairs)
{
    for (int o = 0; o < n; o++) {
        int64_t sum = 0;
        for (int i = 0; i < k; i++) {
            int8_t v = w[(size_t)o * k + i];
            if (pairs)
                ((int16_t *)(void *)dst)[((size_t)(i / 2) * n_pad + o) * 2 + i % 2] = v;
            else
                dst[((size_t)(i / 4) * n_pad + o) * 4 + i % 4] = v;
            sum += v;
        }
        int32_t q = 0;
        if (b)
            cc_xnn_bias_i32(b + o, 1, in.scale, sw + o, &q);
        bias[o] = (int32_t)((int64_t)q - (int64_t)(in.zero_point + x_add) * sum);
        scale[o] = conv_scale(in.scale, sw[o], out.scale);
    }
}

/* Channel ch's place in the AVX2 depthwise's order (fused_q8.h): in each block of 16, the
 * channels 0-3, 8-11 (the low vector), then 4-7, 12-15. */
static int dw_pair_lane(int ch)
{
    int j = ch % 16;
    return ch - j + (j >> 2 & 1) * 8 + (j & 3) + (j >> 3) * 4;
}

/* Channel ch's 9 taps wt as the AVX2 depthwise's 5 int16 pairs (fused_q8.h) into wd. */
static void pack_dw_pairs(int32_t *wd, int ch, const int8_t *wt)
{
    int pos = dw_pair_lane(ch), vec = pos / 8, lane = pos % 8;
    const int8_t pair[5][2] = {
        {wt[0], wt[3]}, {wt[1], wt[4]}, {wt[2], wt[5]}, {wt[6], wt[7]}, {0, wt[8]}};
    for (int k = 0; k < 5; k++) {
        int16_t v[2] = {pair[k][0], pair[k][1]};
        memcpy(wd + ((size_t)vec * 5 + k) * 8 + lane, v, sizeof(v));
    }
}

void cc_fq8_pack_dw(int32_t *wd, int32_t *bias, float *scale, int c_pad, const int8_t *w,
                    const float *sw, const float *b, int c, struct cc_act_quant in,
                    struct cc_act_quant out, enum cc_fq8_isa isa)
{
    bool pairs = isa == CC_FQ8_AVX2;
    for (int ch = 0; ch < c; ch++) {
        int64_t sum = 0;
        for (int t = 0; t < 9; t++) {
            if (!pairs)
                wd[(size_t)t * c_pad + ch] = w[(size_t)ch * 9 + t];
            sum += w[(size_t)ch * 9 + t];
        }
        if (pairs)
            pack_dw_pairs(wd, ch, w + (size_t)ch * 9);
        int32_t q = 0;
        if (b)
            cc_xnn_bias_i32(b + ch, 1, in.scale, sw + ch, &q);
        int at = pairs ? dw_pair_lane(ch) : ch;
        bias[at] = (int32_t)((int64_t)q - (int64_t)in.zero_point * sum);
        scale[at] = conv_scale(in.scale, sw[ch], out.scale);
    }
}

/* XNNPACK's QS8 add parameters: a = the project's output, b = the block's input. */
static void pack_add(struct cc_fq8_block *b, const struct cc_fq8_desc *d)
{
    float sa = d->qp.scale / d->qy.scale, sb = d->qx.scale / d->qy.scale;
    float big = sa > sb ? sa : sb;
    uint32_t bits;
    memcpy(&bits, &big, sizeof(bits));
    int shift = 20 - ((int)(bits >> 23) - 127);
    b->add_a = (int32_t)lrintf(ldexpf(sa, shift));
    b->add_b = (int32_t)lrintf(ldexpf(sb, shift));
    b->add_shift = shift;
    b->add_bias = (int32_t)(INT32_C(1) << (shift - 1)) - b->add_a * d->qp.zero_point -
                  b->add_b * d->qx.zero_point;
}

/* The depthwise input's quantization: the expand's output, or the block's input. */
static struct cc_act_quant dw_in(const struct cc_fq8_desc *d)
{
    return d->expand ? d->qe : d->qx;
}

static bool pack(struct cc_fq8_block *b, const struct cc_fq8_desc *d)
{
    int ce = b->cexp_pad, co = b->cout_pad;
    bool pairs = isas[b->isa].pairs;
    size_t wbytes = pairs ? 2 : 1;
    b->we = aligned_zeros(d->expand ? (size_t)round_up(d->cin, 4) * ce * wbytes : 0);
    b->wp = aligned_zeros((size_t)round_up(d->cexp, 4) * co * wbytes);
    b->wd = aligned_zeros((size_t)9 * ce * sizeof(int32_t));
    b->be = aligned_zeros((size_t)ce * sizeof(int32_t));
    b->bd = aligned_zeros((size_t)ce * sizeof(int32_t));
    b->bp = aligned_zeros((size_t)co * sizeof(int32_t));
    b->se = aligned_zeros((size_t)ce * sizeof(float));
    b->sd = aligned_zeros((size_t)ce * sizeof(float));
    b->sp = aligned_zeros((size_t)co * sizeof(float));
    if (!b->we || !b->wp || !b->wd || !b->be || !b->bd || !b->bp || !b->se || !b->sd || !b->sp)
        return false;
    int x_add = isas[b->isa].signed_x ? 0 : 128;
    if (d->expand)
        pack_1x1(b->we, b->be, b->se, d->we, d->swe, d->be, d->cexp, d->cin, ce, d->qx, d->qe,
                 x_add, pairs);
    cc_fq8_pack_dw(b->wd, b->bd, b->sd, ce, d->wd, d->swd, d->bd, d->cexp, dw_in(d), d->qd, b->isa);
    pack_1x1(b->wp, b->bp, b->sp, d->wp, d->swp, d->bp, d->cout, d->cexp, co, d->qd, d->qp, x_add,
             pairs);
    if (d->residual)
        pack_add(b, d);
    return true;
}

/* Bytes of one padded ring row: w + 2 columns of cexp_pad channels. */
static size_t ring_row(const struct cc_fq8_block *b)
{
    return (size_t)(b->d.w + 2) * b->cexp_pad;
}

/* Where a band's widened row starts in its scratch (after the ring, the zero row and the
 * depthwise row), and its bytes: the larger GEMM input, k rounded up to 4, as int16; none but
 * for the families of int16 pairs. */
static size_t wide_at(const struct cc_fq8_block *b)
{
    return (size_t)round_up((int)(4 * ring_row(b) + (size_t)b->wo * b->cexp_pad), 64);
}

static size_t wide_bytes(const struct cc_fq8_block *b)
{
    if (!isas[b->isa].pairs)
        return 0;
    size_t e = b->d.expand ? (size_t)b->d.w * round_up(b->d.cin, 4) : 0;
    size_t p = (size_t)b->wo * round_up(b->d.cexp, 4);
    return 2 * (e > p ? e : p);
}

/* Band band's widened row (NULL where the family has none). */
static int16_t *wide_of(const struct cc_fq8_block *b, size_t band)
{
    if (!isas[b->isa].pairs)
        return NULL;
    return (int16_t *)(void *)(b->scratch + band * b->scratch_bytes + wide_at(b));
}

bool cc_fq8_init(struct cc_fq8_block *b, const struct cc_fq8_desc *d, enum cc_fq8_isa isa,
                 int bands, struct cc_error *err)
{
    *b = (struct cc_fq8_block){.d = *d, .isa = isa};
    if (!cc_fq8_check(d, err))
        return false;
    if (!cc_fq8_isa_runs(isa))
        return cc_error_set(err, "int8 fused block: this CPU (or build) has no %s kernels",
                            cc_fq8_isa_name(isa));
    b->d.we = b->d.wd = b->d.wp = NULL;
    b->d.swe = b->d.swd = b->d.swp = b->d.be = b->d.bd = b->d.bp = NULL;
    b->ho = (d->h - 1) / d->stride + 1;
    b->wo = (d->w - 1) / d->stride + 1;
    b->cexp_pad = round_up(d->cexp, CC_FQ8_PACK);
    b->cout_pad = round_up(d->cout, CC_FQ8_PACK);
    b->bands = bands < 1 ? 1 : bands > b->ho ? b->ho : bands;
    b->k = isas[isa].k;
    b->scratch_bytes = (size_t)round_up((int)(wide_at(b) + wide_bytes(b)), 64);
    b->scratch = aligned_zeros(b->scratch_bytes * b->bands);
    if (!b->scratch || !pack(b, d)) {
        cc_fq8_finish(b);
        return cc_error_set(err, "int8 fused block: out of memory");
    }
    // The ring's padding and the zero row hold the value 0: the depthwise input's zero point.
    memset(b->scratch, dw_in(d).zero_point, b->scratch_bytes * b->bands);
    return true;
}

void cc_fq8_finish(struct cc_fq8_block *b)
{
    void **owned[] = {(void **)&b->we, (void **)&b->wp,     (void **)&b->wd, (void **)&b->be,
                      (void **)&b->bd, (void **)&b->bp,     (void **)&b->se, (void **)&b->sd,
                      (void **)&b->sp, (void **)&b->scratch};
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        free(*owned[i]);
        *owned[i] = NULL;
    }
}

/* ------------------------------------------------------------------------------------------
 * Bands (as fused_block.c's, int8)
 */

static void expand_row(const void *block, const void *xv, int iy, void *row)
{
    const struct cc_fq8_block *b = block;
    const int8_t *x = xv;
    int8_t *e = row;
    const struct cc_fq8_desc *d = &b->d;
    const int8_t *in = x + (size_t)iy * d->w * d->cin;
    if (!d->expand) {
        for (int p = 0; p < d->w; p++)
            memcpy(e + (size_t)(p + 1) * b->cexp_pad, in + (size_t)p * d->cin, (size_t)d->cin);
        return;
    }
    // The ring's rows are in their band's scratch (fused_ring.h): that band's widened row.
    size_t band = (size_t)(e - b->scratch) / b->scratch_bytes;
    struct cc_fq8_gemm g = {
        .a = in,
        .lda = (size_t)d->cin,
        .w = b->we,
        .bias = b->be,
        .scale = b->se,
        .m = d->w,
        .k = d->cin,
        .n = d->cexp,
        .n_pad = b->cexp_pad,
        .n_store = b->cexp_pad,
        .c = e + b->cexp_pad,
        .ldc = (size_t)b->cexp_pad,
        .lo = (float)(d->lo[0] - d->qe.zero_point),
        .hi = (float)(d->hi[0] - d->qe.zero_point),
        .zp = d->qe.zero_point,
        .wide = wide_of(b, band),
    };
    b->k.gemm(&g);
}

static void output_row(const void *block, const void *xv, void *yv, int oy, const void *const *rows,
                       void *dwv, int band)
{
    const struct cc_fq8_block *b = block;
    const int8_t *x = xv;
    int8_t *y = yv, *dw = dwv;
    const struct cc_fq8_desc *d = &b->d;
    struct cc_fq8_dw dd = {
        .rows = {rows[0], rows[1], rows[2]},
        .w = b->wd,
        .bias = b->bd,
        .scale = b->sd,
        .c = d->cexp,
        .c_pad = b->cexp_pad,
        .wo = b->wo,
        .stride = d->stride,
        .y = dw,
        .lo = (float)(d->lo[1] - d->qd.zero_point),
        .hi = (float)(d->hi[1] - d->qd.zero_point),
        .zp = d->qd.zero_point,
    };
    b->k.dw(&dd);
    struct cc_fq8_gemm g = {
        .a = dw,
        .lda = (size_t)b->cexp_pad,
        .w = b->wp,
        .bias = b->bp,
        .scale = b->sp,
        .m = b->wo,
        .k = d->cexp,
        .n = d->cout,
        .n_pad = b->cout_pad,
        .n_store = d->cout,
        .c = y + (size_t)oy * b->wo * d->cout,
        .ldc = (size_t)d->cout,
        .lo = (float)(d->lo[2] - d->qp.zero_point),
        .hi = (float)(d->hi[2] - d->qp.zero_point),
        .zp = d->qp.zero_point,
        .res = d->residual ? x + (size_t)oy * d->w * d->cin : NULL,
        .add_a = b->add_a,
        .add_b = b->add_b,
        .add_bias = b->add_bias,
        .add_shift = b->add_shift,
        .add_zp = d->qy.zero_point,
        .add_lo = d->lo[3],
        .add_hi = d->hi[3],
        .wide = wide_of(b, (size_t)band),
    };
    b->k.gemm(&g);
}

static struct cc_fused_ring ring_of(const struct cc_fq8_block *b)
{
    return (struct cc_fused_ring){
        .block = b,
        .h = b->d.h,
        .stride = b->d.stride,
        .ho = b->ho,
        .k = 3,
        .pad = 1,
        .bands = b->bands,
        .row_bytes = ring_row(b),
        .band_bytes = b->scratch_bytes,
        .scratch = b->scratch,
        .expand = expand_row,
        .output = output_row,
    };
}

void cc_fq8_band(const struct cc_fq8_block *b, const int8_t *x, int8_t *y, int r0, int r1, int band)
{
    struct cc_fused_ring r = ring_of(b);
    cc_fused_ring_band(&r, x, y, r0, r1, band);
}

void cc_fq8_run(const struct cc_fq8_block *b, const int8_t *x, int8_t *y, pthreadpool_t pool)
{
    struct cc_fused_ring r = ring_of(b);
    cc_fused_ring_run(&r, x, y, pool, b->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0);
}

/* ------------------------------------------------------------------------------------------
 * In a graph
 */

/* Node k's clamp quantized in its output's quantization (xnn_build.c's act_bounds). */
static void bounds(const struct cc_model *m, int k, int8_t *lo, int8_t *hi)
{
    const struct cc_node *n = &m->nodes[k];
    struct cc_act_quant q = m->tensors[n->outputs[0]].act_quant;
    *lo = cc_xnn_quantize_bound(n->act.min, q); // a clamp (cc_fused_block_match)
    *hi = cc_xnn_quantize_bound(n->act.max, q);
}

/* Node k's weights (int8 and scales) and f32 bias (NULL when none); false when not i8. */
static bool conv_of(const struct cc_model *m, int k, const int8_t **w, const float **sw,
                    const float **b)
{
    const struct cc_node *n = &m->nodes[k];
    const struct cc_tensor *wt = &m->tensors[n->inputs[1]];
    *w = wt->q, *sw = wt->scales;
    *b = n->n_inputs > 2 ? m->tensors[n->inputs[2]].data : NULL;
    return wt->dtype == CC_DTYPE_I8 && wt->q && wt->scales && (n->n_inputs < 3 || *b);
}

bool cc_fq8_from_match(const struct cc_model *m, const struct cc_fused_match *f,
                       struct cc_fq8_desc *d)
{
    int e = f->d.expand ? f->first : -1, dw = f->first + f->d.expand, p = dw + 1;
    if ((f->d.kernel && f->d.kernel != 3) || f->d.act_expand.kind != CC_ACT_CLAMP ||
        f->d.act_dw.kind != CC_ACT_CLAMP || f->d.cse)
        return false; // mobilenet_v3's blocks: the int8 kernels have 3x3, clamps, no SE
    *d = (struct cc_fq8_desc){
        .h = f->d.h,
        .w = f->d.w,
        .cin = f->d.cin,
        .cexp = f->d.cexp,
        .cout = f->d.cout,
        .stride = f->d.stride,
        .expand = f->d.expand,
        .residual = f->d.residual,
    };
    int ts[5] = {f->x, e >= 0 ? m->nodes[e].outputs[0] : f->x, m->nodes[dw].outputs[0],
                 m->nodes[p].outputs[0], f->y};
    struct cc_act_quant *qs[5] = {&d->qx, &d->qe, &d->qd, &d->qp, &d->qy};
    for (int i = 0; i < 5; i++) {
        if (!m->tensors[ts[i]].quantized)
            return false;
        *qs[i] = m->tensors[ts[i]].act_quant;
    }
    int nodes[4] = {e, dw, p, f->d.residual ? f->last : -1};
    for (int i = 0; i < 4; i++)
        if (nodes[i] >= 0)
            bounds(m, nodes[i], &d->lo[i], &d->hi[i]);
    if (e >= 0 && !conv_of(m, e, &d->we, &d->swe, &d->be))
        return false;
    if (!conv_of(m, dw, &d->wd, &d->swd, &d->bd) || !conv_of(m, p, &d->wp, &d->swp, &d->bp))
        return false;
    struct cc_error ignored = {0};
    return cc_fq8_check(d, &ignored);
}
