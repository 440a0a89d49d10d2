/* camclass — the window's grid of cameras: where each camera's tile goes for a window size, which
 * tile a click lands on, and what a key or a click does (enlarge a camera, back to the grid,
 * collect, quit). Plain arithmetic, no SDL: the window (overlay_grid.c, overlay.c) and the loop
 * (window_grid.c) use it, and tests/output/test_grid.c checks it.
 *
 * Layout: n tiles (1..CC_GRID_MAX) in a near-square grid: cols = ceil(sqrt(n)), rows =
 * ceil(n / cols) (2: side by side, 3-4: 2 × 2, 5-6: 3 × 2, 7-9: 3 × 3, 10-12: 4 × 3, 13-16:
 * 4 × 4), in the cameras' order row by row; the cells split the window exactly, each tile is its
 * cell less CC_GRID_GAP pixels on its right and bottom edges (none at the window's own edges).
 */
#ifndef CC_GRID_H
#define CC_GRID_H

#include <stdbool.h>

enum {
    CC_GRID_MAX = 16, // tiles: cameras.h's CC_CAMERAS_MAX
    CC_GRID_GAP = 2,  // pixels between tiles
};

struct cc_grid_rect {
    int x, y, w, h;
};

/* The grid's columns and rows for n tiles (n < 1 counts as 1, n > CC_GRID_MAX as CC_GRID_MAX). */
void cc_grid_shape(int n, int *cols, int *rows);

/* Tile i (0..n-1) of n in a w × h window; an empty rectangle for an i out of range. */
struct cc_grid_rect cc_grid_tile(int w, int h, int n, int i);

/* The tile of n in a w × h window that contains pixel (x, y); -1 for a gap, an empty cell or a
 * point outside the window. */
int cc_grid_hit(int w, int h, int n, int x, int y);

/* What the user did, as the window reports it (overlay.h). */
enum cc_grid_input {
    CC_GRID_DIGIT, // a number key; value: the digit 0..9
    CC_GRID_TAB,   // Tab: the next camera
    CC_GRID_BACK,  // Esc
    CC_GRID_CLICK, // a click; value: the tile it landed on in the grid (cc_grid_hit), else -1
};

enum cc_grid_action {
    CC_GRID_NOTHING, // nothing changes (a digit with no camera)
    CC_GRID_SHOW,    // show step.shown from now on
    CC_GRID_COLLECT, // --collect: save the enlarged camera's frame under the digit's class
    CC_GRID_QUIT,    // Esc in the grid quits, as with one camera
};

struct cc_grid_step {
    enum cc_grid_action action;
    int shown; // what is shown after the step: -1 the grid, else the camera enlarged
};

/* The step from shown (-1: the grid; else the camera enlarged) of n cameras for one input:
 * - in the grid: digit d in 1..n enlarges camera d, a click on a tile enlarges its camera, Tab
 *   the first camera, Esc quits (as with one camera);
 * - enlarged: 0, Esc and a click return to the grid; Tab shows the next camera (after the
 *   last: the grid); digits 1..9 collect (with --collect: collecting, as with one camera),
 *   otherwise digit d in 1..n shows camera d. */
struct cc_grid_step cc_grid_step(int shown, int n, bool collecting, enum cc_grid_input in,
                                 int value);

#endif
