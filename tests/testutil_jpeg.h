/* camclass — the tests' JPEG writer (libjpeg), apart from testutil.c so that the statically
 * linked in-guest tests (tests/input/meson.build), which have no libjpeg, still link testutil.
 */
#ifndef CC_TESTUTIL_JPEG_H
#define CC_TESTUTIL_JPEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Encodes w x h pixels (channels 1: grey, 3: RGB; rows packed, w * channels bytes each) as a
 * JPEG, progressive or baseline. quality 1..100, or 0 for libjpeg's defaults (quality 75, the
 * standard Huffman tables). Returns the JPEG (malloc'd, the caller frees it) and its size in
 * *size; NULL, with a failed check, when libjpeg gives none. */
uint8_t *tu_jpeg_encode(const uint8_t *pixels, int w, int h, int channels, int quality,
                        bool progressive, size_t *size);

/* A 4-channel JPEG as print files are: w x h CMYK inks (4 bytes a pixel) written as CMYK, or
 * as YCCK (libjpeg converts them), with or without the Adobe marker (its readers take the inks
 * as inverted, 255 = no ink); quality 98. As tu_jpeg_encode otherwise. */
uint8_t *tu_jpeg_encode_cmyk(const uint8_t *inks, int w, int h, bool ycck, bool adobe,
                             size_t *size);

#endif
