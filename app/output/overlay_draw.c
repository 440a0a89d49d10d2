/* camclass — the overlay picture drawn into an SDL renderer (see overlay_draw.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "overlay_draw_state.h"

/* ---------------------------------------------------------------------------------------- */
/* Create and destroy                                                                       */
/* ---------------------------------------------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* SDL2_ttf has one FreeType library for the process, and FreeType wants faces opened and closed
 * (and the library made and freed: TTF_Init, TTF_Quit) on one thread at a time. Every drawer
 * does those under this lock, so that drawers may be created, resized and destroyed on any
 * threads at once (a /stream's drawer is made at its first viewer, on the viewer's thread).
 * The process's only global: it guards the library's own. Drawing needs no lock (each drawer's
 * faces are its own). */
static pthread_mutex_t ttf_lock = PTHREAD_MUTEX_INITIALIZER;

/* fonts_open's work, under ttf_lock. */
static bool fonts_open_locked(struct cc_overlay_draw *ov, int px, struct cc_error *err)
{
    for (int i = 0; i < FONT_COUNT; i++) {
        if (ov->font[i])
            TTF_CloseFont(ov->font[i]);
        ov->font[i] = NULL;
    }
    ov->font_px = 0;
    if (access(ov->font_path, R_OK) != 0)
        return cc_error_set(err,
                            "overlay: cannot read font %s: %s (install fonts-dejavu-core, or give "
                            "another TrueType font)",
                            ov->font_path, strerror(errno));
    // The small font stays at 10 px or more: the key hints must be readable at 480 × 320.
    const int sizes[FONT_COUNT] = {px, px * 4 / 5 < 10 ? 10 : px * 4 / 5, px * 6 / 5};
    for (int i = 0; i < FONT_COUNT; i++) {
        ov->font[i] = TTF_OpenFont(ov->font_path, sizes[i]);
        if (!ov->font[i])
            return cc_error_set(err,
                                "overlay: SDL2_ttf cannot open font %s: %s (is it a "
                                "TrueType font?)",
                                ov->font_path, TTF_GetError());
    }
    TTF_SetFontStyle(ov->font[FONT_TITLE], TTF_STYLE_BOLD);
    ov->font_px = px;
    return true;
}

/* Opens the fonts for a body size of px (title 1.2×, bold; small 0.8×). */
static bool fonts_open(struct cc_overlay_draw *ov, int px, struct cc_error *err)
{
    if (ov->font_px == px)
        return true;
    pthread_mutex_lock(&ttf_lock);
    bool ok = fonts_open_locked(ov, px, err);
    pthread_mutex_unlock(&ttf_lock);
    return ok;
}

bool cc_overlay_font_check(const char *font_path, struct cc_error *err)
{
    struct cc_overlay_draw probe = {.font_path =
                                        (char *)(font_path ? font_path : CC_OVERLAY_DEFAULT_FONT)};
    pthread_mutex_lock(&ttf_lock);
    bool ok = TTF_Init() == 0;
    if (!ok)
        cc_error_set(err, "overlay: TTF_Init failed: %s", TTF_GetError());
    else {
        ok = fonts_open_locked(&probe, 16, err);
        for (int i = 0; i < FONT_COUNT; i++)
            if (probe.font[i])
                TTF_CloseFont(probe.font[i]);
        TTF_Quit();
    }
    pthread_mutex_unlock(&ttf_lock);
    return ok;
}

// A 3-class model shows 3 rows, not 2 empty tracks more.
static int rows_for(int top_k, int classes)
{
    return classes > 0 && top_k > classes ? classes : top_k;
}

