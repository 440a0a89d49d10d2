/* camclass — the int8 fused blocks in a whole network:
 *
 *     test_network_q8_fused INT8_BUNDLE
 *
 * INT8_BUNDLE (the build's random mobilenet_v2 with int8 weights and activations) on the CPU
 * backend layer by layer (CAMCLASS_CPU_FUSED=off: XNNPACK's QC8/QS8 operators) and with every
 * inverted-residual block fused (=on: engine/cpu/fused_q8.h), 1 and 2 threads, memory
 * poisoned before every run, on two random inputs. Passes when the fused engine says it runs
 * all 17 blocks fused in int8 and its outputs equal the unfused ones exactly: the fused
 * block computes XNNPACK's int8 arithmetic value for value, so no error may accumulate over
 * the 17 blocks. Likewise every 1x1 conv and the classifier on our int8 GEMM
 * (CAMCLASS_CPU_Q8GEMM=on, fused off: engine/cpu/q8_gemm.h) against XNNPACK's, every
 * depthwise conv on our int8 depthwise (CAMCLASS_CPU_Q8DW=on: engine/cpu/q8_dw.h) beside them,
 * and the stem on our int8 stem (CAMCLASS_CPU_Q8STEM=on, the rest off: engine/cpu/q8_stem.h,
 * which quantizes the f32 input itself) against XNNPACK's convert and conv. Also: a
 * layer-choice cache written for the int8 model (measured) has one letter per conv and linear,
 * 'x', 'f', 'q', 'S' or 'e', and forged all-'f' and all-'e' lines are obeyed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "testutil.h"

enum {
    BLOCKS = 17,    // mobilenet_v2's inverted-residual blocks
    POINTWISE = 35, // its 1x1 convs (16 expand, 17 project, features.18) and the classifier
    DEPTHWISE = 17, // its depthwise 3x3 convs, one a block
};

/* A value of CAMCLASS_CPU_Q8GEMM, _Q8STEM or _Q8DW: the given one, else "off" where fused is
 * "off". */
static const char *mode_or(const char *given, const char *fused)
{
    return given ? given : strcmp(fused, "off") ? "measure" : "off";
}

/* q8, q8stem, q8dw: CAMCLASS_CPU_Q8GEMM's, _Q8STEM's and _Q8DW's values (mode_or). */
static struct cc_engine *create_own(const char *bundle, const char *fused, const char *q8,
                                    const char *q8stem, const char *q8dw, int threads,
                                    const char *cache)
{
    struct cc_error err = {0};
    struct cc_engine_options o = cc_engine_options_default();
    o.backend = CC_BACKEND_CPU;
    o.cpu_threads = threads;
    o.cpu_cache = cache;
    o.poison = true;
    setenv("CAMCLASS_CPU_FUSED", fused, 1);
    setenv("CAMCLASS_CPU_Q8GEMM", mode_or(q8, fused), 1);
    setenv("CAMCLASS_CPU_Q8STEM", mode_or(q8stem, fused), 1);
    setenv("CAMCLASS_CPU_Q8DW", mode_or(q8dw, fused), 1);
    struct cc_engine *e = cc_engine_create(bundle, &o, &err);
    CHECKF(e != NULL, "cpu engine, fused %s, q8 %s, q8 stem %s, q8 dw %s, %d thread(s): %s",
           fused, q8 ? q8 : "-", q8stem ? q8stem : "-", q8dw ? q8dw : "-", threads, err.msg);
    return e;
}

static struct cc_engine *create(const char *bundle, const char *fused, int threads,
                                const char *cache)
{
    return create_own(bundle, fused, NULL, NULL, NULL, threads, cache);
}

/* Output of e on input seed (count values uniform in [-2, 2]); malloc'd, NULL on failure. */
static float *run(struct cc_engine *e, uint64_t seed)
{
    struct cc_error err = {0};
    size_t n_in = cc_engine_input_count(e), n_out = cc_engine_output_count(e);
    float *in = malloc(n_in * sizeof(float)), *out = malloc(n_out * sizeof(float));
    struct tu_rng r;
    tu_rng_seed(&r, seed);
    tu_rng_fill(&r, in, n_in, -2.0f, 2.0f);
    bool ok = CHECKF(cc_engine_run(e, in, out, &err), "run: %s", err.msg);
    free(in);
    if (!ok)
        free(out);
    return ok ? out : NULL;
}

