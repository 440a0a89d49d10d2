/* camclass — one video frame as it travels from a source (camera or file) to preprocessing.
 *
 * Pixel data is in the source's native format; preprocess.c converts, resizes and normalizes
 * in one pass. Ownership: a frame and its data buffer belong to whoever holds the pointer;
 * the latest-frame-wins slot (frame_slot.h) documents how it changes hands.
 */
#ifndef CC_FRAME_H
#define CC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum cc_pixfmt {
    CC_PIX_YUYV,  // packed 4:2:2 Y0 U Y1 V, BT.601 limited range
    CC_PIX_MJPEG, // one JPEG image per frame (size = compressed bytes)
    CC_PIX_RGB24, // packed R G B
    CC_PIX_BGR24, // packed B G R
    CC_PIX_NV12,  // Y plane (height rows of stride bytes), then interleaved UV plane at half
                  // height, same stride; BT.601 limited range
    CC_PIX_GREY,  // 8-bit luma, full range
    CC_PIX_COUNT
};

struct cc_frame {
    enum cc_pixfmt format;
    int width, height; // pixels
    int stride;        // bytes per row of the first plane (0 for MJPEG)
    uint8_t *data;     // (size) bytes, owned by the frame
    size_t size;       // bytes used
    size_t capacity;   // bytes allocated in data
    uint64_t sequence;    // driver sequence number (or file frame index)
    int64_t timestamp_ns; // capture time, CLOCK_MONOTONIC (driver timestamp for V4L2)
};

/* Name of a format for messages and --list-cameras ("YUYV", "MJPG", "RGB3", ...). */
const char *cc_pixfmt_name(enum cc_pixfmt f);

/* Checks that a raw (non-MJPEG) frame's buffer holds every pixel its format, size and stride
 * promise: stride >= the bytes of one row, size >= the last byte read (NV12: both planes).
 * who ("preprocess", "overlay") starts the message. Returns false with err set otherwise. */
bool cc_frame_check(const struct cc_frame *f, const char *who, struct cc_error *err);

/* Copies frame f into dst: its fields, and its bytes into dst's own buffer (grown with realloc
 * when too small; dst owns it). False when out of memory (dst is unchanged). */
bool cc_frame_copy(struct cc_frame *dst, const struct cc_frame *f);

#endif
