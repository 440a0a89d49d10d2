/* camclass — file sources and their producer thread (see source_file.h). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "decode.h"
#include "source_file.h"
#include "y4m.h"

#define MAX_FILE_BYTES ((size_t)512 << 20) // largest image file read into memory

struct cc_source_file {
    char *path; // as opened, for messages
    bool loop;

    // Images (a single file or a directory): one frame per file.
    char **files; // (n_files) owned paths, sorted
    int n_files;
    int next_file; // index of the file the next read decodes
    uint8_t *buf;  // (buf_cap) the compressed file being decoded
    size_t buf_cap;
    struct cc_image img; // the last decoded image
    bool img_cached;     // one file only: img already holds it, loops reuse it

    // Video.
    struct cc_y4m *y4m;
    uint64_t since_rewind; // frames read since the y4m was (re)started

    uint64_t sequence; // frames delivered, across loops

    // Producer thread (start/stop). Owned by the thread while running.
    pthread_t thread;
    bool running;
    struct cc_frame_slot *slot; // not owned
    double fps;
    struct cc_frame staging; // the frame being prepared; data owned by the source
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---------------------------------------------------------------------------------------- */
/* Opening                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static bool has_image_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot &&
           (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool add_file(struct cc_source_file *src, const char *dir, const char *name, int *cap,
                     struct cc_error *err)
{
    if (src->n_files == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        char **p = realloc(src->files, sizeof(char *) * (size_t)ncap);
        if (!p)
            return cc_error_set(err, "%s: out of memory listing files", src->path);
        src->files = p;
        *cap = ncap;
    }
    size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *path = malloc(n);
    if (!path)
        return cc_error_set(err, "%s: out of memory listing files", src->path);
    if (dir)
        snprintf(path, n, "%s/%s", dir, name);
    else
        snprintf(path, n, "%s", name);
    src->files[src->n_files++] = path;
    return true;
}

static bool list_directory(struct cc_source_file *src, struct cc_error *err)
{
    DIR *d = opendir(src->path);
    if (!d)
        return cc_error_set(err, "%s: cannot open directory: %s", src->path, strerror(errno));
    int cap = 0;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !has_image_extension(e->d_name))
            continue;
        ok = add_file(src, src->path, e->d_name, &cap, err);
        if (ok) { // regular files only (following links); a directory named x.png is skipped
            struct stat st;
            if (stat(src->files[src->n_files - 1], &st) != 0 || !S_ISREG(st.st_mode))
                free(src->files[--src->n_files]);
        }
    }
    closedir(d);
    if (!ok)
        return false;
    if (src->n_files == 0)
        return cc_error_set(err, "%s: no *.png, *.jpg or *.jpeg files in this directory",
                            src->path);
    qsort(src->files, (size_t)src->n_files, sizeof(char *), cmp_names);
    return true;
}

struct cc_source_file *cc_source_file_open(const char *path, bool loop, struct cc_error *err)
{
    struct cc_source_file *src = calloc(1, sizeof(*src));
    if (src)
        src->path = strdup(path);
    if (!src || !src->path) {
        cc_error_set(err, "out of memory opening a file source");
        goto error;
    }
    src->loop = loop;
    struct stat st;
    if (stat(path, &st) != 0) {
        cc_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        goto error;
    }
    if (S_ISDIR(st.st_mode)) {
        if (!list_directory(src, err))
            goto error;
        return src;
    }
    uint8_t magic[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        cc_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        goto error;
    }
    size_t n = fread(magic, 1, sizeof(magic), f);
    fclose(f);
    if (n >= 9 && memcmp(magic, "YUV4MPEG2", 9) == 0) {
        if (!(src->y4m = cc_y4m_open(path, err)))
            goto error;
    } else if (cc_is_png(magic, n) || cc_is_jpeg(magic, n)) {
        int cap = 0;
        if (!add_file(src, NULL, path, &cap, err))
            goto error;
    } else {
        cc_error_set(err, "%s: not a PNG, JPEG or YUV4MPEG2 (.y4m) file", path);
        goto error;
    }
    return src;
error:
    cc_source_file_destroy(src);
    return NULL;
}

void cc_source_file_destroy(struct cc_source_file *src)
{
    if (!src)
        return;
    cc_source_file_stop(src);
    for (int i = 0; i < src->n_files; i++)
        free(src->files[i]);
    free(src->files);
    free(src->buf);
    cc_image_finish(&src->img);
    cc_y4m_close(src->y4m);
    free(src->staging.data);
    free(src->path);
    free(src);
}

const char *cc_source_file_frame_name(const struct cc_source_file *src, uint64_t sequence)
{
    if (!src->n_files)
        return NULL;
    // Every image is one frame, and a loop starts again at the first: frame i is file i mod n.
    const char *path = src->files[sequence % (uint64_t)src->n_files];
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int cc_source_file_count(const struct cc_source_file *src)
{
    return src->n_files;
}

double cc_source_file_native_fps(const struct cc_source_file *src)
{
    return src->y4m ? cc_y4m_fps(src->y4m) : 0.0;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Reads a whole file into src->buf; returns its size through *size. */
static bool read_whole(struct cc_source_file *src, const char *path, size_t *size,
                       struct cc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size <= 0 || (size_t)st.st_size > MAX_FILE_BYTES) {
        fclose(f);
        return cc_error_set(err, "%s: empty, unreadable or larger than %zu MiB", path,
                            MAX_FILE_BYTES >> 20);
    }
    size_t n = (size_t)st.st_size;
    if (n > src->buf_cap) {
        uint8_t *p = realloc(src->buf, n);
        if (!p) {
            fclose(f);
            return cc_error_set(err, "%s: out of memory for %zu bytes", path, n);
        }
        src->buf = p;
        src->buf_cap = n;
    }
    size_t got = fread(src->buf, 1, n, f);
    fclose(f);
    if (got != n)
        return cc_error_set(err, "%s: read %zu of %zu bytes", path, got, n);
    *size = n;
    return true;
}