struct cc_overlay_draw *cc_overlay_draw_create(struct SDL_Renderer *renderer,
                                               const struct cc_overlay_config *cfg,
                                               struct cc_error *err)
{
    struct cc_overlay_draw *ov = calloc(1, sizeof(*ov));
    if (!ov) {
        cc_error_set(err, "overlay: out of memory");
        return NULL;
    }
    ov->renderer = renderer;
    ov->key_hints = cfg->key_hints;
    ov->frame_only = cfg->frame_only;
    ov->help_lines = cfg->key_hints ? 1 : 0;
    ov->top_k_cfg = cfg->top_k > 0 ? cfg->top_k : DEFAULT_TOP_K;
    if (ov->top_k_cfg > CC_RESULT_MAX_TOP)
        ov->top_k_cfg = CC_RESULT_MAX_TOP;
    ov->top_k = rows_for(ov->top_k_cfg, cfg->classes);
    ov->font_path = strdup(cfg->font_path ? cfg->font_path : CC_OVERLAY_DEFAULT_FONT);
    ov->model = dup_or_empty(cfg->model_name);
    ov->backend = dup_or_empty(cfg->backend_name);
    ov->device = dup_or_empty(cfg->device_name);
    ov->source_label = strdup(cfg->source_label ? cfg->source_label : "camera");
    if (!ov->font_path || !ov->model || !ov->backend || !ov->device || !ov->source_label) {
        cc_error_set(err, "overlay: out of memory");
        goto error;
    }
    // The font first: a missing font is said before anything else happens.
    pthread_mutex_lock(&ttf_lock);
    ov->ttf = TTF_Init() == 0;
    if (!ov->ttf)
        cc_error_set(err, "overlay: TTF_Init failed: %s", TTF_GetError());
    pthread_mutex_unlock(&ttf_lock);
    if (!ov->ttf)
        goto error;
    if (!fonts_open(ov, 16, err))
        goto error;
    return ov;

error:
    cc_overlay_draw_destroy(ov);
    return NULL;
}

void cc_overlay_draw_destroy(struct cc_overlay_draw *ov)
{
    if (!ov)
        return;
    for (int i = 0; i < T_COUNT; i++)
        if (ov->text[i].tex)
            SDL_DestroyTexture(ov->text[i].tex);
    if (ov->frame_tex)
        SDL_DestroyTexture(ov->frame_tex);
    pthread_mutex_lock(&ttf_lock);
    for (int i = 0; i < FONT_COUNT; i++)
        if (ov->font[i])
            TTF_CloseFont(ov->font[i]);
    if (ov->ttf)
        TTF_Quit();
    pthread_mutex_unlock(&ttf_lock);
    cc_frame_rgb_finish(&ov->conv);
    free(ov->font_path);
    free(ov->model);
    free(ov->backend);
    free(ov->device);
    free(ov->source_label);
    free(ov);
}

/* ---------------------------------------------------------------------------------------- */
/* Frame upload: native pixels -> RGB24 texture                                             */
/* ---------------------------------------------------------------------------------------- */

static bool frame_upload(struct cc_overlay_draw *ov, const struct cc_frame *in,
                         struct cc_error *err)
{
    struct cc_frame f;
    if (!cc_frame_rgb_prepare(&ov->conv, in, &f, "overlay", err))
        return false;
    if (!ov->frame_tex || ov->frame_w != f.width || ov->frame_h != f.height) {
        if (ov->frame_tex)
            SDL_DestroyTexture(ov->frame_tex);
        ov->frame_tex = SDL_CreateTexture(ov->renderer, SDL_PIXELFORMAT_RGB24,
                                          SDL_TEXTUREACCESS_STREAMING, f.width, f.height);
        if (!ov->frame_tex)
            return cc_error_set(err, "overlay: SDL_CreateTexture(%dx%d) failed: %s", f.width,
                                f.height, SDL_GetError());
        SDL_SetTextureScaleMode(ov->frame_tex, SDL_ScaleModeLinear);
        ov->frame_w = f.width;
        ov->frame_h = f.height;
    }
    void *pixels;
    int pitch;
    if (SDL_LockTexture(ov->frame_tex, NULL, &pixels, &pitch) != 0)
        return cc_error_set(err, "overlay: SDL_LockTexture failed: %s", SDL_GetError());
    for (int y = 0; y < f.height; y++)
        cc_frame_rgb_row(&ov->conv, &f, y, (uint8_t *)pixels + (size_t)y * pitch);
    SDL_UnlockTexture(ov->frame_tex);
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Drawing                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Truncates s (UTF-8) with an ellipsis so that it fits max_w pixels in font. */
static void fit_text(TTF_Font *font, const char *s, int max_w, char *out, size_t cap)
{
    snprintf(out, cap, "%s", s);
    int tw = 0;
    if (TTF_SizeUTF8(font, out, &tw, NULL) != 0 || tw <= max_w)
        return;
    size_t n = strlen(out);
    while (n > 0) {
        do // back to the start of a UTF-8 character
            n--;
        while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80);
        // No dot, space or joiner before the ellipsis: "mobilenet_v2_0.…" reads "0....".
        while (n > 0 && strchr("._- ", out[n - 1]))
            n--;
        char tmp[sizeof(((struct text *)0)->str)];
        snprintf(tmp, sizeof(tmp), "%.*s\u2026", (int)n, out);
        if (TTF_SizeUTF8(font, tmp, &tw, NULL) == 0 && tw <= max_w) {
            snprintf(out, cap, "%s", tmp);
            return;
        }
    }
    out[0] = '\0';
}

