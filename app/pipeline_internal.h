/* camclass — the pipeline's state (pipeline.h), internal to its two files: pipeline.c (create,
 * the inference thread, start/stop, the mailbox), pipeline_engine.c (the engine in use, run in
 * its turn) and pipeline_requests.c (what other threads ask of the inference thread: a
 * classification, an engine swap). pipeline.c calls the other two, pipeline_requests.c calls
 * pipeline_engine.c, which calls neither. See each field for its thread.
 */
#ifndef CC_PIPELINE_INTERNAL_H
#define CC_PIPELINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cam.h"
#include "frame_slot.h"
#include "health.h"
#include "pipeline.h"
#include "preprocess.h"

enum {
    TAKE_TIMEOUT_MS = 200, // how often an idle inference thread looks at the stop flag
    FPS_WINDOW = 32,       // results over which camera_fps and inference_fps are averaged
};

/* One cc_pipeline_classify call, on its caller's stack while it waits; queued under the lock. */
struct request {
    const float *input; // not owned
    int top_k;
    int64_t submit_ns;
    struct request *next; // the queue, oldest first
    // Written by the inference thread (or stop) under the lock, then done is set.
    bool done, ok;
    struct cc_result result;
    struct cc_error err;
};

/* One cc_pipeline_swap call, on its caller's stack while it waits; at most one queued (under the
 * lock), taken by the inference thread between two frames. */
struct swap {
    struct cc_engine *engine; // the new engine; the pipeline's once done and ok
    // Written by the inference thread (or stop) under the lock, then done is set.
    bool done, ok;
    struct cc_engine *old; // ok: the engine replaced, now the caller's
    struct cc_error err;
};

struct fps_sample {
    int64_t t_ns;
    uint64_t put; // frames the source had put by then
};

struct cc_pipeline {
    struct cc_pipeline_config cfg;
    struct cc_frame_slot *slot;
    // The engine in use (cfg.engine until the first swap) and its model: written only by the
    // inference thread while it runs (cc_pipeline_swap), read by it; main reads them after stop.
    struct cc_engine *engine;
    const struct cc_model *model;
    int in_w, in_h;           // model input tensor size
    float *input;             // (3 * in_h * in_w) the preprocessed tensor; inference thread
    float *scores;            // (classes) the model output, then probabilities; inference thread
    struct cc_topk *top;      // (top_k) inference thread
    struct cc_preprocess *pp; // inference thread
    int lane;                 // cfg.turns: this pipeline's lane at the shared engine
    bool held; // cfg.turns: it holds its place in the round (hold_turn); inference thread
    struct cc_orienter orient; // cfg.orient applied to each frame taken; inference thread
    struct cc_health *health;  // cfg.camera_health: the source's health checks; inference thread
    atomic_bool new_reference; // set by any thread (cc_pipeline_reset_health_reference), taken
                               // by the inference thread, the health checks' only user
    uint8_t *luma;             // (luma_cap) the tensor as luma for them; inference thread
    size_t luma_cap;
    // The class activation map of the engine in use (cam.h): cam.weight NULL when it has none,
    // cam_why then says why; fmap (its tap's count) the tapped feature map. Written by
    // use_engine (create, or the inference thread), read by the inference thread and, under
    // lock, by cc_pipeline_want_cam (cam_why, and whether there is one).
    struct cc_cam cam;
    float *fmap;
    struct cc_error cam_why;

    // Held for reading by a request's caller while it uses the model (cc_pipeline_hold_model),
    // for writing by cc_pipeline_swap: the old model is not freed under a reader. Writers are
    // preferred, so that a stream of requests cannot hold a reload off for ever.
    pthread_rwlock_t model_lock;

    pthread_t thread;
    bool thread_running, source_running;
    int64_t start_ns, stop_ns;

    // Inference-thread state (no lock: only that thread touches it while running).
    struct fps_sample fps_ring[FPS_WINDOW];
    uint64_t fps_n;
    double latency_sum_ms;
    struct cc_series s_dequeue, s_preprocess, s_inference, s_latency;

    // Shared: everything below under lock.
    pthread_mutex_t lock;
    pthread_cond_t cond; // signalled on a new result and at the end
    bool stop;           // main asks the inference thread to stop
    enum cc_pipeline_state state;
    char error[512];
    bool usage_error;    // the error is a ROI that does not fit the frames (exit 2)
    uint64_t generation; // results published so far
    struct cc_result latest;
    struct cc_frame latest_frame; // data owned here (keep_frames)
    uint64_t results, bad_frames;
    double mean_latency_ms;
    int64_t first_result_ns, last_result_ns; // result_ns of the first and the newest result
    struct request *req_head, *req_tail;     // cc_pipeline_classify's queue
    bool requests_closed;                    // the inference thread has ended: refuse requests
    struct swap *swap;                       // cc_pipeline_swap's waiting swap, or NULL
    bool want_cam;                           // results carry their map (cc_pipeline_want_cam)
    int64_t want_cam_until_ns;               // and until then (cc_pipeline_want_cam_until)
    pthread_cond_t req_done;                 // signalled when a request is done
};

static inline double cc_pipeline_ms_between(int64_t a, int64_t b)
{
    return (double)(b - a) / 1e6;
}

/* ------------------------------------------------------------------------------------------
 * pipeline_engine.c
 */

/* Makes e the engine in use: its input and output buffers (sized by its input and classes; the
 * old ones are kept on failure, e is then not used). Create, or the inference thread. */
bool cc_pipeline_use_engine(struct cc_pipeline *p, struct cc_engine *e, struct cc_error *err);

/* A shared engine: this pipeline holds a frame, and so its place in the engine's round (the
 * turn is taken by run_engine, or given up by drop_turn). Inference thread. */
void cc_pipeline_hold_turn(struct cc_pipeline *p);

/* The frame held did not reach the engine, or has run: the place in the round is given up. */
void cc_pipeline_drop_turn(struct cc_pipeline *p);

/* The engine on input into p->scores, in this pipeline's turn when it shares the engine (the
 * wait for the turn counts as inference time). Inference thread. */
bool cc_pipeline_run_engine(struct cc_pipeline *p, const float *input, struct cc_error *err);

/* r's top k classes from p->scores (the engine's output; softmax applied here to logits), with
 * their labels, and whether the answer is "unknown" (below the threshold in force). tmp: k
 * entries of scratch. Inference thread. */
void cc_pipeline_fill_top(struct cc_pipeline *p, int k, struct cc_topk *tmp, struct cc_result *r);

/* Ends the stream from the inference thread: state and message, and wakes main. */
void cc_pipeline_finish_stream(struct cc_pipeline *p, enum cc_pipeline_state state,
                               const char *msg);

/* ------------------------------------------------------------------------------------------
 * pipeline_requests.c, for the inference thread
 */

/* Inference thread: runs the oldest waiting request, if any. Returns whether more wait. An
 * engine failure fails the request and, as for a frame, the pipeline. */
bool cc_pipeline_serve_request(struct cc_pipeline *p);

/* Fails every waiting request with msg and refuses new ones (the inference thread has ended). */
void cc_pipeline_close_requests(struct cc_pipeline *p, const char *msg);

/* Inference thread, between two frames (it holds no turn of a shared engine here): switches to
 * the waiting swap's engine, if any. */
void cc_pipeline_take_swap(struct cc_pipeline *p);

#endif
