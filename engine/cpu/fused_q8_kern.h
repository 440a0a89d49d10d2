/* camclass — the int8 fused block's SIMD kernels (see fused_q8.h), written once for any
 * vector width and included once per family, no include guard, after the includer defines:
 *   FQ_SFX, FQ_TARGET   the family's name suffix and target attribute
 *   FQ_VI, FQ_VF, FQ_N  int32 and f32 vectors of FQ_N lanes; FQ_PX: pixels a GEMM block holds
 *   FQ_W, FQ_WLOAD(p)   a vector of FQ_N outputs' 4 weights as the dot product wants them
 *   FQ_A, FQ_ABCAST(u)  4 unsigned input bytes (one uint32) broadcast as the dot product wants
 *                       (families of signed products, NEON, undo the x + 128: u ^ 0x80808080)
 *   FQ_DOT(acc, a, w)   acc + the 4-byte dot products a . w, per lane
 *   FQ_ACC, FQ_ACC_INIT(v), FQ_ACC_SUM(acc)  optional: the GEMM's accumulator type when it is
 *                       not FQ_VI (partial sums that FQ_ACC_SUM reduces to the FQ_N lanes),
 *                       one from a bias vector; default FQ_VI and no conversion
 *   FQ_LOADI, FQ_SET1I, FQ_ADDI, FQ_MULLOI, FQ_MINI, FQ_MAXI, FQ_SRA(v, n)  int32 lanes
 *   FQ_LOADF, FQ_SET1F, FQ_MULF, FQ_MINF, FQ_MAXF, FQ_CVTF (i -> f), FQ_CVTI (f -> i, to
 *   nearest even)
 *   FQ_LOADB(p)          FQ_N int8 sign-extended to int32 lanes
 *   FQ_STOREB(p, v)      FQ_N int32 lanes (each in -128..127) stored as FQ_N bytes
 *   FQ_NO_DW             optional: the family has its own depthwise (none made here)
 *   FQ_NO_GEMM           optional: the family has its own GEMM (none made here; FQ_W,
 *                        FQ_WLOAD, FQ_A, FQ_ABCAST, FQ_DOT, FQ_ACC* unused); it may call
 *                        FQ_PUT (fq_put_<sfx>) for the requantization, the add and the store
 * It undefines them all at its end.
 *
 * GEMM: blocks of FQ_PX pixels x nv (1 or 2) vectors of outputs, each weight vector loaded
 * once per group of 4 inputs for the block, each pixel's 4 input bytes broadcast once per
 * group and block; then the requantization (and the add), whole vectors where the channels
 * exist, else through a buffer. Depthwise: FQ_DWPX pixels x one vector of channels, the 9 tap
 * weights in registers for the row, each input column loaded once for the pixels reading it.
 */
#include <string.h>

#define FQ_CAT2(a, b) a##b
#define FQ_CAT(a, b) FQ_CAT2(a, b)
#define FQ_NAME(x) FQ_CAT(x, FQ_SFX)
#define FQ_INLINE FQ_TARGET static inline __attribute__((always_inline))
// Loops over the register block unrolled early: GCC then keeps the accumulators in registers
// instead of storing them to the stack at every group of 4 inputs (as q8_gemm_kern.h).
#define FQ_UNROLL _Pragma("GCC unroll 8")
#define FQ_REQ FQ_NAME(fq_req_)
#define FQ_PUT FQ_NAME(fq_put_)
#define FQ_BLOCK FQ_NAME(fq_block_)
#define FQ_GROUP FQ_NAME(fq_group_)
#define FQ_COLS FQ_NAME(fq_cols_)
#define FQ_DWB FQ_NAME(fq_dw_block_)
#define FQ_DWPX FQ_NAME(fq_dwpx_)

enum { FQ_DWPX = 4 };

#ifndef FQ_ACC
#define FQ_ACC FQ_VI
#define FQ_ACC_INIT(v) (v)
#define FQ_ACC_SUM(acc) (acc)
#endif

/* XNNPACK's fp32 requantization (fused_q8.c's requant) of a vector at scale[0 .. FQ_N). */
FQ_INLINE FQ_VI FQ_REQ(FQ_VI acc, const float *scale, float lo, float hi, int32_t zp)
{
    FQ_VF f = FQ_MULF(FQ_CVTF(acc), FQ_LOADF(scale));
    f = FQ_MINF(FQ_MAXF(f, FQ_SET1F(lo)), FQ_SET1F(hi));
    return FQ_ADDI(FQ_CVTI(f), FQ_SET1I(zp));
}

