/* camclass — the backend driver table (internal to engine/).
 *
 * A backend runs one finalized model. engine.c picks a table, calls create once, run per
 * frame, destroy at the end. The model outlives the backend and is never modified by it.
 */
#ifndef CC_BACKEND_H
#define CC_BACKEND_H

#include "engine.h"
#include "model.h"

struct cc_backend_ops {
    const char *name; // "vulkan", "cpu", "ref"

    /* Prepares model (weights uploaded, pipelines built, buffers planned). Returns an opaque
     * backend state, or NULL with err set. */
    void *(*create)(const struct cc_model *model, const struct cc_engine_options *opts,
                    struct cc_error *err);

    /* input: the model's input tensor (count f32); output: the model's output tensor. */
    bool (*run)(void *state, const float *input, float *output, struct cc_error *err);

    /* Whether run_batch can run this model (cc_engine_can_batch); NULL: it cannot. */
    bool (*can_batch)(void *state);

    /* n inputs into n outputs as one batch (cc_engine_run_batch), 2 <= n <=
     * CC_ENGINE_BATCH_MAX, where can_batch says so; false with err when it fails. */
    bool (*run_batch)(void *state, int n, const float *const *inputs, float *const *outputs,
                      struct cc_error *err);

    /* Timings of the last run, one per node, owned by state. Returns the count (0 if none). */
    int (*layer_timings)(void *state, const struct cc_layer_timing **out);

    const char *(*device_name)(void *state);

    /* The tap's values after the last run (cc_engine_tap_read): count f32 values in NCHW order
     * into out. Called only when create was given a tap (cc_backend_tap() >= 0) and a run
     * succeeded. */
    void (*tap_read)(void *state, float *out);

    /* Frees state; accepts NULL. */
    void (*destroy)(void *state);
};

/* The tensor index of opts->tap in model, or -1 when there is none (cc_engine_create_from_model
 * has checked that it names an activation). Inline: the backends call it, and engine.c, which
 * calls the backends, is not theirs to call. */
static inline int cc_backend_tap(const struct cc_model *model, const struct cc_engine_options *opts)
{
    return opts && opts->tap ? cc_model_find_tensor(model, opts->tap) : -1;
}

extern const struct cc_backend_ops cc_xnn_backend; // "cpu": XNNPACK (xnn_backend.c)
extern const struct cc_backend_ops cc_ref_backend; // "ref": plain C ops (ref_backend.c)
extern const struct cc_backend_ops cc_vulkan_backend;

#endif
