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
#include "overlay_offscreen.h"
#include "source_file.h"
#include "testutil.h"

static const char *sample_png, *sample_jpg, *outdir;

// The colour bars of tests/capture/make_samples.py (top 2/3 of the image).
static const uint8_t BARS[8][3] = {{235, 235, 235}, {235, 235, 16}, {16, 235, 235}, {16, 235, 16},
                                   {235, 16, 235},  {235, 16, 16},  {16, 16, 235},  {16, 16, 16}};

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static const uint8_t *px(const struct cc_image *im, int x, int y)
{
    return im->pixels + ((size_t)y * im->width + x) * 3;
}

static bool near(const uint8_t *a, const uint8_t *b, int tol)
{
    for (int c = 0; c < 3; c++)
        if (abs((int)a[c] - (int)b[c]) > tol)
            return false;
    return true;
}

/* Saves the overlay's picture to path and reads it back (so the file itself is checked). */
static bool save_and_load(struct cc_overlay *ov, const char *path, struct cc_image *im)
{
    struct cc_error err = {{0}};
    if (!CHECKF(cc_overlay_save_png(ov, path, &err), "save_png %s: %s", path, err.msg))
        return false;
    size_t size;
    uint8_t *data = tu_read_file(path, &size);
    if (!CHECKF(data != NULL, "cannot read back %s", path))
        return false;
    bool ok = cc_decode_png(data, size, path, im, &err);
    free(data);
    return CHECKF(ok && im->channels == 3, "decode %s: %s", path, err.msg);
}

/* Pixels in r that are not the colour bg (within 24). */
static int count_not(const struct cc_image *im, struct cc_overlay_rect r, const uint8_t bg[3])
{
    int n = 0;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            n += !near(px(im, x, y), bg, 24);
    return n;
}

static void push_key(SDL_Keycode k)
{
    SDL_Event e = {.type = SDL_KEYDOWN};
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = k;
    SDL_PushEvent(&e);
}

static struct cc_result crafted_result(double camera_fps)
{
    struct cc_result r = {
        .seq = 7, .latency_ms = 41.5, .camera_fps = camera_fps, .inference_fps = 24.25, .n_top = 5};
    const char *labels[5] = {"golden retriever", "Labrador retriever",
                             "a label much too long to fit into the panel at any window size",
                             "tennis ball", NULL};
    const float scores[5] = {0.8f, 0.4f, 0.2f, 0.1f, 0.05f};
    for (int i = 0; i < 5; i++)
        r.top[i] =
            (struct cc_result_class){.index = 200 + i, .label = labels[i], .score = scores[i]};
    return r;
}

static struct cc_overlay *open_config(const struct cc_overlay_config *cfg)
{
    struct cc_error err = {{0}};
    struct cc_overlay *ov = cc_overlay_create(cfg, &err);
    CHECKF(ov != NULL, "cc_overlay_create %dx%d: %s", cfg->width, cfg->height, err.msg);
    return ov;
}

static struct cc_overlay *open_overlay(int w, int h, const char *shot_dir, bool software)
{
    const struct cc_overlay_config cfg = {.title = "camclass test",
                                          .width = w,
                                          .height = h,
                                          .model_name = "mobilenet_v3_small",
                                          .backend_name = "vulkan",
                                          .device_name = "llvmpipe (LLVM 15.0.6, 256 bits)",
                                          .top_k = 5,
                                          .screenshot_dir = shot_dir,
                                          .software = software};
    return open_config(&cfg);
}

/* ---------------------------------------------------------------------------------------- */
/* The picture                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* The frame (fw × fh, the bars sample) lies at the letterboxed place: the test's own
 * aspect-preserving fit of the frame into frame_area, the bar colours at their places inside,
 * background around it. */
