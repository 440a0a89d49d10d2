/* camclass — Vulkan faults injected mid-run (cc_engine_options.vk_fault, vk_context.h) and the
 * engine's recovery to the CPU backend (cc_engine_run).
 *
 * lavapipe never runs out of memory or loses the device on demand, so our wrappers around
 * vkAllocateMemory / vkQueueSubmit / vkWaitForFences return the driver's error at the Nth call;
 * everything above them is the real error handling. On the self-test model (one Vulkan
 * segment: one submission per run):
 *   - alloc:1 and alloc:2: the load fails with one line naming vkAllocateMemory and
 *     VK_ERROR_OUT_OF_DEVICE_MEMORY (no crash, no leak under ASan);
 *   - lost:2 on --backend vulkan without fallback: run 1 works, run 2 fails naming
 *     vkWaitForFences and VK_ERROR_DEVICE_LOST, run 3 too (a lost device stays lost: now
 *     vkQueueSubmit), and the backend stays vulkan;
 *   - oom:2 and lost:2 with cpu_fallback: run 2 succeeds on the CPU backend, one notice line
 *     names the VkResult and the switch, and runs 2 and 3 give the CPU-only engine's output
 *     (within 1e-5 x max) and its top-1;
 *   - backend auto with a remembered choice of vulkan (the cache file written by a first auto
 *     start, its label turned to vulkan): lost:1 on the first run switches to the CPU;
 *   - backend auto measuring (no cache) with lost:1: the Vulkan timing runs fail, the CPU is
 *     chosen, the notice says why;
 *   - bad fault specs are refused with a line naming them.
 *
 * Without a Vulkan device this test FAILS: CI installs mesa-vulkan-drivers (lavapipe).
 * argv[1]: the self-test bundle (assets/models/selftest.ccm).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "testutil.h"

#define TOLERANCE 1e-5

struct fixture {
    const char *bundle;
    char pipeline_cache[64]; // one per test run: later Vulkan loads reuse the pipelines
    float *input, *cpu_out;  // the input, and the CPU-only engine's output for it
    size_t n_in, n_out;
};

static struct cc_engine_options options(const struct fixture *fx, enum cc_backend_kind kind,
                                        const char *fault, FILE *notices)
{
    struct cc_engine_options opt = cc_engine_options_default();
    opt.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    opt.backend = kind;
    opt.pipeline_cache = fx->pipeline_cache;
    opt.cpu_cache = "";
    opt.auto_cache = "";
    opt.cpu_threads = 1;
    opt.vk_fault = fault;
    opt.notices = notices;
    return opt;
}

/* Lines of f (rewound) that contain needle. */
static int count_lines(FILE *f, const char *needle)
{
    char line[1024];
    int n = 0;
    rewind(f);
    while (fgets(line, sizeof(line), f))
        n += strstr(line, needle) != NULL;
    return n;
}

static int top1(const float *x, size_t n)
{
    struct cc_topk t;
    return cc_topk(x, (int)n, 1, &t) == 1 ? t.index : -1;
}

static void check_like_cpu(const struct fixture *fx, const float *out, const char *what)
{
    size_t worst;
    double d = tu_max_abs_diff(out, fx->cpu_out, fx->n_out, &worst);
    double m = tu_max_abs(fx->cpu_out, fx->n_out);
    CHECKF(d <= TOLERANCE * m, "%s: differs from the CPU-only run by %g (max %g)", what, d, m);
    CHECKF(top1(out, fx->n_out) == top1(fx->cpu_out, fx->n_out), "%s: top-1 %d, CPU-only %d", what,
           top1(out, fx->n_out), top1(fx->cpu_out, fx->n_out));
}

static void load_fails(const struct fixture *fx, const char *fault)
{
    struct cc_error err = {0};
    struct cc_engine_options opt = options(fx, CC_BACKEND_VULKAN, fault, NULL);
    struct cc_engine *e = cc_engine_create(fx->bundle, &opt, &err);
    CHECKF(!e, "%s: the load should fail", fault);
    CHECKF(strstr(err.msg, "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"),
           "%s: error \"%s\"", fault, err.msg);
    cc_engine_destroy(e);
}

