/* camclass-train — feature vectors kept between runs, so that retraining after adding a few
 * pictures computes theirs only.
 *
 * A picture's vectors are stored under the SHA-256 of the base bundle's file (a folder each) and
 * of the picture's bytes (its file name), with the views' seed, mirror choice and ROI: an edited
 * picture, another base, seed, --no-flip or --roi is a miss, never a stale hit. A file holds
 * views 0..n of one picture (view 0 the picture itself) and its grey thumbnail (thumbnail.h); a
 * picture held out now and trained on later gets its missing views added. Files:
 * $XDG_CACHE_HOME/camclass/train/<base>/<picture>-s<seed>-f<0|1>[-roi<X,Y,W,H>].feat, replaced
 * atomically (cache_file.h); one that does not read back whole is a miss. A cache that cannot
 * be written is not an error: the next run computes again.
 */
#ifndef CC_FEATURE_CACHE_H
#define CC_FEATURE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "roi.h"

struct cc_feature_cache {
    char *dir;     // the base's folder; owned; NULL: no cache (disabled, or no $HOME)
    int dim;       // floats per view
    uint64_t seed; // of the views
    bool flip;     // views may be mirrored
    char roi[96];  // the ROI the pictures are cropped to (roi.h's text); "": none
};

/* dir_override: a folder to use instead of the user's cache; "" disables the cache. roi: the
 * crop every picture gets (NULL or CC_ROI_NONE: none), a part of each file's name. */
void cc_feature_cache_init(struct cc_feature_cache *c, const char *dir_override,
                           const char *base_sha256, int dim, uint64_t seed, bool flip,
                           const struct cc_roi *roi);

/* Reads up to max_views cached views of the picture with hash sha256 into out (rows of dim) and
 * its thumbnail into thumb (CC_THUMB_CELLS); returns how many views (0: none, thumb unset). */
int cc_feature_cache_get(const struct cc_feature_cache *c, const char *sha256, float *thumb,
                         float *out, int max_views);

/* Stores the thumbnail and n_views views (rows of dim) of the picture with hash sha256. */
void cc_feature_cache_put(const struct cc_feature_cache *c, const char *sha256, const float *thumb,
                          const float *views, int n_views);

void cc_feature_cache_finish(struct cc_feature_cache *c);

#endif
