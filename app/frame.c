/* camclass — frame helpers (see frame.h). */
#include "frame.h"

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
