/* camclass-train — teaches a model your own classes: DIR/<class>/<image> in, a bundle out.
 *
 * The base bundle's backbone (its graph up to the final classifier) turns every image, and
 * augmented views of the training ones, into a feature vector on the engine (train/embed.h); a
 * new classifier is fitted to them (train/softmax_head.h, liblbfgs) with a stratified held-out
 * split for early stopping and the report (train/train_report.h); the base graph with that
 * classifier in place of its own is written as a new bundle (bundle_write.h), with what it was
 * trained on in its manifest's "training" record. No PyTorch: it runs where camclass runs.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "bundle_write.h"
#include "clock.h"
#include "dataset.h"
#include "dataset_settings.h"
#include "embed.h"
#include "engine.h"
#include "feature_cache.h"
#include "file_hash.h"
#include "head_graph.h"
#include "source_file.h"
#include "softmax_head.h"
#include "thumbnail.h"
#include "train_int8.h"
#include "train_report.h"
#include "wrong_maps.h"

static const char usage[] =
    "usage: camclass-train DIR --base MODEL.ccm -o OUT.ccm [options]\n"
    "Trains a new classifier for the classes in DIR (DIR/<class>/<image>.jpg|.png, one folder\n"
    "per class) on the features of MODEL's backbone, and writes MODEL with it as OUT.\n"
    "  --base MODEL     the bundle to start from (a classifier: pooling, then a linear layer)\n"
    "  -o, --output OUT the bundle to write; an existing file is kept unless --force\n"
    "  --name NAME      the new model's name (default: OUT's file name without .ccm)\n"
    "  --val F          fraction of each class held out to stop training and measure it\n"
    "                   (default 0.2; 0: none)\n"
    "  --augment N      augmented views per training image (default 4; 0 to 64)\n"
    "  --no-flip        never mirror a view (when left and right tell classes apart)\n"
    "  --roi X,Y,W,H    crop every image to this part before anything else: fractions\n"
    "                   (0.5,0.25,0.5,0.5) or pixels of the first image (320,120,200,200px);\n"
    "                   stored in OUT, whose frames camclass crops the same; none: the whole\n"
    "                   image. Default: DIR/camclass-dataset.json's \"roi\", else the base's\n"
    "  --l2 L           weight decay of the new classifier (default 0.001)\n"
    "  --seed N         seed of the split and the views (default 1)\n"
    "  --backend B      auto (default), cpu, vulkan or ref: where the features are computed\n"
    "  --threads N      CPU backend threads (default: online CPUs - 1)\n"
    "  --unknown-threshold P  answer \"unknown\" below top probability P (0 < P < 1; 0: never);\n"
    "                   default: chosen on the held-out pictures (at most 5% of their right\n"
    "                   answers fall below it)\n"
    "  --int8           write OUT as an int8 bundle: calibrated on the training images, weights\n"
    "                   and activations in int8 (the CPU backend computes in int8); the report\n"
    "                   gives its held-out accuracy on the CPU backend beside the f32 head's\n"
    "  --report FILE    write the report as JSON to FILE, with the wrong held-out pictures\n"
    "                   and the class activation map of each wrong answer\n"
    "  --no-cache       compute every feature vector again (default: kept between runs in\n"
    "                   $XDG_CACHE_HOME/camclass/train, so adding pictures computes theirs)\n"
    "  --force          replace OUT if it exists\n"
    "  --help           this text\n"
    "Exit status: 0 trained and written, 1 a failure while training or writing, 2 a bad\n"
    "argument, dataset or base model.\n";

struct train_args {
    const char *dir, *base, *out, *name, *report, *roi; // roi: --roi as given, or NULL
    double val, l2, unknown; // unknown: the threshold given, or -1: choose it
    int augment;
    bool flip, force, no_cache, int8;
    unsigned long long seed;
    struct cc_engine_options opts;
};

/* ------------------------------------------------------------------------------------------
 * Command line
 */

