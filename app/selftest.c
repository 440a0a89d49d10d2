/* camclass — the self-test: the sample clip through the model, top-1 against the truth (see
 * selftest.h). Single-threaded: read, preprocess, run, compare, frame by frame. */
#include "selftest.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "bundle.h"
#include "preprocess.h"
#include "source_file.h"

enum { EXIT_BELOW = 1, EXIT_USAGE = 2 };

/* The sample, resolved: what to open with source_file and the truth of each frame. */
struct sample {
    char folder[PATH_MAX]; // where selftest.json lives
    char source[PATH_MAX]; // folder of images or the .y4m
    char **names;          // (n) image file names, sorted; NULL for a clip
    int *truth;            // (n) true class of frame i; -1 when the label is not the model's
    int n;
};

static void sample_free(struct sample *s)
{
    for (int i = 0; s->names && i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->truth);
}

/* Lower case, every run of non-alphanumerics as one '_'. */
static void normalize(const char *in, char *out, size_t size)
{
    size_t n = 0;
    bool sep = false;
    for (; *in && n + 2 < size; in++) {
        unsigned char c = (unsigned char)*in;
        if (isalnum(c)) {
            if (sep && n)
                out[n++] = '_';
            out[n++] = (char)tolower(c);
            sep = false;
        } else {
            sep = true;
        }
    }
    out[n] = 0;
}

/* The class whose label is the whole of text (normalized), or -1. */
static int label_exact(const struct cc_model *m, const char *text)
{
    char a[256], b[256];
    normalize(text, a, sizeof(a));
    for (int i = 0; i < m->n_labels; i++) {
        normalize(m->labels[i], b, sizeof(b));
        if (strcmp(a, b) == 0)
            return i;
    }
    return -1;
}

/* The class with the longest label that starts name (followed by '_' or the end), or -1. */
static int label_prefix(const struct cc_model *m, const char *name)
{
    char a[PATH_MAX], b[256];
    while (isdigit((unsigned char)*name)) // "012-checkers.png": a frame number first
        name++;
    normalize(name, a, sizeof(a));
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < m->n_labels; i++) {
        normalize(m->labels[i], b, sizeof(b));
        size_t len = strlen(b);
        if (len && len > best_len && strncmp(a, b, len) == 0 && (a[len] == '_' || !a[len]))
            best = i, best_len = len;
    }
    return best;
}

static bool is_image(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot &&
           (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

static bool is_y4m(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && !strcasecmp(dot, ".y4m");
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads one true label per line (blank lines skipped) from path into s->truth; s->n becomes the
 * count. */
static bool read_labels(struct sample *s, const struct cc_model *m, FILE *f, const char *path,
                        struct cc_error *err)
{
    char line[512];
    int cap = 0;
    s->n = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0])
            continue;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 256;
            int *t = realloc(s->truth, (size_t)cap * sizeof(int));
            if (!t)
                return cc_error_set(err, "out of memory");
            s->truth = t;
        }
        s->truth[s->n++] = label_exact(m, line);
    }
    return s->n > 0 || cc_error_set(err, "selftest: %s lists no labels", path);
}

/* The truth of a clip: <clip>.labels, else labels.txt in its folder. */
static bool read_clip_labels(struct sample *s, const struct cc_model *m, const char *clip,
                             struct cc_error *err)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s.labels", clip);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(path, sizeof(path), "%s/labels.txt", s->folder);
        f = fopen(path, "r");
    }
    if (!f)
        return cc_error_set(err,
                            "selftest: %s has no truth: neither %s.labels nor %s/labels.txt "
                            "can be read",
                            clip, clip, s->folder);
    bool ok = read_labels(s, m, f, path, err);
    fclose(f);
    return ok;
}

