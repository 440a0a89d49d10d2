/* camclass — the engine: one model on one backend (see engine.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autoselect.h"
#include "backend.h"
#include "bundle.h"
#include "ref_ops.h"
#include "engine.h"
#include "vk_context.h"
#include "vk_profile.h"

struct cc_engine {
    struct cc_model *model;            // owned
    const struct cc_backend_ops *ops;  // the backend running it
    void *state;                       // owned, freed by ops->destroy
    size_t input_count, output_count;  // f32 values of the input / output tensor
    bool fallback;                     // a failed Vulkan run switches to the CPU backend
    struct cc_engine_options cpu_opts; // what the CPU backend is then created with: the
                                       // caller's options, cpu_cache pointing to the copy below
    char *cpu_cache;                   // owned copy of opts->cpu_cache (NULL when it was)
    char *tap;                         // owned copy of opts->tap (NULL when it was)
    size_t tap_count;                  // its f32 values; 0 without a tap
    bool ran;                          // a run succeeded: the tap holds values
};

/* Checks opts->tap against the model and keeps a copy of its name for the fallback's options. */
static bool take_tap(struct cc_engine *e, const struct cc_engine_options *opts,
                     struct cc_error *err)
{
    if (!opts->tap)
        return true;
    int t = cc_backend_tap(e->model, opts);
    if (t < 0 || e->model->tensors[t].producer < 0)
        return cc_error_set(err,
                            "engine: tap \"%s\" is not a tensor that a node of model \"%s\" "
                            "writes; name an activation",
                            opts->tap, e->model->name);
    if (!(e->cpu_opts.tap = e->tap = strdup(opts->tap)))
        return cc_error_set(err, "engine: out of memory");
    e->tap_count = (size_t)e->model->tensors[t].count;
    return true;
}

/* The backends a user can name; ops NULL for auto, which chooses among the others. */
static const struct {
    const char *name;
    enum cc_backend_kind kind;
    const struct cc_backend_ops *ops;
} backends[] = {
    {"auto", CC_BACKEND_AUTO, NULL},
    {"vulkan", CC_BACKEND_VULKAN, &cc_vulkan_backend},
    {"cpu", CC_BACKEND_CPU, &cc_xnn_backend},
    {"ref", CC_BACKEND_REF, &cc_ref_backend},
};

bool cc_backend_kind_parse(const char *s, enum cc_backend_kind *out)
{
    for (size_t i = 0; s && i < sizeof(backends) / sizeof(backends[0]); i++)
        if (strcmp(s, backends[i].name) == 0) {
            *out = backends[i].kind;
            return true;
        }
    return false;
}

static const struct cc_backend_ops *backend_ops(enum cc_backend_kind kind)
{
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (backends[i].kind == kind)
            return backends[i].ops;
    return NULL;
}

struct cc_engine *cc_engine_create(const char *bundle_path, const struct cc_engine_options *opts,
                                   struct cc_error *err)
{
    struct cc_model *model = cc_bundle_load(bundle_path, err);
    if (!model)
        return NULL;
    return cc_engine_create_from_model(model, opts, err);
}

struct cc_engine *cc_engine_create_from_model(struct cc_model *model,
                                              const struct cc_engine_options *opts,
                                              struct cc_error *err)
{
    struct cc_engine_options defaults = cc_engine_options_default();
    if (!opts)
        opts = &defaults;
    if (!model) {
        cc_error_set(err, "engine: no model given");
        return NULL;
    }
    struct cc_engine *e = calloc(1, sizeof(*e));
    if (!e) {
        cc_model_destroy(model);
        cc_error_set(err, "engine: out of memory");
        return NULL;
    }
    e->model = model;
    e->fallback = opts->cpu_fallback || opts->backend == CC_BACKEND_AUTO;
    e->cpu_opts = (struct cc_engine_options){
        .backend = CC_BACKEND_CPU,
        .notices = opts->notices,
        .cpu_threads = opts->cpu_threads,
        .cpu_pointwise = opts->cpu_pointwise,
        .profile = opts->profile,
    };
    if (opts->cpu_cache && !(e->cpu_opts.cpu_cache = e->cpu_cache = strdup(opts->cpu_cache))) {
        cc_engine_destroy(e);
        cc_error_set(err, "engine: out of memory");
        return NULL;
    }
    if (!take_tap(e, opts, err)) {
        cc_engine_destroy(e);
        return NULL;
    }
    e->input_count = (size_t)model->tensors[model->input.tensor].count;
    e->output_count = (size_t)model->tensors[model->output.tensor].count;

    if (opts->backend == CC_BACKEND_AUTO) {
        e->ops = cc_autoselect(model, opts, &e->state, err);
    } else if ((e->ops = backend_ops(opts->backend))) {
        e->state = e->ops->create(model, opts, err);
    } else {
        cc_error_set(err, "engine: unknown backend kind %d; use auto, vulkan, cpu or ref",
                     (int)opts->backend);
    }
    if (!e->state) {
        e->ops = NULL;
        cc_engine_destroy(e);
        return NULL;
    }
    return e;
}

