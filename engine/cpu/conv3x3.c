/* camclass — the CPU backend's direct k x k convolution (see conv3x3.h): packing, the
 * indirection buffer, the task driver and the portable C kernel. The x86-64 kernels are in
 * conv3x3_x86.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv3x3.h"

enum {
    MR = CC_CONV3X3_MR,
    NR = CC_CONV3X3_NR,
    // Floats of one panel's weights a tap group keeps in L2 (384 KB: Zen 3's L2 is 512 KB,
    // Zen 5's 1 MB, and the inputs and outputs of the blocks pass through it too).
    GROUP_FLOATS = 96 * 1024,
    TASKS_PER_THREAD = 4, // enough tasks that a thread slowed by the host's load is waited on
                          // for a quarter of its share, not all of it
};

bool cc_conv3x3_mode_parse(const char *value, enum cc_conv3x3_mode *mode, struct cc_error *err)
{
    static const char *const names[] = {"measure", "off", "on", "winograd", "winograd4"};
    *mode = CC_CONV3X3_MODE_MEASURE;
    for (int i = 0; i < 5; i++)
        if (!value || !value[0] || !strcmp(value, names[i])) {
            *mode = value && value[0] ? (enum cc_conv3x3_mode)i : CC_CONV3X3_MODE_MEASURE;
            return true;
        }
    return cc_error_set(err,
                        "CAMCLASS_CPU_CONV3X3=\"%s\" is not a direct-convolution mode: use "
                        "measure (the default), off, on, winograd or winograd4",
                        value);
}

bool cc_conv3x3_applies(const struct cc_model *m, const struct cc_node *node)
{
    if (node->op != CC_OP_CONV2D || node->attrs.conv.groups != 1 || node->act.kind != CC_ACT_CLAMP)
        return false;
    const struct cc_tensor *w = &m->tensors[node->inputs[1]];
    return w->shape[2] * w->shape[3] > 1;
}

/* ------------------------------------------------------------------------------------------
 * Portable C kernel: NR accumulators a row, in loops compilers vectorise
 */

static void tile_c(const struct cc_conv3x3_tile *t)
{
    float acc[MR][NR];
    for (int j = 0; j < MR; j++)
        memcpy(acc[j], t->init ? t->init : t->y + (size_t)j * t->ldy, sizeof(acc[j]));
    for (int tap = 0; tap < t->taps; tap++) {
        const float *w = t->w + (size_t)tap * t->c * NR;
        for (int j = 0; j < MR; j++) {
            const float *a = t->rows[tap * MR + j];
            for (int k = 0; k < t->c; k++)
                for (int o = 0; o < NR; o++)
                    acc[j][o] += a[k] * w[(size_t)k * NR + o];
        }
    }
    for (int j = 0; j < MR; j++)
        for (int o = 0; o < NR; o++) { // NaN stays NaN, as in the x86 kernels
            float v = acc[j][o] + (t->res ? t->res[(size_t)j * t->ldr + o] : 0.0f);
            v = v < t->lo ? t->lo : v;
            t->y[(size_t)j * t->ldy + o] = v > t->hi ? t->hi : v;
        }
}

typedef cc_conv3x3_tile_fn tile_fn;

static tile_fn tile_for(enum cc_stem_isa isa)
{
#if defined(__x86_64__)
    if (isa == CC_STEM_AVX512)
        return cc_conv3x3_tile_avx512;
    if (isa == CC_STEM_AVX2)
        return cc_conv3x3_tile_avx2;
#endif
    (void)isa;
    return tile_c;
}

/* ------------------------------------------------------------------------------------------
 * Packing
 */

/* (n, c, kh, kw) weights into panels of NR output channels: (panels, taps, c, NR). */
static void pack_weights(const struct cc_conv3x3 *p, const float *w)
{
    const struct cc_conv3x3_desc *d = &p->d;
    for (int o = 0; o < d->n; o++)
        for (int t = 0; t < p->taps; t++)
            for (int ch = 0; ch < d->c; ch++)
                p->w[(((size_t)(o / NR) * p->taps + t) * d->c + ch) * NR + o % NR] =
                    w[((size_t)o * d->c + ch) * p->taps + t];
}

