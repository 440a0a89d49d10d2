/* camclass — --output PICTURE.jpg: the annotated picture of the last result, as the window and
 * /stream draw it (the offscreen overlay, no key hints), written as one JPEG at the end of the
 * run (`camclass photo.jpg annotated.jpg`, as jetson-inference's imagenet in.jpg out.jpg).
 *
 *   struct cc_still *s = cc_still_open(&cfg, &err);   // NULL: print err, exit 2
 *   inference thread, per result:  cc_still_keep(s, r, f);   // copies the frame and result
 *   after the pipeline stopped:    cc_still_finish(s, &err); // renders and writes
 *   cc_still_destroy(s);
 *
 * The file is written to a temporary name in its folder and renamed over PATH (replacing it,
 * as a recording does), so a failed write leaves no half picture.
 * Threads: keep on the inference thread, finish after it has stopped.
 */
#ifndef CC_STILL_H
#define CC_STILL_H

#include <stdbool.h>

#include "error.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"

struct cc_still_config {
    const char *path;                        // ends in .jpg or .jpeg (any case); copied
    int width, height;                       // the picture's size, 2..8192
    const struct cc_overlay_config *overlay; // what the picture shows (the window's texts)
};

/* True when path names a picture (.jpg, .jpeg): --output is then a still, not a video. */
bool cc_still_is_picture(const char *path);

struct cc_still;

/* NULL with err when the size is out of range or the overlay cannot be drawn (its font). */
struct cc_still *cc_still_open(const struct cc_still_config *cfg, struct cc_error *err);

/* Keeps a copy of frame f and result r (the last one kept is drawn). False when out of memory
 * (the previous one stays). */
bool cc_still_keep(struct cc_still *s, const struct cc_result *r, const struct cc_frame *f);

/* Draws the last kept frame and result and writes the JPEG. False with err when nothing was
 * classified, or the picture cannot be drawn or written (naming the path and errno). */
bool cc_still_finish(struct cc_still *s, struct cc_error *err);

void cc_still_destroy(struct cc_still *s); // accepts NULL

#endif
