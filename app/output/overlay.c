/* camclass — the SDL2 overlay window (see overlay.h); the picture is drawn by overlay_draw.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <SDL.h>
#include <png.h>

#include "overlay.h"
#include "overlay_grid.h"

#define DEFAULT_W 1280
#define DEFAULT_H 720

struct cc_overlay {
    SDL_Window *window;
    SDL_Renderer *renderer;
    bool sdl_video;               // SDL's video subsystem was initialized here (and is quit)
    struct cc_overlay_draw *draw; // draws the picture with renderer
    char *shot_dir;

    char notice[160];    // "saved NAME" after s (or a collected picture); until notice_until
    Uint64 notice_until; // SDL_GetTicks64 ms
    bool paused;
    int label_key;     // the digit of the last CC_OVERLAY_LABEL
    bool cam_shown;    // h: the class activation map is to be shown
    SDL_Rect windowed; // the window's place and size before f made it fullscreen; w 0: none

    char *font_path;              // the config's (NULL: the default), for the grid's tiles
    struct cc_overlay_grid *grid; // several cameras (cc_overlay_open_grid); NULL: one
    bool grid_shown;              // draw the grid, not the one picture
    int clicked;                  // the grid's tile under the last CC_OVERLAY_CLICK; -1: none
};

/* ---------------------------------------------------------------------------------------- */
/* Create and destroy                                                                       */
/* ---------------------------------------------------------------------------------------- */

static void set_fullscreen(struct cc_overlay *ov, bool on);

static bool env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

void cc_overlay_fit_size(int avail_w, int avail_h, int *w, int *h)
{
    *w = DEFAULT_W, *h = DEFAULT_H;
    if (avail_w <= 0 || avail_h <= 0 || (avail_w >= DEFAULT_W && avail_h >= DEFAULT_H))
        return;
    if ((long long)avail_w * DEFAULT_H <= (long long)avail_h * DEFAULT_W) { // width-bound
        *w = avail_w;
        *h = (int)(((long long)avail_w * DEFAULT_H + DEFAULT_W / 2) / DEFAULT_W);
    } else {
        *h = avail_h;
        *w = (int)(((long long)avail_h * DEFAULT_W + DEFAULT_H / 2) / DEFAULT_H);
    }
}

/* With a stale DISPLAY (no X server answers) SDL falls back to a driver that shows nothing:
 * a window nobody sees. Only when asked for by name (SDL_VIDEODRIVER, as the tests do) is such
 * a driver what the user wants. */
static bool check_video_driver(struct cc_error *err)
{
    const char *driver = SDL_GetCurrentVideoDriver();
    if (env_set("SDL_VIDEODRIVER") || !driver ||
        (strcmp(driver, "offscreen") != 0 && strcmp(driver, "dummy") != 0))
        return true;
    bool x = env_set("DISPLAY");
    const char *var = x ? "DISPLAY" : "WAYLAND_DISPLAY";
    cc_error_set(err,
                 "overlay: no display: nothing answers at %s=%s (SDL fell back to its %s "
                 "driver, which shows nothing); start the display, fix %s, or use "
                 "--headless",
                 var, getenv(var), driver, var);
    return false;
}

/* The window's size: the asked one, else one that fits the screen (an 800 × 480
 * touchscreen): the usable area (without panels), else the desktop mode; left as 1280 × 720
 * when SDL knows neither. */
static void window_size(const struct cc_overlay_config *cfg, int *w, int *h)
{
    *w = cfg->width > 0 ? cfg->width : DEFAULT_W;
    *h = cfg->height > 0 ? cfg->height : DEFAULT_H;
    if (cfg->width > 0 && cfg->height > 0)
        return;
    SDL_Rect b = {0};
    SDL_DisplayMode dm;
    if (SDL_GetDisplayUsableBounds(0, &b) != 0 && SDL_GetDesktopDisplayMode(0, &dm) == 0)
        b.w = dm.w, b.h = dm.h;
    cc_overlay_fit_size(b.w, b.h, w, h);
}

