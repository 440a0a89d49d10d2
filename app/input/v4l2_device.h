/* camclass — the V4L2 device layer under capture.c and capture_ctrl.c; not for other modules.
 *
 * Stateless: an ioctl wrapper, opening and checking a device, fourcc helpers, the modes a device
 * offers and the choice among them. Every ioctl goes through libv4l2 with format conversion off.
 */
#ifndef CC_V4L2_DEVICE_H
#define CC_V4L2_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/videodev2.h>

#include "capture.h"

#define CC_MODE_MAX_RATES 16

/* One format at one size, with the frame rates the driver lists for it. */
struct cc_mode {
    uint32_t fourcc;
    int pixfmt; // enum cc_pixfmt, or -1 for a format we do not handle
    char description[32];
    int width, height;
    double max_fps;                // 0: the driver does not say
    double fps[CC_MODE_MAX_RATES]; // (n_fps) discrete rates, highest first; or {min, max}
    int n_fps;
    bool stepwise_rates; // fps holds {max, min} of a continuous range
    bool stepwise_size;  // the size is the request fitted into a continuous/stepwise range
};

/* ioctl through libv4l2, retrying EINTR. */
int cc_v4l2_ioctl(int fd, unsigned long request, void *arg);

/* Opens path (non-blocking), QUERYCAP, checks it is a streaming capture device when
 * need_capture, hands it to libv4l2 with conversion off. Returns the fd or -1 (err filled). */
int cc_v4l2_open(const char *path, struct v4l2_capability *caps, bool need_capture,
                 struct cc_error *err);

/* Enumerates formats x sizes x rates into a malloc'd array. Stepwise size ranges give one mode
 * at the request (want_w x want_h) fitted into the range. all: also formats we do not handle. */
bool cc_v4l2_enum_modes(int fd, int want_w, int want_h, bool all, struct cc_mode **modes, int *n,
                        struct cc_error *err);

/* The best mode for the request (config's size, fps, format; defaults already applied): the
 * closest size (exact, else the smallest covering one, else the largest), then the one reaching
 * the rate (or coming closest), then by format preference YUYV, NV12, BGR3, RGB3, MJPG, GREY.
 * Returns an index into modes, or -1 when none is usable. */
int cc_capture_choose_mode(const struct cc_mode *modes, int n, const struct cc_capture_config *c);

void cc_fourcc_str(uint32_t fourcc, char out[5]);

#endif
