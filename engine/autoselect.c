/* camclass — backend auto: measure, choose, remember (see autoselect.h).
 *
 * The cache file ($XDG_CACHE_HOME/camclass/backend-choice.txt unless opts->auto_cache says
 * otherwise) is text: a header line, then one line per (model, devices, threads):
 *
 *     <key>\t<backend>\t<cpu ms>\t<vulkan ms>
 *
 * The key holds a 64-bit hash of the model itself (graph, shapes, attributes, every weight
 * byte and quantization), not its path: a bundle re-exported with other weights or another
 * quantization is measured again, a copied one is not. Hashing the 14 MB of mobilenet_v2
 * takes about 2 ms, against the 100s of ms of a measurement. A file that does not parse is
 * ignored (and replaced on the next write); one that cannot be written costs only a notice.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autoselect.h"
#include "cache_file.h"
#include "cpu_info.h"
#include "vk_context.h"
#include "clock.h"

#define CACHE_NAME "backend-choice.txt"
#define CACHE_HEADER "camclass backend choices 1\n"
#define KEY_SIZE 512

enum {
    AUTO_MIN_RUNS = 3,    // timed runs of each backend at least
    AUTO_MAX_RUNS = 15,   // and at most
    AUTO_BUDGET_MS = 400, // stop taking runs past this (after AUTO_MIN_RUNS each)
    AUTO_LIMIT_MS = 1500, // and stop at this even before AUTO_MIN_RUNS (very slow devices)
};

struct candidate {
    const struct cc_backend_ops *ops;
    void *state;
    const char *label;        // "cpu", "vulkan"
    double ms[AUTO_MAX_RUNS]; // (n) timed runs
    int n;
    double median;
    struct cc_error run_err; // why the first failed run failed; "" when none did
};

/* "<hash> CPU: <name> (N threads[, 1x1 mode]) | <vulkan device name>", tabs and newlines made
 * spaces. The CPU part names what decides its speed (the CPU, the thread count, a forced 1x1
 * library), not the CPU backend's device name: that one counts the 1x1 convolutions that a
 * load-time measurement gave to BLIS, which can come out otherwise when cpu-layer-choices.txt
 * is gone or disabled, and would make a remembered choice look like another key. */
