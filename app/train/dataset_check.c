/* camclass-train — images that look mislabelled, and near-duplicates (see dataset_check.h). */
#include "dataset_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "thumbnail.h"

enum { LIST_MAX = 5 }; // files named per warning; the rest are counted

// Each sample's plain features, centred and scaled to unit length: n x dim, owned by the caller.
static float *unit_rows(const struct cc_dataset *d, const float *features, int dim,
                        size_t (*row_of)(int, void *), void *ctx)
{
    int n = d->n_samples;
    float *x = malloc((size_t)n * dim * sizeof(float));
    double *mean = calloc((size_t)dim, sizeof(double));
    if (!x || !mean) {
        free(x), free(mean);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < dim; j++)
            mean[j] += features[row_of(i, ctx) * (size_t)dim + j] / n;
    for (int i = 0; i < n; i++) {
        float *r = x + (size_t)i * dim;
        double norm = 0;
        for (int j = 0; j < dim; j++) {
            r[j] = (float)(features[row_of(i, ctx) * (size_t)dim + j] - mean[j]);
            norm += (double)r[j] * r[j];
        }
        float s = norm > 0 ? (float)(1 / sqrt(norm)) : 0;
        for (int j = 0; j < dim; j++)
            r[j] *= s;
    }
    free(mean);
    return x;
}

static float dot(const float *a, const float *b, int dim)
{
    float s = 0;
    for (int j = 0; j < dim; j++)
        s += a[j] * b[j];
    return s;
}

// Inserts (sim, j) into the k best of (best, idx), highest first.
static void keep_best(float *best, int *idx, int k, float sim, int j)
{
    if (sim <= best[k - 1])
        return;
    int p = k - 1;
    while (p > 0 && best[p - 1] < sim) {
        best[p] = best[p - 1], idx[p] = idx[p - 1];
        p--;
    }
    best[p] = sim, idx[p] = j;
}

// The class all of i's k nearest neighbours share when it is not i's own; else -1.
static int neighbours_class(const struct cc_dataset *d, const float *x, int dim, int i)
{
    float best[CC_CHECK_NEIGHBOURS];
    int idx[CC_CHECK_NEIGHBOURS];
    for (int k = 0; k < CC_CHECK_NEIGHBOURS; k++)
        best[k] = -2, idx[k] = -1;
    for (int j = 0; j < d->n_samples; j++)
        if (j != i)
            keep_best(best, idx, CC_CHECK_NEIGHBOURS,
                      dot(x + (size_t)i * dim, x + (size_t)j * dim, dim), j);
    int c = idx[CC_CHECK_NEIGHBOURS - 1] >= 0 ? d->samples[idx[0]].label : -1;
    for (int k = 1; c >= 0 && k < CC_CHECK_NEIGHBOURS; k++)
        if (d->samples[idx[k]].label != c)
            c = -1;
    return c == d->samples[i].label ? -1 : c;
}

/* ------------------------------------------------------------------------------------------
 * Near-duplicates
 */

struct by_mean {
    float mean; // of the thumbnail
    int sample;
};

static int compare_mean(const void *a, const void *b)
{
    float x = ((const struct by_mean *)a)->mean, y = ((const struct by_mean *)b)->mean;
    return (x > y) - (x < y);
}

/* dup_of[i] = the first j < i whose thumbnail is near i's; pairs whose means differ by more
 * than the mean difference allowed cannot be near, so a sweep over the sorted means compares
 * only neighbours in brightness. False when out of memory. */
static bool find_near_duplicates(int n, const float *thumbs, int *dup_of)
{
    struct by_mean *order = malloc(((size_t)n + 1) * sizeof(*order));
    if (!order)
        return false;
    for (int i = 0; i < n; i++) {
        order[i] = (struct by_mean){cc_thumbnail_mean(thumbs + (size_t)i * CC_THUMB_CELLS), i};
        dup_of[i] = -1;
    }
    qsort(order, (size_t)n, sizeof(*order), compare_mean);
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n && order[q].mean - order[p].mean <= CC_THUMB_MEAN_DIFF; q++) {
            int i = order[p].sample, j = order[q].sample;
            int first = i < j ? i : j, later = i < j ? j : i;
            if ((dup_of[later] < 0 || first < dup_of[later]) &&
                cc_thumbnail_near(thumbs + (size_t)i * CC_THUMB_CELLS,
                                  thumbs + (size_t)j * CC_THUMB_CELLS))
                dup_of[later] = first;
        }
    free(order);
    return true;
}

