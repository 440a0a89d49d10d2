/* camclass — image decoding from memory: JPEG (libjpeg-turbo), PNG (libpng), WebP (libwebp),
 * BMP (SDL2's SDL_LoadBMP_RW: already linked for the window, and it reads every BMP variant —
 * 1 to 32 bits, RLE, bit fields — without a parser of ours); one table (see decode.h). */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#include "decode.h"

void cc_image_finish(struct cc_image *img)
{
    if (!img)
        return;
    free(img->pixels);
    memset(img, 0, sizeof(*img));
}

bool cc_image_check_size(long long w, long long h, const char *name, struct cc_error *err)
{
    if (w <= 0 || h <= 0)
        return cc_error_set(err, "%s: the image has no pixels (%lldx%lld)", name, w, h);
    if (w > CC_IMAGE_MAX_SIDE || h > CC_IMAGE_MAX_SIDE || w * h > CC_IMAGE_MAX_PIXELS)
        return cc_error_set(err,
                            "%s: %lldx%lld pixels is more than camclass decodes (%d M pixels, "
                            "%d on a side); scale it down first",
                            name, w, h, CC_IMAGE_MAX_PIXELS / 1000000, CC_IMAGE_MAX_SIDE);
    return true;
}

bool cc_is_png(const uint8_t *data, size_t size)
{
    return size >= 8 && png_sig_cmp(data, 0, 8) == 0;
}

bool cc_is_jpeg(const uint8_t *data, size_t size)
{
    return size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff;
}

bool cc_image_reserve(struct cc_image *img, int w, int h, int channels, const char *name,
                      struct cc_error *err)
{
    if (!cc_image_check_size(w, h, name, err))
        return false;
    size_t need = (size_t)w * h * channels;
    if (need > img->capacity) {
        uint8_t *p = realloc(img->pixels, need);
        if (!p)
            return cc_error_set(err, "%s: out of memory for a %dx%d image", name, w, h);
        img->pixels = p;
        img->capacity = need;
    }
    img->width = w;
    img->height = h;
    img->channels = channels;
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* JPEG                                                                                     */
/* ---------------------------------------------------------------------------------------- */

// libjpeg's error manager extended with our escape: error_exit must not return (its default
// calls exit()), so it longjmps back into cc_decode_jpeg with the message saved.
struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jmp;
    char msg[JMSG_LENGTH_MAX];
};

static void jpeg_error_exit(j_common_ptr cinfo)
{
    struct jpeg_err *e = (struct jpeg_err *)cinfo->err;
    cinfo->err->format_message(cinfo, e->msg);
    longjmp(e->jmp, 1);
}

/* Warnings are silent, except a premature end of data: libjpeg would fill the rest of the
 * image with grey and carry on, which hides a truncated file. */
static void jpeg_emit_message(j_common_ptr cinfo, int level)
{
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF)
        jpeg_error_exit(cinfo);
}

/* One row of n CMYK pixels to RGB: each channel is the light its ink and the black let
 * through, (255 - C)(255 - K) / 255. Files with an Adobe marker (Photoshop's, PIL's) store the
 * inks inverted (255 = no ink), so there it is C K / 255. */
static void cmyk_to_rgb(const uint8_t *in, uint8_t *out, int n, bool inverted)
{
    for (int i = 0; i < n; i++, in += 4, out += 3) {
        int k = inverted ? in[3] : 255 - in[3];
        for (int c = 0; c < 3; c++) {
            int v = inverted ? in[c] : 255 - in[c];
            out[c] = (uint8_t)((v * k + 127) / 255);
        }
    }
}

