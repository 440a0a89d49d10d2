/* camclass — the V4L2 device layer (see v4l2_device.h): ioctls through libv4l2, opening a
 * device, fourcc helpers, enumerating its modes and choosing one. Stateless: capture.c and
 * capture_ctrl.c build on it. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <libv4l2.h>
#include <linux/videodev2.h>

#include "v4l2_device.h"

/* ---------------------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------------------- */

int cc_v4l2_ioctl(int fd, unsigned long request, void *arg)
{
    int r;
    do {
        r = v4l2_ioctl(fd, request, arg);
    } while (r == -1 && errno == EINTR);
    return r;
}

int cc_capture_pixfmt_from_fourcc(uint32_t fourcc)
{
    switch (fourcc) {
    case V4L2_PIX_FMT_YUYV:
        return CC_PIX_YUYV;
    case V4L2_PIX_FMT_MJPEG:
    case V4L2_PIX_FMT_JPEG:
        return CC_PIX_MJPEG;
    case V4L2_PIX_FMT_RGB24:
        return CC_PIX_RGB24;
    case V4L2_PIX_FMT_BGR24:
        return CC_PIX_BGR24;
    case V4L2_PIX_FMT_NV12:
        return CC_PIX_NV12;
    case V4L2_PIX_FMT_GREY:
        return CC_PIX_GREY;
    default:
        return -1;
    }
}

void cc_fourcc_str(uint32_t f, char out[5])
{
    for (int i = 0; i < 4; i++) {
        char c = (char)((f >> (8 * i)) & 0xff);
        out[i] = (c >= 32 && c < 127) ? c : '?';
    }
    out[4] = '\0';
}

/* ---------------------------------------------------------------------------------------------
 * Opening a device
 * ------------------------------------------------------------------------------------------- */

int cc_v4l2_open(const char *path, struct v4l2_capability *caps, bool need_capture,
                 struct cc_error *err)
{
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            cc_error_set(err,
                         "no such device %s: is the camera plugged in? (--list-cameras "
                         "shows the cameras there are)",
                         path);
        else if (e == EACCES || e == EPERM)
            cc_error_set(err,
                         "permission denied opening %s: add your user to the 'video' "
                         "group (sudo usermod -aG video $USER) and log in again",
                         path);
        else if (e == EBUSY)
            cc_error_set(err,
                         "%s is busy: another program is using the camera; close it and "
                         "try again",
                         path);
        else if (e == ENODEV || e == ENXIO)
            cc_error_set(err,
                         "%s: device gone (%s): it was unplugged or its driver unloaded; "
                         "reconnect it",
                         path, strerror(e));
        else
            cc_error_set(err, "cannot open %s: %s", path, strerror(e));
        return -1;
    }
    // QUERYCAP on the raw fd first: libv4l2 would print its own complaint for a non-V4L2 file.
    memset(caps, 0, sizeof(*caps));
    int r;
    do {
        r = ioctl(fd, VIDIOC_QUERYCAP, caps);
    } while (r == -1 && errno == EINTR);
    if (r < 0) {
        int e = errno;
        close(fd);
        if (e == ENODEV)
            return cc_error_set(err, "%s: device gone (ENODEV): reconnect it", path), -1;
        return cc_error_set(err,
                            "%s is not a video capture device (VIDIOC_QUERYCAP: %s); "
                            "pick one from --list-cameras",
                            path, strerror(e)),
               -1;
    }
    uint32_t dc =
        (caps->capabilities & V4L2_CAP_DEVICE_CAPS) ? caps->device_caps : caps->capabilities;
    if (need_capture && !(dc & V4L2_CAP_VIDEO_CAPTURE)) {
        close(fd);
        return cc_error_set(err,
                            "%s (%s) is not a video capture device (it may be a metadata "
                            "or output node); pick one from --list-cameras",
                            path, (const char *)caps->card),
               -1;
    }
    if (need_capture && !(dc & V4L2_CAP_STREAMING)) {
        close(fd);
        return cc_error_set(err,
                            "%s (%s) cannot stream with mmap buffers (no "
                            "V4L2_CAP_STREAMING); camclass needs a streaming camera",
                            path, (const char *)caps->card),
               -1;
    }
    // Conversion off: libv4l2 then passes formats through but still handles the device.
    int vfd = v4l2_fd_open(fd, V4L2_DISABLE_CONVERSION);
    if (vfd < 0) {
        int e = errno;
        close(fd);
        return cc_error_set(err, "%s: libv4l2 cannot open it: %s", path, strerror(e)), -1;
    }
    return vfd;
}

/* ---------------------------------------------------------------------------------------------
 * Choosing a mode
 * ------------------------------------------------------------------------------------------- */

// Formats we prefer when several reach the asked size and rate: uncompressed colour first
// (cheapest to preprocess), then MJPEG (what webcams give at high rates), grey last.
static int format_rank(int pixfmt)
{
    static const int rank[CC_PIX_COUNT] = {
        [CC_PIX_YUYV] = 0,  [CC_PIX_NV12] = 1,  [CC_PIX_BGR24] = 2,
        [CC_PIX_RGB24] = 3, [CC_PIX_MJPEG] = 4, [CC_PIX_GREY] = 5,
    };
    return rank[pixfmt];
}

// How far a size is from the asked one: 0 exact, 1.. larger (crop/resize down), 100.. smaller.
static double size_cost(int w, int h, int rw, int rh)
{
    if (w == rw && h == rh)
        return 0;
    double a = (double)w * h, ra = (double)rw * rh;
    if (w >= rw && h >= rh)
        return 1 + (a - ra) / ra;
    return 100 + ra / (a > 0 ? a : 1);
}

