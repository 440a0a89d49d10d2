/* camclass — one camera's side of the HTTP service (http.h): what GET /latest/<camera> and
 * GET /stream/<camera> serve of its results, and where POST /camera/<camera>/reference goes. No
 * HTTP library here; http_routes.c answers from it.
 *
 *   cc_http_feed_init(&feed, &cfg, &err);           // controlling thread, at the service's start
 *   its inference thread, per result:  cc_http_feed_result(&feed, r, f);
 *   its inference thread, on a reload: cc_http_feed_model(&feed, m);
 *   connections: feed.latest (locks itself), feed.mjpeg[] (lock themselves)
 *   cc_http_feed_stop(&feed);                       // the service stops: /stream viewers end
 *   cc_http_feed_finish(&feed);                     // after the inference thread has ended
 *
 * Ownership: a feed (caller's memory) owns its detlog, latest and mjpeg objects; the pipeline
 * is the caller's and outlives it.
 */
#ifndef CC_HTTP_FEED_H
#define CC_HTTP_FEED_H

#include <stdbool.h>

#include "detlog.h"
#include "error.h"
#include "frame.h"
#include "latest.h"
#include "mjpeg.h"
#include "model.h"
#include "overlay_draw.h"
#include "pipeline.h"
#include "result.h"

enum { CC_HTTP_FEED_NAME_MAX = 64 }; // bytes of a camera's name (cameras.h's CC_CAMERA_NAME_MAX)

enum { CC_HTTP_STREAM_PANEL, CC_HTTP_STREAM_FRAME }; // GET /stream's two pictures

struct cc_http_feed_config {
    const char *name;    // the camera's name in the routes (compared exactly, never a path)
    const char *source;  // the camera or input, as the detection log names it
    const char *model;   // the model's name at the start
    const char *backend; // the engine's backend at the start (static)
    const struct cc_overlay_config *overlay; // what GET /stream's pictures show; NULL: no
                                             // /stream (404)
    struct cc_pipeline *pipeline;            // the camera's pipeline; not owned
    bool named; // several cameras: /latest's object has "camera" (as the log's lines)
};

struct cc_http_feed {
    char name[CC_HTTP_FEED_NAME_MAX + 1];
    struct cc_pipeline *pipeline; // not owned: GET /latest?cam=1, POST .../reference
    // GET /latest: the detection log's "frame" object of the newest result, made by a detlog in
    // every-frame mode whose sink keeps the line (inference thread), read by connections.
    struct cc_detlog *latest_log; // the camera's inference thread only
    struct cc_latest *latest;     // the newest line and its map; locks itself
    // GET /stream's pictures: [CC_HTTP_STREAM_PANEL] as the window draws them,
    // [CC_HTTP_STREAM_FRAME] the frame alone (?panel=0); each makes its drawer at its first
    // viewer and draws only while it has viewers. NULL without an overlay.
    struct cc_mjpeg *mjpeg[2];
};

/* A feed for one camera. False with err (out of memory); f is then half-built:
 * cc_http_feed_finish it. (The overlay's font is opened at a /stream's first viewer.) */
bool cc_http_feed_init(struct cc_http_feed *f, const struct cc_http_feed_config *cfg,
                       struct cc_error *err);

/* The camera's inference thread: a frame's result and the frame (never waits). */
void cc_http_feed_result(struct cc_http_feed *f, const struct cc_result *r,
                         const struct cc_frame *frame);

/* The camera's inference thread, after a model reload: /latest names the new model. */
void cc_http_feed_model(struct cc_http_feed *f, const struct cc_model *m);

/* Wakes every /stream viewer of the feed (they end). */
void cc_http_feed_stop(struct cc_http_feed *f);

/* Frees what the feed owns; accepts a zeroed or half-built one. */
void cc_http_feed_finish(struct cc_http_feed *f);

#endif
