/* camclass — the annotated video recorder (see recorder.h).
 *
 * The FFmpeg calls follow libavformat's doc/examples/mux.c: avformat_alloc_output_context2,
 * avformat_new_stream, avcodec_open2, avcodec_parameters_from_context, avio_open,
 * avformat_write_header; per picture avcodec_send_frame and avcodec_receive_packet until
 * EAGAIN, av_packet_rescale_ts, av_interleaved_write_frame; at the end a NULL frame drains the
 * encoder, then av_write_trailer and avio_closep.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include "overlay_offscreen.h"
#include "av_encode.h"
#include "av_log.h"
#include "recorder.h"

#define MAX_SIDE 8192
#define QUEUE 3 // frames waiting for the recorder's thread; a full queue makes add wait

/* A frame and its result, copied for the recorder's thread. */
struct job {
    struct cc_result r; // its labels point into labels (a reload frees the model)
    struct cc_result_labels labels;
    struct cc_frame f; // data owned by the job (grown with realloc, kept between uses)
};

struct cc_recorder {
    char *path;
    const char *container; // "mp4", "matroska"
    int width, height;
    double frame_rate; // > 0: pts from the frame index; 0: from capture times
    char describe[512];

    struct cc_overlay_offscreen *overlay; // draws the picture
    uint8_t *rgb;                         // (height, width, 3) the picture drawn

    // Between open and finish, everything below up to the lock belongs to the recorder's
    // thread (drawing, encoding, writing); open and finish use it before and after.
    AVFormatContext *fmt; // the muxer; fmt->pb the file once opened
    AVCodecContext *enc;
    AVStream *stream;
    AVFrame *frame; // YUV 4:2:0, the encoder's input
    AVPacket *pkt;
    struct SwsContext *sws; // RGB24 -> YUV420P, BT.601 limited range
    bool header_written, finished;
    bool write_failed;        // a write error: nothing more is encoded
    struct cc_av_clock clock; // the pictures' timestamps

    // The queue from add (the caller's thread) to the recorder's thread, under lock.
    pthread_mutex_t lock;
    pthread_cond_t cond; // a job queued or taken, or closing
    bool lock_ready, thread_started;
    pthread_t thread;
    struct job jobs[QUEUE];
    int head, count;         // jobs[head] is the oldest of count queued
    bool closing;            // finish: no more jobs; the thread ends when the queue is empty
    bool failed;             // write_failed, as the caller's thread may read it
    uint64_t frames;         // pictures encoded
    struct cc_error pending; // a line for the caller not yet handed out by add or finish
};

/* ---------------------------------------------------------------------------------------- */
/* Open and close                                                                           */
/* ---------------------------------------------------------------------------------------- */

static void *record_main(void *arg);
static void stop_thread(struct cc_recorder *rec);

const char *cc_recorder_container(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return NULL;
    if (strcasecmp(dot, ".mp4") == 0)
        return "mp4";
    if (strcasecmp(dot, ".mkv") == 0)
        return "matroska";
    return NULL;
}

