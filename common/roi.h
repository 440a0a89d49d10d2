/* camclass — a region of interest: the part of each frame that is classified (--roi X,Y,W,H).
 *
 * Written either as fractions of the frame (0.5,0.25,0.5,0.5: x, y, width, height, each in
 * [0, 1], x + w <= 1, y + h <= 1), which fit any frame size, or in pixels with a px suffix
 * (320,120,200,200px), which are checked against the frame when one arrives. "none" is the
 * whole frame. A bundle's manifest stores fractions (docs/MODEL_FORMAT.md).
 *
 * Pure: parsing and resolving touch nothing but their arguments. A struct cc_roi is a plain
 * value; zero-initialised it is CC_ROI_NONE.
 */
#ifndef CC_ROI_H
#define CC_ROI_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

enum cc_roi_kind {
    CC_ROI_NONE,     // the whole frame
    CC_ROI_FRACTION, // x, y, w, h are fractions of the frame's width and height
    CC_ROI_PIXELS,   // x, y, w, h are whole pixels
};

struct cc_roi {
    enum cc_roi_kind kind;
    double x, y, w, h; // as the kind says; unused for CC_ROI_NONE
};

/* The ROI resolved for one frame size, in pixels: [x, x + w) × [y, y + h), inside the frame. */
struct cc_roi_rect {
    int x, y, w, h;
};

/* Parses "X,Y,W,H" (fractions), "X,Y,W,H" + "px" (whole pixels) or "none" into roi. Fractions
 * are decimal numbers without exponents. False with err: one line saying what is wrong with s
 * and how a good value looks (the caller's name for the flag is not in it: prefix it). */
bool cc_roi_parse(const char *s, struct cc_roi *roi, struct cc_error *err);

/* Checks the numbers of a fraction ROI (as read from a bundle): finite, x, y >= 0, w, h > 0,
 * x + w <= 1, y + h <= 1. False with err naming the broken rule. */
bool cc_roi_check_fractions(const struct cc_roi *roi, struct cc_error *err);

/* The pixels of roi in a frame of frame_w × frame_h: fractions are rounded to the nearest
 * pixel edge (x0 = round(x·W), x1 = round((x + w)·W)); CC_ROI_NONE is the whole frame. False
 * with err when a pixel ROI reaches outside the frame, or a fraction ROI is under a pixel. */
bool cc_roi_rect(const struct cc_roi *roi, int frame_w, int frame_h, struct cc_roi_rect *r,
                 struct cc_error *err);

/* A pixel ROI as fractions of a frame_w × frame_h frame (others unchanged). */
struct cc_roi cc_roi_to_fractions(const struct cc_roi *roi, int frame_w, int frame_h);

/* Writes roi as cc_roi_parse reads it ("0.5,0.25,0.5,0.5", "320,120,200,200px", "none") into
 * buf; the same ROI always gives the same text (%.9g), so it serves as a cache key. */
void cc_roi_format(const struct cc_roi *roi, char *buf, size_t size);

#endif