static void check_frame(const struct cc_image *im, const struct cc_overlay_layout *L, int fw,
                        int fh)
{
    const struct cc_overlay_rect a = L->frame_area, f = L->frame;
    double s = (double)a.w / fw < (double)a.h / fh ? (double)a.w / fw : (double)a.h / fh;
    int ew = (int)(fw * s + 0.5), eh = (int)(fh * s + 0.5);
    CHECKF(abs(f.w - ew) <= 1 && abs(f.h - eh) <= 1, "frame %dx%d, expected %dx%d", f.w, f.h, ew,
           eh);
    CHECKF(abs(f.x - (a.x + (a.w - ew) / 2)) <= 1 && abs(f.y - (a.y + (a.h - eh) / 2)) <= 1,
           "frame at %d,%d, expected centred at %d,%d", f.x, f.y, a.x + (a.w - ew) / 2,
           a.y + (a.h - eh) / 2);
    CHECKF(a.x == 0 && a.w + L->panel.w == L->width && f.w <= a.w && f.h <= a.h,
           "frame area %d+%d, panel %d, width %d", a.x, a.w, L->panel.w, L->width);

    // Inside: at the centre of each bar (±1/4 bar width, away from the blends at the edges),
    // the bar's colour.
    int bad = 0, checked = 0;
    for (int b = 0; b < 8; b++)
        for (int k = -2; k <= 2; k++) {
            double sx = (b + 0.5 + k * 0.1) * fw / 8.0, sy = fh * (1 + k * 0.15) / 3.0;
            int x = f.x + (int)(sx * f.w / fw), y = f.y + (int)(sy * f.h / fh);
            checked++;
            if (!near(px(im, x, y), BARS[b], 6) && bad++ < 4)
                CHECKF(false, "frame pixel %d,%d (bar %d) is %d,%d,%d, expected %d,%d,%d", x, y, b,
                       px(im, x, y)[0], px(im, x, y)[1], px(im, x, y)[2], BARS[b][0], BARS[b][1],
                       BARS[b][2]);
        }
    CHECKF(bad == 0, "%d of %d frame pixels off", bad, checked);
    // The grey ramp at the bottom: dark on the left, light on the right.
    int ry = f.y + f.h * 5 / 6;
    CHECKF(px(im, f.x + f.w / 20, ry)[0] < 40 && px(im, f.x + f.w * 19 / 20, ry)[0] > 215,
           "grey ramp %d .. %d", px(im, f.x + f.w / 20, ry)[0], px(im, f.x + f.w * 19 / 20, ry)[0]);

    // Outside the frame, inside the area: background (letterbox bands), next to the frame's
    // edge (on the white bar, so the edge is sharp).
    int xs = f.x + f.w / 16;
    if (f.y > 0) {
        CHECK(near(px(im, xs, f.y - 1), L->background_rgb, 2));
        CHECK(near(px(im, xs, 0), L->background_rgb, 2));
        CHECK(near(px(im, xs, f.y + 1), BARS[0], 6));
    }
    if (f.y + f.h < a.h) {
        CHECK(near(px(im, xs, f.y + f.h), L->background_rgb, 2));
        CHECK(near(px(im, xs, a.h - 1), L->background_rgb, 2));
    }
    if (f.x > 0) {
        CHECK(near(px(im, f.x - 1, f.y + f.h / 3), L->background_rgb, 2));
        CHECK(near(px(im, f.x + 1, f.y + f.h / 3), BARS[0], 6));
    }
    if (f.x + f.w < a.w)
        CHECK(near(px(im, f.x + f.w, f.y + f.h / 3), L->background_rgb, 2));
}

/* Filled bar length of row i: bar-coloured pixels from the left on the bar's middle line. */
static int bar_length(const struct cc_image *im, const struct cc_overlay_layout *L, int i)
{
    const struct cc_overlay_rect b = L->bar[i];
    int y = b.y + b.h / 2, n = 0;
    while (n < b.w && near(px(im, b.x + n, y), L->bar_rgb, 0))
        n++;
    // The rest of the track is the track colour: the bar is one run, not scattered pixels.
    for (int x = b.x + n; x < b.x + b.w; x++)
        if (!CHECKF(near(px(im, x, y), L->track_rgb, 0), "bar %d: pixel %d is not the track", i,
                    x - b.x))
            break;
    return n;
}

