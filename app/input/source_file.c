/* camclass — file sources and their producer thread (see source_file.h); network streams are
 * handed to source_stream.c, which has its own thread. */
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

#include "av_source.h"
#include "decode.h"
#include "source_file.h"
#include "source_stream.h"
#include "y4m.h"
#include "clock.h"

#define MAX_FILE_BYTES ((size_t)512 << 20) // largest image file read into memory

struct cc_source_file {
    char *path; // as opened, for messages
    bool loop;
    bool is_dir; // a directory's images (else one named file or a video)

    // Images (a single file or a directory): one frame per file.
    char **files; // (n_files) owned paths, sorted
    int n_files;
    int next_file; // index of the file the next read decodes
    uint64_t pass; // times the list was started (a loop starts it again)
    // A directory's files that did not decode (one warning each on stderr, first pass only);
    // written by the producer thread, read after it ended (cc_source_file_skipped).
    int skipped;
    uint64_t decoded; // files decoded, all passes: a directory where none does is an error
    uint8_t *buf;  // (buf_cap) the compressed file being decoded
    size_t buf_cap;
    struct cc_image img; // a single looped image, decoded once (others decode into the frame)
    bool img_cached;     // img holds it

    // Video: Y4M (y4m.c) or anything libavformat reads (av_source.c); a live stream.
    struct cc_y4m *y4m;
    struct cc_av *av;
    struct cc_source_stream *stream; // runs its own thread (start/stop are handed to it)
    uint64_t since_rewind;           // frames read since the y4m was (re)started

    uint64_t sequence; // frames delivered, across loops

    // The first frame, read at open (see there) and handed to the first read.
    struct cc_frame first; // data owned by the source
    bool first_pending;

    // Producer thread (start/stop). Owned by the thread while running.
    pthread_t thread;
    bool running;
    struct cc_frame_slot *slot; // not owned
    double fps;
    struct cc_frame staging; // the frame being prepared; data owned by the source
};

/* ---------------------------------------------------------------------------------------- */
/* Opening                                                                                  */
/* ---------------------------------------------------------------------------------------- */

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
        if (e->d_name[0] == '.' || !cc_image_has_suffix(e->d_name))
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
        return cc_error_set(err,
                            "%s: no *.png, *.jpg, *.jpeg, *.webp or *.bmp files in this "
                            "directory",
                            src->path);
    qsort(src->files, (size_t)src->n_files, sizeof(char *), cmp_names);
    return true;
}

/* Opens a path that is not a directory: a Y4M stream (a file or a pipe) or one image file.
 * One open and one read recognise the content: a pipe cannot be opened twice, so what is read
 * here is handed on. 9 bytes: "YUV4MPEG2"; then up to 32 for the image formats' first bytes
 * (a BMP's DIB header size is at 14). */
static bool open_stream(struct cc_source_file *src, const struct stat *st, struct cc_error *err)
{
    const char *path = src->path;
    bool regular = S_ISREG(st->st_mode);
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    char magic[32];
    size_t n = fread(magic, 1, 9, f);
    if (n == 9 && memcmp(magic, "YUV4MPEG2", 9) == 0) {
        if (!(src->y4m = cc_y4m_open(f, path, magic, n, err)))
            return false;
        if (src->loop && !cc_y4m_seekable(src->y4m))
            return cc_error_set(err,
                                "%s: a pipe cannot be played again; drop --loop or save the "
                                "stream to a file",
                                path);
        return true;
    }
    if (n == 9)
        n += fread(magic + n, 1, sizeof(magic) - n, f);
    fclose(f);
    // A GIF named alone plays through FFmpeg as a video (every frame of an animation); in a
    // directory, like any picture, it is its first frame.
    const char *format = cc_image_format((const uint8_t *)magic, n);
    bool image = format && strcmp(format, "GIF") != 0;
    if (!image && regular) { // a video file (mp4, mkv, webm, avi, ...), or not one
        struct cc_av_options o = {.url = false};
        if (cc_av_open(path, &o, &src->av, err) != CC_AV_OK)
            return false;
        if (src->loop && !cc_av_seekable(src->av))
            return cc_error_set(err, "%s: this file cannot be played again; drop --loop", path);
        return true;
    }
    if (!image)
        return cc_error_set(err,
                            "%s: not a YUV4MPEG2 (.y4m) stream; a pipe or device carries .y4m "
                            "only (ffmpeg -i IN -f yuv4mpegpipe -)%s",
                            path, S_ISCHR(st->st_mode) ? "; a camera is given with --camera" : "");
    if (!regular)
        return cc_error_set(err,
                            "%s: an image is read from a file, not from a pipe or "
                            "device; save it to a file first (a pipe can carry .y4m video)",
                            path);
    int cap = 0;
    return add_file(src, NULL, path, &cap, err);
}

