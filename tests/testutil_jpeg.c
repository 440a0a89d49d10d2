/* camclass — the tests' JPEG writer (see testutil_jpeg.h). */
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>

#include "testutil.h"
#include "testutil_jpeg.h"

uint8_t *tu_jpeg_encode(const uint8_t *pixels, int w, int h, int channels, int quality,
                        bool progressive, size_t *size)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    c.err = jpeg_std_error(&jerr); // a libjpeg error exits the test program, with its message
    jpeg_create_compress(&c);
    unsigned char *mem = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&c, &mem, &n);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = channels;
    c.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    if (quality > 0)
        jpeg_set_quality(&c, quality, TRUE);
    if (progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)c.next_scanline * (size_t)w * (size_t)channels);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *size = n;
    if (!CHECKF(mem != NULL && n > 0, "libjpeg wrote no %dx%d JPEG", w, h)) {
        free(mem);
        return NULL;
    }
    return mem;
}
