/* camclass-bench — loads a model bundle, runs it on a deterministic random input (or the one
 * given with --input) and reports load time, first-run time and the distribution of run
 * times; optionally a per-layer profile, a Chrome trace, and the raw output of the first run
 * (--save-output), so that anyone can compare camclass's numbers with their framework's.
 *
 * Exit status: 0 ok, 1 a failure (model, device, run), 2 bad command line.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bundle.h"
#include "engine.h"
#include "input_tensor.h"
#include "trace.h"
#include "clock.h"

enum { DEFAULT_RUNS = 50, DEFAULT_WARMUP = 3, TOP_LAYERS = 10 };

struct bench_args {
    const char *model;
    struct cc_engine_options opts;
    int runs, warmup;
    bool profile;
    const char *trace;       // path or NULL
    const char *input;       // --input: image or raw f32 file; NULL = fixed random input
    const char *save_output; // --save-output: raw f32 output of the first run; NULL = none
    bool list_devices;
};

/* The measurements of one benchmark: run times, and per-layer times when there are some. */
struct bench_result {
    double load_ms, first_ms;
    double *run_ms;     // (runs) wall time of each timed run
    double *layer_ms;   // (runs * n_nodes) per-layer time of each timed run; NULL if none
    const char **label; // (n_nodes) what ran at a layer where more than it (cc_layer_timing:
                        // "layer1.0.conv2 (+ add, relu)"), owned by the engine; NULL: its name
    bool have_layers;   // the backend reported layer timings
};

static const char usage[] =
    "usage: camclass-bench MODEL [options]\n"
    "Runs MODEL (a camclass bundle) on a fixed random input and prints its speed.\n"
    "  --backend B      auto (default: the faster, measured once), vulkan, cpu (XNNPACK)\n"
    "                   or ref (plain C)\n"
    "  --device N       Vulkan device index (see --list-devices); default: the best one\n"
    "  --threads N      CPU backend threads; default: online CPUs - 1, 1 to 4\n"
    "  --runs N         timed runs (default 50)\n"
    "  --warmup N       untimed runs after the first one (default 3)\n"
    "  --profile        per-layer times, grouped by op, and the 10 slowest layers\n"
    "  --trace FILE     write a Chrome trace (JSON, opens in Perfetto) of every timed run\n"
    "  --input FILE     run on FILE: a PNG/JPEG image (camclass's own preprocessing) or a raw\n"
    "                   little-endian float32 NCHW tensor of the model's input size\n"
    "  --save-output F  write the first run's raw output (little-endian float32) to F\n"
    "  --poison         cpu/ref: fill the memory a run writes with NaN / -128 before each\n"
    "                   run; an output that changes reads memory it did not write (a bug)\n"
    "  --vk-profile P   hold the Vulkan device to the limits of device P (pi4: the\n"
    "                   Raspberry Pi 4's v3dv), to see what would fit there\n"
    "  --list-devices   list the Vulkan devices and exit\n"
    "  --help           this text\n";

/* ------------------------------------------------------------------------------------------
 * Command line
 */

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    if (!s || !*s)
        return false;
    long v = strtol(s, &end, 10);
    if (*end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* Returns 0 to go on, 2 after printing one line about a bad argument, -1 after --help. */
/* A flag without a value: 1 taken, 0 not one of them, -1 --help (printed). */
static int parse_flag(const char *arg, struct bench_args *a)
{
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        fputs(usage, stdout);
        return -1;
    }
    bool *flag = strcmp(arg, "--profile") == 0        ? &a->profile
                 : strcmp(arg, "--poison") == 0       ? &a->opts.poison
                 : strcmp(arg, "--list-devices") == 0 ? &a->list_devices
                                                      : NULL;
    if (flag)
        *flag = true;
    return flag != NULL;
}

/* A named choice: --backend or --vk-profile. 1 taken, 0 not one of them, 2 bad value (said). */
static int parse_choice(const char *arg, const char *val, struct bench_args *a)
{
    const char *known = "auto, vulkan, cpu or ref";
    bool ok;
    if (strcmp(arg, "--backend") == 0) {
        ok = cc_backend_kind_parse(val, &a->opts.backend);
    } else if (strcmp(arg, "--vk-profile") == 0) {
        ok = cc_engine_vk_profile_known(val, &known);
        a->opts.vk_profile = val;
    } else {
        return 0;
    }
    if (!ok)
        fprintf(stderr, "camclass-bench: %s takes %s, not \"%s\"\n", arg, known, val ? val : "");
    return ok ? 1 : 2;
}

