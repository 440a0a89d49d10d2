/* camclass — capture tests against the kernel's vivid driver (suite 'capture').
 *
 * Runs inside the qemu guest that tests/vm/run-vm.sh boots, with
 *   vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0
 * loaded (one webcam-like /dev/video0). Every test prints one "TEST name: PASS|FAIL (...)" line;
 * the exit status is 0 only when all passed. The reopen test reloads vivid; it finds the module
 * and its arguments in CAMCLASS_VIVID_KO and CAMCLASS_VIVID_ARGS (set by the guest's /init).
 *
 *   test_capture [test-name...]   (no name: all tests)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "capture_ctrl_tests.h"
#include "frame_slot.h"
#include "testutil.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static struct cc_capture_config config(int fmt, int w, int h, double fps)
{
    struct cc_capture_config c = cc_capture_config_default();
    c.format = fmt;
    c.width = w;
    c.height = h;
    c.fps = fps;
    c.log = stdout;
    return c;
}

// Bytes of one frame and of one row, as V4L2 lays them out for vivid (no padding).
static size_t frame_bytes(enum cc_pixfmt f, int w, int h)
{
    switch (f) {
    case CC_PIX_YUYV:
        return (size_t)w * h * 2;
    case CC_PIX_RGB24:
    case CC_PIX_BGR24:
        return (size_t)w * h * 3;
    case CC_PIX_NV12:
        return (size_t)w * h * 3 / 2;
    case CC_PIX_GREY:
        return (size_t)w * h;
    default:
        return 0;
    }
}

static int row_bytes(enum cc_pixfmt f, int w)
{
    return f == CC_PIX_YUYV ? 2 * w : (f == CC_PIX_RGB24 || f == CC_PIX_BGR24) ? 3 * w : w;
}

/* ---------------------------------------------------------------------------------------------
 * Formats and sizes at a rate
 * ------------------------------------------------------------------------------------------- */

// Streams one format/size for about `seconds`, checks every frame; returns the measured fps.
static double stream_format(enum cc_pixfmt fmt, int w, int h, double fps, double seconds)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config((int)fmt, w, h, fps);
    struct cc_capture *cap = cc_capture_open(&c, &err);
    if (!CHECKF(cap != NULL, "open %s %dx%d: %s", cc_pixfmt_name(fmt), w, h, err.msg))
        return 0;
    const struct cc_capture_info *info = cc_capture_get_info(cap);
    printf("  %s\n", info->line);
    CHECKF(info->format == fmt && info->width == w && info->height == h, "negotiated %s %dx%d",
           cc_pixfmt_name(info->format), info->width, info->height);
    CHECKF(info->stride == row_bytes(fmt, w), "stride %d", info->stride);
    CHECKF(info->fps > fps - 0.5 && info->fps < fps + 0.5, "driver accepted %.2f fps", info->fps);
    // A little movement so that frames differ in their pixels, not only in the OSD text.
    CHECKF(cc_capture_set_ctrl(cap, "Horizontal Movement", "Move Right Fast", &err), "%s", err.msg);

    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    CHECK(cc_capture_start(cap, slot, &err));
    uint8_t *prev = malloc(frame_bytes(fmt, w, h));
    int n = 0, bad_size = 0, bad_order = 0, same = 0;
    uint64_t last_seq = 0;
    int64_t first_ts = 0, last_ts = 0, prev_ts = 0;
    double end = now_s() + seconds;
    while (now_s() < end) {
        struct cc_frame *f;
        enum cc_slot_status st = cc_frame_slot_take(slot, 3000, &f, &err);
        if (!CHECKF(st == CC_SLOT_FRAME, "take: status %d (%s)", (int)st, err.msg))
            break;
        if (f->format != fmt || f->width != w || f->height != h ||
            f->size != frame_bytes(fmt, w, h) || f->stride != row_bytes(fmt, w))
            bad_size++;
        if (n > 0 && (f->sequence <= last_seq || f->timestamp_ns <= prev_ts))
            bad_order++;
        if (n > 0 && f->size == frame_bytes(fmt, w, h) && memcmp(prev, f->data, f->size) == 0)
            same++;
        if (f->size <= frame_bytes(fmt, w, h))
            memcpy(prev, f->data, f->size);
        last_seq = f->sequence;
        prev_ts = f->timestamp_ns;
        if (n == 0)
            first_ts = f->timestamp_ns;
        last_ts = f->timestamp_ns;
        n++;
        cc_frame_slot_release(slot, f);
    }
    cc_capture_stop(cap);
    struct cc_capture_stats cs = cc_capture_get_stats(cap);
    struct cc_frame_slot_stats ss = cc_frame_slot_get_stats(slot);
    // Rates over the span of the frames the consumer saw: what reached it, and what the capture
    // thread handed to the slot (the consumer's memcmp is slow under TCG, so the slot drops some).
    double span = (double)(last_ts - first_ts) / 1e9;
    double measured = n > 1 && span > 0 ? (n - 1) / span : 0;
    double delivered = n > 1 && span > 0 ? (double)(ss.put - 1) / span : 0;
    printf("  %s %dx%d: %d frames taken in %.1f s: %.1f fps taken, %.1f fps delivered by the "
           "capture thread (asked %.0f); driver skipped %llu, slot dropped %llu\n",
           cc_pixfmt_name(fmt), w, h, n, seconds, measured, delivered, fps,
           (unsigned long long)cs.driver_dropped, (unsigned long long)ss.dropped);
    CHECKF(n >= 5, "only %d frames", n);
    CHECKF(bad_size == 0, "%d frames of the wrong format/size", bad_size);
    CHECKF(bad_order == 0, "%d frames out of order", bad_order);
    CHECKF(same == 0, "%d frames identical to the one before", same);
    // Generous: TCG is slow, and vivid skips frames when its thread runs late.
    CHECKF(delivered > fps * 0.4 && delivered < fps * 1.3, "%.1f fps for %.0f asked", delivered,
           fps);
    free(prev);
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
    return delivered;
}

