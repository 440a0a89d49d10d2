/* camclass — V4L2 camera capture (see capture.h).
 *
 * Call order as in the kernel's V4L2 capture example: open, QUERYCAP, enumerate, S_FMT (which
 * may change the size), S_PARM, REQBUFS, QUERYBUF + mmap, QBUF all, STREAMON, then
 * poll/DQBUF/copy/QBUF in the capture thread. Every ioctl goes through libv4l2 with format
 * conversion disabled: we want the camera's native formats (preprocessing converts them).
 * Control names and listing live in capture_ctrl.c; the device layer (open, ioctls, modes and
 * their choice) in v4l2_device.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <libv4l2.h>
#include <linux/videodev2.h>

#include "capture.h"
#include "capture_internal.h"
#include "clock.h"

#define MAX_BUFFERS 8

struct buffer {
    void *start;   // mmap'd driver buffer
    size_t length; // bytes mapped
};

struct cc_capture {
    struct cc_capture_config config; // copy; config.device points into info.device
    struct cc_capture_info info;     // fixed after open

    // The device. Owned by the controlling thread until start, by the capture thread between
    // start and stop. The fd is replaced (reopen) only under lock, so set_ctrl may use it.
    int fd; // -1 while the camera is lost
    struct buffer bufs[MAX_BUFFERS];
    int n_bufs;
    bool streaming;

    // The thread.
    pthread_t thread;
    bool running;                // set and cleared by the controlling thread
    int stop_fd;                 // eventfd: stop writes it, the thread polls it
    struct cc_frame_slot *slot;  // where frames go; not owned
    uint64_t seq_base, last_seq; // 64-bit sequence = seq_base + driver's 32-bit sequence
    bool have_seq;

    pthread_mutex_t lock;          // guards fd changes and stats
    struct cc_capture_stats stats; // guarded by lock
};

/* ---------------------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------------------- */

static const char *busy_or(int e, const char *otherwise)
{
    return e == EBUSY ? "the camera is busy: another program is using it; close it and retry"
                      : otherwise;
}

// Chooses and sets the mode; fills *info (format, size, stride, image_bytes, fps).
/* The mode cc_capture_choose_mode picks among those the device offers near the asked size. */
static bool pick_mode(int fd, const struct cc_capture_config *c, const char *device,
                      struct cc_mode *chosen, struct cc_error *err)
{
    struct cc_mode *modes = NULL;
    int n = 0;
    if (!cc_v4l2_enum_modes(fd, c->width, c->height, false, &modes, &n, err))
        return false;
    int i = cc_capture_choose_mode(modes, n, c);
    if (i >= 0)
        *chosen = modes[i];
    free(modes);
    if (i >= 0)
        return true;
    if (c->format >= 0)
        return cc_error_set(err,
                            "%s offers no %s; leave the format to camclass or pick one that "
                            "--list-cameras shows",
                            device, cc_pixfmt_name((enum cc_pixfmt)c->format));
    return cc_error_set(err,
                        "%s has no usable format: it offers none of YUYV, MJPG, RGB3, BGR3, NV12, "
                        "GREY (--list-cameras shows what it offers)",
                        device);
}

/* Every frame is checked so before preprocessing: a layout the driver gives that cannot hold a
 * frame (a short stride or sizeimage) is refused now, not frame by frame later. A sizeimage of
 * 0 (left to bytesused) is not held against it. */
static bool check_layout(const struct cc_capture_info *info, struct cc_error *err)
{
    static const uint8_t some;
    struct cc_frame probe = {.format = info->format,
                             .width = info->width,
                             .height = info->height,
                             .stride = info->stride,
                             .size = info->image_bytes ? info->image_bytes : SIZE_MAX,
                             .data = (uint8_t *)&some};
    struct cc_error why = {""};
    if (info->format == CC_PIX_MJPEG || cc_frame_check(&probe, "format", &why))
        return true;
    return cc_error_set(err,
                        "%s: the driver's %s %dx%d layout cannot hold a frame (%s); try another "
                        "--size or format",
                        info->device, cc_pixfmt_name(info->format), info->width, info->height,
                        why.msg);
}