/* Sets text slot i to s (truncated to max_w) and renders it when it changed. */
static void text_set(struct cc_overlay_draw *ov, int i, enum font_kind fk, SDL_Color c, int max_w,
                     const char *s)
{
    struct text *t = &ov->text[i];
    char fitted[sizeof(t->str)];
    fit_text(ov->font[fk], s, max_w, fitted, sizeof(fitted));
    if (t->font_px == ov->font_px && t->font == fk && !memcmp(&t->color, &c, sizeof(c)) &&
        !strcmp(t->str, fitted) && (t->tex || !fitted[0]))
        return;
    if (t->tex)
        SDL_DestroyTexture(t->tex);
    *t = (struct text){.font = fk, .font_px = ov->font_px, .color = c};
    snprintf(t->str, sizeof(t->str), "%s", fitted);
    if (!fitted[0])
        return;
    SDL_Surface *surf = TTF_RenderUTF8_Blended(ov->font[fk], fitted, c);
    if (!surf)
        return; // drawn as missing; the rest of the picture still shows
    t->tex = SDL_CreateTextureFromSurface(ov->renderer, surf);
    t->w = surf->w;
    t->h = surf->h;
    SDL_FreeSurface(surf);
    if (t->tex)
        SDL_SetTextureBlendMode(t->tex, SDL_BLENDMODE_BLEND);
}

/* Draws text slot i with its left edge at x (right edge at x when right_align), vertically
 * centred in the band [y, y + band_h). */
static void text_draw(struct cc_overlay_draw *ov, int i, int x, int y, int band_h, bool right_align)
{
    struct text *t = &ov->text[i];
    if (!t->tex)
        return;
    SDL_Rect d = {right_align ? x - t->w : x, y + (band_h - t->h) / 2, t->w, t->h};
    SDL_RenderCopy(ov->renderer, t->tex, NULL, &d);
}

static void fill(SDL_Renderer *r, const uint8_t rgb[3], int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0)
        return;
    SDL_SetRenderDrawColor(r, rgb[0], rgb[1], rgb[2], 255);
    SDL_RenderFillRect(r, &(SDL_Rect){x, y, w, h});
}

/* The ROI's outline: a line of about 1/300 of the picture's height (2 px at 720), inside the
 * ROI's rectangle so that its edge is where the crop is. */
static void draw_roi(struct cc_overlay_draw *ov, struct cc_overlay_layout *L)
{
    cc_overlay_roi_place(ov, L);
    const struct cc_overlay_rect *r = &L->roi;
    if (r->w <= 0)
        return;
    int t = L->height / 300 > 1 ? L->height / 300 : 1;
    int tw = t < r->w ? t : r->w, th = t < r->h ? t : r->h;
    fill(ov->renderer, ROI_LINE, r->x, r->y, r->w, th);
    fill(ov->renderer, ROI_LINE, r->x, r->y + r->h - th, r->w, th);
    fill(ov->renderer, ROI_LINE, r->x, r->y, tw, r->h);
    fill(ov->renderer, ROI_LINE, r->x + r->w - tw, r->y, tw, r->h);
}

/* The result's class activation map (cc_result.cam), translucent over the picture it was
 * computed on (its area: the ROI's rectangle, else the frame, as the model cropped it), one cell
 * per map value: cold blue where the answer's class found little, warm red where it found most.
 * L->cam says where (w = 0: none). */