/* Every block's input rows per tap: the zero row where the tap is in the padding, block b's
 * missing pixels (past the last) as its first. */
static void make_indirection(struct cc_conv3x3 *p, const float *x)
{
    const struct cc_conv3x3_desc *d = &p->d;
    const struct cc_conv2d_attrs *a = &d->attrs;
    const int pixels = d->ho * d->wo;
    for (int b = 0; b < p->blocks; b++)
        for (int j = 0; j < MR; j++) {
            int px = b * MR + j < pixels ? b * MR + j : b * MR;
            int oy = px / d->wo, ox = px % d->wo;
            for (int t = 0; t < p->taps; t++) {
                int iy = oy * a->stride[0] - a->pad[0] + t / d->kw * a->dilation[0];
                int ix = ox * a->stride[1] - a->pad[1] + t % d->kw * a->dilation[1];
                bool in = iy >= 0 && iy < d->h && ix >= 0 && ix < d->w;
                p->indir[((size_t)b * p->taps + t) * MR + j] =
                    in ? x + ((size_t)iy * d->w + ix) * d->c : p->zeros;
            }
        }
}

static void *aligned_floats(size_t n)
{
    size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
    void *v = aligned_alloc(64, bytes ? bytes : 64);
    if (v)
        memset(v, 0, bytes ? bytes : 64);
    return v;
}

bool cc_conv3x3_init(struct cc_conv3x3 *p, const struct cc_conv3x3_desc *d, const float *w,
                     const float *bias, const float *x, float *y, enum cc_conv3x3_algo algo,
                     enum cc_stem_isa isa, size_t threads, struct cc_error *err)
{
    *p = (struct cc_conv3x3){.d = *d, .x = x, .y = y, .isa = isa};
    p->taps = d->kh * d->kw;
    p->panels = (d->n + NR - 1) / NR;
    p->blocks = (d->ho * d->wo + MR - 1) / MR;
    size_t group = GROUP_FLOATS / ((size_t)d->c * NR);
    p->group = group < 1 ? 1 : group > (size_t)p->taps ? p->taps : (int)group;
    size_t want = threads > 1 ? (TASKS_PER_THREAD * threads + p->panels - 1) / p->panels : 1;
    p->chunks = want > (size_t)p->blocks ? p->blocks : (int)want;
    p->bias = aligned_floats((size_t)p->panels * NR);
    p->zeros = aligned_floats((size_t)(d->c > NR ? d->c : NR));
    bool ok = p->bias && p->zeros;
    if (ok && algo != CC_CONV3X3_DIRECT && cc_conv3x3_wino_applies(d)) {
        ok = cc_conv3x3_wino_init(p, w, algo == CC_CONV3X3_WINOGRAD4 ? 4 : 2, threads);
    } else if (ok) {
        p->w = aligned_floats((size_t)p->panels * p->taps * d->c * NR);
        p->indir = malloc((size_t)p->blocks * p->taps * MR * sizeof(*p->indir));
        ok = p->w && p->indir;
    }
    if (!ok) {
        cc_conv3x3_finish(p);
        return cc_error_set(err, "cpu backend: out of memory for a %dx%d convolution's weights",
                            d->kh, d->kw);
    }
    if (bias)
        memcpy(p->bias, bias, (size_t)d->n * sizeof(float));
    if (!p->wino) {
        pack_weights(p, w);
        make_indirection(p, x);
    }
    return true;
}

/* Whether [a, a + an) and [b, b + bn) (floats) share memory. */
static bool overlap(const float *a, size_t an, const float *b, size_t bn)
{
    return a < b + bn && b < a + an;
}

bool cc_conv3x3_fuse_residual(struct cc_conv3x3 *p, const float *res, float *y, struct cc_act act)
{
    const struct cc_conv3x3_desc *d = &p->d;
    const size_t xn = (size_t)d->h * d->w * d->c, yn = (size_t)d->ho * d->wo * d->n;
    bool grouped = !p->wino && p->group < p->taps;
    if (!cc_act_is_none(d->act) || act.kind != CC_ACT_CLAMP || overlap(y, yn, p->x, xn) ||
        (res != y && overlap(y, yn, res, yn)) || (res == y && grouped))
        return false;
    p->res = res;
    p->y = y;
    p->d.act = act;
    return true;
}