/* VIDIOC_S_FMT to the chosen mode; info gets what the driver made of it (it may change the
 * size). */
static bool set_format(int fd, const struct cc_mode *chosen, struct cc_capture_info *info,
                       struct cc_error *err)
{
    struct v4l2_format fmt = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    fmt.fmt.pix.width = (uint32_t)chosen->width;
    fmt.fmt.pix.height = (uint32_t)chosen->height;
    fmt.fmt.pix.pixelformat = chosen->fourcc;
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    if (cc_v4l2_ioctl(fd, VIDIOC_S_FMT, &fmt) < 0) {
        int e = errno;
        return cc_error_set(err, "%s: VIDIOC_S_FMT failed: %s; %s", info->device, strerror(e),
                            busy_or(e, "try another size or format"));
    }
    if (fmt.fmt.pix.pixelformat != chosen->fourcc) {
        char want[5], got[5];
        cc_fourcc_str(chosen->fourcc, want);
        cc_fourcc_str(fmt.fmt.pix.pixelformat, got);
        return cc_error_set(err, "%s: asked for %s, the driver gave %s; force another format",
                            info->device, want, got);
    }
    info->fourcc = chosen->fourcc;
    info->format = (enum cc_pixfmt)chosen->pixfmt;
    info->width = (int)fmt.fmt.pix.width;
    info->height = (int)fmt.fmt.pix.height;
    info->stride = info->format == CC_PIX_MJPEG ? 0 : (int)fmt.fmt.pix.bytesperline;
    info->image_bytes = fmt.fmt.pix.sizeimage;
    return check_layout(info, err);
}

/* The frame rate: many drivers stay at their default (vivid: 5 fps) unless told. info->fps gets
 * what the driver says it runs at (0: it does not say). */
static bool set_rate(int fd, double want_fps, struct cc_capture_info *info, struct cc_error *err)
{
    struct v4l2_streamparm parm = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    info->fps = 0;
    if (cc_v4l2_ioctl(fd, VIDIOC_G_PARM, &parm) == 0 &&
        (parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME)) {
        parm.parm.capture.timeperframe.numerator = 1000;
        parm.parm.capture.timeperframe.denominator = (uint32_t)lround(want_fps * 1000);
        if (cc_v4l2_ioctl(fd, VIDIOC_S_PARM, &parm) < 0) {
            int e = errno;
            return cc_error_set(err, "%s: VIDIOC_S_PARM (%.1f fps) failed: %s; %s", info->device,
                                want_fps, strerror(e), busy_or(e, "ask for another rate"));
        }
    }
    struct v4l2_fract tpf = parm.parm.capture.timeperframe;
    if (tpf.numerator && tpf.denominator)
        info->fps = (double)tpf.denominator / tpf.numerator;
    return true;
}

static bool negotiate(struct cc_capture *cap, int fd, struct cc_capture_info *info,
                      struct cc_error *err)
{
    const struct cc_capture_config *c = &cap->config;
    struct cc_mode chosen = {0};
    if (!pick_mode(fd, c, info->device, &chosen, err) || !set_format(fd, &chosen, info, err))
        return false;
    return set_rate(fd, chosen.max_fps > 0 ? fmin(c->fps, chosen.max_fps) : c->fps, info, err);
}

/* ---------------------------------------------------------------------------------------------
 * Buffers and streaming
 * ------------------------------------------------------------------------------------------- */

// Unmaps, frees the driver's buffers and closes. Errors are ignored: the device may be gone.
static void teardown(struct cc_capture *cap)
{
    if (cap->fd < 0)
        return;
    if (cap->streaming) {
        enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        cc_v4l2_ioctl(cap->fd, VIDIOC_STREAMOFF, &type);
        cap->streaming = false;
    }
    for (int i = 0; i < cap->n_bufs; i++)
        if (cap->bufs[i].start)
            v4l2_munmap(cap->bufs[i].start, cap->bufs[i].length);
    if (cap->n_bufs > 0) {
        struct v4l2_requestbuffers req = {
            .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP, .count = 0};
        cc_v4l2_ioctl(cap->fd, VIDIOC_REQBUFS, &req);
    }
    memset(cap->bufs, 0, sizeof(cap->bufs));
    cap->n_bufs = 0;
    v4l2_close(cap->fd);
    cap->fd = -1;
}

