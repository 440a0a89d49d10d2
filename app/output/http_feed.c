/* camclass — one camera's side of the HTTP service (see http_feed.h). */
#include "http_feed.h"

#include <stdio.h>

#include "http.h"

/* GET /stream's two pictures: the window's, and the frame alone. */
static bool start_streams(struct cc_http_feed *f, const struct cc_overlay_config *oc,
                          struct cc_error *err)
{
    struct cc_overlay_config bare = *oc;
    bare.frame_only = true;
    return (f->mjpeg[CC_HTTP_STREAM_PANEL] =
                cc_mjpeg_create(oc, CC_HTTP_STREAM_W, CC_HTTP_STREAM_H, CC_HTTP_STREAM_FPS, err)) &&
           (f->mjpeg[CC_HTTP_STREAM_FRAME] = cc_mjpeg_create(
                &bare, CC_HTTP_STREAM_W, CC_HTTP_STREAM_H, CC_HTTP_STREAM_FPS, err));
}

bool cc_http_feed_init(struct cc_http_feed *f, const struct cc_http_feed_config *cfg,
                       struct cc_error *err)
{
    *f = (struct cc_http_feed){.pipeline = cfg->pipeline};
    snprintf(f->name, sizeof(f->name), "%s", cfg->name ? cfg->name : "");
    if (!(f->latest = cc_latest_create()))
        return cc_error_set(err, "out of memory starting the HTTP service");
    struct cc_detlog_config lc = {
        .mode = CC_DETLOG_EVERY_FRAME,
        .source = cfg->source,
        .camera = cfg->named ? f->name : NULL,
        .model = cfg->model,
        .backend = cfg->backend,
        .sink = cc_latest_keep,
        .sink_ctx = f->latest,
    };
    if (!(f->latest_log = cc_detlog_create(&lc, err)))
        return false;
    return !cfg->overlay || start_streams(f, cfg->overlay, err);
}

void cc_http_feed_result(struct cc_http_feed *f, const struct cc_result *r,
                         const struct cc_frame *frame)
{
    for (int i = 0; i < 2; i++)
        if (f->mjpeg[i])
            cc_mjpeg_offer(f->mjpeg[i], r, frame);
    struct cc_error err = {0};
    cc_detlog_write(f->latest_log, r, &err); // the sink fails only when out of memory
    cc_latest_keep_cam(f->latest, &r->cam);  // the map of the line just kept, if any
}

void cc_http_feed_model(struct cc_http_feed *f, const struct cc_model *m)
{
    struct cc_error err = {0};
    // Its "model" line goes nowhere (cc_latest_keep keeps frames); the name stays.
    cc_detlog_model(f->latest_log, m->name, NULL, (const char *const *)m->labels, m->n_labels,
                    &err);
}

void cc_http_feed_stop(struct cc_http_feed *f)
{
    for (int i = 0; i < 2; i++)
        if (f->mjpeg[i])
            cc_mjpeg_stop(f->mjpeg[i]);
}

void cc_http_feed_finish(struct cc_http_feed *f)
{
    cc_detlog_destroy(f->latest_log);
    for (int i = 0; i < 2; i++)
        cc_mjpeg_destroy(f->mjpeg[i]);
    cc_latest_destroy(f->latest);
    *f = (struct cc_http_feed){0};
}
