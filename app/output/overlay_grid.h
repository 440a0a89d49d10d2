/* camclass — the grid of cameras drawn into an SDL renderer: one tile per camera (grid.h places
 * them), each the camera's newest frame letterboxed in its tile with a caption band: the camera's
 * name and its top label and score, or "stopped: why" on red once the camera has stopped. The
 * full panel (top-k bars, fps) does not fit a tile: the window shows it for an enlarged camera
 * (overlay.h, window_grid.h). Each tile is an overlay_draw.h drawer (frame_only, with a caption)
 * drawing into its tile's rectangle, so the tiles look as the one-camera picture does.
 *
 * Threads: as overlay_draw.h: the thread that owns the renderer (the window's: main).
 * Ownership: the caller owns the grid and the renderer, and destroys the grid first; frames,
 * results and texts are copied.
 */
#ifndef CC_OVERLAY_GRID_H
#define CC_OVERLAY_GRID_H

#include <stdbool.h>

#include "error.h"
#include "frame.h"
#include "grid.h"
#include "overlay_draw.h"
#include "result.h"

struct cc_overlay_grid;
struct SDL_Renderer;

/* A grid of n tiles (1..CC_GRID_MAX) on renderer (not owned), tile i captioned names[i]; cfg as
 * the window's (its font; the panel's fields are not drawn). NULL with err when n is out of
 * range, out of memory, or the font cannot be opened. */
struct cc_overlay_grid *cc_overlay_grid_create(struct SDL_Renderer *renderer,
                                               const struct cc_overlay_config *cfg, int n,
                                               const char *const *names, struct cc_error *err);

/* Frees the tiles' drawers (not the renderer); accepts NULL. */
void cc_overlay_grid_destroy(struct cc_overlay_grid *g);

/* Tile i's newest frame (NULL keeps the one it has) and result (NULL keeps). False with err when
 * the frame is malformed (the tile keeps its previous frame). */
bool cc_overlay_grid_set(struct cc_overlay_grid *g, int i, const struct cc_frame *frame,
                         const struct cc_result *r, struct cc_error *err);

/* Tile i's camera has stopped: why (one line, copied) shows in its caption; NULL: running. */
void cc_overlay_grid_stopped(struct cc_overlay_grid *g, int i, const char *why);

/* The window's states: each tile's PAUSED badge, and the notice ("saved NAME"; "" or NULL: none)
 * at the foot of the first tile. */
void cc_overlay_grid_set_states(struct cc_overlay_grid *g, bool paused, const char *notice);

/* Draws the whole grid for the renderer's current output size: the gaps and empty cells in the
 * letterbox colour, each tile in its rectangle (cc_grid_tile). False with err when SDL fails. */
bool cc_overlay_grid_draw(struct cc_overlay_grid *g, struct cc_error *err);

/* Tile i's layout as last drawn, in the tile's own coordinates (its caption_text; frame), and
 * the tile's rectangle in the output. */
void cc_overlay_grid_layout(const struct cc_overlay_grid *g, int i, struct cc_overlay_layout *out,
                            struct cc_grid_rect *tile);

/* The grid's tiles. */
int cc_overlay_grid_count(const struct cc_overlay_grid *g);

#endif
