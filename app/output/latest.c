/* camclass — GET /latest's state (see latest.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cam_json.h"
#include "clock.h"
#include "latest.h"

struct cc_latest {
    pthread_mutex_t lock; // guards everything below
    pthread_cond_t kept;  // signalled with each map kept or not (monotonic clock)
    char *line;           // the newest line (malloc'd, '\n' ended), NULL before the first
    size_t cap;
    uint64_t gen;             // lines kept so far
    struct cc_result_cam cam; // the newest map, of line cam_gen
    uint64_t cam_gen;         // 0: none yet
};

struct cc_latest *cc_latest_create(void)
{
    struct cc_latest *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    pthread_mutex_init(&l->lock, NULL);
    cc_cond_init_monotonic(&l->kept);
    return l;
}

void cc_latest_destroy(struct cc_latest *l)
{
    if (!l)
        return;
    free(l->line);
    pthread_cond_destroy(&l->kept);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

bool cc_latest_keep(void *ctx, const char *event, const char *line, size_t len)
{
    struct cc_latest *l = ctx;
    if (strcmp(event, "frame") != 0)
        return true;
    pthread_mutex_lock(&l->lock);
    bool ok = true;
    if (len + 2 > l->cap) {
        char *p = realloc(l->line, len + 2);
        if (p)
            l->line = p, l->cap = len + 2;
        ok = p != NULL;
    }
    if (ok) {
        memcpy(l->line, line, len);
        memcpy(l->line + len, "\n", 2);
        l->gen++;
    }
    pthread_mutex_unlock(&l->lock);
    return ok;
}

void cc_latest_keep_cam(struct cc_latest *l, const struct cc_result_cam *cam)
{
    pthread_mutex_lock(&l->lock);
    if (cam->w > 0) {
        l->cam = *cam;
        l->cam_gen = l->gen;
    }
    pthread_cond_broadcast(&l->kept);
    pthread_mutex_unlock(&l->lock);
}

char *cc_latest_line(struct cc_latest *l, bool *none)
{
    pthread_mutex_lock(&l->lock);
    char *line = l->line ? strdup(l->line) : NULL;
    *none = !l->line;
    pthread_mutex_unlock(&l->lock);
    return line;
}

char *cc_latest_line_with_cam(struct cc_latest *l, int64_t deadline_ns, bool *timed_out)
{
    struct timespec ts = {(time_t)(deadline_ns / 1000000000), (long)(deadline_ns % 1000000000)};
    char *line = NULL;
    pthread_mutex_lock(&l->lock);
    bool late = false;
    while (!late && (!l->line || l->cam_gen != l->gen))
        late = pthread_cond_timedwait(&l->kept, &l->lock, &ts) != 0;
    *timed_out = !l->line || l->cam_gen != l->gen;
    if (!*timed_out)
        line = cc_cam_json_add(l->line, &l->cam);
    pthread_mutex_unlock(&l->lock);
    return line;
}
