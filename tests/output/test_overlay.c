/* camclass — the SDL2 overlay, drawn with SDL's offscreen driver and a software renderer.
 *
 * Usage: test_overlay SAMPLE_PNG SAMPLE_JPG OUTDIR
 * A frame from a file source (the colour-bars sample) and a crafted result are drawn at
 * 640×480, 1280×720, 800×480 (a Pi touchscreen) and 480×320 and saved as PNG
 * (OUTDIR/overlay-WxH.png, kept for people to look at); at each size the panel's parts (header,
 * rows, stats, key hints) are inside the window, apart, and hold all that is drawn there;
 * the saved files are read back and their pixels checked: the frame at its letterboxed place,
 * bar lengths proportional to the scores, text in the label and stats regions, the stats region
 * (and only it) changing with the fps, the header (and only it) with a result computed on
 * another backend (the engine's switch to the CPU). The default size fits the display; texts (a
 * long model name ellipsized once, a file source's name, fewer classes than top-k, the "saved NAME"
 * notice, fps frozen while paused). Then the keys (f draws for the fullscreen size and back;
 * pause keeps the paused picture, s writes a screenshot, q/Esc/close quit), YUYV and MJPEG
 * frames, a malformed frame, no display, and a missing font.
 * The offscreen picture (overlay_offscreen.h): drawn with no display at all (DISPLAY,
 * WAYLAND_DISPLAY and SDL_VIDEODRIVER unset, SDL's video never initialized), it passes the same
 * pixel checks at 800×480 and 480×320 and equals the software-rendered window's picture of the
 * same size pixel for pixel.
 *
 * One program in three files: this one (main; the pictures, texts, the offscreen picture, the
 * default size, errors), test_overlay_keys.c (keys and frame formats) and overlay_checks.c
 * (the helpers and picture checks both use).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <SDL.h>

#include "convert.h"
#include "decode.h"
#include "overlay.h"
#include "overlay_checks.h"
#include "overlay_offscreen.h"
#include "source_file.h"
#include "testutil.h"

static const char *sample_png, *sample_jpg, *outdir;

/* ---------------------------------------------------------------------------------------- */
/* The pictures and texts                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Draws the bars sample with the crafted result at w × h; checks the picture; then draws it
 * with another camera fps and checks that exactly the stats region changed. */
static void test_picture(int w, int h, const struct cc_frame *frame, bool software)
{
    struct cc_overlay *ov = ovt_open_overlay(w, h, NULL, software);
    if (!ov)
        return;
    struct cc_error err = {{0}};
    struct cc_result r = ovt_crafted_result(30.0);
    CHECKF(cc_overlay_present(ov, frame, &r, &err), "present: %s", err.msg);
    struct cc_overlay_layout L;
    cc_overlay_layout(ov, &L);
    CHECKF(L.width == w && L.height == h, "output %dx%d", L.width, L.height);

    char path[4096];
    printf("%dx%d: %s renderer\n", w, h, cc_overlay_renderer_name(ov));
    snprintf(path, sizeof(path), "%s/overlay-%dx%d.png", outdir, w, h);
    struct cc_image a = {0}, b = {0};
    if (ovt_save_and_load(ov, path, &a) && CHECK(a.width == w && a.height == h)) {
        ovt_check_frame(&a, &L, frame->width, frame->height);
        ovt_check_panel(&a, &L, &r);
        ovt_check_layout(&a, &L);
    }

    // Another camera fps: the stats region changes, nothing else does.
    r = ovt_crafted_result(12.5);
    CHECKF(cc_overlay_present(ov, NULL, &r, &err), "present: %s", err.msg);
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-fps.png", outdir, w, h);
    if (a.pixels && ovt_save_and_load(ov, path, &b) && CHECK(b.width == w && b.height == h)) {
        int in = 0, out = 0;
        const struct cc_overlay_rect s = L.stats;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (memcmp(ovt_px(&a, x, y), ovt_px(&b, x, y), 3)) {
                    bool inside = x >= s.x && x < s.x + s.w && y >= s.y && y < s.y + s.h;
                    in += inside;
                    out += !inside;
                }
        CHECKF(in > 20, "fps 30 -> 12.5 changed %d pixels in the stats region", in);
        CHECKF(out == 0, "fps 30 -> 12.5 changed %d pixels outside the stats region", out);
    }

    // The result names the CPU backend (the engine switched from Vulkan mid-run): the header
    // changes ("backend: cpu (vulkan failed)", no device), nothing else does.
    r = ovt_crafted_result(30.0);
    r.backend = "cpu";
    CHECKF(cc_overlay_present(ov, NULL, &r, &err), "present: %s", err.msg);
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-switched.png", outdir, w, h);
    struct cc_image c = {0};
    if (a.pixels && ovt_save_and_load(ov, path, &c) && CHECK(c.width == w && c.height == h)) {
        int in = 0, out = 0;
        const struct cc_overlay_rect hd = L.header;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (memcmp(ovt_px(&a, x, y), ovt_px(&c, x, y), 3)) {
                    bool inside = x >= hd.x && x < hd.x + hd.w && y >= hd.y && y < hd.y + hd.h;
                    in += inside;
                    out += !inside;
                }
        CHECKF(in > 20, "backend vulkan -> cpu changed %d pixels in the header", in);
        CHECKF(out == 0, "backend vulkan -> cpu changed %d pixels outside the header", out);
    }
    cc_image_finish(&c);
    cc_image_finish(&a);
    cc_image_finish(&b);
    cc_overlay_destroy(ov);
}

