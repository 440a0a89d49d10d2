/* camclass — clips on detection events (see clip.h).
 *
 * The FFmpeg calls follow the recorder's (recorder.c, after libavformat's doc/examples/mux.c),
 * split in two: one encoder for the whole run (avcodec_send_frame, avcodec_receive_packet), and
 * per clip a muxer (avformat_alloc_output_context2, avformat_new_stream,
 * avcodec_parameters_from_context, avio_open, avformat_write_header, av_write_frame of copies
 * of the ring's packets, av_write_trailer, avio_closep).
 */
#include "clip.h"

#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>

#include "av_encode.h"
#include "av_log.h"
#include "event_files.h"
#include "overlay_offscreen.h"

#define MAX_SIDE 8192
#define KEY_EVERY_S 1.0 // a key frame every second: a clip starts at most 1 s early

/* A frame to encode, or an event, for the clip's thread. */
struct job {
    bool event;        // an event (below) rather than a frame
    struct cc_frame f; // data owned by the job (grown with realloc, kept between uses)
    struct cc_result r;
    struct cc_result_labels labels;
    bool new_clip; // event: start a clip named path (else extend the one being written)
    char path[CC_EVENT_PATH_MAX];
};

/* The encoded packets of the last seconds, oldest first. */
struct ring {
    AVPacket **pkt; // (cap) owned references
    int n, cap;
    size_t bytes;
};

struct cc_clip {
    struct cc_event_folder folder; // names on the inference thread, saves on the clip's thread
    int64_t before_ms, after_ms;
    int width, height;
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;

    // The inference thread's own: the time of results, and the clip it last named.
    double frame_rate;
    double busy_until_ms; // the end of the clip being written, in result time
    char current[CC_EVENT_PATH_MAX];

    // The clip's thread's own between create and finish.
    struct cc_overlay_offscreen *overlay;
    uint8_t *rgb; // (height, width, 3)
    AVCodecContext *enc;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    struct cc_av_clock clock;
    bool keyed;           // a key frame was asked for ...
    int64_t last_key_pts; // ... the last at this pts
    bool failed;          // the encoder failed: no more clips
    struct ring ring;     // the last seconds
    AVFormatContext *out; // the clip being written, or NULL
    char out_tmp[CC_EVENT_PATH_MAX], out_path[CC_EVENT_PATH_MAX];
    int64_t out_first_pts; // the clip's first packet's pts (its 0)
    double out_end_ms;     // the clip ends with the first picture at or after this result time
    double last_ms;        // the newest frame's result time

    pthread_mutex_t lock; // guards the queue
    pthread_cond_t cond;
    bool lock_ready, thread_started, closing;
    pthread_t thread;
    struct job jobs[CC_CLIP_QUEUE];
    int head, count;
};