void cc_conv3x3_finish(struct cc_conv3x3 *p)
{
    free(p->w);
    free(p->bias);
    free(p->zeros);
    free(p->indir);
    free(p->scratch);
    free(p->busy);
    free(p->slot_block);
    p->w = p->bias = p->zeros = p->scratch = NULL;
    p->busy = NULL;
    p->slot_block = NULL;
    p->indir = NULL;
}

/* ------------------------------------------------------------------------------------------
 * Tasks: panel i / chunks, pixel blocks of run i % chunks, tap group by tap group
 */

/* Copies rows x cols floats between a tile of row stride lds and one of ldd. */
static void copy_tile(float *dst, size_t ldd, const float *src, size_t lds, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        memcpy(dst + r * ldd, src + r * lds, (size_t)cols * sizeof(float));
}

/* Pixel block b of panel, taps [t0, t0 + taps): straight into y where the block is whole,
 * else through a tile of its own. */
static void run_block(const struct cc_conv3x3 *p, tile_fn tile, int panel, int b, int t0, int taps)
{
    const struct cc_conv3x3_desc *d = &p->d;
    const int pixels = d->ho * d->wo, mr = pixels - b * MR < MR ? pixels - b * MR : MR;
    const int nr = d->n - panel * NR < NR ? d->n - panel * NR : NR;
    const bool last = t0 + taps == p->taps;
    const size_t at = (size_t)b * MR * d->n + (size_t)panel * NR;
    float *y = p->y + at;
    struct cc_conv3x3_tile t = {
        .rows = p->indir + ((size_t)b * p->taps + t0) * MR,
        .w = p->w + ((size_t)panel * p->taps + t0) * d->c * NR,
        .init = t0 == 0 ? p->bias + (size_t)panel * NR : NULL,
        .y = y,
        .ldy = (size_t)d->n,
        .res = last && p->res ? p->res + at : NULL,
        .ldr = (size_t)d->n,
        .taps = taps,
        .c = d->c,
        .lo = last ? d->act.min : -INFINITY,
        .hi = last ? d->act.max : INFINITY,
    };
    if (mr == MR && nr == NR) {
        tile(&t);
        return;
    }
    _Alignas(64) float own[MR * NR] = {0}, res[MR * NR] = {0};
    if (t0 > 0)
        copy_tile(own, NR, y, (size_t)d->n, mr, nr);
    if (t.res)
        copy_tile(res, NR, t.res, (size_t)d->n, mr, nr);
    t.y = own;
    t.ldy = t.ldr = NR;
    t.res = t.res ? res : NULL;
    tile(&t);
    copy_tile(y, (size_t)d->n, own, NR, mr, nr);
}

static void run_task(void *ctx, size_t i)
{
    const struct cc_conv3x3 *p = ctx;
    const tile_fn tile = tile_for(p->isa);
    const int panel = (int)i / p->chunks, chunk = (int)i % p->chunks;
    const int b0 = (int)((size_t)p->blocks * chunk / p->chunks);
    const int b1 = (int)((size_t)p->blocks * (chunk + 1) / p->chunks);
    for (int t0 = 0; t0 < p->taps; t0 += p->group) {
        int taps = p->taps - t0 < p->group ? p->taps - t0 : p->group;
        for (int b = b0; b < b1; b++)
            run_block(p, tile, panel, b, t0, taps);
    }
}

void cc_conv3x3_run(const struct cc_conv3x3 *p, pthreadpool_t pool)
{
    if (p->wino) {
        cc_conv3x3_wino_run(p, tile_for(p->isa), pool);
        return;
    }
    pthreadpool_parallelize_1d(pool, run_task, (void *)p, (size_t)p->panels * p->chunks,
                               PTHREADPOOL_FLAG_DISABLE_DENORMALS |
                                   (p->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
}
