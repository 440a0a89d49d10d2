/* camclass — the window's grid of cameras as arithmetic (app/output/grid.c), no SDL: the shapes
 * (2 side by side, 3-4 in 2 x 2, up to 16 near-square), tiles that lie inside the window, do not
 * overlap, keep the gap between them and reach the window's edges, at odd sizes, the least
 * window (480 x 320) and a tall one; a click at every pixel of a small window lands on the tile
 * that contains it and nowhere else; and what keys and clicks do in the grid and enlarged, with
 * and without --collect. */
#include <stdio.h>
#include <string.h>

#include "grid.h"
#include "testutil.h"

static void shapes(void)
{
    // n: cols, rows
    const int want[][3] = {{1, 1, 1},  {2, 2, 1},  {3, 2, 2}, {4, 2, 2},  {5, 3, 2},
                           {6, 3, 2},  {7, 3, 3},  {9, 3, 3}, {10, 4, 3}, {12, 4, 3},
                           {13, 4, 4}, {16, 4, 4}, {0, 1, 1}, {99, 4, 4}};
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        int c, r;
        cc_grid_shape(want[k][0], &c, &r);
        CHECKF(c == want[k][1] && r == want[k][2], "%d tiles: %d x %d, want %d x %d", want[k][0], c,
               r, want[k][1], want[k][2]);
    }
}

static bool overlap(struct cc_grid_rect a, struct cc_grid_rect b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/* Every tile of n in w x h: inside, not overlapping, the gap between neighbours, the window's
 * edges reached by the outer tiles, each at least a fair share of the cell. */
static void tiles(int w, int h, int n)
{
    int cols, rows;
    cc_grid_shape(n, &cols, &rows);
    struct cc_grid_rect t[CC_GRID_MAX];
    int right = 0, bottom = 0;
    for (int i = 0; i < n; i++) {
        t[i] = cc_grid_tile(w, h, n, i);
        CHECKF(t[i].w > 0 && t[i].h > 0 && t[i].x >= 0 && t[i].y >= 0 && t[i].x + t[i].w <= w &&
                   t[i].y + t[i].h <= h,
               "%dx%d n %d: tile %d (%d,%d %dx%d) not inside", w, h, n, i, t[i].x, t[i].y, t[i].w,
               t[i].h);
        CHECKF(t[i].w >= w / cols - CC_GRID_GAP - 1 && t[i].h >= h / rows - CC_GRID_GAP - 1,
               "%dx%d n %d: tile %d is %dx%d, less than its cell", w, h, n, i, t[i].w, t[i].h);
        for (int j = 0; j < i; j++)
            CHECKF(!overlap(t[i], t[j]), "%dx%d n %d: tiles %d and %d overlap", w, h, n, i, j);
        // Row by row in the cameras' order.
        CHECKF(i % cols == 0 || (t[i].y == t[i - 1].y && t[i].x > t[i - 1].x),
               "%dx%d n %d: tile %d not right of tile %d", w, h, n, i, i - 1);
        if (i % cols)
            CHECKF(t[i].x - (t[i - 1].x + t[i - 1].w) == CC_GRID_GAP,
                   "%dx%d n %d: gap %d between tiles %d and %d", w, h, n,
                   t[i].x - (t[i - 1].x + t[i - 1].w), i - 1, i);
        if (i >= cols)
            CHECKF(t[i].y - (t[i - cols].y + t[i - cols].h) == CC_GRID_GAP,
                   "%dx%d n %d: gap between rows at tile %d", w, h, n, i);
        right = t[i].x + t[i].w > right ? t[i].x + t[i].w : right;
        bottom = t[i].y + t[i].h > bottom ? t[i].y + t[i].h : bottom;
    }
    CHECKF(t[0].x == 0 && t[0].y == 0 && right == w && bottom == h,
           "%dx%d n %d: the tiles span (0,0)-(%d,%d)", w, h, n, right, bottom);
    struct cc_grid_rect none = cc_grid_tile(w, h, n, n);
    CHECK(none.w == 0 && none.h == 0);
    none = cc_grid_tile(w, h, n, -1);
    CHECK(none.w == 0 && none.h == 0);
}

/* Each pixel of a w x h window: hit says the tile that contains it, -1 exactly where none. */
static void hits(int w, int h, int n)
{
    int bad = 0, in_tiles = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int want = -1;
            for (int i = 0; i < n; i++) {
                struct cc_grid_rect t = cc_grid_tile(w, h, n, i);
                if (x >= t.x && x < t.x + t.w && y >= t.y && y < t.y + t.h)
                    want = i;
            }
            in_tiles += want >= 0;
            bad += cc_grid_hit(w, h, n, x, y) != want;
        }
    CHECKF(bad == 0, "%dx%d n %d: %d pixels hit the wrong tile", w, h, n, bad);
    CHECKF(in_tiles > w * h / 2, "%dx%d n %d: only %d pixels in tiles", w, h, n, in_tiles);
    CHECK(cc_grid_hit(w, h, n, -1, 0) == -1 && cc_grid_hit(w, h, n, w, 0) == -1 &&
          cc_grid_hit(w, h, n, 0, h) == -1);
}

