/* camclass — a series of values (stage times in ms with --profile: pipeline.h, main's present
 * and record times) and its statistics. One owner; no locking. */
#ifndef CC_SERIES_H
#define CC_SERIES_H

#include <stdbool.h>
#include <stddef.h>

struct cc_series {
    double *v; // (n) values, owned
    size_t n, cap;
};

/* Appends v (false when out of memory: v is not kept). */
bool cc_series_add(struct cc_series *s, double v);
double cc_series_percentile(const struct cc_series *s, double p); // nearest rank; sorts a copy
double cc_series_mean(const struct cc_series *s);
void cc_series_free(struct cc_series *s);

#endif
