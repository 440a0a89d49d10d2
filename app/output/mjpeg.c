/* camclass — the annotated frames as shared JPEG pictures (see mjpeg.h). */
#include "mjpeg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jpeg_encode.h"
#include "overlay_offscreen.h"
#include "clock.h"

enum { JPEG_QUALITY = 80 };

struct cc_mjpeg {
    // The drawer: made at the first viewer (cc_mjpeg_viewer_comes), under make_lock, before
    // that viewer counts; then the drawing thread's only (it draws only for viewers). Kept
    // after the last viewer goes.
    pthread_mutex_t make_lock;
    struct cc_overlay_offscreen *overlay;
    uint8_t *rgb;                // (height, width, 3) the drawn picture
    struct cc_overlay_config oc; // what the drawer shows; its strings are strs' (owned)
    char *strs[6];
    int width, height;
    int64_t min_interval_ns; // 1 / max_fps
    int64_t last_offer_ns;   // inference thread only
    pthread_t thread;
    bool thread_running;

    pthread_mutex_t lock; // guards everything below
    pthread_cond_t cond;  // a frame waits for the drawing thread, a picture is new, or stop
    bool stop;
    int viewers;
    bool pending;            // a frame waits in frame/result
    struct cc_frame frame;   // data owned here
    struct cc_result result; // its labels point into labels (a reload frees the model)
    struct cc_result_labels labels;
    struct cc_jpeg *latest; // the newest picture (one reference held here); NULL before one
    uint64_t generation;    // pictures so far
};

/* A new cc_jpeg holding rgb (w × h) as JPEG, or NULL (out of memory). */
static struct cc_jpeg *encode(const uint8_t *rgb, int w, int h)
{
    size_t size = 0;
    uint8_t *buf = cc_jpeg_encode(rgb, w, h, w * 3, JPEG_QUALITY, &size);
    struct cc_jpeg *j = buf ? malloc(sizeof(*j)) : NULL;
    if (!j) {
        free(buf);
        return NULL;
    }
    *j = (struct cc_jpeg){buf, size, 1};
    return j;
}

/* ------------------------------------------------------------------------------------------
 * The drawing thread
 */

static void *draw_main(void *arg)
{
    struct cc_mjpeg *m = arg;
    struct cc_frame f = {0}; // the drawing thread's copy
    struct cc_result r;
    struct cc_result_labels labels; // r's
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while (!m->pending && !m->stop)
            pthread_cond_wait(&m->cond, &m->lock);
        if (m->stop)
            break;
        // Swap buffers with the slot: the inference thread fills the other one meanwhile.
        struct cc_frame t = f;
        f = m->frame;
        m->frame = t;
        r = m->result;
        cc_result_keep_labels(&r, &labels); // m->labels are refilled by the next offer
        m->pending = false;
        pthread_mutex_unlock(&m->lock);

        struct cc_error err = {0};
        struct cc_jpeg *j = NULL;
        if (cc_overlay_render(m->overlay, &f, &r, m->rgb, m->width * 3, &err))
            j = encode(m->rgb, m->width, m->height); // else a frame or SDL failed: none now

        pthread_mutex_lock(&m->lock);
        if (j) {
            struct cc_jpeg *old = m->latest;
            m->latest = j;
            m->generation++;
            if (old && --old->refs == 0) {
                free(old->data);
                free(old);
            }
            pthread_cond_broadcast(&m->cond);
        }
    }
    pthread_mutex_unlock(&m->lock);
    free(f.data);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Public
 */

/* m->oc: oc with its strings copied (the caller's may go, e.g. a reloaded model's name, before
 * the first viewer). False when out of memory. */
static bool keep_config(struct cc_mjpeg *m, const struct cc_overlay_config *oc)
{
    m->oc = *oc;
    const char **fields[] = {&m->oc.title,        &m->oc.font_path,   &m->oc.model_name,
                             &m->oc.backend_name, &m->oc.device_name, &m->oc.source_label};
    bool ok = true;
    for (int i = 0; i < 6; i++) {
        if (!*fields[i])
            continue;
        ok &= (m->strs[i] = strdup(*fields[i])) != NULL;
        *fields[i] = m->strs[i];
    }
    m->oc.screenshot_dir = NULL; // no window
    return ok;
}

/* The drawer and its picture, at the first viewer; false with err. Under make_lock. */
static bool make_drawer(struct cc_mjpeg *m, struct cc_error *err)
{
    if (m->overlay)
        return true;
    if (!m->rgb && !(m->rgb = malloc((size_t)m->width * m->height * 3)))
        return cc_error_set(err, "out of memory for /stream's pictures");
    return (m->overlay = cc_overlay_offscreen_create(&m->oc, m->width, m->height, err)) != NULL;
}