static void test_formats(void)
{
    static const enum cc_pixfmt fmts[] = {CC_PIX_YUYV, CC_PIX_RGB24, CC_PIX_NV12, CC_PIX_GREY};
    static const int sizes[][2] = {{640, 360}, {320, 180}};
    char summary[512] = "";
    for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
        for (size_t k = 0; k < 2; k++) {
            double fps = stream_format(fmts[i], sizes[k][0], sizes[k][1], 30, 1.5);
            size_t len = strlen(summary);
            snprintf(summary + len, sizeof(summary) - len, "%s%s %dx%d %.1f", len ? ", " : "",
                     cc_pixfmt_name(fmts[i]), sizes[k][0], sizes[k][1], fps);
        }
    printf("  fps at 30 asked: %s\n", summary);
}

// The automatic choice: vivid has no MJPEG, so YUYV (first preference) at the asked size.
static void test_auto_choice(void)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config(-1, 640, 360, 30);
    struct cc_capture *cap = cc_capture_open(&c, &err);
    if (CHECKF(cap != NULL, "open: %s", err.msg)) {
        const struct cc_capture_info *i = cc_capture_get_info(cap);
        printf("  %s\n", i->line);
        CHECK(i->format == CC_PIX_YUYV && i->width == 640 && i->height == 360);
        CHECK(i->fps > 29.5 && i->fps < 30.5);
        CHECK(strstr(i->line, "YUYV 640x360 @ 30 fps") != NULL);
    }
    cc_capture_destroy(cap);
    // A size vivid does not offer: the smallest that covers it (640x480 covers 600x400).
    c = config(-1, 600, 400, 15);
    cap = cc_capture_open(&c, &err);
    if (CHECKF(cap != NULL, "open: %s", err.msg)) {
        const struct cc_capture_info *i = cc_capture_get_info(cap);
        printf("  %s\n", i->line);
        CHECKF(i->width == 640 && i->height == 480, "got %dx%d", i->width, i->height);
    }
    cc_capture_destroy(cap);
    // MJPEG is not offered: a clear error.
    c = config(CC_PIX_MJPEG, 640, 360, 30);
    cap = cc_capture_open(&c, &err);
    CHECK(cap == NULL);
    printf("  MJPG forced: %s\n", err.msg);
    CHECK(strstr(err.msg, "offers no MJPG") != NULL);
    cc_capture_destroy(cap);
}

