/* camclass — the int8 1x1 GEMM's SIMD kernel (see q8_gemm.h), written once for any vector
 * width and included once per family, no include guard, after the includer defines:
 *   QG_SFX, QG_TARGET   the family's name suffix and target attribute
 *   QG_VI, QG_VF, QG_N  int32 and f32 vectors of QG_N lanes
 *   QG_NV, QG_MR        vectors per panel (nr = QG_NV * QG_N) and pixels per register block:
 *                       QG_MR x QG_NV accumulators
 *   QG_W, QG_WLOAD(p)   a vector of QG_N outputs' 4 weights as the dot product wants them
 *   QG_A, QG_ABCAST(u)  4 unsigned input bytes (one uint32) broadcast as the dot wants them
 *   QG_DOT(acc, a, w)   acc + the 4-byte dot products a . w, per lane
 *   QG_ACC, QG_ACC_INIT(v), QG_ACC_SUM(acc)  optional: the accumulator type when it is not
 *                       QG_VI (partial sums that QG_ACC_SUM reduces to the QG_N lanes), one
 *                       from a bias vector; default QG_VI and no conversion
 *   QG_LOADI, QG_SET1I, QG_ADDI, QG_LOADF, QG_SET1F, QG_MULF, QG_MINF, QG_MAXF,
 *   QG_CVTF (i -> f), QG_CVTI (f -> i, to nearest even)
 *   QG_STOREB(p, v)     QG_N int32 lanes (each in -128..127) stored as QG_N bytes
 * It undefines them all at its end.
 *
 * A register block: QG_MR pixels x nv vectors of outputs; per group of 4 inputs, nv weight
 * vectors loaded (the panel is contiguous: it streams), each pixel's 4 bytes broadcast once,
 * QG_MR x nv dot products. The panel (k x nr bytes) stays in L1/L2 while the tile's pixels
 * pass; then the requantization, whole vectors where the outputs exist, else via a buffer.
 */
#include <string.h>

#define QG_CAT2(a, b) a##b
#define QG_CAT(a, b) QG_CAT2(a, b)
#define QG_NAME(x) QG_CAT(x, QG_SFX)
#define QG_INLINE QG_TARGET static inline __attribute__((always_inline))
// Loops over the register block unrolled early: GCC then keeps the accumulators in registers
// (without, it stores all 24 to the stack at every step of the input loop).
#define QG_UNROLL _Pragma("GCC unroll 8")
#define QG_BLOCK QG_NAME(qg_block_)
#define QG_PUT QG_NAME(qg_put_)
#define QG_ROWS QG_NAME(qg_rows_)
#define QG_GROUP QG_NAME(qg_group_)

#ifndef QG_ACC
#define QG_ACC QG_VI
#define QG_ACC_INIT(v) (v)
#define QG_ACC_SUM(acc) (acc)
#endif

/* Outputs [v * QG_N, ..) of pixel row c: XNNPACK's fp32 requantization of acc, stored. */
QG_INLINE void QG_PUT(const struct cc_q8_tile *t, int8_t *c, int v, QG_VI acc)
{
    int n0 = v * QG_N, left = t->n_valid - n0;
    if (left <= 0)
        return;
    QG_VF f = QG_MULF(QG_CVTF(acc), QG_LOADF(t->scale + n0));
    f = QG_MINF(QG_MAXF(f, QG_SET1F(t->lo)), QG_SET1F(t->hi));
    QG_VI y = QG_ADDI(QG_CVTI(f), QG_SET1I(t->zp));
    if (left >= QG_N) {
        QG_STOREB(c + n0, y);
        return;
    }
    int8_t buf[QG_N];
    QG_STOREB(buf, y);
    memcpy(c + n0, buf, (size_t)left);
}

/* acc += pixels [0, px) of a (row stride lda), bytes [0, len) (len <= 4, the rest zero), times
 * the group of 4 inputs at w, nv vectors; px, nv and len constant at each call. */
