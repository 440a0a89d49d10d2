/* camclass — the annotated frames as JPEG pictures for GET /stream (MJPEG): each frame drawn as
 * the window shows it (overlay_offscreen.h) and encoded once with libjpeg-turbo, whatever the
 * number of viewers; every viewer sends the same shared JPEG.
 *
 *   struct cc_mjpeg *m = cc_mjpeg_create(&overlay_cfg, 640, 360, 10, &err);  // main thread
 *   inference thread, per result:  cc_mjpeg_offer(m, r, f);     // never waits
 *   a viewer's thread:              cc_mjpeg_viewer_comes(m, &err);  // false: answer err
 *                                   struct cc_jpeg *j = cc_mjpeg_next(m, &seen, 500);
 *                                   send j->data, j->size; cc_jpeg_release(j);
 *   cc_mjpeg_destroy(m);            // after the inference thread and every viewer are done
 *
 * Cost to the camera: nothing while nobody watches (nor memory for the drawer before the first
 * viewer: a thread and a copy of the settings); else at most max_fps offers a second, each
 * a copy of the frame into the drawing thread's slot (latest wins: when the drawing thread is
 * behind, the older waiting frame is replaced, never waited for).
 * Threads: its own drawing thread (render + encode); offer from one thread (the inference
 * thread); next, viewers and stop from any thread. Ownership: a cc_jpeg is reference-counted;
 * each one next returns is the caller's until cc_jpeg_release.
 */
#ifndef CC_MJPEG_H
#define CC_MJPEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"

struct cc_jpeg {
    uint8_t *data; // (size) one JPEG file
    size_t size;
    int refs; // private: under the mjpeg's lock
};

struct cc_mjpeg;

/* oc is copied. NULL with err when out of memory or the drawing thread does not start (the
 * drawer is made at the first viewer: cc_mjpeg_viewer_comes). */
struct cc_mjpeg *cc_mjpeg_create(const struct cc_overlay_config *oc, int width, int height,
                                 double max_fps, struct cc_error *err);

/* Inference thread: the frame f with its result r, drawn when a viewer watches and the last
 * picture is at least 1/max_fps old. */
void cc_mjpeg_offer(struct cc_mjpeg *m, const struct cc_result *r, const struct cc_frame *f);

/* A viewer comes: offers are taken while one watches. The first one's thread makes the drawer
 * (the offscreen overlay and its picture: none is made before, which is what /stream costs a
 * camera nobody watches); false with err when that fails (the font, memory), and the viewer
 * does not count. */
bool cc_mjpeg_viewer_comes(struct cc_mjpeg *m, struct cc_error *err);

/* A viewer that came goes. The drawer stays for the next one. */
void cc_mjpeg_viewer_goes(struct cc_mjpeg *m);

/* Whether the drawer is made (a viewer came), for tests. */
bool cc_mjpeg_drawer_made(struct cc_mjpeg *m);

/* The newest picture if newer than *seen (updating it), waiting up to timeout_ms; NULL on
 * timeout or once stopped. */
struct cc_jpeg *cc_mjpeg_next(struct cc_mjpeg *m, uint64_t *seen, int timeout_ms);

void cc_jpeg_release(struct cc_mjpeg *m, struct cc_jpeg *j);

/* Wakes every viewer (next returns NULL from now on) and ends the drawing thread. */
void cc_mjpeg_stop(struct cc_mjpeg *m);

/* Stops and frees; accepts NULL. */
void cc_mjpeg_destroy(struct cc_mjpeg *m);

/* Pictures encoded so far (for /metrics and tests). */
uint64_t cc_mjpeg_pictures(struct cc_mjpeg *m);

#endif