static void make_key(char *key, const struct cc_model *m, const struct cc_engine_options *opts,
                     const char *vk_device)
{
    char cpu[160];
    const char *mode = opts->cpu_pointwise == CC_CPU_POINTWISE_XNNPACK ? ", 1x1 XNNPACK"
                       : opts->cpu_pointwise == CC_CPU_POINTWISE_BLIS  ? ", 1x1 BLIS"
                                                                       : "";
    cc_cpu_describe(cpu, sizeof(cpu), cc_cpu_threads(opts->cpu_threads), mode);
    snprintf(key, KEY_SIZE, "%016" PRIx64 " %s | %s", cc_model_hash(m), cpu, vk_device);
    for (char *c = key; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r')
            *c = ' ';
}

/* ------------------------------------------------------------------------------------------
 * The cache file
 */

/* Finds key's line in text: the remembered backend label and both times. */
static bool cache_lookup(const char *text, const char *key, char *label, size_t label_size,
                         double *cpu_ms, double *vk_ms)
{
    char value[96], name[16];
    if (!cc_cache_lines_find(text, key, value, sizeof(value)) ||
        sscanf(value, "%15[a-z]\t%lf\t%lf", name, cpu_ms, vk_ms) != 3 ||
        (strcmp(name, "cpu") != 0 && strcmp(name, "vulkan") != 0))
        return false;
    snprintf(label, label_size, "%s", name);
    return true;
}

static bool cache_store(const char *path, const char *old, const char *key, const char *label,
                        double cpu_ms, double vk_ms, struct cc_error *err)
{
    char value[96];
    snprintf(value, sizeof(value), "%s\t%.3f\t%.3f", label, cpu_ms, vk_ms);
    return cc_cache_lines_store(path, CACHE_HEADER, old, key, value, err);
}

/* ------------------------------------------------------------------------------------------
 * Measuring
 */

/* One run of c; +inf when it fails (it then loses). */
static double timed_run(struct candidate *c, const float *in, float *out)
{
    struct cc_error e = {0};
    double t0 = cc_now_ms();
    if (c->ops->run(c->state, in, out, &e))
        return cc_now_ms() - t0;
    if (!c->run_err.msg[0])
        c->run_err = e;
    return INFINITY;
}

/* "6.1 ms", or "failed (why)" when most runs failed. */
static void describe_time(char *out, size_t size, const struct candidate *c)
{
    if (isfinite(c->median))
        snprintf(out, size, "%.1f ms", c->median);
    else
        snprintf(out, size, "failed (%s)", c->run_err.msg);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Times both candidates in turn on a zero input (see autoselect.h). */
static bool measure(const struct cc_model *m, struct candidate *c, int n_cand, struct cc_error *err)
{
    size_t n_in = (size_t)m->tensors[m->input.tensor].count;
    size_t n_out = (size_t)m->tensors[m->output.tensor].count;
    float *in = calloc(n_in, sizeof(float)), *out = calloc(n_out, sizeof(float));
    if (!in || !out) {
        free(in);
        free(out);
        return cc_error_set(err, "auto: out of memory for the measurement");
    }
    double t0 = cc_now_ms();
    for (int i = 0; i < n_cand; i++)
        timed_run(&c[i], in, out); // warm-up: first-run costs are not what a frame pays
    for (int r = 0; r < AUTO_MAX_RUNS; r++) {
        double spent = cc_now_ms() - t0;
        if ((r >= AUTO_MIN_RUNS && spent > AUTO_BUDGET_MS) || (r >= 1 && spent > AUTO_LIMIT_MS))
            break;
        for (int i = 0; i < n_cand; i++)
            c[i].ms[c[i].n++] = timed_run(&c[i], in, out);
    }
    free(in);
    free(out);
    for (int i = 0; i < n_cand; i++) {
        qsort(c[i].ms, (size_t)c[i].n, sizeof(double), cmp_double);
        c[i].median = c[i].ms[c[i].n / 2];
    }
    return true;
}

/* ------------------------------------------------------------------------------------------
 * Choosing
 */

/* Keeps candidate keep, destroys the other, returns keep's table. */
static const struct cc_backend_ops *keep(struct candidate *c, int keep_i, void **state)
{
    c[1 - keep_i].ops->destroy(c[1 - keep_i].state);
    *state = c[keep_i].state;
    return c[keep_i].ops;
}

/* Creates candidate i; on failure says why on notices (fallback names the other). */
static bool create(struct candidate *c, const struct cc_model *m,
                   const struct cc_engine_options *opts, struct cc_error *why)
{
    c->state = c->ops->create(m, opts, why);
    return c->state != NULL;
}

static void say_no_vulkan(FILE *notices, const struct cc_error *vk_err)
{
    if (notices)
        fprintf(notices, "camclass: Vulkan unavailable (%s); using the CPU backend\n",
                vk_err->msg[0] ? vk_err->msg : "no reason given");
}

/* Where the choice is remembered for this model and these devices. */
struct memory {
    char *path; // the cache file, NULL when none; owned
    char *old;  // its lines as read, NULL when none; owned
    char key[KEY_SIZE];
};

/* Both candidates created: measures them, says and remembers the faster, and re-creates Vulkan
 * with opts (--profile) when it wins. Returns the index of the one to keep; -1 with err set
 * (both destroyed) when the measurement cannot be made. */
static int measure_and_pick(const struct cc_model *m, const struct cc_engine_options *opts,
                            struct candidate *c, const char *vk_device, const struct memory *mem,
                            struct cc_error *err)
{
    FILE *notices = opts->notices;
    // Seconds on a Pi or a loaded machine: someone at a terminal is told why nothing shows.
    if (notices && isatty(fileno(notices)))
        fprintf(notices, "camclass: auto: timing the CPU and Vulkan backends on this model (once; "
                         "the choice is remembered)...\n");
    if (!measure(m, c, 2, err)) {
        c[0].ops->destroy(c[0].state);
        c[1].ops->destroy(c[1].state);
        return -1;
    }
    int pick = c[1].median < c[0].median ? 1 : 0; // a tie goes to the CPU
    char t_cpu[sizeof(c[0].run_err.msg) + 16], t_vk[sizeof(t_cpu)];
    describe_time(t_cpu, sizeof(t_cpu), &c[0]);
    describe_time(t_vk, sizeof(t_vk), &c[1]);
    if (notices)
        fprintf(notices, "camclass: auto: cpu %s, vulkan (%s) %s -> %s\n", t_cpu, vk_device, t_vk,
                c[pick].label);
    struct cc_error werr = {0};
    // A backend whose runs failed is not remembered as slower: the next start tries again.
    if (mem->path && isfinite(c[0].median) && isfinite(c[1].median) &&
        !cache_store(mem->path, mem->old, mem->key, c[pick].label, c[0].median, c[1].median,
                     &werr) &&
        notices)
        fprintf(notices, "camclass: auto: choice not remembered: %s\n", werr.msg);
    if (pick == 1 && opts->profile) { // again, with the timestamp queries asked for
        struct cc_error vk_err = {0};
        c[1].ops->destroy(c[1].state);
        if (!create(&c[1], m, opts, &vk_err)) {
            if (notices)
                fprintf(notices,
                        "camclass: auto: Vulkan with --profile failed (%s); using "
                        "the CPU backend\n",
                        vk_err.msg);
            pick = 0; // c[1].state is NULL: keep() destroys nothing
        }
    }
    return pick;
}

/* The CPU candidate c[0] created, and Vulkan's device named vk_device: the remembered choice,
 * else the measured one. */
static const struct cc_backend_ops *choose(const struct cc_model *m,
                                           const struct cc_engine_options *opts,
                                           struct candidate *c, const char *vk_device, void **state,
                                           struct cc_error *err)
{
    struct memory mem = {0};
    mem.path = opts->auto_cache ? (opts->auto_cache[0] ? strdup(opts->auto_cache) : NULL)
                                : cc_cache_file_default(CACHE_NAME);
    mem.old = mem.path ? cc_cache_lines_read(mem.path, CACHE_HEADER) : NULL;
    char label[16];
    make_key(mem.key, m, opts, vk_device);
    double cpu_ms, vk_ms;
    bool cached = mem.old && cache_lookup(mem.old, mem.key, label, sizeof(label), &cpu_ms, &vk_ms);
    // Measured without --profile: Vulkan's timestamp queries cost lavapipe ~30% a run (18.5 ->
    // 25.8 ms on the self-test model), and what is remembered is for runs without them too.
    // The CPU backend times its layers either way.
    struct cc_engine_options plain = *opts;
    plain.profile = false;
    struct cc_error vk_err = {0};
    const struct cc_backend_ops *chosen = NULL;
    int pick;
    if (cached && strcmp(label, "cpu") == 0) {
        *state = c[0].state;
        chosen = c[0].ops;
    } else if (!create(&c[1], m, cached ? opts : &plain, &vk_err)) {
        say_no_vulkan(opts->notices, &vk_err);
        *state = c[0].state;
        chosen = c[0].ops;
        cached = false; // nothing remembered is said
    } else if (cached) {
        chosen = keep(c, 1, state);
    } else if ((pick = measure_and_pick(m, opts, c, vk_device, &mem, err)) >= 0) {
        chosen = keep(c, pick, state);
    }
    if (cached && chosen && opts->notices)
        fprintf(opts->notices,
                "camclass: auto: %s (measured earlier: cpu %.1f ms, vulkan %.1f ms; %s)\n", label,
                cpu_ms, vk_ms, mem.path);
    free(mem.old);
    free(mem.path);
    return chosen;
}

const struct cc_backend_ops *cc_autoselect(const struct cc_model *m,
                                           const struct cc_engine_options *opts, void **state,
                                           struct cc_error *err)
{
    FILE *notices = opts->notices;
    struct candidate c[2] = {{.ops = &cc_xnn_backend, .label = "cpu"},
                             {.ops = &cc_vulkan_backend, .label = "vulkan"}};
    // The CPU backend first (tens of ms); the Vulkan device's name with an instance only, so
    // that a remembered "cpu" never pays for building Vulkan pipelines.
    struct cc_error cpu_err = {0}, vk_err = {0};
    char vk_device[256];
    if (!create(&c[0], m, opts, &cpu_err)) {
        if (!create(&c[1], m, opts, &vk_err)) {
            cc_error_set(err, "no backend can run the model: cpu: %s; vulkan: %s", cpu_err.msg,
                         vk_err.msg);
            return NULL;
        }
        if (notices)
            fprintf(notices, "camclass: CPU backend unavailable (%s); using Vulkan on %s\n",
                    cpu_err.msg, c[1].ops->device_name(c[1].state));
        *state = c[1].state;
        return c[1].ops;
    }
    if (!cc_vk_device_name(opts->device_index, vk_device, sizeof(vk_device), &vk_err)) {
        say_no_vulkan(notices, &vk_err);
        *state = c[0].state;
        return c[0].ops;
    }
    return choose(m, opts, c, vk_device, state, err);
}
