/* camclass — a growing series of values and its statistics (see series.h). */
#include <stdlib.h>
#include <string.h>

#include "series.h"

bool cc_series_add(struct cc_series *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        double *p = realloc(s->v, cap * sizeof(double));
        if (!p)
            return false;
        s->v = p, s->cap = cap;
    }
    s->v[s->n++] = v;
    return true;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

double cc_series_percentile(const struct cc_series *s, double p)
{
    if (!s->n)
        return 0;
    double *c = malloc(s->n * sizeof(double));
    if (!c)
        return 0;
    memcpy(c, s->v, s->n * sizeof(double));
    qsort(c, s->n, sizeof(double), cmp_double);
    size_t rank = (size_t)(p / 100.0 * (double)s->n + 0.999999);
    double v = c[rank < 1 ? 0 : (rank > s->n ? s->n - 1 : rank - 1)];
    free(c);
    return v;
}

double cc_series_mean(const struct cc_series *s)
{
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += s->v[i];
    return s->n ? sum / (double)s->n : 0;
}

void cc_series_free(struct cc_series *s)
{
    free(s->v);
    *s = (struct cc_series){0};
}
