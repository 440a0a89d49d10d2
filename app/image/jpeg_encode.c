/* camclass — RGB to JPEG in memory (see jpeg_encode.h). */
#include "jpeg_encode.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>

struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jmp;
};

static void on_jpeg_error(j_common_ptr cinfo)
{
    longjmp(((struct jpeg_err *)cinfo->err)->jmp, 1);
}

uint8_t *cc_jpeg_encode(const uint8_t *rgb, int w, int h, int stride, int quality, size_t *size)
{
    if (w <= 0 || h <= 0 || w > JPEG_MAX_DIMENSION || h > JPEG_MAX_DIMENSION || stride < 3 * w)
        return NULL;
    struct jpeg_compress_struct c;
    struct jpeg_err e;
    unsigned char *buf = NULL;
    unsigned long n = 0;
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = on_jpeg_error;
    if (setjmp(e.jmp)) {
        jpeg_destroy_compress(&c);
        free(buf);
        return NULL;
    }
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &n);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * (size_t)stride);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *size = n;
    return buf;
}