/* --top-k 16 at the least size: the font shrinks before rows are left out (at 12 px only 6
 * of 16 fitted), and no row is drawn over the stats. */
static void test_many_rows(const struct cc_frame *frame)
{
    const struct cc_overlay_config cfg = {.width = CC_OVERLAY_MIN_W,
                                          .height = CC_OVERLAY_MIN_H,
                                          .model_name = "m",
                                          .top_k = 16,
                                          .classes = 19,
                                          .software = true};
    struct cc_overlay *ov = ovt_open_config(&cfg);
    if (!ov)
        return;
    struct cc_error err = {{0}};
    struct cc_result r = ovt_crafted_result(30.0);
    for (int i = r.n_top; i < 16; i++)
        r.top[i] = (struct cc_result_class){.index = i, .label = "another class", .score = 0.01f};
    r.n_top = 16;
    struct cc_overlay_layout L;
    CHECK(cc_overlay_present(ov, frame, &r, &err));
    cc_overlay_layout(ov, &L);
    CHECKF(L.n_rows >= 9, "480x320, top-k 16: %d rows (the font shrinks first)", L.n_rows);
    const struct cc_overlay_rect *last = &L.bar[L.n_rows - 1];
    CHECKF(L.n_rows > 0 && last->y + last->h <= L.stats.y, "last bar ends at %d, stats at %d",
           last->y + last->h, L.stats.y);
    cc_overlay_destroy(ov);
}

/* Texts: a long model name ellipsized once, a file source named as a file, a model with fewer
 * classes than top_k, the "saved NAME" notice for about a second, fps frozen while paused. */
