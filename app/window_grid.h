/* camclass — the window with several cameras (the config's "cameras"): a grid of every camera's
 * newest annotated frame (overlay_grid.h: a tile each, captioned with its name and top label and
 * score, or "stopped: why"), and one camera enlarged to the whole window with the one-camera
 * picture (top-k panel, fps) on a number key, Tab or a click; 0, Esc or a click return to the
 * grid (grid.h's cc_grid_step says what each does). With --collect the digits 1-9 of an
 * enlarged camera save its frame under that key's class, as with one camera; in the grid they
 * enlarge, and Tab / a click move between cameras. A camera that stops shows why in its tile
 * and the others go on; the loop ends at q, a stop signal, or when no camera runs and none
 * ended at the end of its input (whose last picture stays until q, as with one camera).
 *
 * Threads: main's (SDL's window); reads each camera's pipeline as main.c's loop does.
 */
#ifndef CC_WINDOW_GRID_H
#define CC_WINDOW_GRID_H

#include "app.h"

/* The main loop with a window and several cameras (a->overlay, a->n_cams > 1). Each camera's
 * end is said (cc_app_camera_ended) when it comes; returns CC_PIPELINE_RUNNING (each camera's
 * state is its own: cc_app_cameras_status). */
enum cc_pipeline_state cc_window_grid_loop(struct app *a);

/* A key 1..9 in the window: with --collect, frame (the newest shown; while paused, the one
 * shown) saved under that key's class, said on the window (and on stderr when it fails). */
void cc_window_collect_key(struct app *a, int key, const struct cc_frame *frame);

#endif