struct cc_overlay *cc_overlay_create(const struct cc_overlay_config *cfg, struct cc_error *err)
{
    // Checked before SDL_Init: without a display SDL would probe drivers (and may print).
    if (!env_set("SDL_VIDEODRIVER") && !env_set("DISPLAY") && !env_set("WAYLAND_DISPLAY")) {
        cc_error_set(err, "overlay: no display: neither DISPLAY nor WAYLAND_DISPLAY is set "
                          "(e.g. over SSH; use ssh -X, or --headless)");
        return NULL;
    }
    struct cc_overlay *ov = calloc(1, sizeof(*ov));
    if (!ov) {
        cc_error_set(err, "overlay: out of memory");
        return NULL;
    }
    ov->shot_dir = strdup(cfg->screenshot_dir ? cfg->screenshot_dir : ".");
    ov->font_path = cfg->font_path ? strdup(cfg->font_path) : NULL;
    if (!ov->shot_dir || (cfg->font_path && !ov->font_path)) {
        cc_error_set(err, "overlay: out of memory");
        goto error;
    }
    // main owns SIGINT/SIGTERM (the logger finishes its line on them); SDL must not take them.
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) {
        cc_error_set(err, "overlay: SDL_Init(VIDEO) failed: %s", SDL_GetError());
        goto error;
    }
    ov->sdl_video = true;
    if (!check_video_driver(err))
        goto error;
    int w, h;
    window_size(cfg, &w, &h);
    // Hidden until the drawer has its font: a missing font fails before a window flashes up.
    Uint32 flags = SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI | SDL_WINDOW_HIDDEN;
    ov->window = SDL_CreateWindow(cfg->title ? cfg->title : "camclass", SDL_WINDOWPOS_CENTERED,
                                  SDL_WINDOWPOS_CENTERED, w, h, flags);
    if (!ov->window) {
        cc_error_set(err, "overlay: SDL_CreateWindow failed: %s", SDL_GetError());
        goto error;
    }
    ov->renderer = SDL_CreateRenderer(ov->window, -1, cfg->software ? SDL_RENDERER_SOFTWARE : 0);
    if (!ov->renderer) {
        cc_error_set(err, "overlay: SDL_CreateRenderer failed: %s", SDL_GetError());
        goto error;
    }
    SDL_SetRenderDrawBlendMode(ov->renderer, SDL_BLENDMODE_NONE);
    // Dragged smaller than the layout's least size (--window refuses less), it would draw
    // rows over the stats; a screen smaller than that still gets a window that fits it.
    if (w >= CC_OVERLAY_MIN_W && h >= CC_OVERLAY_MIN_H)
        SDL_SetWindowMinimumSize(ov->window, CC_OVERLAY_MIN_W, CC_OVERLAY_MIN_H);
    struct cc_overlay_config drawn = *cfg;
    drawn.key_hints = true; // the window's keys work
    if (!(ov->draw = cc_overlay_draw_create(ov->renderer, &drawn, err)))
        goto error;
    SDL_ShowWindow(ov->window);
    if (cfg->fullscreen)
        set_fullscreen(ov, true); // as f does: f then returns to the fitted window
    return ov;

error:
    cc_overlay_destroy(ov);
    return NULL;
}

void cc_overlay_destroy(struct cc_overlay *ov)
{
    if (!ov)
        return;
    cc_overlay_grid_destroy(ov->grid); // its textures belong to the renderer too
    cc_overlay_draw_destroy(ov->draw); // its textures belong to the renderer
    if (ov->renderer)
        SDL_DestroyRenderer(ov->renderer);
    if (ov->window)
        SDL_DestroyWindow(ov->window);
    if (ov->sdl_video)
        SDL_QuitSubSystem(SDL_INIT_VIDEO);
    free(ov->shot_dir);
    free(ov->font_path);
    free(ov);
}

/* ---------------------------------------------------------------------------------------- */
/* Drawing                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Draws the picture into the back buffer with the notice while it lasts. */
static bool draw(struct cc_overlay *ov, struct cc_error *err)
{
    if (ov->notice[0] && SDL_GetTicks64() >= ov->notice_until)
        ov->notice[0] = '\0';
    if (ov->grid && ov->grid_shown) {
        cc_overlay_grid_set_states(ov->grid, ov->paused, ov->notice);
        return cc_overlay_grid_draw(ov->grid, err);
    }
    cc_overlay_draw_set_notice(ov->draw, ov->notice);
    cc_overlay_draw_set_paused(ov->draw, ov->paused);
    return cc_overlay_draw_picture(ov->draw, err);
}

