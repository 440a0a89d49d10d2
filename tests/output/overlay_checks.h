/* camclass — what the overlay test's files share (test_overlay.c: the pictures, texts, the
 * offscreen picture, the default size, errors; test_overlay_keys.c: keys and frame formats).
 *
 * Owns: opening an overlay with the test's configuration, the crafted result, pushing keys,
 * saving a picture and reading it back as a file, pixel access, and the checks of a drawn
 * picture against its layout (the frame at its letterboxed place, the bars and texts of the
 * panel, the panel's parts apart and holding all that is drawn). Failures are counted through
 * testutil.h's CHECK/CHECKF. Nothing here keeps state.
 */
#ifndef CC_TEST_OVERLAY_CHECKS_H
#define CC_TEST_OVERLAY_CHECKS_H

#include <stdbool.h>
#include <stdint.h>

#include <SDL.h>

#include "decode.h"
#include "frame.h"
#include "overlay.h"
#include "result.h"

// The colour bars of tests/input/make_samples.py (top 2/3 of the image).
extern const uint8_t OVT_BARS[8][3];

/* Pixel x, y of an RGB picture (3 bytes). */
const uint8_t *ovt_px(const struct cc_image *im, int x, int y);

/* Whether colours a and b differ by at most tol in each channel. */
bool ovt_near(const uint8_t *a, const uint8_t *b, int tol);

/* Saves the overlay's picture to path and reads it back (so the file itself is checked). */
bool ovt_save_and_load(struct cc_overlay *ov, const char *path, struct cc_image *im);

/* Pixels in r that are not the colour bg (within 24). */
int ovt_count_not(const struct cc_image *im, struct cc_overlay_rect r, const uint8_t bg[3]);

/* Queues a key press for the overlay's next poll. */
void ovt_push_key(SDL_Keycode k);

/* A result of five classes (0.8, 0.4, 0.2, 0.1, 0.05; one label too long for any panel, one
 * missing) with the given camera fps. */
struct cc_result ovt_crafted_result(double camera_fps);

/* cc_overlay_create, its failure counted; NULL then. */
struct cc_overlay *ovt_open_config(const struct cc_overlay_config *cfg);

/* An overlay window of w × h (0 × 0: the default size) with the test's model, backend and
 * device names, top-5, screenshots into shot_dir, SDL's software renderer or not. */
struct cc_overlay *ovt_open_overlay(int w, int h, const char *shot_dir, bool software);

/* Whether r is not empty and lies inside a w × h picture. */
bool ovt_inside(struct cc_overlay_rect r, int w, int h);

/* The frame (fw × fh, the bars sample) lies at the letterboxed place: the test's own
 * aspect-preserving fit of the frame into frame_area, the bar colours at their places inside,
 * background around it. */
void ovt_check_frame(const struct cc_image *im, const struct cc_overlay_layout *L, int fw, int fh);

/* Filled bar length of row i: bar-coloured pixels from the left on the bar's middle line. */
int ovt_bar_length(const struct cc_image *im, const struct cc_overlay_layout *L, int i);

/* The rows' bars proportional to r's scores, label and score texts, three stats lines. */
void ovt_check_panel(const struct cc_image *im, const struct cc_overlay_layout *L,
                     const struct cc_result *r);

/* The panel's parts — header, the rows (label line with its percentage, bar), stats, key
 * hints — lie inside the window and do not overlap; each shows text; and nothing is drawn in
 * the panel outside them (no text runs past its place, none is cut off by the window's edge
 * unseen). */
void ovt_check_layout(const struct cc_image *im, const struct cc_overlay_layout *L);

/* test_overlay_keys.c: keys (p, s, f, q, Esc, close), YUYV, MJPEG and malformed frames, drawn
 * at 640 × 480 over the bars frame; screenshots and pictures under outdir, the MJPEG frame
 * read from sample_jpg. */
void ovt_test_keys_and_formats(const struct cc_frame *bars, const char *outdir,
                               const char *sample_jpg);

/* test_overlay_grid.c: several cameras' grid: each tile its camera's picture and caption, a
 * stopped camera's, clicks and keys, one camera enlarged and back. */
void ovt_test_grid(const char *outdir);

#endif