static void check_panel(const struct cc_image *im, const struct cc_overlay_layout *L,
                        const struct cc_result *r)
{
    CHECKF(L->n_rows == 5, "%d label rows laid out", L->n_rows);
    int len[5] = {0};
    for (int i = 0; i < L->n_rows && i < 5; i++) {
        len[i] = bar_length(im, L, i);
        int expect = (int)(r->top[i].score * L->bar[i].w + 0.5f);
        CHECKF(abs(len[i] - expect) <= 1, "bar %d: %d px for %.2f of %d", i, len[i],
               r->top[i].score, L->bar[i].w);
        // Label text on the left half, the percentage on the right quarter of the line.
        struct cc_overlay_rect lr = L->label[i], sr = L->label[i];
        lr.w /= 2;
        sr.x += sr.w * 3 / 4;
        sr.w /= 4;
        CHECKF(count_not(im, lr, L->panel_rgb) > 30, "row %d: no label text (%d px)", i,
               count_not(im, lr, L->panel_rgb));
        CHECKF(count_not(im, sr, L->panel_rgb) > 20, "row %d: no score text (%d px)", i,
               count_not(im, sr, L->panel_rgb));
    }
    CHECKF(len[0] > 0 && abs(len[0] - 2 * len[1]) <= 2, "0.8 bar %d px, 0.4 bar %d px", len[0],
           len[1]);
    CHECKF(abs(len[1] - 2 * len[2]) <= 2, "0.4 bar %d px, 0.2 bar %d px", len[1], len[2]);
    // Bars and text stay inside the panel; rows do not overlap the stats.
    CHECK(L->bar[0].x >= L->panel.x && L->bar[0].x + L->bar[0].w <= L->width);
    CHECK(L->bar[4].y + L->bar[4].h <= L->stats.y);
    // Stats: three lines of text.
    for (int k = 0; k < 3; k++) {
        struct cc_overlay_rect s = L->stats;
        s.h /= 3;
        s.y += k * s.h;
        CHECKF(count_not(im, s, L->panel_rgb) > 50, "stats line %d is empty", k);
    }
}

static bool inside(struct cc_overlay_rect r, int w, int h)
{
    return r.w > 0 && r.h > 0 && r.x >= 0 && r.y >= 0 && r.x + r.w <= w && r.y + r.h <= h;
}

