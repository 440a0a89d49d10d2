/* camclass — the tests' JPEG writer (see testutil_jpeg.h). */
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>

#include "testutil.h"
#include "testutil_jpeg.h"

/* What one encode is made of: pixels in in_space, written as out_space (4 channels: CMYK inks
 * written as CMYK or YCCK, the Adobe marker as asked). */
struct spec {
    const uint8_t *pixels;
    int w, h, channels, quality;
    J_COLOR_SPACE in_space, out_space;
    bool progressive, adobe;
};

static uint8_t *encode(const struct spec *s, size_t *size)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    c.err = jpeg_std_error(&jerr); // a libjpeg error exits the test program, with its message
    jpeg_create_compress(&c);
    unsigned char *mem = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&c, &mem, &n);
    c.image_width = (JDIMENSION)s->w;
    c.image_height = (JDIMENSION)s->h;
    c.input_components = s->channels;
    c.in_color_space = s->in_space;
    jpeg_set_defaults(&c);
    if (s->channels == 4) { // CMYK written as CMYK or YCCK, with or without Adobe's marker
        jpeg_set_colorspace(&c, s->out_space);
        c.write_Adobe_marker = s->adobe;
    }
    if (s->quality > 0)
        jpeg_set_quality(&c, s->quality, TRUE);
    if (s->progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    size_t row_bytes = (size_t)s->w * (size_t)s->channels;
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(s->pixels + (size_t)c.next_scanline * row_bytes);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *size = n;
    if (!CHECKF(mem != NULL && n > 0, "libjpeg wrote no %dx%d JPEG", s->w, s->h)) {
        free(mem);
        return NULL;
    }
    return mem;
}

uint8_t *tu_jpeg_encode(const uint8_t *pixels, int w, int h, int channels, int quality,
                        bool progressive, size_t *size)
{
    J_COLOR_SPACE space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    struct spec s = {pixels, w, h, channels, quality, space, space, progressive, false};
    return encode(&s, size);
}

uint8_t *tu_jpeg_encode_cmyk(const uint8_t *inks, int w, int h, bool ycck, bool adobe, size_t *size)
{
    struct spec s = {inks, w, h, 4, 98, JCS_CMYK, ycck ? JCS_YCCK : JCS_CMYK, false, adobe};
    return encode(&s, size);
}