/* An option with a value (val: the next argument, or NULL): 0 taken, else the exit status. */
static int parse_valued(const char *arg, const char *val, struct bench_args *a)
{
    const struct {
        const char *flag;
        const char **dst;
    } files[] = {
        {"--trace", &a->trace}, {"--input", &a->input}, {"--save-output", &a->save_output}};
    const struct {
        const char *flag;
        int lo, hi;
        int *dst;
    } ints[] = {
        {"--device", 0, 1000, &a->opts.device_index},
        {"--threads", 1, 16, &a->opts.cpu_threads},
        {"--runs", 1, 1000000, &a->runs},
        {"--warmup", 0, 1000000, &a->warmup},
    };
    int choice = parse_choice(arg, val, a);
    if (choice)
        return choice == 1 ? 0 : 2;
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
        if (strcmp(arg, files[f].flag) == 0) {
            if (val && *val)
                *files[f].dst = val;
            else
                fprintf(stderr, "camclass-bench: %s needs a file name\n", arg);
            return val && *val ? 0 : 2;
        }
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
        if (strcmp(arg, ints[k].flag) == 0) {
            if (parse_int(val, ints[k].lo, ints[k].hi, ints[k].dst))
                return 0;
            fprintf(stderr, "camclass-bench: %s takes a whole number from %d to %d, not \"%s\"\n",
                    arg, ints[k].lo, ints[k].hi, val ? val : "");
            return 2;
        }
    fprintf(stderr, "camclass-bench: unknown option %s; see --help\n", arg);
    return 2;
}

static int parse_args(int argc, char **argv, struct bench_args *a)
{
    *a = (struct bench_args){
        .opts = cc_engine_options_default(), .runs = DEFAULT_RUNS, .warmup = DEFAULT_WARMUP};
    a->opts.notices = stderr;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int flag = parse_flag(arg, a), rc = 0;
        if (flag)
            rc = flag < 0 ? -1 : 0;
        else if (arg[0] != '-' || !arg[1]) {
            if (a->model)
                fprintf(stderr, "camclass-bench: one MODEL only (got %s and %s); see --help\n",
                        a->model, arg);
            rc = a->model ? 2 : 0;
            a->model = a->model ? a->model : arg;
        } else {
            rc = parse_valued(arg, i + 1 < argc ? argv[i + 1] : NULL, a);
            i++;
        }
        if (rc)
            return rc;
    }
    if (!a->model && !a->list_devices) {
        fprintf(stderr, "camclass-bench: no MODEL given; see --help\n");
        return 2;
    }
    a->opts.profile = a->profile || a->trace;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Measuring
 */

/* The same input every time: xorshift64* from a fixed seed, uniform in [-2, 2) (about the
 * range of a normalized image). */
static void fill_input(float *x, size_t n)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        uint32_t r = (uint32_t)((s * 2685821657736338717ull) >> 40); // 24 bits
        x[i] = (float)r / (float)(1u << 24) * 4.0f - 2.0f;
    }
}

/* Copies the last run's layer timings into row (n_nodes) values, their labels into label. */
static void keep_layers(const struct cc_engine *e, double *row, const char **label, int n_nodes,
                        bool *have)
{
    const struct cc_layer_timing *t;
    int n = cc_engine_layer_timings(e, &t);
    for (int i = 0; i < n; i++)
        if (t[i].node >= 0 && t[i].node < n_nodes) {
            row[t[i].node] += t[i].ms;
            label[t[i].node] = t[i].label ? t[i].label : label[t[i].node];
        }
    *have = n > 0;
}

/* A layer's name in the reports: what ran there (its label) or the node's name. */
static const char *layer_name(const struct cc_model *m, const struct bench_result *r, int node)
{
    return r->label[node] ? r->label[node] : m->nodes[node].name;
}

/* Writes n floats to path (the caller's file: replaced). */
static bool save_output(const char *path, const float *out, size_t n, struct cc_error *err)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(out, sizeof(float), n, f) == n;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        return cc_error_set(err, "cannot write the output to %s: %s", path, strerror(errno));
    printf("output      %s (%zu float32, first run)\n", path, n);
    return true;
}