static void test_texts(const struct cc_frame *frame)
{
    char shots[4096], path[4200];
    snprintf(shots, sizeof(shots), "%s/notice-XXXXXX", outdir);
    if (!CHECKF(mkdtemp(shots) != NULL, "mkdtemp %s", shots))
        return;
    // Dots everywhere: wherever the cut falls, it must not leave "x.…" (which reads "x....").
    const char *model = "selftest_mobilenet_v2_0.35.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t";
    const struct cc_overlay_config cfg = {.width = 480,
                                          .height = 320,
                                          .model_name = model,
                                          .backend_name = "cpu",
                                          .device_name = "CPU",
                                          .top_k = 5,
                                          .classes = 3,
                                          .source_label = "a-directory-of-frames-with-a-long-name/",
                                          .screenshot_dir = shots,
                                          .software = true};
    struct cc_overlay *ov = ovt_open_config(&cfg);
    if (!ov)
        return;
    struct cc_error err = {{0}}, msg = {{0}};
    struct cc_overlay_layout L;
    CHECK(cc_overlay_present(ov, frame, NULL, &err));
    cc_overlay_layout(ov, &L);
    CHECKF(L.n_rows == 3, "3 classes, top-k 5: %d rows before a result", L.n_rows);

    struct cc_result r = ovt_crafted_result(30.0);
    r.n_top = 2; // a result with fewer classes still: only those rows
    CHECK(cc_overlay_present(ov, frame, &r, &err));
    cc_overlay_layout(ov, &L);
    CHECKF(L.n_rows == 2, "n_top 2: %d rows", L.n_rows);
    const char *ell = strstr(L.title, "\u2026");
    CHECKF(ell && ell > L.title && !strchr("._- ", ell[-1]) && !strstr(ell + 1, "\u2026") &&
               ell[strlen("\u2026")] == '\0' && !strstr(L.title, ".."),
           "title \"%s\"", L.title);
    printf("480x320 title: %s\n", L.title);
    // The file source's line: its name (shortened first), then the figure; never "camera".
    size_t sl = strlen(L.source_line);
    CHECKF(!strstr(L.source_line, "camera") && !strncmp(L.source_line, "a-directory", 11) &&
               sl > 8 && !strcmp(L.source_line + sl - 8, "30.0 fps"),
           "source line \"%s\"", L.source_line);
    printf("480x320 source line: %s\n", L.source_line);
    struct cc_image im = {0}, plain = {0}; // plain: the picture without a notice
    snprintf(path, sizeof(path), "%s/overlay-480x320-texts.png", outdir);
    if (ovt_save_and_load(ov, path, &plain))
        ovt_check_layout(&plain, &L);

    // Paused: the fps line stays as it was, whatever results come, until p again.
    char before[160];
    snprintf(before, sizeof(before), "%s", L.source_line);
    ovt_push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_PAUSED);
    for (int i = 0; i < 3; i++) {
        struct cc_result later = ovt_crafted_result(1.0 + i);
        CHECK(cc_overlay_present(ov, NULL, &later, &err));
        cc_overlay_layout(ov, &L);
        CHECKF(!strcmp(L.source_line, before), "paused: \"%s\", was \"%s\"", L.source_line, before);
    }
    ovt_push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_RESUMED);
    struct cc_result later = ovt_crafted_result(12.5);
    CHECK(cc_overlay_present(ov, NULL, &later, &err));
    cc_overlay_layout(ov, &L);
    CHECKF(strstr(L.source_line, "12.5 fps") != NULL, "resumed: \"%s\"", L.source_line);

    // s: "saved NAME" over the foot of the frame for about a second; the file lacks it.
    ovt_push_key(SDLK_s);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_SCREENSHOT);
    const char *saved = strstr(msg.msg, "saved to ");
    cc_overlay_layout(ov, &L);
    const char *base = saved ? strrchr(saved, '/') : NULL;
    CHECKF(base && !strncmp(L.notice_text, "saved ", 6) && !strcmp(L.notice_text + 6, base + 1),
           "notice \"%s\" for %s", L.notice_text, msg.msg);
    CHECK(ovt_inside(L.notice, L.width, L.height) && L.notice.x + L.notice.w <= L.panel.x);
    snprintf(path, sizeof(path), "%s/overlay-480x320-notice.png", outdir);
    if (ovt_save_and_load(ov, path, &im))
        CHECKF(ovt_count_not(&im, L.notice, L.background_rgb) > 100 &&
                   ovt_count_not(&im, L.notice, L.panel_rgb) > 50,
               "no notice drawn");
    cc_image_finish(&im);
    if (base) {
        size_t size;
        uint8_t *data = tu_read_file(saved + 9, &size);
        if (CHECK(data && cc_decode_png(data, size, saved + 9, &im, &err)) && plain.pixels) {
            int diff = 0;
            for (int y = L.notice.y; y < L.notice.y + L.notice.h; y++)
                for (int x = L.notice.x; x < L.notice.x + L.notice.w; x++)
                    diff += memcmp(ovt_px(&im, x, y), ovt_px(&plain, x, y), 3) != 0;
            CHECKF(diff == 0, "the saved picture shows the notice (%d pixels)", diff);
        }
        free(data);
        cc_image_finish(&im);
        unlink(saved + 9);
    }
    SDL_Delay(CC_OVERLAY_NOTICE_MS + 200);
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    cc_overlay_layout(ov, &L);
    CHECKF(L.notice_text[0] == '\0', "notice still shown: \"%s\"", L.notice_text);
    cc_image_finish(&plain);
    rmdir(shots);
    cc_overlay_destroy(ov);
}

