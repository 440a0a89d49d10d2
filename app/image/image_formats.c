/* camclass — the image formats camclass reads, as one table (see image_formats.h): PNG and JPEG
 * (decode.c), WebP (libwebp), BMP (SDL2's SDL_LoadBMP_RW), GIF and TIFF (libavcodec:
 * decode_av.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <SDL.h>
#include <webp/decode.h>

#include "decode.h"
#include "decode_av.h"
#include "image_formats.h"

/* ---------------------------------------------------------------------------------------- */
/* WebP                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static bool is_webp(const uint8_t *data, size_t size)
{
    return size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0;
}

static bool webp_declared(const uint8_t *data, size_t size, long long *w, long long *h)
{
    int iw, ih;
    if (!WebPGetInfo(data, size, &iw, &ih))
        return false;
    *w = iw, *h = ih;
    return true;
}

static bool decode_webp(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                        struct cc_error *err)
{
    long long w, h;
    if (!webp_declared(data, size, &w, &h))
        return cc_error_set(err,
                            "%s: corrupt or truncated WebP (no frame header); replace the "
                            "file",
                            name);
    if (!cc_image_reserve(img, (int)w, (int)h, 3, name, err))
        return false;
    if (!WebPDecodeRGBInto(data, size, img->pixels, img->capacity, (int)w * 3))
        return cc_error_set(err,
                            "%s: corrupt, truncated or animated WebP (libwebp's WebPDecode "
                            "failed); replace the file, or convert an animation's frame to PNG",
                            name);
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* BMP (SDL2)                                                                               */
/* ---------------------------------------------------------------------------------------- */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* "BM", then after the 14-byte file header a DIB header of a size Windows and OS/2 write. */
static bool is_bmp(const uint8_t *data, size_t size)
{
    if (size < 26 || data[0] != 'B' || data[1] != 'M')
        return false;
    uint32_t dib = le32(data + 14);
    return dib == 12 || dib == 16 || dib == 40 || dib == 52 || dib == 56 || dib == 64 ||
           dib == 108 || dib == 124;
}

/* The size the DIB header declares (OS/2's 12-byte one: 16-bit; the others 32-bit, a negative
 * height for top-down rows). */
static void bmp_declared(const uint8_t *data, long long *w, long long *h)
{
    if (le32(data + 14) == 12) {
        *w = data[18] | data[19] << 8, *h = data[20] | data[21] << 8;
        return;
    }
    *w = (int32_t)le32(data + 18);
    long long hh = (int32_t)le32(data + 22);
    *h = hh < 0 ? -hh : hh;
}

static bool decode_bmp(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                       struct cc_error *err)
{
    long long w, h;
    bmp_declared(data, &w, &h);
    if (!cc_image_check_size(w, h, name, err) || size > (size_t)INT32_MAX)
        return false;
    // SDL's error text is per thread (SDL_GetError); no SDL_Init is needed for surfaces.
    SDL_Surface *s = SDL_LoadBMP_RW(SDL_RWFromConstMem(data, (int)size), 1);
    SDL_Surface *rgb = s ? SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_RGB24, 0) : NULL;
    SDL_FreeSurface(s);
    if (!rgb)
        return cc_error_set(err,
                            "%s: corrupt or truncated BMP (SDL_LoadBMP_RW: %s); replace the "
                            "file",
                            name, SDL_GetError());
    bool ok = cc_image_reserve(img, rgb->w, rgb->h, 3, name, err);
    for (int y = 0; ok && y < rgb->h; y++)
        memcpy(img->pixels + (size_t)y * rgb->w * 3, (const uint8_t *)rgb->pixels + y * rgb->pitch,
               (size_t)rgb->w * 3);
    SDL_FreeSurface(rgb);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* The table                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* One row per format: its name, how its first bytes look, its file suffixes, its decoder. */
static const struct format {
    const char *name;
    bool (*is)(const uint8_t *data, size_t size);
    const char *suffixes[3];
    bool (*decode)(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                   struct cc_error *err);
} formats[] = {
    {"PNG", cc_is_png, {".png"}, cc_decode_png},
    {"JPEG", cc_is_jpeg, {".jpg", ".jpeg"}, cc_decode_jpeg},
    {"WebP", is_webp, {".webp"}, decode_webp},
    {"BMP", is_bmp, {".bmp"}, decode_bmp},
    {"GIF", cc_is_gif, {".gif"}, cc_decode_gif},
    {"TIFF", cc_is_tiff, {".tif", ".tiff"}, cc_decode_tiff},
};

static const struct format *format_of(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (formats[i].is(data, size))
            return &formats[i];
    return NULL;
}

const char *cc_image_format(const uint8_t *data, size_t size)
{
    const struct format *f = format_of(data, size);
    return f ? f->name : NULL;
}

bool cc_image_has_suffix(const char *filename)
{
    const char *dot = strrchr(filename, '.');
    for (size_t i = 0; dot && i < sizeof(formats) / sizeof(formats[0]); i++)
        for (int k = 0; k < 3 && formats[i].suffixes[k]; k++)
            if (strcasecmp(dot, formats[i].suffixes[k]) == 0)
                return true;
    return false;
}

bool cc_image_decode(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                     struct cc_error *err)
{
    const struct format *f = format_of(data, size);
    if (!f)
        return cc_error_set(err, "%s: not an image camclass decodes (%s, by its first bytes)", name,
                            CC_IMAGE_FORMATS);
    return f->decode(data, size, name, img, err);
}

bool cc_image_declared(const uint8_t *data, size_t size, long long *w, long long *h,
                       bool *progressive)
{
    *progressive = false;
    if (cc_is_jpeg(data, size))
        return cc_jpeg_declared(data, size, w, h, progressive);
    if (is_webp(data, size))
        return webp_declared(data, size, w, h);
    if (is_bmp(data, size)) {
        bmp_declared(data, w, h);
        return true;
    }
    if (cc_is_gif(data, size))
        return cc_gif_declared(data, size, w, h);
    if (cc_is_tiff(data, size))
        return cc_tiff_declared(data, size, w, h);
    return cc_png_declared(data, size, w, h);
}
