/* camclass — the running classifier: source thread → latest-frame-wins slot → inference thread.
 *
 *   camera/file thread ──put──▶ [frame slot] ──take──▶ inference thread ──▶ on_result (logger)
 *        (capture.h, source_file.h)                   preprocess + engine       └──▶ mailbox
 *                                                     + softmax + top-k               │
 *                                                                      main thread ◀──┘
 *                                                                   (overlay, signals, watchdog)
 *
 * The source thread captures frame N+1 while the inference thread works on frame N; a frame
 * that waits while a newer one arrives is dropped (counted in cc_result.dropped). Each result
 * carries the timing of its stages (capture → dequeue, preprocess, inference) and the latency
 * from the frame's (driver) timestamp to the result.
 *
 * Threads and ownership:
 * - on_result runs on the inference thread, once per result, in order; it is where the
 *   detection log is written (detlog.h: one thread uses a log at a time). It must not block
 *   for long: the next frame waits for it. It returns false to end the run (the log's reader
 *   has gone): that result is still published, then the state becomes CC_PIPELINE_CLOSED.
 * - The mailbox holds only the newest result (and, with keep_frames, a copy of the frame it
 *   was computed from); cc_pipeline_latest / cc_pipeline_wait read it from the main thread
 *   under the pipeline's mutex. Results the main thread misses are not queued (the overlay
 *   only ever wants the newest).
 * - The engine and the source are owned by the caller and must outlive the pipeline; between
 *   start and stop the inference thread uses the engine and the source thread owns the source.
 *   cc_pipeline_swap replaces the engine between two frames (a model reload); the replaced one
 *   goes back to the swap's caller.
 * - create/start/stop/destroy are called by one controlling thread (main).
 * - Other threads (the HTTP server's connections, http.h) have input tensors classified with
 *   cc_pipeline_classify: the request is queued to the inference thread, the one thread that
 *   uses the engine, which takes one waiting request between two frames (a request waits for
 *   at most the frame being classified; frames go on at least every other engine run) and all
 *   of them while no frame waits. With no source at all (camera and file both NULL) the
 *   inference thread serves requests only.
 */
#ifndef CC_PIPELINE_H
#define CC_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "engine.h"
#include "engine_turns.h"
#include "error.h"
#include "frame.h"
#include "orient.h"
#include "result.h"
#include "series.h"
#include "source_file.h"

struct cc_pipeline;

struct cc_pipeline_config {
    struct cc_engine *engine;      // not owned
    struct cc_engine_turns *turns; // the engine is shared with other pipelines (several
                                   // cameras): each run waits for its turn (engine_turns.h); a
                                   // swap then swaps them all (cc_pipeline_swap). NULL: this
                                   // pipeline's alone. Not owned
    struct cc_capture *camera;     // the source: a camera (opened, not started) ...
    struct cc_source_file *file;   // ... or a file source (opened, not started), or neither
                                   // (requests only: cc_pipeline_classify); not owned
    double file_fps;               // file sources: frames per second; 0 = as fast as taken
    int top_k;                     // 1..CC_RESULT_MAX_TOP
    double unknown_threshold;      // results below this top score are "unknown" (result.h); < 0:
                                   // the model's own (output.unknown_threshold), 0: never
    bool camera_health;            // run the camera health checks on each frame (image/health.h;
                                   // results' health field)
    struct cc_orient orient;       // each frame turned first (orient.h: --rotation, --hflip,
                                   // --vflip); everything after, the ROI included, sees it turned
    const struct cc_roi *roi;      // the ROI of every frame (--roi), in place of the model's
                                   // input.roi (also after a swap); NULL: the model's. Not owned;
                                   // outlives the pipeline
    bool keep_frames;              // copy each result's frame into the mailbox (for display)
    bool profile;                  // keep every stage time for cc_pipeline_profile
    // Called on the inference thread with each result (may be NULL); false ends the run.
    // f: the frame it was computed from (valid only during the call).
    bool (*on_result)(void *ctx, const struct cc_result *r, const struct cc_frame *f);
    // Called on the inference thread right after on_result, with the result and the frame it
    // was computed from (valid only during the call), e.g. to record it (may be NULL).
    void (*on_frame)(void *ctx, const struct cc_result *r, const struct cc_frame *f);
    // Called on the inference thread when cc_pipeline_swap has switched to a new engine, with
    // its model, before the first result from it (may be NULL).
    void (*on_model)(void *ctx, const struct cc_model *m);
    void *ctx;
};

