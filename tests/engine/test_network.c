/* camclass — whole-network test: a bundle on one backend against PyTorch's own logits.
 *
 *     test_network BACKEND BUNDLE INPUT.bin LOGITS.bin
 *
 * INPUT.bin (two NCHW f32 inputs, one after the other) and LOGITS.bin (PyTorch's f32 logits
 * for each) come from tests/engine/make_reference.py, which runs the original, unfused module
 * in the same build. First the model must be input-sensitive: the two inputs' logits differ by
 * >= 5% of max |ref|, in PyTorch's and in the engine's output (else the parity below would say
 * little about the early layers). Then, for each input,
 *     max |logit - ref| <= 1e-4 * max |ref|   and   the top-5 indices are identical in order,
 * and a second run of the first input gives the same result (re-submitting the recorded work).
 * The requested backend must be the one that runs: no fallback is accepted. With
 * CAMCLASS_CPU_STEM forcing the CPU backend's direct stem on, the stem must have run; with
 * CAMCLASS_CPU_FUSED=on, fused inverted-residual blocks must have; with CAMCLASS_CPU_PW forcing
 * the CPU backend's own 1x1 GEMM on, some 1x1 convolution must have run on it; with
 * CAMCLASS_CPU_CONV3X3=on, winograd or winograd4, our own k x k convolutions (Winograd ones for
 * winograd and winograd4);
 * TEST_FUSED_BLOCKS (when set) is how many blocks must be fused, TEST_PW_LAYERS how many 1x1
 * convolutions must run on the own GEMM, TEST_RESIDUAL_CONVS how many of the own k x k
 * convolutions must have taken their residual add (xnn_resfuse.h), each named in the layer
 * timings as "<conv> (+ add, relu)" (the profile's name for it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "testutil.h"

#define TOLERANCE 1e-4   // relative to max |ref|
#define SENSITIVITY 0.05 // two inputs must move the logits by this x max |ref|
#define TOP_K 5

/* When want is set (not empty): the device line of e must say before, want, after. */
static void check_count(const struct cc_engine *e, const char *want, const char *before,
                        const char *after)
{
    if (!want || !want[0])
        return;
    char said[64];
    snprintf(said, sizeof(said), "%s%s%s", before, want, after);
    CHECKF(strstr(cc_engine_device_name(e), said) != NULL, "want \"%s\": device %s", said,
           cc_engine_device_name(e));
}

/* When want is set (not empty): the last run's layer timings name that many convolutions that
 * took the residual add and ReLU after them (xnn_resfuse.h), each under its own name, as
 * "<conv> (+ add, relu)", and nothing else has a label (camclass-bench --profile shows them). */
static void check_residual_names(const struct cc_engine *e, const char *want)
{
    if (!want || !want[0])
        return;
    const struct cc_model *m = cc_engine_model(e);
    const struct cc_layer_timing *t = NULL;
    int n = cc_engine_layer_timings(e, &t), named = 0;
    for (int i = 0; i < n; i++) {
        if (!t[i].label)
            continue;
        const struct cc_node *node = &m->nodes[t[i].node];
        char label[256];
        snprintf(label, sizeof(label), "%s (+ add, relu)", node->name);
        named += CHECKF(node->op == CC_OP_CONV2D && !strcmp(t[i].label, label),
                        "layer %d's label \"%s\": want a convolution's, \"%s\"", t[i].node,
                        t[i].label, label);
    }
    CHECKF(named == atoi(want), "%d convolutions named with their residual add, want %s", named,
           want);
}

/* Reads a raw f32 file that must hold exactly count values; NULL (and a failed check) else. */
static float *read_f32(const char *path, size_t count)
{
    size_t size = 0;
    float *data = tu_read_file(path, &size);
    if (!CHECKF(data != NULL, "cannot read %s", path))
        return NULL;
    if (!CHECKF(size == count * sizeof(float), "%s holds %zu bytes, the model needs %zu", path,
                size, count * sizeof(float))) {
        free(data);
        return NULL;
    }
    return data;
}