/* ---------------------------------------------------------------------------------------------
 * Colours: channel order and range per format, on vivid's 75% colour bar
 * ------------------------------------------------------------------------------------------- */

// One frame of fmt at 320x180 with the still 75% colour bar; NULL on failure. The caller frees
// the returned copy of the frame data.
static uint8_t *grab_colourbar(enum cc_pixfmt fmt, int *stride)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config((int)fmt, 320, 180, 30);
    struct cc_capture *cap = cc_capture_open(&c, &err);
    if (!CHECKF(cap != NULL, "open %s: %s", cc_pixfmt_name(fmt), err.msg))
        return NULL;
    CHECKF(cc_capture_set_ctrl(cap, "test_pattern", "75% Colorbar", &err), "%s", err.msg);
    CHECKF(cc_capture_set_ctrl(cap, "horizontal_movement", "No Movement", &err), "%s", err.msg);
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    uint8_t *copy = NULL;
    CHECK(cc_capture_start(cap, slot, &err));
    struct cc_frame *f;
    for (int i = 0; i < 3; i++) { // the third frame: surely made after the controls changed
        if (!CHECK(cc_frame_slot_take(slot, 3000, &f, &err) == CC_SLOT_FRAME))
            break;
        if (i == 2 && (copy = malloc(f->size)) != NULL) {
            memcpy(copy, f->data, f->size);
            *stride = f->stride;
        }
        cc_frame_slot_release(slot, f);
    }
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
    return copy;
}

static bool near(int v, int want)
{
    return v >= want - 4 && v <= want + 4;
}

static void test_colours(void)
{
    // Bars left to right: white, yellow, cyan, green, magenta, red, blue, black (40 px each at
    // 320 wide); sampled on row 170, below vivid's text.
    static const int rgb[8][3] = {{191, 191, 191}, {191, 191, 0}, {0, 191, 191}, {0, 191, 0},
                                  {191, 0, 191},   {191, 0, 0},   {0, 0, 191},   {0, 0, 0}};
    const int y = 170;
    int stride;
    uint8_t *p = grab_colourbar(CC_PIX_RGB24, &stride);
    for (int b = 0; p && b < 8; b++) {
        const uint8_t *px = p + (size_t)y * stride + (size_t)(40 * b + 20) * 3;
        CHECKF(near(px[0], rgb[b][0]) && near(px[1], rgb[b][1]) && near(px[2], rgb[b][2]),
               "RGB3 bar %d: %d %d %d", b, px[0], px[1], px[2]);
    }
    free(p);
    p = grab_colourbar(CC_PIX_BGR24, &stride);
    for (int b = 0; p && b < 8; b++) {
        const uint8_t *px = p + (size_t)y * stride + (size_t)(40 * b + 20) * 3;
        CHECKF(near(px[2], rgb[b][0]) && near(px[1], rgb[b][1]) && near(px[0], rgb[b][2]),
               "BGR3 bar %d: %d %d %d (memory order B G R)", b, px[0], px[1], px[2]);
    }
    free(p);
    // Luma: YUYV and NV12 limited range (75% white 180, black 16), GREY full range (191, 0).
    p = grab_colourbar(CC_PIX_YUYV, &stride);
    if (p) {
        int white = p[(size_t)y * stride + 2 * 20], black = p[(size_t)y * stride + 2 * 300];
        printf("  YUYV luma: 75%% white %d, black %d\n", white, black);
        CHECKF(near(white, 180) && near(black, 16), "YUYV luma white %d black %d", white, black);
    }
    free(p);
    p = grab_colourbar(CC_PIX_NV12, &stride);
    if (p) {
        int white = p[(size_t)y * stride + 20], black = p[(size_t)y * stride + 300];
        printf("  NV12 luma: 75%% white %d, black %d\n", white, black);
        CHECKF(near(white, 180) && near(black, 16), "NV12 luma white %d black %d", white, black);
    }
    free(p);
    p = grab_colourbar(CC_PIX_GREY, &stride);
    if (p) {
        int white = p[(size_t)y * stride + 20], black = p[(size_t)y * stride + 300];
        printf("  GREY: 75%% white %d, black %d\n", white, black);
        CHECKF(near(white, 191) && near(black, 0), "GREY white %d black %d", white, black);
    }
    free(p);
}

