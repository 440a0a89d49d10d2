/* camclass — the overlay picture without a window: drawn offscreen into packed RGB pixels.
 *
 * The same picture the window shows at the same size (overlay_draw.h draws both): the frame
 * letterboxed on the left, the panel with top-k bars, fps and latency, model and backend on
 * the right. For recordings (recorder.h) and anything else that wants the annotated picture
 * as pixels. It needs no display: SDL's software renderer draws into a plain surface, and SDL's
 * video subsystem is not initialized.
 *
 * Threads: create on any thread (fonts are opened under overlay_draw.h's lock); then one thread
 * at a time may render (e.g. the inference thread); destroy after that thread is done.
 * Ownership: the caller owns the offscreen overlay; frames and results are copied.
 */
#ifndef CC_OVERLAY_OFFSCREEN_H
#define CC_OVERLAY_OFFSCREEN_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"

struct cc_overlay_offscreen;

/* An offscreen overlay of width × height pixels (1 .. 8192 each) showing what cfg says (its
 * window fields are ignored). NULL with err when the size is out of range, the font cannot be
 * opened (err names the path) or SDL fails. */
struct cc_overlay_offscreen *cc_overlay_offscreen_create(const struct cc_overlay_config *cfg,
                                                         int width, int height,
                                                         struct cc_error *err);

/* Frees it; accepts NULL. */
void cc_overlay_offscreen_destroy(struct cc_overlay_offscreen *o);

/* Draws frame (NULL: the previous one; any cc_pixfmt) with result r (NULL: the previous one)
 * and writes the picture as packed RGB24 rows of stride bytes (≥ 3 × width) to rgb. False with
 * err when the frame is malformed (the previous frame is drawn and written all the same) or SDL
 * fails (rgb is then not written). */
bool cc_overlay_render(struct cc_overlay_offscreen *o, const struct cc_frame *frame,
                       const struct cc_result *r, uint8_t *rgb, int stride, struct cc_error *err);

/* The layout of the last picture (sizes, rectangles, colours, texts as drawn). */
void cc_overlay_offscreen_layout(const struct cc_overlay_offscreen *o,
                                 struct cc_overlay_layout *out);

#endif
