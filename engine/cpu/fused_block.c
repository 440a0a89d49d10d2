/* camclass — the fused inverted-residual block (see fused_block.h): the check, the packing,
 * a band's rows (fused_ring.c walks them), the SE's second pass and the portable C kernels. The
 * x86-64 kernels are in fused_block_x86.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "env_word.h"
#include "fused_block.h"
#include "fused_ring.h"
#include "ref_ops.h"

_Static_assert((int)CC_FUSED_KMAX <= (int)CC_FUSED_RING_KMAX,
               "the ring holds the tallest kernel's rows");

enum { PACK = 32 }; // channel padding: the widest kernel's block (AVX-512: 2 x 16)

/* ------------------------------------------------------------------------------------------
 * The portable kernels: 4-float vectors of the compilers' vector extension (SSE on x86-64,
 * NEON on arm64, scalar code where a CPU has neither), no fused multiply-add (C11 mode does
 * not contract a * b + c).
 */

typedef float fb_v4 __attribute__((vector_size(16)));

static inline fb_v4 fb_load4(const float *p)
{
    fb_v4 v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void fb_store4(float *p, fb_v4 v)
{
    memcpy(p, &v, sizeof(v));
}

static inline fb_v4 fb_set4(float x)
{
    return (fb_v4){x, x, x, x};
}

static inline fb_v4 fb_min4(fb_v4 a, fb_v4 b)
{
    for (int i = 0; i < 4; i++)
        a[i] = a[i] < b[i] ? a[i] : b[i];
    return a;
}

static inline fb_v4 fb_max4(fb_v4 a, fb_v4 b)
{
    for (int i = 0; i < 4; i++)
        a[i] = a[i] > b[i] ? a[i] : b[i];
    return a;
}

#define FB_SFX c
#define FB_LINKAGE static
#define FB_TARGET
#define FB_VEC fb_v4
#define FB_PX 4
#define FB_LOAD(p) fb_load4(p)
#define FB_STORE(p, v) fb_store4((p), (v))
#define FB_SET1(x) fb_set4(x)
#define FB_FMA(a, b, c) ((a) * (b) + (c))
#define FB_MIN(a, b) fb_min4(a, b)
#define FB_MAX(a, b) fb_max4(a, b)
#include "fused_block_kern.h"

static const struct cc_fused_kernels kernels[CC_STEM_ISA_COUNT] = {
    [CC_STEM_C] = {cc_fused_gemm_c, cc_fused_dw_c},
#if defined(__x86_64__)
    [CC_STEM_AVX2] = {cc_fused_gemm_avx2, cc_fused_dw_avx2},
    [CC_STEM_AVX512] = {cc_fused_gemm_avx512, cc_fused_dw_avx512},
#endif
#if defined(__aarch64__)
    [CC_STEM_NEON] = {cc_fused_gemm_neon, cc_fused_dw_neon},
#endif
};

/* ------------------------------------------------------------------------------------------
 * Setup
 */

static bool is_clamp(struct cc_act act)
{
    return act.kind == CC_ACT_CLAMP && !(act.min > act.max);
}

/* Whether act is one the expand conv or the depthwise may have: a clamp or hardswish. */
static bool is_inner_act(struct cc_act act)
{
    return is_clamp(act) || act.kind == CC_ACT_HARDSWISH;
}

/* The depthwise kernel of d: its kernel, 0 read as 3. */
static int kernel_of(const struct cc_fused_block_desc *d)
{
    return d->kernel ? d->kernel : 3;
}

bool cc_fused_block_check(const struct cc_fused_block_desc *d, struct cc_error *err)
{
    const char *bad = NULL;
    if (d->h < 1 || d->w < 1 || d->cin < 1 || d->cexp < 1 || d->cout < 1)
        bad = "a size or channel count below 1";
    else if (d->stride != 1 && d->stride != 2)
        bad = "a depthwise stride other than 1 or 2";
    else if (kernel_of(d) != 3 && kernel_of(d) != 5)
        bad = "a depthwise kernel other than 3x3 or 5x5";
    else if (!d->expand && d->cexp != d->cin)
        bad = "no expand conv but expanded channels != input channels";
    else if (d->residual && (d->stride != 1 || d->cin != d->cout))
        bad = "a residual with stride 2 or input channels != output channels";
    else if (!is_inner_act(d->act_expand) || !is_inner_act(d->act_dw) || !is_clamp(d->act_project))
        bad = "an activation that is not a clamp (or hardswish before the project conv)";
    else if ((d->expand && !d->we) || !d->wd || !d->wp || (d->cse && (!d->w1 || !d->w2)))
        bad = "missing weights";
    else if (d->cse < 0)
        bad = "a squeeze-excitation with fewer than 0 channels";
    if (bad)
        return cc_error_set(err, "fused block: %s (%dx%d, %d -> %d -> %d, stride %d)", bad, d->h,
                            d->w, d->cin, d->cexp, d->cout, d->stride);
    return true;
}

/* n channels padded: to PACK, but 16 or fewer to 16, which every kernel's loops stay within
 * (they take two vectors only while channels remain past the first): a 16-channel block's
 * ring rows are then half as wide (mobilenet_v3's features.1 at 112x112: 4 rows of 114 x 16
 * floats, 29 KB, in L1). */
static int round_up(int n)
{
    return n <= 16 ? 16 : (n + PACK - 1) / PACK * PACK;
}

static float *aligned_floats(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, (n ? n : 1) * sizeof(float)))
        return NULL;
    memset(p, 0, (n ? n : 1) * sizeof(float));
    return p;
}

