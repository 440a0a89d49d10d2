/* camclass — the image formats camclass reads, one table told apart by their first bytes: PNG
 * and JPEG (decode.h), WebP (libwebp) and BMP (SDL2's SDL_LoadBMP_RW). Split from decode.c so
 * that programs needing only JPEG and PNG (the static camclass-capture of the VM tests) link
 * neither SDL2 nor libwebp. */
#ifndef CC_IMAGE_FORMATS_H
#define CC_IMAGE_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct cc_image;

/* The formats, as messages name them. */
#define CC_IMAGE_FORMATS "PNG, JPEG, WebP, BMP, GIF or TIFF"

/* The format data's first bytes show ("PNG", "JPEG", "WebP", "BMP"), NULL for none. */
const char *cc_image_format(const uint8_t *data, size_t size);

/* Whether a file name has a suffix of these formats (.png .jpg .jpeg .webp .bmp, any case). */
bool cc_image_has_suffix(const char *filename);

/* Decodes data by the format its first bytes show (WebP to RGB, alpha
 * dropped; BMP to RGB; GIF's first frame and TIFF's first page to RGB; PNG and JPEG by decode.h's),
 * the declared size checked before anything is allocated; false with one line naming `name` when no
 * format matches or the decode fails. */
bool cc_image_decode(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                     struct cc_error *err);

/* The size a PNG (IHDR), WebP, BMP, GIF, TIFF or JPEG (its frame header, read by libjpeg as the
 * decode reads it) declares, and whether the JPEG is progressive (its decoder keeps every DCT
 * coefficient of the image besides the pixels: about three times their memory), without decoding.
 * False when no header reads (a decode then fails there too, before allocating for the image). */
bool cc_image_declared(const uint8_t *data, size_t size, long long *w, long long *h,
                       bool *progressive);

#endif
