/* camclass — the grid of cameras drawn into an SDL renderer (see overlay_grid.h). */
#include <stdio.h>
#include <stdlib.h>

#include <SDL.h>

#include "overlay_grid.h"

static const uint8_t GAP[3] = {16, 16, 18}; // overlay_draw.c's letterbox colour

struct tile {
    struct cc_overlay_draw *draw; // frame_only, captioned; draws into its tile's rectangle
    char name[CC_OVERLAY_CAPTION_MAX];
};

struct cc_overlay_grid {
    struct SDL_Renderer *renderer; // not owned
    int n;
    struct tile tile[CC_GRID_MAX];
};

struct cc_overlay_grid *cc_overlay_grid_create(struct SDL_Renderer *renderer,
                                               const struct cc_overlay_config *cfg, int n,
                                               const char *const *names, struct cc_error *err)
{
    if (n < 1 || n > CC_GRID_MAX) {
        cc_error_set(err, "overlay: a grid of %d cameras (1 to %d)", n, CC_GRID_MAX);
        return NULL;
    }
    struct cc_overlay_grid *g = calloc(1, sizeof(*g));
    if (!g) {
        cc_error_set(err, "overlay: out of memory");
        return NULL;
    }
    g->renderer = renderer;
    struct cc_overlay_config tc = *cfg;
    tc.frame_only = true; // the panel does not fit a tile
    tc.key_hints = false;
    for (int i = 0; i < n; i++, g->n++) {
        struct tile *t = &g->tile[i];
        snprintf(t->name, sizeof(t->name), "%s", names[i] ? names[i] : "");
        if (!(t->draw = cc_overlay_draw_create(renderer, &tc, err)))
            goto error;
        cc_overlay_draw_set_caption(t->draw, t->name, NULL);
    }
    return g;

error:
    cc_overlay_grid_destroy(g);
    return NULL;
}

void cc_overlay_grid_destroy(struct cc_overlay_grid *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++)
        cc_overlay_draw_destroy(g->tile[i].draw);
    free(g);
}

bool cc_overlay_grid_set(struct cc_overlay_grid *g, int i, const struct cc_frame *frame,
                         const struct cc_result *r, struct cc_error *err)
{
    if (i < 0 || i >= g->n)
        return cc_error_set(err, "overlay: no tile %d in a grid of %d", i, g->n);
    if (r)
        cc_overlay_draw_set_result(g->tile[i].draw, r);
    return !frame || cc_overlay_draw_set_frame(g->tile[i].draw, frame, err);
}

void cc_overlay_grid_stopped(struct cc_overlay_grid *g, int i, const char *why)
{
    if (i >= 0 && i < g->n)
        cc_overlay_draw_set_caption(g->tile[i].draw, g->tile[i].name, why);
}

void cc_overlay_grid_set_states(struct cc_overlay_grid *g, bool paused, const char *notice)
{
    for (int i = 0; i < g->n; i++) {
        cc_overlay_draw_set_paused(g->tile[i].draw, paused);
        cc_overlay_draw_set_notice(g->tile[i].draw, i == 0 ? notice : NULL);
    }
}

bool cc_overlay_grid_draw(struct cc_overlay_grid *g, struct cc_error *err)
{
    int w, h;
    if (SDL_GetRendererOutputSize(g->renderer, &w, &h) != 0)
        return cc_error_set(err, "overlay: SDL_GetRendererOutputSize failed: %s", SDL_GetError());
    SDL_SetRenderDrawColor(g->renderer, GAP[0], GAP[1], GAP[2], 255);
    SDL_RenderFillRect(g->renderer, NULL);
    for (int i = 0; i < g->n; i++) {
        struct cc_grid_rect t = cc_grid_tile(w, h, g->n, i);
        if (t.w <= 0 || t.h <= 0)
            continue; // a window too small for this many tiles
        struct cc_overlay_rect area = {t.x, t.y, t.w, t.h};
        cc_overlay_draw_set_area(g->tile[i].draw, &area);
        if (!cc_overlay_draw_picture(g->tile[i].draw, err))
            return false;
    }
    return true;
}

void cc_overlay_grid_layout(const struct cc_overlay_grid *g, int i, struct cc_overlay_layout *out,
                            struct cc_grid_rect *tile)
{
    int w = 0, h = 0;
    SDL_GetRendererOutputSize(g->renderer, &w, &h);
    *tile = cc_grid_tile(w, h, g->n, i);
    if (i < 0 || i >= g->n) {
        *out = (struct cc_overlay_layout){0};
        return;
    }
    cc_overlay_draw_layout(g->tile[i].draw, out);
}

int cc_overlay_grid_count(const struct cc_overlay_grid *g)
{
    return g->n;
}