static int read_next(struct cc_source_file *src, struct cc_frame *frame, struct cc_error *err);

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
    src->is_dir = S_ISDIR(st.st_mode);
    if (src->is_dir ? !list_directory(src, err) : !open_stream(src, &st, err))
        goto error;
    // The first frame is read now, so that an input whose first frame cannot be read (a
    // truncated video, a corrupt image) is refused at open, as an unusable input.
    int r = read_next(src, &src->first, err);
    if (r < 0)
        goto error;
    if (r == 0) { // a video whose stream ends at once: nothing to classify is not a success
        cc_error_set(err,
                     "%s: no frames: the %s ends after its header; give a %s with at least one "
                     "frame",
                     path, src->y4m ? "Y4M stream" : "video", src->y4m ? "stream" : "file");
        goto error;
    }
    src->first_pending = r == 1;
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
    cc_av_close(src->av);
    cc_source_stream_destroy(src->stream);
    free(src->staging.data);
    free(src->first.data);
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

int cc_source_file_skipped(const struct cc_source_file *src)
{
    return src->skipped;
}

double cc_source_file_native_fps(const struct cc_source_file *src)
{
    if (src->stream)
        return cc_source_stream_fps(src->stream);
    if (src->av)
        return cc_av_fps(src->av);
    return src->y4m ? cc_y4m_fps(src->y4m) : 0.0;
}

bool cc_source_is_url(const char *path)
{
    return cc_av_is_url(path);
}

struct cc_source_file *cc_source_file_open_url(const char *url, FILE *log,
                                               bool (*cancel)(void *ctx), void *cancel_ctx,
                                               bool *unreachable, struct cc_error *err)
{
    struct cc_source_file *src = calloc(1, sizeof(*src));
    if (src)
        src->path = strdup(url);
    if (!src || !src->path) {
        *unreachable = false;
        cc_error_set(err, "out of memory opening a stream");
        cc_source_file_destroy(src);
        return NULL;
    }
    if (!(src->stream = cc_source_stream_open(url, 0, log, cancel, cancel_ctx, unreachable, err))) {
        cc_source_file_destroy(src);
        return NULL;
    }
    return src;
}