/* ---------------------------------------------------------------------------------------- */
/* The offscreen picture, the default size, errors                                         */
/* ---------------------------------------------------------------------------------------- */

/* The offscreen picture at w × h, drawn with no display: the picture's checks, then the window
 * of the same size (software renderer) must show exactly the same pixels. */
static void test_offscreen(int w, int h, const struct cc_frame *frame)
{
    const char *keep[3] = {"DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        saved[i] = getenv(keep[i]) ? strdup(getenv(keep[i])) : NULL;
        unsetenv(keep[i]);
    }
    // With the key hints, as the window draws them, to compare the two pixel for pixel.
    const struct cc_overlay_config cfg = {.model_name = "mobilenet_v3_small",
                                          .backend_name = "vulkan",
                                          .device_name = "llvmpipe (LLVM 15.0.6, 256 bits)",
                                          .top_k = 5,
                                          .key_hints = true};
    struct cc_error err = {{0}};
    struct cc_overlay_offscreen *o = cc_overlay_offscreen_create(&cfg, w, h, &err);
    struct cc_image off = {.width = w, .height = h, .channels = 3};
    off.pixels = calloc((size_t)w * h, 3);
    struct cc_result r = ovt_crafted_result(30.0);
    struct cc_overlay_layout L;
    bool drawn = CHECKF(o != NULL, "offscreen %dx%d: %s", w, h, err.msg) &&
                 CHECKF(cc_overlay_render(o, frame, &r, off.pixels, w * 3, &err),
                        "offscreen render: %s", err.msg);
    CHECKF(SDL_WasInit(SDL_INIT_VIDEO) == 0, "offscreen %dx%d initialized SDL's video", w, h);
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(keep[i], saved[i], 1);
        free(saved[i]);
    }
    if (drawn) {
        cc_overlay_offscreen_layout(o, &L);
        CHECKF(L.width == w && L.height == h, "offscreen layout %dx%d", L.width, L.height);
        ovt_check_frame(&off, &L, frame->width, frame->height);
        ovt_check_panel(&off, &L, &r);
        ovt_check_layout(&off, &L);
        // A frame from a stride wider than its rows, and a later result: the picture follows.
        struct cc_result r2 = ovt_crafted_result(12.5);
        r2.top[0].score = 0.25f;
        uint8_t *again = calloc((size_t)w * (h + 1), 4);
        CHECK(again && cc_overlay_render(o, NULL, &r2, again, w * 4, &err));
        if (again) {
            struct cc_image a2 = {.width = w, .height = h, .channels = 3};
            a2.pixels = malloc((size_t)w * h * 3);
            for (int y = 0; a2.pixels && y < h; y++)
                memcpy(a2.pixels + (size_t)y * w * 3, again + (size_t)y * w * 4, (size_t)w * 3);
            CHECKF(a2.pixels && ovt_bar_length(&a2, &L, 0) == (int)(0.25f * L.bar[0].w + 0.5f),
                   "offscreen: bar 0 after a new result");
            free(a2.pixels);
        }
        free(again);
    }

    // The window of the same size shows the same picture, pixel for pixel.
    struct cc_overlay *ov = ovt_open_overlay(w, h, NULL, true);
    struct cc_image win = {0};
    char path[4096];
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-window.png", outdir, w, h);
    if (ov && drawn && CHECK(cc_overlay_present(ov, frame, &r, &err)) &&
        ovt_save_and_load(ov, path, &win) && CHECK(win.width == w && win.height == h)) {
        int diff = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                diff += memcmp(ovt_px(&win, x, y), ovt_px(&off, x, y), 3) != 0;
        CHECKF(diff == 0, "%dx%d: window and offscreen pictures differ in %d pixels", w, h, diff);
        printf("%dx%d: offscreen picture = window picture\n", w, h);
    }
    cc_image_finish(&win);
    cc_overlay_destroy(ov);
    free(off.pixels);
    cc_overlay_offscreen_destroy(o);
}