static void lost_without_fallback(const struct fixture *fx)
{
    struct cc_error err = {0};
    struct cc_engine_options opt = options(fx, CC_BACKEND_VULKAN, "lost:2", NULL);
    struct cc_engine *e = cc_engine_create(fx->bundle, &opt, &err);
    CHECKF(e, "vulkan lost:2: load: %s", err.msg);
    if (!e)
        return;
    float *out = calloc(fx->n_out, sizeof(float));
    CHECKF(cc_engine_run(e, fx->input, out, &err), "run 1: %s", err.msg);
    err.msg[0] = '\0';
    CHECK(!cc_engine_run(e, fx->input, out, &err));
    CHECKF(strstr(err.msg, "vkWaitForFences failed: VK_ERROR_DEVICE_LOST"), "run 2: \"%s\"",
           err.msg);
    err.msg[0] = '\0';
    CHECK(!cc_engine_run(e, fx->input, out, &err));
    CHECKF(strstr(err.msg, "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST"), "run 3: \"%s\"", err.msg);
    CHECK(strcmp(cc_engine_backend_name(e), "vulkan") == 0);
    free(out);
    cc_engine_destroy(e);
}

/* The engine on kind with fault; runs 1..3: run fail_at fails on Vulkan, the CPU takes over. */
static void falls_back(const struct fixture *fx, enum cc_backend_kind kind, const char *fault,
                       const char *vk_result, int fail_at, const char *auto_cache)
{
    FILE *notices = tmpfile();
    struct cc_error err = {0};
    struct cc_engine_options opt = options(fx, kind, fault, notices);
    opt.cpu_fallback = kind == CC_BACKEND_VULKAN;
    if (auto_cache)
        opt.auto_cache = auto_cache;
    struct cc_engine *e = cc_engine_create(fx->bundle, &opt, &err);
    CHECKF(e, "%s: load: %s", fault, err.msg);
    if (!e || !notices) {
        if (notices)
            fclose(notices);
        return;
    }
    CHECKF(strcmp(cc_engine_backend_name(e), "vulkan") == 0, "%s: loaded on %s", fault,
           cc_engine_backend_name(e));
    float *out = calloc(fx->n_out, sizeof(float));
    for (int run = 1; run <= 3; run++) {
        memset(out, 0, fx->n_out * sizeof(float));
        CHECKF(cc_engine_run(e, fx->input, out, &err), "%s: run %d: %s", fault, run, err.msg);
        const char *want = run < fail_at ? "vulkan" : "cpu";
        CHECKF(strcmp(cc_engine_backend_name(e), want) == 0, "%s: run %d on %s, not %s", fault, run,
               cc_engine_backend_name(e), want);
        char what[64];
        snprintf(what, sizeof(what), "%s run %d", fault, run);
        if (run >= fail_at)
            check_like_cpu(fx, out, what);
    }
    fflush(notices);
    int switched = count_lines(notices, "switched to the CPU backend");
    int named = count_lines(notices, vk_result);
    CHECKF(switched == 1, "%s: %d notice lines about the switch, want 1", fault, switched);
    CHECKF(named == 1, "%s: %d notice lines name %s, want 1", fault, named, vk_result);
    free(out);
    cc_engine_destroy(e);
    fclose(notices);
}

/* backend auto with vulkan remembered: a first start writes the cache, its label is turned to
 * vulkan (lines are "key\tlabel\tcpu_ms\tvk_ms"). */
static void auto_remembered_vulkan(const struct fixture *fx)
{
    char cache[] = "/tmp/camclass-test-faults-auto-XXXXXX";
    int fd = mkstemp(cache);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    unlink(cache); // absent: the first start measures and writes it
    struct cc_error err = {0};
    struct cc_engine_options opt = options(fx, CC_BACKEND_AUTO, NULL, NULL);
    opt.auto_cache = cache;
    struct cc_engine *e = cc_engine_create(fx->bundle, &opt, &err);
    CHECKF(e, "auto: %s", err.msg);
    cc_engine_destroy(e);
    size_t size = 0;
    char *text = tu_read_file(cache, &size);
    CHECKF(text, "auto did not write %s", cache);
    if (!text)
        return;
    char *line = strchr(text, '\n'); // past the header
    char *tab = line ? strchr(line, '\t') : NULL;
    CHECKF(tab, "no choice line in %s", cache);
    FILE *f = tab ? fopen(cache, "w") : NULL;
    if (f) {
        const char *rest = strncmp(tab + 1, "cpu\t", 4) == 0 ? tab + 4 : tab + 7; // cpu/vulkan
        fprintf(f, "%.*svulkan%s", (int)(tab + 1 - text), text, rest);
        fclose(f);
        falls_back(fx, CC_BACKEND_AUTO, "lost:1", "VK_ERROR_DEVICE_LOST", 1, cache);
    }
    free(text);
    unlink(cache);
}