QG_INLINE void QG_GROUP(QG_ACC acc[QG_MR][QG_NV], const int8_t *a, size_t lda, const int8_t *w,
                        const int len, const int px, const int nv)
{
    QG_W wv[QG_NV];
    QG_UNROLL
    for (int v = 0; v < nv; v++)
        wv[v] = QG_WLOAD(w + v * QG_N * 4);
    QG_UNROLL
    for (int i = 0; i < px; i++) {
        uint32_t u = 0;
        if (len == 4)
            memcpy(&u, a + (size_t)i * lda, 4);
        else
            for (int j = 0; j < len; j++)
                u |= (uint32_t)(uint8_t)a[(size_t)i * lda + j] << (8 * j);
        QG_A x = QG_ABCAST(u ^ 0x80808080u);
        QG_UNROLL
        for (int v = 0; v < nv; v++)
            acc[i][v] = QG_DOT(acc[i][v], x, wv[v]);
    }
}

/* Pixels [p0, p0 + px) of t, nv vectors of outputs; px and nv constant at each call. */
QG_INLINE void QG_BLOCK(const struct cc_q8_tile *t, int p0, const int px, const int nv)
{
    QG_ACC acc[QG_MR][QG_NV];
    QG_UNROLL
    for (int v = 0; v < nv; v++) {
        QG_VI b = QG_LOADI(t->bias + v * QG_N);
        QG_UNROLL
        for (int i = 0; i < px; i++)
            acc[i][v] = QG_ACC_INIT(b);
    }
    const int8_t *a = t->a + (size_t)p0 * t->lda, *w = t->w;
    int k4 = t->k / 4, tail = t->k % 4;
    if (tail) // first (the registers then stay put through the loop); missing bytes meet zeros
        QG_GROUP(acc, a + (size_t)k4 * t->ldg, t->lda, w + (size_t)k4 * QG_NV * QG_N * 4, tail, px,
                 nv);
    for (int g = 0; g < k4; g++, w += QG_NV * QG_N * 4, a += t->ldg)
        QG_GROUP(acc, a, t->lda, w, 4, px, nv);
    QG_UNROLL
    for (int i = 0; i < px; i++)
        QG_UNROLL
    for (int v = 0; v < nv; v++)
        QG_PUT(t, t->c + (size_t)(p0 + i) * t->ldc, v, QG_ACC_SUM(acc[i][v]));
}

/* Every pixel of t, nv vectors of outputs (constant at each call). */
QG_INLINE void QG_ROWS(const struct cc_q8_tile *t, const int nv)
{
    int p = 0;
    for (; p + QG_MR <= t->m; p += QG_MR)
        QG_BLOCK(t, p, QG_MR, nv);
    for (; p + 2 <= t->m; p += 2)
        QG_BLOCK(t, p, 2, nv);
    for (; p < t->m; p++)
        QG_BLOCK(t, p, 1, nv);
}

QG_TARGET void QG_NAME(cc_q8_kernel_)(const struct cc_q8_tile *t)
{
    int nv = (t->n_valid + QG_N - 1) / QG_N;
    if (nv >= QG_NV)
        QG_ROWS(t, QG_NV);
#if QG_NV > 3
    else if (nv == 3)
        QG_ROWS(t, 3);
#endif
#if QG_NV > 2
    else if (nv == 2)
        QG_ROWS(t, 2);
#endif
    else
        QG_ROWS(t, 1);
}

#undef QG_CAT2
#undef QG_CAT
#undef QG_NAME
#undef QG_INLINE
#undef QG_UNROLL
#undef QG_BLOCK
#undef QG_PUT
#undef QG_ROWS
#undef QG_GROUP
#undef QG_SFX
#undef QG_TARGET
#undef QG_VI
#undef QG_VF
#undef QG_N
#undef QG_NV
#undef QG_MR
#undef QG_W
#undef QG_WLOAD
#undef QG_A
#undef QG_ABCAST
#undef QG_DOT
#undef QG_ACC
#undef QG_ACC_INIT
#undef QG_ACC_SUM
#undef QG_LOADI
#undef QG_SET1I
#undef QG_ADDI
#undef QG_LOADF
#undef QG_SET1F
#undef QG_MULF
#undef QG_MINF
#undef QG_MAXF
#undef QG_CVTF
#undef QG_CVTI
#undef QG_STOREB
