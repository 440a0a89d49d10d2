/* camclass — any camera or file frame (frame.h, every cc_pixfmt) as packed RGB rows, with the
 * conversions of convert.h and the JPEG decoder of decode.h (MJPEG frames): what the window
 * shows (overlay_draw.c) and what the collected samples hold (sample_store.c).
 *
 *   struct cc_frame_rgb conv = {0};                 // scratch, reused frame after frame
 *   struct cc_frame f;
 *   if (cc_frame_rgb_prepare(&conv, frame, &f, "overlay", &err))
 *       for (y = 0; y < f.height; y++) cc_frame_rgb_row(&conv, &f, y, dst_row);
 *   cc_frame_rgb_finish(&conv);
 *
 * Threads: a cc_frame_rgb belongs to one thread at a time. Ownership: its buffers are its own.
 */
#ifndef CC_FRAME_RGB_H
#define CC_FRAME_RGB_H

#include <stdbool.h>
#include <stdint.h>

#include "decode.h"
#include "error.h"
#include "frame.h"

struct cc_frame_rgb {
    uint8_t *planar;      // 3 rows of planar R, G, B for YUYV/NV12 conversion
    int planar_cap;       // pixels per row in planar
    struct cc_image jpeg; // a decoded MJPEG frame
};

/* Makes *out the frame to convert row by row: in itself, or an MJPEG frame decoded (as RGB24,
 * pointing into c). False with err (starting with who) when in is malformed (size short for
 * its format, undecodable MJPEG) or out of memory. */
bool cc_frame_rgb_prepare(struct cc_frame_rgb *c, const struct cc_frame *in, struct cc_frame *out,
                          const char *who, struct cc_error *err);

/* Row y of a prepared frame f as w packed R G B pixels at dst. */
void cc_frame_rgb_row(struct cc_frame_rgb *c, const struct cc_frame *f, int y, uint8_t *dst);

/* The whole prepared frame f as packed RGB (stride 3w), malloc'd; NULL when out of memory. */
uint8_t *cc_frame_rgb_all(struct cc_frame_rgb *c, const struct cc_frame *f);

/* Frees the buffers; c is empty again. */
void cc_frame_rgb_finish(struct cc_frame_rgb *c);

#endif