static void draw_cam(struct cc_overlay_draw *ov, struct cc_overlay_layout *L)
{
    const struct cc_result_cam *cam = &ov->result.cam;
    cc_overlay_cam_place(ov, L);
    const struct cc_overlay_rect *r = &L->cam;
    if (r->w <= 0)
        return;
    SDL_SetRenderDrawBlendMode(ov->renderer, SDL_BLENDMODE_BLEND);
    for (int y = 0; y < cam->h; y++)
        for (int x = 0; x < cam->w; x++) {
            float v = cam->v[y * cam->w + x];
            v = v < 0 ? 0 : v > 1 ? 1 : v;
            int x0 = r->x + x * r->w / cam->w, x1 = r->x + (x + 1) * r->w / cam->w;
            int y0 = r->y + y * r->h / cam->h, y1 = r->y + (y + 1) * r->h / cam->h;
            SDL_SetRenderDrawColor(ov->renderer, (Uint8)(255 * v), (Uint8)(96 * (1 - v)),
                                   (Uint8)(255 * (1 - v)), (Uint8)(64 + 96 * v));
            SDL_Rect d = {x0, y0, x1 - x0, y1 - y0};
            SDL_RenderFillRect(ov->renderer, &d);
        }
    SDL_SetRenderDrawBlendMode(ov->renderer, SDL_BLENDMODE_NONE);
}

/* Sizes every part is drawn with: the body font's px, line heights, padding; the panel's
 * text column. */
struct metrics {
    int w, h, px, pad, line, small_line, title_line;
    int x, inner; // the panel's text column: left edge, width
};

static struct metrics metrics_of(int w, int h, int px, const struct cc_overlay_layout *layout)
{
    struct metrics m = {w, h, px, px * 3 / 4, px * 5 / 4, px, px * 3 / 2, 0, 0};
    m.x = layout->panel.x + m.pad;
    m.inner = layout->panel.w - 2 * m.pad;
    return m;
}

// The frame (with the ROI's outline, placed into layout), or a line saying there is none yet; the
// PAUSED badge.
static void draw_frame_area(struct cc_overlay_draw *ov, struct cc_overlay_layout *layout,
                            const struct metrics *m)
{
    const struct cc_overlay_rect *area = &layout->frame_area;
    if (ov->frame_tex) {
        SDL_Rect d = {layout->frame.x, layout->frame.y, layout->frame.w, layout->frame.h};
        SDL_RenderCopy(ov->renderer, ov->frame_tex, NULL, &d);
        draw_roi(ov, layout);
        draw_cam(ov, layout);
    } else {
        text_set(ov, T_NOFRAME, FONT_BODY, DIM, area->w, "waiting for the first frame\u2026");
        struct text *t = &ov->text[T_NOFRAME];
        text_draw(ov, T_NOFRAME, area->x + (area->w - t->w) / 2, area->y, area->h, false);
    }
    if (ov->paused) {
        int y = area->y + m->pad;
        text_set(ov, T_PAUSED, FONT_TITLE, TEXT, area->w, "PAUSED");
        struct text *t = &ov->text[T_PAUSED];
        fill(ov->renderer, PAUSED_BG, area->x + m->pad, y, t->w + 2 * m->pad, m->title_line);
        text_draw(ov, T_PAUSED, area->x + 2 * m->pad, y, m->title_line, false);
    }
}

// The panel's header: model, backend, device. The newest result names the backend that
// computed it: after the engine's switch to the CPU mid-run (a lost Vulkan device) the header
// says so, and the device is no longer used.
static void draw_header(struct cc_overlay_draw *ov, const struct metrics *m)
{
    int y = m->pad;
    text_set(ov, T_TITLE, FONT_TITLE, TEXT, m->inner, ov->model[0] ? ov->model : "camclass");
    text_draw(ov, T_TITLE, m->x, y, m->title_line, false);
    y += m->title_line;
    const char *backend = ov->have_result && ov->result.backend ? ov->result.backend : ov->backend;
    bool switched = strcmp(backend, ov->backend) != 0;
    char buf[160];
    snprintf(buf, sizeof(buf), "%s%s%s%s%s", backend[0] ? "backend: " : "", backend,
             switched ? " (" : "", switched ? ov->backend : "", switched ? " failed)" : "");
    text_set(ov, T_BACKEND, FONT_SMALL, DIM, m->inner, buf);
    text_draw(ov, T_BACKEND, m->x, y, m->small_line, false);
    y += m->small_line;
    text_set(ov, T_DEVICE, FONT_SMALL, DIM, m->inner, switched ? "" : ov->device);
    text_draw(ov, T_DEVICE, m->x, y, m->small_line, false);
}