void cc_dataset_check(const struct cc_dataset *d, const float *features, int dim,
                      size_t (*row_of)(int sample, void *ctx), void *ctx, const float *thumbs,
                      struct cc_dataset_check *c)
{
    int n = d->n_samples;
    *c = (struct cc_dataset_check){0};
    if (n > CC_CHECK_MAX_IMAGES)
        return;
    float *x = unit_rows(d, features, dim, row_of, ctx);
    c->looks_like = malloc(((size_t)n + 1) * sizeof(int));
    c->dup_of = malloc(((size_t)n + 1) * sizeof(int));
    if (!x || !c->looks_like || !c->dup_of || !find_near_duplicates(n, thumbs, c->dup_of)) {
        free(x);
        cc_dataset_check_finish(c);
        return;
    }
    for (int i = 0; i < n; i++)
        c->looks_like[i] = neighbours_class(d, x, dim, i);
    free(x);
    c->checked = true;
}

// The file name of a sample (its path after the class folder).
static const char *file_of(const struct cc_sample *s)
{
    const char *slash = strrchr(s->path, '/');
    return slash ? slash + 1 : s->path;
}

/* Per class, how many of its pictures repeat an earlier one of the class; and each picture
 * that repeats one of another class. */
static void print_duplicates(const struct cc_dataset *d, const struct cc_dataset_check *c,
                             FILE *out)
{
    for (int k = 0; k < d->n_classes; k++) {
        int count = 0, example = -1;
        for (int i = 0; i < d->n_samples; i++)
            if (d->samples[i].label == k && c->dup_of[i] >= 0 &&
                d->samples[c->dup_of[i]].label == k) {
                example = example < 0 ? i : example;
                count++;
            }
        if (count)
            fprintf(out,
                    "warning: \"%s\": %d of its %d images are near-duplicates of another one "
                    "(e.g. %s repeats %s): they teach it the same picture again; save frames "
                    "where something changes (position, light, distance)\n",
                    d->classes[k], count, d->counts[k], file_of(&d->samples[example]),
                    file_of(&d->samples[c->dup_of[example]]));
    }
    int total = 0;
    for (int i = 0; i < d->n_samples; i++) {
        const struct cc_sample *s = &d->samples[i];
        if (c->dup_of[i] < 0 || d->samples[c->dup_of[i]].label == s->label)
            continue;
        const struct cc_sample *o = &d->samples[c->dup_of[i]];
        if (total++ < LIST_MAX)
            fprintf(out,
                    "warning: %s/%s and %s/%s are the same picture in two classes: keep it in "
                    "one folder\n",
                    d->classes[s->label], file_of(s), d->classes[o->label], file_of(o));
    }
    if (total > LIST_MAX)
        fprintf(out,
                "warning: %d more pictures repeat one of another class (--report lists them)\n",
                total - LIST_MAX);
}

void cc_dataset_check_print(const struct cc_dataset *d, const struct cc_dataset_check *c, FILE *out)
{
    if (!c->checked) {
        if (d->n_samples > CC_CHECK_MAX_IMAGES)
            fprintf(out, "note: over %d images: not checked for mislabelled or duplicated images\n",
                    CC_CHECK_MAX_IMAGES);
        return;
    }
    print_duplicates(d, c, out);
    int shown = 0, total = 0;
    for (int i = 0; i < d->n_samples; i++) {
        if (c->looks_like[i] < 0)
            continue;
        if (shown < LIST_MAX) {
            const struct cc_sample *s = &d->samples[i];
            fprintf(out,
                    "warning: %s/%s looks like \"%s\" (its %d nearest images are all "
                    "\"%s\"): is it in the right folder?\n",
                    d->classes[s->label], file_of(s), d->classes[c->looks_like[i]],
                    CC_CHECK_NEIGHBOURS, d->classes[c->looks_like[i]]);
            shown++;
        }
        total++;
    }
    if (total > shown)
        fprintf(out, "warning: %d more images look like another class (--report lists them)\n",
                total - shown);
}

void cc_dataset_check_json(const struct cc_dataset *d, const struct cc_dataset_check *c, cJSON *o)
{
    if (!c->checked)
        return;
    cJSON *dup = cJSON_AddArrayToObject(o, "near_duplicates");
    for (int i = 0; dup && i < d->n_samples; i++)
        if (c->dup_of[i] >= 0) {
            const char *pair[2] = {d->samples[c->dup_of[i]].path, d->samples[i].path};
            cJSON_AddItemToArray(dup, cJSON_CreateStringArray(pair, 2));
        }
    cJSON *mis = cJSON_AddArrayToObject(o, "look_mislabelled");
    for (int i = 0; mis && i < d->n_samples; i++) {
        const struct cc_sample *s = &d->samples[i];
        if (c->looks_like[i] >= 0) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "file", s->path);
            cJSON_AddStringToObject(e, "class", d->classes[s->label]);
            cJSON_AddStringToObject(e, "looks_like", d->classes[c->looks_like[i]]);
            cJSON_AddItemToArray(mis, e);
        }
    }
}

void cc_dataset_check_finish(struct cc_dataset_check *c)
{
    free(c->looks_like);
    free(c->dup_of);
    c->looks_like = c->dup_of = NULL;
    c->checked = false;
}
