/* camclass — snapshots on detection events (see snapshot.h). */
#include "snapshot.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_files.h"
#include "jpeg_encode.h"
#include "overlay_offscreen.h"

#define MAX_SIDE 8192

/* One event for the writer: its copies of the frame, the result and the event's strings. */
struct job {
    bool picture;       // a start with its frame: draw and save it
    struct cc_frame f;  // data owned by the job (grown with realloc, kept between uses)
    struct cc_result r; // its labels in labels
    struct cc_result_labels labels;
    bool start;
    double score;
    bool has_previous;
    char label[256], previous[256];
    char path[CC_EVENT_PATH_MAX]; // the name given at the event
};

struct cc_snapshot {
    struct cc_event_folder folder; // DIR/<camera>; names on the event thread, saves on the writer
    char camera[CC_EVENT_CAMERA_MAX + 1];
    int width, height;
    struct cc_overlay_offscreen *overlay; // writer thread only (after create)
    uint8_t *rgb;                         // (height, width, 3) the picture drawn; writer only
    void (*after)(void *ctx, const struct cc_event_info *ev);
    void *after_ctx;
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;

    pthread_mutex_t lock; // guards everything below
    pthread_cond_t cond;  // a job queued or done, or closing
    bool lock_ready, thread_started, closing;
    pthread_t thread;
    struct job jobs[CC_SNAPSHOT_QUEUE];
    int head, count;  // jobs[head] is the oldest of count queued
    uint64_t dropped; // events dropped on a full queue
    uint8_t *latest;  // the newest JPEG (malloc'd), NULL before the first
    size_t latest_size;
};

static void say(struct cc_snapshot *s, const char *line)
{
    if (s->notice)
        s->notice(s->notice_ctx, line);
}

static void *write_main(void *arg);

static bool check_config(const struct cc_snapshot_config *cfg, const struct cc_snapshot_env *env,
                         struct cc_error *err)
{
    if (!(cfg->max_mb > 0) || cfg->max_mb > 1e9)
        return cc_error_set(err, "--snapshot-max-mb %g: give a size in MB above 0", cfg->max_mb);
    if (env->width < 2 || env->height < 2 || env->width > MAX_SIDE || env->height > MAX_SIDE)
        return cc_error_set(err, "--snapshot-dir: size %dx%d must be 2 to %d a side", env->width,
                            env->height, MAX_SIDE);
    return true;
}

struct cc_snapshot *cc_snapshot_create(const struct cc_snapshot_config *cfg,
                                       const struct cc_snapshot_env *env, struct cc_error *err)
{
    if (!check_config(cfg, env, err))
        return NULL;
    struct cc_snapshot *s = calloc(1, sizeof(*s));
    if (!s) {
        cc_error_set(err, "--snapshot-dir: out of memory");
        return NULL;
    }
    s->width = env->width, s->height = env->height;
    s->after = env->after, s->after_ctx = env->after_ctx;
    s->notice = env->notice, s->notice_ctx = env->notice_ctx;
    snprintf(s->camera, sizeof(s->camera), "%s", cfg->camera ? cfg->camera : "");
    uint64_t cap = (uint64_t)llround(cfg->max_mb * 1e6);
    if (!cc_event_folder_open(&s->folder, cfg->dir, s->camera, cap, ".jpg", "--snapshot-dir", err))
        goto error;
    s->folder.notice = env->notice, s->folder.notice_ctx = env->notice_ctx;
    if (!(s->rgb = malloc((size_t)s->width * s->height * 3))) {
        cc_error_set(err, "--snapshot-dir: out of memory for a %dx%d picture", s->width, s->height);
        goto error;
    }
    if (!(s->overlay = cc_overlay_offscreen_create(env->overlay, s->width, s->height, err)))
        goto error;
    if (pthread_mutex_init(&s->lock, NULL) != 0 || pthread_cond_init(&s->cond, NULL) != 0) {
        cc_error_set(err, "--snapshot-dir: pthread_mutex_init/pthread_cond_init failed");
        goto error;
    }
    s->lock_ready = true;
    int e = pthread_create(&s->thread, NULL, write_main, s);
    if (e != 0) {
        cc_error_set(err, "--snapshot-dir: pthread_create failed: %s", strerror(e));
        goto error;
    }
    s->thread_started = true;
    return s;

error:
    cc_snapshot_destroy(s);
    return NULL;
}

const char *cc_snapshot_camera(const struct cc_snapshot *s)
{
    return s->camera;
}

/* ------------------------------------------------------------------------------------------
 * The event (inference thread)
 */

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Copies the event (and with f its frame and result) into j. False when out of memory. */
static bool job_fill(struct job *j, const struct cc_event_info *ev, const struct cc_result *r,
                     const struct cc_frame *f)
{
    j->picture = f != NULL;
    if (f) {
        if (!cc_frame_copy(&j->f, f))
            return false;
        j->r = *r;
        cc_result_keep_labels(&j->r, &j->labels);
    }
    j->start = ev->start;
    j->score = ev->score;
    snprintf(j->label, sizeof(j->label), "%s", ev->label ? ev->label : "");
    j->has_previous = ev->previous != NULL;
    snprintf(j->previous, sizeof(j->previous), "%s", ev->previous ? ev->previous : "");
    return true;
}