bool cc_engine_run(struct cc_engine *e, const float *input, float *output, struct cc_error *err)
{
    if (!e || !input || !output)
        return cc_error_set(err, "engine: run needs an engine, an input and an output buffer");
    struct cc_error run_err = {0};
    e->ran = false;
    if (e->ops->run(e->state, input, output, &run_err))
        return e->ran = true;
    if (e->ops != &cc_vulkan_backend || !e->fallback)
        return cc_error_set(err, "%s", run_err.msg);
    /* Device lost or out of memory mid-run: the CPU backend takes over in this process. It
     * is created before the Vulkan one goes, so that a failure leaves the engine as it was. */
    struct cc_error cpu_err = {0};
    void *cpu = cc_xnn_backend.create(e->model, &e->cpu_opts, &cpu_err);
    if (!cpu)
        return cc_error_set(err, "%s; the CPU backend could not take over: %s", run_err.msg,
                            cpu_err.msg);
    if (e->cpu_opts.notices)
        fprintf(e->cpu_opts.notices, "camclass: vulkan: %s; switched to the CPU backend\n",
                run_err.msg);
    e->ops->destroy(e->state);
    e->ops = &cc_xnn_backend;
    e->state = cpu;
    return e->ran = e->ops->run(e->state, input, output, err);
}

bool cc_engine_can_batch(const struct cc_engine *e)
{
    return !e->tap && e->ops->can_batch && e->ops->run_batch && e->ops->can_batch(e->state);
}

bool cc_engine_run_batch(struct cc_engine *e, int n, const float *const *inputs,
                         float *const *outputs, struct cc_error *err)
{
    if (!e || !inputs || !outputs || n < 1 || n > CC_ENGINE_BATCH_MAX)
        return cc_error_set(err,
                            "engine: a batch run needs an engine and 1 to %d inputs and outputs "
                            "(got %d)",
                            CC_ENGINE_BATCH_MAX, n);
    for (int i = 0; i < n; i++)
        if (!inputs[i] || !outputs[i])
            return cc_error_set(err, "engine: batch image %d has no input or output buffer", i);
    if (n == 1 || !cc_engine_can_batch(e)) {
        for (int i = 0; i < n; i++)
            if (!cc_engine_run(e, inputs[i], outputs[i], err))
                return false;
        return true;
    }
    e->ran = false; // the tap (none here) is of single runs only
    return e->ops->run_batch(e->state, n, inputs, outputs, err);
}

size_t cc_engine_tap_count(const struct cc_engine *e)
{
    return e->tap_count;
}

bool cc_engine_tap_read(struct cc_engine *e, float *out, struct cc_error *err)
{
    if (!e->tap)
        return cc_error_set(err, "engine: no tap was asked for (cc_engine_options.tap)");
    if (!e->ran)
        return cc_error_set(err, "engine: tap \"%s\" has no values before a run succeeds", e->tap);
    e->ops->tap_read(e->state, out);
    return true;
}

const struct cc_model *cc_engine_model(const struct cc_engine *e)
{
    return e->model;
}

size_t cc_engine_input_count(const struct cc_engine *e)
{
    return e->input_count;
}

size_t cc_engine_output_count(const struct cc_engine *e)
{
    return e->output_count;
}

const char *cc_engine_backend_name(const struct cc_engine *e)
{
    return e->ops->name;
}

const char *cc_engine_device_name(const struct cc_engine *e)
{
    return e->ops->device_name(e->state);
}

int cc_engine_layer_timings(const struct cc_engine *e, const struct cc_layer_timing **out)
{
    *out = NULL;
    if (!e->ops->layer_timings)
        return 0;
    return e->ops->layer_timings(e->state, out);
}

static int slower_first(const void *a, const void *b)
{
    double x = ((const struct cc_layer_timing *)a)->ms, y = ((const struct cc_layer_timing *)b)->ms;
    return (x < y) - (x > y);
}

int cc_engine_slowest_layers(const struct cc_engine *e, struct cc_layer_timing *out, int k)
{
    const struct cc_layer_timing *t;
    int n = cc_engine_layer_timings(e, &t);
    struct cc_layer_timing *all = n > 0 ? malloc((size_t)n * sizeof(*all)) : NULL;
    if (!all)
        return 0;
    memcpy(all, t, (size_t)n * sizeof(*all));
    qsort(all, (size_t)n, sizeof(*all), slower_first);
    n = n < k ? n : k;
    memcpy(out, all, (size_t)n * sizeof(*out));
    free(all);
    return n;
}

// NaN ranks below every number, so that it never shows up as a top class.
static float rank_key(float x)
{
    return isnan(x) ? -INFINITY : x;
}

int cc_topk(const float *scores, int n, int k, struct cc_topk *out)
{
    int kept = 0;
    if (k <= 0 || n <= 0)
        return 0;
    for (int i = 0; i < n; i++) {
        float key = rank_key(scores[i]);
        // Insert after every kept entry with a key >= this one: earlier indices win ties.
        int pos = kept;
        while (pos > 0 && rank_key(out[pos - 1].score) < key)
            pos--;
        if (pos >= k)
            continue;
        int last = kept < k ? kept : k - 1;
        memmove(&out[pos + 1], &out[pos], (size_t)(last - pos) * sizeof(*out));
        out[pos] = (struct cc_topk){i, scores[i]};
        if (kept < k)
            kept++;
    }
    return kept;
}

void cc_softmax(const float *in, float *out, int n)
{
    cc_ref_softmax(in, out, n);
}

void cc_engine_destroy(struct cc_engine *e)
{
    if (!e)
        return;
    if (e->ops)
        e->ops->destroy(e->state);
    cc_model_destroy(e->model);
    free(e->cpu_cache);
    free(e->tap);
    free(e);
}

/* The Vulkan helpers app/ needs, forwarded so that the vulkan/ files depend on their own headers
 * only (engine.h is the public set). */
bool cc_engine_vk_profile_known(const char *name, const char **known)
{
    return cc_vk_profile_known(name, known);
}

int cc_engine_list_devices(FILE *out, struct cc_error *err)
{
    return cc_vk_list_devices(out, err);
}