/* The pictures --output records and /stream sends (the offscreen overlay as they make it, no
 * key_hints): no key hints, since no key works there; the stats at the panel's foot instead. */
static void test_no_key_hints(int w, int h, const struct cc_frame *frame)
{
    const struct cc_overlay_config cfg = {.model_name = "m", .top_k = 5};
    struct cc_error err = {{0}};
    struct cc_overlay_offscreen *o = cc_overlay_offscreen_create(&cfg, w, h, &err);
    struct cc_image im = {.width = w, .height = h, .channels = 3};
    im.pixels = calloc((size_t)w * h, 3);
    struct cc_result r = ovt_crafted_result(30.0);
    if (CHECKF(o && im.pixels && cc_overlay_render(o, frame, &r, im.pixels, w * 3, &err),
               "offscreen %dx%d: %s", w, h, err.msg)) {
        struct cc_overlay_layout L;
        cc_overlay_offscreen_layout(o, &L);
        CHECKF(L.help.h == 0, "%dx%d without key hints: a help area %dx%d", w, h, L.help.w,
               L.help.h);
        // Below the stats, to the panel's foot, nothing but the panel's colour.
        struct cc_overlay_rect foot = {L.panel.x, L.stats.y + L.stats.h, L.panel.w,
                                       L.panel.y + L.panel.h - (L.stats.y + L.stats.h)};
        CHECKF(foot.h >= 0 && ovt_count_not(&im, foot, L.panel_rgb) == 0,
               "%dx%d: something drawn below the stats without key hints", w, h);
        ovt_check_layout(&im, &L);
        CHECKF(strcmp(L.first_label, r.top[0].label) == 0, "first row %s", L.first_label);
        // An "unknown" answer says so in the first row, before the best guess.
        r.unknown = true;
        CHECK(cc_overlay_render(o, frame, &r, im.pixels, w * 3, &err));
        cc_overlay_offscreen_layout(o, &L);
        CHECKF(strncmp(L.first_label, "unknown \u00b7 ", 11) == 0 &&
                   strncmp(L.first_label + 11, r.top[0].label, 3) == 0,
               "an unknown answer's first row: \"%s\"", L.first_label);
    }
    free(im.pixels);
    cc_overlay_offscreen_destroy(o);
}

/* The outline of a result's ROI (cc_result.roi: --roi, else the model's) on the frame of the
 * offscreen picture (what
 * --output records and /stream sends; the window draws the same): at the ROI's place scaled
 * into the letterboxed frame, in its colour, nothing inside it; none without a ROI, or with a
 * pixel ROI outside the frame. */