/* dst (rows, cols_pad) = src (cols, rows) transposed: a 1x1 conv's [O][C] as C rows of O. */
static void pack_t(float *dst, const float *src, int rows, int cols, int cols_pad)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            dst[(size_t)r * cols_pad + c] = src[(size_t)c * rows + r];
}

static void pack_bias(float *dst, const float *src, int n)
{
    if (src)
        memcpy(dst, src, (size_t)n * sizeof(float));
}

/* Floats of one padded expanded row: w + 2 * pad columns of cexp_pad channels. */
static size_t ring_row(const struct cc_fused_block *b)
{
    return (size_t)(b->d.w + 2 * b->pad) * b->cexp_pad;
}

static bool pack(struct cc_fused_block *b, const struct cc_fused_block_desc *d)
{
    int ce = b->cexp_pad, co = b->cout_pad;
    b->we = aligned_floats(d->expand ? (size_t)d->cin * ce : 0);
    b->be = aligned_floats((size_t)ce);
    b->wd = aligned_floats((size_t)b->ksize * b->ksize * ce);
    b->bd = aligned_floats((size_t)ce);
    b->wp = aligned_floats((size_t)d->cexp * co);
    b->bp = aligned_floats((size_t)co);
    if (!b->we || !b->be || !b->wd || !b->bd || !b->wp || !b->bp)
        return false;
    if (d->expand) {
        pack_t(b->we, d->we, d->cin, d->cexp, ce);
        pack_bias(b->be, d->be, d->cexp);
    }
    pack_t(b->wd, d->wd, b->ksize * b->ksize, d->cexp, ce);
    pack_bias(b->bd, d->bd, d->cexp);
    pack_t(b->wp, d->wp, d->cexp, d->cout, co);
    pack_bias(b->bp, d->bp, d->cout);
    return true;
}

/* The squeeze-excitation's weights and buffers (fused_block.h), when d has one. */
static bool pack_se(struct cc_fused_block *b, const struct cc_fused_block_desc *d)
{
    if (!d->cse)
        return true;
    int ce = b->cexp_pad, cs = b->cse_pad = round_up(d->cse);
    size_t dw = (size_t)b->ho * b->wo * ce;
    b->w1 = aligned_floats((size_t)d->cexp * cs);
    b->b1 = aligned_floats((size_t)cs);
    b->w2 = aligned_floats((size_t)d->cse * ce);
    b->b2 = aligned_floats((size_t)ce);
    b->se = aligned_floats(dw + (size_t)b->bands * ce + cs + ce);
    if (!b->w1 || !b->b1 || !b->w2 || !b->b2 || !b->se)
        return false;
    b->se_sums = b->se + dw;
    b->se_z = b->se_sums + (size_t)b->bands * ce;
    b->se_g = b->se_z + cs;
    pack_t(b->w1, d->w1, d->cexp, d->cse, cs);
    pack_bias(b->b1, d->b1, d->cse);
    pack_t(b->w2, d->w2, d->cse, d->cexp, ce);
    pack_bias(b->b2, d->b2, d->cexp);
    return true;
}

