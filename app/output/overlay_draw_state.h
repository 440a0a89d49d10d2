/* camclass — the overlay's state (overlay_draw.h), internal to overlay_draw.c (creating it,
 * drawing, the setters) and overlay_layout.c (where each part goes for a window size). One per
 * overlay, used by the thread that owns the renderer.
 */
#ifndef CC_OVERLAY_DRAW_STATE_H
#define CC_OVERLAY_DRAW_STATE_H

#include <SDL.h>
#include <SDL_ttf.h>

#include "frame_rgb.h"
#include "overlay_draw.h"

/* ---------------------------------------------------------------------------------------- */
/* Look                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static const uint8_t BACKGROUND[3] = {16, 16, 18}; // letterbox bands
static const uint8_t PANEL[3] = {32, 34, 40};
static const uint8_t TRACK[3] = {58, 62, 72};
static const uint8_t BAR[3] = {64, 170, 255};
static const uint8_t PAUSED_BG[3] = {190, 40, 40};
static const uint8_t ROI_LINE[3] = {255, 208, 0}; // the ROI's outline on the frame
static const SDL_Color TEXT = {235, 235, 235, 255};
static const SDL_Color DIM = {160, 164, 172, 255};

#define DEFAULT_TOP_K 5
#define LABEL_MAX 96

#define HELP_1 "q quit  f fullscreen  p pause  s screenshot  h heat-map"
#define HELP_2A "q quit  f fullscreen  p pause"
#define HELP_2B "s screenshot  h heat-map"

/* ---------------------------------------------------------------------------------------- */
/* State                                                                                    */
/* ---------------------------------------------------------------------------------------- */

enum font_kind { FONT_BODY, FONT_SMALL, FONT_TITLE, FONT_COUNT };

// Text lines, each rendered once into a texture and drawn until its string changes.
enum {
    T_TITLE,
    T_BACKEND,
    T_DEVICE,
    T_WAITING,
    T_NOFRAME,
    T_CAMERA,
    T_INFERENCE,
    T_LATENCY,
    T_HELP,
    T_HELP2,
    T_PAUSED,
    T_NOTICE,
    T_COLLECT,
    T_CAPTION,
    T_LABEL0,
    T_SCORE0 = T_LABEL0 + CC_RESULT_MAX_TOP,
    T_COUNT = T_SCORE0 + CC_RESULT_MAX_TOP,
};

struct text {
    char str[160];       // what tex shows, after truncation
    enum font_kind font; // font it was rendered with
    int font_px;         // body size when rendered (fonts change with the window)
    SDL_Color color;
    SDL_Texture *tex; // NULL for an empty string
    int w, h;         // tex size in pixels
};

struct cc_overlay_draw {
    SDL_Renderer *renderer; // not owned
    bool ttf;               // TTF_Init succeeded (TTF_Quit in destroy)
    char *font_path;
    TTF_Font *font[FONT_COUNT];
    int font_px;     // body size the fonts were opened at; 0 = none open
    bool key_hints;  // draw the key help (cfg.key_hints)
    bool frame_only; // no panel (cfg.frame_only)
    int help_lines;  // 0 without key hints, 1, or 2 when they do not fit the panel's width (set
                     // by draw)
    char *model, *backend, *device, *source_label;
    int top_k;     // rows: the configured top_k, at most the model's classes
    int top_k_cfg; // the configured top_k (a reloaded model's rows are counted from it)

    SDL_Texture *frame_tex; // (frame_h, frame_w) RGB24, streaming; NULL before the first frame
    int frame_w, frame_h;
    struct cc_frame_rgb conv; // the frame's conversion to RGB (MJPEG decoded there)

    bool have_result;
    struct cc_result result; // newest result; labels point into labels[]
    char labels[CC_RESULT_MAX_TOP][LABEL_MAX];
    bool paused;                          // draw the PAUSED badge
    char notice[160];                     // "saved NAME" over the frame's foot; "" = none
    char collect[160];                    // --collect's keys and counts above the notice; "" = none
    char caption[CC_OVERLAY_CAPTION_MAX]; // a grid tile's camera name; "" = not a tile
    char stopped[160];                    // why the tile's camera stopped; "" = running
    bool area_set;                        // draw into area, not the whole output
    struct cc_overlay_rect area;          // (output pixels) where, when area_set

    struct text text[T_COUNT];
};

/* ------------------------------------------------------------------------------------------
 * Layout (overlay_layout.c)
 */

/* The panel: 30 % of the width, at least 16 body-text ems (labels stay readable at 640 × 480),
 * at most half. */
int cc_overlay_panel_width(int w, int px);

/* Computes the layout for output size w × h with fonts of body size px. Panel, top to bottom:
 * title, backend, device, rows (label line, then bar), ...; at the bottom stats and help. */
void cc_overlay_layout_compute(const struct cc_overlay_draw *ov, int w, int h, int px,
                               struct cc_overlay_layout *L);

/* The body size for w x h: body_px, made smaller (down to FONT_MIN_PX) while the rows the
 * result has do not all fit; only below that are rows left out. */
int cc_overlay_fitting_px(const struct cc_overlay_draw *ov, int w, int h);

/* L->roi and L->roi_rgb: the ROI the result shown was classified on (cc_result.roi, so that
 * it follows --roi, the model's and a reload's), scaled into L->frame (w = 0: none). A pixel
 * ROI outside this frame is not drawn (the pipeline says so, once). */
void cc_overlay_roi_place(const struct cc_overlay_draw *ov, struct cc_overlay_layout *L);

/* L->cam: where the result's map goes (draw_cam). */
void cc_overlay_cam_place(const struct cc_overlay_draw *ov, struct cc_overlay_layout *L);

/* The size drawn for: the area (a grid's tile), else the renderer's output. */
int cc_overlay_output_size(const struct cc_overlay_draw *ov, int *w, int *h);

#endif
