/* camclass-train — a picture's grey thumbnail, to tell near-duplicates (the same frame saved
 * twenty times) from pictures that only look alike to the model.
 *
 * CC_THUMB_SIDE x CC_THUMB_SIDE cells, each the mean grey level (0..255, Rec. 601 weights) of
 * its block of the model's input tensor: the picture as camclass feeds the model (resized, ROI
 * cropped), before any augmentation. Averaging 7x7 pixels (at 224x224) divides a camera's
 * pixel noise by 7, so two captures of a still scene differ by a fraction of a grey level, while
 * a moved object or a change of light moves whole cells by several levels.
 *
 * Two thumbnails are near-duplicates when their cells differ by at most CC_THUMB_MEAN_DIFF grey
 * levels on average and CC_THUMB_MAX_DIFF at most anywhere. Measured on camclass-train's drawn
 * test scenes at 224x224 (tests/train/make_dataset.py): a copy with +-3 of uniform noise per
 * pixel, saved as JPEG, differed from its original by 0.25-0.33 on average, 1.0-1.5 at most;
 * the closest two different pictures (two dark "lights off" rooms, 1/6 brightness) by 0.53
 * and 2.1. The limits sit between (cell noise grows as sigma / 7: up to sigma ~5 per pixel on
 * both pictures stays under them).
 */
#ifndef CC_THUMBNAIL_H
#define CC_THUMBNAIL_H

#include <stdbool.h>

#include "model.h"

enum { CC_THUMB_SIDE = 32, CC_THUMB_CELLS = CC_THUMB_SIDE * CC_THUMB_SIDE };
#define CC_THUMB_MEAN_DIFF 0.5f
#define CC_THUMB_MAX_DIFF 3.0f

/* out (CC_THUMB_CELLS) = the thumbnail of x, a [1, 3, h, w] tensor normalized as in says (a
 * side under CC_THUMB_SIDE repeats pixels). */
void cc_thumbnail_of_tensor(const struct cc_input_spec *in, const float *x, int h, int w,
                            float *out);

/* Their mean grey level (the cells' mean). */
float cc_thumbnail_mean(const float *t);

/* Whether a and b are near-duplicates (see above). */
bool cc_thumbnail_near(const float *a, const float *b);

#endif