static void test_roi_outline(const struct cc_frame *frame)
{
    int w = 800, h = 480;
    struct cc_roi rois[3] = {{CC_ROI_FRACTION, 0.5, 0.25, 0.25, 0.5},
                             {CC_ROI_NONE, 0, 0, 0, 0},
                             {CC_ROI_PIXELS, 300, 0, 40, 40}}; // the last past the 320 columns
    uint8_t *px = malloc((size_t)w * h * 3);
    for (int i = 0; px && i < 3; i++) {
        struct cc_overlay_config cfg = {.model_name = "m", .top_k = 5};
        struct cc_error err = {{0}};
        struct cc_overlay_offscreen *o = cc_overlay_offscreen_create(&cfg, w, h, &err);
        struct cc_result r = ovt_crafted_result(30.0);
        r.roi = rois[i]; // the pipeline's: the crop this result was classified on
        if (!CHECKF(o && cc_overlay_render(o, frame, &r, px, w * 3, &err), "roi %d: %s", i,
                    err.msg)) {
            cc_overlay_offscreen_destroy(o);
            continue;
        }
        struct cc_overlay_layout L;
        cc_overlay_offscreen_layout(o, &L);
        struct cc_image im = {.pixels = px, .width = w, .height = h, .channels = 3};
        // Where the outline must be: 160,60 80x120 of the 320x240 frame, scaled.
        const struct cc_overlay_rect *f = &L.frame;
        struct cc_overlay_rect want = {f->x + 160 * f->w / 320, f->y + 60 * f->h / 240,
                                       80 * f->w / 320, 120 * f->h / 240};
        int mid_x = want.x + want.w / 2, mid_y = want.y + want.h / 2;
        bool top = ovt_near(ovt_px(&im, mid_x, want.y), L.roi_rgb, 8);
        bool left = ovt_near(ovt_px(&im, want.x, mid_y), L.roi_rgb, 8);
        bool inside = ovt_near(ovt_px(&im, mid_x, mid_y), L.roi_rgb, 8);
        if (i == 0) {
            CHECKF(abs(L.roi.x - want.x) <= 1 && abs(L.roi.y - want.y) <= 1 &&
                       abs(L.roi.w - want.w) <= 1 && abs(L.roi.h - want.h) <= 1,
                   "ROI outline at %d,%d %dx%d, expected %d,%d %dx%d", L.roi.x, L.roi.y, L.roi.w,
                   L.roi.h, want.x, want.y, want.w, want.h);
            CHECKF(top && left && !inside,
                   "ROI outline drawn at its edges (%d %d), not inside "
                   "(%d)",
                   top, left, inside);
        } else {
            CHECKF(L.roi.w == 0 && !top && !left, "roi %d: no outline (%dx%d, %d %d)", i, L.roi.w,
                   L.roi.h, top, left);
        }
        cc_overlay_offscreen_destroy(o);
    }
    free(px);
}

/* A result's class activation map (cc_result.cam), 2 x 2 with the top-right cell hot, over the
 * middle half of the frame (its area: the part the model classified) in the offscreen picture:
 * each cell's pixels are the frame's blended with the map's
 * colour (red, alpha 160, where 1; blue, alpha 64, where 0); nothing without a map. */
