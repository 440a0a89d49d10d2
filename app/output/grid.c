/* camclass — the grid of cameras: tiles, hit-testing, keys (see grid.h). */
#include "grid.h"

static int clamp_n(int n)
{
    return n < 1 ? 1 : n > CC_GRID_MAX ? CC_GRID_MAX : n;
}

void cc_grid_shape(int n, int *cols, int *rows)
{
    n = clamp_n(n);
    int c = 1;
    while (c * c < n)
        c++;
    *cols = c;
    *rows = (n + c - 1) / c;
}

/* The cell edge k of count cells over size pixels: cells split the size exactly. */
static int edge(int size, int count, int k)
{
    return (int)((long long)size * k / count);
}

struct cc_grid_rect cc_grid_tile(int w, int h, int n, int i)
{
    int cols, rows;
    if (i < 0 || i >= clamp_n(n) || w <= 0 || h <= 0)
        return (struct cc_grid_rect){0, 0, 0, 0};
    cc_grid_shape(n, &cols, &rows);
    int c = i % cols, r = i / cols;
    int x0 = edge(w, cols, c), x1 = edge(w, cols, c + 1);
    int y0 = edge(h, rows, r), y1 = edge(h, rows, r + 1);
    // The gap on the right and bottom edges only, so that the window's edges stay picture.
    if (c < cols - 1 && x1 - x0 > CC_GRID_GAP)
        x1 -= CC_GRID_GAP;
    if (r < rows - 1 && y1 - y0 > CC_GRID_GAP)
        y1 -= CC_GRID_GAP;
    return (struct cc_grid_rect){x0, y0, x1 - x0, y1 - y0};
}

int cc_grid_hit(int w, int h, int n, int x, int y)
{
    for (int i = 0; i < clamp_n(n); i++) { // 16 tiles at most: each one checked
        struct cc_grid_rect t = cc_grid_tile(w, h, n, i);
        if (t.w > 0 && x >= t.x && x < t.x + t.w && y >= t.y && y < t.y + t.h)
            return i;
    }
    return -1;
}

static struct cc_grid_step show(int shown)
{
    return (struct cc_grid_step){CC_GRID_SHOW, shown};
}

/* A step in the grid (nothing enlarged). */
static struct cc_grid_step in_grid(int n, enum cc_grid_input in, int value)
{
    struct cc_grid_step none = {CC_GRID_NOTHING, -1};
    switch (in) {
    case CC_GRID_DIGIT:
        return value >= 1 && value <= n ? show(value - 1) : none;
    case CC_GRID_TAB:
        return show(0);
    case CC_GRID_BACK:
        return (struct cc_grid_step){CC_GRID_QUIT, -1};
    case CC_GRID_CLICK:
        return value >= 0 && value < n ? show(value) : none;
    }
    return none;
}

struct cc_grid_step cc_grid_step(int shown, int n, bool collecting, enum cc_grid_input in,
                                 int value)
{
    n = clamp_n(n);
    if (shown < 0 || shown >= n)
        return in_grid(n, in, value);
    struct cc_grid_step none = {CC_GRID_NOTHING, shown};
    switch (in) {
    case CC_GRID_DIGIT:
        if (value == 0)
            return show(-1);
        if (collecting)
            return (struct cc_grid_step){CC_GRID_COLLECT, shown};
        return value >= 1 && value <= n ? show(value - 1) : none;
    case CC_GRID_TAB:
        return show(shown + 1 < n ? shown + 1 : -1);
    case CC_GRID_BACK:
    case CC_GRID_CLICK:
        return show(-1);
    }
    return none;
}