/* ---------------------------------------------------------------------------------------------
 * Latest-frame-wins with a slow consumer
 * ------------------------------------------------------------------------------------------- */

static void test_slow_consumer(void)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config(CC_PIX_YUYV, 320, 180, 30);
    struct cc_capture *cap = cc_capture_open(&c, &err);
    if (!CHECKF(cap != NULL, "open: %s", err.msg))
        return;
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    CHECK(cc_capture_start(cap, slot, &err));
    int n = 0, bad_order = 0;
    uint64_t last = 0;
    double end = now_s() + 2.0;
    while (now_s() < end) {
        struct cc_frame *f;
        if (!CHECK(cc_frame_slot_take(slot, 3000, &f, &err) == CC_SLOT_FRAME))
            break;
        if (n++ > 0 && f->sequence <= last)
            bad_order++;
        last = f->sequence;
        sleep_ms(200); // "inference" at 5 fps
        cc_frame_slot_release(slot, f);
    }
    cc_capture_stop(cap);
    struct cc_frame_slot_stats s = cc_frame_slot_get_stats(slot);
    struct cc_capture_stats cs = cc_capture_get_stats(cap);
    printf("  consumer at 5 fps: took %d, slot put %llu dropped %llu, capture frames %llu\n", n,
           (unsigned long long)s.put, (unsigned long long)s.dropped, (unsigned long long)cs.frames);
    CHECKF(s.dropped >= 10, "dropped %llu", (unsigned long long)s.dropped);
    CHECKF(s.put >= s.taken + s.dropped && s.put <= s.taken + s.dropped + 1,
           "put != taken + dropped");
    CHECK(cs.frames == s.put);
    CHECK(bad_order == 0);
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
}

/* ---------------------------------------------------------------------------------------------
 * Disconnect
 * ------------------------------------------------------------------------------------------- */

// Streams, sets vivid's "Disconnect" button; returns the capture (streaming) once the capture
// thread has noticed, or NULL.
static struct cc_capture *disconnect_midstream(struct cc_frame_slot *slot, int reopen_ms)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config(CC_PIX_YUYV, 320, 180, 30);
    c.reopen_ms = reopen_ms;
    struct cc_capture *cap = cc_capture_open(&c, &err);
    if (!CHECKF(cap != NULL, "open: %s", err.msg))
        return NULL;
    CHECK(cc_capture_start(cap, slot, &err));
    for (int i = 0; i < 3; i++) {
        struct cc_frame *f;
        if (CHECK(cc_frame_slot_take(slot, 3000, &f, &err) == CC_SLOT_FRAME))
            cc_frame_slot_release(slot, f);
    }
    CHECKF(cc_capture_set_ctrl(cap, "Disconnect", NULL, &err), "Disconnect: %s", err.msg);
    double end = now_s() + 5;
    while (cc_capture_get_stats(cap).lost == 0 && now_s() < end)
        sleep_ms(20);
    CHECK(cc_capture_get_stats(cap).lost == 1);
    return cap;
}

static bool run_shell(const char *cmd)
{
    return system(cmd) == 0;
}

