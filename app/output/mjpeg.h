/* camclass — the annotated frames as JPEG pictures for GET /stream (MJPEG): each frame drawn as
 * the window shows it (overlay_offscreen.h) and encoded once with libjpeg-turbo, whatever the
 * number of viewers; every viewer sends the same shared JPEG.
 *
 *   struct cc_mjpeg *m = cc_mjpeg_create(&overlay_cfg, 640, 360, 10, &err);  // main thread
 *   inference thread, per result:  cc_mjpeg_offer(m, r, f);     // never waits
 *   a viewer's thread:              struct cc_jpeg *j = cc_mjpeg_next(m, &seen, 500);
 *                                   send j->data, j->size; cc_jpeg_release(j);
 *   cc_mjpeg_destroy(m);            // after the inference thread and every viewer are done
 *
 * Cost to the camera: nothing while nobody watches; else at most max_fps offers a second, each
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

/* NULL with err when the overlay cannot be made (its font) or out of memory. */
struct cc_mjpeg *cc_mjpeg_create(const struct cc_overlay_config *oc, int width, int height,
                                 double max_fps, struct cc_error *err);

/* Inference thread: the frame f with its result r, drawn when a viewer watches and the last
 * picture is at least 1/max_fps old. */
void cc_mjpeg_offer(struct cc_mjpeg *m, const struct cc_result *r, const struct cc_frame *f);

/* A viewer comes (true) or goes (false): offers are taken only while one watches. */
void cc_mjpeg_viewer(struct cc_mjpeg *m, bool comes);

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
