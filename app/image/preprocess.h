/* camclass — from a source frame to the model's input tensor, in one fused pass.
 *
 * cc_preprocess converts the frame's native pixels (YUYV, NV12, RGB24, BGR24, GREY, MJPEG) to
 * RGB, resamples them (squash, or resize-shorter-side + centre crop) with bilinear,
 * align_corners=False, no-antialias semantics — or, when the spec says antialias, with PIL's
 * antialiased bilinear —, normalizes ((x/255 − mean)/std) and writes NCHW float in the model's
 * channel order — exactly as docs/PREPROCESSING.md specifies, matching
 * torch.nn.functional.interpolate / torchvision Resize + CenterCrop (with antialias: the same
 * transforms on PIL images, i.e. PIL's Image.resize) to ≤ 1e-4.
 *
 * The output depends only on the frame, the spec and the output size. The context only caches
 * work that depends on the geometry (tap tables, recomputed when the frame size, spec or
 * output size changes) and scratch memory (resampled rows, the decoded MJPEG image).
 *
 * Ownership: the caller owns the context, creates one per thread that preprocesses, and
 * destroys it. Not thread-safe: one context must not be used by two threads at once.
 */
#ifndef CC_PREPROCESS_H
#define CC_PREPROCESS_H

#include <stdbool.h>

#include "error.h"
#include "frame.h"
#include "model.h"

struct cc_preprocess;

/* Where the output window lies in the resized image; the result of the ROI and the resize
 * policy. The ROI (spec->roi) is a source rectangle: the resize sees only its pixels, read in
 * place from the frame (no copy), as if the frame had been cropped to it first. */
struct cc_preprocess_geometry {
    int in_w, in_h;           // source frame size
    struct cc_roi_rect src;   // the part of the frame that is resized (the whole frame without
                              // a ROI)
    int resized_w, resized_h; // size of the (virtual) resized image
    int crop_x, crop_y;       // top-left of the output window inside the resized image
    int out_w, out_h;         // output tensor size
};

/* Computes the geometry for a frame of in_w × in_h, of its ROI (src) when spec has one: the
 * sizes below are then the ROI's. Squash → resized = out, crop 0;
 * center_crop (size S) → shorter side S, longer side int(S·long/short), crop offsets
 * int(round((resized − out)/2)) with round-half-to-even, as torchvision does.
 * Returns false with err when a size is not positive, the crop does not fit, or the ROI does
 * not fit the frame (cc_roi_rect). */
bool cc_preprocess_geometry(int in_w, int in_h, const struct cc_input_spec *spec, int out_w,
                            int out_h, struct cc_preprocess_geometry *g, struct cc_error *err);

/* Creates an empty context (NULL on out of memory, with err). */
struct cc_preprocess *cc_preprocess_create(struct cc_error *err);

/* Frees the context; accepts NULL. */
void cc_preprocess_destroy(struct cc_preprocess *pp);

/* Writes the 3 × out_h × out_w floats of the input tensor to out_nchw (caller-owned).
 * Returns false with err (naming the frame's sequence number) when the frame is malformed
 * (size too small for its format, bad stride, undecodable MJPEG) or out of memory. */
bool cc_preprocess(struct cc_preprocess *pp, const struct cc_frame *in,
                   const struct cc_input_spec *spec, int out_w, int out_h, float *out_nchw,
                   struct cc_error *err);

#endif