static bool map_buffers(struct cc_capture *cap, struct cc_capture_info *info, struct cc_error *err)
{
    const char *dev = info->device;
    struct v4l2_requestbuffers req = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                      .memory = V4L2_MEMORY_MMAP,
                                      .count = (uint32_t)cap->config.buffers};
    if (cc_v4l2_ioctl(cap->fd, VIDIOC_REQBUFS, &req) < 0) {
        int e = errno;
        return cc_error_set(err, "%s: VIDIOC_REQBUFS failed: %s; %s", dev, strerror(e),
                            busy_or(e, "the driver cannot stream with mmap buffers"));
    }
    if (req.count < 2)
        return cc_error_set(err, "%s: the driver gave only %u buffer(s); it needs 2 to stream", dev,
                            req.count);
    cap->n_bufs = req.count < MAX_BUFFERS ? (int)req.count : MAX_BUFFERS;
    for (int i = 0; i < cap->n_bufs; i++) {
        struct v4l2_buffer b = {
            .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP, .index = (uint32_t)i};
        if (cc_v4l2_ioctl(cap->fd, VIDIOC_QUERYBUF, &b) < 0)
            return cc_error_set(err, "%s: VIDIOC_QUERYBUF failed: %s", dev, strerror(errno));
        void *p =
            v4l2_mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, cap->fd, b.m.offset);
        if (p == MAP_FAILED)
            return cc_error_set(err, "%s: mmap of buffer %d failed: %s", dev, i, strerror(errno));
        cap->bufs[i] = (struct buffer){p, b.length};
    }
    info->buffers = cap->n_bufs;
    return true;
}

static bool stream_on(struct cc_capture *cap, struct cc_error *err)
{
    for (int i = 0; i < cap->n_bufs; i++) {
        struct v4l2_buffer b = {
            .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP, .index = (uint32_t)i};
        if (cc_v4l2_ioctl(cap->fd, VIDIOC_QBUF, &b) < 0)
            return cc_error_set(err, "%s: VIDIOC_QBUF failed: %s", cap->info.device,
                                strerror(errno));
    }
    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (cc_v4l2_ioctl(cap->fd, VIDIOC_STREAMON, &type) < 0) {
        int e = errno;
        return cc_error_set(err, "%s: VIDIOC_STREAMON failed: %s; %s", cap->info.device,
                            strerror(e), busy_or(e, "unplug and replug the camera"));
    }
    cap->streaming = true;
    return true;
}

