/* camclass — the live SDL2 window: the camera frame and what the model sees in it.
 *
 * The window shows the live frame scaled with its aspect ratio kept (letterboxed) on the left,
 * and a panel on the right: model name, backend and device, the top-k labels with probability
 * bars, camera fps, inference fps and latency. The picture is drawn by overlay_draw.h, the
 * same code that draws recordings offscreen (overlay_offscreen.h); this module owns the window,
 * its renderer, its events and screenshots.
 *
 * Keys (cc_overlay_poll): q or Esc quit, f toggles fullscreen, p pauses (the window keeps
 * showing the paused frame and result), s saves a PNG screenshot, h shows or hides the class
 * activation map (the caller asks the pipeline for it: cc_overlay_cam_shown), 1-9 are handed to
 * the caller (--collect saves the frame under that key's class); closing the window quits.
 * With a grid of cameras (cc_overlay_open_grid) Esc, 0, Tab and left clicks (taps) are
 * handed to the caller too (window_grid.h decides what they do: grid.h's cc_grid_step).
 *
 * Threads: SDL wants its window on the main thread. Every function here must be called from
 * the main thread; the overlay keeps no locks and starts no threads.
 * Ownership: the caller owns the overlay and destroys it. present copies what it needs from
 * the frame and the result (the caller may reuse both right after the call); label strings
 * are copied too.
 */
#ifndef CC_OVERLAY_H
#define CC_OVERLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"

struct cc_overlay;

/* The default window size for a display whose usable area is avail_w × avail_h: 1280 × 720,
 * shrunk (never grown) to fit with its aspect kept, e.g. 800 × 450 on an 800 × 480 screen.
 * avail ≤ 0 (unknown): 1280 × 720. */
void cc_overlay_fit_size(int avail_w, int avail_h, int *w, int *h);

/* Opens the window. Returns NULL with one line in err when there is no display — neither
 * DISPLAY nor WAYLAND_DISPLAY is set (and SDL_VIDEODRIVER does not name a driver), or SDL
 * cannot initialize video or open the window — so that the caller can say so and run
 * headless; also when the font cannot be opened (err names the path and fonts-dejavu-core). */
struct cc_overlay *cc_overlay_create(const struct cc_overlay_config *cfg, struct cc_error *err);

/* Closes the window and frees everything; accepts NULL. */
void cc_overlay_destroy(struct cc_overlay *ov);

/* Draws one picture and shows it. frame: the newest frame, converted to RGB here (any
 * cc_pixfmt; NULL keeps the previous one). r: the newest result (NULL keeps the previous one;
 * before the first, the panel says it is waiting). While paused, frame and r are ignored and
 * the paused picture is drawn again (so resizes and fullscreen still redraw). Returns false
 * with err when the frame is malformed (size short for its format, undecodable MJPEG) or SDL
 * fails to draw; the overlay stays usable. */
bool cc_overlay_present(struct cc_overlay *ov, const struct cc_frame *frame,
                        const struct cc_result *r, struct cc_error *err);

/* The picture present draws from now on, also while paused (several cameras: the camera
 * enlarged changed); drawn at the next present. frame, r: as present's. False with err for a
 * malformed frame (the previous one stays). */
bool cc_overlay_set_picture(struct cc_overlay *ov, const struct cc_frame *frame,
                            const struct cc_result *r, struct cc_error *err);

enum cc_overlay_event {
    CC_OVERLAY_NONE,       // no event is left that the caller must act on
    CC_OVERLAY_QUIT,       // q, Esc, or the window was closed
    CC_OVERLAY_PAUSED,     // p: paused (the caller may stop feeding inference)
    CC_OVERLAY_RESUMED,    // p again: running
    CC_OVERLAY_SCREENSHOT, // s: saved; msg says where, in one line
    CC_OVERLAY_ERROR,      // s failed; msg says why, in one line
    CC_OVERLAY_LABEL,      // a digit key 1-9: cc_overlay_label_key says which
    CC_OVERLAY_CAM,        // h: the map is to be shown or hidden (cc_overlay_cam_shown)
    // Only with a grid (cc_overlay_open_grid); without one Esc is QUIT, the others nothing:
    CC_OVERLAY_BACK,  // Esc
    CC_OVERLAY_TAB,   // Tab
    CC_OVERLAY_CLICK, // a left click (a tap): cc_overlay_clicked_tile says on which tile
    // (and CC_OVERLAY_LABEL for the digit 0 too)
};