// The top-k rows: label and percentage on one line, the bar under them.
static void draw_rows(struct cc_overlay_draw *ov, const struct cc_overlay_layout *layout,
                      const struct metrics *m)
{
    const struct cc_result *r = ov->have_result ? &ov->result : NULL;
    if (!r && layout->n_rows > 0) {
        text_set(ov, T_WAITING, FONT_BODY, DIM, m->inner, "waiting for results\u2026");
        text_draw(ov, T_WAITING, m->x, layout->label[0].y, m->line, false);
    }
    char buf[32];
    for (int i = 0; i < layout->n_rows; i++) {
        const struct cc_overlay_rect *label = &layout->label[i], *bar = &layout->bar[i];
        fill(ov->renderer, TRACK, bar->x, bar->y, bar->w, bar->h);
        if (!r || i >= r->n_top)
            continue;
        float s = r->top[i].score;
        s = s < 0.f ? 0.f : s > 1.f ? 1.f : s;
        fill(ov->renderer, BAR, bar->x, bar->y, (int)lroundf(s * (float)bar->w), bar->h);
        snprintf(buf, sizeof(buf), "%.1f%%", 100.0 * s);
        text_set(ov, T_SCORE0 + i, FONT_BODY, TEXT, m->inner, buf);
        int score_w = ov->text[T_SCORE0 + i].w;
        text_draw(ov, T_SCORE0 + i, label->x + label->w, label->y, label->h, true);
        // An "unknown" answer (the top score below the model's threshold) says so first; the
        // scores stay, dimmed.
        char text[LABEL_MAX + 16];
        snprintf(text, sizeof(text), "%s%s", r->unknown && i == 0 ? "unknown \u00b7 " : "",
                 r->top[i].label);
        text_set(ov, T_LABEL0 + i, FONT_BODY, r->unknown ? DIM : TEXT, m->inner - score_w - m->pad,
                 text);
        text_draw(ov, T_LABEL0 + i, label->x, label->y, label->h, false);
    }
}

// The source's and inference's rates and the latency at the panel's foot. The source's name is
// shortened (…) before its figure is.
static void draw_stats(struct cc_overlay_draw *ov, const struct cc_overlay_layout *layout,
                       const struct metrics *m)
{
    const struct cc_result *r = ov->have_result ? &ov->result : NULL;
    const char *not_yet = "\u2013"; // an en dash for "not yet known"
    char figure[32], buf[192], name[160];
    snprintf(figure, sizeof(figure), "  %s", r ? "" : not_yet);
    if (r)
        snprintf(figure, sizeof(figure), "  %.1f fps", r->camera_fps);
    int figure_w = 0;
    TTF_SizeUTF8(ov->font[FONT_BODY], figure, &figure_w, NULL);
    fit_text(ov->font[FONT_BODY], ov->source_label, m->inner - figure_w, name, sizeof(name));
    snprintf(buf, sizeof(buf), "%.120s%s", name, figure);
    text_set(ov, T_CAMERA, FONT_BODY, TEXT, m->inner, buf);
    snprintf(figure, sizeof(figure), "%.1f fps", r ? r->inference_fps : 0.0);
    snprintf(buf, sizeof(buf), "inference  %s", r ? figure : not_yet);
    text_set(ov, T_INFERENCE, FONT_BODY, TEXT, m->inner, buf);
    snprintf(figure, sizeof(figure), "%.1f ms", r ? r->latency_ms : 0.0);
    snprintf(buf, sizeof(buf), "latency  %s", r ? figure : not_yet);
    text_set(ov, T_LATENCY, FONT_BODY, TEXT, m->inner, buf);
    for (int i = 0; i < 3; i++)
        text_draw(ov, T_CAMERA + i, m->x, layout->stats.y + i * m->line, m->line, false);
}