/* backend auto measuring: the Vulkan timing runs fail, the CPU wins and the notice says why. */
static void auto_measuring(const struct fixture *fx)
{
    FILE *notices = tmpfile();
    struct cc_error err = {0};
    struct cc_engine_options opt = options(fx, CC_BACKEND_AUTO, "lost:1", notices);
    struct cc_engine *e = cc_engine_create(fx->bundle, &opt, &err);
    CHECKF(e, "auto lost:1: %s", err.msg);
    if (e) {
        CHECK(strcmp(cc_engine_backend_name(e), "cpu") == 0);
        float *out = calloc(fx->n_out, sizeof(float));
        CHECKF(cc_engine_run(e, fx->input, out, &err), "auto lost:1 run: %s", err.msg);
        check_like_cpu(fx, out, "auto lost:1");
        free(out);
    }
    fflush(notices);
    CHECKF(count_lines(notices, "failed (vkWaitForFences failed: VK_ERROR_DEVICE_LOST") == 1,
           "auto lost:1: the notice does not say why vulkan lost");
    cc_engine_destroy(e);
    fclose(notices);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_faults SELFTEST.ccm\n");
        return 2;
    }
    struct fixture fx = {.bundle = argv[1]};
    snprintf(fx.pipeline_cache, sizeof(fx.pipeline_cache), "/tmp/camclass-test-faults-%d.cache",
             (int)getpid());

    struct cc_error err = {0};
    const char *bad[] = {"alloc", "alloc:", "alloc:0", "lost:-1", "lost:2x", "melt:1", ":3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        CHECKF(!cc_engine_vk_fault_valid(bad[i], &err) && strstr(err.msg, bad[i]) &&
                   strstr(err.msg, "alloc:N, oom:N or lost:N"),
               "spec \"%s\": \"%s\"", bad[i], err.msg);
    }
    CHECK(cc_engine_vk_fault_valid(NULL, &err) && cc_engine_vk_fault_valid("oom:12", &err));

    // The CPU-only engine's output: what a run after the switch must give.
    struct cc_engine_options opt = options(&fx, CC_BACKEND_CPU, NULL, NULL);
    struct cc_engine *cpu = cc_engine_create(fx.bundle, &opt, &err);
    CHECKF(cpu, "cpu: %s", err.msg);
    if (!cpu)
        return tu_exit_code();
    fx.n_in = cc_engine_input_count(cpu);
    fx.n_out = cc_engine_output_count(cpu);
    fx.input = malloc(fx.n_in * sizeof(float));
    fx.cpu_out = malloc(fx.n_out * sizeof(float));
    struct tu_rng rng;
    tu_rng_seed(&rng, 12);
    tu_rng_fill(&rng, fx.input, fx.n_in, -2.0f, 2.0f);
    CHECKF(cc_engine_run(cpu, fx.input, fx.cpu_out, &err), "cpu run: %s", err.msg);
    cc_engine_destroy(cpu);

    load_fails(&fx, "alloc:1");
    load_fails(&fx, "alloc:2");
    lost_without_fallback(&fx);
    falls_back(&fx, CC_BACKEND_VULKAN, "oom:2",
               "vkQueueSubmit failed: VK_ERROR_OUT_OF_DEVICE_MEMORY", 2, NULL);
    falls_back(&fx, CC_BACKEND_VULKAN, "lost:2", "vkWaitForFences failed: VK_ERROR_DEVICE_LOST", 2,
               NULL);
    auto_remembered_vulkan(&fx);
    auto_measuring(&fx);

    free(fx.input);
    free(fx.cpu_out);
    unlink(fx.pipeline_cache);
    return tu_exit_code();
}