bool cc_snapshot_event(struct cc_snapshot *s, const struct cc_event_info *ev,
                       const struct cc_result *r, const struct cc_frame *f, char *path,
                       size_t path_size)
{
    if (path_size)
        path[0] = '\0';
    if (!f && !s->after)
        return true; // nothing to do for an end
    pthread_mutex_lock(&s->lock);
    bool full = s->count == CC_SNAPSHOT_QUEUE || s->closing;
    struct job *j = full ? NULL : &s->jobs[(s->head + s->count) % CC_SNAPSHOT_QUEUE];
    pthread_mutex_unlock(&s->lock); // only this thread adds; the writer leaves free slots alone
    bool ok = j && job_fill(j, ev, r, f);
    if (ok && f) {
        cc_event_folder_name(&s->folder, wall_ns(), ev->label, j->path, sizeof(j->path));
        snprintf(path, path_size, "%s", j->path);
    }
    pthread_mutex_lock(&s->lock);
    uint64_t dropped = ok ? s->dropped : ++s->dropped;
    if (ok) {
        s->count++;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    if (dropped == 1 && !ok) {
        char line[400];
        snprintf(line, sizeof(line),
                 "snapshot: %d events wait to be written, so the %s of \"%.80s\" was dropped "
                 "(the count is said at the end; a slow disk?)",
                 CC_SNAPSHOT_QUEUE, ev->start ? "start" : "end", ev->label ? ev->label : "");
        say(s, line);
    }
    return ok;
}

/* ------------------------------------------------------------------------------------------
 * The writer
 */

/* Draws, encodes and saves j's picture; keeps the JPEG as the newest. False (said) on failure. */
static bool save_picture(struct cc_snapshot *s, struct job *j)
{
    struct cc_error err = {{0}};
    size_t size = 0;
    uint8_t *jpeg = NULL;
    bool ok = cc_overlay_render(s->overlay, &j->f, &j->r, s->rgb, s->width * 3, &err) &&
              ((jpeg = cc_jpeg_encode(s->rgb, s->width, s->height, s->width * 3,
                                      CC_SNAPSHOT_QUALITY, &size)) ||
               cc_error_set(&err, "--snapshot-dir: out of memory encoding %s", j->path)) &&
              cc_event_folder_save(&s->folder, jpeg, size, j->path, sizeof(j->path), &err);
    if (!ok) {
        free(jpeg);
        say(s, err.msg);
        return false;
    }
    pthread_mutex_lock(&s->lock);
    free(s->latest);
    s->latest = jpeg, s->latest_size = size;
    pthread_mutex_unlock(&s->lock);
    return true;
}

static void write_one(struct cc_snapshot *s, struct job *j)
{
    bool saved = j->picture && save_picture(s, j);
    if (!s->after)
        return;
    struct cc_event_info ev = {
        .start = j->start,
        .label = j->label,
        .score = j->score,
        .previous = j->has_previous ? j->previous : NULL,
        .snapshot = saved ? j->path : NULL,
    };
    s->after(s->after_ctx, &ev);
}

static void *write_main(void *arg)
{
    struct cc_snapshot *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->count && !s->closing)
            pthread_cond_wait(&s->cond, &s->lock);
        if (!s->count)
            break; // closing, and nothing left
        struct job *j = &s->jobs[s->head];
        pthread_mutex_unlock(&s->lock); // event fills only the free slots meanwhile
        write_one(s, j);
        pthread_mutex_lock(&s->lock);
        s->head = (s->head + 1) % CC_SNAPSHOT_QUEUE;
        s->count--;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

uint8_t *cc_snapshot_latest(struct cc_snapshot *s, size_t *size)
{
    pthread_mutex_lock(&s->lock);
    uint8_t *copy = s->latest ? malloc(s->latest_size) : NULL;
    if (copy) {
        memcpy(copy, s->latest, s->latest_size);
        *size = s->latest_size;
    }
    pthread_mutex_unlock(&s->lock);
    return copy;
}

void cc_snapshot_finish(struct cc_snapshot *s)
{
    if (!s || !s->thread_started)
        return;
    pthread_mutex_lock(&s->lock);
    s->closing = true;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    s->thread_started = false;
    if (s->dropped) {
        char line[160];
        snprintf(line, sizeof(line),
                 "snapshot: %llu event%s dropped in all (the writer was behind)",
                 (unsigned long long)s->dropped, s->dropped == 1 ? "" : "s");
        say(s, line);
    }
}

void cc_snapshot_destroy(struct cc_snapshot *s)
{
    if (!s)
        return;
    cc_snapshot_finish(s);
    for (int i = 0; i < CC_SNAPSHOT_QUEUE; i++)
        free(s->jobs[i].f.data);
    if (s->lock_ready) {
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->cond);
    }
    cc_overlay_offscreen_destroy(s->overlay);
    free(s->rgb);
    free(s->latest);
    free(s);
}
