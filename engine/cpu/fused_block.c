/* camclass — the fused inverted-residual block (see fused_block.h): the check, the packing,
 * the band driver and the portable C kernels. The x86-64 kernels are in fused_block_x86.c. */
#include <stdlib.h>
#include <string.h>

#include "fused_block.h"

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
    else if ((d->expand && !d->we) || !d->wd || !d->wp)
        bad = "missing weights";
    if (bad)
        return cc_error_set(err, "fused block: %s (%dx%d, %d -> %d -> %d, stride %d)", bad, d->h,
                            d->w, d->cin, d->cexp, d->cout, d->stride);
    return true;
}

static int round_up(int n)
{
    return (n + PACK - 1) / PACK * PACK;
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
    if (!b->scratch || !pack(b, d)) {
        cc_fused_block_finish(b);
        return cc_error_set(err, "fused block: out of memory");
    }
    return true;
}

void cc_fused_block_finish(struct cc_fused_block *b)
{
    float **owned[] = {&b->we, &b->be, &b->wd, &b->bd, &b->wp, &b->bp, &b->scratch};
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
    return (b->scratch_floats + weights) * sizeof(float);
}

/* ------------------------------------------------------------------------------------------
 * Bands
 */

/* Input row iy expanded into the ring row e (columns pad .. pad + w - 1; the pad columns on
 * either side stay zero). */
static void expand_row(const struct cc_fused_block *b, const float *x, int iy, float *e)
{
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

/* Output row oy: its depthwise row into dw (rows: the k expanded rows it reads), then the
 * project conv (and the residual) into y. */
static void output_row(const struct cc_fused_block *b, const float *x, float *y, int oy,
                       const float *const rows[CC_FUSED_KMAX], float *dw)
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

void cc_fused_block_band(const struct cc_fused_block *b, const float *x, float *y, int r0, int r1,
                         int band)
{
    size_t row = ring_row(b);
    float *ring = b->scratch + (size_t)band * b->scratch_floats, *zero = ring + b->ksize * row;
    float *dw = zero + row;
    // The ring's padding (the zero row, the pad columns on either side, channels past cin
    // without an expand conv) is zero from init, and nothing writes it.
    int held[CC_FUSED_KMAX] = {-1, -1, -1, -1, -1}; // the input row in each ring slot
    for (int oy = r0; oy < r1; oy++) {
        const float *rows[CC_FUSED_KMAX] = {0};
        for (int ky = 0; ky < b->ksize; ky++) {
            int iy = oy * b->d.stride - b->pad + ky, slot = iy % b->ksize;
            if (iy < 0 || iy >= b->d.h) {
                rows[ky] = zero;
                continue;
            }
            if (held[slot] != iy)
                expand_row(b, x, iy, ring + slot * row);
            held[slot] = iy;
            rows[ky] = ring + slot * row;
        }
        output_row(b, x, y, oy, rows, dw);
    }
}

struct run {
    const struct cc_fused_block *b;
    const float *x;
    float *y;
};

static void run_band(void *ctx, size_t band)
{
    const struct run *r = ctx;
    int ho = r->b->ho, n = r->b->bands, i = (int)band;
    cc_fused_block_band(r->b, r->x, r->y, ho * i / n, ho * (i + 1) / n, i);
}

void cc_fused_block_run(const struct cc_fused_block *b, const float *x, float *y,
                        pthreadpool_t pool)
{
    struct run r = {b, x, y};
    pthreadpool_parallelize_1d(pool, run_band, &r, (size_t)b->bands,
                               PTHREADPOOL_FLAG_DISABLE_DENORMALS |
                                   (b->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
}

/* ------------------------------------------------------------------------------------------
 * In a graph
 */

bool cc_fused_mode_parse(const char *value, enum cc_fused_mode *mode, struct cc_error *err)
{
    *mode = CC_FUSED_MEASURE;
    if (!value || !value[0] || !strcmp(value, "measure"))
        return true;
    if (!strcmp(value, "off") || !strcmp(value, "on")) {
        *mode = !strcmp(value, "off") ? CC_FUSED_OFF : CC_FUSED_ON;
        return true;
    }
    return cc_error_set(err,
                        "CAMCLASS_CPU_FUSED=\"%s\" is not a fused-block mode: use measure (the "
                        "default), off or on",
                        value);
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
 * depthwise), whose output is an intermediate of a block (only one reader, not the output;
 * then its activation may be hardswish too). */
static bool conv_is(const struct cc_model *m, int k, int kernel, int stride, bool dw, bool inner)
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
    return shape && attrs && (!inner || (readers(m, y) == 1 && m->output.tensor != y));
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
    *f = (struct cc_fused_match){.first = p - 1, .last = p};
    const struct cc_node *pn = &m->nodes[p];
    int k = conv_is(m, p - 1, 5, 1, true, true) || conv_is(m, p - 1, 5, 2, true, true) ? 5 : 3;
    bool s1 = conv_is(m, p - 1, k, 1, true, true), s2 = conv_is(m, p - 1, k, 2, true, true);
    if (!conv_is(m, p, 1, 1, false, false) || !(s1 || s2) ||
        m->nodes[p - 1].outputs[0] != pn->inputs[0])
        return false;
    const struct cc_node *dn = &m->nodes[p - 1], *en = NULL, *an = NULL;
    if (conv_is(m, p - 2, 1, 1, false, true) && m->nodes[p - 2].outputs[0] == dn->inputs[0])
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
    if (f->x == m->input.tensor || !(en ? take(m, en, 1, f, 0) && take(m, en, 2, f, 1) : true) ||
        !take(m, dn, 1, f, 2) || !take(m, dn, 2, f, 3) || !take(m, pn, 1, f, 4) ||
        !take(m, pn, 2, f, 5)) {
        cc_fused_match_free(f);
        return false;
    }
    f->d.we = f->owned[0], f->d.be = f->owned[1], f->d.wd = f->owned[2];
    f->d.bd = f->owned[3], f->d.wp = f->owned[4], f->d.bp = f->owned[5];
    struct cc_error ignored = {0};
    if (!cc_fused_block_check(&f->d, &ignored)) {
        cc_fused_match_free(f);
        return false;
    }
    return true;
}

void cc_fused_match_free(struct cc_fused_match *f)
{
    for (int i = 0; i < 6; i++) {
        free(f->owned[i]);
        f->owned[i] = NULL;
    }
}