/* Pixel p, outputs [n0, n0 + FQ_N) of g from acc: requantized, added, stored. */
FQ_INLINE void FQ_PUT(const struct cc_fq8_gemm *g, int p, int n0, FQ_VI acc)
{
    int left = g->n_store - n0;
    if (left <= 0)
        return;
    FQ_VI v = FQ_REQ(acc, g->scale + n0, g->lo, g->hi, g->zp);
    int8_t *c = g->c + (size_t)p * g->ldc + n0, buf[FQ_N];
    if (g->res) {
        const int8_t *r = g->res + (size_t)p * g->ldc + n0;
        if (left < FQ_N) {
            memset(buf, 0, sizeof(buf));
            memcpy(buf, r, (size_t)left);
            r = buf;
        }
        FQ_VI t =
            FQ_ADDI(FQ_MULLOI(v, FQ_SET1I(g->add_a)), FQ_MULLOI(FQ_LOADB(r), FQ_SET1I(g->add_b)));
        t = FQ_ADDI(FQ_SRA(FQ_ADDI(t, FQ_SET1I(g->add_bias)), g->add_shift), FQ_SET1I(g->add_zp));
        v = FQ_MINI(FQ_MAXI(t, FQ_SET1I(g->add_lo)), FQ_SET1I(g->add_hi));
    }
    if (left >= FQ_N) {
        FQ_STOREB(c, v);
        return;
    }
    FQ_STOREB(buf, v);
    memcpy(c, buf, (size_t)left);
}

#ifndef FQ_NO_GEMM
/* Pixel row a's 4 input bytes from k0 (zeros past k), as unsigned (x + 128). Byte by byte,
 * not a memcpy of a variable length: that is a call, around which the compiler keeps the
 * accumulators on the stack (seen on AArch64, when the tail was in the k loop: 6 stores a
 * group). */
static inline uint32_t FQ_NAME(fq_a4_)(const int8_t *a, int k0, int k)
{
    uint32_t v = 0;
    for (int j = 0; j < 4 && k0 + j < k; j++)
        v |= (uint32_t)(uint8_t)a[k0 + j] << (8 * j);
    return v ^ 0x80808080u;
}

/* acc + inputs [k0, k0 + 4) of pixels [0, px) of a times w (weights at k0); tail: k0 + 4 > k,
 * read byte by byte. px, nv and tail constant at each call. */
FQ_INLINE void FQ_GROUP(FQ_ACC acc[][2], const struct cc_fq8_gemm *g, const int8_t *a,
                        const int8_t *w, int k0, const int px, const int nv, const bool tail)
{
    FQ_W w0 = FQ_WLOAD(w), w1 = nv > 1 ? FQ_WLOAD(w + FQ_N * 4) : w0;
    FQ_UNROLL
    for (int i = 0; i < px; i++) {
        const int8_t *ai = a + (size_t)i * g->lda;
        uint32_t u;
        if (!tail) {
            memcpy(&u, ai + k0, 4);
            u ^= 0x80808080u;
        } else {
            u = FQ_NAME(fq_a4_)(ai, k0, g->k);
        }
        FQ_A v = FQ_ABCAST(u);
        acc[i][0] = FQ_DOT(acc[i][0], v, w0);
        if (nv > 1)
            acc[i][1] = FQ_DOT(acc[i][1], v, w1);
    }
}

/* Pixels [p0, p0 + px), outputs [n0, n0 + nv * FQ_N) of g; px and nv constant at each call.
 * The whole groups of 4 inputs in the loop, the tail after it: no branch per pixel there. */
FQ_INLINE void FQ_BLOCK(const struct cc_fq8_gemm *g, int p0, const int px, int n0, const int nv)
{
    FQ_ACC acc[FQ_PX][2];
    FQ_VI b0 = FQ_LOADI(g->bias + n0), b1 = nv > 1 ? FQ_LOADI(g->bias + n0 + FQ_N) : b0;
    FQ_UNROLL
    for (int i = 0; i < px; i++) {
        acc[i][0] = FQ_ACC_INIT(b0);
        acc[i][1] = FQ_ACC_INIT(b1);
    }
    const int8_t *a = g->a + (size_t)p0 * g->lda, *w = g->w + (size_t)n0 * 4;
    int k0 = 0;
    for (; k0 + 4 <= g->k; k0 += 4, w += (size_t)g->n_pad * 4)
        FQ_GROUP(acc, g, a, w, k0, px, nv, false);
    if (k0 < g->k)
        FQ_GROUP(acc, g, a, w, k0, px, nv, true);
    FQ_UNROLL
    for (int i = 0; i < px; i++) {
        FQ_PUT(g, p0 + i, n0, FQ_ACC_SUM(acc[i][0]));
        if (nv > 1)
            FQ_PUT(g, p0 + i, n0 + FQ_N, FQ_ACC_SUM(acc[i][1]));
    }
}