/* Handles pending window events (keys above, resize, fullscreen) until one the caller must
 * act on, and returns it; CC_OVERLAY_NONE when the queue is empty. Call it in a loop once per
 * main-loop iteration: while ((ev = cc_overlay_poll(ov, &msg)) != CC_OVERLAY_NONE) ...
 * msg (may be NULL) receives the line for SCREENSHOT and ERROR. */
enum cc_overlay_event cc_overlay_poll(struct cc_overlay *ov, struct cc_error *msg);

/* Whether the class activation map is to be shown: h toggles it (off at first). The overlay
 * draws the map of every result that carries one (cc_result.cam). */
bool cc_overlay_cam_shown(const struct cc_overlay *ov);

/* The digit (1..9; 0 with a grid) of the last CC_OVERLAY_LABEL. */
int cc_overlay_label_key(const struct cc_overlay *ov);

/* Shows text over the frame's foot for CC_OVERLAY_NOTICE_MS, as "saved NAME" after s. */
void cc_overlay_notice(struct cc_overlay *ov, const char *text);

/* After a model reload: the header names the new model, the rows fit its classes (the next
 * result fills them). False when out of memory. Main thread. */
bool cc_overlay_set_model(struct cc_overlay *ov, const char *name, int classes);

/* --collect's keys and counts, shown above the notice until changed ("" : none). */
void cc_overlay_set_collect(struct cc_overlay *ov, const char *line);

/* True while paused. */
bool cc_overlay_paused(const struct cc_overlay *ov);

/* SDL's name of the renderer in use ("opengl", "opengles2", "software", ...), for messages. */
const char *cc_overlay_renderer_name(const struct cc_overlay *ov);

/* Draws the current picture again and writes it to path as an 8-bit RGB PNG (the window's
 * pixel size). The `s` key calls this with camclass-YYYYmmdd-HHMMSS.png (local time) in
 * screenshot_dir, and then shows "saved NAME" (or "screenshot failed") on the window for
 * about a second (CC_OVERLAY_NOTICE_MS; the picture saved does not show it). Returns false
 * with err naming the path and the failing call. */
bool cc_overlay_save_png(struct cc_overlay *ov, const char *path, struct cc_error *err);

#define CC_OVERLAY_NOTICE_MS 1200

/* The least window (and recording) size whose layout shows the frame, the title, the backend
 * and device lines and rows (cli.c refuses a smaller --window; the window cannot be dragged
 * smaller). */
#define CC_OVERLAY_MIN_W 480
#define CC_OVERLAY_MIN_H 320

/* The layout for the window's current size, and the texts as last drawn (overlay_draw.h). */
void cc_overlay_layout(const struct cc_overlay *ov, struct cc_overlay_layout *out);

/* Several cameras: a grid of n tiles (grid.h; 1..CC_GRID_MAX), tile i captioned names[i]
 * (overlay_grid.h), shown from now on. False with err when n is out of range or the tiles'
 * fonts cannot be opened. */
bool cc_overlay_open_grid(struct cc_overlay *ov, int n, const char *const *names,
                          struct cc_error *err);

/* Shows the grid (true), or the one picture that present draws (false: a camera enlarged). */
void cc_overlay_show_grid(struct cc_overlay *ov, bool on);

/* Tile i's newest frame and result (NULL: keep; ignored while paused), shown at the next present
 * that shows the grid. False with err for a malformed frame (the tile keeps its previous one). */
bool cc_overlay_tile_update(struct cc_overlay *ov, int i, const struct cc_frame *frame,
                            const struct cc_result *r, struct cc_error *err);

/* Tile i's camera has stopped: why (one line) shows in its caption on red. */
void cc_overlay_tile_stopped(struct cc_overlay *ov, int i, const char *why);

/* The tile under the last CC_OVERLAY_CLICK while the grid was shown (grid.h's cc_grid_hit in
 * output pixels); -1: none (a gap, an empty cell, or a camera was enlarged). */
int cc_overlay_clicked_tile(const struct cc_overlay *ov);

/* The source named on the panel's fps line from now on (an enlarged camera's). False when out
 * of memory. */
bool cc_overlay_set_source(struct cc_overlay *ov, const char *label);

/* Tile i's layout as last drawn, in the tile's own coordinates, and the tile's rectangle in the
 * window's output (empty without a grid). */
void cc_overlay_tile_layout(const struct cc_overlay *ov, int i, struct cc_overlay_layout *out,
                            struct cc_overlay_rect *tile);

#endif
