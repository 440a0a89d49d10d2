/* camclass-capture — lists cameras, captures frames and prints what arrived, optionally writing
 * them to files. A tool for people and for collecting frames (in the vivid VM too:
 * tests/vm/run-vm.sh --output DIR --bin camclass-capture-static -- camclass-capture-static ...).
 *
 * Files written with --output DIR, by native format:
 *   RGB3, BGR3 -> frame-NNNNNN.ppm (BGR swapped to RGB)    GREY -> frame-NNNNNN.pgm
 *   MJPG       -> frame-NNNNNN.jpg                         YUYV -> capture.y4m (C422, planar)
 *   NV12       -> capture.y4m (C420, planar)               --raw: frame-NNNNNN.<fourcc> as is
 *
 * With --label NAME DIR: --count frames, --interval seconds apart, saved as JPEGs into the
 * labelled image folder DIR/NAME/ that camclass-train reads, through the sample store that
 * camclass --collect uses (sample_store.h: safe names, no overwrite, no half-written file).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capture.h"
#include "error.h"
#include "frame_slot.h"
#include "clock.h"
#include "sample_store.h"

#define MAX_CTRLS 16

struct options {
    struct cc_capture_config cap;
    int frames;      // how many frames to take
    int slow_ms;     // consumer delay per frame (shows latest-frame-wins drops)
    const char *out; // folder for frames, or NULL
    bool raw;        // write native bytes instead of ppm/pgm/y4m
    bool list_cameras, list_controls, quiet, help;
    const char *ctrls[MAX_CTRLS]; // "name=value"
    int n_ctrls;
    const char *label; // --label NAME: save into dir/NAME/ (sample_store.h); NULL: no
    const char *dir;   // DIR, the positional argument of --label
    int count;         // --count N: pictures to save (default 10)
    double interval;   // --interval S: seconds between pictures (default 1; 0: every frame)
};

static void usage(FILE *f)
{
    fprintf(f, "usage: camclass-capture [options]\n"
               "       camclass-capture --label NAME [--count N] [--interval S] [options] DIR\n"
               "  --list-cameras, --list  devices with their formats, sizes and frame rates\n"
               "  -d, --camera PATH     camera (default /dev/video0; also --device)\n"
               "  -s, --size WxH        requested size (default 640x480)\n"
               "  -r, --fps N           requested rate (default 30)\n"
               "  -f, --format FOURCC   insist on YUYV, MJPG, RGB3, BGR3, NV12 or GREY\n"
               "  -n, --frames N        frames to capture (default 10; 0: only negotiate)\n"
               "  -c, --set-ctrl N=V    set a control first (repeatable), e.g. test_pattern=3;\n"
               "                        a button needs no value (--set-ctrl disconnect)\n"
               "  --list-controls       the camera's controls and their values\n"
               "  -o, --output DIR      write frames (ppm/pgm/jpg, y4m for YUYV/NV12)\n"
               "  --raw                 with --output: native bytes, one file per frame\n"
               "  --slow MS             pretend inference takes MS per frame\n"
               "  -q, --quiet           no per-frame lines\n"
               "  --label NAME          save pictures (JPEG) into DIR/NAME/, the folder\n"
               "                        camclass-train reads (NAME: one folder name)\n"
               "  --count N             with --label: pictures to save (default 10)\n"
               "  --interval S          with --label: seconds between them (default 1; 0:\n"
               "                        every frame)\n");
}

/* --count N (1..100000) or --interval S (0..86400). */
static bool parse_amount(bool count, const char *arg, struct options *o, struct cc_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (count && (end == arg || *end || errno || v < 1 || v > 100000 || v != (int)v))
        return cc_error_set(err, "--count %s: give a whole number of pictures, 1 to 100000", arg);
    if (!count && (end == arg || *end || errno || !(v >= 0 && v <= 86400)))
        return cc_error_set(err, "--interval %s: give seconds between pictures, 0 to 86400", arg);
    if (count)
        o->count = (int)v;
    else
        o->interval = v;
    return true;
}

enum { OPT_LIST = 256, OPT_LISTCTRL, OPT_RAW, OPT_SLOW, OPT_LABEL, OPT_COUNT, OPT_INTERVAL };

