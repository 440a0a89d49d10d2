/* camclass — the fused blocks' band driver (see fused_ring.h). */
#include "fused_ring.h"

void cc_fused_ring_band(const struct cc_fused_ring *r, const void *x, void *y, int r0, int r1,
                        int band)
{
    char *ring = (char *)r->scratch + (size_t)band * r->band_bytes;
    const char *zero = ring + (size_t)r->k * r->row_bytes;
    void *dw = ring + (size_t)(r->k + 1) * r->row_bytes;
    int held[CC_FUSED_RING_KMAX] = {-1, -1, -1, -1, -1}; // the input row in each ring slot
    for (int oy = r0; oy < r1; oy++) {
        const void *rows[CC_FUSED_RING_KMAX];
        for (int ky = 0; ky < r->k; ky++) {
            int iy = oy * r->stride - r->pad + ky, slot = iy % r->k;
            if (iy < 0 || iy >= r->h) {
                rows[ky] = zero;
                continue;
            }
            char *row = ring + (size_t)slot * r->row_bytes;
            if (held[slot] != iy)
                r->expand(r->block, x, iy, row);
            held[slot] = iy;
            rows[ky] = row;
        }
        r->output(r->block, x, y, oy, rows, dw, band);
    }
}

struct run {
    const struct cc_fused_ring *r;
    const void *x;
    void *y;
};

static void run_band(void *ctx, size_t band)
{
    const struct run *t = ctx;
    int ho = t->r->ho, n = t->r->bands, i = (int)band;
    cc_fused_ring_band(t->r, t->x, t->y, ho * i / n, ho * (i + 1) / n, i);
}

void cc_fused_ring_run(const struct cc_fused_ring *r, const void *x, void *y, pthreadpool_t pool,
                       uint32_t flags)
{
    struct run t = {r, x, y};
    pthreadpool_parallelize_1d(pool, run_band, &t, (size_t)r->bands, flags);
}