// True when a is a better choice than b for the request.
static bool better_mode(const struct cc_mode *a, const struct cc_mode *b, int rw, int rh,
                        double rfps)
{
    double ca = size_cost(a->width, a->height, rw, rh), cb = size_cost(b->width, b->height, rw, rh);
    if (fabs(ca - cb) > 1e-9)
        return ca < cb;
    // Unknown rates (0) count as reaching the request: we learn the truth from S_PARM.
    double fa = a->max_fps > 0 ? fmin(a->max_fps, rfps) : rfps;
    double fb = b->max_fps > 0 ? fmin(b->max_fps, rfps) : rfps;
    if (fabs(fa - fb) > 0.01 * rfps)
        return fa > fb;
    return format_rank(a->pixfmt) < format_rank(b->pixfmt);
}

int cc_capture_choose_mode(const struct cc_mode *modes, int n, const struct cc_capture_config *c)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (modes[i].pixfmt < 0 || (c->format >= 0 && modes[i].pixfmt != c->format))
            continue;
        if (best < 0 || better_mode(&modes[i], &modes[best], c->width, c->height, c->fps))
            best = i;
    }
    return best;
}

/* ---------------------------------------------------------------------------------------------
 * Formats, sizes, rates
 * ------------------------------------------------------------------------------------------- */

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

// Fills the rates of m (format and size set).
static void enum_rates(int fd, struct cc_mode *m)
{
    struct v4l2_frmivalenum iv = {
        .pixel_format = m->fourcc, .width = (uint32_t)m->width, .height = (uint32_t)m->height};
    m->n_fps = 0;
    m->max_fps = 0;
    m->stepwise_rates = false; // m is reused from one size to the next
    for (iv.index = 0; cc_v4l2_ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &iv) == 0; iv.index++) {
        if (iv.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
            if (iv.discrete.numerator && m->n_fps < CC_MODE_MAX_RATES)
                m->fps[m->n_fps++] = (double)iv.discrete.denominator / iv.discrete.numerator;
        } else { // stepwise or continuous: the fastest is 1 / min interval
            struct v4l2_fract lo = iv.stepwise.min, hi = iv.stepwise.max;
            if (lo.numerator && hi.numerator) {
                m->fps[0] = (double)lo.denominator / lo.numerator;
                m->fps[1] = (double)hi.denominator / hi.numerator;
                m->n_fps = 2;
                m->stepwise_rates = true;
            }
            break;
        }
    }
    if (!m->stepwise_rates)
        qsort(m->fps, (size_t)m->n_fps, sizeof(double), cmp_desc);
    if (m->n_fps > 0)
        m->max_fps = m->fps[0];
}

static bool push_mode(struct cc_mode **modes, int *n, int *cap, const struct cc_mode *m,
                      struct cc_error *err)
{
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 64;
        struct cc_mode *p = realloc(*modes, (size_t)c * sizeof(*p));
        if (!p)
            return cc_error_set(err, "capture: out of memory listing modes");
        *modes = p;
        *cap = c;
    }
    (*modes)[(*n)++] = *m;
    return true;
}

static int fit(int want, uint32_t min, uint32_t max, uint32_t step)
{
    long v = want < (long)min ? (long)min : want > (long)max ? (long)max : want;
    if (step > 1)
        v = (long)min + (v - (long)min) / (long)step * (long)step;
    return (int)v;
}

bool cc_v4l2_enum_modes(int fd, int want_w, int want_h, bool all, struct cc_mode **modes, int *n,
                        struct cc_error *err)
{
    *modes = NULL;
    *n = 0;
    int cap = 0;
    struct v4l2_fmtdesc desc = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    for (desc.index = 0; cc_v4l2_ioctl(fd, VIDIOC_ENUM_FMT, &desc) == 0; desc.index++) {
        if (desc.flags & V4L2_FMT_FLAG_EMULATED)
            continue;
        struct cc_mode m = {.fourcc = desc.pixelformat,
                            .pixfmt = cc_capture_pixfmt_from_fourcc(desc.pixelformat)};
        snprintf(m.description, sizeof(m.description), "%s", (const char *)desc.description);
        if (m.pixfmt < 0 && !all)
            continue;
        struct v4l2_frmsizeenum fs = {.pixel_format = desc.pixelformat};
        int sizes = 0;
        for (fs.index = 0; cc_v4l2_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++) {
            if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
                m.width = (int)fs.discrete.width;
                m.height = (int)fs.discrete.height;
            } else {
                struct v4l2_frmsize_stepwise *s = &fs.stepwise;
                m.width = fit(want_w, s->min_width, s->max_width, s->step_width);
                m.height = fit(want_h, s->min_height, s->max_height, s->step_height);
                m.stepwise_size = true;
            }
            enum_rates(fd, &m);
            if (!push_mode(modes, n, &cap, &m, err))
                goto error;
            sizes++;
            if (m.stepwise_size)
                break;
        }
        if (sizes == 0) { // no size enumeration: offer the request, S_FMT will adjust it
            m.width = want_w;
            m.height = want_h;
            m.stepwise_size = true;
            enum_rates(fd, &m);
            if (!push_mode(modes, n, &cap, &m, err))
                goto error;
        }
    }
    if (*n == 0 && errno == ENODEV) {
        cc_error_set(err, "camera gone while listing its formats (ENODEV); reconnect it");
        goto error;
    }
    return true;

error:
    free(*modes);
    *modes = NULL;
    *n = 0;
    return false;
}