static void layouts(void)
{
    for (int n = 1; n <= CC_GRID_MAX; n++) {
        tiles(1280, 720, n);
        tiles(480, 320, n); // the least window
        tiles(641, 479, n); // odd sizes
        tiles(400, 900, n); // tall
        hits(97, 61, n);
    }
    // 2: side by side, halves of the width; 3: 2 x 2 with the fourth cell empty.
    struct cc_grid_rect a = cc_grid_tile(480, 320, 2, 0), b = cc_grid_tile(480, 320, 2, 1);
    CHECKF(a.w == 238 && b.x == 240 && b.w == 240 && a.h == 320 && b.h == 320,
           "2 tiles at 480x320: %d,%d %dx%d and %d,%d %dx%d", a.x, a.y, a.w, a.h, b.x, b.y, b.w,
           b.h);
    CHECK(cc_grid_hit(480, 320, 3, 400, 300) == -1); // the empty cell
    CHECK(cc_grid_hit(480, 320, 3, 100, 300) == 2);
    CHECK(cc_grid_hit(480, 320, 3, 239, 10) == -1); // the gap
}

static void step_is(int shown, int n, bool collecting, enum cc_grid_input in, int value,
                    enum cc_grid_action action, int want_shown)
{
    struct cc_grid_step s = cc_grid_step(shown, n, collecting, in, value);
    CHECKF(s.action == action && s.shown == want_shown,
           "from %d of %d%s, input %d (%d): action %d shown %d, want %d %d", shown, n,
           collecting ? " collecting" : "", in, value, s.action, s.shown, action, want_shown);
}

static void steps(void)
{
    for (int collecting = 0; collecting < 2; collecting++) {
        bool c = collecting;
        // The grid: digits 1..n, a click on a tile and Tab enlarge; Esc quits; the rest nothing.
        step_is(-1, 3, c, CC_GRID_DIGIT, 1, CC_GRID_SHOW, 0);
        step_is(-1, 3, c, CC_GRID_DIGIT, 3, CC_GRID_SHOW, 2);
        step_is(-1, 3, c, CC_GRID_DIGIT, 4, CC_GRID_NOTHING, -1);
        step_is(-1, 3, c, CC_GRID_DIGIT, 0, CC_GRID_NOTHING, -1);
        step_is(-1, 3, c, CC_GRID_CLICK, 1, CC_GRID_SHOW, 1);
        step_is(-1, 3, c, CC_GRID_CLICK, -1, CC_GRID_NOTHING, -1);
        step_is(-1, 3, c, CC_GRID_TAB, 0, CC_GRID_SHOW, 0);
        step_is(-1, 3, c, CC_GRID_BACK, 0, CC_GRID_QUIT, -1);
        // Enlarged: 0, Esc and a click go back; Tab walks on and back to the grid.
        step_is(1, 3, c, CC_GRID_DIGIT, 0, CC_GRID_SHOW, -1);
        step_is(1, 3, c, CC_GRID_BACK, 0, CC_GRID_SHOW, -1);
        step_is(1, 3, c, CC_GRID_CLICK, -1, CC_GRID_SHOW, -1);
        step_is(1, 3, c, CC_GRID_TAB, 0, CC_GRID_SHOW, 2);
        step_is(2, 3, c, CC_GRID_TAB, 0, CC_GRID_SHOW, -1);
    }
    // Enlarged, digits: with --collect they collect (as with one camera), else switch cameras.
    step_is(1, 3, true, CC_GRID_DIGIT, 3, CC_GRID_COLLECT, 1);
    step_is(1, 3, true, CC_GRID_DIGIT, 9, CC_GRID_COLLECT, 1);
    step_is(1, 3, false, CC_GRID_DIGIT, 3, CC_GRID_SHOW, 2);
    step_is(1, 3, false, CC_GRID_DIGIT, 9, CC_GRID_NOTHING, 1);
}

int main(void)
{
    shapes();
    layouts();
    steps();
    return tu_exit_code();
}
