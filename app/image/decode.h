/* camclass — image decoding from memory: JPEG (libjpeg-turbo) and PNG (libpng); the table of
 * every format camclass reads, WebP and BMP too, is image_formats.h (cc_image_decode).
 *
 * Used by preprocessing (MJPEG camera frames), the file sources (image files and directories)
 * and POST /predict: the same decoders everywhere. Errors
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

/* The largest image decoded: 40 M pixels in all and 16384 on a side. The size a file declares
 * (PNG IHDR, JPEG SOF) is checked against these before anything is allocated, so that a tiny
 * file claiming a huge size (a decompression bomb) costs nothing. A classifier needs far less
 * (models take 224x224); 40 M pixels keeps 8K frames (33 M) and photos up to 40 MP (phones'
 * 48/50 MP modes are above: scale those down); PIL refuses above ~89 M. At 3 bytes a pixel
 * a decoded image is then at most 120 MB. The same limits apply to Y4M frames (y4m.c). */
#define CC_IMAGE_MAX_PIXELS 40000000
#define CC_IMAGE_MAX_SIDE 16384

/* A decoded 8-bit image; the caller owns it and may reuse it for the next decode (pixels
 * grows with realloc only when a larger image comes). Free with cc_image_finish. */
struct cc_image {
    int width, height;
    int channels;    // 1 (grey) or 3 (R G B)
    uint8_t *pixels; // (height, width, channels), tightly packed
    size_t capacity; // bytes allocated in pixels
};

void cc_image_finish(struct cc_image *img);

/* Checks a declared image size against the limits above: false with "NAME: WxH pixels is more
 * than camclass decodes (...); scale it down first" (or "has no pixels") when it is outside. */
bool cc_image_check_size(long long w, long long h, const char *name, struct cc_error *err);

/* True when data starts with the PNG signature / a JPEG SOI marker. */
bool cc_is_png(const uint8_t *data, size_t size);
bool cc_is_jpeg(const uint8_t *data, size_t size);

/* The size a JPEG declares (its frame header, read by libjpeg as the decode reads it), and
 * whether it is progressive; the size a PNG's IHDR declares. False when no header reads. */
bool cc_jpeg_declared(const uint8_t *data, size_t size, long long *w, long long *h,
                      bool *progressive);
bool cc_png_declared(const uint8_t *data, size_t size, long long *w, long long *h);

/* Makes room for w x h x channels bytes in img, the size checked (cc_image_check_size) so no
 * decoder can skip it. For the decoders (image_formats.c's too). */
bool cc_image_reserve(struct cc_image *img, int w, int h, int channels, const char *name,
                      struct cc_error *err);

/* Decodes a JPEG to RGB (channels = 3, also for greyscale, CMYK and YCCK JPEGs: inks
 * converted as (255 - C)(255 - K) / 255, inverted inks with an Adobe marker). A truncated stream
 * (premature end of data) is an error, not a grey-filled image. The declared size is checked
 * (cc_image_check_size) after the header is read, before libjpeg allocates for the image. */
bool cc_decode_jpeg(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                    struct cc_error *err);

/* Decodes a PNG to grey (1 channel, for grey and grey+alpha files) or RGB (3 channels, for
 * RGB, RGBA and palette files). Alpha is dropped, 16-bit samples are scaled to 8 bits. The
 * declared size is checked (cc_image_check_size) from IHDR, before libpng reads further. */
bool cc_decode_png(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                   struct cc_error *err);

#include "image_formats.h" // the table of every format, for the callers that sniff

#endif
