/* camclass — packed RGB pixels to one JPEG file in memory, with libjpeg-turbo: the one JPEG
 * writer of the project (GET /stream's pictures, mjpeg.c; the collected samples,
 * sample_store.c).
 *
 * Threads: none kept; any thread may encode at once (each call has its own libjpeg state).
 * Ownership: the returned bytes are malloc'd and the caller's.
 */
#ifndef CC_JPEG_ENCODE_H
#define CC_JPEG_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* rgb: h rows of w pixels (R G B), stride bytes apart (≥ 3w). Returns the JPEG (baseline,
 * 4:2:0, quality 1..100) and its size in *size, or NULL when out of memory (libjpeg's only
 * failure when writing to memory) or the size is not 1..65500 on a side. */
uint8_t *cc_jpeg_encode(const uint8_t *rgb, int w, int h, int stride, int quality, size_t *size);

#endif
