/* camclass — V4L2 camera capture (libv4l2): device negotiation and a capture thread.
 *
 * cc_capture_open opens a camera, chooses the native format, size and rate it can actually
 * deliver closest to what was asked (YUYV, MJPEG, RGB24, BGR24, NV12, GREY; no conversion here —
 * preprocessing reads native formats), maps a small buffer ring and prepares streaming.
 * cc_capture_start runs a thread that copies each dequeued buffer into a frame of a
 * latest-frame-wins slot (frame_slot.h) with the driver's timestamp and sequence number.
 * A camera that disappears mid-stream (ENODEV) is reported and reopened with back-off; if it
 * does not come back, the slot is closed with the error, which the consumer's take returns.
 *
 * Threads: open/start/stop/destroy/info/stats/set_ctrl are called by one controlling thread;
 * the capture thread owns the device and its buffers between start and stop. set_ctrl and
 * stats may be called while streaming (they take the capture's lock).
 */
#ifndef CC_CAPTURE_H
#define CC_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "frame.h"
#include "frame_slot.h"

struct cc_capture;

struct cc_capture_config {
    const char *device; // device path; NULL: "/dev/video0"
    int width, height;  // requested size; 0: 640x480
    double fps;         // requested rate; 0: 30
    int format;         // an enum cc_pixfmt to insist on, or -1 to choose (start from
                        // cc_capture_config_default: 0 is CC_PIX_YUYV)
    int buffers;        // mmap ring size; 0: 4 (2..8)
    int reopen_ms;      // how long to keep reopening a lost camera; 0: 10000, < 0: never
    FILE *log;          // where the capture thread reports a lost/reopened camera; NULL: silent
};

/* A config with the defaults above (format -1: choose). */
struct cc_capture_config cc_capture_config_default(void);

/* What was negotiated. */
struct cc_capture_info {
    char device[256]; // the path as given (a /dev/v4l/by-id/ name is up to ~100 bytes)
    char driver[32], card[64];
    enum cc_pixfmt format;
    uint32_t fourcc;
    int width, height, stride; // stride: bytes per row of the first plane (0 for MJPEG)
    size_t image_bytes;        // the driver's sizeimage: the most bytes one frame can have
    double fps;                // the rate the driver accepted (0: unknown, no S_PARM)
    int buffers;
    char line[512]; // one line for the user: "/dev/video0 (vivid): YUYV 640x360 @ 30 fps ..."
};

/* Opens and negotiates; no thread yet. Errors (one line in err, NULL returned): no such device,
 * permission denied (hint: the 'video' group), not a capture device, busy, no usable format. */
struct cc_capture *cc_capture_open(const struct cc_capture_config *config, struct cc_error *err);

/* Stops the thread if running, unmaps, closes. Accepts NULL. */
void cc_capture_destroy(struct cc_capture *cap);

/* The negotiated format, valid until destroy (the thread never changes it: a reopen that
 * cannot restore the same format ends the stream with an error). */
const struct cc_capture_info *cc_capture_get_info(const struct cc_capture *cap);

/* Starts streaming into slot (not owned; must outlive the capture or stop). The thread puts
 * frames until stop, until the consumer closes the slot, or until a fatal error (then it closes
 * the slot with the message). */
bool cc_capture_start(struct cc_capture *cap, struct cc_frame_slot *slot, struct cc_error *err);

/* Stops the thread and waits for it (STREAMOFF); the slot is left open. Idempotent. */
void cc_capture_stop(struct cc_capture *cap);

struct cc_capture_stats {
    uint64_t frames;         // buffers dequeued and handed to the slot
    uint64_t driver_dropped; // gaps in the driver's sequence numbers
    uint64_t lost;           // times the camera disappeared (ENODEV)
    uint64_t reopened;       // times it was opened again successfully
    uint64_t errors;         // buffers flagged V4L2_BUF_FLAG_ERROR (skipped)
};
struct cc_capture_stats cc_capture_get_stats(struct cc_capture *cap);

/* Sets a control by name, as v4l2-ctl lists them ("test_pattern", "Test Pattern", "brightness");
 * value is a number or, for menu controls, an item name ("Moving Colorbar"); a button control
 * ignores value. Safe while streaming. */
bool cc_capture_set_ctrl(struct cc_capture *cap, const char *name, const char *value,
                         struct cc_error *err);

/* Prints the controls (name, type, range, current value) for --list-controls. */
bool cc_capture_list_ctrls(struct cc_capture *cap, FILE *out, struct cc_error *err);

/* Prints every /dev/video* capture device with its native formats, sizes and frame rates
 * (--list-cameras). Returns false (err says why) when there is none. */
bool cc_capture_list(FILE *out, struct cc_error *err);

/* The enum cc_pixfmt for a V4L2 fourcc, or -1 when we do not handle it natively. */
int cc_capture_pixfmt_from_fourcc(uint32_t fourcc);

#endif
