/* camclass — the HTTP service's routes beside /predict (see http_service.h): GET /latest,
 * /stream, /metrics, /snapshots/<camera>/latest.jpg and POST /model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "assets.h"
#include "clock.h"
#include "http_service.h"

/* GET /snapshots/<camera>/latest.jpg: the newest snapshot of that camera (snapshot.h), from
 * memory: no part of the URL reaches the file system. 404 for any other path, a camera without
 * snapshots, and before the first. */
enum MHD_Result cc_http_send_snapshot(struct cc_http *h, const struct cc_http_req *rq,
                                      struct MHD_Connection *c, const char *url)
{
    const char *cam = url + strlen(CC_HTTP_SNAPSHOTS);
    const char *slash = strchr(cam, '/');
    char name[CC_HTTP_CAMERA_MAX + 1];
    size_t n = slash ? (size_t)(slash - cam) : 0;
    size_t size = 0;
    uint8_t *jpeg = NULL;
    if (slash && n < sizeof(name) && strcmp(slash, "/latest.jpg") == 0 && h->cfg.snapshot_latest) {
        memcpy(name, cam, n);
        name[n] = '\0';
        jpeg = h->cfg.snapshot_latest(h->cfg.snapshot_ctx, name, &size);
    }
    if (!jpeg)
        return send_error(c, 404,
                          "no such snapshot: GET /snapshots/<camera>/latest.jpg answers once "
                          "camclass, started with --snapshot-dir, has saved one for that camera",
                          NULL, NULL);
    return cc_http_send_bytes(h, rq, c, 200, jpeg, size, "image/jpeg", NULL, NULL);
}

/* GET /latest?cam=1: results carry maps for CAM_ASK_NS after each such request, and one waits
 * at most CAM_WAIT_NS for a newest line that has its map. */
enum { CAM_WAIT_MS = 3000 };
#define CAM_ASK_NS (10 * (int64_t)1000000000)

/* The camera a request names (rq->camera; none: the first), or NULL after answering 404: no
 * camera at all (route: the path for the message), or none of that name (the names listed). */
static struct cc_http_feed *feed_of(struct cc_http *h, const struct cc_http_req *rq,
                                    struct MHD_Connection *c, const char *route,
                                    enum MHD_Result *ret)
{
    char msg[160 + CC_HTTP_CAMERAS_MAX * (CC_HTTP_FEED_NAME_MAX + 2)];
    if (!h->n_feeds) {
        snprintf(msg, sizeof(msg),
                 "no camera or input: this camclass classifies requests only (start it with "
                 "--camera or --input for %s)",
                 route);
        *ret = send_error(c, 404, msg, NULL, NULL);
        return NULL;
    }
    if (!rq->camera)
        return &h->feeds[0];
    for (int i = 0; i < h->n_feeds; i++) // exact bytes: a name is never a path here
        if (strlen(h->feeds[i].name) == rq->camera_len &&
            memcmp(h->feeds[i].name, rq->camera, rq->camera_len) == 0)
            return &h->feeds[i];
    int n = snprintf(msg, sizeof(msg), "no such camera; this camclass's cameras are:");
    for (int i = 0; i < h->n_feeds && n > 0 && (size_t)n < sizeof(msg); i++) // room for all
        n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%s %s", i ? "," : "", h->feeds[i].name);
    *ret = send_error(c, 404, msg, NULL, NULL);
    return NULL;
}

/* The newest line of feed f with its map (latest.h), waiting for one; NULL with *why (a
 * status) when the model has none (400, err), or none came in time (503), or out of memory
 * (500). */
static char *latest_with_cam(struct cc_http_feed *f, int *why, struct cc_error *err)
{
    int64_t now = cc_now_ns();
    if (!cc_pipeline_want_cam_until(f->pipeline, now + CAM_ASK_NS, err)) {
        *why = 400;
        return NULL;
    }
    bool late;
    char *line = cc_latest_line_with_cam(f->latest, now + (int64_t)CAM_WAIT_MS * 1000000, &late);
    *why = late ? 503 : 500;
    return line;
}

/* GET /latest[/<camera>]: the newest frame's log object (with ?cam=1 its class activation map);
 * 404 without a source or for an unknown camera, 503 before the first. */
enum MHD_Result cc_http_send_latest(struct cc_http *h, const struct cc_http_req *rq,
                                    struct MHD_Connection *c)
{
    enum MHD_Result ret;
    struct cc_http_feed *f = feed_of(h, rq, c, "/latest", &ret);
    if (!f)
        return ret;
    const char *cam = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cam");
    if (cam && strcmp(cam, "1") == 0) {
        struct cc_error err = {0};
        int why;
        char *line = latest_with_cam(f, &why, &err);
        if (line)
            return send_json(c, 200, line, NULL, NULL);
        if (why == 400)
            return send_error(c, 400, err.msg, NULL, NULL);
        if (why == 503)
            return send_error(c, 503,
                              "no frame with its class activation map came in 3 s; "
                              "try again in a moment",
                              MHD_HTTP_HEADER_RETRY_AFTER, "1");
        return send_json(c, 500, NULL, NULL, NULL);
    }
    bool none;
    char *line = cc_latest_line(f->latest, &none);
    if (none)
        return send_error(c, 503, "no frame classified yet; try again in a moment",
                          MHD_HTTP_HEADER_RETRY_AFTER, "1");
    return send_json(c, 200, line, NULL, NULL);
}

