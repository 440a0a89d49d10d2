/* camclass — the overlay test, the grid of cameras (part of test_overlay; see test_overlay.c
 * and overlay_checks.h).
 *
 * Three cameras of distinct solid colours in a 640 x 480 window and in the least one, 480 x 320
 * (SDL's offscreen driver): each
 * tile (2 x 2, the fourth cell empty) shows its camera's colour over its frame and no other
 * camera's, with its caption (name, top label and score); a stopped camera's caption says why on
 * red; a click lands on the tile under it, Esc, Tab and 0 come to the caller; enlarging shows the
 * one camera with the full panel (its label in the rows) and none of the others, and the grid
 * comes back. Without a grid Tab and clicks are nothing and Esc quits, as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "grid.h"
#include "overlay.h"
#include "overlay_checks.h"
#include "testutil.h"

static const uint8_t COLOURS[3][3] = {{230, 30, 30}, {30, 200, 60}, {40, 60, 230}};
static const char *const NAMES[3] = {"door", "yard", "hall"};
static const char *const LABELS[3] = {"red thing", "green thing", "blue thing"};

/* A solid RGB24 frame of w x h. */
static struct cc_frame solid(int w, int h, const uint8_t rgb[3])
{
    struct cc_frame f = {.format = CC_PIX_RGB24, .width = w, .height = h, .stride = w * 3};
    f.size = f.capacity = (size_t)f.stride * h;
    f.data = malloc(f.size);
    for (size_t i = 0; f.data && i < f.size; i++)
        f.data[i] = rgb[i % 3];
    return f;
}

static struct cc_result result_of(int i)
{
    struct cc_result r = {.latency_ms = 20, .camera_fps = 10, .inference_fps = 10, .n_top = 2};
    r.top[0] = (struct cc_result_class){.index = i, .score = 0.9f, .label = LABELS[i]};
    r.top[1] = (struct cc_result_class){.index = 3, .score = 0.05f, .label = "other"};
    return r;
}

static int count_near(const struct cc_image *im, struct cc_overlay_rect r, const uint8_t c[3])
{
    int n = 0;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            n += ovt_near(ovt_px(im, x, y), c, 30);
    return n;
}

static void push_click(int x, int y)
{
    SDL_Event e = {.type = SDL_MOUSEBUTTONUP};
    e.button.button = SDL_BUTTON_LEFT;
    e.button.state = SDL_RELEASED;
    e.button.x = x;
    e.button.y = y;
    SDL_PushEvent(&e);
}

/* The grid picture: tile i shows colour i over its frame (under its caption), no other
 * camera's colour; the caption names the camera and its label. */
static void check_tiles(struct cc_overlay *ov, const struct cc_image *im)
{
    int w = im->width, h = im->height;
    for (int i = 0; i < 3; i++) {
        struct cc_overlay_layout L;
        struct cc_overlay_rect tile;
        cc_overlay_tile_layout(ov, i, &L, &tile);
        CHECKF(tile.w >= w / 2 - CC_GRID_GAP && tile.h >= h / 2 - CC_GRID_GAP, "tile %d is %dx%d",
               i, tile.w, tile.h);
        struct cc_overlay_rect f = {tile.x + L.frame.x, tile.y + L.frame.y, L.frame.w, L.frame.h};
        int area = f.w * f.h, own = count_near(im, f, COLOURS[i]);
        CHECKF(area > 0 && own > area * 9 / 10, "tile %d: %d of %d frame pixels its colour", i, own,
               area);
        for (int j = 0; j < 3; j++)
            CHECKF(j == i || count_near(im, tile, COLOURS[j]) == 0,
                   "tile %d shows camera %d's colour", i, j);
        char want[96];
        snprintf(want, sizeof(want), "%s \u00b7 %s 90.0%%", NAMES[i], LABELS[i]);
        CHECKF(strcmp(L.caption_text, want) == 0, "tile %d caption \"%s\", want \"%s\"", i,
               L.caption_text, want);
        CHECKF(L.caption.h > 0 &&
                   ovt_count_not(im, (struct cc_overlay_rect){tile.x, tile.y, tile.w, L.caption.h},
                                 COLOURS[i]) > tile.w * L.caption.h / 2,
               "tile %d: no caption band", i);
    }
    // The fourth cell is empty: the letterbox colour only.
    struct cc_overlay_rect empty = {w / 2 + 1, h / 2 + 1, w / 2 - 1, h / 2 - 1};
    const uint8_t bg[3] = {16, 16, 18};
    CHECKF(ovt_count_not(im, empty, bg) == 0, "the empty cell is drawn on");
}

static void check_events(struct cc_overlay *ov)
{
    struct cc_error msg = {{0}};
    struct cc_overlay_layout L;
    struct cc_overlay_rect t1;
    cc_overlay_tile_layout(ov, 1, &L, &t1);
    push_click(t1.x + t1.w / 2, t1.y + t1.h / 2);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_CLICK && cc_overlay_clicked_tile(ov) == 1);
    push_click(t1.x - 1, t1.y + 5); // the gap between tiles 0 and 1
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_CLICK && cc_overlay_clicked_tile(ov) == -1);
    push_click(t1.x + t1.w / 2, t1.y + t1.h + t1.h / 2); // the empty cell, under tile 1
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_CLICK && cc_overlay_clicked_tile(ov) == -1);
    ovt_push_key(SDLK_ESCAPE);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_BACK);
    ovt_push_key(SDLK_TAB);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_TAB);
    ovt_push_key(SDLK_0);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_LABEL && cc_overlay_label_key(ov) == 0);
    ovt_push_key(SDLK_3);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_LABEL && cc_overlay_label_key(ov) == 3);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
}