static bool number(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = s && *s ? strtod(s, &end) : 0;
    if (!s || !*s || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

/* One option with a value; false after printing one line. */
static bool take(struct train_args *a, int opt, const char *val)
{
    double v;
    switch (opt) {
    case 'o':
        a->out = val;
        return true;
    case 'n':
        a->name = val;
        return true;
    case 'b':
        a->base = val;
        return true;
    case 'r':
        a->report = val;
        return true;
    case 'R':
        a->roi = val;
        return true;
    case 'B':
        if (cc_backend_kind_parse(val, &a->opts.backend))
            return true;
        fprintf(stderr, "camclass-train: --backend takes auto, vulkan, cpu or ref, not \"%s\"\n",
                val);
        return false;
    }
    static const struct {
        int opt;
        const char *flag;
        double lo, hi;
    } nums[] = {{'v', "--val", 0, 0.9},    {'a', "--augment", 0, 64},
                {'l', "--l2", 0, 1e3},     {'s', "--seed", 0, 1e15},
                {'t', "--threads", 1, 16}, {'u', "--unknown-threshold", 0, 0.999}};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        if (nums[i].opt != opt)
            continue;
        if (!number(val, nums[i].lo, nums[i].hi, &v) ||
            (strchr("vlu", opt) == NULL && v != (double)(long long)v)) {
            fprintf(stderr, "camclass-train: %s takes a %s from %g to %g, not \"%s\"\n",
                    nums[i].flag, strchr("vlu", opt) ? "number" : "whole number", nums[i].lo,
                    nums[i].hi, val);
            return false;
        }
        opt == 'v'   ? (void)(a->val = v)
        : opt == 'a' ? (void)(a->augment = (int)v)
        : opt == 'l' ? (void)(a->l2 = v)
        : opt == 'u' ? (void)(a->unknown = v)
        : opt == 's' ? (void)(a->seed = (unsigned long long)v)
                     : (void)(a->opts.cpu_threads = (int)v);
        return true;
    }
    return false;
}

/* 0 to go on, 2 after one line about a bad argument, -1 after --help. */
static int parse_args(int argc, char **argv, struct train_args *a)
{
    *a = (struct train_args){.val = 0.2,
                             .l2 = 1e-3,
                             .unknown = -1,
                             .augment = 4,
                             .flip = true,
                             .seed = 1,
                             .opts = cc_engine_options_default()};
    a->opts.notices = stderr;
    static const struct option longs[] = {{"base", 1, 0, 'b'},     {"output", 1, 0, 'o'},
                                          {"name", 1, 0, 'n'},     {"val", 1, 0, 'v'},
                                          {"augment", 1, 0, 'a'},  {"no-flip", 0, 0, 'F'},
                                          {"l2", 1, 0, 'l'},       {"seed", 1, 0, 's'},
                                          {"backend", 1, 0, 'B'},  {"threads", 1, 0, 't'},
                                          {"report", 1, 0, 'r'},   {"force", 0, 0, 'f'},
                                          {"no-cache", 0, 0, 'N'}, {"unknown-threshold", 1, 0, 'u'},
                                          {"roi", 1, 0, 'R'},      {"int8", 0, 0, 'I'},
                                          {"help", 0, 0, 'h'},     {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":o:", longs, NULL)) != -1) {
        if (opt == 'h')
            return fputs(usage, stdout), -1;
        if (opt == 'F' || opt == 'f' || opt == 'N' || opt == 'I') {
            *(opt == 'F'   ? &a->flip
              : opt == 'f' ? &a->force
              : opt == 'I' ? &a->int8
                           : &a->no_cache) = opt != 'F';
            continue;
        }
        if (opt == '?' || opt == ':') {
            fprintf(stderr, "camclass-train: %s %s; see --help\n", argv[optind - 1],
                    opt == ':' ? "needs a value" : "is not an option");
            return 2;
        }
        if (!take(a, opt, optarg))
            return 2;
    }
    if (optind != argc - 1 || !a->base || !a->out) {
        fprintf(stderr, "camclass-train: give one DIR, --base MODEL.ccm and -o OUT.ccm; see "
                        "--help\n");
        return 2;
    }
    a->dir = argv[optind];
    struct stat st;
    if (!a->force && stat(a->out, &st) == 0) {
        fprintf(stderr, "camclass-train: %s exists; give another -o or --force to replace it\n",
                a->out);
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Steps
 */

/* The size of the image at path (its first frame), as camclass's file source reads it. */
static bool image_size(const char *path, int *w, int *h, struct cc_error *err)
{
    struct cc_source_file *src = cc_source_file_open(path, false, err);
    struct cc_frame f = {0};
    int r = src ? cc_source_file_read(src, &f, err) : -1;
    if (r == 0)
        cc_error_set(err, "%s holds no image", path);
    *w = f.width, *h = f.height;
    free(f.data);
    cc_source_file_destroy(src);
    return r == 1;
}

/* Sets base's ROI, which every image is cropped to and the new bundle stores: --roi, else
 * DIR/camclass-dataset.json's, else the base's own; pixels become fractions of the first
 * image. Prints the one in use. False with err (a bad argument or file: exit 2). */
static bool set_roi(const struct train_args *a, const struct cc_dataset *d, struct cc_model *base,
                    struct cc_error *err)
{
    struct cc_roi roi = base->input.roi;
    struct cc_error why = {0};
    bool found = false;
    const char *from = "the base model's";
    if (a->roi && !cc_roi_parse(a->roi, &roi, &why))
        return cc_error_set(err, "--roi %s", why.msg);
    if (a->roi)
        from = "--roi";
    else if (!cc_dataset_read_roi(a->dir, &roi, &found, err))
        return false;
    else if (found)
        from = "camclass-dataset.json";
    if (roi.kind == CC_ROI_PIXELS) {
        int w, h;
        struct cc_roi_rect r;
        if (!image_size(d->samples[0].path, &w, &h, err) || !cc_roi_rect(&roi, w, h, &r, err))
            return false;
        roi = cc_roi_to_fractions(&roi, w, h);
    }
    base->input.roi = roi;
    char text[96];
    cc_roi_format(&roi, text, sizeof(text));
    if (roi.kind != CC_ROI_NONE || a->roi || found)
        printf("region of interest: %s (%s)\n", text, from);
    return true;
}

/* The training rows (every view of the training images) and the held-out rows (view 0). */
struct split_rows {
    float *xt, *xh;
    int *yt, *yh;
    struct cc_rows train, held;
};

static bool make_rows(const struct cc_dataset *d, const float *feat, int dim, int augment,
                      struct split_rows *r)
{
    int views = 1 + augment, nt = 0, nh = 0;
    for (int i = 0; i < d->n_samples; i++)
        d->samples[i].held_out ? nh++ : (nt += views);
    r->xt = malloc(((size_t)nt * dim + 1) * sizeof(float));
    r->xh = malloc(((size_t)nh * dim + 1) * sizeof(float));
    r->yt = malloc(((size_t)nt + 1) * sizeof(int));
    r->yh = malloc(((size_t)nh + 1) * sizeof(int));
    if (!r->xt || !r->xh || !r->yt || !r->yh)
        return false;
    nt = nh = 0;
    for (int i = 0; i < d->n_samples; i++) {
        const struct cc_sample *s = &d->samples[i];
        for (int v = 0; v < (s->held_out ? 1 : views); v++) {
            const float *row = feat + cc_embed_row(i, v, augment) * (size_t)dim;
            int n = s->held_out ? nh++ : nt++;
            memcpy((s->held_out ? r->xh : r->xt) + (size_t)n * dim, row, (size_t)dim * 4);
            (s->held_out ? r->yh : r->yt)[n] = s->label;
        }
    }
    r->train = (struct cc_rows){r->xt, r->yt, nt};
    r->held = (struct cc_rows){r->xh, r->yh, nh};
    return true;
}

static void free_rows(struct split_rows *r)
{
    free(r->xt), free(r->xh), free(r->yt), free(r->yh);
}

/* The features of every view of every image on base's backbone: (n_samples * (1 + augment))
 * x dim floats, owned by the caller; NULL with err (*bad_image: an image could not be read). */
static float *features_of(const struct train_args *a, const struct cc_model *base,
                          const struct cc_head_graph *g, const struct cc_dataset *d,
                          const char *base_sha, float *thumbs, bool *bad_image,
                          struct cc_error *err)
{
    *bad_image = false;
    struct cc_model *bb = cc_head_graph_backbone(base, g, err);
    struct cc_engine *e = bb ? cc_engine_create_from_model(bb, &a->opts, err) : NULL;
    if (!e)
        return NULL;
    FILE *progress = isatty(STDERR_FILENO) ? stderr : NULL; // people watch; logs get results
    if (progress)
        fprintf(progress,
                "camclass-train: features of %d images (+%d views each for training) "
                "on %s (%s)\n",
                d->n_samples, a->augment, cc_engine_backend_name(e), cc_engine_device_name(e));
    size_t rows = cc_embed_row(d->n_samples, 0, a->augment);
    float *feat = malloc(rows * (size_t)g->n_features * sizeof(float));
    struct cc_feature_cache cache;
    cc_feature_cache_init(&cache, a->no_cache ? "" : NULL, base_sha, g->n_features, a->seed,
                          a->flip, &base->input.roi);
    struct cc_embed_options eo = {a->augment, a->flip, a->seed, progress, &cache};
    struct cc_embed_stats st;
    double t0 = cc_now_ms();
    if (!feat)
        cc_error_set(err, "out of memory for %zu feature vectors", rows);
    if (feat && !cc_embed_dataset(e, d, &eo, feat, thumbs, bad_image, &st, err)) {
        free(feat);
        feat = NULL;
    }
    if (feat)
        printf("features: %d views computed, %d from the cache, in %.0f ms on %s\n", st.computed,
               st.cached, cc_now_ms() - t0, cc_engine_backend_name(e));
    cc_feature_cache_finish(&cache);
    cc_engine_destroy(e);
    return feat;
}

/* The model to write: base with the new head, or with --int8 its int8 model, measured on the
 * CPU backend over the held-out images (f32_pred: the f32 head's answers) into q, and then
 * owned by *e8. The f32 one is owned by *f32. NULL with err. */
static const struct cc_model *head_model(const struct train_args *a, const struct cc_model *base,
                                         const struct cc_head_graph *g, const float *w,
                                         const float *b, struct cc_train_report *rep,
                                         const int *f32_pred, struct cc_model **f32,
                                         struct cc_engine **e8, struct cc_train_int8 *q,
                                         struct cc_error *err)
{
    char name[129];
    const char *slash = strrchr(a->out, '/'), *file = slash ? slash + 1 : a->out;
    size_t len = strcspn(file, ".");
    snprintf(name, sizeof(name), "%.*s", (int)(len ? len : strlen(file)), file);
    const struct cc_dataset *d = rep->data;
    struct cc_model *m = *f32 =
        cc_head_graph_replace(base, g, w, b, d->n_classes, (const char *const *)d->classes,
                              a->name ? a->name : name, err);
    if (m)
        m->output.unknown_threshold = rep->unknown_threshold;
    if (!m || !a->int8)
        return m;
    FILE *progress = isatty(STDERR_FILENO) ? stderr : NULL;
    bool bad_image;
    double t0 = cc_now_ms();
    struct cc_model *m8 = cc_train_int8_quantize(m, d, progress, q, &bad_image, err);
    if (!m8 || !cc_train_int8_measure(m8, d, &a->opts, f32_pred, e8, q, err))
        return NULL;
    rep->int8 = q;
    printf("int8: calibrated and measured in %.0f ms\n", cc_now_ms() - t0);
    return cc_engine_model(*e8);
}

/* m written to a->out with the report as its "training" record, and the report to --report
 * with the wrong held-out pictures' maps (wm). */
static bool write_bundle(const struct train_args *a, const struct cc_model *m,
                         const struct cc_train_report *rep, const struct cc_wrong_maps_in *wm,
                         struct cc_error *err)
{
    cJSON *json = cc_train_report_json(rep);
    char *text = json ? cJSON_PrintUnformatted(json) : NULL;
    struct cc_bundle_write_options wo = {.training_json = text, .overwrite = a->force};
    bool ok = text ? cc_bundle_write(m, a->out, &wo, err)
                   : cc_error_set(err, "out of memory for the training record");
    ok = ok && (!a->report || cc_wrong_maps_add(json, wm, err)); // the file's, not the bundle's
    if (ok && a->report) {
        FILE *f = fopen(a->report, "w");
        char *pretty = cJSON_Print(json);
        ok = f && pretty && fputs(pretty, f) >= 0 && fputc('\n', f) != EOF;
        ok = (f && fclose(f) == 0) && ok;
        free(pretty);
        if (!ok)
            cc_error_set(err, "cannot write the report %s", a->report);
    }
    free(text);
    cJSON_Delete(json);
    return ok;
}

/* Row of sample i's plain view; ctx: the augment count. */
static size_t plain_row(int sample, void *ctx)
{
    return cc_embed_row(sample, 0, *(const int *)ctx);
}

/* Fits the head, reports it and writes the bundle: exit status 0 or 1. */
static int train(const struct train_args *a, const struct cc_model *base,
                 const struct cc_head_graph *g, const struct cc_dataset *d, const float *feat,
                 const float *thumbs, const char *sha)
{
    int k = d->n_classes, dim = g->n_features;
    struct split_rows r = {0};
    float *w = malloc((size_t)k * dim * sizeof(float)), *b = malloc((size_t)k * sizeof(float));
    struct cc_dataset_check check;
    int augment = a->augment;
    cc_dataset_check(d, feat, dim, plain_row, &augment, thumbs, &check);
    struct cc_train_report rep = {.data = d,
                                  .base_name = base->name,
                                  .base_sha256 = sha,
                                  .augment = a->augment,
                                  .dim = dim,
                                  .seed = a->seed,
                                  .check = &check};
    struct cc_error err = {0};
    int *pred = NULL;
    float *prob = NULL;
    bool ok = w && b && make_rows(d, feat, dim, a->augment, &r) &&
              (pred = malloc(((size_t)r.held.n + 1) * sizeof(int))) &&
              (prob = malloc(((size_t)r.held.n + 1) * sizeof(float)));
    if (!ok)
        cc_error_set(&err, "out of memory");
    double t0 = cc_now_ms();
    ok = ok && cc_softmax_head_train(&r.train, &r.held, dim, k, a->l2, w, b, &rep.fit, &err);
    if (ok) {
        printf("head trained on %d rows (%d held out) in %.0f ms\n", r.train.n, r.held.n,
               cc_now_ms() - t0);
        cc_softmax_head_predict(&r.held, dim, k, w, b, pred, prob);
        rep.unknown_threshold =
            a->unknown >= 0 ? (float)a->unknown
                            : cc_softmax_head_unknown_threshold(r.yh, pred, prob, r.held.n, k);
        ok = cc_train_report_count(&rep, r.yh, pred, r.held.n) ||
             cc_error_set(&err, "out of memory");
    }
    struct cc_model *f32 = NULL;
    struct cc_engine *e8 = NULL;
    struct cc_train_int8 q = {0};
    const struct cc_model *m =
        ok ? head_model(a, base, g, w, b, &rep, pred, &f32, &e8, &q, &err) : NULL;
    if (m)
        cc_train_report_print(&rep, stdout);
    struct cc_wrong_maps_in wm = {base, g, &a->opts, d, r.yh, pred, prob, r.held.n, w};
    ok = m && write_bundle(a, m, &rep, &wm, &err);
    if (ok)
        printf("wrote %s (%d classes%s)\n", a->out, k, a->int8 ? ", int8" : "");
    else
        fprintf(stderr, "camclass-train: %s\n", err.msg);
    cc_engine_destroy(e8);
    cc_model_destroy(f32);
    cc_train_report_finish(&rep);
    cc_dataset_check_finish(&check);
    free_rows(&r);
    free(w), free(b), free(pred), free(prob);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct train_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct cc_error err = {0};
    struct cc_dataset d;
    struct cc_head_graph g;
    char sha[65];
    if (!cc_dataset_load(&d, a.dir, &err)) {
        fprintf(stderr, "camclass-train: %s\n", err.msg);
        return 2;
    }
    cc_dataset_split(&d, a.val, a.seed);
    struct cc_model *base = cc_bundle_load(a.base, &err);
    if (!base || !cc_head_graph_find(base, &g, &err) || !cc_sha256_file(a.base, sha, &err) ||
        !set_roi(&a, &d, base, &err)) {
        fprintf(stderr, "camclass-train: %s\n", err.msg);
        cc_model_destroy(base);
        cc_dataset_finish(&d);
        return 2;
    }
    bool bad_image = false;
    float *thumbs = malloc((size_t)d.n_samples * CC_THUMB_CELLS * sizeof(float));
    float *feat = thumbs ? features_of(&a, base, &g, &d, sha, thumbs, &bad_image, &err)
                         : (cc_error_set(&err, "out of memory for the thumbnails"), NULL);
    rc = feat ? train(&a, base, &g, &d, feat, thumbs, sha) : bad_image ? 2 : 1;
    if (!feat)
        fprintf(stderr, "camclass-train: %s\n", err.msg);
    free(feat);
    free(thumbs);
    cc_model_destroy(base);
    cc_dataset_finish(&d);
    return rc;
}