/* A whole number in [lo, hi] as option name's value. */
static bool parse_int(const char *name, const char *arg, int lo, int hi, int *out,
                      struct cc_error *err)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || errno || v < lo || v > hi)
        return cc_error_set(err, "%s %s: give a whole number from %d to %d", name, arg, lo, hi);
    *out = (int)v;
    return true;
}

/* -f FOURCC: one of the formats capture.h knows (MJPEG also for MJPG). */
static bool parse_format(const char *arg, struct cc_capture_config *cap, struct cc_error *err)
{
    cap->format = -1;
    for (int i = 0; i < CC_PIX_COUNT; i++)
        if (strcasecmp(arg, cc_pixfmt_name((enum cc_pixfmt)i)) == 0)
            cap->format = i;
    if (strcasecmp(arg, "MJPEG") == 0)
        cap->format = CC_PIX_MJPEG;
    if (cap->format < 0)
        return cc_error_set(err, "--format %s: use YUYV, MJPG, RGB3, BGR3, NV12 or GREY", arg);
    return true;
}

/* The camera's settings: -d, -s, -r, -f. */
static bool parse_camera_option(int c, const char *arg, struct cc_capture_config *cap,
                                struct cc_error *err)
{
    switch (c) {
    case 'd':
        cap->device = arg;
        return true;
    case 's':
        if (sscanf(arg, "%dx%d", &cap->width, &cap->height) != 2 || cap->width <= 0 ||
            cap->height <= 0)
            return cc_error_set(err, "--size %s: give WIDTHxHEIGHT, e.g. 640x480", arg);
        return true;
    case 'r':
        cap->fps = atof(arg);
        return cap->fps > 0 || cc_error_set(err, "--fps %s: give a positive rate, e.g. 30", arg);
    default:
        return parse_format(arg, cap, err);
    }
}

/* Everything else: what to do and where to write. */
static bool parse_tool_option(int c, const char *arg, struct options *o, struct cc_error *err)
{
    switch (c) {
    case OPT_LIST:
        o->list_cameras = true;
        return true;
    case OPT_LISTCTRL:
        o->list_controls = true;
        return true;
    case OPT_RAW:
        o->raw = true;
        return true;
    case 'q':
        o->quiet = true;
        return true;
    case 'h':
        o->help = true;
        return true;
    case 'o':
        o->out = arg;
        return true;
    case OPT_LABEL:
        o->label = arg;
        return true;
    case 'n':
        return parse_int("--frames", arg, 0, 100000000, &o->frames, err);
    case OPT_SLOW:
        return parse_int("--slow", arg, 0, 60000, &o->slow_ms, err);
    case OPT_COUNT:
    case OPT_INTERVAL:
        return parse_amount(c == OPT_COUNT, arg, o, err);
    case 'c':
        if (o->n_ctrls == MAX_CTRLS)
            return cc_error_set(err, "at most %d --set-ctrl options", MAX_CTRLS);
        o->ctrls[o->n_ctrls++] = arg;
        return true;
    default:
        return cc_error_set(err, "unknown option, or one without its value (see --help)");
    }
}

/* After the options: DIR with --label, nothing without. */
static bool parse_operands(int argc, char **argv, struct options *o, struct cc_error *err)
{
    if (o->label && optind == argc - 1)
        o->dir = argv[optind++];
    else if (o->label && optind == argc)
        return cc_error_set(err,
                            "--label %s needs the folder to save into: camclass-capture "
                            "--label %s DIR",
                            o->label, o->label);
    if (optind < argc)
        return cc_error_set(err, "unexpected argument '%s'%s (see --help)", argv[optind],
                            o->label ? "" : "; a folder is for --label NAME DIR");
    return true;
}