static bool measure(struct cc_engine *e, const struct bench_args *a, struct bench_result *r,
                    struct cc_error *err)
{
    int n_nodes = cc_engine_model(e)->n_nodes;
    size_t n_in = cc_engine_input_count(e), n_out = cc_engine_output_count(e);
    float *in = malloc(n_in * sizeof(float)), *out = malloc(n_out * sizeof(float));
    r->run_ms = calloc((size_t)a->runs, sizeof(double));
    r->layer_ms = calloc((size_t)a->runs * (size_t)(n_nodes > 0 ? n_nodes : 1), sizeof(double));
    r->label = calloc((size_t)(n_nodes > 0 ? n_nodes : 1), sizeof(*r->label));
    bool ok = in && out && r->run_ms && r->layer_ms && r->label;
    if (!ok)
        cc_error_set(err, "out of memory for %d runs", a->runs);
    char what[160] = "fixed random values in [-2, 2)";
    if (ok && a->input)
        ok = cc_input_tensor_load(a->input, cc_engine_model(e), in, n_in, what, sizeof(what), err);
    else if (ok)
        fill_input(in, n_in);
    if (ok)
        printf("input       %s (%s)\n", a->input ? a->input : "-", what);

    double t0 = cc_now_ms();
    ok = ok && cc_engine_run(e, in, out, err);
    r->first_ms = cc_now_ms() - t0;
    if (ok && a->save_output)
        ok = save_output(a->save_output, out, n_out, err);
    for (int i = 0; ok && i < a->warmup; i++)
        ok = cc_engine_run(e, in, out, err);
    for (int i = 0; ok && i < a->runs; i++) {
        t0 = cc_now_ms();
        ok = cc_engine_run(e, in, out, err);
        r->run_ms[i] = cc_now_ms() - t0;
        keep_layers(e, &r->layer_ms[(size_t)i * n_nodes], r->label, n_nodes, &r->have_layers);
    }
    if (ok) {
        struct cc_topk top;
        cc_topk(out, (int)n_out, 1, &top);
        const struct cc_model *m = cc_engine_model(e);
        printf("top-1       %d%s%s (%.4g)\n", top.index, m->n_labels ? " " : "",
               m->n_labels ? m->labels[top.index] : "", (double)top.score);
    }
    free(in);
    free(out);
    return ok;
}

/* ------------------------------------------------------------------------------------------
 * Reports
 */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

// Nearest-rank percentile of sorted values.
static double percentile(const double *sorted, int n, double p)
{
    int rank = (int)ceil(p / 100.0 * n);
    return sorted[rank < 1 ? 0 : rank - 1];
}

static void print_times(const struct bench_result *r, int runs)
{
    double *s = malloc((size_t)runs * sizeof(double));
    if (!s)
        return;
    memcpy(s, r->run_ms, (size_t)runs * sizeof(double));
    qsort(s, (size_t)runs, sizeof(double), cmp_double);
    double median = runs % 2 ? s[runs / 2] : (s[runs / 2 - 1] + s[runs / 2]) / 2;
    printf("load        %.1f ms\n", r->load_ms);
    printf("first run   %.2f ms\n", r->first_ms);
    printf("runs        %d\n", runs);
    printf("median      %.2f ms  (%.1f fps)\n", median, 1000.0 / median);
    printf("p90         %.2f ms\n", percentile(s, runs, 90));
    printf("p99         %.2f ms\n", percentile(s, runs, 99));
    printf("min         %.2f ms\n", s[0]);
    free(s);
}

struct layer_row {
    int node;
    double ms; // mean over the runs
};

static int cmp_layer_desc(const void *pa, const void *pb)
{
    const struct layer_row *a = pa, *b = pb;
    return a->ms > b->ms ? -1 : a->ms < b->ms;
}