// The camera does not come back: vivid re-registers its node as soon as the last user closes
// it after a Disconnect, so the module is removed while the capture retries. The capture then
// gives up with a clear error through the slot. Also: reopen_ms < 0 reports the loss at once.
static void test_disconnect_final(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct cc_capture *cap = disconnect_midstream(slot, -1);
    enum cc_slot_status st;
    struct cc_frame *f;
    while ((st = cc_frame_slot_take(slot, 5000, &f, &err)) == CC_SLOT_FRAME)
        cc_frame_slot_release(slot, f);
    printf("  without reopening: %s\n", err.msg);
    CHECK(st == CC_SLOT_CLOSED);
    CHECK(strstr(err.msg, "lost") && strstr(err.msg, "No such device"));
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);

    slot = cc_frame_slot_create(1, &err);
    double t0 = now_s();
    cap = disconnect_midstream(slot, 1500);
    // The capture closes its fd right after noticing; rmmod succeeds from then on.
    bool removed = false;
    for (int i = 0; i < 200 && !removed; i++) {
        removed = run_shell("rmmod vivid 2>/dev/null");
        if (!removed)
            sleep_ms(10);
    }
    CHECK(removed);
    int frames = 0;
    while ((st = cc_frame_slot_take(slot, 5000, &f, &err)) == CC_SLOT_FRAME && frames < 1000) {
        frames++;
        cc_frame_slot_release(slot, f);
    }
    printf("  after %.1f s: %s\n", now_s() - t0, err.msg);
    CHECK(st == CC_SLOT_CLOSED);
    CHECK(strstr(err.msg, "lost") && strstr(err.msg, "No such device") &&
          strstr(err.msg, "did not come back"));
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
    // A new open says the device is missing.
    struct cc_capture_config c = config(-1, 320, 180, 30);
    cap = cc_capture_open(&c, &err);
    CHECK(cap == NULL);
    printf("  open with vivid removed: %s\n", err.msg);
    CHECK(strstr(err.msg, "no such device /dev/video0") != NULL);
    cc_capture_destroy(cap);
    // Leave vivid loaded for whatever runs next.
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "insmod %s %s",
             getenv("CAMCLASS_VIVID_KO") ? getenv("CAMCLASS_VIVID_KO") : "vivid.ko",
             getenv("CAMCLASS_VIVID_ARGS") ? getenv("CAMCLASS_VIVID_ARGS") : "");
    CHECK(run_shell(cmd));
}

static bool reload_vivid(void)
{
    const char *ko = getenv("CAMCLASS_VIVID_KO"), *args = getenv("CAMCLASS_VIVID_ARGS");
    if (!ko || !args)
        return false;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rmmod vivid && insmod %s %s", ko, args);
    int rc = system(cmd);
    for (int i = 0; i < 50 && access("/dev/video0", F_OK) != 0; i++)
        sleep_ms(50);
    return rc == 0;
}

// The camera comes back (vivid reloaded while the capture retries): frames flow again.
static void test_disconnect_reopen(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct cc_capture *cap = disconnect_midstream(slot, 20000);
    if (!cap) {
        cc_frame_slot_destroy(slot);
        return;
    }
    uint64_t last = 0;
    struct cc_frame *f;
    while (cc_frame_slot_take(slot, 0, &f, &err) == CC_SLOT_FRAME) { // what came before
        last = f->sequence;
        cc_frame_slot_release(slot, f);
    }
    CHECKF(reload_vivid(), "reloading vivid failed (CAMCLASS_VIVID_KO=%s)",
           getenv("CAMCLASS_VIVID_KO") ? getenv("CAMCLASS_VIVID_KO") : "unset");
    double t0 = now_s();
    int n = 0;
    while (n < 5 && now_s() - t0 < 15) {
        enum cc_slot_status st = cc_frame_slot_take(slot, 1000, &f, &err);
        if (st == CC_SLOT_CLOSED)
            break;
        if (st == CC_SLOT_FRAME) {
            CHECKF(f->sequence > last, "sequence %llu after %llu", (unsigned long long)f->sequence,
                   (unsigned long long)last);
            last = f->sequence;
            n++;
            cc_frame_slot_release(slot, f);
        }
    }
    struct cc_capture_stats cs = cc_capture_get_stats(cap);
    printf("  back after %.1f s: %d frames, lost %llu reopened %llu (%s)\n", now_s() - t0, n,
           (unsigned long long)cs.lost, (unsigned long long)cs.reopened, err.msg);
    CHECKF(n == 5, "%d frames after the reload", n);
    CHECK(cs.reopened == 1);
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
}

/* ---------------------------------------------------------------------------------------------
 * vivid's error injection: bad buffers, driver drops, a fatal streaming error
 * ------------------------------------------------------------------------------------------- */

