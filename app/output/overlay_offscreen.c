/* camclass — the overlay picture drawn offscreen (see overlay_offscreen.h).
 *
 * SDL_CreateSoftwareRenderer draws into an SDL_Surface in memory: no window, no display, and
 * no SDL_Init(SDL_INIT_VIDEO) (tests/output/test_overlay.c draws one with DISPLAY,
 * WAYLAND_DISPLAY and SDL_VIDEODRIVER unset). The surface is XRGB8888, the format SDL's blitters
 * are fastest with; cc_overlay_render converts it to RGB24 with SDL_RenderReadPixels, which
 * also runs the renderer's queued commands.
 */
#include <stdlib.h>

#include <SDL.h>

#include "overlay_offscreen.h"

#define MAX_SIDE 8192

struct cc_overlay_offscreen {
    SDL_Surface *surface;         // (height, width) XRGB8888, the renderer's target
    SDL_Renderer *renderer;       // software, on surface
    struct cc_overlay_draw *draw; // draws the picture with renderer
};

struct cc_overlay_offscreen *cc_overlay_offscreen_create(const struct cc_overlay_config *cfg,
                                                         int width, int height,
                                                         struct cc_error *err)
{
    if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) {
        cc_error_set(err, "overlay: offscreen size %dx%d is out of range (1 to %d a side)", width,
                     height, MAX_SIDE);
        return NULL;
    }
    struct cc_overlay_offscreen *o = calloc(1, sizeof(*o));
    if (!o) {
        cc_error_set(err, "overlay: out of memory");
        return NULL;
    }
    o->surface = SDL_CreateRGBSurfaceWithFormat(0, width, height, 32, SDL_PIXELFORMAT_XRGB8888);
    if (!o->surface) {
        cc_error_set(err, "overlay: SDL_CreateRGBSurfaceWithFormat(%dx%d) failed: %s", width,
                     height, SDL_GetError());
        goto error;
    }
    o->renderer = SDL_CreateSoftwareRenderer(o->surface);
    if (!o->renderer) {
        cc_error_set(err, "overlay: SDL_CreateSoftwareRenderer failed: %s", SDL_GetError());
        goto error;
    }
    SDL_SetRenderDrawBlendMode(o->renderer, SDL_BLENDMODE_NONE); // as the window's renderer
    if (!(o->draw = cc_overlay_draw_create(o->renderer, cfg, err)))
        goto error;
    // One picture now: the fonts for this size open here, not at the first render.
    if (!cc_overlay_draw_picture(o->draw, err))
        goto error;
    return o;

error:
    cc_overlay_offscreen_destroy(o);
    return NULL;
}

void cc_overlay_offscreen_destroy(struct cc_overlay_offscreen *o)
{
    if (!o)
        return;
    cc_overlay_draw_destroy(o->draw); // its textures belong to the renderer
    if (o->renderer)
        SDL_DestroyRenderer(o->renderer);
    if (o->surface)
        SDL_FreeSurface(o->surface);
    free(o);
}

bool cc_overlay_render(struct cc_overlay_offscreen *o, const struct cc_frame *frame,
                       const struct cc_result *r, uint8_t *rgb, int stride, struct cc_error *err)
{
    if (r)
        cc_overlay_draw_set_result(o->draw, r);
    bool ok = !frame || cc_overlay_draw_set_frame(o->draw, frame, err);
    if (!cc_overlay_draw_picture(o->draw, ok ? err : NULL))
        return false;
    if (SDL_RenderReadPixels(o->renderer, NULL, SDL_PIXELFORMAT_RGB24, rgb, stride) != 0)
        return cc_error_set(err, "overlay: SDL_RenderReadPixels failed: %s", SDL_GetError());
    return ok;
}

void cc_overlay_offscreen_layout(const struct cc_overlay_offscreen *o,
                                 struct cc_overlay_layout *out)
{
    cc_overlay_draw_layout(o->draw, out);
}