struct cc_mjpeg *cc_mjpeg_create(const struct cc_overlay_config *oc, int width, int height,
                                 double max_fps, struct cc_error *err)
{
    struct cc_mjpeg *m = calloc(1, sizeof(*m));
    if (!m) {
        cc_error_set(err, "out of memory for /stream");
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->make_lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    m->width = width, m->height = height;
    m->min_interval_ns = (int64_t)(1e9 / (max_fps > 0 ? max_fps : 10));
    m->last_offer_ns = cc_now_ns() - m->min_interval_ns;
    if (!keep_config(m, oc)) {
        cc_error_set(err, "out of memory for /stream");
        goto error;
    }
    // The drawer comes with the first viewer; its font is checked now, so that a bad one is
    // said at startup and not to a viewer.
    if (!cc_overlay_font_check(m->oc.font_path, err))
        goto error;
    int e = pthread_create(&m->thread, NULL, draw_main, m);
    if (e) {
        cc_error_set(err, "pthread_create (/stream's drawing thread): %s", strerror(e));
        goto error;
    }
    m->thread_running = true;
    return m;
error:
    cc_mjpeg_destroy(m);
    return NULL;
}

void cc_mjpeg_offer(struct cc_mjpeg *m, const struct cc_result *r, const struct cc_frame *f)
{
    int64_t t = cc_now_ns();
    if (t - m->last_offer_ns < m->min_interval_ns)
        return;
    pthread_mutex_lock(&m->lock);
    if (m->viewers > 0 && !m->stop) {
        if (m->frame.capacity < f->size) {
            uint8_t *d = realloc(m->frame.data, f->size);
            if (d)
                m->frame.data = d, m->frame.capacity = f->size;
        }
        if (m->frame.capacity >= f->size) {
            uint8_t *data = m->frame.data;
            size_t cap = m->frame.capacity;
            m->frame = *f;
            m->frame.data = data, m->frame.capacity = cap;
            memcpy(data, f->data, f->size);
            m->result = *r;
            cc_result_keep_labels(&m->result, &m->labels);
            m->pending = true;
            m->last_offer_ns = t;
            pthread_cond_broadcast(&m->cond);
        }
    }
    pthread_mutex_unlock(&m->lock);
}

bool cc_mjpeg_viewer_comes(struct cc_mjpeg *m, struct cc_error *err)
{
    pthread_mutex_lock(&m->make_lock);
    bool ok = make_drawer(m, err);
    pthread_mutex_unlock(&m->make_lock);
    if (ok) { // the drawer is made before any frame is taken for it
        pthread_mutex_lock(&m->lock);
        m->viewers++;
        pthread_mutex_unlock(&m->lock);
    }
    return ok;
}

void cc_mjpeg_viewer_goes(struct cc_mjpeg *m)
{
    pthread_mutex_lock(&m->lock);
    m->viewers--;
    pthread_mutex_unlock(&m->lock);
}

bool cc_mjpeg_drawer_made(struct cc_mjpeg *m)
{
    pthread_mutex_lock(&m->make_lock);
    bool made = m->overlay != NULL;
    pthread_mutex_unlock(&m->make_lock);
    return made;
}

struct cc_jpeg *cc_mjpeg_next(struct cc_mjpeg *m, uint64_t *seen, int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000)
        deadline.tv_sec++, deadline.tv_nsec -= 1000000000;
    struct cc_jpeg *j = NULL;
    pthread_mutex_lock(&m->lock);
    while (!m->stop && m->generation <= *seen)
        if (pthread_cond_timedwait(&m->cond, &m->lock, &deadline) != 0)
            break;
    if (!m->stop && m->generation > *seen && m->latest) {
        j = m->latest;
        j->refs++;
        *seen = m->generation;
    }
    pthread_mutex_unlock(&m->lock);
    return j;
}

void cc_jpeg_release(struct cc_mjpeg *m, struct cc_jpeg *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&m->lock);
    bool last = --j->refs == 0;
    pthread_mutex_unlock(&m->lock);
    if (last) {
        free(j->data);
        free(j);
    }
}

uint64_t cc_mjpeg_pictures(struct cc_mjpeg *m)
{
    pthread_mutex_lock(&m->lock);
    uint64_t n = m->generation;
    pthread_mutex_unlock(&m->lock);
    return n;
}

void cc_mjpeg_stop(struct cc_mjpeg *m)
{
    pthread_mutex_lock(&m->lock);
    m->stop = true;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    if (m->thread_running)
        pthread_join(m->thread, NULL);
    m->thread_running = false;
}

void cc_mjpeg_destroy(struct cc_mjpeg *m)
{
    if (!m)
        return;
    cc_mjpeg_stop(m);
    if (m->latest)
        cc_jpeg_release(m, m->latest);
    cc_overlay_offscreen_destroy(m->overlay);
    free(m->frame.data);
    free(m->rgb);
    for (int i = 0; i < 6; i++)
        free(m->strs[i]);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->make_lock);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