bool cc_overlay_present(struct cc_overlay *ov, const struct cc_frame *frame,
                        const struct cc_result *r, struct cc_error *err)
{
    bool ok = true;
    if (!ov->paused && r)
        cc_overlay_draw_set_result(ov->draw, r);
    if (!ov->paused && frame)
        ok = cc_overlay_draw_set_frame(ov->draw, frame, err); // on error: the previous frame
    if (!draw(ov, ok ? err : NULL))
        return false;
    SDL_RenderPresent(ov->renderer);
    return ok;
}

bool cc_overlay_set_picture(struct cc_overlay *ov, const struct cc_frame *frame,
                            const struct cc_result *r, struct cc_error *err)
{
    if (r)
        cc_overlay_draw_set_result(ov->draw, r);
    return !frame || cc_overlay_draw_set_frame(ov->draw, frame, err);
}

void cc_overlay_layout(const struct cc_overlay *ov, struct cc_overlay_layout *out)
{
    cc_overlay_draw_layout(ov->draw, out);
    if (!ov->notice[0] || SDL_GetTicks64() >= ov->notice_until)
        out->notice_text[0] = '\0';
}

/* ---------------------------------------------------------------------------------------- */
/* Screenshots                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Writes rows of packed RGB as a PNG. libpng reports errors by longjmp to here. */
static bool write_png(const char *path, const uint8_t *rgb, int w, int h, struct cc_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return cc_error_set(err, "overlay: cannot write screenshot %s: %s", path, strerror(errno));
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        fclose(f);
        return cc_error_set(err, "overlay: out of memory writing %s", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return cc_error_set(err, "overlay: libpng failed writing %s (disk full?)", path);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, rgb + (size_t)y * w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0)
        return cc_error_set(err, "overlay: cannot write screenshot %s: %s", path, strerror(errno));
    return true;
}

bool cc_overlay_save_png(struct cc_overlay *ov, const char *path, struct cc_error *err)
{
    // The back buffer is undefined after a present, so draw again and read before presenting.
    if (!draw(ov, err))
        return false;
    int w, h;
    SDL_GetRendererOutputSize(ov->renderer, &w, &h);
    uint8_t *rgb = malloc((size_t)w * h * 3);
    if (!rgb)
        return cc_error_set(err, "overlay: out of memory for a %dx%d screenshot", w, h);
    bool ok = true;
    if (SDL_RenderReadPixels(ov->renderer, NULL, SDL_PIXELFORMAT_RGB24, rgb, w * 3) != 0)
        ok = cc_error_set(err, "overlay: SDL_RenderReadPixels failed: %s", SDL_GetError());
    SDL_RenderPresent(ov->renderer);
    if (ok)
        ok = write_png(path, rgb, w, h, err);
    free(rgb);
    return ok;
}

/* s: camclass-YYYYmmdd-HHMMSS.png in shot_dir, with -2, -3, ... when that name is taken. */
static enum cc_overlay_event screenshot(struct cc_overlay *ov, struct cc_error *msg)
{
    char stamp[32], path[4096];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(path, sizeof(path), "%s/camclass-%s.png", ov->shot_dir, stamp);
    for (int k = 2; access(path, F_OK) == 0 && k < 100; k++)
        snprintf(path, sizeof(path), "%s/camclass-%s-%d.png", ov->shot_dir, stamp, k);
    struct cc_error e = {{0}};
    bool ok = cc_overlay_save_png(ov, path, &e);
    // Confirmed on the window too: the terminal may be out of sight (a kiosk).
    const char *base = strrchr(path, '/');
    snprintf(ov->notice, sizeof(ov->notice), ok ? "saved %.140s" : "screenshot failed: %.130s",
             ok ? (base ? base + 1 : path) : e.msg);
    ov->notice_until = SDL_GetTicks64() + CC_OVERLAY_NOTICE_MS;
    if (draw(ov, NULL))
        SDL_RenderPresent(ov->renderer);
    if (!ok) {
        cc_error_set(msg, "%s", e.msg);
        return CC_OVERLAY_ERROR;
    }
    cc_error_set(msg, "overlay: screenshot saved to %s", path);
    return CC_OVERLAY_SCREENSHOT;
}

