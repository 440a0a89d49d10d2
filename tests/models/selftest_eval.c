/* camclass — the self-test model on the sample clip, through camclass's own file source,
 * preprocessing and engine (docs/MODELS.md).
 *
 *     selftest_eval BUNDLE SAMPLE_DIR BACKEND MIN_PERCENT [OUTPUTS.f32]
 *
 * SAMPLE_DIR holds the frames (PNG, read in name order by the file source) and labels.txt,
 * the expected class label of each frame in the same order. Every frame is preprocessed as
 * the bundle says and classified on BACKEND (cpu or vulkan; no fallback is accepted). Prints
 * each wrong frame and a last line "top-1 accuracy P% (n/N) on BACKEND"; passes when the
 * frame count equals the label count and P >= MIN_PERCENT. OUTPUTS.f32, when given, receives
 * the model's raw outputs (little-endian f32, frames x classes) for comparisons elsewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "preprocess.h"
#include "source_file.h"
#include "testutil.h"

#define MAX_FRAMES 4096

/* Splits labels.txt into lines (in place); returns the count, -1 when unreadable. */
static int read_labels(const char *dir, char **text, char *lines[MAX_FRAMES])
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/labels.txt", dir);
    *text = tu_read_file(path, NULL);
    if (!*text)
        return -1;
    int n = 0;
    for (char *s = *text; *s && n < MAX_FRAMES;) {
        char *end = strchr(s, '\n');
        if (end)
            *end = '\0';
        size_t len = strlen(s);
        if (len && s[len - 1] == '\r')
            s[len - 1] = '\0';
        lines[n++] = s;
        if (!end)
            break;
        s = end + 1;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr,
                "usage: selftest_eval BUNDLE SAMPLE_DIR cpu|vulkan|ref MIN_PERCENT [OUT.f32]\n");
        return 2;
    }
    FILE *outputs = argc == 6 ? fopen(argv[5], "wb") : NULL;
    if (argc == 6 && !outputs) {
        perror(argv[5]);
        return 2;
    }
    const char *bundle = argv[1], *dir = argv[2], *backend = argv[3];
    double min_percent = atof(argv[4]);
    struct cc_error err = {""};
    struct cc_engine_options opt = cc_engine_options_default();
    if (!cc_backend_kind_parse(backend, &opt.backend) || opt.backend == CC_BACKEND_AUTO) {
        fprintf(stderr, "selftest_eval: backend %s: use cpu, vulkan or ref\n", backend);
        return 2;
    }
    opt.pipeline_cache = "";

    char *text = NULL, *labels[MAX_FRAMES];
    int n_labels = read_labels(dir, &text, labels);
    CHECKF(n_labels > 0, "cannot read %s/labels.txt, or it is empty", dir);

    struct cc_engine *e = cc_engine_create(bundle, &opt, &err);
    CHECKF(e != NULL, "loading %s: %s", bundle, err.msg);
    struct cc_source_file *src = e ? cc_source_file_open(dir, false, &err) : NULL;
    CHECKF(!e || src != NULL, "opening %s: %s", dir, err.msg);
    struct cc_preprocess *pp = src ? cc_preprocess_create(&err) : NULL;
    int frames = 0, right = 0;
    if (pp) {
        CHECKF(strcmp(cc_engine_backend_name(e), backend) == 0, "asked for %s, got %s", backend,
               cc_engine_backend_name(e));
        const struct cc_model *m = cc_engine_model(e);
        const struct cc_tensor *in = &m->tensors[m->input.tensor];
        int H = (int)in->shape[2], W = (int)in->shape[3], classes = m->output.classes;
        float *x = malloc(cc_engine_input_count(e) * sizeof(float));
        float *y = malloc(cc_engine_output_count(e) * sizeof(float));
        struct cc_frame f = {0};
        int r = -1;
        while (x && y && (r = cc_source_file_read(src, &f, &err)) == 1) {
            if (!CHECKF(cc_preprocess(pp, &f, &m->input, W, H, x, &err), "frame %d: %s", frames,
                        err.msg) ||
                !CHECKF(cc_engine_run(e, x, y, &err), "frame %d: %s", frames, err.msg))
                break;
            if (outputs)
                CHECKF(fwrite(y, sizeof(float), (size_t)classes, outputs) == (size_t)classes,
                       "writing %s", argv[5]);
            struct cc_topk top;
            cc_topk(y, classes, 1, &top);
            const char *want = frames < n_labels ? labels[frames] : "(no label)";
            if (strcmp(m->labels[top.index], want) == 0)
                right++;
            else
                printf("frame %d (%dx%d %s): %s, expected %s\n", frames, f.width, f.height,
                       cc_pixfmt_name(f.format), m->labels[top.index], want);
            frames++;
        }
        CHECKF(r == 0, "reading %s: %s", dir, err.msg);
        CHECKF(frames == n_labels, "%d frames, %d labels in labels.txt", frames, n_labels);
        free(f.data);
        free(x);
        free(y);
    }
    double percent = frames ? 100.0 * right / frames : 0;
    printf("top-1 accuracy %.2f%% (%d/%d) on %s (%s), %s; at least %.2f%% required\n", percent,
           right, frames, backend, e ? cc_engine_device_name(e) : "-", bundle, min_percent);
    CHECKF(percent >= min_percent, "accuracy %.2f%% < %.2f%%", percent, min_percent);
    if (outputs)
        CHECKF(fclose(outputs) == 0, "closing %s", argv[5]);
    cc_preprocess_destroy(pp);
    cc_source_file_destroy(src);
    cc_engine_destroy(e);
    free(text);
    return tu_exit_code();
}
