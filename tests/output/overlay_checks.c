/* camclass — the overlay test's shared helpers and picture checks (see overlay_checks.h). */
#include <stdio.h>
#include <stdlib.h>

#include <SDL.h>

#include "decode.h"
#include "overlay.h"
#include "overlay_checks.h"
#include "testutil.h"

const uint8_t OVT_BARS[8][3] = {{235, 235, 235}, {235, 235, 16}, {16, 235, 235}, {16, 235, 16},
                                {235, 16, 235},  {235, 16, 16},  {16, 16, 235},  {16, 16, 16}};

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

const uint8_t *ovt_px(const struct cc_image *im, int x, int y)
{
    return im->pixels + ((size_t)y * im->width + x) * 3;
}

bool ovt_near(const uint8_t *a, const uint8_t *b, int tol)
{
    for (int c = 0; c < 3; c++)
        if (abs((int)a[c] - (int)b[c]) > tol)
            return false;
    return true;
}

bool ovt_save_and_load(struct cc_overlay *ov, const char *path, struct cc_image *im)
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

int ovt_count_not(const struct cc_image *im, struct cc_overlay_rect r, const uint8_t bg[3])
{
    int n = 0;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            n += !ovt_near(ovt_px(im, x, y), bg, 24);
    return n;
}

void ovt_push_key(SDL_Keycode k)
{
    SDL_Event e = {.type = SDL_KEYDOWN};
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = k;
    SDL_PushEvent(&e);
}

struct cc_result ovt_crafted_result(double camera_fps)
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

struct cc_overlay *ovt_open_config(const struct cc_overlay_config *cfg)
{
    struct cc_error err = {{0}};
    struct cc_overlay *ov = cc_overlay_create(cfg, &err);
    CHECKF(ov != NULL, "cc_overlay_create %dx%d: %s", cfg->width, cfg->height, err.msg);
    return ov;
}

struct cc_overlay *ovt_open_overlay(int w, int h, const char *shot_dir, bool software)
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
    return ovt_open_config(&cfg);
}

/* ---------------------------------------------------------------------------------------- */
/* The picture                                                                              */
/* ---------------------------------------------------------------------------------------- */

void ovt_check_frame(const struct cc_image *im, const struct cc_overlay_layout *L, int fw, int fh)
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
            if (!ovt_near(ovt_px(im, x, y), OVT_BARS[b], 6) && bad++ < 4)
                CHECKF(false, "frame pixel %d,%d (bar %d) is %d,%d,%d, expected %d,%d,%d", x, y, b,
                       ovt_px(im, x, y)[0], ovt_px(im, x, y)[1], ovt_px(im, x, y)[2],
                       OVT_BARS[b][0], OVT_BARS[b][1], OVT_BARS[b][2]);
        }
    CHECKF(bad == 0, "%d of %d frame pixels off", bad, checked);
    // The grey ramp at the bottom: dark on the left, light on the right.
    int ry = f.y + f.h * 5 / 6;
    CHECKF(ovt_px(im, f.x + f.w / 20, ry)[0] < 40 && ovt_px(im, f.x + f.w * 19 / 20, ry)[0] > 215,
           "grey ramp %d .. %d", ovt_px(im, f.x + f.w / 20, ry)[0],
           ovt_px(im, f.x + f.w * 19 / 20, ry)[0]);

    // Outside the frame, inside the area: background (letterbox bands), next to the frame's
    // edge (on the white bar, so the edge is sharp).
    int xs = f.x + f.w / 16;
    if (f.y > 0) {
        CHECK(ovt_near(ovt_px(im, xs, f.y - 1), L->background_rgb, 2));
        CHECK(ovt_near(ovt_px(im, xs, 0), L->background_rgb, 2));
        CHECK(ovt_near(ovt_px(im, xs, f.y + 1), OVT_BARS[0], 6));
    }
    if (f.y + f.h < a.h) {
        CHECK(ovt_near(ovt_px(im, xs, f.y + f.h), L->background_rgb, 2));
        CHECK(ovt_near(ovt_px(im, xs, a.h - 1), L->background_rgb, 2));
    }
    if (f.x > 0) {
        CHECK(ovt_near(ovt_px(im, f.x - 1, f.y + f.h / 3), L->background_rgb, 2));
        CHECK(ovt_near(ovt_px(im, f.x + 1, f.y + f.h / 3), OVT_BARS[0], 6));
    }
    if (f.x + f.w < a.w)
        CHECK(ovt_near(ovt_px(im, f.x + f.w, f.y + f.h / 3), L->background_rgb, 2));
}