static bool overlap(struct cc_overlay_rect a, struct cc_overlay_rect b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static bool in_rect(struct cc_overlay_rect r, int x, int y)
{
    return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
}

/* The panel's parts — header, the rows (label line with its percentage, bar), stats, key
 * hints — lie inside the window and do not overlap; each shows text; and nothing is drawn in
 * the panel outside them (no text runs past its place, none is cut off by the window's edge
 * unseen). */
static void check_layout(const struct cc_image *im, const struct cc_overlay_layout *L)
{
    struct cc_overlay_rect parts[3 + CC_RESULT_MAX_TOP];
    const char *names[3 + CC_RESULT_MAX_TOP] = {"header", "stats", "help"};
    int n = 0;
    parts[n++] = L->header;
    parts[n++] = L->stats;
    parts[n++] = L->help;
    for (int i = 0; i < L->n_rows; i++) {
        struct cc_overlay_rect r = L->label[i];
        r.h = L->bar[i].y + L->bar[i].h - r.y; // the row: label line and bar
        names[n] = "row";
        parts[n++] = r;
    }
    CHECKF(inside(L->panel, L->width, L->height), "panel %d,%d %dx%d", L->panel.x, L->panel.y,
           L->panel.w, L->panel.h);
    for (int i = 0; i < n; i++) {
        CHECKF(inside(parts[i], L->width, L->height) && parts[i].x >= L->panel.x,
               "%dx%d: %s %d at %d,%d %dx%d is not inside the panel", L->width, L->height, names[i],
               i, parts[i].x, parts[i].y, parts[i].w, parts[i].h);
        for (int j = i + 1; j < n; j++)
            CHECKF(!overlap(parts[i], parts[j]), "%dx%d: %s %d overlaps %s %d", L->width, L->height,
                   names[i], i, names[j], j);
    }
    CHECKF(count_not(im, L->header, L->panel_rgb) > 100, "%dx%d: no header text", L->width,
           L->height);
    CHECKF(count_not(im, L->help, L->panel_rgb) > 60, "%dx%d: no key hints", L->width, L->height);
    // The hints' last word ("screenshot") is drawn: the right part of the hint lines has text.
    struct cc_overlay_rect hr = L->help;
    hr.y += hr.h / 2;
    hr.h -= hr.h / 2;
    CHECKF(count_not(im, hr, L->panel_rgb) > 30, "%dx%d: last hint line empty", L->width,
           L->height);
    int stray = 0;
    for (int y = L->panel.y; y < L->panel.y + L->panel.h; y++)
        for (int x = L->panel.x; x < L->panel.x + L->panel.w; x++) {
            bool in = false;
            for (int i = 0; i < n && !in; i++)
                in = in_rect(parts[i], x, y);
            if (!in && !near(px(im, x, y), L->panel_rgb, 0) && stray++ < 3)
                CHECKF(false, "%dx%d: panel pixel %d,%d drawn outside every part", L->width,
                       L->height, x, y);
        }
    CHECKF(stray == 0, "%dx%d: %d panel pixels outside the parts", L->width, L->height, stray);
}

/* Draws the bars sample with the crafted result at w × h; checks the picture; then draws it
 * with another camera fps and checks that exactly the stats region changed. */
static void test_picture(int w, int h, const struct cc_frame *frame, bool software)
{
    struct cc_overlay *ov = open_overlay(w, h, NULL, software);
    if (!ov)
        return;
    struct cc_error err = {{0}};
    struct cc_result r = crafted_result(30.0);
    CHECKF(cc_overlay_present(ov, frame, &r, &err), "present: %s", err.msg);
    struct cc_overlay_layout L;
    cc_overlay_layout(ov, &L);
    CHECKF(L.width == w && L.height == h, "output %dx%d", L.width, L.height);

    char path[4096];
    printf("%dx%d: %s renderer\n", w, h, cc_overlay_renderer_name(ov));
    snprintf(path, sizeof(path), "%s/overlay-%dx%d.png", outdir, w, h);
    struct cc_image a = {0}, b = {0};
    if (save_and_load(ov, path, &a) && CHECK(a.width == w && a.height == h)) {
        check_frame(&a, &L, frame->width, frame->height);
        check_panel(&a, &L, &r);
        check_layout(&a, &L);
    }

    // Another camera fps: the stats region changes, nothing else does.
    r = crafted_result(12.5);
    CHECKF(cc_overlay_present(ov, NULL, &r, &err), "present: %s", err.msg);
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-fps.png", outdir, w, h);
    if (a.pixels && save_and_load(ov, path, &b) && CHECK(b.width == w && b.height == h)) {
        int in = 0, out = 0;
        const struct cc_overlay_rect s = L.stats;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (memcmp(px(&a, x, y), px(&b, x, y), 3)) {
                    bool inside = x >= s.x && x < s.x + s.w && y >= s.y && y < s.y + s.h;
                    in += inside;
                    out += !inside;
                }
        CHECKF(in > 20, "fps 30 -> 12.5 changed %d pixels in the stats region", in);
        CHECKF(out == 0, "fps 30 -> 12.5 changed %d pixels outside the stats region", out);
    }

    // The result names the CPU backend (the engine switched from Vulkan mid-run): the header
    // changes ("backend: cpu (vulkan failed)", no device), nothing else does.
    r = crafted_result(30.0);
    r.backend = "cpu";
    CHECKF(cc_overlay_present(ov, NULL, &r, &err), "present: %s", err.msg);
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-switched.png", outdir, w, h);
    struct cc_image c = {0};
    if (a.pixels && save_and_load(ov, path, &c) && CHECK(c.width == w && c.height == h)) {
        int in = 0, out = 0;
        const struct cc_overlay_rect hd = L.header;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (memcmp(px(&a, x, y), px(&c, x, y), 3)) {
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
    struct cc_overlay *ov = open_config(&cfg);
    if (!ov)
        return;
    struct cc_error err = {{0}}, msg = {{0}};
    struct cc_overlay_layout L;
    CHECK(cc_overlay_present(ov, frame, NULL, &err));
    cc_overlay_layout(ov, &L);
    CHECKF(L.n_rows == 3, "3 classes, top-k 5: %d rows before a result", L.n_rows);

    struct cc_result r = crafted_result(30.0);
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
    if (save_and_load(ov, path, &plain))
        check_layout(&plain, &L);

    // Paused: the fps line stays as it was, whatever results come, until p again.
    char before[160];
    snprintf(before, sizeof(before), "%s", L.source_line);
    push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_PAUSED);
    for (int i = 0; i < 3; i++) {
        struct cc_result later = crafted_result(1.0 + i);
        CHECK(cc_overlay_present(ov, NULL, &later, &err));
        cc_overlay_layout(ov, &L);
        CHECKF(!strcmp(L.source_line, before), "paused: \"%s\", was \"%s\"", L.source_line, before);
    }
    push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_RESUMED);
    struct cc_result later = crafted_result(12.5);
    CHECK(cc_overlay_present(ov, NULL, &later, &err));
    cc_overlay_layout(ov, &L);
    CHECKF(strstr(L.source_line, "12.5 fps") != NULL, "resumed: \"%s\"", L.source_line);

    // s: "saved NAME" over the foot of the frame for about a second; the file lacks it.
    push_key(SDLK_s);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_SCREENSHOT);
    const char *saved = strstr(msg.msg, "saved to ");
    cc_overlay_layout(ov, &L);
    const char *base = saved ? strrchr(saved, '/') : NULL;
    CHECKF(base && !strncmp(L.notice_text, "saved ", 6) && !strcmp(L.notice_text + 6, base + 1),
           "notice \"%s\" for %s", L.notice_text, msg.msg);
    CHECK(inside(L.notice, L.width, L.height) && L.notice.x + L.notice.w <= L.panel.x);
    snprintf(path, sizeof(path), "%s/overlay-480x320-notice.png", outdir);
    if (save_and_load(ov, path, &im))
        CHECKF(count_not(&im, L.notice, L.background_rgb) > 100 &&
                   count_not(&im, L.notice, L.panel_rgb) > 50,
               "no notice drawn");
    cc_image_finish(&im);
    if (base) {
        size_t size;
        uint8_t *data = tu_read_file(saved + 9, &size);
        if (CHECK(data && cc_decode_png(data, size, saved + 9, &im, &err)) && plain.pixels) {
            int diff = 0;
            for (int y = L.notice.y; y < L.notice.y + L.notice.h; y++)
                for (int x = L.notice.x; x < L.notice.x + L.notice.w; x++)
                    diff += memcmp(px(&im, x, y), px(&plain, x, y), 3) != 0;
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
/* Keys, formats, errors                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* A solid YUYV frame of w × h (Y, U, V). */
static struct cc_frame yuyv_frame(int w, int h, uint8_t y, uint8_t u, uint8_t v)
{
    struct cc_frame f = {.format = CC_PIX_YUYV, .width = w, .height = h, .stride = w * 2};
    f.size = f.capacity = (size_t)f.stride * h;
    f.data = malloc(f.size);
    for (size_t i = 0; f.data && i < f.size; i += 4) {
        f.data[i] = y;
        f.data[i + 1] = u;
        f.data[i + 2] = y;
        f.data[i + 3] = v;
    }
    return f;
}

static void test_keys_and_formats(const struct cc_frame *bars)
{
    char shots[4096];
    snprintf(shots, sizeof(shots), "%s/shots-XXXXXX", outdir);
    if (!CHECKF(mkdtemp(shots) != NULL, "mkdtemp %s", shots))
        return;
    struct cc_overlay *ov = open_overlay(640, 480, shots, true);
    if (!ov)
        return;
    struct cc_error err = {{0}}, msg = {{0}};
    struct cc_result r = crafted_result(30.0);
    CHECK(cc_overlay_present(ov, bars, &r, &err));
    struct cc_image a = {0}, b = {0};
    char path[4096];
    snprintf(path, sizeof(path), "%s/keys-before.png", outdir);
    save_and_load(ov, path, &a);

    // p: paused; a new frame and result are ignored, the paused picture stays.
    push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_PAUSED && cc_overlay_paused(ov));
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    uint8_t red[3] = {0}; // Y 81 U 90 V 240 is BT.601 red
    int rgb[3];
    cc_yuv_to_rgb(81, 90, 240, rgb);
    for (int c = 0; c < 3; c++)
        red[c] = (uint8_t)rgb[c];
    struct cc_frame wide = yuyv_frame(320, 90, 81, 90, 240);
    struct cc_result r2 = crafted_result(5.0);
    r2.top[0].score = 0.1f;
    CHECK(cc_overlay_present(ov, &wide, &r2, &err));
    snprintf(path, sizeof(path), "%s/keys-paused.png", outdir);
    if (save_and_load(ov, path, &b) && a.pixels) {
        struct cc_overlay_layout L;
        cc_overlay_layout(ov, &L);
        // The picture is the one before, except for the PAUSED badge on the frame's top left.
        int diff = 0;
        for (int y = 0; y < 480; y++)
            for (int x = 0; x < 640; x++)
                diff += memcmp(px(&a, x, y), px(&b, x, y), 3) != 0 &&
                        !(x < L.frame_area.w / 2 && y < L.frame_area.h / 4);
        CHECKF(diff == 0, "paused picture differs in %d pixels outside the badge", diff);
        struct cc_overlay_rect badge = {0, 0, L.frame_area.w / 2, L.frame_area.h / 4};
        int red_px = 0;
        for (int y = badge.y; y < badge.h; y++)
            for (int x = badge.x; x < badge.w; x++)
                red_px += px(&b, x, y)[0] > 150 && px(&b, x, y)[1] < 80;
        CHECKF(red_px > 200, "no PAUSED badge (%d red pixels)", red_px);
    }

    // p again: the wide YUYV frame shows, converted by convert.h, letterboxed top and bottom.
    push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_RESUMED && !cc_overlay_paused(ov));
    CHECK(cc_overlay_present(ov, &wide, &r2, &err));
    snprintf(path, sizeof(path), "%s/keys-yuyv.png", outdir);
    cc_image_finish(&b);
    if (save_and_load(ov, path, &b)) {
        struct cc_overlay_layout L;
        cc_overlay_layout(ov, &L);
        struct cc_overlay_rect f = L.frame;
        CHECKF(f.w == L.frame_area.w && abs(f.h - (f.w * 90 + 160) / 320) <= 1,
               "wide frame %dx%d in area %d", f.w, f.h, L.frame_area.w);
        CHECKF(near(px(&b, f.x + f.w / 2, f.y + f.h / 2), red, 2),
               "YUYV centre %d,%d,%d, expected %d,%d,%d", px(&b, f.x + f.w / 2, f.y + f.h / 2)[0],
               px(&b, f.x + f.w / 2, f.y + f.h / 2)[1], px(&b, f.x + f.w / 2, f.y + f.h / 2)[2],
               red[0], red[1], red[2]);
        CHECK(near(px(&b, f.x + f.w / 2, f.y - 2), L.background_rgb, 2));
        CHECK(near(px(&b, f.x + f.w / 2, f.y + f.h + 1), L.background_rgb, 2));
        CHECK(L.bar[0].w > 0 && bar_length(&b, &L, 0) == (int)(0.1f * L.bar[0].w + 0.5f));
    }
    free(wide.data);

    // NV12, BGR24 and GREY: a solid frame each, its colour at the frame's centre.
    for (int k = 0; k < 3; k++) {
        const int w = 64, h = 48;
        struct cc_frame f = {.width = w, .height = h, .stride = k == 1 ? w * 3 : w};
        uint8_t expect[3];
        if (k == 0) { // NV12: Y plane, then U V pairs for every 2x2 block
            f.format = CC_PIX_NV12;
            f.size = cc_nv12_size(w, h);
            cc_yuv_to_rgb(145, 54, 34, rgb);
        } else if (k == 1) {
            f.format = CC_PIX_BGR24;
            f.size = (size_t)w * h * 3;
            rgb[0] = 200, rgb[1] = 20, rgb[2] = 10;
        } else {
            f.format = CC_PIX_GREY;
            f.size = (size_t)w * h;
            rgb[0] = rgb[1] = rgb[2] = 77;
        }
        f.data = malloc(f.size);
        if (!f.data)
            break;
        for (size_t i = 0; i < f.size; i++) {
            if (k == 0)
                f.data[i] = i < (size_t)w * h ? 145 : (i % 2 ? 34 : 54);
            else if (k == 1)
                f.data[i] = (uint8_t[]){10, 20, 200}[i % 3];
            else
                f.data[i] = 77;
        }
        for (int c = 0; c < 3; c++)
            expect[c] = (uint8_t)rgb[c];
        CHECKF(cc_overlay_present(ov, &f, &r2, &err), "present %s: %s", cc_pixfmt_name(f.format),
               err.msg);
        snprintf(path, sizeof(path), "%s/keys-%s.png", outdir, cc_pixfmt_name(f.format));
        cc_image_finish(&b);
        if (save_and_load(ov, path, &b)) {
            struct cc_overlay_layout L;
            cc_overlay_layout(ov, &L);
            const uint8_t *c = px(&b, L.frame.x + L.frame.w / 2, L.frame.y + L.frame.h / 2);
            CHECKF(near(c, expect, 2), "%s centre %d,%d,%d, expected %d,%d,%d",
                   cc_pixfmt_name(f.format), c[0], c[1], c[2], expect[0], expect[1], expect[2]);
        }
        free(f.data);
    }

    // A malformed frame: false with a line naming it; the previous frame stays.
    struct cc_frame bad = yuyv_frame(320, 90, 81, 90, 240);
    bad.size /= 2;
    bad.sequence = 99;
    CHECK(!cc_overlay_present(ov, &bad, &r2, &err) && strstr(err.msg, "frame 99") &&
          strstr(err.msg, "bytes"));
    printf("malformed frame: %s\n", err.msg);
    free(bad.data);

    // MJPEG: the JPEG sample as a camera would deliver it, decoded here.
    size_t jsize;
    uint8_t *jpeg = tu_read_file(sample_jpg, &jsize);
    struct cc_frame mj = {.format = CC_PIX_MJPEG,
                          .width = 320,
                          .height = 240,
                          .data = jpeg,
                          .size = jsize,
                          .capacity = jsize};
    err.msg[0] = '\0';
    CHECKF(jpeg && cc_overlay_present(ov, &mj, &r, &err), "MJPEG present: %s", err.msg);
    snprintf(path, sizeof(path), "%s/keys-mjpeg.png", outdir);
    cc_image_finish(&b);
    if (save_and_load(ov, path, &b)) {
        struct cc_overlay_layout L;
        cc_overlay_layout(ov, &L);
        for (int k = 0; k < 8; k++) {
            int x = L.frame.x + (2 * k + 1) * L.frame.w / 16, y = L.frame.y + L.frame.h / 3;
            CHECKF(near(px(&b, x, y), BARS[k], 12), "MJPEG bar %d is %d,%d,%d", k, px(&b, x, y)[0],
                   px(&b, x, y)[1], px(&b, x, y)[2]);
        }
    }
    free(jpeg);

    // s: a screenshot in the configured directory, named camclass-YYYYmmdd-HHMMSS.png.
    push_key(SDLK_s);
    enum cc_overlay_event ev = cc_overlay_poll(ov, &msg);
    CHECKF(ev == CC_OVERLAY_SCREENSHOT, "s: event %d, %s", (int)ev, msg.msg);
    printf("s: %s\n", msg.msg);
    char first[4096] = "";
    const char *saved = strstr(msg.msg, "saved to ");
    if (CHECKF(saved != NULL, "screenshot line: %s", msg.msg)) {
        saved += strlen("saved to ");
        snprintf(first, sizeof(first), "%s", saved);
        const char *base = strrchr(saved, '/');
        CHECKF(!strncmp(saved, shots, strlen(shots)) && base && !strncmp(base, "/camclass-", 10) &&
                   strlen(base) == strlen("/camclass-YYYYmmdd-HHMMSS.png"),
               "screenshot path %s", saved);
        size_t size;
        uint8_t *data = tu_read_file(saved, &size);
        CHECKF(data && cc_decode_png(data, size, saved, &b, &err) && b.width == 640 &&
                   b.height == 480,
               "screenshot %s: %s", saved, err.msg);
        free(data);
    }
    // A second s in the same second does not overwrite the first.
    push_key(SDLK_s);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_SCREENSHOT);
    const char *second = strstr(msg.msg, "saved to ");
    CHECKF(first[0] && second && strcmp(second + 9, first) != 0, "second screenshot: %s", msg.msg);
    if (first[0])
        unlink(first);
    if (second)
        unlink(second + 9);
    rmdir(shots);
    // f toggles fullscreen and is not reported; the picture is drawn for the size the window
    // has then (the desktop's), and for 640 × 480 again after the second f.
    SDL_DisplayMode dm;
    CHECK(SDL_GetDesktopDisplayMode(0, &dm) == 0);
    push_key(SDLK_f);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    struct cc_overlay_layout FL;
    cc_overlay_layout(ov, &FL);
    CHECKF(FL.width == dm.w && FL.height == dm.h, "fullscreen: output %dx%d, desktop %dx%d",
           FL.width, FL.height, dm.w, dm.h);
    snprintf(path, sizeof(path), "%s/keys-fullscreen.png", outdir);
    cc_image_finish(&b);
    if (save_and_load(ov, path, &b))
        CHECKF(b.width == dm.w && b.height == dm.h, "fullscreen screenshot %dx%d", b.width,
               b.height);
    push_key(SDLK_f);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    cc_overlay_layout(ov, &FL);
    CHECKF(FL.width == 640 && FL.height == 480, "after f f: output %dx%d", FL.width, FL.height);
    push_key(SDLK_q);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_QUIT);
    push_key(SDLK_ESCAPE);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_QUIT);
    SDL_Event quit = {.type = SDL_QUIT};
    SDL_PushEvent(&quit);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_QUIT);
    CHECK(cc_overlay_present(ov, NULL, NULL, &err)); // still draws

    cc_image_finish(&a);
    cc_image_finish(&b);
    cc_overlay_destroy(ov);
}

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
    const struct cc_overlay_config cfg = {.model_name = "mobilenet_v3_small",
                                          .backend_name = "vulkan",
                                          .device_name = "llvmpipe (LLVM 15.0.6, 256 bits)",
                                          .top_k = 5};
    struct cc_error err = {{0}};
    struct cc_overlay_offscreen *o = cc_overlay_offscreen_create(&cfg, w, h, &err);
    struct cc_image off = {.width = w, .height = h, .channels = 3};
    off.pixels = calloc((size_t)w * h, 3);
    struct cc_result r = crafted_result(30.0);
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
        check_frame(&off, &L, frame->width, frame->height);
        check_panel(&off, &L, &r);
        check_layout(&off, &L);
        // A frame from a stride wider than its rows, and a later result: the picture follows.
        struct cc_result r2 = crafted_result(12.5);
        r2.top[0].score = 0.25f;
        uint8_t *again = calloc((size_t)w * (h + 1), 4);
        CHECK(again && cc_overlay_render(o, NULL, &r2, again, w * 4, &err));
        if (again) {
            struct cc_image a2 = {.width = w, .height = h, .channels = 3};
            a2.pixels = malloc((size_t)w * h * 3);
            for (int y = 0; a2.pixels && y < h; y++)
                memcpy(a2.pixels + (size_t)y * w * 3, again + (size_t)y * w * 4, (size_t)w * 3);
            CHECKF(a2.pixels && bar_length(&a2, &L, 0) == (int)(0.25f * L.bar[0].w + 0.5f),
                   "offscreen: bar 0 after a new result");
            free(a2.pixels);
        }
        free(again);
    }

    // The window of the same size shows the same picture, pixel for pixel.
    struct cc_overlay *ov = open_overlay(w, h, NULL, true);
    struct cc_image win = {0};
    char path[4096];
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-window.png", outdir, w, h);
    if (ov && drawn && CHECK(cc_overlay_present(ov, frame, &r, &err)) &&
        save_and_load(ov, path, &win) && CHECK(win.width == w && win.height == h)) {
        int diff = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                diff += memcmp(px(&win, x, y), px(&off, x, y), 3) != 0;
        CHECKF(diff == 0, "%dx%d: window and offscreen pictures differ in %d pixels", w, h, diff);
        printf("%dx%d: offscreen picture = window picture\n", w, h);
    }
    cc_image_finish(&win);
    cc_overlay_destroy(ov);
    free(off.pixels);
    cc_overlay_offscreen_destroy(o);
}

/* The default window size: 1280 × 720 shrunk to the display, aspect kept; opened so. */
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
    struct cc_overlay *ov = open_overlay(0, 0, NULL, true);
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
        test_picture(640, 480, &frame, true);
        test_picture(1280, 720, &frame, true);
        test_picture(800, 480, &frame, true); // the Pi touchscreen
        test_picture(480, 320, &frame, true); // the smallest the layout is made for
        test_texts(&frame);
        // The renderer SDL picks itself (OpenGL through EGL with Mesa where the offscreen
        // driver has it, else software): screenshots read back from a GPU renderer.
        test_picture(800, 600, &frame, false);
        test_keys_and_formats(&frame);
        printf("pictures in %s/overlay-640x480.png, %s/overlay-1280x720.png\n", outdir, outdir);
    }
    free(frame.data);
    cc_source_file_destroy(src);
    return tu_exit_code();
}
