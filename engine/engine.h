/* camclass — the inference engine's public API.
 *
 * An engine is one loaded model on one backend:
 *
 *     struct cc_error err = {0};
 *     struct cc_engine_options opt = cc_engine_options_default();
 *     struct cc_engine *e = cc_engine_create("model.ccm", &opt, &err);
 *     if (!e) { fprintf(stderr, "camclass: %s\n", err.msg); return 1; }
 *     float *out = malloc(cc_engine_output_count(e) * sizeof(float));
 *     cc_engine_run(e, input, out, &err);   // input: NCHW f32, cc_engine_input_count() values
 *     cc_engine_destroy(e);
 *
 * Threads: an engine is used by one thread at a time (the inference thread); distinct
 * engines are independent. Nothing here keeps global state.
 *
 * Public headers (what engine_dep lets the programs include): this one, model.h (the graph
 * and its builder), bundle/bundle.h (loading a .ccm), and common/'s error.h. The rest of
 * engine/ and its rooms cpu/ and vulkan/ is internal: engine_internal_dep, for the engine's
 * own tests only (meson.build).
 */
#ifndef CC_ENGINE_H
#define CC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "model.h"

/* auto: measure the usable backends on the model and take the faster (see cc_engine_create);
 * vulkan: the Vulkan compute backend; cpu: the fast CPU backend (XNNPACK); ref: the plain C
 * reference ops, for debugging and as what the tests compare the others with. */
enum cc_backend_kind { CC_BACKEND_AUTO, CC_BACKEND_VULKAN, CC_BACKEND_CPU, CC_BACKEND_REF };

/* Which library the CPU backend runs f32 convolutions with one group (1x1 and k x k) with:
 * measure both at load and keep the faster per layer (default), or always XNNPACK's operator,
 * or always BLIS's GEMM (tests use the last two to check each path). */
enum cc_cpu_pointwise {
    CC_CPU_POINTWISE_MEASURE,
    CC_CPU_POINTWISE_XNNPACK,
    CC_CPU_POINTWISE_BLIS,
};

struct cc_engine_options {
    enum cc_backend_kind backend;
    int device_index;                    // Vulkan physical device index; -1 = choose the best
    bool profile;                        // collect per-layer timings (Vulkan timestamp queries)
    const char *pipeline_cache;          // pipeline cache file; NULL = $XDG_CACHE_HOME/camclass/...
                                         // "" = no cache
    FILE *notices;                       // one-line notices (which backend `auto` picked, fallback
                                         // reasons); NULL = silent
    int cpu_threads;                     // CPU backend threads; 0 = online CPUs - 1, 1..4
    enum cc_cpu_pointwise cpu_pointwise; // CPU backend's f32 one-group convs (default: measure)
    const char *cpu_cache;               // the CPU backend's measured BLIS/XNNPACK choices; NULL =
                           // $XDG_CACHE_HOME/camclass/cpu-layer-choices-<format>.txt, "" = none
    const char *auto_cache; // backend auto's remembered choices; NULL =
                            // $XDG_CACHE_HOME/camclass/backend-choice.txt, "" = none

    bool vk_staging; // Vulkan: copy through host staging buffers even where device memory is
                     // host-visible, as on a discrete GPU (tests run that path on any device)
    const char *vk_profile; // Vulkan: clamp the device's limits to a named device's ("pi4":
                            // the Raspberry Pi 4's v3dv; vk_profile.h); NULL = as they are
    bool cpu_fallback; // a Vulkan run that fails (device lost, out of memory) switches the engine
                       // to the CPU backend, which runs that input again (see cc_engine_run);
                       // always on with backend auto
    const char *vk_fault; // tests only: inject a Vulkan fault, "alloc:N", "oom:N" or "lost:N"
                          // (vk_context.h, docs/RELIABILITY.md); NULL = none
    bool poison; // CPU backends (cpu, ref): fill the memory a run writes before it reads with a
                 // pattern (f32 signalling NaN, int8 -128) before every run and timing run, so
                 // that a result that reads memory it did not write is wrong on any host
                 // (poison.h); for tests and camclass-bench --poison; costs a pass over the arena
    const char *tap; // the name of an activation tensor of the model (one a node writes) to keep
                     // after every run for cc_engine_tap_read, e.g. the last feature map a class
                     // activation map is made of (cam.h); NULL = none. Costs its memory (not
                     // reused by later layers) and, on a Vulkan device without memory shared with
                     // the host, a copy of it per run; copied at create
};

struct cc_engine_options cc_engine_options_default(void);

/* "auto" / "vulkan" / "cpu" / "ref" -> kind; false when unknown. */
bool cc_backend_kind_parse(const char *s, enum cc_backend_kind *out);

/* Whether spec is a valid cc_engine_options.vk_fault; false with err naming it otherwise. */
bool cc_engine_vk_fault_valid(const char *spec, struct cc_error *err);

/* Whether name is a Vulkan limits profile (cc_engine_options.vk_profile); *known: the known
 * names, comma-separated, for messages. */
bool cc_engine_vk_profile_known(const char *name, const char **known);