/* fused's outputs against those of layers, XNNPACK's (what names the way fused runs). */
static void compare_with(const char *what, struct cc_engine *layers, struct cc_engine *fused,
                         int threads)
{
    for (uint64_t seed = 1; seed <= 2; seed++) {
        float *a = run(layers, seed), *b = run(fused, seed);
        size_t n = cc_engine_output_count(fused), worst = 0;
        if (a && b) {
            double diff = tu_max_abs_diff(a, b, n, &worst);
            printf("  input %d: max |%s - layers| = %g (of max %g)\n", (int)seed, what, diff,
                   tu_max_abs(a, n));
            CHECKF(diff == 0, "%d thread(s), input %d: %s %g, layers %g at output %zu", threads,
                   (int)seed, what, b[worst], a[worst], worst);
        }
        free(a), free(b);
    }
}

static void compare(const char *bundle, int threads)
{
    struct cc_engine *layers = create(bundle, "off", threads, "");
    struct cc_engine *fused = create(bundle, "on", threads, "");
    struct cc_engine *q8 = create_own(bundle, "off", "on", NULL, NULL, threads, "");
    struct cc_engine *dw = create_own(bundle, "off", "on", NULL, "on", threads, "");
    if (!layers || !fused || !q8 || !dw)
        goto done;
    const char *name = cc_engine_device_name(fused);
    char want[64];
    snprintf(want, sizeof(want), ", %d fused blocks (", BLOCKS);
    printf("%d thread(s): %s\n", threads, name);
    CHECKF(strstr(name, want) && strstr(name, "int8"), "not all blocks fused in int8: %s", name);
    compare_with("fused", layers, fused, threads);
    name = cc_engine_device_name(q8);
    snprintf(want, sizeof(want), ", %d int8 1x1 GEMMs", POINTWISE);
    printf("%d thread(s): %s\n", threads, name);
    CHECKF(strstr(name, want) && !strstr(name, "fused"), "not every 1x1 on the GEMM: %s", name);
    CHECKF(!strstr(cc_engine_device_name(layers), "GEMMs"), "layers: %s",
           cc_engine_device_name(layers));
    compare_with("q8 GEMM", layers, q8, threads);
    name = cc_engine_device_name(dw);
    snprintf(want, sizeof(want), ", %d int8 depthwise (", DEPTHWISE);
    printf("%d thread(s): %s\n", threads, name);
    CHECKF(strstr(name, want) && !strstr(name, "fused"), "not every depthwise ours: %s", name);
    CHECKF(!strstr(cc_engine_device_name(q8), "depthwise"), "q8: %s", cc_engine_device_name(q8));
    compare_with("q8 GEMM + depthwise", layers, dw, threads);
done:
    cc_engine_destroy(layers);
    cc_engine_destroy(fused);
    cc_engine_destroy(q8);
    cc_engine_destroy(dw);
}

/* The stem on our int8 stem, the rest on XNNPACK, against XNNPACK alone. */
static void compare_stem(const char *bundle, int threads)
{
    struct cc_engine *layers = create(bundle, "off", threads, "");
    struct cc_engine *stem = create_own(bundle, "off", "off", "on", NULL, threads, "");
    if (layers && stem) {
        const char *name = cc_engine_device_name(stem);
        printf("%d thread(s): %s\n", threads, name);
        CHECKF(strstr(name, ", int8 stem (") && !strstr(name, "GEMMs") && !strstr(name, "fused"),
               "the stem not on the int8 stem alone: %s", name);
        CHECKF(!strstr(cc_engine_device_name(layers), "stem"), "layers: %s",
               cc_engine_device_name(layers));
        compare_with("int8 stem", layers, stem, threads);
    }
    cc_engine_destroy(layers);
    cc_engine_destroy(stem);
}

