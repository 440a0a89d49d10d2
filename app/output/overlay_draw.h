/* camclass — the overlay picture, drawn into any SDL renderer: the frame letterboxed on the
 * left, and a panel on the right with the model name, backend and device, the top-k labels with
 * probability bars, the source's fps, inference fps and latency, and the key hints.
 *
 * One drawing code for every place the picture goes: the window (overlay.h) draws with its
 * window's renderer, the offscreen picture (overlay_offscreen.h: recordings, and later a
 * stream) with a software renderer on a plain surface, which needs no display. At the same
 * output size both give the same pixels. The layout depends on the output size only.
 *
 * This module owns the SDL2_ttf boundary: TTF_Init/TTF_Quit (reference counted by SDL2_ttf)
 * happen in create/destroy, and every font is opened and closed here.
 *
 * Threads: a drawer is used by one thread at a time, the one that owns its renderer. Fonts
 * are opened in create and when the output's height changes, and closed in destroy; FreeType
 * wants that on one thread at a time, so every drawer does it under one lock of this module:
 * drawers may be created, drawn and destroyed on any threads at once.
 * Ownership: the caller owns the drawer and the renderer, and destroys the drawer first.
 * Frames and results are copied (labels too); the caller may reuse them right after a call.
 */
#ifndef CC_OVERLAY_DRAW_H
#define CC_OVERLAY_DRAW_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"
#include "result.h"

// Debian's fonts-dejavu-core; used when cc_overlay_config.font_path is NULL.
#define CC_OVERLAY_CAPTION_MAX 80 // bytes of a grid tile's name (cameras.h: 64)

#define CC_OVERLAY_DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

/* What the overlay shows, and (the fields marked "window") how its window opens. */
struct cc_overlay_config {
    const char *title;          // window: title; NULL = "camclass"
    int width, height;          // window: initial size in pixels, as given; 0 = 1280 × 720
                                // shrunk to fit the display's usable area (cc_overlay_fit_size)
    bool fullscreen;            // window: start fullscreen (desktop resolution)
    const char *font_path;      // TrueType font; NULL = CC_OVERLAY_DEFAULT_FONT
    const char *model_name;     // shown in the panel; NULL = ""
    const char *backend_name;   // "vulkan", "cpu"; NULL = ""
    const char *device_name;    // e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"; NULL = ""
    int top_k;                  // label rows shown, 1..CC_RESULT_MAX_TOP; 0 = 5
    int classes;                // the model's classes: fewer rows when top_k is more; 0 = any
    const char *source_label;   // names the source's fps line: "camera", or a file input's
                                // file or directory name ("clip.y4m", "selftest/"); NULL =
                                // "camera"
    const char *screenshot_dir; // window: where `s` writes screenshots; NULL = current directory
    bool software;              // window: software renderer (tests; default: SDL picks, GPU
                                // first)
    bool key_hints;             // draw the key hints ("q quit  f fullscreen ..."); the window
                                // turns it on (cc_overlay_create); --output and /stream leave
                                // it off: no key works there
    bool frame_only;            // the frame alone, letterboxed over the whole picture: no panel
                                // (GET /stream?panel=0, where the page shows the results)
};

/* Where things are drawn for an output size, in output pixels (for tests and for callers that
 * draw more). Rectangles: x, y, w, h. */
struct cc_overlay_rect {
    int x, y, w, h;
};
struct cc_overlay_layout {
    int width, height;                               // renderer output size
    struct cc_overlay_rect frame_area;               // where the frame may go (left part)
    struct cc_overlay_rect frame;                    // the letterboxed frame inside frame_area
    struct cc_overlay_rect panel;                    // the right-hand panel
    struct cc_overlay_rect header;                   // model, backend, device lines
    int n_rows;                                      // label rows laid out: top_k, at most
                                                     // the model's classes and the result's
                                                     // n_top, fewer when the output is short
    struct cc_overlay_rect label[CC_RESULT_MAX_TOP]; // label text line of row i
    struct cc_overlay_rect bar[CC_RESULT_MAX_TOP];   // full-length bar track of row i; the
                                                     // bar fills round(score · w) pixels
    struct cc_overlay_rect stats;                    // source fps, inference fps, latency
    struct cc_overlay_rect help;                     // the key hints (one or two lines)
    struct cc_overlay_rect notice;                   // "saved NAME", over the frame's foot
    struct cc_overlay_rect roi;                      // the outline of the result's ROI (its
                                                     // roi field: the crop classified) on the
                                                     // frame; w = 0: none (no ROI or frame)
    uint8_t roi_rgb[3];                              // colour of the ROI's outline
    struct cc_overlay_rect cam;                      // where the result's class activation
                                                     // map was drawn (its area of the frame;
                                                     // w = 0: none)
    struct cc_overlay_rect collect;                  // --collect's keys and counts, above it
    struct cc_overlay_rect caption;                  // a grid tile's caption band, above the
                                                     // frame area (h = 0: not a tile)
    uint8_t bar_rgb[3];                              // colour of the filled bar
    uint8_t track_rgb[3];                            // colour of the empty track
    uint8_t background_rgb[3];                       // letterbox bands
    uint8_t panel_rgb[3];                            // panel background
    // Text as last drawn (after ellipsizing): the title line, the source's fps line, the
    // notice and the collect line ("" when none shows), the first label row ("unknown · …"
    // for an unknown answer).
    char title[160], source_line[160], notice_text[160], collect_text[160], first_label[160];
    char caption_text[160]; // a grid tile's caption as drawn ("door · cat 87.0%")
};

