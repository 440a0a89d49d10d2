/* camclass — the CPU backend's state (xnn_backend.c), internal to the files of its XNNPACK
 * module: how every tensor is kept (xnn_state.c: layout, placement in the arena, the copies in
 * the other type, poisoning) and what every node runs as (struct step; built and chosen by
 * xnn_steps.c). One struct xnn_state per backend instance, used by one thread at a time (the
 * engine's); see xnn_backend.c for how a model runs.
 */
#ifndef CC_XNN_STATE_H
#define CC_XNN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "blis_conv.h"
#include "f32_gemm.h"
#include "conv3x3.h"
#include "fused_block.h"
#include "fused_q8.h"
#include "plan.h"
#include "pool_choice.h"
#include "q8_dw.h"
#include "q8_gemm.h"
#include "q8_stem.h"
#include "stem_conv.h"
#include "xnn_build.h"

enum { ARENA_ALIGN = 64 }; // bytes: one cache line

/* Every buffer this backend hands XNNPACK as an operator's input has XNN_EXTRA_BYTES more after
 * its end: XNNPACK's kernels may read that far past a tensor (xnnpack.h: "The number of bytes
 * XNNPACK may read beyond array bounds"), and the bytes must be ours to read. Their values do
 * not matter to a correct kernel; tests poison them (struct cc_engine_options.poison). */
static inline size_t cc_xnn_padded(size_t bytes)
{
    return bytes + XNN_EXTRA_BYTES;
}

enum store { STORE_F32, STORE_QS8 };

/* Bytes per value of a tensor stored as type. */
static inline size_t cc_xnn_elem_size(enum store type)
{
    return type == STORE_QS8 ? 1 : sizeof(float);
}

/* One tensor as this backend keeps it. */
struct place {
    enum store type;        // of data
    void *data;             // values: arena, or own buffer (owns_data)
    bool owns_data;         // data is a buffer of this backend's (relayout output, or a copy
                            // of a constant read as an activation: constant)
    bool constant;          // data is a constant's copy, written at load (never poisoned)
    bool want_other;        // some reader wants the values in the other type
    void *other;            // the values in the other type; own buffer; NULL if not wanted
    xnn_operator_t convert; // data -> other, run right after the producer; owned
};

enum step_kind {
    STEP_XNN,      // run work: XNNPACK operators and C loops
    STEP_ALIAS,    // reshape/flatten in place: the output is the input's memory
    STEP_RELAYOUT, // reshape/flatten through NCHW order into the output's own buffer
    STEP_BLIS,     // f32 one-group convolution as BLIS GEMMs (blis_conv.h), measured faster
    STEP_DIRECT,   // f32 k x k convolution with our own kernels (conv3x3.h), measured faster
    STEP_STEM,     // the direct stem from the caller's NCHW input (stem_conv.h)
    STEP_FUSED,    // a whole inverted-residual block, at its last node (fused_block.h)
    STEP_SKIP,     // a node that a block's STEP_FUSED computes
    STEP_PW,       // f32 1x1 convolution as our own GEMM (f32_gemm.h), measured faster
    STEP_Q8GEMM,   // int8 1x1 convolution on our own GEMM (q8_gemm.h), measured faster
    STEP_Q8STEM,   // the int8 stem from the caller's f32 NCHW input (q8_stem.h), measured faster
    STEP_Q8DW,     // int8 depthwise 3x3 convolution, our own (q8_dw.h), measured faster
};

/* A fused block's step: the block (f32: b; int8: q) and its input and output in the arena
 * (not owned). */
struct fused_step {
    bool int8;
    struct cc_fused_block b; // !int8: owned (cc_fused_block_finish); else zeroed
    struct cc_fq8_block q;   // int8: owned (cc_fq8_finish); else zeroed
    const void *x;
    void *y;
};

static inline void cc_xnn_fused_step_run(const struct fused_step *f, pthreadpool_t pool)
{
    if (f->int8)
        cc_fq8_run(&f->q, f->x, f->y, pool);
    else
        cc_fused_block_run(&f->b, f->x, f->y, pool);
}

