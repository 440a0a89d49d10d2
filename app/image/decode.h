/* camclass — JPEG (libjpeg-turbo) and PNG (libpng) decoding from memory.
 *
 * Used by preprocessing (MJPEG camera frames) and the file sources (JPEG/PNG files). Errors
 * are caught with setjmp/longjmp inside these functions: a corrupt or truncated image never
 * exits the process, it returns false with one line naming `name` (a file path or "MJPEG
 * frame N") and what went wrong.
 *
 * Decoding settings are libjpeg's defaults (JDCT_ISLOW integer IDCT, fancy upsampling), so
 * that a frame decodes to the same bytes wherever it is decoded (docs/PREPROCESSING.md).
 */
#ifndef CC_DECODE_H
#define CC_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* A decoded 8-bit image; the caller owns it and may reuse it for the next decode (pixels
 * grows with realloc only when a larger image comes). Free with cc_image_finish. */
struct cc_image {
    int width, height;
    int channels;    // 1 (grey) or 3 (R G B)
    uint8_t *pixels; // (height, width, channels), tightly packed
    size_t capacity; // bytes allocated in pixels
};

void cc_image_finish(struct cc_image *img);

/* True when data starts with the PNG signature / a JPEG SOI marker. */
bool cc_is_png(const uint8_t *data, size_t size);
bool cc_is_jpeg(const uint8_t *data, size_t size);

/* Decodes a JPEG to RGB (channels = 3, also for greyscale JPEGs). A truncated stream
 * (premature end of data) is an error, not a grey-filled image. */
bool cc_decode_jpeg(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                    struct cc_error *err);

/* Decodes a PNG to grey (1 channel, for grey and grey+alpha files) or RGB (3 channels, for
 * RGB, RGBA and palette files). Alpha is dropped, 16-bit samples are scaled to 8 bits. */
bool cc_decode_png(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                   struct cc_error *err);

#endif