static void print_profile(const struct cc_model *m, const struct bench_result *r, int runs)
{
    if (!r->have_layers) {
        printf("\nprofile: this backend reported no layer timings\n");
        return;
    }
    struct layer_row *rows = calloc((size_t)m->n_nodes, sizeof(*rows));
    if (!rows)
        return;
    double op_ms[CC_OP_COUNT] = {0}, run_mean = 0, layer_total = 0;
    int op_count[CC_OP_COUNT] = {0};
    for (int i = 0; i < runs; i++)
        run_mean += r->run_ms[i] / runs;
    for (int n = 0; n < m->n_nodes; n++) {
        rows[n].node = n;
        for (int i = 0; i < runs; i++)
            rows[n].ms += r->layer_ms[(size_t)i * m->n_nodes + n] / runs;
        op_ms[m->nodes[n].op] += rows[n].ms;
        op_count[m->nodes[n].op]++;
        layer_total += rows[n].ms;
    }

    printf("\nper op (mean of %d runs; layers sum to %.2f ms of a %.2f ms run)\n", runs,
           layer_total, run_mean);
    printf("  %-16s %10s %8s %6s\n", "op", "total ms", "% run", "count");
    for (int op = 0; op < CC_OP_COUNT; op++)
        if (op_count[op])
            printf("  %-16s %10.3f %7.1f%% %6d\n", cc_op_name((enum cc_op)op), op_ms[op],
                   100.0 * op_ms[op] / run_mean, op_count[op]);

    qsort(rows, (size_t)m->n_nodes, sizeof(*rows), cmp_layer_desc);
    int top = m->n_nodes < TOP_LAYERS ? m->n_nodes : TOP_LAYERS;
    printf("\nslowest %d layers\n", top);
    printf("  %-32s %-16s %10s %8s\n", "layer", "op", "ms", "% run");
    for (int i = 0; i < top; i++) {
        const struct cc_node *node = &m->nodes[rows[i].node];
        printf("  %-32s %-16s %10.3f %7.1f%%\n", layer_name(m, r, rows[i].node),
               cc_op_name(node->op), rows[i].ms, 100.0 * rows[i].ms / run_mean);
    }
    free(rows);
}

/* One "run N" event per timed run on track 1, its layers back to back on track 2 (runs are
 * placed one after another; only durations are measured). */
static bool write_trace(const char *path, const struct cc_model *m, const struct bench_result *r,
                        int runs, struct cc_error *err)
{
    struct cc_trace *t = cc_trace_create();
    bool ok = t && cc_trace_thread_name(t, 1, "runs") && cc_trace_thread_name(t, 2, "layers");
    double ts = 0;
    for (int i = 0; ok && i < runs; i++) {
        char name[32];
        snprintf(name, sizeof(name), "run %d", i);
        ok = cc_trace_complete(t, name, "run", 1, ts * 1e3, r->run_ms[i] * 1e3, i);
        double lts = ts;
        for (int n = 0; ok && r->have_layers && n < m->n_nodes; n++) {
            double ms = r->layer_ms[(size_t)i * m->n_nodes + n];
            ok = cc_trace_complete(t, layer_name(m, r, n), cc_op_name(m->nodes[n].op), 2, lts * 1e3,
                                   ms * 1e3, i);
            lts += ms;
        }
        ts += r->run_ms[i];
    }
    if (!ok)
        cc_error_set(err, "trace: out of memory for %d runs", runs);
    ok = ok && cc_trace_write(t, path, err);
    cc_trace_destroy(t);
    return ok;
}

/* ------------------------------------------------------------------------------------------
 * main
 */

int main(int argc, char **argv)
{
    struct bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;

    struct cc_error err = {0};
    if (a.list_devices) {
        int n = cc_engine_list_devices(stdout, &err);
        if (n < 0) {
            fprintf(stderr, "camclass-bench: %s\n", err.msg);
            return 1;
        }
        return 0;
    }

    struct bench_result r = {0};
    double t0 = cc_now_ms();
    // A file that is no usable bundle is a bad argument (exit 2, as camclass); a backend that
    // cannot take it is a failure (1).
    struct cc_model *model = cc_bundle_load(a.model, &err);
    if (!model) {
        fprintf(stderr, "camclass-bench: %s\n", err.msg);
        return 2;
    }
    struct cc_engine *e = cc_engine_create_from_model(model, &a.opts, &err);
    r.load_ms = cc_now_ms() - t0;
    if (!e) {
        fprintf(stderr, "camclass-bench: %s\n", err.msg);
        return 1;
    }
    const struct cc_model *m = cc_engine_model(e);
    printf("model       %s (%s, %d nodes)\n", m->name, a.model, m->n_nodes);
    printf("backend     %s\n", cc_engine_backend_name(e));
    printf("device      %s\n", cc_engine_device_name(e));

    bool ok = measure(e, &a, &r, &err);
    if (ok) {
        print_times(&r, a.runs);
        if (a.profile)
            print_profile(m, &r, a.runs);
        if (a.trace && (ok = write_trace(a.trace, m, &r, a.runs, &err)))
            printf("\ntrace       %s\n", a.trace);
    }
    if (!ok)
        fprintf(stderr, "camclass-bench: %s\n", err.msg);
    free(r.run_ms);
    free(r.layer_ms);
    free(r.label);
    cc_engine_destroy(e);
    return ok ? 0 : 1;
}