// Takes frames for about `seconds`, checking that sequence numbers increase; returns how many.
static int take_for(struct cc_frame_slot *slot, double seconds)
{
    struct cc_error err = {""};
    int n = 0;
    uint64_t last = 0;
    double end = now_s() + seconds;
    while (now_s() < end) {
        struct cc_frame *f;
        enum cc_slot_status st = cc_frame_slot_take(slot, 500, &f, &err);
        if (st == CC_SLOT_CLOSED) {
            CHECKF(false, "stream ended: %s", err.msg);
            break;
        }
        if (st == CC_SLOT_FRAME) {
            CHECKF(n == 0 || f->sequence > last, "sequence %llu after %llu",
                   (unsigned long long)f->sequence, (unsigned long long)last);
            last = f->sequence;
            n++;
            cc_frame_slot_release(slot, f);
        }
    }
    return n;
}

static void test_injected_errors(void)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config(CC_PIX_YUYV, 320, 180, 30);
    struct cc_capture *cap = cc_capture_open(&c, &err);
    if (!CHECKF(cap != NULL, "open: %s", err.msg))
        return;
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    CHECK(cc_capture_start(cap, slot, &err));
    CHECK(take_for(slot, 0.3) > 3);

    // A buffer flagged V4L2_BUF_FLAG_ERROR is skipped and counted; the stream goes on.
    CHECKF(cc_capture_set_ctrl(cap, "Inject V4L2_BUF_FLAG_ERROR", NULL, &err), "%s", err.msg);
    CHECK(take_for(slot, 0.5) > 5);
    struct cc_capture_stats s = cc_capture_get_stats(cap);
    CHECKF(s.errors == 1, "errors %llu", (unsigned long long)s.errors);

    // The driver drops half its buffers: gaps in the sequence numbers are counted.
    uint64_t before = s.driver_dropped;
    CHECKF(cc_capture_set_ctrl(cap, "Percentage of Dropped Buffers", "50", &err), "%s", err.msg);
    CHECK(take_for(slot, 1.0) > 3);
    CHECKF(cc_capture_set_ctrl(cap, "Percentage of Dropped Buffers", "0", &err), "%s", err.msg);
    // A value past int32 was cut to 32 bits (2^32 + 50 set 50): refused with the range now.
    CHECKF(!cc_capture_set_ctrl(cap, "Percentage of Dropped Buffers", "4294967346", &err) &&
               strstr(err.msg, "takes 0 to 100, not 4294967346"),
           "a control value past int32: \"%s\"", err.msg);
    s = cc_capture_get_stats(cap);
    CHECKF(s.driver_dropped >= before + 5, "driver dropped %llu",
           (unsigned long long)s.driver_dropped);

    // A fatal streaming error (EIO from DQBUF): handled like an unplug, reopened, frames go on.
    CHECKF(cc_capture_set_ctrl(cap, "Inject Fatal Streaming Error", NULL, &err), "%s", err.msg);
    int after = take_for(slot, 1.5);
    s = cc_capture_get_stats(cap);
    printf("  errors %llu, driver dropped %llu, lost %llu, reopened %llu, %d frames after the "
           "fatal error\n",
           (unsigned long long)s.errors, (unsigned long long)s.driver_dropped,
           (unsigned long long)s.lost, (unsigned long long)s.reopened, after);
    CHECKF(s.lost == 1 && s.reopened == 1, "lost %llu reopened %llu", (unsigned long long)s.lost,
           (unsigned long long)s.reopened);
    CHECK(after > 5);
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
}

/* ---------------------------------------------------------------------------------------------
 * Errors and listing
 * ------------------------------------------------------------------------------------------- */

static void test_missing_device(void)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config(-1, 640, 360, 30);
    c.device = "/dev/video9";
    struct cc_capture *cap = cc_capture_open(&c, &err);
    CHECK(cap == NULL);
    printf("  %s\n", err.msg);
    CHECKF(strstr(err.msg, "no such device /dev/video9") != NULL, "message: %s", err.msg);
    CHECK(strstr(err.msg, "--list-cameras") != NULL);
    // Not a camera at all.
    c.device = "/dev/null";
    cap = cc_capture_open(&c, &err);
    CHECK(cap == NULL);
    printf("  %s\n", err.msg);
    CHECK(strstr(err.msg, "not a video capture device") != NULL);
}