FQ_INLINE void FQ_COLS(const struct cc_fq8_gemm *g, int n0, const int nv)
{
    int p = 0;
    for (; p + FQ_PX <= g->m; p += FQ_PX)
        FQ_BLOCK(g, p, FQ_PX, n0, nv);
    for (; p + 2 <= g->m; p += 2)
        FQ_BLOCK(g, p, 2, n0, nv);
    for (; p < g->m; p++)
        FQ_BLOCK(g, p, 1, n0, nv);
}

FQ_TARGET void FQ_NAME(cc_fq8_gemm_)(const struct cc_fq8_gemm *g)
{
    int n0 = 0;
    for (; n0 + FQ_N < g->n; n0 += 2 * FQ_N)
        FQ_COLS(g, n0, 2);
    if (n0 < g->n)
        FQ_COLS(g, n0, 1);
}

#endif

#ifndef FQ_NO_DW
/* Pixels [ox, ox + px) of d, channels [c0, c0 + FQ_N); w: the 9 tap vectors; stride st (px and
 * st constant at each call). Each input column of a kernel row is loaded (and widened) once
 * for the px pixels that read it: stride * (px - 1) + 3 loads a row, not 3 * px. */
FQ_INLINE void FQ_DWB(const struct cc_fq8_dw *d, int ox, const int px, int c0, const FQ_VI *w,
                      FQ_VI bias, const int st)
{
    FQ_VI acc[FQ_DWPX], col[2 * FQ_DWPX + 1];
    FQ_UNROLL
    for (int i = 0; i < px; i++)
        acc[i] = bias;
    for (int ky = 0; ky < 3; ky++) {
        const int8_t *row = d->rows[ky] + (size_t)st * ox * d->c_pad + c0;
        FQ_UNROLL
        for (int j = 0; j < st * (px - 1) + 3; j++)
            col[j] = FQ_LOADB(row + (size_t)j * d->c_pad);
        FQ_UNROLL
        for (int kx = 0; kx < 3; kx++)
            FQ_UNROLL
        for (int i = 0; i < px; i++)
            acc[i] = FQ_ADDI(acc[i], FQ_MULLOI(col[st * i + kx], w[ky * 3 + kx]));
    }
    FQ_UNROLL
    for (int i = 0; i < px; i++)
        FQ_STOREB(d->y + (size_t)(ox + i) * d->c_pad + c0,
                  FQ_REQ(acc[i], d->scale + c0, d->lo, d->hi, d->zp));
}

/* The row of d at stride st (constant at each call). */
FQ_INLINE void FQ_NAME(fq_dw_row_)(const struct cc_fq8_dw *d, const int st)
{
    for (int c0 = 0; c0 < d->c; c0 += FQ_N) {
        FQ_VI w[9];
        for (int t = 0; t < 9; t++)
            w[t] = FQ_LOADI(d->w + (size_t)t * d->c_pad + c0);
        FQ_VI bias = FQ_LOADI(d->bias + c0);
        int ox = 0;
        for (; ox + FQ_DWPX <= d->wo; ox += FQ_DWPX)
            FQ_DWB(d, ox, FQ_DWPX, c0, w, bias, st);
        for (; ox < d->wo; ox++)
            FQ_DWB(d, ox, 1, c0, w, bias, st);
    }
}

FQ_TARGET void FQ_NAME(cc_fq8_dw_)(const struct cc_fq8_dw *d)
{
    if (d->stride == 1)
        FQ_NAME(fq_dw_row_)(d, 1);
    else
        FQ_NAME(fq_dw_row_)(d, 2);
}
#endif

#undef FQ_CAT2
#undef FQ_CAT
#undef FQ_NAME
#undef FQ_INLINE
#undef FQ_UNROLL
#undef FQ_REQ
#undef FQ_PUT
#undef FQ_BLOCK
#undef FQ_GROUP
#undef FQ_COLS
#undef FQ_DWB
#undef FQ_DWPX
#undef FQ_SFX
#undef FQ_TARGET
#undef FQ_VI
#undef FQ_VF
#undef FQ_N
#undef FQ_PX
#undef FQ_W
#undef FQ_WLOAD
#undef FQ_A
#undef FQ_ABCAST
#undef FQ_DOT
#undef FQ_ACC
#undef FQ_ACC_INIT
#undef FQ_ACC_SUM
#undef FQ_LOADI
#undef FQ_SET1I
#undef FQ_ADDI
#undef FQ_MULLOI
#undef FQ_MINI
#undef FQ_MAXI
#undef FQ_SRA
#undef FQ_LOADF
#undef FQ_SET1F
#undef FQ_MULF
#undef FQ_MINF
#undef FQ_MAXF
#undef FQ_CVTF
#undef FQ_CVTI
#undef FQ_LOADB
#undef FQ_STOREB
#undef FQ_NO_DW
#undef FQ_NO_GEMM