/* ---------------------------------------------------------------------------------------- */
/* Events                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* f: fullscreen on the window's display, or back to the window it was. Without a window
 * manager SDL's X11 fullscreen only asks for _NET_WM_STATE_FULLSCREEN, which nobody grants:
 * the X window keeps its size while SDL reports the desktop's, and the picture is drawn for a
 * size the window does not have (cut off at the top). So the window is also made borderless
 * and moved and resized to the display's bounds itself (which X does at once without a window
 * manager, and which a window manager's fullscreen then agrees with), and on the way back
 * given its size and place again. */
static void set_fullscreen(struct cc_overlay *ov, bool on)
{
    SDL_Window *w = ov->window;
    if (on) {
        SDL_GetWindowPosition(w, &ov->windowed.x, &ov->windowed.y);
        SDL_GetWindowSize(w, &ov->windowed.w, &ov->windowed.h);
        SDL_Rect b;
        int d = SDL_GetWindowDisplayIndex(w);
        if (SDL_GetDisplayBounds(d < 0 ? 0 : d, &b) == 0) {
            SDL_SetWindowBordered(w, SDL_FALSE);
            SDL_SetWindowPosition(w, b.x, b.y);
            SDL_SetWindowSize(w, b.w, b.h);
        }
        SDL_SetWindowFullscreen(w, SDL_WINDOW_FULLSCREEN_DESKTOP);
    } else {
        SDL_SetWindowFullscreen(w, 0);
        SDL_SetWindowBordered(w, SDL_TRUE);
        if (ov->windowed.w > 0) {
            SDL_SetWindowSize(w, ov->windowed.w, ov->windowed.h);
            SDL_SetWindowPosition(w, ov->windowed.x, ov->windowed.y);
        }
    }
}

/* A click at window point (x, y): the grid's tile under it, in output pixels (HiDPI). */
static enum cc_overlay_event click(struct cc_overlay *ov, int x, int y)
{
    int w, h, ww, wh;
    ov->clicked = -1;
    if (ov->grid_shown && SDL_GetRendererOutputSize(ov->renderer, &w, &h) == 0) {
        SDL_GetWindowSize(ov->window, &ww, &wh);
        if (ww > 0 && wh > 0)
            ov->clicked = cc_grid_hit(w, h, cc_overlay_grid_count(ov->grid),
                                      (int)((long long)x * w / ww), (int)((long long)y * h / wh));
    }
    return CC_OVERLAY_CLICK;
}

enum cc_overlay_event cc_overlay_poll(struct cc_overlay *ov, struct cc_error *msg)
{
    SDL_Event e;
    // SDL_PollEvent ends a pass at a sentinel queued when it pumped, so an event pushed after
    // that (SDL_PushEvent, or our own early return) waits for the next pass: take two.
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && SDL_PeepEvents(NULL, 0, SDL_PEEKEVENT, SDL_FIRSTEVENT, SDL_LASTEVENT) <= 0)
            break;
        while (SDL_PollEvent(&e)) {
            if (e.type == SDL_QUIT ||
                (e.type == SDL_WINDOWEVENT && e.window.event == SDL_WINDOWEVENT_CLOSE))
                return CC_OVERLAY_QUIT;
            if (e.type == SDL_WINDOWEVENT && (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED ||
                                              e.window.event == SDL_WINDOWEVENT_EXPOSED)) {
                // Redrawn now, for the new output size (SDL has set the viewport by the time
                // the event is taken): the caller's next present may be 100 ms away.
                if (draw(ov, NULL))
                    SDL_RenderPresent(ov->renderer);
                continue;
            }
            // A tap on a touchscreen comes as a left click too (SDL's and X's emulation).
            if (e.type == SDL_MOUSEBUTTONUP && e.button.button == SDL_BUTTON_LEFT && ov->grid)
                return click(ov, e.button.x, e.button.y);
            if (e.type != SDL_KEYDOWN || e.key.repeat)
                continue;
            switch (e.key.keysym.sym) {
            case SDLK_q:
                return CC_OVERLAY_QUIT;
            case SDLK_ESCAPE:
                return ov->grid ? CC_OVERLAY_BACK : CC_OVERLAY_QUIT;
            case SDLK_TAB:
                if (ov->grid)
                    return CC_OVERLAY_TAB;
                break;
            case SDLK_0:
                if (!ov->grid)
                    break;
                ov->label_key = 0;
                return CC_OVERLAY_LABEL;
            case SDLK_f:
                set_fullscreen(ov, !(SDL_GetWindowFlags(ov->window) & SDL_WINDOW_FULLSCREEN));
                break;
            case SDLK_p:
                ov->paused = !ov->paused;
                return ov->paused ? CC_OVERLAY_PAUSED : CC_OVERLAY_RESUMED;
            case SDLK_s:
                return screenshot(ov, msg);
            case SDLK_h:
                ov->cam_shown = !ov->cam_shown;
                return CC_OVERLAY_CAM;
            case SDLK_1:
            case SDLK_2:
            case SDLK_3:
            case SDLK_4:
            case SDLK_5:
            case SDLK_6:
            case SDLK_7:
            case SDLK_8:
            case SDLK_9:
                ov->label_key = (int)(e.key.keysym.sym - SDLK_0);
                return CC_OVERLAY_LABEL;
            default:
                break;
            }
        }
    }
    return CC_OVERLAY_NONE;
}

