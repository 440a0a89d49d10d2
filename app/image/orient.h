/* camclass — a frame turned the way the camera is mounted: --hflip / --vflip mirror the picture
 * as the camera delivers it, then --rotation turns it clockwise by 0, 90, 180 or 270 degrees
 * (rpicam-apps' flags; 180 is the same as --hflip --vflip). The pipeline applies it to each
 * frame before anything else looks at it, so the ROI (--roi), the preprocessing, the camera
 * health checks, the window, /latest, /stream and recordings all see the turned frame: a ROI is
 * given in the turned frame's coordinates.
 *
 *   struct cc_orienter o = {.orient = {.rotation = 90}};   // scratch, reused frame after frame
 *   const struct cc_frame *g;
 *   if (cc_orient_apply(&o, frame, &g, &err)) ... use g until the next call ...
 *   cc_orient_finish(&o);
 *
 * Threads: a cc_orienter belongs to one thread at a time. Ownership: its buffers are its own.
 */
#ifndef CC_ORIENT_H
#define CC_ORIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"
#include "frame_rgb.h"

struct cc_orient {
    int rotation;      // clockwise degrees: 0, 90, 180 or 270
    bool hflip, vflip; // mirror left-right / top-bottom, before the rotation
};

/* True when o leaves frames as they are (rotation 0, no flip). */
bool cc_orient_identity(const struct cc_orient *o);

/* True when degrees is 0, 90, 180 or 270. */
bool cc_orient_rotation_valid(long degrees);

struct cc_orienter {
    struct cc_orient orient;  // what to do; set by the owner
    struct cc_frame_rgb conv; // the source's rows as RGB
    uint8_t *row;             // (row_cap) one source row as RGB
    int row_cap;              // bytes
    struct cc_frame out;      // the turned frame (RGB24); data owned here
};

/* *out = in itself when the orientation is the identity, else in turned into o's own RGB24
 * frame (width and height swapped for 90 and 270; sequence and timestamp kept), valid until
 * the next call. False with err when in is malformed (see cc_frame_rgb_prepare) or out of
 * memory. */
bool cc_orient_apply(struct cc_orienter *o, const struct cc_frame *in, const struct cc_frame **out,
                     struct cc_error *err);

/* Frees the buffers; o is empty again. */
void cc_orient_finish(struct cc_orienter *o);

#endif
