/* camclass — clips on detection events (--clip-dir DIR, --clip-before S, --clip-after S): an
 * mp4 of the annotated video from S before a detection start to S after it, as
 * DIR/<camera>/<UTC time>-<label>.mp4 (names, writing and the cap: event_files.h).
 *
 *   struct cc_clip *c = cc_clip_create(&cfg, &env, &err);   // NULL: print err, exit 2
 *   inference thread, per result:  cc_clip_frame(c, r, f);
 *                  on a start:     cc_clip_event(c, r, label, path, sizeof(path));
 *   after the pipeline stopped:    cc_clip_finish(c);   // the clip in progress ends there
 *   cc_clip_destroy(c);
 *
 * Every frame is drawn (as --output draws it) and encoded once, with the recorder's encoder
 * settings (av_encode.h) but a key frame every second; the packets of the last before_s seconds
 * (from the key frame at or before that, so that a clip starts with one) stay in a ring. On a
 * start the ring is written to a hidden temporary mp4 in the folder, then every packet that
 * follows, until the first picture at or after after_s past the event: then the trailer, and
 * the file gets its name (never replacing one). A start while a clip is being written extends
 * it (its end moves to after_s past the new start; the path is the same): one clip covers a
 * burst of events. Times are the pictures' (a file's frame index at its rate, a camera's
 * capture times), not the wall clock.
 *
 * Memory: the ring holds at most before_s + 1 s of encoded video, and never more than
 * CC_CLIP_RING_MAX_BYTES (the oldest second goes first); the queue CC_CLIP_QUEUE frame copies;
 * one picture. Cost: every frame is drawn and encoded while clips are on, as with --output.
 * Threads: a thread of the module's own draws, encodes and writes; frame and event queue jobs
 * for it in order (frame waits while CC_CLIP_QUEUE frames wait: none is skipped). create,
 * finish and destroy on the controlling thread; frame and event on one thread.
 */
#ifndef CC_CLIP_H
#define CC_CLIP_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"

enum {
    CC_CLIP_QUEUE = 3,                         // jobs waiting for the clip's thread
    CC_CLIP_RING_MAX_BYTES = 64 * 1000 * 1000, // the ring's hard bound
};
#define CC_CLIP_DEFAULT_BEFORE_S 5.0
#define CC_CLIP_DEFAULT_AFTER_S 10.0
#define CC_CLIP_DEFAULT_MB 1000.0

/* One camera's clip settings (a camera of a config will own one). */
struct cc_clip_config {
    const char *dir;    // --clip-dir: an existing folder; NULL: no clips
    double before_s;    // --clip-before: seconds before the event, 0..60
    double after_s;     // --clip-after: seconds after it, 0.1..600
    double max_mb;      // --clip-max-mb: the cap of DIR/<camera>'s clips, in 10^6 bytes
    const char *camera; // the camera's name: one safe path component (event_files.h)
};

/* What a clip writer needs besides the settings. */
struct cc_clip_env {
    int width, height;                       // picture size, even, 2..8192
    const struct cc_overlay_config *overlay; // what the pictures show
    double frame_rate; // > 0: frame i of a file is at i / frame_rate s; 0: capture times
    void (*notice)(void *ctx, const char *line); // one line, thread-safe
    void *notice_ctx;
};

struct cc_clip;

/* Checks the settings, makes DIR/<camera>, opens the encoder; starts the thread. NULL with err
 * (one line naming the flag). */
struct cc_clip *cc_clip_create(const struct cc_clip_config *cfg, const struct cc_clip_env *env,
                               struct cc_error *err);

/* Inference thread: frame f of result r, to be drawn and encoded (waits while the queue is
 * full). */
void cc_clip_frame(struct cc_clip *c, const struct cc_result *r, const struct cc_frame *f);

/* Inference thread, after cc_clip_frame of the same result: a detection of label started. path
 * gets the clip's name (a new one, or the clip being written, which this extends). */
void cc_clip_event(struct cc_clip *c, const struct cc_result *r, const char *label, char *path,
                   size_t path_size);

/* Inference thread: the path of the newest clip named by cc_clip_event ("" before the first). */
const char *cc_clip_current(const struct cc_clip *c);

/* Encodes what is queued, ends a clip in progress there and closes it; one line per failure.
 * Idempotent. */
void cc_clip_finish(struct cc_clip *c);

/* Finishes if needed and frees; accepts NULL. */
void cc_clip_destroy(struct cc_clip *c);

#endif
