/* camclass — snapshots on detection events (--snapshot-dir DIR): on each detection start (an
 * onset, or a new label replacing the old), the annotated frame as --output x.jpg draws it, as
 * one JPEG DIR/<camera>/<UTC time>-<label>.jpg (names, writing and the folder's size cap:
 * event_files.h), and the newest one kept in memory for GET /snapshots/<camera>/latest.jpg.
 *
 *   struct cc_snapshot *s = cc_snapshot_create(&cfg, &err);     // NULL: print err, exit 2
 *   inference thread, per event:  cc_snapshot_event(s, &ev, r, f, path, sizeof(path));
 *   after the pipeline stopped:   cc_snapshot_finish(s);  // the queue written, the thread joined
 *   cc_snapshot_destroy(s);
 *
 * Threads: the pictures are drawn, encoded and written by a thread of the module's own, so
 * that the inference thread only copies the frame. Between them a queue of CC_SNAPSHOT_QUEUE
 * events: a full queue drops the event (counted; one line on the first drop, the count at the
 * end). The writer calls cfg.after for every event in the order they came (ends too, so that a
 * program run on events sees them in order), once the event's file is complete. Memory: at most
 * CC_SNAPSHOT_QUEUE frame copies, one picture (width × height × 3) and the newest JPEG.
 * create, finish and destroy on the controlling thread (create opens the fonts, as
 * overlay_offscreen.h needs); event on one thread (the inference thread); latest on any.
 * Ownership: cfg's strings are copied; the event's frame and result are copied.
 */
#ifndef CC_SNAPSHOT_H
#define CC_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event_command.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"

enum {
    CC_SNAPSHOT_QUEUE = 4,        // events waiting for the writer
    CC_SNAPSHOT_DEFAULT_MB = 100, // --snapshot-max-mb's default
    CC_SNAPSHOT_QUALITY = 90,     // JPEG quality, as --output x.jpg
};

/* One camera's snapshot settings (a camera of a config will own one). */
struct cc_snapshot_config {
    const char *dir;    // --snapshot-dir: an existing folder; NULL: no snapshots
    double max_mb;      // --snapshot-max-mb: the cap of DIR/<camera>'s snapshots, in 10^6 bytes
    const char *camera; // the camera's name: one safe path component (event_files.h)
};

/* What a snapshot writer needs besides the settings. */
struct cc_snapshot_env {
    int width, height;                       // the picture's size, 2..8192
    const struct cc_overlay_config *overlay; // what it shows (the window's texts)
    // Writer thread, per event in order, once its file is complete: ev->snapshot is the saved
    // file's path (NULL when none was saved). May be NULL.
    void (*after)(void *ctx, const struct cc_event_info *ev);
    void *after_ctx;
    void (*notice)(void *ctx, const char *line); // one line, thread-safe
    void *notice_ctx;
};

struct cc_snapshot;

/* Checks the settings, makes DIR/<camera> and opens the drawer; starts the writer. NULL with
 * err (one line naming the flag): DIR missing or not writable, a bad camera name or cap. */
struct cc_snapshot *cc_snapshot_create(const struct cc_snapshot_config *cfg,
                                       const struct cc_snapshot_env *env, struct cc_error *err);

/* The camera's name (the folder and the route). */
const char *cc_snapshot_camera(const struct cc_snapshot *s);

/* Inference thread: the event ev of result r. A start with its frame f: the picture is queued
 * and path gets the name it will have (for the event's lines); an end (f NULL) is queued for
 * cfg.after only. False when the queue was full (dropped, path ""). */
bool cc_snapshot_event(struct cc_snapshot *s, const struct cc_event_info *ev,
                       const struct cc_result *r, const struct cc_frame *f, char *path,
                       size_t path_size);

/* Any thread: a copy of the newest snapshot's JPEG (malloc'd, *size bytes), or NULL before the
 * first (or out of memory). */
uint8_t *cc_snapshot_latest(struct cc_snapshot *s, size_t *size);

/* Writes what is queued and ends the writer; one line with the number dropped, if any.
 * Idempotent. */
void cc_snapshot_finish(struct cc_snapshot *s);

/* Finishes if needed and frees; accepts NULL. */
void cc_snapshot_destroy(struct cc_snapshot *s);

#endif
