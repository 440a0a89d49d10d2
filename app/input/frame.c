/* camclass — frame helpers (see frame.h). */
#include "frame.h"

#include <stdlib.h>
#include <string.h>

// Indexed by enum cc_pixfmt; the names are the V4L2 fourcc codes as v4l2-ctl prints them.
static const char *const pixfmt_names[CC_PIX_COUNT] = {
    [CC_PIX_YUYV] = "YUYV",
    [CC_PIX_MJPEG] = "MJPG",
    [CC_PIX_RGB24] = "RGB3",
    [CC_PIX_BGR24] = "BGR3",
    [CC_PIX_NV12] = "NV12",
    [CC_PIX_GREY] = "GREY",
};

const char *cc_pixfmt_name(enum cc_pixfmt f)
{
    if ((int)f < 0 || f >= CC_PIX_COUNT)
        return "unknown";
    return pixfmt_names[f];
}

bool cc_frame_check(const struct cc_frame *f, const char *who, struct cc_error *err)
{
    size_t row_bytes;
    switch (f->format) {
    case CC_PIX_RGB24:
    case CC_PIX_BGR24:
        row_bytes = (size_t)f->width * 3;
        break;
    case CC_PIX_GREY:
        row_bytes = (size_t)f->width;
        break;
    case CC_PIX_YUYV:
        row_bytes = (size_t)(f->width + 1) / 2 * 4; // whole Y0 U Y1 V groups
        break;
    case CC_PIX_NV12:
        row_bytes = (size_t)(f->width + 1) / 2 * 2; // Y row; the UV row is as long
        break;
    default:
        return cc_error_set(err, "%s: frame %llu has unknown pixel format %d", who,
                            (unsigned long long)f->sequence, (int)f->format);
    }
    if (f->width <= 0 || f->height <= 0 || f->stride <= 0 || !f->data ||
        (size_t)f->stride < row_bytes)
        return cc_error_set(err,
                            "%s: frame %llu (%s %dx%d) has stride %d, need at least %zu "
                            "bytes per row; the source set a wrong frame layout",
                            who, (unsigned long long)f->sequence, cc_pixfmt_name(f->format),
                            f->width, f->height, f->stride, row_bytes);
    size_t stride = (size_t)f->stride, h = (size_t)f->height;
    size_t need = (h - 1) * stride + row_bytes;
    if (f->format == CC_PIX_NV12)
        need = h * stride + ((h + 1) / 2 - 1) * stride + row_bytes;
    if (f->size < need)
        return cc_error_set(err,
                            "%s: frame %llu (%s %dx%d, stride %d) has %zu bytes, needs "
                            "%zu; the frame is truncated",
                            who, (unsigned long long)f->sequence, cc_pixfmt_name(f->format),
                            f->width, f->height, f->stride, f->size, need);
    return true;
}

bool cc_frame_copy(struct cc_frame *dst, const struct cc_frame *f)
{
    if (dst->capacity < f->size) {
        uint8_t *d = realloc(dst->data, f->size);
        if (!d)
            return false;
        dst->data = d, dst->capacity = f->size;
    }
    uint8_t *data = dst->data;
    size_t capacity = dst->capacity;
    *dst = *f;
    dst->data = data, dst->capacity = capacity;
    if (f->size)
        memcpy(dst->data, f->data, f->size);
    return true;
}