/* Loads a bundle and prepares it on the requested backend. opts->notices must stay open while
 * the engine lives when a fallback may write to it (auto, cpu_fallback). With CC_BACKEND_AUTO, when
 * both the Vulkan and the CPU backend can run the model, both are timed on it (well under a second)
 * and the faster is kept; the choice is remembered in the cache (auto_cache) for later starts. When
 * only one can, that one is used. One line on opts->notices says which and why (autoselect.h).
 * Returns NULL with err set on failure. */
struct cc_engine *cc_engine_create(const char *bundle_path, const struct cc_engine_options *opts,
                                   struct cc_error *err);

/* Same from a finalized in-memory model. Ownership of model passes to the engine, also on
 * failure. */
struct cc_engine *cc_engine_create_from_model(struct cc_model *model,
                                              const struct cc_engine_options *opts,
                                              struct cc_error *err);

/* Runs the model. input: cc_engine_input_count() f32 values, NCHW, already preprocessed.
 * output: cc_engine_output_count() values (the model's output tensor as is). Blocks until
 * the result is on the host.
 *
 * When a Vulkan run fails and the engine was created with backend auto or cpu_fallback, the
 * engine switches to the CPU backend for good: one line on opts->notices names the Vulkan
 * error and the switch, the Vulkan backend is destroyed, and the same input runs on the CPU
 * (true when that works). cc_engine_backend_name() says "cpu" from then on. Without fallback,
 * or when the CPU backend cannot be created either, false with err naming the Vulkan call and
 * its VkResult. */
bool cc_engine_run(struct cc_engine *e, const float *input, float *output, struct cc_error *err);

/* The most images cc_engine_run_batch takes at once. */
enum { CC_ENGINE_BATCH_MAX = 8 };

/* Runs the model on n inputs (1..CC_ENGINE_BATCH_MAX; each as cc_engine_run's input) into n
 * outputs (each as cc_engine_run's output); the results are those of n cc_engine_run calls,
 * within float rounding (the CPU backend may take other kernels for a batch). The CPU backend
 * runs them as one batch: XNNPACK's operators set up for n images, made at the first run of
 * that n (their own copy of the packed weights and an n-image activation arena: memory) and
 * kept. The other backends, an engine with a tap, and a model the CPU backend cannot batch
 * (a constant read as an activation) run them one after the other, as cc_engine_run. Whether
 * a batch is faster per image than single runs depends on the model and the host: measure
 * with bench_batch (docs/PERFORMANCE.md). False with err as cc_engine_run. */
bool cc_engine_run_batch(struct cc_engine *e, int n, const float *const *inputs,
                         float *const *outputs, struct cc_error *err);

/* Whether cc_engine_run_batch runs a batch as one (the CPU backend, a model it can batch, no
 * tap); false: it runs the images one after the other. */
bool cc_engine_can_batch(const struct cc_engine *e);

const struct cc_model *cc_engine_model(const struct cc_engine *e);
size_t cc_engine_input_count(const struct cc_engine *e);
size_t cc_engine_output_count(const struct cc_engine *e);
const char *cc_engine_backend_name(const struct cc_engine *e); // "vulkan", "cpu" or "ref"
const char *cc_engine_device_name(const struct cc_engine *e);  // e.g. "llvmpipe (LLVM 15...)"

/* The tap (cc_engine_options.tap): how many values it has (0 without one), and its values of
 * the last run into out (room for cc_engine_tap_count()), f32 in the model's NCHW order as the
 * reference backend computes them: a tensor the CPU backend keeps as int8 is dequantized, a
 * Vulkan one read back. False with err when the engine has no tap or has not run yet. After a
 * fallback to the CPU backend (cc_engine_run) the tap is the CPU backend's. */
size_t cc_engine_tap_count(const struct cc_engine *e);
bool cc_engine_tap_read(struct cc_engine *e, float *out, struct cc_error *err);

/* Top-k of n scores, highest first, ties by lower index. Returns the number written
 * (min(k, n)). */
struct cc_topk {
    int index;
    float score;
};
int cc_topk(const float *scores, int n, int k, struct cc_topk *out);

/* Softmax of n values into out (may alias). */
void cc_softmax(const float *in, float *out, int n);

/* Per-layer timings of the last run (profile must be on for the Vulkan backend; the CPU
 * backend always measures). Returns the number of entries, one per executed node, or 0. The
 * array is owned by the engine and valid until the next run or destroy. */
struct cc_layer_timing {
    int node;  // index into model->nodes
    double ms; // time spent in that node's dispatch(es)
    // What ran, where it is more than the node: e.g. "layer1.0.conv2 (+ add, relu)" for a
    // convolution that took the residual add after it into its store (the CPU backend); owned
    // by the engine, valid until it is destroyed; NULL: the node alone (its name says it).
    const char *label;
};
int cc_engine_layer_timings(const struct cc_engine *e, const struct cc_layer_timing **out);

/* The k slowest of those, slowest first, copied into out (room for k). Returns how many: at
 * most k, 0 without timings. */
int cc_engine_slowest_layers(const struct cc_engine *e, struct cc_layer_timing *out, int k);

/* Lists the Vulkan devices (index, type, name, API version) on out, one per line. Returns the
 * number of devices, or -1 with err set when Vulkan itself cannot be loaded. */
int cc_engine_list_devices(FILE *out, struct cc_error *err);

/* Frees everything; accepts NULL. */
void cc_engine_destroy(struct cc_engine *e);

#endif