// The key hints at the panel's foot, on one line or two.
static void draw_help(struct cc_overlay_draw *ov, const struct metrics *m)
{
    if (ov->help_lines == 0)
        return;
    if (ov->help_lines == 1) {
        text_set(ov, T_HELP, FONT_SMALL, DIM, m->inner, HELP_1);
        text_draw(ov, T_HELP, m->x, m->h - m->pad - m->small_line, m->small_line, false);
        return;
    }
    text_set(ov, T_HELP, FONT_SMALL, DIM, m->inner, HELP_2A);
    text_set(ov, T_HELP2, FONT_SMALL, DIM, m->inner, HELP_2B);
    text_draw(ov, T_HELP, m->x, m->h - m->pad - 2 * m->small_line, m->small_line, false);
    text_draw(ov, T_HELP2, m->x, m->h - m->pad - m->small_line, m->small_line, false);
}

// The notice ("saved NAME") over the foot of the frame area (the window times it), and
// --collect's line above it.
static void draw_notices(struct cc_overlay_draw *ov, const struct cc_overlay_layout *layout,
                         const struct metrics *m)
{
    const struct {
        int id;
        const char *str;
        struct cc_overlay_rect at;
    } boxes[] = {{T_NOTICE, ov->notice, layout->notice}, {T_COLLECT, ov->collect, layout->collect}};
    for (int i = 0; i < 2; i++) {
        if (!boxes[i].str[0])
            continue;
        text_set(ov, boxes[i].id, FONT_BODY, TEXT, boxes[i].at.w - 2 * m->pad, boxes[i].str);
        struct text *t = &ov->text[boxes[i].id];
        fill(ov->renderer, PANEL, boxes[i].at.x, boxes[i].at.y, t->w + 2 * m->pad, boxes[i].at.h);
        text_draw(ov, boxes[i].id, boxes[i].at.x + m->pad, boxes[i].at.y, boxes[i].at.h, false);
    }
}

// A grid tile's caption above the frame: the camera's name and its top label with the
// score, or why the camera stopped (on red).
static void draw_caption(struct cc_overlay_draw *ov, const struct cc_overlay_layout *layout,
                         const struct metrics *m)
{
    const struct cc_overlay_rect *at = &layout->caption;
    const struct cc_result *r = ov->have_result ? &ov->result : NULL;
    char buf[CC_OVERLAY_CAPTION_MAX + LABEL_MAX + 200];
    if (!ov->caption[0] || at->h <= 0) // not a tile, or one too small for it
        return;
    if (ov->stopped[0])
        snprintf(buf, sizeof(buf), "%s \u00b7 stopped: %s", ov->caption, ov->stopped);
    else if (r && r->n_top > 0)
        snprintf(buf, sizeof(buf), "%s \u00b7 %s%s %.1f%%", ov->caption,
                 r->unknown ? "unknown \u00b7 " : "", r->top[0].label,
                 100.0 * (r->top[0].score < 0.f ? 0.f : r->top[0].score));
    else
        snprintf(buf, sizeof(buf), "%s \u00b7 waiting\u2026", ov->caption);
    text_set(ov, T_CAPTION, FONT_BODY, TEXT, at->w - 2 * m->pad, buf);
    fill(ov->renderer, ov->stopped[0] ? PAUSED_BG : PANEL, at->x, at->y, at->w, at->h);
    text_draw(ov, T_CAPTION, at->x + m->pad, at->y, at->h, false);
}

/* The picture for an output of w x h, drawn from (0, 0) (the viewport is set by the caller). */
static bool draw_all(struct cc_overlay_draw *ov, int w, int h, struct cc_error *err)
{
    SDL_Renderer *rn = ov->renderer;
    int px = cc_overlay_fitting_px(ov, w, h);
    if (!fonts_open(ov, px, err))
        return false;
    // The key help on one line when it fits the panel, else on two; none where no key works.
    int help_w = 0, panel_inner = cc_overlay_panel_width(w, px) - 2 * (px * 3 / 4);
    TTF_SizeUTF8(ov->font[FONT_SMALL], HELP_1, &help_w, NULL);
    ov->help_lines = !ov->key_hints ? 0 : help_w <= panel_inner ? 1 : 2;
    struct cc_overlay_layout layout;
    cc_overlay_layout_compute(ov, w, h, px, &layout);
    struct metrics m = metrics_of(w, h, px, &layout);
    fill(rn, BACKGROUND, 0, 0, w, h);
    fill(rn, PANEL, layout.panel.x, layout.panel.y, layout.panel.w, layout.panel.h);
    draw_frame_area(ov, &layout, &m);
    draw_caption(ov, &layout, &m);
    if (!ov->frame_only) {
        draw_header(ov, &m);
        draw_rows(ov, &layout, &m);
        draw_stats(ov, &layout, &m);
        draw_help(ov, &m);
    }
    if (!ov->frame_only || ov->caption[0]) // a tile shows the window's notices; a stream none
        draw_notices(ov, &layout, &m);
    return true;
}