bool cc_fused_block_init(struct cc_fused_block *b, const struct cc_fused_block_desc *d,
                         enum cc_stem_isa isa, int bands, struct cc_error *err)
{
    *b = (struct cc_fused_block){.d = *d, .isa = isa};
    if (!cc_fused_block_check(d, err))
        return false;
    if ((unsigned)isa >= CC_STEM_ISA_COUNT || !cc_stem_isa_runs(isa) || !kernels[isa].gemm)
        return cc_error_set(err, "fused block: this CPU (or build) has no %s kernels",
                            cc_stem_isa_name(isa));
    b->d.we = b->d.be = b->d.wd = b->d.bd = b->d.wp = b->d.bp = NULL;
    b->d.w1 = b->d.b1 = b->d.w2 = b->d.b2 = NULL;
    b->ksize = kernel_of(d);
    b->pad = b->ksize / 2;
    b->ho = (d->h - 1) / d->stride + 1; // (h + 2 * pad - k) / stride + 1
    b->wo = (d->w - 1) / d->stride + 1;
    b->cexp_pad = round_up(d->cexp);
    b->cout_pad = round_up(d->cout);
    b->bands = bands < 1 ? 1 : bands > b->ho ? b->ho : bands;
    b->k = kernels[isa];
    // A band's scratch: the ring of k expanded rows, a zero row, the depthwise row.
    b->scratch_floats = (size_t)(b->ksize + 1) * ring_row(b) + (size_t)b->wo * b->cexp_pad;
    b->scratch = aligned_floats(b->scratch_floats * b->bands);
    if (!b->scratch || !pack(b, d) || !pack_se(b, d)) {
        cc_fused_block_finish(b);
        return cc_error_set(err, "fused block: out of memory");
    }
    return true;
}

void cc_fused_block_finish(struct cc_fused_block *b)
{
    float **owned[] = {&b->we,      &b->be, &b->wd, &b->bd, &b->wp, &b->bp,
                       &b->scratch, &b->w1, &b->b1, &b->w2, &b->b2, &b->se};
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        free(*owned[i]);
        *owned[i] = NULL;
    }
}

size_t cc_fused_block_working_set(const struct cc_fused_block *b)
{
    size_t weights = (size_t)(b->d.expand ? b->d.cin : 0) * b->cexp_pad +
                     (size_t)b->ksize * b->ksize * b->cexp_pad + (size_t)b->d.cexp * b->cout_pad +
                     2 * b->cexp_pad + b->cout_pad;
    if (b->d.cse) // the SE's weights, the whole depthwise output, the sums, z and g
        weights += (size_t)b->d.cexp * b->cse_pad + (size_t)b->d.cse * b->cexp_pad +
                   (size_t)b->ho * b->wo * b->cexp_pad + (size_t)(b->bands + 2) * b->cexp_pad +
                   2 * b->cse_pad;
    return (b->scratch_floats + weights) * sizeof(float);
}

/* ------------------------------------------------------------------------------------------
 * Bands
 */

/* Input row iy expanded into the ring row e (columns pad .. pad + w - 1; the pad columns on
 * either side stay zero). */
static void expand_row(const void *block, const void *xv, int iy, void *row)
{
    const struct cc_fused_block *b = block;
    const float *x = xv;
    float *e = row;
    const struct cc_fused_block_desc *d = &b->d;
    const float *in = x + (size_t)iy * d->w * d->cin;
    if (!d->expand) {
        for (int p = 0; p < d->w; p++)
            memcpy(e + (size_t)(p + b->pad) * b->cexp_pad, in + (size_t)p * d->cin,
                   (size_t)d->cin * sizeof(float));
        return;
    }
    struct cc_fused_gemm g = {
        .a = in,
        .lda = (size_t)d->cin,
        .w = b->we,
        .bias = b->be,
        .m = d->w,
        .k = d->cin,
        .n = d->cexp,
        .n_pad = b->cexp_pad,
        .n_store = b->cexp_pad,
        .c = e + (size_t)b->pad * b->cexp_pad,
        .ldc = (size_t)b->cexp_pad,
        .lo = d->act_expand.min,
        .hi = d->act_expand.max,
        .hswish = d->act_expand.kind == CC_ACT_HARDSWISH,
    };
    b->k.gemm(&g);
}

