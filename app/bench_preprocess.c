/* camclass — preprocessing benchmark: ms per frame for 640×480 (YUYV and the other formats)
 * → 224×224, squash and center_crop 256, each without and with antialias ("+aa": PIL's
 * bilinear), plus 1280×720 YUYV and 640×480 MJPEG (decode included), on the calling thread
 * (one core).
 *
 * Usage: bench_preprocess [iterations]   (default 300). Prints the median and the minimum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <jpeglib.h>

#include "preprocess.h"
#include "clock.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* JPEG of a w × h RGB image (quality 85) in a malloc'd buffer; NULL on failure. */
static unsigned char *encode_jpeg(const uint8_t *rgb, int w, int h, unsigned long *size)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    *size = 0;
    jpeg_mem_dest(&c, &out, size);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 85, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * w * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return out;
}

/* Times `iters` runs of one case; prints median/min. Returns false on a preprocess error. */
static bool bench_case(struct cc_preprocess *pp, const struct cc_frame *f,
                       const struct cc_input_spec *spec, const char *label, int iters, float *out,
                       double *times)
{
    struct cc_error err = {{0}};
    for (int i = 0; i < iters + 10; i++) { // 10 warm-up runs
        double t0 = cc_now_ms();
        if (!cc_preprocess(pp, f, spec, 224, 224, out, &err)) {
            fprintf(stderr, "bench_preprocess: %s\n", err.msg);
            return false;
        }
        if (i >= 10)
            times[i - 10] = cc_now_ms() - t0;
    }
    qsort(times, (size_t)iters, sizeof(double), cmp_double);
    printf("%-6s %4dx%-4d -> 224x224 %-15s median %.3f ms  min %.3f ms\n",
           cc_pixfmt_name(f->format), f->width, f->height, label, times[iters / 2], times[0]);
    return true;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    if (iters < 1)
        iters = 1;
    const int w = 640, h = 480;
    static const enum cc_pixfmt fmts[] = {CC_PIX_YUYV, CC_PIX_NV12, CC_PIX_RGB24, CC_PIX_GREY};
    static const int bpp_num[] = {2, 1, 3, 1}; // stride = w * bpp_num
    size_t cap = (size_t)1280 * 720 * 3;       // room for the 720p case
    uint8_t *data = malloc(cap);
    float *out = malloc(sizeof(float) * 3 * 224 * 224);
    double *times = malloc(sizeof(double) * (size_t)iters);
    struct cc_error err = {{0}};
    struct cc_preprocess *pp = cc_preprocess_create(&err);
    if (!data || !out || !times || !pp) {
        fprintf(stderr, "bench_preprocess: out of memory\n");
        return 1;
    }
    uint32_t x = 12345; // deterministic noise, so that nothing is constant-folded
    for (size_t i = 0; i < cap; i++) {
        x = x * 1664525u + 1013904223u;
        data[i] = (uint8_t)(x >> 24);
    }
    struct cc_input_spec spec = {
        .color = CC_COLOR_RGB, .mean = {0.485f, 0.456f, 0.406f}, .std = {0.229f, 0.224f, 0.225f}};
    bool ok = true;
    for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
        struct cc_frame f = {.format = fmts[k],
                             .width = w,
                             .height = h,
                             .stride = w * bpp_num[k],
                             .data = data,
                             .size = cap,
                             .capacity = cap};
        for (int aa = 0; aa < 2; aa++) {
            spec.antialias = aa;
            spec.resize = CC_RESIZE_SQUASH;
            ok = ok && bench_case(pp, &f, &spec, aa ? "squash+aa" : "squash", iters, out, times);
            spec.resize = CC_RESIZE_CENTER_CROP;
            spec.resize_size = 256;
            ok = ok && bench_case(pp, &f, &spec, aa ? "center_crop+aa" : "center_crop", iters, out,
                                  times);
        }
    }
    spec.antialias = false;
    // Larger camera frames: YUYV 1280x720.
    struct cc_frame hd = {.format = CC_PIX_YUYV,
                          .width = 1280,
                          .height = 720,
                          .stride = 2560,
                          .data = data,
                          .size = cap,
                          .capacity = cap};
    spec.resize = CC_RESIZE_SQUASH;
    ok = ok && bench_case(pp, &hd, &spec, "squash", iters, out, times);
    spec.resize = CC_RESIZE_CENTER_CROP;
    spec.antialias = true;
    ok = ok && bench_case(pp, &hd, &spec, "center_crop+aa", iters, out, times);
    spec.antialias = false;
    // MJPEG: a smooth image (noise would not be a realistic JPEG); includes the decode.
    for (int y = 0; y < h; y++)
        for (int i = 0; i < w * 3; i++)
            data[(size_t)y * w * 3 + i] = (uint8_t)((i / 3) * 255 / w + (i % 3) * 40 + y / 4);
    unsigned long jpg_size;
    unsigned char *jpg = encode_jpeg(data, w, h, &jpg_size);
    struct cc_frame mj = {.format = CC_PIX_MJPEG,
                          .width = w,
                          .height = h,
                          .data = jpg,
                          .size = jpg_size,
                          .capacity = jpg_size};
    spec.resize = CC_RESIZE_SQUASH;
    ok = ok && jpg && bench_case(pp, &mj, &spec, "squash", iters / 10 + 1, out, times);
    free(jpg);
    cc_preprocess_destroy(pp);
    free(times);
    free(out);
    free(data);
    return ok ? 0 : 1;
}