static inline void cc_xnn_fused_step_finish(struct fused_step *f)
{
    cc_fused_block_finish(&f->b);
    cc_fq8_finish(&f->q);
}

struct step {
    enum step_kind kind;
    bool int8;                 // the node computes in int8 (its output is stored as int8)
    struct cc_xnn_work work;   // STEP_XNN: owned, created and set up at load; else empty
    struct cc_blis_conv *gemm; // STEP_BLIS: owned; NULL otherwise
    float *gemm_weights;       // STEP_BLIS: weights in patch order, or an i8 1x1's f32 copy;
                               // owned; NULL when the model's f32 weights serve as they are
    struct cc_conv3x3 *direct; // STEP_DIRECT: owned (cc_conv3x3_finish, free); NULL otherwise
    struct cc_stem_conv *stem; // STEP_STEM: owned (cc_stem_conv_finish, free); NULL otherwise
    struct fused_step *fused;  // STEP_FUSED: owned (cc_fused_block_finish, free); NULL otherwise
    struct cc_f32_pw *pw;      // STEP_PW: owned (cc_f32_pw_finish, free); NULL otherwise
    struct cc_q8_gemm *q8;     // STEP_Q8GEMM: owned (cc_q8_gemm_finish, free); NULL otherwise
    struct cc_q8_stem *q8stem; // STEP_Q8STEM: owned (cc_q8_stem_finish, free); NULL otherwise
    struct cc_q8_dw *q8dw;     // STEP_Q8DW: owned (cc_q8_dw_finish, free); NULL otherwise
};

struct xnn_state {
    const struct cc_model *model; // not owned
    struct cc_plan plan;
    void *arena;          // plan.arena_size bytes, ARENA_ALIGN-aligned, owned
    struct place *places; // (n_tensors)
    void *nchw_tmp;       // relayout staging, (nchw_bytes); owned
    float *scratch;       // (scratch_floats): the most a node needs; owned
    float *patches;       // (patch_floats): the most a conv's im2col needs; owned
    size_t nchw_bytes, scratch_floats, patch_floats;
    bool poison;        // poison the memory before every run (poison.h)
    struct step *steps; // (n_nodes)
    pthreadpool_t pool; // NULL when running on one thread; owned
    // The run in progress's pool: pool, or NULL on the calling thread alone, as pool_choice
    // (CAMCLASS_CPU_POOL, read at create; the running thread's) says.
    pthreadpool_t run_pool;
    struct cc_pool_choice pool_choice;
    struct cc_layer_timing *timings; // (n_nodes), of the last run
    // (n_nodes) what a profile names where a residual add runs as its convolution's step
    // (xnn_resfuse.h); owned; NULL until one is fused.
    struct xnn_shown *shown;
    int n_timings;
    int n_int8;         // nodes computing in int8 (for the device name)
    int n_gemm, n_blis; // f32 one-group convolutions, and how many of them BLIS runs
    bool blis_set_up;   // cc_blis_conv_setup ran for this load
    // Measured choices from the cache, a letter per conv and linear (xnn_choices.h); or NULL.
    const char *remembered;
    // The load-time timings' watch (choice_watch.h: whether they use the pool, and were taken
    // on a quiet machine) while the steps are built; not owned; NULL after.
    struct cc_choice_watch *watch;
    struct cc_stem_mode stem_mode;    // CAMCLASS_CPU_STEM, read at create
    int n_stem;                       // steps that are the direct stem
    enum cc_fused_mode fused_mode;    // CAMCLASS_CPU_FUSED, read at create
    int n_fused;                      // steps that are a fused block
    struct cc_stem_mode pw_mode;      // CAMCLASS_CPU_PW, read at create (f32_gemm.h)
    int n_pw;                         // steps that are our own 1x1 GEMM
    enum cc_conv3x3_mode direct_mode; // CAMCLASS_CPU_CONV3X3, read at create
    int n_direct, n_wino;             // steps that are STEP_DIRECT, and of those Winograd
    int n_wino4;                      // of those, F(4x4, 3x3)
    int n_residual;                   // of those, fused with a residual add (xnn_resfuse.h)
    bool resfuse; // CAMCLASS_CPU_CONV3X3_RESIDUAL is not off (xnn_resfuse.h), read at create
    enum cc_fused_mode q8_mode; // CAMCLASS_CPU_Q8GEMM (q8_gemm.h), read at create
    int n_q8;                   // steps that are our int8 1x1 GEMM
    // CAMCLASS_CPU_Q8STEM (q8_stem.h), read at create; steps that are our int8 stem.
    struct cc_fq8_mode q8stem_mode;
    int n_q8stem;
    struct cc_fq8_mode q8dw_mode; // CAMCLASS_CPU_Q8DW (q8_dw.h), read at create
    int n_q8dw;                   // steps that are our int8 depthwise
    bool input_direct;  // only direct stems (f32 or int8) read the graph input: it is neither
                        // transposed in nor converted to int8
    const float *input; // the caller's NCHW input during a run (the stems read it); not owned
    int tap;            // the tapped tensor (kept by the plan), -1 for none
    float *tap_f32;     // (its count) an int8 tap dequantized, NHWC; owned; NULL otherwise
    char device_name[224];
    struct cc_engine_options batch_opts; // what a batch state is created with (xnn_backend.c)
    struct xnn_batch_slot *batches;      // (CC_ENGINE_BATCH_MAX + 1) by batch size, made at the
                                         // first run of that size; owned; NULL until then
};

