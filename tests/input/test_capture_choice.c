/* camclass — the capture's mode choice on made-up cameras (suite 'unit'; no device needed).
 * The vivid tests in the VM cannot cover this: vivid has no MJPEG and every format at every size.
 * Also: a camera path as long as /dev/v4l/by-id/ names are is opened as given, not cut short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "v4l2_device.h"
#include "testutil.h"

#define MODE(fcc, pix, w, h, rate)                                                                 \
    {                                                                                              \
        .fourcc = (fcc), .pixfmt = (pix), .width = (w), .height = (h), .max_fps = (rate),          \
        .fps = {(rate)}, .n_fps = 1                                                                \
    }

// A typical UVC webcam: YUYV is USB-bandwidth bound at large sizes, MJPEG gives 30 fps anywhere.
static const struct cc_mode webcam[] = {
    MODE(V4L2_PIX_FMT_YUYV, CC_PIX_YUYV, 640, 480, 30),
    MODE(V4L2_PIX_FMT_YUYV, CC_PIX_YUYV, 1280, 720, 10),
    MODE(V4L2_PIX_FMT_YUYV, CC_PIX_YUYV, 1920, 1080, 5),
    MODE(V4L2_PIX_FMT_MJPEG, CC_PIX_MJPEG, 640, 480, 30),
    MODE(V4L2_PIX_FMT_MJPEG, CC_PIX_MJPEG, 1280, 720, 30),
    MODE(V4L2_PIX_FMT_MJPEG, CC_PIX_MJPEG, 1920, 1080, 30),
    MODE(V4L2_PIX_FMT_H264, -1, 1920, 1080, 60), // not handled: never chosen
};
#define N_WEBCAM ((int)(sizeof(webcam) / sizeof(webcam[0])))

static const struct cc_mode *choose(const struct cc_mode *modes, int n, int fmt, int w, int h,
                                    double fps)
{
    struct cc_capture_config c = cc_capture_config_default();
    c.format = fmt;
    c.width = w;
    c.height = h;
    c.fps = fps;
    int i = cc_capture_choose_mode(modes, n, &c);
    return i >= 0 ? &modes[i] : NULL;
}

#define EXPECT(m, pix, w, h)                                                                       \
    CHECKF((m) && (m)->pixfmt == (pix) && (m)->width == (w) && (m)->height == (h),                 \
           "chose %s %dx%d, expected %s %dx%d", (m) ? cc_pixfmt_name((m)->pixfmt) : "nothing",     \
           (m) ? (m)->width : 0, (m) ? (m)->height : 0, cc_pixfmt_name(pix), (w), (h))

/* cc_capture_open on a path of 100 bytes (a /dev/v4l/by-id/usb-...-video-index0 name is 64 to
 * 100): a regular file there is refused as no camera, and the error names the whole path; it
 * was cut to 63 bytes, so the path opened was another one. 300 bytes is refused as too long. */
static void long_paths(void)
{
    char dir[] = "/tmp/cc-capture-XXXXXX";
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    char path[400];
    int n = snprintf(path, sizeof(path), "%s/", dir);
    while (n < 100)
        path[n++] = 'x';
    path[n] = '\0';
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    struct cc_capture_config c = cc_capture_config_default();
    c.device = path;
    struct cc_error err = {""};
    struct cc_capture *cap = cc_capture_open(&c, &err);
    CHECKF(!cap && strstr(err.msg, path), "a 100-byte path, a regular file: \"%s\"", err.msg);
    cc_capture_destroy(cap);
    unlink(path);
    while (n < 300)
        path[n++] = 'x';
    path[n] = '\0';
    err.msg[0] = '\0';
    cap = cc_capture_open(&c, &err);
    CHECKF(!cap && strstr(err.msg, "is longer than 255 bytes"), "a 300-byte path: \"%s\"", err.msg);
    cc_capture_destroy(cap);
    rmdir(dir);
}

int main(void)
{
    long_paths();
    // Small sizes at 30: uncompressed YUYV is preferred.
    EXPECT(choose(webcam, N_WEBCAM, -1, 640, 480, 30), CC_PIX_YUYV, 640, 480);
    // 720p at 30: only MJPEG gets there.
    EXPECT(choose(webcam, N_WEBCAM, -1, 1280, 720, 30), CC_PIX_MJPEG, 1280, 720);
    // 720p at 10: YUYV does it, and is preferred.
    EXPECT(choose(webcam, N_WEBCAM, -1, 1280, 720, 10), CC_PIX_YUYV, 1280, 720);
    // 1080p at 30 with YUYV forced: the size wins over the rate (5 fps).
    EXPECT(choose(webcam, N_WEBCAM, CC_PIX_YUYV, 1920, 1080, 30), CC_PIX_YUYV, 1920, 1080);
    // An unlisted size: the smallest that covers it.
    EXPECT(choose(webcam, N_WEBCAM, -1, 800, 600, 30), CC_PIX_MJPEG, 1280, 720);
    // Larger than anything: the largest there is.
    EXPECT(choose(webcam, N_WEBCAM, -1, 4000, 3000, 30), CC_PIX_MJPEG, 1920, 1080);
    // A format the camera lacks: nothing.
    CHECK(choose(webcam, N_WEBCAM, CC_PIX_NV12, 640, 480, 30) == NULL);
    // Only unhandled formats: nothing.
    CHECK(choose(webcam + 6, 1, -1, 1920, 1080, 30) == NULL);

    // Unknown rates (driver lists none) count as reaching the request; then format order.
    static const struct cc_mode norate[] = {
        {.fourcc = V4L2_PIX_FMT_GREY, .pixfmt = CC_PIX_GREY, .width = 640, .height = 480},
        {.fourcc = V4L2_PIX_FMT_RGB24, .pixfmt = CC_PIX_RGB24, .width = 640, .height = 480},
        {.fourcc = V4L2_PIX_FMT_BGR24, .pixfmt = CC_PIX_BGR24, .width = 640, .height = 480},
    };
    EXPECT(choose(norate, 3, -1, 640, 480, 30), CC_PIX_BGR24, 640, 480);

    // Same size, neither reaches 30: the faster one.
    static const struct cc_mode slow[] = {
        MODE(V4L2_PIX_FMT_YUYV, CC_PIX_YUYV, 640, 480, 15),
        MODE(V4L2_PIX_FMT_NV12, CC_PIX_NV12, 640, 480, 20),
    };
    EXPECT(choose(slow, 2, -1, 640, 480, 30), CC_PIX_NV12, 640, 480);

    // fourcc mapping and names.
    CHECK(cc_capture_pixfmt_from_fourcc(V4L2_PIX_FMT_JPEG) == CC_PIX_MJPEG);
    CHECK(cc_capture_pixfmt_from_fourcc(V4L2_PIX_FMT_UYVY) == -1);
    CHECK(strcmp(cc_pixfmt_name(CC_PIX_RGB24), "RGB3") == 0);
    CHECK(strcmp(cc_pixfmt_name(CC_PIX_COUNT), "unknown") == 0);
    char fcc[5];
    cc_fourcc_str(V4L2_PIX_FMT_NV12, fcc);
    CHECK(strcmp(fcc, "NV12") == 0);
    return tu_exit_code();
}