static void test_cam_heatmap(const struct cc_frame *frame)
{
    int w = 800, h = 480;
    uint8_t *px[2] = {malloc((size_t)w * h * 3), malloc((size_t)w * h * 3)};
    struct cc_overlay_layout L[2];
    for (int i = 0; px[0] && px[1] && i < 2; i++) {
        struct cc_overlay_config cfg = {.model_name = "m", .top_k = 5};
        struct cc_error err = {{0}};
        struct cc_overlay_offscreen *o = cc_overlay_offscreen_create(&cfg, w, h, &err);
        struct cc_result r = ovt_crafted_result(30.0);
        if (i == 1)
            r.cam = (struct cc_result_cam){
                .w = 2, .h = 2, .v = {0, 1, 0, 0}, .area = {0.25f, 0, 0.5f, 1}};
        CHECKF(o && cc_overlay_render(o, frame, &r, px[i], w * 3, &err), "cam %d: %s", i, err.msg);
        if (o)
            cc_overlay_offscreen_layout(o, &L[i]);
        cc_overlay_offscreen_destroy(o);
    }
    if (px[0] && px[1]) {
        const struct cc_overlay_rect *f = &L[1].frame;
        int x0 = f->x + (int)lroundf(0.25f * (float)f->w),
            x1 = f->x + (int)lroundf(0.75f * (float)f->w);
        CHECK(L[0].cam.w == 0);
        CHECKF(L[1].cam.x == x0 && L[1].cam.y == f->y && L[1].cam.w == x1 - x0 &&
                   L[1].cam.h == f->h,
               "map drawn at %d,%d %dx%d, not over the middle half of the frame", L[1].cam.x,
               L[1].cam.y, L[1].cam.w, L[1].cam.h);
        f = &L[1].cam;
        struct cc_image im[2] = {{.pixels = px[0], .width = w, .height = h, .channels = 3},
                                 {.pixels = px[1], .width = w, .height = h, .channels = 3}};
        // The centres of the top-right (hot) and top-left (cold) cells.
        int xs[2] = {f->x + 3 * f->w / 4, f->x + f->w / 4}, y = f->y + f->h / 4;
        const uint8_t colour[2][4] = {{255, 0, 0, 160}, {0, 96, 255, 64}};
        for (int c = 0; c < 2; c++) {
            const uint8_t *was = ovt_px(&im[0], xs[c], y), *is = ovt_px(&im[1], xs[c], y);
            uint8_t want[3];
            for (int k = 0; k < 3; k++)
                want[k] =
                    (uint8_t)((colour[c][k] * colour[c][3] + was[k] * (255 - colour[c][3])) / 255);
            CHECKF(ovt_near(is, want, 6), "cell %d: %d,%d,%d, expected %d,%d,%d", c, is[0], is[1],
                   is[2], want[0], want[1], want[2]);
        }
    }
    free(px[0]);
    free(px[1]);
}

/* The default window size: 1280 × 720 shrunk to the display, aspect kept; opened so. */
/* After a model reload the window names the new model and lays out rows for its classes. */
static void test_set_model(const struct cc_frame *frame)
{
    struct cc_overlay *ov = ovt_open_overlay(800, 480, NULL, true);
    struct cc_error err = {{0}};
    struct cc_result r = ovt_crafted_result(30.0);
    if (!ov)
        return;
    CHECK(cc_overlay_present(ov, frame, &r, &err));
    struct cc_overlay_layout before, after;
    cc_overlay_layout(ov, &before);
    CHECK(cc_overlay_set_model(ov, "garage", 3));
    r.n_top = 3;
    CHECK(cc_overlay_present(ov, frame, &r, &err));
    cc_overlay_layout(ov, &after);
    CHECKF(strcmp(after.title, "garage") == 0 && after.n_rows == 3 && before.n_rows == 5,
           "after set_model: title \"%s\", %d rows (before %d)", after.title, after.n_rows,
           before.n_rows);
    cc_overlay_destroy(ov);
}

static void test_fit(void)
{
    static const struct {
        int aw, ah, w, h;
    } cases[] = {
        {800, 480, 800, 450},                            // the Pi touchscreen: width-bound
        {480, 320, 480, 270},                            // a 3.5" screen
        {1920, 1080, 1280, 720},                         // never grown
        {1280, 720, 1280, 720},  {1280, 600, 1067, 600}, // height-bound (a panel takes the rest)
        {600, 1024, 600, 338},                           // portrait
        {0, 0, 1280, 720},                               // unknown
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int w, h;
        cc_overlay_fit_size(cases[i].aw, cases[i].ah, &w, &h);
        CHECKF(w == cases[i].w && h == cases[i].h, "fit %dx%d: %dx%d, expected %dx%d", cases[i].aw,
               cases[i].ah, w, h, cases[i].w, cases[i].h);
    }
    struct cc_overlay *ov = ovt_open_overlay(0, 0, NULL, true);
    if (!ov)
        return;
    SDL_Rect b = {0};
    int w, h;
    CHECK(SDL_GetDisplayUsableBounds(0, &b) == 0);
    cc_overlay_fit_size(b.w, b.h, &w, &h);
    struct cc_error err = {{0}};
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    struct cc_overlay_layout L;
    cc_overlay_layout(ov, &L);
    CHECKF(L.width == w && L.height == h, "default window %dx%d on a %dx%d display, expected %dx%d",
           L.width, L.height, b.w, b.h, w, h);
    printf("default window: %dx%d on a %dx%d display\n", L.width, L.height, b.w, b.h);
    cc_overlay_destroy(ov);
}