struct cc_overlay_draw;
struct SDL_Renderer;

/* A drawer for renderer (not owned; its output size is read at each draw). Opens the font
 * first: NULL with err naming the path (and fonts-dejavu-core) when it cannot. */
struct cc_overlay_draw *cc_overlay_draw_create(struct SDL_Renderer *renderer,
                                               const struct cc_overlay_config *cfg,
                                               struct cc_error *err);

/* Whether font_path (NULL: CC_OVERLAY_DEFAULT_FONT) opens as a drawer opens it: false with
 * the drawer's line in err. For drawers made later (a /stream's, at its first viewer), so
 * that a bad font is said at startup. Any thread. */
bool cc_overlay_font_check(const char *font_path, struct cc_error *err);

/* Frees the drawer's textures and fonts (not the renderer); accepts NULL. */
void cc_overlay_draw_destroy(struct cc_overlay_draw *d);

/* The frame to show from now on, converted to RGB here (any cc_pixfmt). False with err when
 * it is malformed (size short for its format, undecodable MJPEG) or SDL cannot take it; the
 * previous frame stays. */
bool cc_overlay_draw_set_frame(struct cc_overlay_draw *d, const struct cc_frame *frame,
                               struct cc_error *err);

/* The result to show from now on (before the first, the panel says it is waiting). */
void cc_overlay_draw_set_result(struct cc_overlay_draw *d, const struct cc_result *r);

/* The window's states: the PAUSED badge, and a notice line ("saved NAME"; "" or NULL: none). */
/* A model switched to (a reload): its name in the header, rows for its classes (the configured
 * top_k at most); the old result is dropped. False when out of memory (nothing changes). */
bool cc_overlay_draw_set_model(struct cc_overlay_draw *ov, const char *name, int classes);

void cc_overlay_draw_set_paused(struct cc_overlay_draw *d, bool paused);
void cc_overlay_draw_set_notice(struct cc_overlay_draw *d, const char *notice);

/* --collect's line: the keys with their classes and counts ("1 open 12  2 closed 8"; "" or
 * NULL: none), drawn above the notice. */
void cc_overlay_draw_set_collect(struct cc_overlay_draw *d, const char *line);

/* Draws the whole picture for the renderer's current output size (not shown on a window
 * until SDL_RenderPresent). False with err when SDL cannot tell the size or the font fails. */
bool cc_overlay_draw_picture(struct cc_overlay_draw *d, struct cc_error *err);

/* Draw into area (output pixels; a grid's tile: overlay_grid.h) from now on, as if the output
 * were that size, clipped to it; NULL: the whole output again. */
void cc_overlay_draw_set_area(struct cc_overlay_draw *d, const struct cc_overlay_rect *area);

/* Makes the picture a grid tile's (with cfg.frame_only: the frame over the whole area): a
 * caption band at the top, the frame under it, with name and the result's top label and score,
 * or, when stopped is given, "name · stopped: STOPPED" on red. name NULL or "": no caption. */
void cc_overlay_draw_set_caption(struct cc_overlay_draw *d, const char *name, const char *stopped);

/* The source's name on the fps line from now on (cc_overlay_config.source_label; NULL:
 * "camera"). False when out of memory (nothing changes). */
bool cc_overlay_draw_set_source(struct cc_overlay_draw *d, const char *label);

/* The layout for the renderer's current output size, and the texts as last drawn. */
void cc_overlay_draw_layout(const struct cc_overlay_draw *d, struct cc_overlay_layout *out);

#endif