bool cc_overlay_draw_picture(struct cc_overlay_draw *ov, struct cc_error *err)
{
    SDL_Renderer *rn = ov->renderer;
    int w, h;
    if (cc_overlay_output_size(ov, &w, &h) != 0)
        return cc_error_set(err, "overlay: SDL_GetRendererOutputSize failed: %s", SDL_GetError());
    if (!ov->area_set)
        return draw_all(ov, w, h, err);
    // A tile: drawn from its corner and clipped to it (SDL's viewport does both).
    SDL_Rect v = {ov->area.x, ov->area.y, ov->area.w, ov->area.h};
    if (SDL_RenderSetViewport(rn, &v) != 0)
        return cc_error_set(err, "overlay: SDL_RenderSetViewport failed: %s", SDL_GetError());
    bool ok = draw_all(ov, w, h, err);
    SDL_RenderSetViewport(rn, NULL);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* What to show                                                                             */
/* ---------------------------------------------------------------------------------------- */

bool cc_overlay_draw_set_frame(struct cc_overlay_draw *ov, const struct cc_frame *frame,
                               struct cc_error *err)
{
    return frame_upload(ov, frame, err);
}

void cc_overlay_draw_set_result(struct cc_overlay_draw *ov, const struct cc_result *r)
{
    ov->result = *r;
    if (ov->result.n_top > CC_RESULT_MAX_TOP)
        ov->result.n_top = CC_RESULT_MAX_TOP;
    if (ov->result.n_top < 0)
        ov->result.n_top = 0;
    for (int i = 0; i < ov->result.n_top; i++) {
        const char *l = r->top[i].label;
        if (l)
            snprintf(ov->labels[i], LABEL_MAX, "%s", l);
        else
            snprintf(ov->labels[i], LABEL_MAX, "class %d", r->top[i].index);
        ov->result.top[i].label = ov->labels[i];
    }
    ov->have_result = true;
}

bool cc_overlay_draw_set_model(struct cc_overlay_draw *ov, const char *name, int classes)
{
    char *copy = dup_or_empty(name);
    if (!copy)
        return false;
    free(ov->model);
    ov->model = copy;
    ov->top_k = rows_for(ov->top_k_cfg, classes);
    ov->have_result = false; // the old model's labels; the next result brings the new ones
    return true;
}

void cc_overlay_draw_set_paused(struct cc_overlay_draw *ov, bool paused)
{
    ov->paused = paused;
}

void cc_overlay_draw_set_notice(struct cc_overlay_draw *ov, const char *notice)
{
    snprintf(ov->notice, sizeof(ov->notice), "%s", notice ? notice : "");
}

void cc_overlay_draw_set_collect(struct cc_overlay_draw *ov, const char *line)
{
    snprintf(ov->collect, sizeof(ov->collect), "%s", line ? line : "");
}

void cc_overlay_draw_set_area(struct cc_overlay_draw *ov, const struct cc_overlay_rect *area)
{
    ov->area_set = area != NULL;
    if (area)
        ov->area = *area;
}

void cc_overlay_draw_set_caption(struct cc_overlay_draw *ov, const char *name, const char *stopped)
{
    snprintf(ov->caption, sizeof(ov->caption), "%s", name ? name : "");
    snprintf(ov->stopped, sizeof(ov->stopped), "%s", stopped ? stopped : "");
}

bool cc_overlay_draw_set_source(struct cc_overlay_draw *ov, const char *label)
{
    char *copy = strdup(label ? label : "camera");
    if (!copy)
        return false;
    free(ov->source_label);
    ov->source_label = copy;
    return true;
}