int ovt_bar_length(const struct cc_image *im, const struct cc_overlay_layout *L, int i)
{
    const struct cc_overlay_rect b = L->bar[i];
    int y = b.y + b.h / 2, n = 0;
    while (n < b.w && ovt_near(ovt_px(im, b.x + n, y), L->bar_rgb, 0))
        n++;
    // The rest of the track is the track colour: the bar is one run, not scattered pixels.
    for (int x = b.x + n; x < b.x + b.w; x++)
        if (!CHECKF(ovt_near(ovt_px(im, x, y), L->track_rgb, 0),
                    "bar %d: pixel %d is not the track", i, x - b.x))
            break;
    return n;
}

void ovt_check_panel(const struct cc_image *im, const struct cc_overlay_layout *L,
                     const struct cc_result *r)
{
    CHECKF(L->n_rows == 5, "%d label rows laid out", L->n_rows);
    int len[5] = {0};
    for (int i = 0; i < L->n_rows && i < 5; i++) {
        len[i] = ovt_bar_length(im, L, i);
        int expect = (int)(r->top[i].score * L->bar[i].w + 0.5f);
        CHECKF(abs(len[i] - expect) <= 1, "bar %d: %d px for %.2f of %d", i, len[i],
               r->top[i].score, L->bar[i].w);
        // Label text on the left half, the percentage on the right quarter of the line.
        struct cc_overlay_rect lr = L->label[i], sr = L->label[i];
        lr.w /= 2;
        sr.x += sr.w * 3 / 4;
        sr.w /= 4;
        CHECKF(ovt_count_not(im, lr, L->panel_rgb) > 30, "row %d: no label text (%d px)", i,
               ovt_count_not(im, lr, L->panel_rgb));
        CHECKF(ovt_count_not(im, sr, L->panel_rgb) > 20, "row %d: no score text (%d px)", i,
               ovt_count_not(im, sr, L->panel_rgb));
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
        CHECKF(ovt_count_not(im, s, L->panel_rgb) > 50, "stats line %d is empty", k);
    }
}

bool ovt_inside(struct cc_overlay_rect r, int w, int h)
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

void ovt_check_layout(const struct cc_image *im, const struct cc_overlay_layout *L)
{
    struct cc_overlay_rect parts[3 + CC_RESULT_MAX_TOP];
    const char *names[3 + CC_RESULT_MAX_TOP] = {"header", "stats", "help"};
    int n = 0;
    parts[n++] = L->header;
    parts[n++] = L->stats;
    if (L->help.h > 0) // no key hints where no key works (--output, /stream)
        parts[n++] = L->help;
    for (int i = 0; i < L->n_rows; i++) {
        struct cc_overlay_rect r = L->label[i];
        r.h = L->bar[i].y + L->bar[i].h - r.y; // the row: label line and bar
        names[n] = "row";
        parts[n++] = r;
    }
    CHECKF(ovt_inside(L->panel, L->width, L->height), "panel %d,%d %dx%d", L->panel.x, L->panel.y,
           L->panel.w, L->panel.h);
    for (int i = 0; i < n; i++) {
        CHECKF(ovt_inside(parts[i], L->width, L->height) && parts[i].x >= L->panel.x,
               "%dx%d: %s %d at %d,%d %dx%d is not inside the panel", L->width, L->height, names[i],
               i, parts[i].x, parts[i].y, parts[i].w, parts[i].h);
        for (int j = i + 1; j < n; j++)
            CHECKF(!overlap(parts[i], parts[j]), "%dx%d: %s %d overlaps %s %d", L->width, L->height,
                   names[i], i, names[j], j);
    }
    CHECKF(ovt_count_not(im, L->header, L->panel_rgb) > 100, "%dx%d: no header text", L->width,
           L->height);
    if (L->help.h > 0) {
        CHECKF(ovt_count_not(im, L->help, L->panel_rgb) > 60, "%dx%d: no key hints", L->width,
               L->height);
        // The hints' last word ("screenshot") is drawn: the right part of the hint lines has
        // text.
        struct cc_overlay_rect hr = L->help;
        hr.y += hr.h / 2;
        hr.h -= hr.h / 2;
        CHECKF(ovt_count_not(im, hr, L->panel_rgb) > 30, "%dx%d: last hint line empty",
               L->width, L->height);
    }
    int stray = 0;
    for (int y = L->panel.y; y < L->panel.y + L->panel.h; y++)
        for (int x = L->panel.x; x < L->panel.x + L->panel.w; x++) {
            bool in = false;
            for (int i = 0; i < n && !in; i++)
                in = in_rect(parts[i], x, y);
            if (!in && !ovt_near(ovt_px(im, x, y), L->panel_rgb, 0) && stray++ < 3)
                CHECKF(false, "%dx%d: panel pixel %d,%d drawn outside every part", L->width,
                       L->height, x, y);
        }
    CHECKF(stray == 0, "%dx%d: %d panel pixels outside the parts", L->width, L->height, stray);
}
