/* camclass — the direct convolution's Winograd way (see conv3x3.h): F(2x2, 3x3) for 3x3
 * convolutions with stride 1, padding 1 and dilation 1 (resnet's stride-1 layers).
 *
 * Each 2x2 block of output pixels (a tile) is A^T [(G g G^T) . (B^T d B)] A of the 4x4 input
 * patch d under it: 16 products per input and output channel pair instead of 36, so 2.25x
 * fewer multiplies. The 16 element-wise products summed over input channels are 16 GEMMs
 * (tiles x c) x (c x n), run by the direct way's own MR x NR tile kernel (a 1-tap convolution
 * whose input rows are the transformed tiles), on blocks of tiles whose transformed inputs and
 * products fit in L2 with the transformed weights of one panel. Transforms are C loops over
 * the channels (contiguous in NHWC), which the compiler vectorises.
 *
 * Measured error against the reference (test_conv3x3: random weights and inputs, 35 shapes):
 * at most 9.7e-7 x max|out|, the direct way 2.6e-6 (its sums are 9 c terms long, these 4 x c
 * per product); F(2x2, 3x3)'s constants are 0, +-1 and 1/2, exact in binary.
 *
 * F(4x4, 3x3) (Lavin and Gray's matrices): 4x4 output tiles from 6x6 patches, 36 products per
 * channel pair for 16 outputs instead of 16 for 4: 1.78x fewer multiplies again, for larger
 * transforms (6x6, constants up to 8 and 1/24: G's sixths are not exact in binary) and a
 * larger error: at most 1.5e-5 x max|out| in test_conv3x3 (the tolerance is 1e-4). A layer
 * whose size is not a multiple of 4 computes the padding of its last tiles (7x7: 8x8).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv3x3.h"

enum {
    MR = CC_CONV3X3_MR,
    NR = CC_CONV3X3_NR,
    SLOT_FLOATS = 96 * 1024, // a task's transformed inputs and products (384 KB, in L2)
    // Floats after each of the 16 planes of a slot: a transform touches all 16 at once, and
    // planes a multiple of 4 KB apart (48 tiles x 64 channels) all fell in one L1 set (56x56
    // x 64 ran 2.5x slower than the direct way; with the skew 0.6x its time).
    SKEW = 16,
    TASKS_PER_THREAD = 4, // as the direct way's (conv3x3.c)
};

/* The transforms are loops over channels that the compiler vectorises: on x86-64 in three
 * versions that the loader picks from the CPU (AVX-512 ones 2x faster than the SSE2 baseline's).
 * Not under ThreadSanitizer: the loader runs the clones' resolver while it relocates, before
 * the sanitizer's runtime is up, and GCC instruments the resolver: every start crashed. */
#if defined(__x86_64__) && defined(__has_attribute) && !defined(__SANITIZE_THREAD__)
#if __has_attribute(target_clones)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef VECTOR_CLONES
#define VECTOR_CLONES
#endif

/* Floats from one of a slot's 16 planes of v (c: p->d.c) or m (c: NR) to the next. */
static size_t plane(const struct cc_conv3x3 *p, int c)
{
    return (size_t)p->tile_block * c + SKEW;
}

bool cc_conv3x3_wino_applies(const struct cc_conv3x3_desc *d)
{
    const struct cc_conv2d_attrs *a = &d->attrs;
    return d->kh == 3 && d->kw == 3 && a->stride[0] == 1 && a->stride[1] == 1 &&
           a->dilation[0] == 1 && a->dilation[1] == 1 && a->pad[0] == 1 && a->pad[1] == 1 &&
           d->ho == d->h && d->wo == d->w;
}

/* The 16 transformed weights u = G g G^T of one 3x3 kernel g (row-major), G the 4x3
 * [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]. */
