/* camclass — the overlay test, keys and frame formats (part of test_overlay; see
 * test_overlay.c for the whole and overlay_checks.h for the helpers).
 *
 * f draws for the fullscreen size and back; pause keeps the paused picture, s writes a
 * screenshot, q/Esc/close quit; YUYV and MJPEG frames, and a malformed frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <SDL.h>

#include "convert.h"
#include "decode.h"
#include "overlay.h"
#include "overlay_checks.h"
#include "testutil.h"

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

void ovt_test_keys_and_formats(const struct cc_frame *bars, const char *outdir,
                               const char *sample_jpg)
{
    char shots[4096];
    snprintf(shots, sizeof(shots), "%s/shots-XXXXXX", outdir);
    if (!CHECKF(mkdtemp(shots) != NULL, "mkdtemp %s", shots))
        return;
    struct cc_overlay *ov = ovt_open_overlay(640, 480, shots, true);
    if (!ov)
        return;
    struct cc_error err = {{0}}, msg = {{0}};
    struct cc_result r = ovt_crafted_result(30.0);
    CHECK(cc_overlay_present(ov, bars, &r, &err));
    struct cc_image a = {0}, b = {0};
    char path[4096];
    snprintf(path, sizeof(path), "%s/keys-before.png", outdir);
    ovt_save_and_load(ov, path, &a);

    // p: paused; a new frame and result are ignored, the paused picture stays.
    ovt_push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_PAUSED && cc_overlay_paused(ov));
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    uint8_t red[3] = {0}; // Y 81 U 90 V 240 is BT.601 red
    int rgb[3];
    cc_yuv_to_rgb(81, 90, 240, rgb);
    for (int c = 0; c < 3; c++)
        red[c] = (uint8_t)rgb[c];
    struct cc_frame wide = yuyv_frame(320, 90, 81, 90, 240);
    struct cc_result r2 = ovt_crafted_result(5.0);
    r2.top[0].score = 0.1f;
    CHECK(cc_overlay_present(ov, &wide, &r2, &err));
    snprintf(path, sizeof(path), "%s/keys-paused.png", outdir);
    if (ovt_save_and_load(ov, path, &b) && a.pixels) {
        struct cc_overlay_layout L;
        cc_overlay_layout(ov, &L);
        // The picture is the one before, except for the PAUSED badge on the frame's top left.
        int diff = 0;
        for (int y = 0; y < 480; y++)
            for (int x = 0; x < 640; x++)
                diff += memcmp(ovt_px(&a, x, y), ovt_px(&b, x, y), 3) != 0 &&
                        !(x < L.frame_area.w / 2 && y < L.frame_area.h / 4);
        CHECKF(diff == 0, "paused picture differs in %d pixels outside the badge", diff);
        struct cc_overlay_rect badge = {0, 0, L.frame_area.w / 2, L.frame_area.h / 4};
        int red_px = 0;
        for (int y = badge.y; y < badge.h; y++)
            for (int x = badge.x; x < badge.w; x++)
                red_px += ovt_px(&b, x, y)[0] > 150 && ovt_px(&b, x, y)[1] < 80;
        CHECKF(red_px > 200, "no PAUSED badge (%d red pixels)", red_px);
    }

    // p again: the wide YUYV frame shows, converted by convert.h, letterboxed top and bottom.
    ovt_push_key(SDLK_p);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_RESUMED && !cc_overlay_paused(ov));
    CHECK(cc_overlay_present(ov, &wide, &r2, &err));
    snprintf(path, sizeof(path), "%s/keys-yuyv.png", outdir);
    cc_image_finish(&b);
    if (ovt_save_and_load(ov, path, &b)) {
        struct cc_overlay_layout L;
        cc_overlay_layout(ov, &L);
        struct cc_overlay_rect f = L.frame;
        CHECKF(f.w == L.frame_area.w && abs(f.h - (f.w * 90 + 160) / 320) <= 1,
               "wide frame %dx%d in area %d", f.w, f.h, L.frame_area.w);
        CHECKF(ovt_near(ovt_px(&b, f.x + f.w / 2, f.y + f.h / 2), red, 2),
               "YUYV centre %d,%d,%d, expected %d,%d,%d",
               ovt_px(&b, f.x + f.w / 2, f.y + f.h / 2)[0],
               ovt_px(&b, f.x + f.w / 2, f.y + f.h / 2)[1],
               ovt_px(&b, f.x + f.w / 2, f.y + f.h / 2)[2], red[0], red[1], red[2]);
        CHECK(ovt_near(ovt_px(&b, f.x + f.w / 2, f.y - 2), L.background_rgb, 2));
        CHECK(ovt_near(ovt_px(&b, f.x + f.w / 2, f.y + f.h + 1), L.background_rgb, 2));
        CHECK(L.bar[0].w > 0 && ovt_bar_length(&b, &L, 0) == (int)(0.1f * L.bar[0].w + 0.5f));
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
        if (ovt_save_and_load(ov, path, &b)) {
            struct cc_overlay_layout L;
            cc_overlay_layout(ov, &L);
            const uint8_t *c = ovt_px(&b, L.frame.x + L.frame.w / 2, L.frame.y + L.frame.h / 2);
            CHECKF(ovt_near(c, expect, 2), "%s centre %d,%d,%d, expected %d,%d,%d",
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
    if (ovt_save_and_load(ov, path, &b)) {
        struct cc_overlay_layout L;
        cc_overlay_layout(ov, &L);
        for (int k = 0; k < 8; k++) {
            int x = L.frame.x + (2 * k + 1) * L.frame.w / 16, y = L.frame.y + L.frame.h / 3;
            CHECKF(ovt_near(ovt_px(&b, x, y), OVT_BARS[k], 12), "MJPEG bar %d is %d,%d,%d", k,
                   ovt_px(&b, x, y)[0], ovt_px(&b, x, y)[1], ovt_px(&b, x, y)[2]);
        }
    }
    free(jpeg);

    // s: a screenshot in the configured directory, named camclass-YYYYmmdd-HHMMSS.png.
    ovt_push_key(SDLK_s);
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
    ovt_push_key(SDLK_s);
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
    ovt_push_key(SDLK_f);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    struct cc_overlay_layout FL;
    cc_overlay_layout(ov, &FL);
    CHECKF(FL.width == dm.w && FL.height == dm.h, "fullscreen: output %dx%d, desktop %dx%d",
           FL.width, FL.height, dm.w, dm.h);
    snprintf(path, sizeof(path), "%s/keys-fullscreen.png", outdir);
    cc_image_finish(&b);
    if (ovt_save_and_load(ov, path, &b))
        CHECKF(b.width == dm.w && b.height == dm.h, "fullscreen screenshot %dx%d", b.width,
               b.height);
    ovt_push_key(SDLK_f);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    cc_overlay_layout(ov, &FL);
    CHECKF(FL.width == 640 && FL.height == 480, "after f f: output %dx%d", FL.width, FL.height);
    // 1-9 (--collect): handed to the caller with the digit; its notice and the counts line
    // show over the frame, the line above the notice, both inside the frame area.
    ovt_push_key(SDLK_3);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_LABEL && cc_overlay_label_key(ov) == 3);
    ovt_push_key(SDLK_9);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_LABEL && cc_overlay_label_key(ov) == 9);
    ovt_push_key(SDLK_0);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_NONE);
    // h: the class activation map on, then off again (the caller asks the pipeline for it).
    CHECK(!cc_overlay_cam_shown(ov));
    ovt_push_key(SDLK_h);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_CAM && cc_overlay_cam_shown(ov));
    ovt_push_key(SDLK_h);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_CAM && !cc_overlay_cam_shown(ov));
    cc_overlay_set_collect(ov, "1 open: 3   2 closed: 0");
    cc_overlay_notice(ov, "saved open/x.jpg");
    CHECK(cc_overlay_present(ov, NULL, NULL, &err));
    cc_overlay_layout(ov, &FL);
    CHECKF(!strcmp(FL.collect_text, "1 open: 3   2 closed: 0") &&
               !strcmp(FL.notice_text, "saved open/x.jpg"),
           "collect \"%s\", notice \"%s\"", FL.collect_text, FL.notice_text);
    CHECK(FL.collect.y + FL.collect.h <= FL.notice.y &&
          FL.collect.x + FL.collect.w <= FL.panel.x && FL.collect.y >= 0);
    snprintf(path, sizeof(path), "%s/keys-collect.png", outdir);
    cc_image_finish(&b);
    if (ovt_save_and_load(ov, path, &b))
        CHECKF(ovt_count_not(&b, FL.collect, FL.background_rgb) > 100 &&
                   ovt_count_not(&b, FL.collect, FL.panel_rgb) > 50,
               "no collect line drawn");
    ovt_push_key(SDLK_q);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_QUIT);
    ovt_push_key(SDLK_ESCAPE);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_QUIT);
    SDL_Event quit = {.type = SDL_QUIT};
    SDL_PushEvent(&quit);
    CHECK(cc_overlay_poll(ov, &msg) == CC_OVERLAY_QUIT);
    CHECK(cc_overlay_present(ov, NULL, NULL, &err)); // still draws

    cc_image_finish(&a);
    cc_image_finish(&b);
    cc_overlay_destroy(ov);
}