/* Camera 1 enlarged: its colour over the whole frame, the full panel with its label. */
static void check_enlarged(struct cc_overlay *ov, const struct cc_image *im)
{
    struct cc_overlay_layout L;
    cc_overlay_layout(ov, &L);
    int area = L.frame.w * L.frame.h, own = count_near(im, L.frame, COLOURS[1]);
    CHECKF(L.frame.w > L.width / 2 && own > area * 9 / 10, "enlarged: %d of %d frame pixels green",
           own, area);
    struct cc_overlay_rect all = {0, 0, L.width, L.height};
    CHECKF(count_near(im, all, COLOURS[0]) == 0 && count_near(im, all, COLOURS[2]) == 0,
           "enlarged: another camera's colour shows");
    CHECKF(L.panel.w > 0 && L.n_rows == 2 && strcmp(L.first_label, LABELS[1]) == 0 &&
               strstr(L.source_line, "yard"),
           "enlarged: panel %d wide, %d rows, first \"%s\", source \"%s\"", L.panel.w, L.n_rows,
           L.first_label, L.source_line);
}

/* Without a grid (one camera) Tab and clicks are nothing, and Esc still quits. */
static void check_no_grid(void)
{
    struct cc_overlay *ov = ovt_open_overlay(640, 480, NULL, true);
    if (!ov)
        return;
    struct cc_error msg = {{0}};
    ovt_push_key(SDLK_TAB);
    push_click(100, 100);
    ovt_push_key(SDLK_0);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    ovt_push_key(SDLK_ESCAPE);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_QUIT);
    cc_overlay_destroy(ov);
}

static void test_grid_at(int w, int h, const char *outdir)
{
    struct cc_overlay *ov = ovt_open_overlay(w, h, NULL, true);
    if (!ov)
        return;
    struct cc_error err = {{0}};
    struct cc_frame f[3];
    for (int i = 0; i < 3; i++)
        f[i] = solid(160 + 40 * i, 120, COLOURS[i]); // each its own size too
    struct cc_image im = {0};
    char path[4096];
    if (!CHECKF(cc_overlay_open_grid(ov, 3, NAMES, &err), "open_grid: %s", err.msg))
        goto out;
    for (int i = 0; i < 3; i++) {
        struct cc_result r = result_of(i);
        CHECKF(cc_overlay_tile_update(ov, i, &f[i], &r, &err), "tile %d: %s", i, err.msg);
    }
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-grid.png", outdir, w, h);
    if (ovt_save_and_load(ov, path, &im))
        check_tiles(ov, &im);
    check_events(ov);

    // A stopped camera: why, on red, in its caption; the others unchanged.
    cc_overlay_tile_stopped(ov, 2, "the stream ended");
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-grid-stopped.png", outdir, w, h);
    if (ovt_save_and_load(ov, path, &im)) {
        struct cc_overlay_layout L;
        struct cc_overlay_rect t;
        cc_overlay_tile_layout(ov, 2, &L, &t);
        CHECKF(strcmp(L.caption_text, "hall \u00b7 stopped: the stream ended") == 0,
               "stopped caption \"%s\"", L.caption_text);
        const uint8_t red[3] = {190, 40, 40};
        struct cc_overlay_rect band = {t.x, t.y, t.w, L.caption.h};
        CHECKF(count_near(&im, band, red) > band.w * band.h / 2, "stopped caption not on red");
    }

    // Enlarged: the one-camera picture of camera 1; then the grid again.
    cc_overlay_show_grid(ov, false);
    struct cc_result r1 = result_of(1);
    CHECK(cc_overlay_set_source(ov, "yard"));
    CHECK(cc_overlay_present(ov, &f[1], &r1, &err));
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-grid-enlarged.png", outdir, w, h);
    if (ovt_save_and_load(ov, path, &im))
        check_enlarged(ov, &im);
    cc_overlay_show_grid(ov, true);
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    snprintf(path, sizeof(path), "%s/overlay-%dx%d-grid-back.png", outdir, w, h);
    if (ovt_save_and_load(ov, path, &im)) {
        struct cc_overlay_layout L;
        struct cc_overlay_rect t;
        cc_overlay_tile_layout(ov, 0, &L, &t);
        struct cc_overlay_rect mid = {t.x + t.w / 2 - 5, t.y + t.h / 2 - 5, 10, 10};
        CHECKF(count_near(&im, mid, COLOURS[0]) == 100, "back in the grid: tile 0 not red");
    }
out:
    cc_image_finish(&im);
    for (int i = 0; i < 3; i++)
        free(f[i].data);
    cc_overlay_destroy(ov);
}

void ovt_test_grid(const char *outdir)
{
    check_no_grid();
    test_grid_at(640, 480, outdir);
    test_grid_at(480, 320, outdir); // the least window
}