static void check_logits(const char *what, const float *out, const float *ref, size_t n)
{
    size_t worst = 0;
    double err = tu_max_abs_diff(out, ref, n, &worst);
    double scale = tu_max_abs(ref, n);
    printf("%s: max |logit - ref| = %.3g at %zu (%.3g x max|ref| %.4g; tolerance %.0e)\n", what,
           err, worst, err / scale, scale, TOLERANCE);
    CHECKF(err <= TOLERANCE * scale, "%s: max |logit - ref| %.3g > %.0e x %.4g (logit %zu)", what,
           err, TOLERANCE, scale, worst);
    printf("%s: logit %zu: %.7g, PyTorch %.7g\n", what, worst, out[worst], ref[worst]);

    struct cc_topk got[TOP_K], want[TOP_K];
    int k = cc_topk(out, (int)n, TOP_K, got);
    CHECK(cc_topk(ref, (int)n, TOP_K, want) == k);
    printf("%s: top-%d", what, k);
    for (int i = 0; i < k; i++)
        printf(" %d (%.5f / ref %d %.5f)", got[i].index, got[i].score, want[i].index,
               want[i].score);
    printf("\n");
    for (int i = 0; i < k; i++)
        CHECKF(got[i].index == want[i].index, "%s: top-%d rank %d is class %d, PyTorch says %d",
               what, k, i + 1, got[i].index, want[i].index);
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr,
                "usage: %s cpu|vulkan[:PROFILE]|ref BUNDLE INPUT.bin LOGITS.bin [THREADS]\n",
                argv[0]);
        return 2;
    }
    struct cc_engine_options opt = cc_engine_options_default();
    opt.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    // vulkan:pi4 = the Vulkan backend held to the Raspberry Pi 4's limits (vk_profile.h)
    char backend[32];
    snprintf(backend, sizeof(backend), "%s", argv[1]);
    char *colon = strchr(backend, ':');
    if (colon) {
        *colon = '\0';
        opt.vk_profile = colon + 1;
    }
    if (!cc_backend_kind_parse(backend, &opt.backend) || opt.backend == CC_BACKEND_AUTO) {
        fprintf(stderr, "%s: backend must be cpu, vulkan or ref, not %s\n", argv[0], argv[1]);
        return 2;
    }
    opt.cpu_threads = argc == 6 ? atoi(argv[5]) : 0; // the thread pool's split is checked too
    /* Notices go to stderr as they are, and are checked: no node of a whole network may run
     * on the CPU behind the Vulkan backend's back (per-op fallback), with or without a
     * profile's limits. */
    char *said = NULL;
    size_t said_size = 0;
    opt.notices = open_memstream(&said, &said_size);

    struct cc_error err = {0};
    struct cc_engine *e = cc_engine_create(argv[2], &opt, &err);
    fclose(opt.notices);
    fputs(said ? said : "", stderr);
    CHECKF(!said || !strstr(said, "on the CPU between Vulkan segments"),
           "part of the network ran on the CPU: %s", said);
    free(said);
    if (!CHECKF(e != NULL, "cc_engine_create(%s, %s): %s", argv[2], argv[1], err.msg))
        return tu_exit_code();
    printf("backend %s, device %s\n", cc_engine_backend_name(e), cc_engine_device_name(e));
    CHECKF(strcmp(cc_engine_backend_name(e), backend) == 0, "asked for %s, got %s", backend,
           cc_engine_backend_name(e));
    if (opt.vk_profile)
        CHECKF(strstr(cc_engine_device_name(e), " as ") != NULL,
               "profile %s not applied: device %s", opt.vk_profile, cc_engine_device_name(e));
    // The CPU backend's direct stem forced on (tests/engine/meson.build): it must have run.
    const char *stem = getenv("CAMCLASS_CPU_STEM");
    if (stem && opt.backend == CC_BACKEND_CPU && strcmp(stem, "off") && strcmp(stem, "measure"))
        CHECKF(strstr(cc_engine_device_name(e), "direct stem") != NULL,
               "CAMCLASS_CPU_STEM=%s, yet the stem did not run: device %s", stem,
               cc_engine_device_name(e));
    const char *conv = getenv("CAMCLASS_CPU_CONV3X3");
    bool wino = conv && !strncmp(conv, "winograd", 8); // winograd or winograd4
    if (conv && opt.backend == CC_BACKEND_CPU && (wino || !strcmp(conv, "on")))
        CHECKF(strstr(cc_engine_device_name(e), "direct convs") != NULL &&
                   (!wino || !strstr(cc_engine_device_name(e), "(0 Winograd")) &&
                   (strcmp(conv, "winograd4") || !strstr(cc_engine_device_name(e), " 0 F(4x4)")),
               "CAMCLASS_CPU_CONV3X3=%s, yet no such convolution ran: device %s", conv,
               cc_engine_device_name(e));
    const char *fused = getenv("CAMCLASS_CPU_FUSED");
    if (fused && opt.backend == CC_BACKEND_CPU && !strcmp(fused, "on"))
        CHECKF(strstr(cc_engine_device_name(e), "fused blocks") != NULL,
               "CAMCLASS_CPU_FUSED=on, yet no block was fused: device %s",
               cc_engine_device_name(e));
    const char *pw = getenv("CAMCLASS_CPU_PW");
    if (pw && opt.backend == CC_BACKEND_CPU && strcmp(pw, "off") && strcmp(pw, "measure"))
        CHECKF(strstr(cc_engine_device_name(e), "own 1x1") != NULL,
               "CAMCLASS_CPU_PW=%s, yet no 1x1 ran on it: device %s", pw, cc_engine_device_name(e));
    // TEST_FUSED_BLOCKS, TEST_PW_LAYERS (tests/engine/meson.build; empty: any): how many blocks
    // must be fused, how many 1x1 convolutions must run on the own GEMM.
    if (fused && !strcmp(fused, "on"))
        check_count(e, getenv("TEST_FUSED_BLOCKS"), ", ", " fused blocks");
    if (pw && strcmp(pw, "off") && strcmp(pw, "measure"))
        check_count(e, getenv("TEST_PW_LAYERS"), "own 1x1 for ", " ");

    if (opt.backend == CC_BACKEND_CPU) // k x k convs with the residual add fused
        check_count(e, getenv("TEST_RESIDUAL_CONVS"), ", ", " with the residual");

    size_t n_in = cc_engine_input_count(e), n_out = cc_engine_output_count(e);
    float *input = read_f32(argv[3], 2 * n_in);
    float *ref = read_f32(argv[4], 2 * n_out);
    float *out = calloc(2 * n_out, sizeof(float));
    float *again = calloc(n_out, sizeof(float));
    if (input && ref && CHECK(out && again)) {
        double scale = tu_max_abs(ref, n_out);
        double moved = tu_max_abs_diff(ref, ref + n_out, n_out, NULL);
        printf("input sensitivity: a second input moves PyTorch's logits by %.3g x max|ref|\n",
               moved / scale);
        CHECKF(moved >= SENSITIVITY * scale,
               "the model is not input-sensitive: two inputs move its logits by %.3g x max|ref| "
               "(< %.2f); this parity test would prove little",
               moved / scale, SENSITIVITY);
        bool ran = true;
        for (int i = 0; i < 2; i++) {
            char what[32];
            snprintf(what, sizeof(what), "input %d", i + 1);
            if (CHECKF(cc_engine_run(e, input + i * n_in, out + i * n_out, &err), "%s: %s", what,
                       err.msg))
                check_logits(what, out + i * n_out, ref + i * n_out, n_out);
            else
                ran = false;
        }
        if (ran)
            CHECKF(tu_max_abs_diff(out, out + n_out, n_out, NULL) >= SENSITIVITY * scale,
                   "the engine's logits barely move between the two inputs");
        if (CHECKF(cc_engine_run(e, input, again, &err), "input 1 again: %s", err.msg))
            CHECKF(memcmp(out, again, n_out * sizeof(float)) == 0,
                   "input 1 run again differs from the first run by up to %.3g",
                   tu_max_abs_diff(again, out, n_out, NULL));
        if (opt.backend == CC_BACKEND_CPU)
            check_residual_names(e, getenv("TEST_RESIDUAL_CONVS"));
    }
    free(again);
    free(out);
    free(ref);
    free(input);
    cc_engine_destroy(e);
    return tu_exit_code();
}