// Opens the device, negotiates and maps buffers into cap (fd must be -1); what was negotiated
// goes to *info (device already set): cap->info at open, a scratch copy at a reopen, so that
// cap->info never changes after open. On failure cap is torn down again.
static bool open_and_map(struct cc_capture *cap, struct cc_capture_info *info, struct cc_error *err)
{
    struct v4l2_capability caps;
    cap->fd = cc_v4l2_open(info->device, &caps, true, err);
    if (cap->fd < 0)
        return false;
    snprintf(info->driver, sizeof(info->driver), "%s", (const char *)caps.driver);
    snprintf(info->card, sizeof(info->card), "%s", (const char *)caps.card);
    if (!negotiate(cap, cap->fd, info, err) || !map_buffers(cap, info, err)) {
        teardown(cap);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Create / destroy
 * ------------------------------------------------------------------------------------------- */

struct cc_capture_config cc_capture_config_default(void)
{
    return (struct cc_capture_config){
        .device = "/dev/video0",
        .width = 640,
        .height = 480,
        .fps = 30,
        .format = -1,
        .buffers = 4,
        .reopen_ms = 10000,
        .log = NULL,
    };
}

struct cc_capture *cc_capture_open(const struct cc_capture_config *config, struct cc_error *err)
{
    struct cc_capture *cap = calloc(1, sizeof(*cap));
    if (!cap) {
        cc_error_set(err, "capture: out of memory");
        return NULL;
    }
    cap->fd = -1;
    cap->stop_fd = -1;
    pthread_mutex_init(&cap->lock, NULL);
    cap->config = *config;
    struct cc_capture_config *c = &cap->config;
    const char *dev = c->device ? c->device : "/dev/video0";
    if ((size_t)snprintf(cap->info.device, sizeof(cap->info.device), "%s", dev) >=
        sizeof(cap->info.device)) {
        cc_error_set(err, "camera path %.60s... is longer than %zu bytes; give /dev/videoN", dev,
                     sizeof(cap->info.device) - 1);
        pthread_mutex_destroy(&cap->lock);
        free(cap);
        return NULL;
    }
    c->device = cap->info.device;
    if (c->width <= 0 || c->height <= 0) {
        c->width = 640;
        c->height = 480;
    }
    if (c->fps <= 0)
        c->fps = 30;
    if (c->buffers <= 0)
        c->buffers = 4;
    c->buffers = c->buffers < 2 ? 2 : c->buffers > MAX_BUFFERS ? MAX_BUFFERS : c->buffers;
    if (c->reopen_ms == 0)
        c->reopen_ms = 10000;
    if (c->format >= CC_PIX_COUNT)
        c->format = -1;

    cap->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (cap->stop_fd < 0) {
        cc_error_set(err, "capture: eventfd failed: %s", strerror(errno));
        goto error;
    }
    if (!open_and_map(cap, &cap->info, err))
        goto error;

    struct cc_capture_info *i = &cap->info;
    char fps[32] = "driver's rate (no S_PARM)";
    if (i->fps > 0)
        snprintf(fps, sizeof(fps), "%.4g fps", i->fps);
    snprintf(i->line, sizeof(i->line),
             "%s (%s, %s): %s %dx%d @ %s (asked %dx%d @ %.4g fps), %d "
             "buffers",
             i->device, i->card, i->driver, cc_pixfmt_name(i->format), i->width, i->height, fps,
             c->width, c->height, c->fps, i->buffers);
    return cap;

error:
    cc_capture_destroy(cap);
    return NULL;
}

void cc_capture_destroy(struct cc_capture *cap)
{
    if (!cap)
        return;
    cc_capture_stop(cap);
    teardown(cap);
    if (cap->stop_fd >= 0)
        close(cap->stop_fd);
    pthread_mutex_destroy(&cap->lock);
    free(cap);
}

const struct cc_capture_info *cc_capture_get_info(const struct cc_capture *cap)
{
    return &cap->info;
}

struct cc_capture_stats cc_capture_get_stats(struct cc_capture *cap)
{
    pthread_mutex_lock(&cap->lock);
    struct cc_capture_stats s = cap->stats;
    pthread_mutex_unlock(&cap->lock);
    return s;
}

int cc_capture_lock_fd(struct cc_capture *cap)
{
    pthread_mutex_lock(&cap->lock);
    return cap->fd;
}

void cc_capture_unlock_fd(struct cc_capture *cap)
{
    pthread_mutex_unlock(&cap->lock);
}

/* ---------------------------------------------------------------------------------------------
 * The capture thread
 * ------------------------------------------------------------------------------------------- */

static void log_line(struct cc_capture *cap, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void log_line(struct cc_capture *cap, const char *fmt, ...)
{
    if (!cap->config.log)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(cap->config.log, fmt, ap);
    va_end(ap);
    fputc('\n', cap->config.log);
    fflush(cap->config.log);
}

// Waits ms milliseconds unless stop is asked; returns true when stop was asked.
static bool wait_or_stop(struct cc_capture *cap, int ms)
{
    struct pollfd p = {.fd = cap->stop_fd, .events = POLLIN};
    int r;
    do {
        r = poll(&p, 1, ms);
    } while (r < 0 && errno == EINTR);
    return r > 0;
}

// The camera disappeared: reopen with back-off until it is back (true), the time is up or the
// format cannot be restored (false, err says why), or stop is asked (false, err "").
static bool reopen(struct cc_capture *cap, const char *why, struct cc_error *err)
{
    const char *dev = cap->info.device;
    pthread_mutex_lock(&cap->lock);
    cap->stats.lost++;
    teardown(cap);
    pthread_mutex_unlock(&cap->lock);
    if (cap->config.reopen_ms < 0)
        return cc_error_set(err, "camera %s lost (%s); reconnect it and restart", dev, why);
    log_line(cap, "camera %s lost (%s); reopening", dev, why);

    int64_t deadline = cc_now_ns() + (int64_t)cap->config.reopen_ms * 1000000;
    int delay = 100;
    struct cc_error last = {""};
    for (;;) {
        if (wait_or_stop(cap, delay)) {
            err->msg[0] = '\0';
            return false;
        }
        struct cc_capture_info again = {0};
        snprintf(again.device, sizeof(again.device), "%s", dev);
        pthread_mutex_lock(&cap->lock);
        bool ok = open_and_map(cap, &again, &last) && stream_on(cap, &last);
        bool same = again.fourcc == cap->info.fourcc && again.width == cap->info.width &&
                    again.height == cap->info.height && again.stride == cap->info.stride;
        if (ok && same)
            cap->stats.reopened++;
        else
            teardown(cap);
        pthread_mutex_unlock(&cap->lock);
        if (ok && !same)
            return cc_error_set(err,
                                "camera %s came back but no longer gives %s %dx%d; "
                                "restart camclass",
                                dev, cc_pixfmt_name(cap->info.format), cap->info.width,
                                cap->info.height);
        if (ok) {
            log_line(cap, "camera %s is back: %s %dx%d", dev, cc_pixfmt_name(again.format),
                     again.width, again.height);
            cap->seq_base = cap->have_seq ? cap->last_seq + 1 : 0;
            cap->have_seq = false;
            return true;
        }
        if (cc_now_ns() > deadline)
            return cc_error_set(err,
                                "camera %s was lost (%s) and did not come back within %.1f s "
                                "(last try: %s); reconnect it and restart camclass",
                                dev, why, cap->config.reopen_ms / 1000.0, last.msg);
        delay = delay * 2 > 2000 ? 2000 : delay * 2;
    }
}

// One dequeued buffer into the slot. Returns false when the slot is closed (time to stop).
/* Copies a dequeued buffer into the slot and queues it back. False when the slot was closed
 * (stop), or, with *fail set, when no frame could be had for it (out of memory). */
static bool deliver(struct cc_capture *cap, const struct v4l2_buffer *b, int *qbuf_errno,
                    struct cc_error *fail)
{
    const struct buffer *buf = &cap->bufs[b->index];
    size_t used = b->bytesused ? b->bytesused : buf->length;
    if (used > buf->length)
        used = buf->length;
    size_t want = cap->info.image_bytes > used ? cap->info.image_bytes : used;
    struct cc_error err = {""};
    struct cc_frame *f = cc_frame_slot_acquire(cap->slot, want, &err);
    if (f) {
        memcpy(f->data, buf->start, used);
        f->size = used;
    }
    // Give the buffer back to the driver before anything else.
    struct v4l2_buffer q = {.type = b->type, .memory = b->memory, .index = b->index};
    *qbuf_errno = cc_v4l2_ioctl(cap->fd, VIDIOC_QBUF, &q) < 0 ? errno : 0;
    if (!f) {
        if (!cc_frame_slot_closed(cap->slot)) // else a stop: nothing to say
            cc_error_set(fail, "camera %s: a frame of %zu bytes: %s", cap->info.device, want,
                         err.msg[0] ? err.msg : "no memory");
        return false;
    }

    uint64_t seq = cap->seq_base + b->sequence;
    pthread_mutex_lock(&cap->lock);
    if (cap->have_seq && seq > cap->last_seq + 1)
        cap->stats.driver_dropped += seq - cap->last_seq - 1;
    cap->stats.frames++;
    pthread_mutex_unlock(&cap->lock);
    if (cap->have_seq && seq <= cap->last_seq) // a driver restarting its count: stay increasing
        seq = cap->last_seq + 1, cap->seq_base = seq - b->sequence;
    cap->last_seq = seq;
    cap->have_seq = true;

    f->format = cap->info.format;
    f->width = cap->info.width;
    f->height = cap->info.height;
    f->stride = cap->info.stride;
    f->sequence = seq;
    if ((b->flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        f->timestamp_ns =
            (int64_t)b->timestamp.tv_sec * 1000000000 + (int64_t)b->timestamp.tv_usec * 1000;
    else
        f->timestamp_ns = cc_now_ns();
    return cc_frame_slot_put(cap->slot, f);
}

static void *capture_main(void *arg)
{
    struct cc_capture *cap = arg;
    struct cc_error err = {""};
    char why[128];
    for (;;) {
        struct pollfd p[2] = {{.fd = cap->fd, .events = POLLIN},
                              {.fd = cap->stop_fd, .events = POLLIN}};
        int r = poll(p, 2, 1000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            cc_error_set(&err, "camera %s: poll failed: %s", cap->info.device, strerror(errno));
            break;
        }
        if (p[1].revents)
            break; // stop asked
        if (r == 0) {
            if (cc_frame_slot_closed(cap->slot))
                break;
            continue; // no frame yet: slow driver (or TCG); keep waiting
        }
        struct v4l2_buffer b = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
        int e = 0;
        if (cc_v4l2_ioctl(cap->fd, VIDIOC_DQBUF, &b) < 0) {
            e = errno;
            if (e == EAGAIN)
                continue;
            snprintf(why, sizeof(why), "VIDIOC_DQBUF: %s", strerror(e));
        } else if (b.index >= (uint32_t)cap->n_bufs) {
            cc_error_set(&err, "camera %s: driver returned buffer %u of %d", cap->info.device,
                         b.index, cap->n_bufs);
            break;
        } else if (b.flags & V4L2_BUF_FLAG_ERROR) {
            pthread_mutex_lock(&cap->lock);
            cap->stats.errors++;
            pthread_mutex_unlock(&cap->lock);
            struct v4l2_buffer q = {.type = b.type, .memory = b.memory, .index = b.index};
            e = cc_v4l2_ioctl(cap->fd, VIDIOC_QBUF, &q) < 0 ? errno : 0;
            snprintf(why, sizeof(why), "VIDIOC_QBUF: %s", strerror(e));
        } else {
            if (!deliver(cap, &b, &e, &err))
                break; // the consumer closed the slot, or no memory (err says)
            snprintf(why, sizeof(why), "VIDIOC_QBUF: %s", strerror(e));
        }
        if (e == 0)
            continue;
        if (e == ENODEV || e == EIO || e == EPIPE) { // unplugged (EIO/EPIPE: some USB drivers)
            if (!reopen(cap, why, &err))
                break;
            continue;
        }
        cc_error_set(&err, "camera %s: %s; restart camclass", cap->info.device, why);
        break;
    }
    if (err.msg[0]) {
        log_line(cap, "%s", err.msg);
        cc_frame_slot_close(cap->slot, err.msg);
    }
    return NULL;
}

bool cc_capture_start(struct cc_capture *cap, struct cc_frame_slot *slot, struct cc_error *err)
{
    if (cap->running)
        return cc_error_set(err, "capture of %s already started", cap->info.device);
    if (cap->fd < 0)
        return cc_error_set(err, "capture of %s: camera lost; open it again", cap->info.device);
    if (!cap->streaming && !stream_on(cap, err))
        return false;
    uint64_t drain;
    while (read(cap->stop_fd, &drain, sizeof(drain)) > 0) {
    }
    cap->slot = slot;
    int e = pthread_create(&cap->thread, NULL, capture_main, cap);
    if (e)
        return cc_error_set(err, "capture: cannot start the thread: %s", strerror(e));
    cap->running = true;
    return true;
}

void cc_capture_stop(struct cc_capture *cap)
{
    if (!cap || !cap->running)
        return;
    uint64_t one = 1;
    if (write(cap->stop_fd, &one, sizeof(one)) < 0) {
        // An eventfd write fails only on counter overflow; the thread is being stopped anyway.
    }
    pthread_join(cap->thread, NULL);
    cap->running = false;
    if (cap->fd >= 0 && cap->streaming) {
        enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        cc_v4l2_ioctl(cap->fd, VIDIOC_STREAMOFF, &type); // also dequeues every buffer
        cap->streaming = false;
    }
}