static bool parse(int argc, char **argv, struct options *o, struct cc_error *err)
{
    static const struct option longs[] = {
        {"list-cameras", no_argument, NULL, OPT_LIST},
        {"list", no_argument, NULL, OPT_LIST}, // an exact name: not ambiguous with --list-controls
        {"label", required_argument, NULL, OPT_LABEL},
        {"count", required_argument, NULL, OPT_COUNT},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"list-controls", no_argument, NULL, OPT_LISTCTRL},
        {"device", required_argument, NULL, 'd'},
        {"camera", required_argument, NULL, 'd'}, // camclass's name for it
        {"size", required_argument, NULL, 's'},
        {"fps", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'f'},
        {"frames", required_argument, NULL, 'n'},
        {"set-ctrl", required_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"raw", no_argument, NULL, OPT_RAW},
        {"slow", required_argument, NULL, OPT_SLOW},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    o->cap = cc_capture_config_default();
    o->cap.log = stderr;
    o->frames = 10;
    o->count = 10;
    o->interval = 1;
    opterr = 0; // our one line, not getopt's and the usage
    int c;
    while ((c = getopt_long(argc, argv, "d:s:r:f:n:c:o:qh", longs, NULL)) != -1) {
        bool camera = c == 'd' || c == 's' || c == 'r' || c == 'f';
        if (c == '?')
            return cc_error_set(err, "unknown option, or one without its value: '%s' (see --help)",
                                argv[optind - 1]);
        if (!(camera ? parse_camera_option(c, optarg, &o->cap, err)
                     : parse_tool_option(c, optarg, o, err)))
            return false;
    }
    return parse_operands(argc, argv, o, err);
}

/* ---------------------------------------------------------------------------------------------
 * Writing frames
 * ------------------------------------------------------------------------------------------- */

struct writer {
    const char *dir;
    bool raw;
    FILE *y4m;       // open while YUYV/NV12 frames go to capture.y4m
    uint8_t *planes; // scratch for planar repacking, (w*h*2) bytes
};

static bool write_file(const char *path, const char *header, const uint8_t *a, size_t na,
                       struct cc_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return cc_error_set(err, "cannot write %s: %s", path, strerror(errno));
    bool ok = (!header || fputs(header, f) >= 0) && fwrite(a, 1, na, f) == na;
    ok = (fclose(f) == 0) && ok;
    return ok ? true
              : cc_error_set(err, "writing %s failed: %s (disk full?)", path, strerror(errno));
}