/* A batch state (cc_engine_run_batch): the model with n images per activation (xnn_batch.h)
 * and the state built on it; both owned. Zeroed until made. */
struct xnn_batch_slot {
    struct cc_model model;
    struct xnn_state *s;
};

/* Threads the backend's pool runs work on (the calling thread included). */
static inline size_t cc_xnn_pool_threads(const struct xnn_state *s)
{
    return s->pool ? pthreadpool_get_threads_count(s->pool) : 1;
}

/* Whether node n is an f32 convolution with one group, which BLIS can run as GEMMs. */
static inline bool cc_xnn_blis_can_run(const struct cc_model *m, const struct cc_node *n,
                                       const struct step *st)
{
    (void)m;
    return n->op == CC_OP_CONV2D && !st->int8 && n->attrs.conv.groups == 1;
}

/* ------------------------------------------------------------------------------------------
 * Layout and placement (xnn_state.c)
 */

/* True when t is stored NHWC here and that order differs from its NCHW order. */
bool cc_xnn_state_permuted(const struct cc_tensor *t);

/* t's values from NCHW-order src into this backend's layout (to_nhwc) or back. */
void cc_xnn_state_move(const struct cc_tensor *t, const void *src, void *dst, bool to_nhwc,
                       size_t esize);

/* The values of tensor t in type type: its data, or its copy in the other type. */
void *cc_xnn_state_values(const struct xnn_state *s, int t, enum store type);

/* Whether a reshape/flatten node needs a buffer of its own for its output (else it aliases
 * its input's memory, as cc_plan laid it out). */
bool cc_xnn_state_reshape_moves(const struct xnn_state *s, const struct cc_node *n);

/* Whether input slot i of node n is an activation read (weights and biases are not). */
bool cc_xnn_state_reads_activation(const struct cc_node *n, int i);

/* Types (node by node: an int8 node stores its output as int8), then memory: activations in
 * the arena, moving reshape outputs and NHWC copies of 4-D constants read as activations in
 * buffers of their own, then which tensors a reader wants in the other type. */
bool cc_xnn_state_place(struct xnn_state *s, struct cc_error *err);

/* With s->poison, before a run or a timing run (poison.h): the arena and every buffer of a
 * tensor that is not a constant, each in its type and with its padding, the copies in the other
 * type, the relayout staging, the scratch and the im2col patches. */
void cc_xnn_state_poison(const struct xnn_state *s);

/* Makes t's copy in the other type and the operator that converts into it. */
bool cc_xnn_state_make_other(struct xnn_state *s, int t, uint32_t flags, struct cc_error *err);

#endif