bool cc_overlay_cam_shown(const struct cc_overlay *ov)
{
    return ov->cam_shown;
}

int cc_overlay_label_key(const struct cc_overlay *ov)
{
    return ov->label_key;
}

void cc_overlay_notice(struct cc_overlay *ov, const char *text)
{
    snprintf(ov->notice, sizeof(ov->notice), "%s", text);
    ov->notice_until = SDL_GetTicks64() + CC_OVERLAY_NOTICE_MS;
}

bool cc_overlay_set_model(struct cc_overlay *ov, const char *name, int classes)
{
    return cc_overlay_draw_set_model(ov->draw, name, classes);
}

void cc_overlay_set_collect(struct cc_overlay *ov, const char *line)
{
    cc_overlay_draw_set_collect(ov->draw, line);
}

bool cc_overlay_paused(const struct cc_overlay *ov)
{
    return ov->paused;
}

const char *cc_overlay_renderer_name(const struct cc_overlay *ov)
{
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(ov->renderer, &info) != 0)
        return "unknown";
    return info.name; // a static string in SDL
}

/* ---------------------------------------------------------------------------------------- */
/* Several cameras: the grid                                                                */
/* ---------------------------------------------------------------------------------------- */

bool cc_overlay_open_grid(struct cc_overlay *ov, int n, const char *const *names,
                          struct cc_error *err)
{
    struct cc_overlay_config tc = {.font_path = ov->font_path};
    cc_overlay_grid_destroy(ov->grid);
    ov->grid = cc_overlay_grid_create(ov->renderer, &tc, n, names, err);
    ov->grid_shown = ov->grid != NULL;
    ov->clicked = -1;
    return ov->grid != NULL;
}

bool cc_overlay_tile_update(struct cc_overlay *ov, int i, const struct cc_frame *frame,
                            const struct cc_result *r, struct cc_error *err)
{
    if (!ov->grid || ov->paused)
        return true; // while paused the grid shows what it showed
    return cc_overlay_grid_set(ov->grid, i, frame, r, err);
}

void cc_overlay_tile_stopped(struct cc_overlay *ov, int i, const char *why)
{
    if (ov->grid)
        cc_overlay_grid_stopped(ov->grid, i, why);
}

void cc_overlay_show_grid(struct cc_overlay *ov, bool on)
{
    ov->grid_shown = on && ov->grid;
}

int cc_overlay_clicked_tile(const struct cc_overlay *ov)
{
    return ov->clicked;
}

bool cc_overlay_set_source(struct cc_overlay *ov, const char *label)
{
    return cc_overlay_draw_set_source(ov->draw, label);
}

void cc_overlay_tile_layout(const struct cc_overlay *ov, int i, struct cc_overlay_layout *out,
                            struct cc_overlay_rect *tile)
{
    struct cc_grid_rect t = {0, 0, 0, 0};
    *out = (struct cc_overlay_layout){0};
    if (ov->grid)
        cc_overlay_grid_layout(ov->grid, i, out, &t);
    *tile = (struct cc_overlay_rect){t.x, t.y, t.w, t.h};
}