/* Decodes image file i into src->img (unless it is cached) and copies it into frame. */
static int read_image(struct cc_source_file *src, int i, struct cc_frame *frame,
                      struct cc_error *err)
{
    const char *path = src->files[i];
    if (!src->img_cached) {
        size_t n = 0;
        if (!read_whole(src, path, &n, err))
            return -1;
        bool ok;
        if (cc_is_png(src->buf, n))
            ok = cc_decode_png(src->buf, n, path, &src->img, err);
        else if (cc_is_jpeg(src->buf, n))
            ok = cc_decode_jpeg(src->buf, n, path, &src->img, err);
        else
            ok = cc_error_set(err, "%s: not a PNG or JPEG file", path);
        if (!ok)
            return -1;
        src->img_cached = src->n_files == 1;
    }
    const struct cc_image *img = &src->img;
    size_t bytes = (size_t)img->width * img->height * img->channels;
    if (frame->capacity < bytes) {
        uint8_t *p = realloc(frame->data, bytes);
        if (!p) {
            cc_error_set(err, "%s: out of memory for a frame of %zu bytes", path, bytes);
            return -1;
        }
        frame->data = p;
        frame->capacity = bytes;
    }
    memcpy(frame->data, img->pixels, bytes);
    frame->format = img->channels == 1 ? CC_PIX_GREY : CC_PIX_RGB24;
    frame->width = img->width;
    frame->height = img->height;
    frame->stride = img->width * img->channels;
    frame->size = bytes;
    return 1;
}

int cc_source_file_read(struct cc_source_file *src, struct cc_frame *frame, struct cc_error *err)
{
    int r;
    if (src->y4m) {
        r = cc_y4m_read(src->y4m, frame, err);
        if (r == 0 && src->loop && src->since_rewind > 0) { // an empty video does not loop
            if (!cc_y4m_rewind(src->y4m, err))
                return -1;
            src->since_rewind = 0;
            r = cc_y4m_read(src->y4m, frame, err);
        }
        src->since_rewind += r == 1;
    } else {
        if (src->next_file == src->n_files) {
            if (!src->loop)
                return 0;
            src->next_file = 0;
        }
        r = read_image(src, src->next_file++, frame, err);
    }
    if (r == 1) {
        frame->sequence = src->sequence++;
        frame->timestamp_ns = now_ns();
    }
    return r;
}

/* ---------------------------------------------------------------------------------------- */
/* Producer thread                                                                          */
/* ---------------------------------------------------------------------------------------- */

// Longest single sleep, so that a closed slot ends the thread promptly at any rate.
#define SLEEP_SLICE_NS 10000000

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Sleeps until the monotonic time deadline; false when the slot was closed meanwhile. */
static bool sleep_until(struct cc_frame_slot *slot, int64_t deadline)
{
    for (;;) {
        if (cc_frame_slot_closed(slot))
            return false;
        int64_t left = deadline - now_ns();
        if (left <= 0)
            return true;
        sleep_ns(left < SLEEP_SLICE_NS ? left : SLEEP_SLICE_NS);
    }
}

static void *producer_main(void *arg)
{
    struct cc_source_file *src = arg;
    struct cc_frame_slot *slot = src->slot;
    struct cc_frame *st = &src->staging;
    int64_t period = src->fps > 0 ? (int64_t)(1e9 / src->fps) : 0;
    int64_t next = now_ns();
    for (;;) {
        struct cc_error err = {{0}};
        int r = cc_source_file_read(src, st, &err); // decode while the consumer works
        if (r <= 0) {
            cc_frame_slot_close(slot, r < 0 ? err.msg : NULL);
            break;
        }
        if (period > 0) {
            if (!sleep_until(slot, next))
                break;
            next += period;
            int64_t now = now_ns();
            if (now - next > period) // far behind (slow decode): do not burst to catch up
                next = now;
        } else if (!cc_frame_slot_wait_taken(slot)) {
            break;
        }
        struct cc_frame *f = cc_frame_slot_acquire(slot, st->size, &err);
        if (!f) {
            cc_frame_slot_close(slot, err.msg); // no-op when closed; else out of memory
            break;
        }
        memcpy(f->data, st->data, st->size);
        f->format = st->format;
        f->width = st->width;
        f->height = st->height;
        f->stride = st->stride;
        f->size = st->size;
        f->sequence = st->sequence;
        f->timestamp_ns = now_ns();
        if (!cc_frame_slot_put(slot, f))
            break;
    }
    return NULL;
}

bool cc_source_file_start(struct cc_source_file *src, struct cc_frame_slot *slot, double fps,
                          struct cc_error *err)
{
    if (src->running)
        return cc_error_set(err, "%s: the file source is already running", src->path);
    if (!(fps >= 0 && fps <= 1e6))
        return cc_error_set(err, "%s: frame rate %g is out of range (0 = as fast as taken)",
                            src->path, fps);
    src->slot = slot;
    src->fps = fps;
    int rc = pthread_create(&src->thread, NULL, producer_main, src);
    if (rc != 0)
        return cc_error_set(err, "%s: cannot start the file source thread: %s", src->path,
                            strerror(rc));
    src->running = true;
    return true;
}

void cc_source_file_stop(struct cc_source_file *src)
{
    if (!src || !src->running)
        return;
    cc_frame_slot_close(src->slot, NULL);
    pthread_join(src->thread, NULL);
    src->running = false;
}
