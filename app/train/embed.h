/* camclass-train — feature vectors of a dataset's images: each image through camclass's own file
 * source and preprocessing (input_tensor.h, exactly what camclass feeds the model), then the
 * base model's backbone on the engine (cpu, vulkan or ref, as camclass).
 *
 * Augmented views (the training images only; a held-out image gives its one plain view): each
 * view draws, from a seeded generator, a shift of up to 8% of the width and height (edges
 * repeated), a horizontal flip with probability 1/2 when flips are allowed, a brightness offset
 * in [-0.1, 0.1] and a contrast factor in [0.8, 1.2] (on pixel values in [0, 1]) and a gain per
 * colour channel in [0.95, 1.05]. They are applied to the preprocessed tensor, so the image is
 * decoded and resized once. A view's draws depend only on the seed, the picture's bytes and the
 * view's number, not on the other pictures, so a picture's views are the same in every run and
 * can be cached (feature_cache.h).
 */
#ifndef CC_EMBED_H
#define CC_EMBED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dataset.h"
#include "engine.h"
#include "error.h"
#include "feature_cache.h"

struct cc_embed_options {
    int augment;    // augmented views per training image, beside its plain view
    bool flip;      // views may be mirrored left to right
    uint64_t seed;  // of the views' random draws
    FILE *progress; // a line per 10% of the images, or NULL
    const struct cc_feature_cache *cache; // views kept between runs; NULL: none
};

/* What a run computed and what it found cached, in views. */
struct cc_embed_stats {
    int computed, cached;
};

/* The rows of the feature matrix: view v of sample i is row i * (1 + augment) + v; a held-out
 * sample has view 0 only (its other rows are left unset and never read). */
static inline size_t cc_embed_row(int sample, int view, int augment)
{
    return (size_t)sample * (size_t)(1 + augment) + (size_t)view;
}

/* Fills features (n_samples * (1 + augment) rows of the backbone's output count each) and
 * thumbs (n_samples * CC_THUMB_CELLS: each picture's thumbnail, thumbnail.h). False
 * with err naming the image at fault (*bad_image true: it cannot be read or decoded) or the
 * engine's failure (*bad_image false). */
bool cc_embed_dataset(struct cc_engine *backbone, const struct cc_dataset *d,
                      const struct cc_embed_options *o, float *features, float *thumbs,
                      bool *bad_image, struct cc_embed_stats *stats, struct cc_error *err);

#endif