// As an unprivileged user (the guest's /dev/video0 is root-only, mode 0600): the 'video' hint.
static void test_permission(void)
{
    int pipefd[2];
    if (!CHECK(pipe(pipefd) == 0))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        struct cc_error err = {""};
        if (setgid(65534) != 0 || setuid(65534) != 0)
            snprintf(err.msg, sizeof(err.msg), "setuid failed: %s", strerror(errno));
        else {
            struct cc_capture_config c = config(-1, 320, 180, 30);
            struct cc_capture *cap = cc_capture_open(&c, &err);
            if (cap)
                snprintf(err.msg, sizeof(err.msg), "opened as uid 65534");
            cc_capture_destroy(cap);
        }
        ssize_t w = write(pipefd[1], err.msg, strlen(err.msg) + 1);
        _exit(w > 0 ? 0 : 1);
    }
    close(pipefd[1]);
    char msg[512] = "";
    ssize_t r = read(pipefd[0], msg, sizeof(msg) - 1);
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(r > 0);
    printf("  as uid 65534: %s\n", msg);
    CHECKF(strstr(msg, "permission denied opening /dev/video0") && strstr(msg, "'video' group"),
           "message: %s", msg);
}

static void test_busy(void)
{
    struct cc_error err = {""};
    struct cc_capture_config c = config(CC_PIX_YUYV, 320, 180, 30);
    struct cc_capture *a = cc_capture_open(&c, &err);
    CHECK(a != NULL);
    struct cc_capture *b = cc_capture_open(&c, &err);
    CHECK(b == NULL);
    printf("  second open while the first streams: %s\n", err.msg);
    CHECK(strstr(err.msg, "busy") != NULL);
    cc_capture_destroy(b);
    cc_capture_destroy(a);
}

static void test_list(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cc_error err = {""};
    bool ok = cc_capture_list(out, &err);
    fclose(out);
    CHECKF(ok, "list: %s", err.msg);
    CHECK(text && strstr(text, "/dev/video0: vivid"));
    CHECK(text && strstr(text, "  YUYV  "));
    CHECK(text && strstr(text, "  NV12  "));
    CHECK(text && strstr(text, "640x360: 40,"));
    CHECK(text && strstr(text, "320x180: 60,"));
    // The first lines, for the log.
    int lines = 0;
    for (char *p = text; p && *p && lines < 10; lines++) {
        char *nl = strchr(p, '\n');
        printf("  | %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(text);
}

/* ---------------------------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    void (*run)(void);
} tests[] = {
    // Order matters: the disconnect tests kill vivid; reopen reloads it, final leaves it dead.
    {"missing_device", test_missing_device},
    {"list", test_list},
    {"ctrl_set", test_ctrl_set},
    {"ctrl_errors", test_ctrl_errors},
    {"ctrl_list", test_ctrl_list},
    {"auto_choice", test_auto_choice},
    {"permission", test_permission},
    {"busy", test_busy},
    {"colours", test_colours},
    {"formats", test_formats},
    {"slow_consumer", test_slow_consumer},
    {"injected_errors", test_injected_errors},
    {"disconnect_reopen", test_disconnect_reopen},
    {"disconnect_final", test_disconnect_final},
};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int failed = 0, run = 0;
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        bool wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], tests[i].name) == 0;
        if (!wanted)
            continue;
        printf("TEST %s\n", tests[i].name);
        // The failed checks of this test, for its PASS/FAIL line (the capture thread never
        // calls CHECK).
        int before = tu_failures();
        double t0 = now_s();
        tests[i].run();
        bool ok = tu_failures() == before;
        printf("TEST %s: %s (%.1f s)\n", tests[i].name, ok ? "PASS" : "FAIL", now_s() - t0);
        failed += !ok;
        run++;
    }
    printf("%d of %d capture tests passed\n", run - failed, run);
    return tu_exit_code();
}