/* An output row's depthwise row into dw (rows: the k expanded rows it reads). */
static void dw_row(const struct cc_fused_block *b, const float *const rows[CC_FUSED_KMAX],
                   float *dw)
{
    const struct cc_fused_block_desc *d = &b->d;
    struct cc_fused_dw dd = {
        .w = b->wd,
        .bias = b->bd,
        .c = d->cexp,
        .c_pad = b->cexp_pad,
        .wo = b->wo,
        .stride = d->stride,
        .k = b->ksize,
        .y = dw,
        .lo = d->act_dw.min,
        .hi = d->act_dw.max,
        .hswish = d->act_dw.kind == CC_ACT_HARDSWISH,
    };
    memcpy(dd.rows, rows, sizeof(dd.rows));
    b->k.dw(&dd);
}

/* Output row oy of y: the project conv of its depthwise row dw (and the residual). */
static void project_row(const struct cc_fused_block *b, const float *x, float *y, int oy,
                        const float *dw)
{
    const struct cc_fused_block_desc *d = &b->d;
    struct cc_fused_gemm g = {
        .a = dw,
        .lda = (size_t)b->cexp_pad,
        .w = b->wp,
        .bias = b->bp,
        .m = b->wo,
        .k = d->cexp,
        .n = d->cout,
        .n_pad = b->cout_pad,
        .n_store = d->cout,
        .c = y + (size_t)oy * b->wo * d->cout,
        .ldc = (size_t)d->cout,
        .res = d->residual ? x + (size_t)oy * d->w * d->cin : NULL,
        .lo = d->act_project.min,
        .hi = d->act_project.max,
    };
    b->k.gemm(&g);
}

/* Output row oy: its depthwise row, then the project (and the residual) into y; with an SE,
 * the depthwise row kept for the second pass and summed into band's sums instead. */
static void output_row(const void *block, const void *xv, void *yv, int oy,
                       const void *const *ring_rows, void *dwv, int band)
{
    const struct cc_fused_block *b = block;
    const float *rows[CC_FUSED_KMAX] = {0};
    for (int ky = 0; ky < b->ksize; ky++)
        rows[ky] = ring_rows[ky];
    if (!b->d.cse) {
        dw_row(b, rows, dwv);
        project_row(b, xv, yv, oy, dwv);
        return;
    }
    float *t = b->se + (size_t)oy * b->wo * b->cexp_pad;
    float *sums = b->se_sums + (size_t)band * b->cexp_pad;
    dw_row(b, rows, t);
    for (int p = 0; p < b->wo; p++)
        for (int c = 0; c < b->d.cexp; c++)
            sums[c] += t[(size_t)p * b->cexp_pad + c];
}

/* The padding (the zero row, the pad columns on either side, channels past cin without an
 * expand conv) of each band's ring is zero from init, and nothing writes it. */
static struct cc_fused_ring ring_of(const struct cc_fused_block *b)
{
    return (struct cc_fused_ring){
        .block = b,
        .h = b->d.h,
        .stride = b->d.stride,
        .ho = b->ho,
        .k = b->ksize,
        .pad = b->pad,
        .bands = b->bands,
        .row_bytes = ring_row(b) * sizeof(float),
        .band_bytes = b->scratch_floats * sizeof(float),
        .scratch = b->scratch,
        .expand = expand_row,
        .output = output_row,
    };
}

void cc_fused_block_band(const struct cc_fused_block *b, const float *x, float *y, int r0, int r1,
                         int band)
{
    if (b->d.cse)
        memset(b->se_sums + (size_t)band * b->cexp_pad, 0, (size_t)b->cexp_pad * sizeof(float));
    struct cc_fused_ring r = ring_of(b);
    cc_fused_ring_band(&r, x, y, r0, r1, band);
}

/* The SE's gate g from the bands' sums (band 0's become the mean): two 1x1 GEMMs of one pixel
 * with the kernels, then their activations. */
