/* camclass-train — what users get wrong in a dataset.
 *
 * Mislabelled: an image whose CC_CHECK_NEIGHBOURS nearest images (cosine similarity of the
 * centred features) all belong to one other class is most likely in the wrong folder.
 * Centring (subtracting the dataset's mean feature) first matters: pooled ReLU features are
 * all positive, so any two raw feature vectors look alike.
 *
 * Near-duplicates (the same frame saved twenty times): read from the pictures' grey thumbnails
 * (thumbnail.h), not the features. Measured on the self-test base, two copies of one picture
 * with +-3 of noise were 0.06-0.09 apart in features (relative L2) while twenty different dark
 * pictures were 0.01-0.02 apart: features do not tell them apart, pixels do. Pairs are only
 * compared when their mean grey levels are within CC_THUMB_MEAN_DIFF (a sorted sweep).
 *
 * O(n^2 * dim) for the neighbours: datasets of more than CC_CHECK_MAX_IMAGES images are not
 * checked (said).
 */
#ifndef CC_DATASET_CHECK_H
#define CC_DATASET_CHECK_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "dataset.h"

enum { CC_CHECK_NEIGHBOURS = 5, CC_CHECK_MAX_IMAGES = 4000 };

struct cc_dataset_check {
    bool checked;    // false: too many images, or out of memory
    int *dup_of;     // (n_samples) the first earlier image it is a near-duplicate of, or -1
    int *looks_like; // (n_samples) the class all its nearest neighbours are in, or -1
};

/* Checks d from its features (row(i) = features + row_of(i) * dim is sample i's plain view)
 * and its thumbnails (n_samples * CC_THUMB_CELLS). */
void cc_dataset_check(const struct cc_dataset *d, const float *features, int dim,
                      size_t (*row_of)(int sample, void *ctx), void *ctx, const float *thumbs,
                      struct cc_dataset_check *c);

/* The warnings, one line each ("warning: ..."), naming files and what to do. */
void cc_dataset_check_print(const struct cc_dataset *d, const struct cc_dataset_check *c,
                            FILE *out);

/* "near_duplicates": [[file, file], ...], "look_mislabelled": [{file, class, looks_like}] into o.
 */
void cc_dataset_check_json(const struct cc_dataset *d, const struct cc_dataset_check *c, cJSON *o);

void cc_dataset_check_finish(struct cc_dataset_check *c);

#endif
