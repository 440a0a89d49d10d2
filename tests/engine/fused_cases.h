/* camclass — the driver of the fused inverted-residual block tests (test_fused_block.c fp32,
 * test_fused_q8.c int8): the block shapes, every kernel family the host runs, 1 to 4 threads
 * (as many bands: band edges at odd rows), the output poisoned before each run, the result
 * compared with the test's reference. A test says how to make, run and compare its kind of
 * block (struct fused_kind); what "equal" means (a tolerance, exact) is its own.
 *
 * The shapes: mobilenet_v2's first and widest blocks, expand ratios 1 and 6, strides 1 and 2,
 * residual or not, odd channel counts (3, 5, 17, 33: kernel tails), sizes 1 to 57 and one
 * 112x112; then 24 random ones drawn from the test's generator, so that its cases are the
 * same from run to run.
 */
#ifndef CC_TEST_FUSED_CASES_H
#define CC_TEST_FUSED_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include <pthreadpool.h>

#include "error.h"
#include "testutil.h"

/* A block's geometry: size, cin, t, cout, stride as listed or drawn; the rest the driver
 * completes (fused_cases.c's complete()). */
struct fused_shape {
    int size; // input height
    int cin, t, cout, stride;
    int w;              // input width: size - 1 to size + 1 (not always square)
    int cexp;           // cin x t
    bool residual;      // stride 1 and cin == cout
    int ho, wo;         // the output's height and width
    size_t n_in, n_out; // values in the input (NHWC) and the output
    const int *variant; // the test's own extras for its make (NULL: none); not owned
};

/* A fused desc's geometry fields from shape s (a pointer), in its designated initializer:
 * both descs (fp32, int8) name them alike. */
#define FUSED_DESC_GEOMETRY(s)                                                                     \
    .h = (s)->size, .w = (s)->w, .cin = (s)->cin, .cexp = (s)->cexp, .cout = (s)->cout,            \
    .stride = (s)->stride, .expand = (s)->t != 1, .residual = (s)->residual

/* One kind of fused block. `block` is what make returned, owned by the driver until destroy. */
struct fused_kind {
    int isa_count; // kernel families, numbered 0 to isa_count - 1
    // The family's name for messages; *runs: whether this host runs it.
    const char *(*isa)(int isa, bool *runs);
    int poisons; // runs per thread count, each with the output filled differently first
    // A random block of shape s with its input and the reference's output (from r); sets
    // *residual to the block's own residual flag, which the driver sets on a 16 -> 24 block
    // (init must refuse it, saying "residual").
    void *(*make)(struct tu_rng *r, const struct fused_shape *s, bool **residual);
    // Packs the block for isa's kernels on threads bands (again: what the last init packed
    // goes); false with err set.
    bool (*init)(void *block, int isa, int threads, struct cc_error *err);
    // Poisons the output (fill number poison), then runs the packed block on pool.
    void (*run)(void *block, int poison, pthreadpool_t pool);
    // true when the output is the reference's; else false, and why (size bytes) says where.
    bool (*compare)(void *block, char *why, size_t size);
    void (*destroy)(void *block); // frees what make and init made
    const bool *skip; // [isa_count]: families the test's arguments leave out; NULL: none
};

/* The refused residual, then every shape on every family the host runs; prints
 * "# NAME: N blocks x 1-4 threads", or "# NAME: not on this CPU or build". */
void fused_cases_run(const struct fused_kind *k, struct tu_rng *r);

/* One more shape s (size, cin, t, cout, stride and variant given; the rest completed here) on
 * family isa, which the host runs, 1 to 4 threads. */
void fused_cases_check(const struct fused_kind *k, struct tu_rng *r, struct fused_shape s, int isa);

#endif
