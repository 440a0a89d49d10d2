/* camclass — the band driver both fused blocks share (fused_block.h in f32, fused_q8.h in int8).
 * A band of output rows walks its input rows through a ring of k expanded rows (k: the
 * depthwise kernel's height, 3 or 5): each input row is expanded once, into the slot of its row
 * number modulo k, and each output row is handed the k rows its depthwise conv reads (the zero
 * row where they fall in the padding). The element type is the caller's: the driver moves
 * pointers and calls back.
 *
 * A band's scratch (band_bytes, at scratch + band × band_bytes): the k ring rows, the zero row
 * (row_bytes each), then the depthwise row. The zero row and the ring's padding are the
 * caller's to set once; nothing here writes scratch.
 */
#ifndef CC_FUSED_RING_H
#define CC_FUSED_RING_H

#include <pthreadpool.h>
#include <stddef.h>
#include <stdint.h>

enum { CC_FUSED_RING_KMAX = 5 }; // the tallest depthwise kernel

struct cc_fused_ring {
    const void *block; // the caller's block, given back to both calls
    int h, stride, ho; // input rows, the depthwise stride, output rows
    int k, pad;        // the depthwise kernel's height (<= CC_FUSED_RING_KMAX), its top padding
    int bands;         // scratch regions: one per task of a run
    size_t row_bytes;  // one padded expanded row
    size_t band_bytes; // one band's scratch
    void *scratch;     // (bands, band_bytes); not owned
    // Input row iy of x expanded into row.
    void (*expand)(const void *block, const void *x, int iy, void *row);
    // Output row oy of y from the k expanded rows (and x, for a residual), through dw, in band.
    void (*output)(const void *block, const void *x, void *y, int oy, const void *const *rows,
                   void *dw, int band);
};

/* Output rows [r0, r1) with band's scratch (0 <= band < r->bands; no other call may use it
 * meanwhile). */
void cc_fused_ring_band(const struct cc_fused_ring *r, const void *x, void *y, int r0, int r1,
                        int band);

/* All output rows on pool (NULL: the calling thread), r->bands tasks of about equal rows;
 * flags: pthreadpool's. */
void cc_fused_ring_run(const struct cc_fused_ring *r, const void *x, void *y, pthreadpool_t pool,
                       uint32_t flags);

#endif