/* Prepares (buffers, slot); starts nothing. NULL with err on a bad config or out of memory. */
struct cc_pipeline *cc_pipeline_create(const struct cc_pipeline_config *cfg, struct cc_error *err);

/* Starts the inference thread, then the source thread. False with err when a thread or the
 * source cannot start (nothing is left running). */
bool cc_pipeline_start(struct cc_pipeline *p, struct cc_error *err);

/* Ends the stream and joins both threads: the result being computed is finished and handed to
 * on_result first. Idempotent; safe when not started. */
void cc_pipeline_stop(struct cc_pipeline *p);

/* Asks the inference thread to stop after the frame it holds, without waiting (the controlling
 * thread, before cc_pipeline_stop): several cameras' pipelines stop together rather than one
 * after the other, each going on while the one before it is joined. */
void cc_pipeline_ask_stop(struct cc_pipeline *p);

/* Stops if needed and frees; accepts NULL. */
void cc_pipeline_destroy(struct cc_pipeline *p);

enum cc_pipeline_state {
    CC_PIPELINE_RUNNING,
    CC_PIPELINE_ENDED,  // the file source reached its end; every frame was classified
    CC_PIPELINE_FAILED, // a fatal error (camera lost for good, engine failure): see error
    CC_PIPELINE_CLOSED, // on_result returned false: the output has gone (not an error)
};

/* Waits up to timeout_ms for a result newer than `seen` (a generation number: 0 before the
 * first) or for the pipeline to end; returns the state. Call from the main thread. */
enum cc_pipeline_state cc_pipeline_wait(struct cc_pipeline *p, uint64_t seen, int timeout_ms);

/* Copies the newest result into *r (and, when frame is not NULL and keep_frames is on, its
 * frame into *frame, whose data the caller owns and this function grows with realloc) if its
 * generation is newer than *seen, and updates *seen. Returns false when there is nothing new. */
bool cc_pipeline_latest(struct cc_pipeline *p, uint64_t *seen, struct cc_result *r,
                        struct cc_frame *frame);

/* Any thread but the inference thread: classifies `input` (the model's input tensor,
 * cc_engine_input_count floats, preprocessed by the caller and kept until this returns) on the
 * inference thread, between frames, and waits for it. r gets the top top_k (1..16) with
 * seq 0, file NULL, dequeue_ms the time waiting in the queue, preprocess_ms 0, inference_ms,
 * latency_ms from the call to the result, and the backend. False with err when the pipeline is
 * stopping or has failed, or the engine fails. Requests are not counted as frames or results
 * and do not reach on_result, on_frame or the mailbox. */
bool cc_pipeline_classify(struct cc_pipeline *p, const float *input, int top_k, struct cc_result *r,
                          struct cc_error *err);

/* Any thread but the inference thread (one swap at a time): hands `engine` (loaded by the
 * caller, so that frames go on meanwhile; it waits for models held by requests' callers) to the
 * inference thread, which switches to it
 * between two frames (its input size and class count may differ) and calls on_model; then
 * *old gets the engine it replaces, which the caller owns from then on and frees. Results
 * already handed out keep label pointers into the old model: the mailbox's are blanked, and a
 * copy queued to another thread keeps its own (cc_result_keep_labels, result.h). A pipeline
 * whose inference thread has ended (its input ended, or it failed) switches on the caller's
 * thread, without on_model. False with err (engine stays the caller's) when another swap waits,
 * the pipeline is stopping, or the model's input is not [1, 3, H, W].
 * A shared engine (cfg.turns): the caller swaps every pipeline that runs it, one after the
 * other, to the same new engine, and frees the old one only when all have switched (a refused
 * pipeline may still run it). Meanwhile some run the old engine and some the new: each engine
 * still has one thread at a time, as every run of every lane takes its turn (engine_turns.h),
 * whichever engine it runs; and a pipeline switches between two frames, holding no turn. */