/* Opens the encoder, the stream and the file, and writes the header. */
static bool open_output(struct cc_recorder *rec, const char *encoder, struct cc_error *err)
{
    const char *p = rec->path;
    int ret = avformat_alloc_output_context2(&rec->fmt, NULL, rec->container, p);
    if (ret < 0 || !rec->fmt)
        return cc_error_set(err, "--output %s: avformat_alloc_output_context2(%s) failed: %s", p,
                            rec->container, av_err2str(ret));
    struct cc_error why = {{0}};
    const AVCodec *codec = cc_av_encode_find(encoder, &why);
    if (!codec)
        return cc_error_set(err, "--output %s: %s", p, why.msg);
    if (!(rec->stream = avformat_new_stream(rec->fmt, NULL)) ||
        !(rec->enc = avcodec_alloc_context3(codec)) || !(rec->frame = av_frame_alloc()) ||
        !(rec->pkt = av_packet_alloc()))
        return cc_error_set(err, "--output %s: out of memory", p);
    AVDictionary *opts = NULL;
    cc_av_encode_configure(rec->enc, codec, rec->width, rec->height, rec->frame_rate, 2.0,
                           rec->fmt->oformat->flags & AVFMT_GLOBALHEADER, &opts);
    ret = avcodec_open2(rec->enc, codec, &opts);
    av_dict_free(&opts);
    if (ret < 0)
        return cc_error_set(err, "--output %s: avcodec_open2(%s) failed: %s", p, codec->name,
                            av_err2str(ret));
    if ((ret = avcodec_parameters_from_context(rec->stream->codecpar, rec->enc)) < 0)
        return cc_error_set(err, "--output %s: avcodec_parameters_from_context failed: %s", p,
                            av_err2str(ret));
    rec->stream->time_base = rec->enc->time_base;

    rec->frame->format = AV_PIX_FMT_YUV420P;
    rec->frame->width = rec->width;
    rec->frame->height = rec->height;
    if ((ret = av_frame_get_buffer(rec->frame, 0)) < 0)
        return cc_error_set(err, "--output %s: av_frame_get_buffer failed: %s", p, av_err2str(ret));
    rec->sws = sws_getContext(rec->width, rec->height, AV_PIX_FMT_RGB24, rec->width, rec->height,
                              AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    if (!rec->sws)
        return cc_error_set(err, "--output %s: sws_getContext(rgb24 -> yuv420p) failed", p);

    if ((ret = avio_open(&rec->fmt->pb, p, AVIO_FLAG_WRITE)) < 0)
        return cc_error_set(err,
                            "cannot write --output %s: %s (give a path in a writable "
                            "directory)",
                            p, av_err2str(ret));
    if ((ret = avformat_write_header(rec->fmt, NULL)) < 0)
        return cc_error_set(err,
                            "cannot write --output %s: avformat_write_header: %s (free some "
                            "space or record elsewhere)",
                            p, av_err2str(ret));
    rec->header_written = true;
    const char *what = codec->id == AV_CODEC_ID_H264 ? "H.264" : codec->long_name;
    snprintf(rec->describe, sizeof(rec->describe), "%s (%s, %s by %s, %dx%d)", p,
             strcmp(rec->container, "mp4") == 0 ? "MP4" : "Matroska", what ? what : codec->name,
             codec->name, rec->width, rec->height);
    return true;
}

struct cc_recorder *cc_recorder_open(const struct cc_recorder_config *cfg, struct cc_error *err)
{
    const char *container = cc_recorder_container(cfg->path);
    if (!container) {
        const char *dot = strrchr(cfg->path, '.');
        if (dot && strchr(dot, '/'))
            dot = NULL;
        cc_error_set(err, "--output %s: unknown container %s (give a name ending in .mp4 or .mkv)",
                     cfg->path, dot ? dot : "(no extension)");
        return NULL;
    }
    if (cfg->width < 2 || cfg->height < 2 || cfg->width > MAX_SIDE || cfg->height > MAX_SIDE ||
        cfg->width % 2 || cfg->height % 2) {
        cc_error_set(err, "--output %s: size %dx%d must be even, 2 to %d a side", cfg->path,
                     cfg->width, cfg->height, MAX_SIDE);
        return NULL;
    }
    struct cc_recorder *rec = calloc(1, sizeof(*rec));
    if (!rec || !(rec->path = strdup(cfg->path))) {
        free(rec);
        cc_error_set(err, "--output %s: out of memory", cfg->path);
        return NULL;
    }
    rec->container = container;
    rec->width = cfg->width;
    rec->height = cfg->height;
    rec->frame_rate = cfg->frame_rate;
    cc_av_clock_init(&rec->clock, cfg->frame_rate);
    if (pthread_mutex_init(&rec->lock, NULL) != 0) {
        cc_error_set(err, "--output %s: pthread_mutex_init failed", cfg->path);
        free(rec->path);
        free(rec);
        return NULL;
    }
    if (pthread_cond_init(&rec->cond, NULL) != 0) {
        cc_error_set(err, "--output %s: pthread_cond_init failed", cfg->path);
        pthread_mutex_destroy(&rec->lock);
        free(rec->path);
        free(rec);
        return NULL;
    }
    rec->lock_ready = true;
    cc_av_log_quiet(); // av_log.h: libx264's banner and FFmpeg's own lines stay off stderr
    if (!(rec->rgb = malloc((size_t)rec->width * rec->height * 3))) {
        cc_error_set(err, "--output %s: out of memory for a %dx%d picture", cfg->path, rec->width,
                     rec->height);
        goto error;
    }
    if (!(rec->overlay = cc_overlay_offscreen_create(cfg->overlay, rec->width, rec->height, err)) ||
        !open_output(rec, cfg->encoder, err))
        goto error;
    int e = pthread_create(&rec->thread, NULL, record_main, rec);
    if (e != 0) {
        cc_error_set(err, "--output %s: pthread_create failed: %s", cfg->path, strerror(e));
        goto error;
    }
    rec->thread_started = true;
    return rec;

error:
    cc_recorder_destroy(rec);
    return NULL;
}

const char *cc_recorder_describe(const struct cc_recorder *rec)
{
    return rec->describe;
}

void cc_recorder_destroy(struct cc_recorder *rec)
{
    if (!rec)
        return;
    stop_thread(rec);
    for (int i = 0; i < QUEUE; i++)
        free(rec->jobs[i].f.data);
    if (rec->lock_ready) {
        pthread_mutex_destroy(&rec->lock);
        pthread_cond_destroy(&rec->cond);
    }
    if (rec->fmt) {
        if (rec->fmt->pb)
            avio_closep(&rec->fmt->pb);
        avformat_free_context(rec->fmt);
    }
    avcodec_free_context(&rec->enc);
    av_frame_free(&rec->frame);
    av_packet_free(&rec->pkt);
    sws_freeContext(rec->sws);
    cc_overlay_offscreen_destroy(rec->overlay);
    free(rec->rgb);
    free(rec->path);
    free(rec);
}

/* ---------------------------------------------------------------------------------------- */
/* Pictures                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Sends frame (NULL: drain) to the encoder and writes every packet it has ready. */
static bool encode(struct cc_recorder *rec, AVFrame *frame, struct cc_error *err)
{
    if (rec->write_failed)
        return false;
    int ret = avcodec_send_frame(rec->enc, frame);
    if (ret < 0) {
        rec->write_failed = true;
        return cc_error_set(err, "--output %s: avcodec_send_frame failed: %s", rec->path,
                            av_err2str(ret));
    }
    for (;;) {
        ret = avcodec_receive_packet(rec->enc, rec->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return true;
        if (ret < 0) {
            rec->write_failed = true;
            return cc_error_set(err, "--output %s: avcodec_receive_packet failed: %s", rec->path,
                                av_err2str(ret));
        }
        if (rec->pkt->duration <= 0)
            rec->pkt->duration = rec->clock.frame_ms;
        av_packet_rescale_ts(rec->pkt, rec->enc->time_base, rec->stream->time_base);
        rec->pkt->stream_index = rec->stream->index;
        // Takes the packet's reference; a write error (full disk) surfaces here as the file's
        // AVIOContext error.
        ret = av_interleaved_write_frame(rec->fmt, rec->pkt);
        if (ret < 0) {
            rec->write_failed = true;
            return cc_error_set(err,
                                "cannot write --output %s: %s (free some space or record "
                                "elsewhere); the recording stops here",
                                rec->path, av_err2str(ret));
        }
    }
}

/* The recorder's thread: draws one frame and encodes it. */
static bool record_one(struct cc_recorder *rec, const struct cc_result *r, const struct cc_frame *f,
                       struct cc_error *err)
{
    if (rec->write_failed)
        return false;
    // Frames reach here after preprocessing has read them whole, so drawing fails only when SDL
    // does (out of memory): the recording stops as on a write error.
    struct cc_error draw_err = {{0}};
    if (!cc_overlay_render(rec->overlay, f, r, rec->rgb, rec->width * 3, &draw_err)) {
        rec->write_failed = true;
        return cc_error_set(err, "--output %s: frame %llu: %s; the recording stops here", rec->path,
                            (unsigned long long)r->seq, draw_err.msg);
    }
    int ret = av_frame_make_writable(rec->frame);
    if (ret < 0) {
        rec->write_failed = true;
        return cc_error_set(err, "--output %s: av_frame_make_writable failed: %s", rec->path,
                            av_err2str(ret));
    }
    const uint8_t *src[1] = {rec->rgb};
    const int src_stride[1] = {rec->width * 3};
    sws_scale(rec->sws, src, src_stride, 0, rec->height, rec->frame->data, rec->frame->linesize);
    rec->frame->pts = cc_av_clock_pts(&rec->clock, r->seq, r->capture_ns);
    return encode(rec, rec->frame, err);
}

/* Keeps the first line the caller has not seen yet. Called locked. */
static void set_pending(struct cc_recorder *rec, const struct cc_error *e)
{
    if (!rec->pending.msg[0] && e->msg[0])
        rec->pending = *e;
}

static void *record_main(void *arg)
{
    struct cc_recorder *rec = arg;
    pthread_mutex_lock(&rec->lock);
    for (;;) {
        while (!rec->count && !rec->closing)
            pthread_cond_wait(&rec->cond, &rec->lock);
        if (!rec->count)
            break; // closing, and nothing left
        struct job *j = &rec->jobs[rec->head];
        pthread_mutex_unlock(&rec->lock); // add fills only the other slots meanwhile
        struct cc_error e = {{0}};
        bool ok = record_one(rec, &j->r, &j->f, &e);
        pthread_mutex_lock(&rec->lock);
        rec->head = (rec->head + 1) % QUEUE;
        rec->count--;
        rec->frames += ok;
        rec->failed |= rec->write_failed;
        set_pending(rec, &e);
        pthread_cond_broadcast(&rec->cond);
    }
    pthread_mutex_unlock(&rec->lock);
    return NULL;
}

/* Copies f and r into job j (the frame's data into j's own buffer). */
static bool job_fill(struct job *j, const struct cc_result *r, const struct cc_frame *f)
{
    if (!cc_frame_copy(&j->f, f))
        return false;
    j->r = *r;
    cc_result_keep_labels(&j->r, &j->labels);
    return true;
}

bool cc_recorder_add(struct cc_recorder *rec, const struct cc_result *r, const struct cc_frame *f,
                     struct cc_error *err)
{
    bool ok = true;
    pthread_mutex_lock(&rec->lock);
    if (rec->pending.msg[0]) { // from the recorder's thread since the last call
        cc_error_set(err, "%s", rec->pending.msg);
        rec->pending.msg[0] = '\0';
        ok = false;
    }
    if (rec->failed || rec->closing) {
        pthread_mutex_unlock(&rec->lock);
        return false;
    }
    while (rec->count == QUEUE) // the recorder is behind: wait for it (no frame is skipped)
        pthread_cond_wait(&rec->cond, &rec->lock);
    struct job *j = &rec->jobs[(rec->head + rec->count) % QUEUE];
    if (job_fill(j, r, f)) {
        rec->count++;
        pthread_cond_broadcast(&rec->cond);
    } else {
        rec->failed = true; // a gap would make the file lie; stop as on a write error
        ok = cc_error_set(err,
                          "--output %s: out of memory for frame %llu; the recording stops "
                          "here",
                          rec->path, (unsigned long long)r->seq);
    }
    pthread_mutex_unlock(&rec->lock);
    return ok;
}

bool cc_recorder_failed(struct cc_recorder *rec)
{
    pthread_mutex_lock(&rec->lock);
    bool failed = rec->failed;
    pthread_mutex_unlock(&rec->lock);
    return failed;
}

uint64_t cc_recorder_frames(struct cc_recorder *rec)
{
    pthread_mutex_lock(&rec->lock);
    uint64_t n = rec->frames;
    pthread_mutex_unlock(&rec->lock);
    return n;
}

/* Ends the recorder's thread after the queued frames (idempotent). */
static void stop_thread(struct cc_recorder *rec)
{
    if (!rec->thread_started)
        return;
    pthread_mutex_lock(&rec->lock);
    rec->closing = true;
    pthread_cond_broadcast(&rec->cond);
    pthread_mutex_unlock(&rec->lock);
    pthread_join(rec->thread, NULL);
    rec->thread_started = false;
}

/* Drains the encoder, writes the trailer and closes the file. */
static bool finish_file(struct cc_recorder *rec, struct cc_error *err)
{
    bool ok = encode(rec, NULL, err); // drains the encoder's delayed pictures
    if (ok && rec->header_written) {
        int ret = av_write_trailer(rec->fmt);
        if (ret < 0) {
            rec->write_failed = true;
            ok = cc_error_set(err,
                              "cannot write --output %s: av_write_trailer: %s (free some space "
                              "or record elsewhere)",
                              rec->path, av_err2str(ret));
        }
    }
    if (rec->fmt && rec->fmt->pb) {
        AVIOContext *pb = rec->fmt->pb;
        avio_flush(pb);
        int ret = pb->error;
        int closed = avio_closep(&rec->fmt->pb); // close(2) may be the first to fail (NFS, quota)
        if (ret >= 0)
            ret = closed;
        if (ok && ret < 0) {
            rec->write_failed = true;
            ok = cc_error_set(err,
                              "cannot write --output %s: %s (free some space or record "
                              "elsewhere)",
                              rec->path, av_err2str(ret));
        }
    }
    return ok;
}

bool cc_recorder_finish(struct cc_recorder *rec, struct cc_error *err)
{
    if (rec->finished)
        return !rec->failed;
    stop_thread(rec); // encodes what is queued; from here on this thread owns everything
    rec->finished = true;
    if (rec->failed || rec->write_failed) {
        rec->failed = true;
        // The line add could not hand out any more (the last frames'), else said already.
        if (rec->pending.msg[0])
            cc_error_set(err, "%s", rec->pending.msg);
        if (rec->fmt && rec->fmt->pb)
            avio_closep(&rec->fmt->pb);
        return false;
    }
    if (!finish_file(rec, err))
        rec->failed = true;
    return !rec->failed;
}