static bool write_frame(struct writer *w, const struct cc_frame *f, double fps, int index,
                        struct cc_error *err)
{
    char path[1024], header[128];
    const char *name = cc_pixfmt_name(f->format);
    int W = f->width, H = f->height;
    if (w->raw || f->format == CC_PIX_MJPEG) {
        snprintf(path, sizeof(path), "%s/frame-%06d.%s", w->dir, index,
                 f->format == CC_PIX_MJPEG && !w->raw ? "jpg" : name);
        return write_file(path, NULL, f->data, f->size, err);
    }
    if (f->format == CC_PIX_GREY || f->format == CC_PIX_RGB24 || f->format == CC_PIX_BGR24) {
        int bpp = f->format == CC_PIX_GREY ? 1 : 3;
        for (int y = 0; y < H; y++) { // tight rows, RGB order
            const uint8_t *s = f->data + (size_t)y * f->stride;
            uint8_t *d = w->planes + (size_t)y * W * bpp;
            if (f->format == CC_PIX_BGR24)
                for (int x = 0; x < W; x++)
                    d[3 * x] = s[3 * x + 2], d[3 * x + 1] = s[3 * x + 1], d[3 * x + 2] = s[3 * x];
            else
                memcpy(d, s, (size_t)W * bpp);
        }
        snprintf(path, sizeof(path), "%s/frame-%06d.%s", w->dir, index, bpp == 1 ? "pgm" : "ppm");
        snprintf(header, sizeof(header), "P%d\n%d %d\n255\n", bpp == 1 ? 5 : 6, W, H);
        return write_file(path, header, w->planes, (size_t)W * H * bpp, err);
    }
    // YUYV and NV12: planar Y, U, V into one y4m stream.
    if (!w->y4m) {
        snprintf(path, sizeof(path), "%s/capture.y4m", w->dir);
        w->y4m = fopen(path, "wb");
        if (!w->y4m)
            return cc_error_set(err, "cannot write %s: %s", path, strerror(errno));
        fprintf(w->y4m, "YUV4MPEG2 W%d H%d F%d:1000 Ip A1:1 %s\n", W, H,
                (int)(fps > 0 ? fps * 1000 : 30000), f->format == CC_PIX_YUYV ? "C422" : "C420");
    }
    uint8_t *Y = w->planes, *U = Y + (size_t)W * H, *V;
    size_t n;
    if (f->format == CC_PIX_YUYV) {
        V = U + (size_t)W / 2 * H;
        for (int y = 0; y < H; y++) {
            const uint8_t *s = f->data + (size_t)y * f->stride;
            for (int x = 0; x < W / 2; x++) {
                Y[(size_t)y * W + 2 * x] = s[4 * x];
                U[(size_t)y * (W / 2) + x] = s[4 * x + 1];
                Y[(size_t)y * W + 2 * x + 1] = s[4 * x + 2];
                V[(size_t)y * (W / 2) + x] = s[4 * x + 3];
            }
        }
        n = (size_t)W * H * 2;
    } else {
        V = U + (size_t)(W / 2) * (H / 2);
        for (int y = 0; y < H; y++)
            memcpy(Y + (size_t)y * W, f->data + (size_t)y * f->stride, (size_t)W);
        const uint8_t *uv = f->data + (size_t)f->stride * H;
        for (int y = 0; y < H / 2; y++)
            for (int x = 0; x < W / 2; x++) {
                U[(size_t)y * (W / 2) + x] = uv[(size_t)y * f->stride + 2 * x];
                V[(size_t)y * (W / 2) + x] = uv[(size_t)y * f->stride + 2 * x + 1];
            }
        n = (size_t)W * H + 2 * (size_t)(W / 2) * (H / 2);
    }
    if (fputs("FRAME\n", w->y4m) < 0 || fwrite(w->planes, 1, n, w->y4m) != n)
        return cc_error_set(err, "writing %s/capture.y4m failed: %s", w->dir, strerror(errno));
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------------------------- */

/* --label: o->count frames at least o->interval seconds apart saved into the store (each
 * said on stdout). False with err when a frame does not come or a picture is not written. */
static bool collect(const struct options *o, struct cc_frame_slot *slot, const char *device,
                    struct cc_sample_store *store, struct cc_error *err)
{
    int64_t gap = (int64_t)(o->interval * 1e9), last = 0;
    for (int n = 0; n < o->count;) {
        struct cc_frame *f;
        enum cc_slot_status st = cc_frame_slot_take(slot, 5000, &f, err);
        if (st == CC_SLOT_TIMEOUT)
            return cc_error_set(err,
                                "%s delivered no frame for 5 s; check that no other "
                                "program uses it",
                                device);
        if (st == CC_SLOT_CLOSED)
            return false; // err holds the capture's message
        int64_t now = cc_now_ns();
        bool take = n == 0 || now - last >= gap;
        char file[CC_SAMPLE_STORE_FILE_MAX];
        enum cc_sample_status saved = CC_SAMPLE_SAVED;
        if (take)
            saved = cc_sample_store_save_frame(store, o->label, f, file, sizeof(file), err);
        cc_frame_slot_release(slot, f);
        if (!take)
            continue;
        if (saved != CC_SAMPLE_SAVED)
            return false;
        last = now, n++;
        if (!o->quiet)
            printf("saved %s/%s/%s (%d of %d)\n", o->dir, o->label, file, n, o->count);
    }
    return true;
}

/* --set-ctrl NAME=VALUE, each in order (a button: NAME alone). */
static bool set_controls(struct cc_capture *cap, const struct options *o, struct cc_error *err)
{
    for (int i = 0; i < o->n_ctrls; i++) {
        char name[128];
        const char *eq = strchr(o->ctrls[i], '=');
        size_t len = eq ? (size_t)(eq - o->ctrls[i]) : strlen(o->ctrls[i]);
        snprintf(name, sizeof(name), "%.*s", (int)len, o->ctrls[i]);
        if (!cc_capture_set_ctrl(cap, name, eq ? eq + 1 : "1", err))
            return false;
    }
    return true;
}

/* --output DIR: the folder and the writer's scratch for a frame of info's size. */
static bool open_output(const struct options *o, const struct cc_capture_info *info,
                        struct writer *w, struct cc_error *err)
{
    if (mkdir(o->out, 0777) < 0 && errno != EEXIST)
        return cc_error_set(err, "cannot create %s: %s", o->out, strerror(errno));
    w->planes = malloc((size_t)info->width * info->height * 3);
    return w->planes || cc_error_set(err, "out of memory");
}

/* Takes o->frames frames from the started camera, printing and writing each, then the rates. */
static bool take_frames(const struct options *o, struct cc_capture *cap, struct cc_frame_slot *slot,
                        struct writer *w, struct cc_error *err)
{
    const struct cc_capture_info *info = cc_capture_get_info(cap);
    int64_t t0 = cc_now_ns(), first_ts = 0, last_ts = 0;
    for (int n = 0; n < o->frames; n++) {
        struct cc_frame *f;
        enum cc_slot_status st = cc_frame_slot_take(slot, 5000, &f, err);
        if (st == CC_SLOT_TIMEOUT)
            return cc_error_set(err,
                                "%s delivered no frame for 5 s; check that it is not covered by "
                                "another program and try a lower --fps",
                                info->device);
        if (st == CC_SLOT_CLOSED)
            return false; // err holds the capture's message
        int64_t latency = cc_now_ns() - f->timestamp_ns;
        first_ts = n == 0 ? f->timestamp_ns : first_ts;
        last_ts = f->timestamp_ns;
        if (!o->quiet)
            printf("frame %d: seq %llu  t %.3f s  %s %dx%d  %zu bytes  latency %.1f ms\n", n,
                   (unsigned long long)f->sequence, (double)(f->timestamp_ns - first_ts) / 1e9,
                   cc_pixfmt_name(f->format), f->width, f->height, f->size, (double)latency / 1e6);
        bool wrote = !o->out || write_frame(w, f, info->fps, n, err);
        if (o->slow_ms > 0) {
            struct timespec ts = {o->slow_ms / 1000, (long)(o->slow_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        cc_frame_slot_release(slot, f);
        if (!wrote)
            return false;
    }
    cc_capture_stop(cap);
    struct cc_frame_slot_stats ss = cc_frame_slot_get_stats(slot);
    struct cc_capture_stats cs = cc_capture_get_stats(cap);
    double secs = (double)(last_ts - first_ts) / 1e9;
    printf("%d frames, %.1f fps by driver timestamps, %.1f s wall; dropped: %llu by the slot "
           "(consumer slower), %llu by the driver; camera lost %llu times\n",
           o->frames, secs > 0 ? (o->frames - 1) / secs : 0, (double)(cc_now_ns() - t0) / 1e9,
           (unsigned long long)ss.dropped, (unsigned long long)cs.driver_dropped,
           (unsigned long long)cs.lost);
    if (o->out)
        printf("frames written to %s\n", o->out);
    return true;
}

/* Opens the camera, applies the controls, then captures (or, with a store, collects). */
static bool run(struct options *o, struct cc_sample_store *store, struct cc_error *err)
{
    if (o->help) {
        usage(stdout);
        return true;
    }
    if (o->list_cameras)
        return cc_capture_list(stdout, err);
    struct cc_frame_slot *slot = NULL;
    struct writer w = {.dir = o->out, .raw = o->raw};
    struct cc_capture *cap = cc_capture_open(&o->cap, err);
    if (!cap)
        return false;
    const struct cc_capture_info *info = cc_capture_get_info(cap);
    printf("%s\n", info->line);
    bool ok = set_controls(cap, o, err) &&
              (!o->list_controls || cc_capture_list_ctrls(cap, stdout, err)) &&
              (!o->out || open_output(o, info, &w, err));
    if (ok && (o->frames > 0 || store)) {
        ok = (slot = cc_frame_slot_create(1, err)) && cc_capture_start(cap, slot, err);
        ok = ok && (store ? collect(o, slot, info->device, store, err)
                          : take_frames(o, cap, slot, &w, err));
    }
    if (w.y4m && fclose(w.y4m) != 0 && ok)
        ok = cc_error_set(err, "writing %s/capture.y4m failed: %s", o->out, strerror(errno));
    free(w.planes);
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
    return ok;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct options o = {0};
    struct cc_error err = {""};
    if (!parse(argc, argv, &o, &err)) { // bad usage: 2, as camclass and camclass-bench
        fprintf(stderr, "camclass-capture: %s\n", err.msg);
        return 2;
    }
    // --label: the name and the folder are checked before the camera opens (bad usage: 2).
    struct cc_sample_store *store = NULL;
    if (o.label && (!cc_sample_store_check_label(o.label, "--label", &err) ||
                    !(store = cc_sample_store_open(o.dir, NULL, &err)))) {
        fprintf(stderr, "camclass-capture: %s\n", err.msg);
        return 2;
    }
    bool ok = run(&o, store, &err);
    cc_sample_store_destroy(store);
    if (!ok) {
        fprintf(stderr, "camclass-capture: %s\n", err.msg);
        return 1;
    }
    return 0;
}