/* The measured choices of the int8 model are cached, and a forged line is obeyed. */
static void check_cache(const char *bundle)
{
    char dir[] = "/tmp/camclass-q8-XXXXXX", path[300];
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    snprintf(path, sizeof(path), "%s/choices.txt", dir);
    cc_engine_destroy(create(bundle, "measure", 1, path));
    FILE *f = fopen(path, "r");
    char text[4096] = "";
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    text[len] = 0;
    if (f)
        fclose(f);
    char *tab = strrchr(text, '\t');
    int n = tab ? (int)strcspn(tab + 1, "\n") : 0;
    CHECKF(tab && n == 53 && (int)strspn(tab + 1, "xfqSe") == n, "int8 choices: %s", text);
    if (tab) {
        memset(tab + 1, 'f', (size_t)n);
        f = fopen(path, "w");
        if (CHECK(f != NULL)) {
            fputs(text, f);
            fclose(f);
        }
        struct cc_engine *e = create(bundle, "measure", 1, path);
        char want[64];
        snprintf(want, sizeof(want), ", %d fused blocks (", BLOCKS);
        CHECKF(e && strstr(cc_engine_device_name(e), want), "all-'f' line obeyed: %s",
               e ? cc_engine_device_name(e) : "-");
        cc_engine_destroy(e);
        memset(tab + 1, 'e', (size_t)n); // only the depthwise convs can be ours
        f = fopen(path, "w");
        if (CHECK(f != NULL)) {
            fputs(text, f);
            fclose(f);
        }
        e = create(bundle, "measure", 1, path);
        snprintf(want, sizeof(want), ", %d int8 depthwise (", DEPTHWISE);
        CHECKF(e && strstr(cc_engine_device_name(e), want) &&
                   !strstr(cc_engine_device_name(e), "GEMMs"),
               "all-'e' line obeyed: %s", e ? cc_engine_device_name(e) : "-");
        cc_engine_destroy(e);
    }
    unlink(path);
    rmdir(dir);
}

/* A CAMCLASS_CPU_Q8GEMM (or _Q8STEM) that is no mode: the engine is refused with one line
 * naming the variable and the values it takes. */
static void check_bad_mode(const char *bundle)
{
    struct cc_error err = {0};
    struct cc_engine_options o = cc_engine_options_default();
    o.backend = CC_BACKEND_CPU;
    o.cpu_cache = "";
    setenv("CAMCLASS_CPU_FUSED", "measure", 1);
    setenv("CAMCLASS_CPU_Q8GEMM", "fast", 1);
    struct cc_engine *e = cc_engine_create(bundle, &o, &err);
    CHECKF(!e && strstr(err.msg, "CAMCLASS_CPU_Q8GEMM=\"fast\"") && strstr(err.msg, "off or on"),
           "bad CAMCLASS_CPU_Q8GEMM: %s", e ? "accepted" : err.msg);
    cc_engine_destroy(e);
    setenv("CAMCLASS_CPU_Q8GEMM", "measure", 1);
    setenv("CAMCLASS_CPU_Q8STEM", "fast", 1);
    e = cc_engine_create(bundle, &o, &err);
    CHECKF(!e && strstr(err.msg, "CAMCLASS_CPU_Q8STEM=\"fast\""), "bad CAMCLASS_CPU_Q8STEM: %s",
           e ? "accepted" : err.msg);
    cc_engine_destroy(e);
    setenv("CAMCLASS_CPU_Q8STEM", "measure", 1);
    setenv("CAMCLASS_CPU_Q8DW", "fast", 1);
    e = cc_engine_create(bundle, &o, &err);
    CHECKF(!e && strstr(err.msg, "CAMCLASS_CPU_Q8DW=\"fast\"") && strstr(err.msg, "measure"),
           "bad CAMCLASS_CPU_Q8DW: %s", e ? "accepted" : err.msg);
    cc_engine_destroy(e);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s INT8_BUNDLE\n", argv[0]);
        return 2;
    }
    compare(argv[1], 1);
    compare(argv[1], 2);
    compare_stem(argv[1], 1);
    compare_stem(argv[1], 2);
    check_cache(argv[1]);
    check_bad_mode(argv[1]);
    return tu_exit_code();
}