static void test_errors(void)
{
    struct cc_error err = {{0}};
    struct cc_overlay_config cfg = {.software = true};

    // No display: one line, NULL, nothing opened.
    char *drv = getenv("SDL_VIDEODRIVER") ? strdup(getenv("SDL_VIDEODRIVER")) : NULL;
    unsetenv("SDL_VIDEODRIVER");
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    struct cc_overlay *ov = cc_overlay_create(&cfg, &err);
    CHECKF(!ov && strstr(err.msg, "no display") && strstr(err.msg, "DISPLAY") &&
               !strchr(err.msg, '\n'),
           "no display: %s", err.msg);
    printf("no display: %s\n", err.msg);
    cc_overlay_destroy(ov);
    setenv("SDL_VIDEODRIVER", drv ? drv : "offscreen", 1);
    free(drv);

    // Missing font: names the path and the package.
    cfg.font_path = "/nonexistent/camclass/NoSuchFont.ttf";
    err.msg[0] = '\0';
    ov = cc_overlay_create(&cfg, &err);
    CHECKF(!ov && strstr(err.msg, cfg.font_path) && strstr(err.msg, "fonts-dejavu-core"),
           "missing font: %s", err.msg);
    printf("missing font: %s\n", err.msg);
    cc_overlay_destroy(ov);

    // A file that is not a font.
    cfg.font_path = sample_png;
    err.msg[0] = '\0';
    ov = cc_overlay_create(&cfg, &err);
    CHECKF(!ov && strstr(err.msg, sample_png) && strstr(err.msg, "TrueType"), "not a font: %s",
           err.msg);
    printf("not a font: %s\n", err.msg);
    cc_overlay_destroy(ov);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_overlay SAMPLE_PNG SAMPLE_JPG OUTDIR\n");
        return 2;
    }
    sample_png = argv[1];
    sample_jpg = argv[2];
    outdir = argv[3];

    test_errors();
    test_fit();

    // The bars sample through the file source, as camclass --input would read it.
    struct cc_error err = {{0}};
    struct cc_source_file *src = cc_source_file_open(sample_png, false, &err);
    struct cc_frame frame = {0};
    if (CHECKF(src != NULL, "open %s: %s", sample_png, err.msg) &&
        CHECKF(cc_source_file_read(src, &frame, &err) == 1, "read: %s", err.msg) &&
        CHECK(frame.format == CC_PIX_RGB24 && frame.width == 320 && frame.height == 240)) {
        test_offscreen(800, 480, &frame);
        test_offscreen(480, 320, &frame);
        test_no_key_hints(800, 480, &frame);
        test_set_model(&frame);
        test_roi_outline(&frame);
        test_cam_heatmap(&frame);
        test_picture(640, 480, &frame, true);
        test_picture(1280, 720, &frame, true);
        test_picture(800, 480, &frame, true); // the Pi touchscreen
        test_picture(480, 320, &frame, true); // the smallest the layout is made for
        test_texts(&frame);
        test_many_rows(&frame);
        // The renderer SDL picks itself (OpenGL through EGL with Mesa where the offscreen
        // driver has it, else software): screenshots read back from a GPU renderer.
        test_picture(800, 600, &frame, false);
        ovt_test_keys_and_formats(&frame, outdir, sample_jpg);
        ovt_test_grid(outdir);
        printf("pictures in %s/overlay-640x480.png, %s/overlay-1280x720.png\n", outdir, outdir);
    }
    free(frame.data);
    cc_source_file_destroy(src);
    return tu_exit_code();
}
