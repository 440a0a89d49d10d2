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

/* What a run counted: per_class (classes * (classes + 1), owned): row = truth, col = answer;
 * the last col: the row's frames. */
struct tally {
    int classes;
    int *per_class;
    int frames, correct; // frames counted, and those answered right
    int unknown;         // frames whose truth is not one of the model's labels: not counted
};

/* Answers frame i (its top-1 in scores) and counts it against the truth. */
static void count_frame(struct tally *t, const struct sample *s, const float *scores,
                        const struct cc_model *model, int i, FILE *out)
{
    struct cc_topk top;
    cc_topk(scores, t->classes, 1, &top);
    int truth = s->truth[i];
    if (truth < 0) {
        if (!t->unknown++)
            fprintf(out,
                    "selftest: frame %d (%s): its true label is not one of the model's "
                    "(another model?); such frames are not counted\n",
                    i, s->names ? s->names[i] : "clip");
        return;
    }
    t->per_class[truth * (t->classes + 1) + top.index]++;
    t->per_class[truth * (t->classes + 1) + t->classes]++;
    t->frames++;
    t->correct += top.index == truth;
}

/* Every frame of src through e, counted into t; false with err set when a frame cannot be read
 * or run, or the frames and the labels disagree in number. */
static bool evaluate(struct cc_engine *e, struct cc_source_file *src, const struct sample *s,
                     struct tally *t, FILE *out, struct cc_error *err)
{
    const struct cc_model *model = cc_engine_model(e);
    const struct cc_tensor *it = &model->tensors[model->input.tensor];
    int in_h = (int)it->shape[2], in_w = (int)it->shape[3];
    float *in = malloc(cc_engine_input_count(e) * sizeof(float));
    float *scores = malloc(cc_engine_output_count(e) * sizeof(float));
    struct cc_preprocess *pp = NULL;
    struct cc_frame frame = {0};
    bool ok = in && scores && (pp = cc_preprocess_create(err));
    if (!ok)
        cc_error_set(err, "out of memory");
    for (int i = 0; ok; i++) {
        int got = cc_source_file_read(src, &frame, err);
        if (got <= 0) {
            ok = got == 0;
            break;
        }
        if (i >= s->n) {
            ok =
                cc_error_set(err, "selftest: %s has more frames than labels (%d)", s->source, s->n);
            break;
        }
        ok = cc_preprocess(pp, &frame, &model->input, in_w, in_h, in, err) &&
             cc_engine_run(e, in, scores, err);
        if (ok)
            count_frame(t, s, scores, model, i, out);
    }
    if (ok && t->frames + t->unknown < s->n)
        ok = cc_error_set(err, "selftest: %s ended after %d frames; its labels list %d", s->source,
                          t->frames + t->unknown, s->n);
    free(frame.data);
    free(in);
    free(scores);
    cc_preprocess_destroy(pp);
    return ok;
}

/* One line per class that had frames: frames, correct, top-1, the most common wrong answer. */
static void print_per_class(const struct tally *t, const struct cc_model *model, FILE *out)
{
    int classes = t->classes;
    fprintf(out, "selftest: %-24s %7s %8s %9s  %s\n", "class", "frames", "correct", "top-1",
            "most common mistake");
    for (int c = 0; c < classes; c++) {
        const int *row = &t->per_class[c * (classes + 1)];
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
    if (t->unknown)
        fprintf(out, "selftest: %d frames not counted: their labels are not the model's\n",
                t->unknown);
}

/* The total against minimum (-1: none recorded in where): prints the verdict, returns the exit
 * status. */
static int verdict(const struct tally *t, double minimum, const char *model_name, const char *where,
                   FILE *out)
{
    double acc = t->frames ? (double)t->correct / t->frames : 0;
    if (minimum < 0) {
        fprintf(out,
                "selftest: total %d/%d = %.2f%% top-1; FAIL: no minimum recorded for "
                "model \"%s\" in %s (or give --threshold)\n",
                t->correct, t->frames, 100 * acc, model_name, where);
        return EXIT_BELOW;
    }
    if (!t->frames || acc < minimum) {
        fprintf(out, "selftest: total %d/%d = %.2f%% top-1; FAIL: below the minimum %.2f%%\n",
                t->correct, t->frames, 100 * acc, 100 * minimum);
        return EXIT_BELOW;
    }
    fprintf(out, "selftest: total %d/%d = %.2f%% top-1; PASS (minimum %.2f%%)\n", t->correct,
            t->frames, 100 * acc, 100 * minimum);
    return 0;
}

int cc_selftest_run(const char *model_path, const char *labels_path, const char *sample_path,
                    const struct cc_engine_options *opts, double min_top1, FILE *out)
{
    struct cc_error err = {0};
    struct sample s = {0};
    struct cc_engine *e = NULL;
    struct cc_source_file *src = NULL;
    struct tally t = {0};
    int rc = EXIT_USAGE;

    struct cc_model *m = cc_bundle_load(model_path, &err);
    if (!m || (labels_path && !cc_bundle_replace_labels(m, labels_path, &err)))
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
    t.classes = model->output.classes;
    t.per_class = calloc((size_t)t.classes * (size_t)(t.classes + 1), sizeof(int));
    if (!t.per_class) {
        cc_error_set(&err, "out of memory");
        goto fail;
    }
    fprintf(out, "selftest: model %s (%s) on %s (%s), %d frames\n", model->name, model_path,
            cc_engine_backend_name(e), cc_engine_device_name(e), s.n);
    if (!evaluate(e, src, &s, &t, out, &err))
        goto fail;
    print_per_class(&t, model, out);
    rc = verdict(&t, minimum, model->name, where, out);
    goto done;
fail:
    fprintf(stderr, "camclass: %s\n", err.msg);
done:
    free(t.per_class);
    cc_source_file_destroy(src);
    cc_engine_destroy(e);
    cc_model_destroy(m);
    sample_free(&s);
    return rc;
}