/* One /stream viewer: the part being sent (its header, the shared JPEG, "\r\n"). */
struct viewer {
    struct cc_http *h;
    struct cc_mjpeg *m;   // the pictures it watches (one of a feed's mjpeg)
    struct cc_jpeg *jpeg; // the picture being sent (a reference), NULL between parts
    uint64_t seen;        // the mjpeg generation sent last
    char head[128];
    size_t head_len, off; // off: bytes of the part sent so far
};

#define STREAM_BOUNDARY "camclassframe"

/* libmicrohttpd's content reader for /stream, on the connection's own thread: blocks until the
 * next picture (a thread per connection may), then hands out the part piece by piece. */
static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct viewer *v = cls;
    struct cc_http *h = v->h;
    while (!v->jpeg) {
        if (atomic_load(&h->stopping))
            return MHD_CONTENT_READER_END_OF_STREAM;
        if ((v->jpeg = cc_mjpeg_next(v->m, &v->seen, 250))) {
            v->head_len = (size_t)snprintf(v->head, sizeof(v->head),
                                           "--" STREAM_BOUNDARY "\r\nContent-Type: image/jpeg\r\n"
                                           "Content-Length: %zu\r\n\r\n",
                                           v->jpeg->size);
            v->off = 0;
        }
    }
    size_t total = v->head_len + v->jpeg->size + 2, n = 0;
    while (n < max && v->off < total) {
        size_t k;
        if (v->off < v->head_len) {
            k = v->head_len - v->off < max - n ? v->head_len - v->off : max - n;
            memcpy(buf + n, v->head + v->off, k);
        } else if (v->off < v->head_len + v->jpeg->size) {
            size_t o = v->off - v->head_len;
            k = v->jpeg->size - o < max - n ? v->jpeg->size - o : max - n;
            memcpy(buf + n, v->jpeg->data + o, k);
        } else {
            size_t o = v->off - v->head_len - v->jpeg->size;
            k = 2 - o < max - n ? 2 - o : max - n;
            memcpy(buf + n, "\r\n" + o, k);
        }
        n += k, v->off += k;
    }
    if (v->off == total) {
        cc_jpeg_release(v->m, v->jpeg);
        v->jpeg = NULL;
    }
    return (ssize_t)n;
}

static void end_stream(void *cls)
{
    struct viewer *v = cls;
    cc_jpeg_release(v->m, v->jpeg);
    cc_mjpeg_viewer_goes(v->m);
    free(v);
}

/* GET /stream[/<camera>]: multipart/x-mixed-replace of the annotated frames (mjpeg.h), endless;
 * with ?panel=0 the frame alone. */
enum MHD_Result cc_http_send_stream(struct cc_http *h, const struct cc_http_req *rq,
                                    struct MHD_Connection *c)
{
    const char *panel = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "panel");
    if (panel && strcmp(panel, "0") != 0 && strcmp(panel, "1") != 0)
        return send_error(c, 400,
                          "?panel= takes 0 (the frame alone) or 1 (the frame and the results "
                          "panel, the default)",
                          NULL, NULL);
    enum MHD_Result ret;
    struct cc_http_feed *f = feed_of(h, rq, c, "/stream", &ret);
    if (!f)
        return ret;
    if (!f->mjpeg[CC_HTTP_STREAM_PANEL])
        return send_error(c, 404, "this camclass draws no /stream pictures", NULL, NULL);
    struct viewer *v = calloc(1, sizeof(*v));
    if (!v)
        return send_json(c, 500, NULL, NULL, NULL);
    v->h = h;
    v->m = f->mjpeg[panel && !strcmp(panel, "0") ? CC_HTTP_STREAM_FRAME : CC_HTTP_STREAM_PANEL];
    struct cc_error err = {0};
    if (!cc_mjpeg_viewer_comes(v->m, &err)) { // the first viewer's drawer (the font, memory)
        free(v);
        return send_error(c, 503, err.msg, NULL, NULL);
    }
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, read_stream, v, end_stream);
    if (!r) {
        end_stream(v);
        return MHD_NO;
    }
    cc_metrics_request(h->metrics, rq->endpoint, 200, -1);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "multipart/x-mixed-replace; boundary=" STREAM_BOUNDARY);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* text (cJSON's, freed; NULL: none) as a malloc'd line ending in '\n'; NULL when out of
 * memory. */
static char *json_line(char *text)
{
    char *body = text ? malloc(strlen(text) + 2) : NULL;
    if (body)
        sprintf(body, "%s\n", text);
    cJSON_free(text);
    return body;
}

/* POST /camera/<camera>/reference: the camera's health checks take a new reference picture
 * (image/health.h's moved condition); 409 when the camera runs no health checks. */
enum MHD_Result cc_http_send_reference(struct cc_http *h, const struct cc_http_req *rq,
                                       struct MHD_Connection *c)
{
    enum MHD_Result ret;
    struct cc_http_feed *f = feed_of(h, rq, c, "/camera/<camera>/reference", &ret);
    if (!f)
        return ret;
    if (!cc_pipeline_reset_health_reference(f->pipeline))
        return send_error(c, 409,
                          "this camera runs no health checks, so it has no reference; start "
                          "camclass with --camera-health on",
                          NULL, NULL);
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "camera", f->name) &&
              cJSON_AddStringToObject(o, "reference", "reset");
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return send_json(c, text ? 200 : 500, json_line(text), NULL, NULL);
}