bool cc_pipeline_swap(struct cc_pipeline *p, struct cc_engine *engine, struct cc_engine **old,
                      struct cc_error *err);

/* Any thread but the inference thread: the model in use, held (a swap waits) until
 * cc_pipeline_release_model; a request's caller holds it from making its tensor to reading
 * the result's labels. Not recursive: hold it once per thread. */
const struct cc_model *cc_pipeline_hold_model(struct cc_pipeline *p);
void cc_pipeline_release_model(struct cc_pipeline *p);

/* Any thread: whether results carry a class activation map of their answer (result.h
 * cc_result_cam) from now on; off by default, and nothing is computed while off. True when
 * the model in use has one (its engine was created with cc_cam_tap as its tap, cam.h), else
 * false with err saying why ("no class activation map for this model (...)"). After a swap
 * the new model's map follows, when it has one. */
bool cc_pipeline_want_cam(struct cc_pipeline *p, bool on, struct cc_error *err);

/* The same for a while: results carry their map until until_ns (cc_now_ns's clock) as well
 * (GET /latest?cam=1 asks so at each request; it adds to the window's h, never turns it off). */
bool cc_pipeline_want_cam_until(struct cc_pipeline *p, int64_t until_ns, struct cc_error *err);

/* Any thread: the camera health checks (cfg.camera_health) forget their reference picture with
 * the next frame and take a new one once the picture has been healthy for their hold time
 * (image/health.h). The request is a flag the inference thread takes; the checks stay that
 * thread's alone. False when the pipeline runs no health checks. */
bool cc_pipeline_reset_health_reference(struct cc_pipeline *p);

/* The engine in use: cfg.engine until a swap. The controlling thread, before start or after
 * stop (the one to destroy at the end). */
struct cc_engine *cc_pipeline_engine(struct cc_pipeline *p);

/* The fatal error of a FAILED pipeline ("" otherwise), one line; valid until destroy. */
const char *cc_pipeline_error(struct cc_pipeline *p);

/* True when the FAILED pipeline's error is the user's to fix (a pixel --roi outside the
 * frames that came): main exits 2 for it, as for a bad flag. Read after the pipeline ended. */
bool cc_pipeline_usage_error(struct cc_pipeline *p);

/* Any thread: the input spec frames are preprocessed with, for model m (the one in use, held):
 * m's, with cfg.roi in place of its ROI when given. */
struct cc_input_spec cc_pipeline_input_spec(const struct cc_pipeline *p, const struct cc_model *m);

/* Totals since start (read under the lock). results, dropped, mean_latency_ms, duration_s and
 * fps are defined as the detection log's summary line defines frames, dropped, latency_ms,
 * duration_s and fps (docs/LOG_FORMAT.md), so that camclass's stderr summary and the log's
 * agree. */
struct cc_pipeline_totals {
    uint64_t frames;        // frames the source delivered into the slot
    uint64_t results;       // frames classified
    uint64_t dropped;       // replaced in the slot before inference took them, up to the last
                            // result (frames dropped while stopping are not counted)
    uint64_t bad_frames;    // frames preprocessing rejected (skipped, first one reported)
    double mean_latency_ms; // over all results
    double duration_s;      // first result -> last result (0 with fewer than two)
    double fps;             // (results - 1) / duration_s; 0 with fewer than two results
    double elapsed_s;       // start -> now (or -> stop)
};
struct cc_pipeline_totals cc_pipeline_get_totals(struct cc_pipeline *p);

/* Stage times kept with profile on; values in ms (series.h). One series per stage. */
struct cc_pipeline_profile {
    const struct cc_series *dequeue, *preprocess, *inference, *latency; // valid until destroy
};
/* After stop: the series (empty without profile). */
struct cc_pipeline_profile cc_pipeline_get_profile(struct cc_pipeline *p);

#endif
