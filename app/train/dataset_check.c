/* camclass-train — images that look mislabelled (see dataset_check.h). */
#include "dataset_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void cc_dataset_check(const struct cc_dataset *d, const float *features, int dim,
                      size_t (*row_of)(int sample, void *ctx), void *ctx,
                      struct cc_dataset_check *c)
{
    int n = d->n_samples;
    *c = (struct cc_dataset_check){0};
    if (n > CC_CHECK_MAX_IMAGES)
        return;
    float *x = unit_rows(d, features, dim, row_of, ctx);
    c->looks_like = malloc(((size_t)n + 1) * sizeof(int));
    if (!x || !c->looks_like) {
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

void cc_dataset_check_print(const struct cc_dataset *d, const struct cc_dataset_check *c, FILE *out)
{
    if (!c->checked) {
        if (d->n_samples > CC_CHECK_MAX_IMAGES)
            fprintf(out, "note: over %d images: not checked for mislabelled images\n",
                    CC_CHECK_MAX_IMAGES);
        return;
    }
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
    c->looks_like = NULL;
    c->checked = false;
}
