/* camclass — GIF and TIFF pictures through FFmpeg's libavcodec (its gif and tiff decoders, the
 * ones its image2 demuxer uses), for the image format table (image_formats.c): the first frame
 * of an animated GIF, the first page of a TIFF, as RGB.
 *
 * The size a file declares is read here from its header (GIF's logical screen, TIFF's first
 * image directory) and checked against the decode limits (decode.h) before libavcodec sees a
 * byte; the frame it decodes is checked again. Threads: any; nothing is shared between calls.
 */
#ifndef CC_DECODE_AV_H
#define CC_DECODE_AV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "error.h"

bool cc_is_gif(const uint8_t *data, size_t size);
bool cc_is_tiff(const uint8_t *data, size_t size);

/* The size the header declares: GIF's logical screen, the first TIFF directory's ImageWidth
 * and ImageLength. False when it does not read (not that format, a directory outside it). */
bool cc_gif_declared(const uint8_t *data, size_t size, long long *w, long long *h);
bool cc_tiff_declared(const uint8_t *data, size_t size, long long *w, long long *h);

/* Decodes a GIF (its first frame) or a TIFF (its first page) into img as RGB. False with err
 * (one line naming the file, the problem and what to do). */
bool cc_decode_gif(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                   struct cc_error *err);
bool cc_decode_tiff(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                    struct cc_error *err);

#endif