/* Finds the frames of the sample and their truth. */
static bool sample_open(struct sample *s, const char *path, const struct cc_model *m,
                        struct cc_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return cc_error_set(err, "cannot read sample %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        // A clip given directly.
        snprintf(s->source, sizeof(s->source), "%s", path);
        snprintf(s->folder, sizeof(s->folder), "%s", path);
        char *slash = strrchr(s->folder, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(s->folder, sizeof(s->folder), ".");
        return read_clip_labels(s, m, path, err);
    }
    snprintf(s->folder, sizeof(s->folder), "%s", path);
    snprintf(s->source, sizeof(s->source), "%s", path);
    DIR *d = opendir(path);
    if (!d)
        return cc_error_set(err, "cannot read sample %s: %s", path, strerror(errno));
    int cap = 0;
    char clip[NAME_MAX + 1] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        if (is_y4m(e->d_name) && (!clip[0] || strcmp(e->d_name, clip) < 0))
            snprintf(clip, sizeof(clip), "%s", e->d_name);
        if (!is_image(e->d_name))
            continue;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 256;
            char **p = realloc(s->names, (size_t)cap * sizeof(char *));
            if (!p) {
                closedir(d);
                return cc_error_set(err, "out of memory");
            }
            s->names = p;
        }
        if (!(s->names[s->n] = strdup(e->d_name))) {
            closedir(d);
            return cc_error_set(err, "out of memory");
        }
        s->n++;
    }
    closedir(d);
    if (!s->n) {
        if (!clip[0])
            return cc_error_set(err, "sample %s holds no images and no .y4m clip", path);
        snprintf(s->source, sizeof(s->source), "%s/%s", path, clip);
        return read_clip_labels(s, m, s->source, err);
    }
    qsort(s->names, (size_t)s->n, sizeof(char *), cmp_names);
    // labels.txt (one label per image, in name order) when there is one, else the names.
    char lpath[PATH_MAX + 16];
    snprintf(lpath, sizeof(lpath), "%s/labels.txt", path);
    FILE *f = fopen(lpath, "r");
    if (f) {
        int n_images = s->n;
        bool ok = read_labels(s, m, f, lpath, err);
        fclose(f);
        if (ok && s->n != n_images)
            ok = cc_error_set(err, "selftest: %s lists %d labels for %d images", lpath, s->n,
                              n_images);
        s->n = n_images; // names are freed by count
        return ok;
    }
    if (!(s->truth = malloc((size_t)s->n * sizeof(int))))
        return cc_error_set(err, "out of memory");
    for (int i = 0; i < s->n; i++)
        s->truth[i] = label_prefix(m, s->names[i]);
    return true;
}

/* The recorded minimum for a model from <folder>/selftest.json; -1 when none. Keys of an object:
 * the bundle's file name ("selftest-int8.ccm"), the same without ".ccm", or the model's name. */
static double recorded_minimum(const char *folder, const char *bundle, const char *model,
                               char *where, size_t size)
{
    snprintf(where, size, "%s/selftest.json", folder);
    FILE *f = fopen(where, "rb");
    if (!f)
        return -1;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *root = cJSON_Parse(buf);
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(root, "min_top1");
    double v = -1;
    if (cJSON_IsNumber(min))
        v = min->valuedouble;
    else if (cJSON_IsObject(min)) {
        const char *base = strrchr(bundle, '/') ? strrchr(bundle, '/') + 1 : bundle;
        char stem[NAME_MAX + 1];
        snprintf(stem, sizeof(stem), "%s", base);
        char *dot = strrchr(stem, '.');
        if (dot && strcmp(dot, ".ccm") == 0)
            *dot = 0;
        const char *keys[] = {base, stem, model};
        for (int i = 0; i < 3 && v < 0; i++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(min, keys[i]);
            if (cJSON_IsNumber(x))
                v = x->valuedouble;
        }
    }
    cJSON_Delete(root);
    return v > 1 ? v / 100 : v; // a percentage is accepted too
}