static void se_gate(const struct cc_fused_block *b)
{
    const struct cc_fused_block_desc *d = &b->d;
    float *mean = b->se_sums, scale = 1.0f / (float)(b->ho * b->wo);
    for (int i = 1; i < b->bands; i++)
        for (int c = 0; c < d->cexp; c++)
            mean[c] += b->se_sums[(size_t)i * b->cexp_pad + c];
    for (int c = 0; c < d->cexp; c++)
        mean[c] *= scale;
    struct cc_fused_gemm g1 = {
        .a = mean,
        .w = b->w1,
        .bias = b->b1,
        .m = 1,
        .k = d->cexp,
        .n = d->cse,
        .n_pad = b->cse_pad,
        .n_store = d->cse,
        .c = b->se_z,
        .lo = -INFINITY,
        .hi = INFINITY,
    };
    b->k.gemm(&g1);
    cc_ref_act_span(b->se_z, (size_t)d->cse, d->act_se1);
    struct cc_fused_gemm g2 = {
        .a = b->se_z,
        .w = b->w2,
        .bias = b->b2,
        .m = 1,
        .k = d->cse,
        .n = d->cexp,
        .n_pad = b->cexp_pad,
        .n_store = d->cexp,
        .c = b->se_g,
        .lo = -INFINITY,
        .hi = INFINITY,
    };
    b->k.gemm(&g2);
    cc_ref_act_span(b->se_g, (size_t)d->cexp, d->act_se2);
}

/* The SE's second pass over rows [r0, r1): the depthwise rows times g, then the project. */
static void se_project(const struct cc_fused_block *b, const float *x, float *y, int r0, int r1)
{
    for (int oy = r0; oy < r1; oy++) {
        float *t = b->se + (size_t)oy * b->wo * b->cexp_pad;
        for (int p = 0; p < b->wo; p++)
            for (int c = 0; c < b->d.cexp; c++)
                t[(size_t)p * b->cexp_pad + c] *= b->se_g[c];
        project_row(b, x, y, oy, t);
    }
}

struct run {
    const struct cc_fused_block *b;
    const float *x;
    float *y;
};

static void run_se_band(void *ctx, size_t band)
{
    const struct run *r = ctx;
    int ho = r->b->ho, n = r->b->bands, i = (int)band;
    se_project(r->b, r->x, r->y, ho * i / n, ho * (i + 1) / n);
}