enum MHD_Result cc_http_send_cameras(struct cc_http *h, const struct cc_http_req *rq,
                                     struct MHD_Connection *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *list = o ? cJSON_AddArrayToObject(o, "cameras") : NULL;
    bool ok = list != NULL;
    for (int i = 0; i < h->n_feeds && ok; i++) {
        cJSON *name = cJSON_CreateString(h->feeds[i].name);
        ok = name && cJSON_AddItemToArray(list, name);
    }
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return send_json(c, 200, json_line(text), NULL, NULL);
}

/* GET /metrics: the Prometheus text exposition (metrics.h). */
enum MHD_Result cc_http_send_metrics(struct cc_http *h, const struct cc_http_req *rq,
                                     struct MHD_Connection *c)
{
    struct cc_pipeline_totals t[CC_HTTP_CAMERAS_MAX];
    t[0] = cc_pipeline_get_totals(h->cfg.pipeline); // requests only: no camera
    for (int i = 0; i < h->n_feeds; i++)
        t[i] = cc_pipeline_get_totals(h->feeds[i].pipeline);
    char *text = cc_metrics_render(h->metrics, t);
    if (!text)
        return send_json(c, 500, NULL, NULL, NULL);
    return cc_http_send_body(h, rq, c, 200, text, "text/plain; version=0.0.4; charset=utf-8", NULL,
                             NULL);
}

/* POST /model: switches to the bundle at path (cfg.load_model) and answers. */
static enum MHD_Result load_and_answer(struct cc_http *h, const struct cc_http_req *rq,
                                       struct MHD_Connection *c, const char *path)
{
    char msg[1024] = "";
    struct cc_http_loaded out = {0};
    int status = h->cfg.load_model
                     ? h->cfg.load_model(h->cfg.load_ctx, path, &out, msg, sizeof(msg))
                     : (snprintf(msg, sizeof(msg), "this camclass cannot reload its model"), 503);
    if (status != 200)
        return send_error(c, status, msg, NULL, NULL);
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "model", out.name) &&
              cJSON_AddNumberToObject(o, "classes", out.classes) &&
              (!out.sha256[0] || cJSON_AddStringToObject(o, "sha256", out.sha256));
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    char *body = json_line(text);
    return send_json(c, body ? 200 : 500, body, NULL, NULL);
}

/* POST /model's headers: ?path=NAME is answered now (the body is dropped), else the body (the
 * bundle's bytes) is read first. */
enum MHD_Result cc_http_model_head(struct cc_http *h, struct cc_http_req *rq,
                                   struct MHD_Connection *c, bool *answered)
{
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "path");
    if (!name) {
        cc_http_body_init(&rq->body, h->max_body);
        *answered = false;
        return MHD_YES;
    }
    char rel[CC_HTTP_MODEL_NAME_MAX + 16], path[4096], msg[512];
    int status = cc_http_model_name(name, rel, sizeof(rel), msg, sizeof(msg));
    if (status)
        return send_error(c, status, msg, NULL, NULL);
    if (!cc_asset_find(rel, path, sizeof(path), NULL)) {
        char where[CC_ASSET_WHERE_SIZE];
        cc_asset_where(where, sizeof(where));
        snprintf(msg, sizeof(msg), "no bundle %.128s in the model folders (%.300s)", name, where);
        return send_error(c, 404, msg, NULL, NULL);
    }
    return load_and_answer(h, rq, c, path);
}

/* POST /model's body is in: the bundle's bytes go to a temporary file, loaded from there. */
enum MHD_Result cc_http_model_body(struct cc_http *h, struct cc_http_req *rq,
                                   struct MHD_Connection *c)
{
    char msg[200];
    int status = cc_http_body_end(&rq->body, msg, sizeof(msg));
    if (status)
        return send_error(c, status, msg, NULL, NULL);
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/camclass-model-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    bool ok = fd >= 0 && write(fd, rq->body.data, rq->body.size) == (ssize_t)rq->body.size;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (!ok) {
        if (fd >= 0)
            unlink(path);
        snprintf(msg, sizeof(msg), "cannot keep the bundle in %.100s: %s", path, strerror(e));
        return send_error(c, 500, msg, NULL, NULL);
    }
    enum MHD_Result r = load_and_answer(h, rq, c, path);
    unlink(path);
    return r;
}