int cc_selftest_run(const char *model_path, const char *sample_path,
                    const struct cc_engine_options *opts, double min_top1, FILE *out)
{
    struct cc_error err = {0};
    struct sample s = {0};
    struct cc_engine *e = NULL;
    struct cc_source_file *src = NULL;
    struct cc_preprocess *pp = NULL;
    struct cc_frame frame = {0};
    float *in = NULL, *scores = NULL;
    int *per_class = NULL; // (classes * (classes + 1)): row = truth, col = answer; last col: n
    int rc = EXIT_USAGE;

    struct cc_model *m = cc_bundle_load(model_path, &err);
    if (!m)
        goto fail;
    rc = EXIT_BELOW;
    if (!(e = cc_engine_create_from_model(m, opts, &err)))
        goto fail;
    m = NULL; // owned by the engine
    const struct cc_model *model = cc_engine_model(e);
    rc = EXIT_USAGE;
    if (!sample_open(&s, sample_path, model, &err))
        goto fail;
    if (!(src = cc_source_file_open(s.source, false, &err)))
        goto fail;
    rc = EXIT_BELOW;

    char where[PATH_MAX + 32];
    double minimum =
        min_top1 >= 0 ? min_top1
                      : recorded_minimum(s.folder, model_path, model->name, where, sizeof(where));
    int classes = model->output.classes;
    const struct cc_tensor *it = &model->tensors[model->input.tensor];
    int in_h = (int)it->shape[2], in_w = (int)it->shape[3];
    in = malloc(cc_engine_input_count(e) * sizeof(float));
    scores = malloc(cc_engine_output_count(e) * sizeof(float));
    per_class = calloc((size_t)classes * (size_t)(classes + 1), sizeof(int));
    if (!in || !scores || !per_class || !(pp = cc_preprocess_create(&err))) {
        cc_error_set(&err, "out of memory");
        goto fail;
    }
    fprintf(out, "selftest: model %s (%s) on %s (%s), %d frames\n", model->name, model_path,
            cc_engine_backend_name(e), cc_engine_device_name(e), s.n);

    int frames = 0, correct = 0, unknown = 0;
    for (int i = 0;; i++) {
        int got = cc_source_file_read(src, &frame, &err);
        if (got < 0)
            goto fail;
        if (got == 0)
            break;
        if (i >= s.n) {
            cc_error_set(&err, "selftest: %s has more frames than labels (%d)", s.source, s.n);
            goto fail;
        }
        if (!cc_preprocess(pp, &frame, &model->input, in_w, in_h, in, &err) ||
            !cc_engine_run(e, in, scores, &err))
            goto fail;
        struct cc_topk top;
        cc_topk(scores, classes, 1, &top);
        int t = s.truth[i];
        if (t < 0) {
            if (!unknown++)
                fprintf(out,
                        "selftest: frame %d (%s): its true label is not one of the model's "
                        "(another model?); such frames are not counted\n",
                        i, s.names ? s.names[i] : "clip");
            continue;
        }
        per_class[t * (classes + 1) + top.index]++;
        per_class[t * (classes + 1) + classes]++;
        frames++;
        correct += top.index == t;
    }
    if (frames + unknown < s.n) {
        cc_error_set(&err, "selftest: %s ended after %d frames; its labels list %d", s.source,
                     frames + unknown, s.n);
        goto fail;
    }

    fprintf(out, "selftest: %-24s %7s %8s %9s  %s\n", "class", "frames", "correct", "top-1",
            "most common mistake");
    for (int c = 0; c < classes; c++) {
        const int *row = &per_class[c * (classes + 1)];
        if (!row[classes])
            continue;
        int worst = -1;
        for (int k = 0; k < classes; k++)
            if (k != c && row[k] && (worst < 0 || row[k] > row[worst]))
                worst = k;
        char mistake[300] = "-";
        if (worst >= 0)
            snprintf(mistake, sizeof(mistake), "%s (%d)", model->labels[worst], row[worst]);
        fprintf(out, "selftest: %-24s %7d %8d %8.1f%%  %s\n", model->labels[c], row[classes],
                row[c], 100.0 * row[c] / row[classes], mistake);
    }
    if (unknown)
        fprintf(out, "selftest: %d frames not counted: their labels are not the model's\n",
                unknown);
    double acc = frames ? (double)correct / frames : 0;
    if (minimum < 0) {
        fprintf(out,
                "selftest: total %d/%d = %.2f%% top-1; FAIL: no minimum recorded for "
                "model \"%s\" in %s (or give --threshold)\n",
                correct, frames, 100 * acc, model->name, where);
        rc = EXIT_BELOW;
    } else if (!frames || acc < minimum) {
        fprintf(out, "selftest: total %d/%d = %.2f%% top-1; FAIL: below the minimum %.2f%%\n",
                correct, frames, 100 * acc, 100 * minimum);
        rc = EXIT_BELOW;
    } else {
        fprintf(out, "selftest: total %d/%d = %.2f%% top-1; PASS (minimum %.2f%%)\n", correct,
                frames, 100 * acc, 100 * minimum);
        rc = 0;
    }
    goto done;
fail:
    fprintf(stderr, "camclass: %s\n", err.msg);
done:
    free(frame.data);
    free(in);
    free(scores);
    free(per_class);
    cc_preprocess_destroy(pp);
    cc_source_file_destroy(src);
    cc_engine_destroy(e);
    cc_model_destroy(m);
    sample_free(&s);
    return rc;
}