void cc_fused_block_run(const struct cc_fused_block *b, const float *x, float *y,
                        pthreadpool_t pool)
{
    uint32_t flags = PTHREADPOOL_FLAG_DISABLE_DENORMALS;
    struct cc_fused_ring ring = ring_of(b);
    if (b->d.cse)
        memset(b->se_sums, 0, (size_t)b->bands * b->cexp_pad * sizeof(float));
    cc_fused_ring_run(&ring, x, y, pool,
                      flags | (b->yield && !b->d.cse ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
    if (!b->d.cse)
        return;
    struct run r = {b, x, y};
    se_gate(b);
    pthreadpool_parallelize_1d(pool, run_se_band, &r, (size_t)b->bands,
                               flags | (b->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
}

/* ------------------------------------------------------------------------------------------
 * In a graph
 */

const char *const cc_fused_mode_words[3] = {"measure", "off", "on"};

bool cc_fused_mode_parse(const char *value, enum cc_fused_mode *mode, struct cc_error *err)
{
    static const struct cc_env_word spec = {"CAMCLASS_CPU_FUSED", "a fused-block mode",
                                            "measure (the default), off or on", cc_fused_mode_words,
                                            3};
    int i;
    bool ok = cc_env_word_parse(&spec, value, &i, err);
    *mode = (enum cc_fused_mode)i;
    return ok;
}

/* Activation reads of tensor t in m. */
static int readers(const struct cc_model *m, int t)
{
    int n = 0;
    for (int k = 0; k < m->n_nodes; k++)
        for (int i = 0; i < m->nodes[k].n_inputs; i++)
            n += m->nodes[k].inputs[i] == t && !cc_tensor_is_const(&m->tensors[t]);
    return n;
}

/* Whether node k of m is a conv2d with a k x k kernel, stride, padding, clamp, one group (or
 * depthwise), whose output is an intermediate of a block when inner > 0 (inner readers, not
 * the output; then its activation may be hardswish too). */
static bool conv_is(const struct cc_model *m, int k, int kernel, int stride, bool dw, int inner)
{
    if (k < 0 || k >= m->n_nodes)
        return false;
    const struct cc_node *n = &m->nodes[k];
    if (n->op != CC_OP_CONV2D || n->n_inputs < 2 || !(inner ? is_inner_act : is_clamp)(n->act))
        return false;
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    const struct cc_tensor *x = &m->tensors[n->inputs[0]], *w = &m->tensors[n->inputs[1]];
    int pad = kernel / 2, y = n->outputs[0];
    bool shape = x->ndim == 4 && x->shape[0] == 1 && w->ndim == 4 && w->shape[2] == kernel &&
                 w->shape[3] == kernel && (w->dtype == CC_DTYPE_F32 || w->dtype == CC_DTYPE_I8);
    bool attrs = a->stride[0] == stride && a->stride[1] == stride && a->dilation[0] == 1 &&
                 a->dilation[1] == 1 && a->pad[0] == pad && a->pad[1] == pad && a->pad[2] == pad &&
                 a->pad[3] == pad &&
                 (dw ? a->groups == x->shape[1] && w->shape[0] == x->shape[1] && w->shape[1] == 1
                     : a->groups == 1);
    return shape && attrs && (!inner || (readers(m, y) == inner && m->output.tensor != y));
}

/* Whether node k of m has op, reads tensor in as its first input, and has its output read by
 * node k + 1 only. */
static bool feeds_next(const struct cc_model *m, int k, enum cc_op op, int in)
{
    if (k < 0 || k + 1 >= m->n_nodes || m->nodes[k].op != op || m->nodes[k].inputs[0] != in)
        return false;
    int y = m->nodes[k].outputs[0];
    return readers(m, y) == 1 && m->output.tensor != y;
}

/* Whether node k of m is a 1x1 conv (one group, stride 1, no padding) of a [1, C, 1, 1]
 * tensor, any activation: a squeeze-excitation's FC. */
static bool se_fc(const struct cc_model *m, int k)
{
    const struct cc_node *n = &m->nodes[k];
    const struct cc_tensor *x = &m->tensors[n->inputs[0]], *w = &m->tensors[n->inputs[1]];
    const struct cc_conv2d_attrs *a = &n->attrs.conv;
    return n->n_inputs >= 2 && x->ndim == 4 && x->shape[0] == 1 && x->shape[2] == 1 &&
           x->shape[3] == 1 && w->ndim == 4 && w->shape[2] == 1 && w->shape[3] == 1 &&
           (w->dtype == CC_DTYPE_F32 || w->dtype == CC_DTYPE_I8) && a->groups == 1 &&
           a->stride[0] == 1 && a->stride[1] == 1 && !a->pad[0] && !a->pad[1] && !a->pad[2] &&
           !a->pad[3];
}

/* The depthwise node of the block whose project conv is node p of m: p - 1, or p - 5 when
 * nodes p - 4 .. p - 1 are a squeeze-excitation of its output (fused_block.h). */
static int dw_node(const struct cc_model *m, int p)
{
    if (p < 5 || m->nodes[p - 1].op != CC_OP_MUL)
        return p - 1;
    const struct cc_node *mul = &m->nodes[p - 1], *dw = &m->nodes[p - 5];
    int t = dw->outputs[0], pool = m->nodes[p - 4].outputs[0], fc1 = m->nodes[p - 3].outputs[0];
    int gate = m->nodes[p - 2].outputs[0];
    bool chain = feeds_next(m, p - 4, CC_OP_GLOBAL_AVG_POOL, t) &&
                 feeds_next(m, p - 3, CC_OP_CONV2D, pool) && se_fc(m, p - 3) &&
                 feeds_next(m, p - 2, CC_OP_CONV2D, fc1) && se_fc(m, p - 2) &&
                 feeds_next(m, p - 1, CC_OP_MUL, mul->inputs[0]) && mul->n_inputs == 2 &&
                 ((mul->inputs[0] == t && mul->inputs[1] == gate) ||
                  (mul->inputs[1] == t && mul->inputs[0] == gate)) &&
                 cc_act_is_none(mul->act) && mul->outputs[0] == m->nodes[p].inputs[0];
    return chain ? p - 5 : p - 1;
}

/* f->owned[i] = node's input i (weights 1, bias 2) as f32; NULL for an absent bias. */
static bool take(const struct cc_model *m, const struct cc_node *node, int i,
                 struct cc_fused_match *f, int slot)
{
    if (i >= node->n_inputs)
        return true;
    const struct cc_tensor *t = &m->tensors[node->inputs[i]];
    if (!(f->owned[slot] = malloc((size_t)t->count * sizeof(float))))
        return false;
    cc_tensor_dequantize(t, f->owned[slot]);
    return true;
}

bool cc_fused_block_match(const struct cc_model *m, int p, struct cc_fused_match *f)
{
    if (p < 1 || p >= m->n_nodes)
        return false;
    int q = dw_node(m, p), r = q == p - 1 ? 1 : 2; // the depthwise, its output's readers
    *f = (struct cc_fused_match){.first = q, .last = p};
    const struct cc_node *pn = &m->nodes[p];
    int k = conv_is(m, q, 5, 1, true, r) || conv_is(m, q, 5, 2, true, r) ? 5 : 3;
    bool s1 = conv_is(m, q, k, 1, true, r), s2 = conv_is(m, q, k, 2, true, r);
    if (!conv_is(m, p, 1, 1, false, 0) || !(s1 || s2) ||
        (r == 1 && m->nodes[q].outputs[0] != pn->inputs[0]))
        return false;
    const struct cc_node *dn = &m->nodes[q], *en = NULL, *an = NULL;
    if (conv_is(m, q - 1, 1, 1, false, 1) && m->nodes[q - 1].outputs[0] == dn->inputs[0])
        en = &m->nodes[--f->first];
    f->x = en ? en->inputs[0] : dn->inputs[0];
    f->y = pn->outputs[0];
    const struct cc_tensor *x = &m->tensors[f->x], *y = &m->tensors[f->y];
    if (p + 1 < m->n_nodes) {
        const struct cc_node *a = &m->nodes[p + 1];
        bool adds = a->op == CC_OP_ADD && a->n_inputs == 2 && cc_act_is_none(a->act) &&
                    ((a->inputs[0] == f->y && a->inputs[1] == f->x) ||
                     (a->inputs[1] == f->y && a->inputs[0] == f->x));
        if (adds && readers(m, f->y) == 1 && m->output.tensor != f->y)
            an = a;
    }
    if (an) {
        f->last = p + 1;
        f->y = an->outputs[0];
    }
    f->d = (struct cc_fused_block_desc){
        .h = (int)x->shape[2],
        .w = (int)x->shape[3],
        .cin = (int)x->shape[1],
        .cexp = (int)m->tensors[dn->inputs[0]].shape[1],
        .cout = (int)y->shape[1],
        .stride = s1 ? 1 : 2,
        .kernel = k,
        .expand = en != NULL,
        .residual = an != NULL,
        .act_expand = en ? en->act : cc_act_none(),
        .act_dw = dn->act,
        .act_project = pn->act,
    };
    const struct cc_node *fc1 = r == 2 ? &m->nodes[q + 2] : NULL, *fc2 = fc1 ? fc1 + 1 : NULL;
    if (fc1) {
        f->d.cse = (int)m->tensors[fc1->inputs[1]].shape[0];
        f->d.act_se1 = fc1->act;
        f->d.act_se2 = fc2->act;
    }
    bool se = !fc1 || (take(m, fc1, 1, f, 6) && take(m, fc1, 2, f, 7) && take(m, fc2, 1, f, 8) &&
                       take(m, fc2, 2, f, 9));
    if (f->x == m->input.tensor || !se ||
        !(en ? take(m, en, 1, f, 0) && take(m, en, 2, f, 1) : true) || !take(m, dn, 1, f, 2) ||
        !take(m, dn, 2, f, 3) || !take(m, pn, 1, f, 4) || !take(m, pn, 2, f, 5)) {
        cc_fused_match_free(f);
        return false;
    }
    f->d.we = f->owned[0], f->d.be = f->owned[1], f->d.wd = f->owned[2];
    f->d.bd = f->owned[3], f->d.wp = f->owned[4], f->d.bp = f->owned[5];
    f->d.w1 = f->owned[6], f->d.b1 = f->owned[7], f->d.w2 = f->owned[8], f->d.b2 = f->owned[9];
    struct cc_error ignored = {0};
    if (!cc_fused_block_check(&f->d, &ignored)) {
        cc_fused_match_free(f);
        return false;
    }
    return true;
}

void cc_fused_match_free(struct cc_fused_match *f)
{
    for (int i = 0; i < 10; i++) {
        free(f->owned[i]);
        f->owned[i] = NULL;
    }
}
