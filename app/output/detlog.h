/* camclass — the headless detection log: JSON Lines, one object per line (docs/LOG_FORMAT.md).
 *
 * Typical use (the pipeline's logging thread; main only sets flags from its signal handlers):
 *
 *   struct cc_detlog_config cfg = {.path = "-", .mode = CC_DETLOG_DETECTIONS, .threshold = 0.6,
 *                                  .hysteresis = 0.1, .ewma_alpha = 0.3, .stats_interval_s = 60,
 *                                  .source = "/dev/video0", .model = "mobilenet_v2",
 *                                  .backend = "vulkan"};
 *   struct cc_detlog *log = cc_detlog_create(&cfg, &err);     // NULL: print err.msg, exit 2
 *   for each result r:
 *       if (flag_sighup) { flag_sighup = 0; if (!cc_detlog_reopen(log, &err)) print err.msg; }
 *       if (flag_stop) break;
 *       if (!cc_detlog_write(log, &r, &err)) print err.msg;  // once per failure, keep going
 *   cc_detlog_finish(log, &err);                              // the summary line
 *   cc_detlog_destroy(log);
 *
 * Threads and signals: the module starts no threads and installs no signal handlers. A log is
 * used by one thread at a time (no locking inside). The caller's SIGHUP/SIGINT/SIGTERM handlers
 * only set volatile sig_atomic_t flags; the thread that writes results checks them between
 * results and calls cc_detlog_reopen() (SIGHUP) or cc_detlog_finish() (SIGINT/SIGTERM) itself.
 * Never call these functions from a signal handler. Each line goes out in one write(2) (retried
 * on EINTR and short writes), so a line is never left half written in a buffer and a stop
 * between two results always leaves whole lines. The caller should ignore SIGPIPE
 * (signal(SIGPIPE, SIG_IGN)) so that a closed pipe on stdout comes back as an EPIPE error
 * instead of killing the process; cc_detlog_reader_gone then tells it that nobody reads the
 * log any more (`camclass --log - | head -1`), which a caller may take as the end of its run.
 *
 * Ownership: the log copies path, source, model and backend, and the labels it needs to
 * remember; the result passed to cc_detlog_write is only read during the call.
 */
#ifndef CC_DETLOG_H
#define CC_DETLOG_H

#include <stdbool.h>

#include "error.h"
#include "result.h"

enum cc_detlog_mode {
    CC_DETLOG_EVERY_FRAME, // one "frame" line per result
    CC_DETLOG_DETECTIONS,  // "detection"/"clear" lines only when the (smoothed) top-1 changes
};

struct cc_detlog_config {
    const char *path; // log file, opened for append (created 0644 & ~umask);
                      // NULL or "-": standard output (journald under systemd)
    enum cc_detlog_mode mode;
    bool text;               // lines as text for people (log_text.h), not JSON; not with sink
    double threshold;        // [0, 1]: smoothed top-1 score at or above which it is a detection
    double hysteresis;       // [0, threshold]: a detection clears below threshold - hysteresis,
                             // and a new label replaces it only when it leads by more
    double ewma_alpha;       // [0, 1]: weight of the newest score, s = a*x + (1-a)*s; 0 = off
    double stats_interval_s; // >= 0: a "stats" line every this many seconds of result time
                             // (result_ns), in either mode; 0 = no stats lines
    const char *camera;      // the camera's name (config "cameras"), written on every line
                             // after "event"; NULL: no "camera" field (one camera)
    const char *source;      // static fields written on every line; NULL is written as ""
    const char *model;
    const char *backend;
    // Instead of a file: each line goes to sink (on the writing thread), with its "event"
    // field and without the '\n'; path is then ignored and reopen does nothing. sink returns
    // false when the line could not be taken (counted in the summary's lines_lost; it reports
    // its own failures). MQTT publishes the detection events this way (mqtt.h).
    bool (*sink)(void *ctx, const char *event, const char *line, size_t len);
    void *sink_ctx;
};

struct cc_detlog;

enum { CC_DETLOG_NOTES = 4 }; // cc_detlog_note's fields for one line

/* Checks cfg and opens the log. Returns NULL and fills err on a bad value (naming the field) or
 * when the file cannot be opened (naming the path and errno). */
struct cc_detlog *cc_detlog_create(const struct cc_detlog_config *cfg, struct cc_error *err);

/* Logs one result: at most one "frame", "detection" or "clear" line, then a "stats" line when
 * one is due. Results must come in order (result_ns not decreasing).
 *
 * Write errors (ENOSPC, EPIPE, EIO, ...) are reported once: the first failing write returns
 * false and fills err; while the log keeps failing, later lines are dropped, counted (the
 * summary's "lines_lost") and true is returned. A successful write or a reopen re-arms the
 * report. Returns true without writing after cc_detlog_finish. */
bool cc_detlog_write(struct cc_detlog *log, const struct cc_result *r, struct cc_error *err);

/* Adds "key": value (a string; key static) to the line the next cc_detlog_write writes for its
 * result (a "detection", "clear" or "frame" line), then forgets it, whether a line was written
 * or not. At most CC_DETLOG_NOTES at a time; false when full or out of memory. The events'
 * files ("snapshot", "clip") reach the lines this way. */
bool cc_detlog_note(struct cc_detlog *log, const char *key, const char *value);

/* True once a write failed with EPIPE: the reader of the pipe (or FIFO) has gone, so nothing
 * written later can reach anyone. The failing write still returned false with err, as above; a
 * caller that ends its run on this (camclass does) need not print err. Later writes and
 * cc_detlog_finish then write nothing and return true. A reopen clears it. */
bool cc_detlog_reader_gone(const struct cc_detlog *log);

/* Reopens the same path for append (logrotate: the old file was renamed; a new one is
 * created). When the new open fails, the old file stays in use and false is returned with err
 * filled. A no-op returning true when logging to standard output. */
bool cc_detlog_reopen(struct cc_detlog *log, struct cc_error *err);

/* A camera health condition (image/health.h: covered, dark, blurred, frozen, moved) started
 * (start true) or ended with result r: one "camera" line with the condition, its state, the
 * frame's seq and r's health figures, in either mode. False with err as cc_detlog_write. */
bool cc_detlog_camera(struct cc_detlog *log, const struct cc_result *r, const char *condition,
                      bool start, struct cc_error *err);

/* A model switched to (a reload): one "model" line with its name, sha256 (the bundle file's,
 * hex; NULL or "" leaves it out) and labels; later lines carry the new name. The smoothed
 * per-class state of the old model is forgotten (its classes mean nothing to the new one): a
 * detection in progress ends without a "clear" line. False with err as cc_detlog_write. */
bool cc_detlog_model(struct cc_detlog *log, const char *name, const char *sha256,
                     const char *const *labels, int n_labels, struct cc_error *err);

/* Writes the "summary" line (totals of the whole run). Later writes are ignored; a second
 * finish does nothing. False with err filled when the line could not be written; true without
 * writing when the reader is gone (cc_detlog_reader_gone). */
bool cc_detlog_finish(struct cc_detlog *log, struct cc_error *err);

/* Closes the file (never standard output) and frees the log. Writes nothing: call
 * cc_detlog_finish first for a summary. Accepts NULL. */
void cc_detlog_destroy(struct cc_detlog *log);

#endif
