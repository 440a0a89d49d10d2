/* camclass fuzz target — preprocessing (app/image/preprocess.c) of frames of hostile geometry.
 *
 * The first 12 bytes choose the frame and the model's input spec, the rest are the pixels
 * (copied into a buffer of exactly that size, so that ASan sees any read past it):
 *   [0]      pixel format (0..7: the six formats of frame.h and two that are none)
 *   [1..2]   width  - 4 (little-endian, modulo 520: -4 .. 515)
 *   [3..4]   height - 4 (as width)
 *   [5]      stride: the format's row bytes + (int8)[5]; when [6] & 0x80, (int16)[5..6] instead
 *   [7], [8] output tensor width, height (1 .. 64)
 *   [9]      bit 0 center_crop (else squash), bit 1 antialias, bit 2 BGR, bit 3 a region of
 *            interest in pixels ([1] % 17, [3] % 13, [7] + 1, [8] + 1: often past the frame),
 *            bit 4 one in fractions (([10] % 32) / 64, ([11] % 32) / 64, 1/3, 1/2)
 *   [10..11] center_crop size (modulo 600)
 * Each frame is preprocessed twice on one context, the second time to the transposed tensor
 * size, so that the geometry cache is rebuilt. Every output value must be finite.
 *
 * MJPEG frames whose JPEG declares more than 1 M pixels are skipped: decoding them is the image
 * target's (up to the 40 M pixel limit), and here one costs seconds under the instrumentation
 * (a 209-byte JPEG declaring 10825x505 took 2.6 s) and, once in the corpus, drags the run from
 * thousands of executions a second to about 200. Smaller frames take the same code paths. */
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "frame.h"
#include "preprocess.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEADER 12

static int row_bytes(int format, int w)
{
    switch (format) {
    case CC_PIX_RGB24:
    case CC_PIX_BGR24:
        return w * 3;
    case CC_PIX_YUYV:
        return (w + 1) / 2 * 4;
    case CC_PIX_NV12:
        return (w + 1) / 2 * 2;
    default:
        return w;
    }
}

static void run(struct cc_preprocess *pp, const struct cc_frame *frame,
                const struct cc_input_spec *spec, int out_w, int out_h)
{
    size_t n = (size_t)3 * out_w * out_h;
    float *out = malloc(n * sizeof(float));
    if (!out)
        abort();
    struct cc_error err = {{0}};
    bool ok = cc_preprocess(pp, frame, spec, out_w, out_h, out, &err);
    if (ok == !!err.msg[0])
        __builtin_trap();
    for (size_t i = 0; ok && i < n; i++)
        if (!isfinite(out[i]))
            __builtin_trap();
    free(out);
}

struct jpeg_probe {
    struct jpeg_error_mgr mgr;
    jmp_buf fail;
};

static void probe_fail(j_common_ptr c)
{
    longjmp(((struct jpeg_probe *)c->err)->fail, 1);
}

static void probe_quiet(j_common_ptr c, int level)
{
    (void)c, (void)level;
}

/* The pixels a JPEG declares, read by libjpeg as the decoder will (0: no header). */
static uint64_t jpeg_pixels(const uint8_t *d, size_t n)
{
    struct jpeg_decompress_struct c;
    struct jpeg_probe probe;
    c.err = jpeg_std_error(&probe.mgr);
    probe.mgr.error_exit = probe_fail;
    probe.mgr.emit_message = probe_quiet;
    volatile uint64_t pixels = 0;
    jpeg_create_decompress(&c);
    if (!setjmp(probe.fail)) {
        jpeg_mem_src(&c, d, (unsigned long)n);
        if (jpeg_read_header(&c, TRUE) == JPEG_HEADER_OK)
            pixels = (uint64_t)c.image_width * c.image_height;
    }
    jpeg_destroy_decompress(&c);
    return pixels;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER)
        return 0;
    struct cc_frame frame = {
        .format = (enum cc_pixfmt)(data[0] % 8),
        .width = (data[1] | data[2] << 8) % 520 - 4,
        .height = (data[3] | data[4] << 8) % 520 - 4,
        .sequence = 7,
    };
    frame.stride = row_bytes(frame.format, frame.width) + (int8_t)data[5];
    if (data[6] & 0x80)
        frame.stride = (int16_t)(data[5] | data[6] << 8);
    if (frame.format == CC_PIX_MJPEG) {
        frame.stride = 0;
        if (jpeg_pixels(data + HEADER, size - HEADER) > (1u << 20))
            return 0;
    }
    int out_w = data[7] % 64 + 1, out_h = data[8] % 64 + 1;
    struct cc_input_spec spec = {
        .color = data[9] & 4 ? CC_COLOR_BGR : CC_COLOR_RGB,
        .mean = {0.485f, 0.456f, 0.406f},
        .std = {0.229f, 0.224f, 0.225f},
        .resize = data[9] & 1 ? CC_RESIZE_CENTER_CROP : CC_RESIZE_SQUASH,
        .resize_size = (data[10] | data[11] << 8) % 600,
        .antialias = data[9] & 2,
    };
    if (data[9] & 8)
        spec.roi =
            (struct cc_roi){CC_ROI_PIXELS, data[1] % 17, data[3] % 13, data[7] + 1, data[8] + 1};
    else if (data[9] & 16)
        spec.roi = (struct cc_roi){CC_ROI_FRACTION, (data[10] % 32) / 64.0, (data[11] % 32) / 64.0,
                                   1 / 3.0, 0.5};
    frame.size = size - HEADER;
    frame.data = malloc(frame.size ? frame.size : 1);
    if (!frame.data)
        abort();
    memcpy(frame.data, data + HEADER, frame.size);
    frame.capacity = frame.size;

    struct cc_error err = {{0}};
    struct cc_preprocess *pp = cc_preprocess_create(&err);
    if (!pp)
        abort();
    run(pp, &frame, &spec, out_w, out_h);
    run(pp, &frame, &spec, out_h, out_w);
    cc_preprocess_destroy(pp);
    free(frame.data);
    return 0;
}