/* One line through notice. */
__attribute__((format(printf, 2, 3))) static void say(struct cc_clip *c, const char *fmt, ...)
{
    char line[CC_EVENT_PATH_MAX + 200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (c->notice)
        c->notice(c->notice_ctx, line);
}

static void *clip_main(void *arg);

/* ------------------------------------------------------------------------------------------
 * Open and close
 */

static bool check_config(const struct cc_clip_config *cfg, const struct cc_clip_env *env,
                         struct cc_error *err)
{
    if (!(cfg->before_s >= 0 && cfg->before_s <= 60))
        return cc_error_set(err, "--clip-before %g: give 0 to 60 seconds", cfg->before_s);
    if (!(cfg->after_s >= 0.1 && cfg->after_s <= 600))
        return cc_error_set(err, "--clip-after %g: give 0.1 to 600 seconds", cfg->after_s);
    if (!(cfg->max_mb > 0) || cfg->max_mb > 1e9)
        return cc_error_set(err, "--clip-max-mb %g: give a size in MB above 0", cfg->max_mb);
    if (env->width < 2 || env->height < 2 || env->width > MAX_SIDE || env->height > MAX_SIDE ||
        env->width % 2 || env->height % 2)
        return cc_error_set(err, "--clip-dir: size %dx%d must be even, 2 to %d a side", env->width,
                            env->height, MAX_SIDE);
    return true;
}

/* The encoder (for the whole run) and the picture it reads. */
static bool open_encoder(struct cc_clip *c, double frame_rate, struct cc_error *err)
{
    struct cc_error why = {{0}};
    const AVCodec *codec = cc_av_encode_find(NULL, &why);
    if (!codec)
        return cc_error_set(err, "--clip-dir: %s", why.msg);
    if (!(c->enc = avcodec_alloc_context3(codec)) || !(c->frame = av_frame_alloc()) ||
        !(c->pkt = av_packet_alloc()))
        return cc_error_set(err, "--clip-dir: out of memory");
    AVDictionary *opts = NULL;
    // Global headers: every clip is an MP4, which wants them apart.
    cc_av_encode_configure(c->enc, codec, c->width, c->height, frame_rate, KEY_EVERY_S, true,
                           &opts);
    if (codec->id == AV_CODEC_ID_H264) { // no lookahead: each picture's packet comes out at once,
        av_dict_set(&opts, "tune", "zerolatency", 0); // so an event's frame is in the ring
        av_dict_set(&opts, "forced-idr", "1", 0);     // a key frame asked for is an IDR
    }
    int ret = avcodec_open2(c->enc, codec, &opts);
    av_dict_free(&opts);
    if (ret < 0)
        return cc_error_set(err, "--clip-dir: avcodec_open2(%s) failed: %s", codec->name,
                            av_err2str(ret));
    c->frame->format = AV_PIX_FMT_YUV420P;
    c->frame->width = c->width;
    c->frame->height = c->height;
    if ((ret = av_frame_get_buffer(c->frame, 0)) < 0)
        return cc_error_set(err, "--clip-dir: av_frame_get_buffer failed: %s", av_err2str(ret));
    c->sws = sws_getContext(c->width, c->height, AV_PIX_FMT_RGB24, c->width, c->height,
                            AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    if (!c->sws)
        return cc_error_set(err, "--clip-dir: sws_getContext(rgb24 -> yuv420p) failed");
    return true;
}

struct cc_clip *cc_clip_create(const struct cc_clip_config *cfg, const struct cc_clip_env *env,
                               struct cc_error *err)
{
    if (!check_config(cfg, env, err))
        return NULL;
    struct cc_clip *c = calloc(1, sizeof(*c));
    if (!c) {
        cc_error_set(err, "--clip-dir: out of memory");
        return NULL;
    }
    c->before_ms = llround(cfg->before_s * 1000);
    c->after_ms = llround(cfg->after_s * 1000);
    c->width = env->width, c->height = env->height;
    c->frame_rate = env->frame_rate;
    c->notice = env->notice, c->notice_ctx = env->notice_ctx;
    c->busy_until_ms = -INFINITY;
    cc_av_clock_init(&c->clock, env->frame_rate);
    cc_av_log_quiet(); // av_log.h: libx264's banner stays off stderr
    if (!cc_event_folder_open(&c->folder, cfg->dir, cfg->camera,
                              (uint64_t)llround(cfg->max_mb * 1e6), ".mp4", "--clip-dir", err))
        goto error;
    c->folder.notice = env->notice, c->folder.notice_ctx = env->notice_ctx;
    if (!(c->rgb = malloc((size_t)c->width * c->height * 3))) {
        cc_error_set(err, "--clip-dir: out of memory for a %dx%d picture", c->width, c->height);
        goto error;
    }
    if (!(c->overlay = cc_overlay_offscreen_create(env->overlay, c->width, c->height, err)) ||
        !open_encoder(c, env->frame_rate, err))
        goto error;
    if (pthread_mutex_init(&c->lock, NULL) != 0 || pthread_cond_init(&c->cond, NULL) != 0) {
        cc_error_set(err, "--clip-dir: pthread_mutex_init/pthread_cond_init failed");
        goto error;
    }
    c->lock_ready = true;
    int e = pthread_create(&c->thread, NULL, clip_main, c);
    if (e != 0) {
        cc_error_set(err, "--clip-dir: pthread_create failed: %s", strerror(e));
        goto error;
    }
    c->thread_started = true;
    return c;

error:
    cc_clip_destroy(c);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * The inference thread: frames and events into the queue
 */

/* Result time in ms: a file's frame index at its rate, else the capture time. */
static double result_ms(const struct cc_clip *c, const struct cc_result *r)
{
    return c->frame_rate > 0 ? (double)r->seq * 1000.0 / c->frame_rate
                             : (double)r->capture_ns / 1e6;
}

/* The next free job, waiting while the queue is full (NULL when closing). */
static struct job *job_slot(struct cc_clip *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->count == CC_CLIP_QUEUE && !c->closing)
        pthread_cond_wait(&c->cond, &c->lock);
    struct job *j = c->closing ? NULL : &c->jobs[(c->head + c->count) % CC_CLIP_QUEUE];
    pthread_mutex_unlock(&c->lock); // only this thread adds; the clip's leaves free slots alone
    return j;
}

static void job_queue(struct cc_clip *c)
{
    pthread_mutex_lock(&c->lock);
    c->count++;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

void cc_clip_frame(struct cc_clip *c, const struct cc_result *r, const struct cc_frame *f)
{
    struct job *j = job_slot(c);
    if (!j)
        return;
    j->event = false;
    if (!cc_frame_copy(&j->f, f)) {
        say(c, "--clip-dir %s: out of memory for a frame; it is skipped", c->folder.dir);
        return;
    }
    j->r = *r;
    cc_result_keep_labels(&j->r, &j->labels);
    job_queue(c);
}

void cc_clip_event(struct cc_clip *c, const struct cc_result *r, const char *label, char *path,
                   size_t path_size)
{
    double t = result_ms(c, r);
    bool extend = c->current[0] && t < c->busy_until_ms;
    if (!extend) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        cc_event_folder_name(&c->folder, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec, label,
                             c->current, sizeof(c->current));
    }
    c->busy_until_ms = t + (double)c->after_ms;
    snprintf(path, path_size, "%s", c->current);
    struct job *j = job_slot(c);
    if (!j)
        return;
    j->event = true;
    j->new_clip = !extend;
    snprintf(j->path, sizeof(j->path), "%s", c->current);
    job_queue(c);
}

const char *cc_clip_current(const struct cc_clip *c)
{
    return c->current;
}

/* ------------------------------------------------------------------------------------------
 * The clip's thread: the ring and the clip being written
 */

/* Drops the ring's first n packets. */
static void ring_drop(struct ring *g, int n)
{
    for (int i = 0; i < n; i++) {
        g->bytes -= (size_t)g->pkt[i]->size;
        av_packet_free(&g->pkt[i]);
    }
    memmove(g->pkt, g->pkt + n, (size_t)(g->n - n) * sizeof(*g->pkt));
    g->n -= n;
}

/* The last key frame at or before pts (0 when none is). */
static int ring_key_before(const struct ring *g, int64_t pts)
{
    int k = 0;
    for (int i = 0; i < g->n && g->pkt[i]->pts <= pts; i++)
        if (g->pkt[i]->flags & AV_PKT_FLAG_KEY)
            k = i;
    return k;
}

/* Keeps a reference to pkt, then forgets what is older than before_ms (from a key frame) and
 * whole seconds over CC_CLIP_RING_MAX_BYTES. False when out of memory. */
static bool ring_add(struct cc_clip *c, const AVPacket *pkt)
{
    struct ring *g = &c->ring;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        AVPacket **p = realloc(g->pkt, (size_t)cap * sizeof(*p));
        if (!p)
            return false;
        g->pkt = p, g->cap = cap;
    }
    if (!(g->pkt[g->n] = av_packet_clone(pkt)))
        return false;
    g->bytes += (size_t)pkt->size;
    g->n++;
    ring_drop(g, ring_key_before(g, pkt->pts - c->before_ms));
    while (g->bytes > CC_CLIP_RING_MAX_BYTES && g->n > 1) { // to the next key frame
        int k = 1;
        while (k < g->n - 1 && !(g->pkt[k]->flags & AV_PKT_FLAG_KEY))
            k++;
        ring_drop(g, k);
    }
    return true;
}

/* Ends the clip being written: the trailer, and the file gets its name. */
static void close_clip(struct cc_clip *c)
{
    if (!c->out)
        return;
    int ret = av_write_trailer(c->out);
    int closed = avio_closep(&c->out->pb);
    avformat_free_context(c->out);
    c->out = NULL;
    if (ret >= 0)
        ret = closed;
    struct cc_error err = {{0}};
    if (ret < 0) {
        unlink(c->out_tmp);
        say(c, "--clip-dir: writing %s failed: %s (free some space); it is not kept", c->out_path,
            av_err2str(ret));
    } else if (!cc_event_folder_publish(&c->folder, c->out_tmp, c->out_path, sizeof(c->out_path),
                                        &err)) {
        say(c, "%s", err.msg);
    }
}

/* Writes a copy of pkt into the clip, its time from the clip's start. False on a write error
 * (the clip is then dropped, said). */
static bool write_packet(struct cc_clip *c, const AVPacket *pkt)
{
    AVPacket *p = av_packet_clone(pkt);
    int ret = p ? 0 : AVERROR(ENOMEM);
    if (p) {
        p->pts -= c->out_first_pts;
        p->dts -= c->out_first_pts;
        p->stream_index = 0;
        av_packet_rescale_ts(p, c->enc->time_base, c->out->streams[0]->time_base);
        ret = av_write_frame(c->out, p);
        av_packet_free(&p);
    }
    if (ret >= 0)
        return true;
    say(c, "--clip-dir: writing %s failed: %s (free some space); it is not kept", c->out_path,
        av_err2str(ret));
    avio_closep(&c->out->pb);
    avformat_free_context(c->out);
    c->out = NULL;
    unlink(c->out_tmp);
    return false;
}

/* Opens the temporary mp4 of a clip named path and writes the ring from the key frame at or
 * before before_ms ahead of the newest picture. */
static void start_clip(struct cc_clip *c, const char *path)
{
    struct cc_error err = {{0}};
    snprintf(c->out_path, sizeof(c->out_path), "%s", path);
    int fd = cc_event_folder_temp(&c->folder, c->out_tmp, sizeof(c->out_tmp), &err);
    if (fd < 0) {
        say(c, "%s", err.msg);
        return;
    }
    close(fd); // avio_open writes it again, by its name
    AVStream *st = NULL;
    int ret = avformat_alloc_output_context2(&c->out, NULL, "mp4", c->out_tmp);
    if (ret >= 0 && !(st = avformat_new_stream(c->out, NULL)))
        ret = AVERROR(ENOMEM);
    if (ret >= 0 && (ret = avcodec_parameters_from_context(st->codecpar, c->enc)) >= 0) {
        st->time_base = c->enc->time_base;
        if ((ret = avio_open(&c->out->pb, c->out_tmp, AVIO_FLAG_WRITE)) >= 0)
            ret = avformat_write_header(c->out, NULL);
    }
    if (ret < 0) {
        say(c, "--clip-dir: cannot write %s: %s", c->out_path, av_err2str(ret));
        if (c->out && c->out->pb)
            avio_closep(&c->out->pb);
        avformat_free_context(c->out);
        c->out = NULL;
        unlink(c->out_tmp);
        return;
    }
    int k = ring_key_before(&c->ring, c->clock.last_pts - c->before_ms);
    c->out_first_pts = c->ring.n ? c->ring.pkt[k]->pts : c->clock.last_pts;
    for (int i = k; i < c->ring.n && c->out; i++)
        write_packet(c, c->ring.pkt[i]);
}

/* Sends frame (NULL: drain) to the encoder; each packet to the ring and the clip. */
static bool encode(struct cc_clip *c, AVFrame *frame)
{
    int ret = avcodec_send_frame(c->enc, frame);
    while (ret >= 0) {
        ret = avcodec_receive_packet(c->enc, c->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return true;
        if (ret < 0)
            break;
        if (c->pkt->duration <= 0)
            c->pkt->duration = c->clock.frame_ms;
        bool kept = ring_add(c, c->pkt);
        if (c->out)
            write_packet(c, c->pkt);
        av_packet_unref(c->pkt);
        if (!kept)
            ret = AVERROR(ENOMEM);
    }
    c->failed = true;
    say(c, "--clip-dir %s: the encoder failed: %s; no more clips", c->folder.dir, av_err2str(ret));
    return false;
}

/* Draws and encodes job j's frame. */
static void encode_frame(struct cc_clip *c, struct job *j)
{
    struct cc_error err = {{0}};
    if (!cc_overlay_render(c->overlay, &j->f, &j->r, c->rgb, c->width * 3, &err) ||
        av_frame_make_writable(c->frame) < 0) {
        c->failed = true;
        say(c, "--clip-dir %s: cannot draw a picture: %s; no more clips", c->folder.dir,
            err.msg[0] ? err.msg : "av_frame_make_writable failed");
        return;
    }
    const uint8_t *src[1] = {c->rgb};
    const int src_stride[1] = {c->width * 3};
    sws_scale(c->sws, src, src_stride, 0, c->height, c->frame->data, c->frame->linesize);
    c->frame->pts = cc_av_clock_pts(&c->clock, j->r.seq, j->r.capture_ns);
    // A key frame at least every KEY_EVERY_S of picture time, whatever the rate (a camera's
    // rate is not known to the encoder, whose gop_size assumes 30/s).
    bool key = !c->keyed || c->frame->pts - c->last_key_pts >= (int64_t)(KEY_EVERY_S * 1000);
    c->frame->pict_type = key ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
    if (key)
        c->keyed = true, c->last_key_pts = c->frame->pts;
    if (!encode(c, c->frame))
        return;
    if (c->out && result_ms(c, &j->r) >= c->out_end_ms)
        close_clip(c); // its last picture is this one
}

static void do_job(struct cc_clip *c, struct job *j)
{
    if (c->failed)
        return;
    if (!j->event) {
        encode_frame(c, j);
        return;
    }
    // The event's frame is the newest encoded (cc_clip_frame came first, and with no B-frames
    // and no lookahead its packet is out).
    if (j->new_clip) {
        close_clip(c); // none is open: the inference thread saw its end pass
        start_clip(c, j->path);
    }
    c->out_end_ms = c->last_ms + (double)c->after_ms;
}

static void *clip_main(void *arg)
{
    struct cc_clip *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->count && !c->closing)
            pthread_cond_wait(&c->cond, &c->lock);
        if (!c->count)
            break; // closing, and nothing left
        struct job *j = &c->jobs[c->head];
        pthread_mutex_unlock(&c->lock); // frame and event fill only the free slots meanwhile
        if (!j->event)
            c->last_ms = result_ms(c, &j->r);
        do_job(c, j);
        pthread_mutex_lock(&c->lock);
        c->head = (c->head + 1) % CC_CLIP_QUEUE;
        c->count--;
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

void cc_clip_finish(struct cc_clip *c)
{
    if (!c || !c->thread_started)
        return;
    pthread_mutex_lock(&c->lock);
    c->closing = true;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    c->thread_started = false;
    if (c->out && !c->failed)
        encode(c, NULL); // the encoder's last packets, into the clip
    close_clip(c);       // a clip in progress ends here, shorter
}

void cc_clip_destroy(struct cc_clip *c)
{
    if (!c)
        return;
    cc_clip_finish(c);
    if (c->out) { // finish could not close it
        avio_closep(&c->out->pb);
        avformat_free_context(c->out);
        unlink(c->out_tmp);
    }
    ring_drop(&c->ring, c->ring.n);
    free(c->ring.pkt);
    for (int i = 0; i < CC_CLIP_QUEUE; i++)
        free(c->jobs[i].f.data);
    if (c->lock_ready) {
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->cond);
    }
    avcodec_free_context(&c->enc);
    av_frame_free(&c->frame);
    av_packet_free(&c->pkt);
    sws_freeContext(c->sws);
    cc_overlay_offscreen_destroy(c->overlay);
    free(c->rgb);
    free(c);
}