const char *cc_source_file_describe(const struct cc_source_file *src)
{
    if (src->stream)
        return cc_source_stream_describe(src->stream);
    return src->av ? cc_av_describe(src->av) : NULL;
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

/* Decodes image file path into img (grown with realloc as needed). */
static bool decode_file(struct cc_source_file *src, const char *path, struct cc_image *img,
                        struct cc_error *err)
{
    size_t n = 0;
    if (!read_whole(src, path, &n, err))
        return false;
    return cc_image_decode(src->buf, n, path, img, err);
}

/* Reads image file i into frame. Decoded straight into frame->data, except a single looped
 * image: it is decoded once into src->img and copied from there on each loop. */
static int read_image(struct cc_source_file *src, int i, struct cc_frame *frame,
                      struct cc_error *err)
{
    const char *path = src->files[i];
    const struct cc_image *img = &src->img;
    struct cc_image direct;
    if (src->n_files == 1 && src->loop) {
        if (!src->img_cached && !decode_file(src, path, &src->img, err))
            return -1;
        src->img_cached = true;
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
    } else {
        direct = (struct cc_image){.pixels = frame->data, .capacity = frame->capacity};
        bool ok = decode_file(src, path, &direct, err);
        frame->data = direct.pixels; // the decoder may have moved it, also on failure
        frame->capacity = direct.capacity;
        if (!ok)
            return -1;
        img = &direct;
    }
    frame->format = img->channels == 1 ? CC_PIX_GREY : CC_PIX_RGB24;
    // The file's place in the list, across loops: the frame names its file by it
    // (cc_source_file_frame_name), also after files were skipped.
    frame->sequence = src->pass * (uint64_t)src->n_files + (uint64_t)i;
    frame->width = img->width;
    frame->height = img->height;
    frame->stride = img->width * img->channels;
    frame->size = (size_t)img->width * img->height * img->channels;
    return 1;
}

/* The next image of the list that decodes. A directory's file that does not (unreadable,
 * corrupt, not the format its name says) is skipped with one warning line and counted; a
 * single file's error ends the run, and so does a directory where no file decodes. */
static int read_listed(struct cc_source_file *src, struct cc_frame *frame, struct cc_error *err)
{
    for (;;) {
        if (src->next_file == src->n_files) {
            if (!src->decoded && src->skipped) {
                cc_error_set(err,
                             "%s: none of its %d image files decodes (each named above); "
                             "replace them",
                             src->path, src->n_files);
                return -1;
            }
            if (!src->loop)
                return 0;
            src->next_file = 0;
            src->pass++;
        }
        int i = src->next_file++;
        if (read_image(src, i, frame, err) == 1) {
            src->decoded++;
            return 1;
        }
        if (!src->is_dir)
            return -1;
        if (src->pass == 0) {
            src->skipped++;
            fprintf(stderr, "camclass: warning: %s; skipped\n", err->msg);
        }
        err->msg[0] = '\0';
    }
}

/* Reads the next frame from the file(s); sequence (for a video) and timestamp are set by the
 * caller. */
static int read_next(struct cc_source_file *src, struct cc_frame *frame, struct cc_error *err)
{
    int r;
    if (src->av) {
        r = cc_av_read(src->av, frame, false, err);
        if (r == 0 && src->loop && src->since_rewind > 0) { // an empty video does not loop
            if (!cc_av_rewind(src->av, err))
                return -1;
            src->since_rewind = 0;
            r = cc_av_read(src->av, frame, false, err);
        }
        src->since_rewind += r == 1;
        return r;
    }
    if (src->y4m) {
        r = cc_y4m_read(src->y4m, frame, err);
        if (r == 0 && src->loop && src->since_rewind > 0) { // an empty video does not loop
            if (!cc_y4m_rewind(src->y4m, err))
                return -1;
            src->since_rewind = 0;
            r = cc_y4m_read(src->y4m, frame, err);
        }
        src->since_rewind += r == 1;
        return r;
    }
    return read_listed(src, frame, err);
}

int cc_source_file_read(struct cc_source_file *src, struct cc_frame *frame, struct cc_error *err)
{
    if (src->stream) {
        cc_error_set(err, "%s: a stream is read by its thread (cc_source_file_start)", src->path);
        return -1;
    }
    int r;
    if (src->first_pending) { // hand over the frame read at open, buffers swapped
        struct cc_frame t = *frame;
        *frame = src->first;
        src->first = t;
        src->first_pending = false;
        r = 1;
    } else {
        r = read_next(src, frame, err);
    }
    if (r == 1) {
        if (!src->n_files) // images: their place in the list (read_image)
            frame->sequence = src->sequence;
        src->sequence++;
        frame->timestamp_ns = cc_now_ns();
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
        int64_t left = deadline - cc_now_ns();
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
    int64_t next = cc_now_ns();
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
            int64_t now = cc_now_ns();
            if (now - next > period) // far behind (slow decode): do not burst to catch up
                next = now;
        } else if (!cc_frame_slot_wait_taken(slot)) {
            break;
        }
        if (!cc_frame_slot_put_copy(slot, st))
            break;
    }
    return NULL;
}

bool cc_source_file_start(struct cc_source_file *src, struct cc_frame_slot *slot, double fps,
                          struct cc_error *err)
{
    if (src->stream) // a live stream plays at its own rate; fps does not apply
        return cc_source_stream_start(src->stream, slot, err);
    if (src->running)
        return cc_error_set(err, "%s: the file source is already running", src->path);
    if (!(fps >= 0 && fps <= 1e6))
        return cc_error_set(err, "%s: frame rate %g is out of range (0 = as fast as taken)",
                            src->path, fps);
    src->slot = slot;
    src->fps = fps;
    // The stop and reopen signals go to the main thread, never interrupting a read from a pipe.
    int rc = cc_frame_slot_start_producer(&src->thread, producer_main, src);
    if (rc != 0)
        return cc_error_set(err, "%s: cannot start the file source thread: %s", src->path,
                            strerror(rc));
    src->running = true;
    return true;
}

void cc_source_file_stop(struct cc_source_file *src)
{
    if (src && src->stream)
        cc_source_stream_stop(src->stream);
    if (!src || !src->running)
        return;
    cc_frame_slot_close(src->slot, NULL);
    pthread_join(src->thread, NULL);
    src->running = false;
}