bool cc_decode_jpeg(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                    struct cc_error *err)
{
    struct jpeg_decompress_struct cinfo;
    struct jpeg_err jerr;
    cinfo.err = jpeg_std_error(&jerr.pub);
    jerr.pub.error_exit = jpeg_error_exit;
    jerr.pub.emit_message = jpeg_emit_message;
    if (setjmp(jerr.jmp)) {
        // Only cinfo (not modified since setjmp in a register-held way: it lives in memory)
        // and img (caller memory) are used here.
        jpeg_destroy_decompress(&cinfo);
        return cc_error_set(err, "%s: corrupt or truncated JPEG (%s); replace the file or frame",
                            name, jerr.msg);
    }
    jpeg_create_decompress(&cinfo);
    if (size == 0 || size > (size_t)0xffffffffu) {
        jpeg_destroy_decompress(&cinfo);
        return cc_error_set(err, "%s: JPEG data of %zu bytes is empty or too large", name, size);
    }
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    // Before jpeg_start_decompress, which allocates for the declared size (a progressive
    // file's coefficients for the whole image).
    if (!cc_image_check_size(cinfo.image_width, cinfo.image_height, name, err)) {
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    // libjpeg converts YCbCr and grey to RGB, but CMYK and YCCK (print files, Photoshop)
    // only to CMYK: those are converted here, a row at a time.
    bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&cinfo);
    if (!cc_image_reserve(img, (int)cinfo.output_width, (int)cinfo.output_height, 3, name, err)) {
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    size_t row_bytes = (size_t)img->width * 3;
    // The CMYK row, in libjpeg's pool for this image (freed with cinfo, also by longjmp).
    JSAMPARRAY inks = cmyk ? (*cinfo.mem->alloc_sarray)((j_common_ptr)&cinfo, JPOOL_IMAGE,
                                                        cinfo.output_width * 4, 1)
                           : NULL;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = img->pixels + cinfo.output_scanline * row_bytes;
        jpeg_read_scanlines(&cinfo, cmyk ? inks : &row, 1);
        if (cmyk)
            cmyk_to_rgb(inks[0], row, img->width, cinfo.saw_Adobe_marker);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return true;
}

bool cc_jpeg_declared(const uint8_t *data, size_t size, long long *w, long long *h,
                      bool *progressive)
{
    struct jpeg_decompress_struct cinfo;
    struct jpeg_err jerr;
    cinfo.err = jpeg_std_error(&jerr.pub);
    jerr.pub.error_exit = jpeg_error_exit;
    jerr.pub.emit_message = jpeg_emit_message;
    if (setjmp(jerr.jmp)) {
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    jpeg_create_decompress(&cinfo);
    bool ok = size > 0 && size <= (size_t)0xffffffffu;
    if (ok) {
        jpeg_mem_src(&cinfo, data, (unsigned long)size);
        jpeg_read_header(&cinfo, TRUE);
        *w = cinfo.image_width, *h = cinfo.image_height;
        *progressive = cinfo.progressive_mode;
    }
    jpeg_destroy_decompress(&cinfo);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* PNG                                                                                      */
/* ---------------------------------------------------------------------------------------- */

// Reader state for libpng's callbacks: the memory being read and the error text.
struct png_ctx {
    const uint8_t *data;
    size_t size, pos;
    char msg[256];
};

static void png_on_error(png_structp png, png_const_charp msg)
{
    struct png_ctx *ctx = png_get_error_ptr(png);
    snprintf(ctx->msg, sizeof(ctx->msg), "%s", msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg; // warnings (e.g. an unknown chunk) do not stop decoding and are not printed
}

static void png_read_mem(png_structp png, png_bytep out, png_size_t n)
{
    struct png_ctx *ctx = png_get_io_ptr(png);
    if (n > ctx->size - ctx->pos)
        png_error(png, "unexpected end of file");
    memcpy(out, ctx->data + ctx->pos, n);
    ctx->pos += n;
}

static long long be32(const uint8_t *p)
{
    return (long long)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

bool cc_decode_png(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                   struct cc_error *err)
{
    // The size IHDR declares, checked before libpng reads on: IHDR is the first chunk, at a
    // fixed place (signature 8, length 4, "IHDR" 4, width 4, height 4; big endian). Without
    // it libpng reports the file as corrupt.
    if (size >= 24 && memcmp(data + 12, "IHDR", 4) == 0 &&
        !cc_image_check_size(be32(data + 16), be32(data + 20), name, err))
        return false;
    struct png_ctx ctx = {.data = data, .size = size};
    png_structp png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return cc_error_set(err, "%s: out of memory starting libpng", name);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return cc_error_set(err, "%s: corrupt or truncated PNG (%s); replace the file", name,
                            ctx.msg);
    }
    png_set_read_fn(png, &ctx, png_read_mem);
    png_read_info(png, info);
    png_set_expand(png);   // palette → RGB, 1/2/4-bit grey → 8-bit, tRNS → alpha
    png_set_scale_16(png); // 16-bit → 8-bit, rounded
    png_set_strip_alpha(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    int w = (int)png_get_image_width(png, info), h = (int)png_get_image_height(png, info);
    if (channels != 1 && channels != 3) // cannot happen after the transforms above
        png_error(png, "unexpected channel count after conversion");
    if (!cc_image_reserve(img, w, h, channels, name, err)) {
        png_destroy_read_struct(&png, &info, NULL);
        return false;
    }
    size_t row_bytes = (size_t)w * channels;
    for (int p = 0; p < passes; p++)
        for (int y = 0; y < h; y++)
            png_read_row(png, img->pixels + y * row_bytes, NULL);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    return true;
}

bool cc_png_declared(const uint8_t *data, size_t size, long long *w, long long *h)
{
    if (!cc_is_png(data, size) || size < 24 || memcmp(data + 12, "IHDR", 4) != 0)
        return false;
    *w = be32(data + 16), *h = be32(data + 20);
    return true;
}