static void transform_kernel(const float g[9], float u[16])
{
    float t[4][3]; // G g
    for (int j = 0; j < 3; j++) {
        t[0][j] = g[j];
        t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
        t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
        t[3][j] = g[6 + j];
    }
    for (int i = 0; i < 4; i++) {
        u[i * 4 + 0] = t[i][0];
        u[i * 4 + 1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
        u[i * 4 + 2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
        u[i * 4 + 3] = t[i][2];
    }
}

/* The 36 transformed weights u = G g G^T of F(4x4, 3x3) (Lavin and Gray), G the 6x3
 * [[1/4, 0, 0], [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6], [1/24, 1/12, 1/6], [1/24, -1/12, 1/6],
 * [0, 0, 1]]; in double, rounded once. */
static void transform_kernel4(const float g[9], float u[36])
{
    static const double G[6][3] = {{1.0 / 4, 0, 0},
                                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                   {0, 0, 1}};
    double t[6][3]; // G g
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 3; j++)
            t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            u[i * 6 + j] = (float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
}

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* The tasks: tile blocks x panel groups. One thread: as few tile blocks as let a block's
 * transformed inputs and products fit a slot, all panels each. More threads: at least
 * TASKS_PER_THREAD a thread where the layer has them. Tile blocks alone gave resnet18's small
 * layers 1-3 tasks at 2 threads (7x7 F(4x4, 3x3): 4 tiles, one task, one thread busy), each
 * task reading all of the layer's transformed weights (16.8 MB at 7x7 x 512, F(2x2)). So where
 * the weights outweigh the transformed inputs (14x14, 7x7) the panels are split first, into
 * as few tile blocks as the count then needs (each panel group transforms its blocks' inputs
 * again: cheap next to the weights); elsewhere the tiles, then the panels where still short. */
static void split_tasks(struct cc_conv3x3 *p, size_t threads)
{
    const int c = p->d.c, blocks = ceil_div(p->tiles_y * p->tiles_x, MR); // MR-tile blocks
    int fit = SLOT_FLOATS / (p->taps * (c + NR)) / MR, want = (int)threads * TASKS_PER_THREAD;
    int tb = ceil_div(blocks, fit < 1 ? 1 : fit), pg = 1;
    if (threads > 1 && tb < want) {
        double weights = (double)p->d.n * c, inputs = (double)blocks * MR * c;
        pg = weights > inputs ? want : ceil_div(want, tb);
        pg = pg > p->panels ? p->panels : pg;
        tb = weights > inputs || tb < ceil_div(want, pg) ? ceil_div(want, pg) : tb;
        tb = tb > blocks ? blocks : tb;
    }
    p->tile_blocks = tb;
    p->tile_block = ceil_div(blocks, tb) * MR;
    p->panel_groups = pg;
}

bool cc_conv3x3_wino_init(struct cc_conv3x3 *p, const float *w, int m, size_t threads)
{
    const struct cc_conv3x3_desc *d = &p->d;
    p->wino = true;
    p->wino_m = m;
    p->taps = (m + 2) * (m + 2);
    p->tiles_y = (d->ho + m - 1) / m;
    p->tiles_x = (d->wo + m - 1) / m;
    split_tasks(p, threads);
    p->slot_floats = (size_t)p->taps * (plane(p, d->c) + plane(p, NR));
    p->slots = (int)(threads ? threads : 1);
    const size_t wfloats = (size_t)p->panels * p->taps * d->c * NR;
    p->w = aligned_alloc(64, wfloats * sizeof(float));
    p->scratch = malloc((size_t)p->slots * p->slot_floats * sizeof(float));
    p->busy = calloc((size_t)p->slots, sizeof(*p->busy));
    p->slot_block = malloc((size_t)p->slots * sizeof(*p->slot_block));
    if (!p->w || !p->scratch || !p->busy || !p->slot_block)
        return false;
    memset(p->w, 0, wfloats * sizeof(float));
    float u[36];
    for (int o = 0; o < d->n; o++)
        for (int ch = 0; ch < d->c; ch++) {
            if (m == 4)
                transform_kernel4(w + ((size_t)o * d->c + ch) * 9, u);
            else
                transform_kernel(w + ((size_t)o * d->c + ch) * 9, u);
            for (int e = 0; e < p->taps; e++)
                p->w[(((size_t)(o / NR) * p->taps + e) * d->c + ch) * NR + o % NR] = u[e];
        }
    return true;
}

/* ------------------------------------------------------------------------------------------
 * Transforms
 */

/* o = B^T (d0, d1, d2, d3) for n channels, B^T the 4x4 [[1, 0, -1, 0], [0, 1, 1, 0],
 * [0, -1, 1, 0], [0, 1, 0, -1]]: the input transform's step over columns and over rows. */
VECTOR_CLONES static void bt4(const float *restrict d0, const float *restrict d1,
                              const float *restrict d2, const float *restrict d3,
                              float *restrict o0, float *restrict o1, float *restrict o2,
                              float *restrict o3, int n)
{
    for (int k = 0; k < n; k++) {
        o0[k] = d0[k] - d2[k];
        o1[k] = d1[k] + d2[k];
        o2[k] = d2[k] - d1[k];
        o3[k] = d1[k] - d3[k];
    }
}

/* V[e][t] (c floats each, planes estride apart, e = 0..15) = B^T d B of tile t's 4x4 input
 * patch d; rows outside the input read zeros. Channels in chunks of CHUNK: B^T d's chunk in a
 * buffer of 16 x CHUNK, then B^T of its rows. */
static void transform_input(const struct cc_conv3x3 *p, const float *x, int tile, float *v,
                            size_t estride)
{
    enum { CHUNK = 64 };
    const struct cc_conv3x3_desc *d = &p->d;
    const int ty = tile / p->tiles_x, tx = tile % p->tiles_x, c = d->c;
    const float *r[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int iy = 2 * ty - 1 + i, ix = 2 * tx - 1 + j;
            bool in = iy >= 0 && iy < d->h && ix >= 0 && ix < d->w;
            r[i * 4 + j] = in ? x + ((size_t)iy * d->w + ix) * c : p->zeros;
        }
    _Alignas(64) float t[16][CHUNK]; // (B^T d)[i][j] at t[i * 4 + j]
    for (int k = 0; k < c; k += CHUNK) {
        int n = c - k < CHUNK ? c - k : CHUNK;
        for (int j = 0; j < 4; j++)
            bt4(r[j] + k, r[4 + j] + k, r[8 + j] + k, r[12 + j] + k, t[j], t[4 + j], t[8 + j],
                t[12 + j], n);
        for (int i = 0; i < 4; i++) {
            float *o = v + (size_t)(i * 4) * estride + k;
            bt4(t[i * 4], t[i * 4 + 1], t[i * 4 + 2], t[i * 4 + 3], o, o + estride, o + 2 * estride,
                o + 3 * estride, n);
        }
    }
}

/* y[o] = clamp(v[o] + res[o]) (res NULL: clamp(v[o])) for n channels; y may be res. Inlined
 * into each of transform_output's versions, vectorised as that one. */
static inline void store_clamped(float *y, const float *v, const float *res, int n, float lo,
                                 float hi)
{
    for (int o = 0; o < n; o++) { // NaN stays NaN, as in the kernels
        float a = res ? v[o] + res[o] : v[o];
        a = a < lo ? lo : a;
        y[o] = a > hi ? hi : a;
    }
}

/* o = B^T (d0..d5) for n channels, B^T F(4x4, 3x3)'s 6x6 [[4, 0, -5, 0, 1, 0],
 * [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0],
 * [0, 4, 0, -5, 0, 1]]: the input transform's step over columns and over rows. */
VECTOR_CLONES static void bt6(const float *const *d, float *const *o, int n)
{
    const float *restrict d0 = d[0], *restrict d1 = d[1], *restrict d2 = d[2];
    const float *restrict d3 = d[3], *restrict d4 = d[4], *restrict d5 = d[5];
    float *restrict o0 = o[0], *restrict o1 = o[1], *restrict o2 = o[2];
    float *restrict o3 = o[3], *restrict o4 = o[4], *restrict o5 = o[5];
    for (int k = 0; k < n; k++) {
        float a = d4[k] - 4.0f * d2[k], b = d3[k] - 4.0f * d1[k];
        float c = d4[k] - d2[k], e = 2.0f * (d3[k] - d1[k]);
        o0[k] = 4.0f * d0[k] - 5.0f * d2[k] + d4[k];
        o1[k] = a + b;
        o2[k] = a - b;
        o3[k] = c + e;
        o4[k] = c - e;
        o5[k] = 4.0f * d1[k] - 5.0f * d3[k] + d5[k];
    }
}

/* transform_input for F(4x4, 3x3): 6x6 patches at a stride of 4, 36 planes. */
static void transform_input4(const struct cc_conv3x3 *p, const float *x, int tile, float *v,
                             size_t estride)
{
    enum { CHUNK = 64 };
    const struct cc_conv3x3_desc *d = &p->d;
    const int ty = tile / p->tiles_x, tx = tile % p->tiles_x, c = d->c;
    const float *r[36];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            int iy = 4 * ty - 1 + i, ix = 4 * tx - 1 + j;
            bool in = iy >= 0 && iy < d->h && ix >= 0 && ix < d->w;
            r[i * 6 + j] = in ? x + ((size_t)iy * d->w + ix) * c : p->zeros;
        }
    _Alignas(64) float t[36][CHUNK]; // (B^T d)[i][j] at t[i * 6 + j]
    for (int k = 0; k < c; k += CHUNK) {
        int n = c - k < CHUNK ? c - k : CHUNK;
        for (int j = 0; j < 6; j++) {
            const float *in[6];
            float *out[6];
            for (int i = 0; i < 6; i++)
                in[i] = r[i * 6 + j] + k, out[i] = t[i * 6 + j];
            bt6(in, out, n);
        }
        for (int i = 0; i < 6; i++) {
            const float *in[6];
            float *out[6];
            for (int j = 0; j < 6; j++)
                in[j] = t[i * 6 + j], out[j] = v + (size_t)(i * 6 + j) * estride + k;
            bt6(in, out, n);
        }
    }
}

/* Tile t's 2x2 outputs, channels [o0, o0 + nr) = clamp(A^T m A + bias (+ res)), m[e] (NR
 * floats each, estride apart), A^T the 2x4 [[1, 1, 1, 0], [0, 1, -1, -1]]; pixels past the
 * output's edge are not written. */
VECTOR_CLONES static void transform_output(const struct cc_conv3x3 *p, const float *m,
                                           size_t estride, int tile, int o0, int nr)
{
    const struct cc_conv3x3_desc *d = &p->d;
    const int ty = tile / p->tiles_x, tx = tile % p->tiles_x;
    const float *bias = p->bias + o0;
    float out[4][NR];
    for (int o = 0; o < NR; o++) {
        float s[2][4]; // A^T m
        for (int j = 0; j < 4; j++) {
            float m0 = m[(size_t)j * estride + o], m1 = m[(size_t)(4 + j) * estride + o];
            float m2 = m[(size_t)(8 + j) * estride + o], m3 = m[(size_t)(12 + j) * estride + o];
            s[0][j] = m0 + m1 + m2;
            s[1][j] = m1 - m2 - m3;
        }
        for (int i = 0; i < 2; i++) {
            out[i * 2][o] = s[i][0] + s[i][1] + s[i][2] + bias[o];
            out[i * 2 + 1][o] = s[i][1] - s[i][2] - s[i][3] + bias[o];
        }
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (2 * ty + i < d->ho && 2 * tx + j < d->wo) {
                size_t at = ((size_t)(2 * ty + i) * d->wo + 2 * tx + j) * d->n + o0;
                store_clamped(p->y + at, out[i * 2 + j], p->res ? p->res + at : NULL, nr,
                              d->act.min, d->act.max);
            }
}

/* transform_output for F(4x4, 3x3): 4x4 outputs from 36 products, A^T the 4x6
 * [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]. */
VECTOR_CLONES static void transform_output4(const struct cc_conv3x3 *p, const float *m,
                                            size_t estride, int tile, int o0, int nr)
{
    const struct cc_conv3x3_desc *d = &p->d;
    const int ty = tile / p->tiles_x, tx = tile % p->tiles_x;
    const float *bias = p->bias + o0;
    float out[16][NR];
    for (int o = 0; o < NR; o++) {
        float s[4][6]; // A^T m
        for (int j = 0; j < 6; j++) {
            float m0 = m[(size_t)j * estride + o], m1 = m[(size_t)(6 + j) * estride + o];
            float m2 = m[(size_t)(12 + j) * estride + o], m3 = m[(size_t)(18 + j) * estride + o];
            float m4 = m[(size_t)(24 + j) * estride + o], m5 = m[(size_t)(30 + j) * estride + o];
            float a = m1 + m2, b = m1 - m2, c = m3 + m4, e = m3 - m4;
            s[0][j] = m0 + a + c;
            s[1][j] = b + 2.0f * e;
            s[2][j] = a + 4.0f * c;
            s[3][j] = b + 8.0f * e + m5;
        }
        for (int i = 0; i < 4; i++) {
            float a = s[i][1] + s[i][2], b = s[i][1] - s[i][2];
            float c = s[i][3] + s[i][4], e = s[i][3] - s[i][4];
            out[i * 4][o] = s[i][0] + a + c + bias[o];
            out[i * 4 + 1][o] = b + 2.0f * e + bias[o];
            out[i * 4 + 2][o] = a + 4.0f * c + bias[o];
            out[i * 4 + 3][o] = b + 8.0f * e + s[i][5] + bias[o];
        }
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if (4 * ty + i < d->ho && 4 * tx + j < d->wo) {
                size_t at = ((size_t)(4 * ty + i) * d->wo + 4 * tx + j) * d->n + o0;
                store_clamped(p->y + at, out[i * 4 + j], p->res ? p->res + at : NULL, nr,
                              d->act.min, d->act.max);
            }
}

/* ------------------------------------------------------------------------------------------
 * Tasks: a block of tiles x a group of panels each (split_tasks), all in one pool call (waves
 * of `slots` tasks, a pool call each, ran 9 barriers a layer, each waiting for the slowest
 * thread on a loaded host); a task claims a free slot of scratch, of which there is one per
 * thread, preferring one that holds its tile block's transformed inputs from an earlier task
 * of this run (the pool hands a thread consecutive tasks: the same tile block's panel groups)
 */

struct job {
    const struct cc_conv3x3 *p;
    cc_conv3x3_tile_fn tile;
};

/* A free slot, now held (at most slots tasks run at once, so one is free): one that holds tile
 * block tb's transformed inputs where one such is free. */
static int claim_slot(const struct cc_conv3x3 *p, int tb)
{
    for (int j = 0; j < p->slots; j++)
        if (atomic_load_explicit(&p->slot_block[j], memory_order_relaxed) == tb &&
            !atomic_exchange_explicit(&p->busy[j], 1, memory_order_acquire)) {
            if (atomic_load_explicit(&p->slot_block[j], memory_order_relaxed) == tb)
                return j;
            atomic_store_explicit(&p->busy[j], 0, memory_order_release);
        }
    for (int j = 0;; j = (j + 1) % p->slots)
        if (!atomic_exchange_explicit(&p->busy[j], 1, memory_order_acquire))
            return j;
}

/* The 16 (36) GEMMs of the MR-tile blocks of v into m for panel's weights, then the output
 * transform of count tiles from t0. */
static void panel_products(const struct job *jb, const float *v, float *m, int blocks, int panel,
                           int t0, int count)
{
    const struct cc_conv3x3 *p = jb->p;
    const int c = p->d.c;
    const float *rows[MR];
    for (int e = 0; e < p->taps; e++)
        for (int b = 0; b < blocks; b++) {
            for (int j = 0; j < MR; j++)
                rows[j] = v + e * plane(p, c) + (size_t)(b * MR + j) * c;
            struct cc_conv3x3_tile t = {
                .rows = rows,
                .w = p->w + ((size_t)panel * p->taps + e) * c * NR,
                .init = p->zeros,
                .y = m + e * plane(p, NR) + (size_t)b * MR * NR,
                .ldy = NR,
                .taps = 1,
                .c = c,
                .lo = -INFINITY,
                .hi = INFINITY,
            };
            jb->tile(&t);
        }
    int nr = p->d.n - panel * NR < NR ? p->d.n - panel * NR : NR;
    for (int t = 0; t < count; t++)
        (p->wino_m == 4 ? transform_output4 : transform_output)(p, m + (size_t)t * NR, plane(p, NR),
                                                                t0 + t, panel * NR, nr);
}

/* Task i: tile block i / panel_groups (its MR-tile blocks [all * tb / tile_blocks,
 * all * (tb + 1) / tile_blocks)), panel group i % panel_groups. */
static void run_tiles(void *ctx, size_t i)
{
    const struct job *jb = ctx;
    const struct cc_conv3x3 *p = jb->p;
    const int tb = (int)i / p->panel_groups, g = (int)i % p->panel_groups;
    const int slot = claim_slot(p, tb);
    const int tiles = p->tiles_y * p->tiles_x, all = ceil_div(tiles, MR);
    const int t0 = all * tb / p->tile_blocks * MR, t1 = all * (tb + 1) / p->tile_blocks * MR;
    const int count = (t1 < tiles ? t1 : tiles) - t0;
    const int blocks = (count + MR - 1) / MR, c = p->d.c;
    float *v = p->scratch + (size_t)slot * p->slot_floats, *m = v + p->taps * plane(p, c);
    const bool held = atomic_load_explicit(&p->slot_block[slot], memory_order_relaxed) == tb;
    for (int t = 0; !held && t < blocks * MR; t++) {
        int tile = t0 + (t < count ? t : 0); // tiles past count: repeat the first (not written)
        if (p->wino_m == 4)
            transform_input4(p, p->x, tile, v + (size_t)t * c, plane(p, c));
        else
            transform_input(p, p->x, tile, v + (size_t)t * c, plane(p, c));
    }
    atomic_store_explicit(&p->slot_block[slot], tb, memory_order_relaxed);
    const int panel0 = p->panels * g / p->panel_groups;
    const int panel1 = p->panels * (g + 1) / p->panel_groups;
    for (int panel = panel0; panel < panel1; panel++)
        panel_products(jb, v, m, blocks, panel, t0, count);
    atomic_store_explicit(&p->busy[slot], 0, memory_order_release);
}

void cc_conv3x3_wino_run(const struct cc_conv3x3 *p, cc_conv3x3_tile_fn tile, pthreadpool_t pool)
{
    struct job jb = {p, tile};
    for (int j = 0; j < p->slots; j++) // the input changed since the last run
        atomic_store_explicit(&p->slot_block[j], -1, memory_order_relaxed);
    pthreadpool_parallelize_1d(pool, run_tiles, &jb, (size_t)p->tile_blocks * p->panel_groups,
                               PTHREADPOOL_FLAG_DISABLE_DENORMALS |
                                   (p->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
}
