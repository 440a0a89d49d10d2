/* camclass — video files and network streams through libavformat/libavcodec/libswscale
 * (see av_source.h). The decode loop follows libavcodec's send/receive API (avcodec.h, "the
 * send/receive encoding and decoding API overview"): receive until EAGAIN, then read and send
 * one packet; at the end send NULL and receive what the decoder still holds. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libavutil/time.h>
#include <libswscale/swscale.h>

#include "av_log.h"
#include "av_source.h"
#include "decode.h"

#define IO_BUFFER 4096 // bytes of the in-memory AVIOContext's buffer

// What a URL may open: the network protocols and the layers HLS and RTSP put over them; not
// "file", "pipe", "concat", "subfile", "data" — a stream cannot make libavformat read local
// files. A file path opens through "file" only; a buffer through none ("none" names no
// protocol, so every nested open is refused).
static const char NET_PROTOCOLS[] = "http,https,tls,tcp,udp,rtp,srtp,rtsp,rtsps,httpproxy,crypto";
static const char *const URL_SCHEMES[] = {"rtsp", "rtsps", "http", "https", "udp", "rtp", "tcp"};

struct cc_av {
    char *path; // as the user gave it, for messages
    bool url;

    AVFormatContext *fmt;   // owned; its pb too when custom
    AVIOContext *custom_io; // the buffer reader of cc_av_open_buffer, else NULL
    const uint8_t *buf;     // (buf_size) not owned
    size_t buf_size, buf_pos;
    int stream;             // index of the video stream in fmt
    AVCodecContext *dec;    // owned
    AVPacket *pkt;          // owned, reused
    AVFrame *frame;         // owned, reused
    struct SwsContext *sws; // owned; cached for the last size and format
    bool draining;          // the end of the input was sent to the decoder
    uint64_t index;         // frames delivered since open or rewind, for messages
    int64_t last_pts;       // best-effort timestamp of the last frame (stream time base), or
                            // AV_NOPTS_VALUE; with index, tells a truncated file at its end
    int64_t last_frame_us;  // av_gettime_relative() of the last frame delivered, or of the open
    uint64_t refused;       // packets the decoder refused since then (skipped on a stream)
    int last_refusal;       // the decoder's last error then
    enum cc_av_status status;
    char desc[160];

    // Interrupt callback state: armed before each blocking call.
    int64_t timeout_us; // 0: none
    int64_t deadline;   // av_gettime_relative() value; 0: none
    bool (*cancel)(void *ctx);
    void *cancel_ctx;
    bool timed_out, cancelled; // why the last call was interrupted
};

bool cc_av_is_url(const char *s)
{
    for (size_t i = 0; i < sizeof(URL_SCHEMES) / sizeof(URL_SCHEMES[0]); i++) {
        size_t n = strlen(URL_SCHEMES[i]);
        if (strncmp(s, URL_SCHEMES[i], n) == 0 && strncmp(s + n, "://", 3) == 0)
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Interrupts and error kinds                                                               */
/* ---------------------------------------------------------------------------------------- */

static int interrupt_cb(void *opaque)
{
    struct cc_av *av = opaque;
    if (av->cancel && av->cancel(av->cancel_ctx)) {
        av->cancelled = true;
        return 1;
    }
    if (av->deadline && av_gettime_relative() > av->deadline) {
        av->timed_out = true;
        return 1;
    }
    return 0;
}

static void arm(struct cc_av *av)
{
    av->timed_out = av->cancelled = false;
    av->deadline = av->timeout_us ? av_gettime_relative() + av->timeout_us : 0;
}

/* The kind of failure ret is, after an armed call. */
static enum cc_av_status classify(const struct cc_av *av, int ret)
{
    if (av->cancelled)
        return CC_AV_CANCELLED;
    if (av->timed_out)
        return CC_AV_UNREACHABLE;
    if (!av->url)
        return CC_AV_UNUSABLE;
    switch (ret) { // what a different server, or the same one later, cannot change
    case AVERROR_INVALIDDATA:
    case AVERROR_PROTOCOL_NOT_FOUND:
    case AVERROR_DEMUXER_NOT_FOUND:
    case AVERROR_DECODER_NOT_FOUND:
    case AVERROR_STREAM_NOT_FOUND:
    case AVERROR_HTTP_BAD_REQUEST:
    case AVERROR_HTTP_UNAUTHORIZED:
    case AVERROR_HTTP_FORBIDDEN:
    case AVERROR_HTTP_NOT_FOUND:
    case AVERROR_HTTP_OTHER_4XX:
    case AVERROR(EINVAL):
    case AVERROR(ENOMEM):
        return CC_AV_UNUSABLE;
    default:
        return CC_AV_UNREACHABLE;
    }
}

/* Sets err for a failed armed call: "PATH: WHAT: av_err2str" (or the timeout in words). */
static void fail(struct cc_av *av, int ret, const char *what, struct cc_error *err)
{
    av->status = classify(av, ret);
    if (av->timed_out)
        cc_error_set(err, "%s: %s: no answer for %g s (timed out)", av->path, what,
                     (double)av->timeout_us / 1e6); // 0.5 s, 2 s: not "0 s"
    else if (av->cancelled)
        cc_error_set(err, "%s: %s: stopped", av->path, what);
    else
        cc_error_set(err, "%s: %s: %s%s", av->path, what, av_err2str(ret),
                     av->status == CC_AV_UNREACHABLE ? "; check the address and that the "
                                                       "server is up"
                                                     : "");
}

/* ---------------------------------------------------------------------------------------- */
/* Opening                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static int buffer_read(void *opaque, uint8_t *dst, int size)
{
    struct cc_av *av = opaque;
    size_t left = av->buf_size - av->buf_pos;
    if (left == 0)
        return AVERROR_EOF;
    size_t n = (size_t)size < left ? (size_t)size : left;
    memcpy(dst, av->buf + av->buf_pos, n);
    av->buf_pos += n;
    return (int)n;
}

static int64_t buffer_seek(void *opaque, int64_t offset, int whence)
{
    struct cc_av *av = opaque;
    if (whence == AVSEEK_SIZE)
        return (int64_t)av->buf_size;
    int64_t base = 0;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET:
        base = 0;
        break;
    case SEEK_CUR:
        base = (int64_t)av->buf_pos;
        break;
    case SEEK_END:
        base = (int64_t)av->buf_size;
        break;
    default:
        return AVERROR(EINVAL);
    }
    if (offset > INT64_MAX - base || base + offset < 0 || base + offset > (int64_t)av->buf_size)
        return AVERROR(EINVAL);
    av->buf_pos = (size_t)(base + offset);
    return (int64_t)av->buf_pos;
}

static bool size_ok(int w, int h)
{
    return w > 0 && h > 0 && w <= CC_IMAGE_MAX_SIDE && h <= CC_IMAGE_MAX_SIDE &&
           (int64_t)w * h <= CC_IMAGE_MAX_PIXELS;
}

/* "2 audio streams, 1 subtitle stream" for the no-video message. */
static void describe_streams(const AVFormatContext *fmt, char *out, size_t size)
{
    int audio = 0, subs = 0, other = 0;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        enum AVMediaType t = fmt->streams[i]->codecpar->codec_type;
        audio += t == AVMEDIA_TYPE_AUDIO;
        subs += t == AVMEDIA_TYPE_SUBTITLE;
        other += t != AVMEDIA_TYPE_AUDIO && t != AVMEDIA_TYPE_SUBTITLE;
    }
    snprintf(out, size, "%u stream%s: %d audio, %d subtitle, %d other", fmt->nb_streams,
             fmt->nb_streams == 1 ? "" : "s", audio, subs, other);
}

/* Everything after avformat_open_input: stream info, the video stream, its decoder. */
static enum cc_av_status open_decoder(struct cc_av *av, struct cc_error *err)
{
    arm(av);
    int ret = avformat_find_stream_info(av->fmt, NULL);
    // As the ffmpeg CLI: a short file may end before every parameter was found (a 2-frame
    // MPEG-TS); that is not fatal while there are streams: the decoder finds out the rest.
    if (ret < 0 && (av->cancelled || av->timed_out || av->fmt->nb_streams == 0)) {
        fail(av, ret, "reading the stream information", err);
        return av->status;
    }
    const AVCodec *codec = NULL;
    ret = av_find_best_stream(av->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (ret == AVERROR_STREAM_NOT_FOUND) {
        char streams[96];
        describe_streams(av->fmt, streams, sizeof(streams));
        cc_error_set(err, "%s: no video stream (%s); camclass classifies video or images", av->path,
                     streams);
        return CC_AV_UNUSABLE;
    }
    if (ret < 0 || !codec) {
        // With a decoder asked for, libavformat answers AVERROR_DECODER_NOT_FOUND, not the
        // stream: the stream is found again without one, to name its codec.
        int idx =
            ret >= 0 ? ret : av_find_best_stream(av->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
        enum AVCodecID id = idx >= 0 ? av->fmt->streams[idx]->codecpar->codec_id : AV_CODEC_ID_NONE;
        int why = ret < 0 ? ret : AVERROR_DECODER_NOT_FOUND;
        if (id == AV_CODEC_ID_NONE)
            cc_error_set(err,
                         "%s: the video's codec is unknown to libavcodec (%s); convert it, e.g. "
                         "ffmpeg -i IN -c:v libx264 OUT.mp4",
                         av->path, av_err2str(why));
        else
            cc_error_set(err,
                         "%s: the video is %s, which this build of libavcodec does not decode "
                         "(%s); convert it, e.g. ffmpeg -i IN -c:v libx264 OUT.mp4",
                         av->path, avcodec_get_name(id), av_err2str(why));
        return CC_AV_UNUSABLE;
    }
    av->stream = ret;
    AVStream *st = av->fmt->streams[ret];
    int w = st->codecpar->width, h = st->codecpar->height;
    if ((w || h) && !size_ok(w, h)) {
        cc_error_set(err, "%s: video of %dx%d pixels; camclass takes at most %dx%d and %d M pixels",
                     av->path, w, h, CC_IMAGE_MAX_SIDE, CC_IMAGE_MAX_SIDE,
                     CC_IMAGE_MAX_PIXELS / 1000000);
        return CC_AV_UNUSABLE;
    }
    if (!(av->dec = avcodec_alloc_context3(codec)) || !(av->pkt = av_packet_alloc()) ||
        !(av->frame = av_frame_alloc())) {
        cc_error_set(err, "%s: out of memory for the decoder", av->path);
        return CC_AV_UNUSABLE;
    }
    if ((ret = avcodec_parameters_to_context(av->dec, st->codecpar)) < 0) {
        cc_error_set(err, "%s: %s decoder parameters: %s", av->path, codec->name, av_err2str(ret));
        return CC_AV_UNUSABLE;
    }
    av->dec->max_pixels = CC_IMAGE_MAX_PIXELS; // a bigger frame is an error, not an allocation
    av->dec->thread_count = 1;                 // inference and capture have the other cores
    if ((ret = avcodec_open2(av->dec, codec, NULL)) < 0) {
        cc_error_set(err, "%s: cannot open the %s decoder: %s", av->path, codec->name,
                     av_err2str(ret));
        return CC_AV_UNUSABLE;
    }
    snprintf(av->desc, sizeof(av->desc), "%s %dx%d %.4g fps (%s)", codec->name, w, h, cc_av_fps(av),
             av->fmt->iformat->name);
    return CC_AV_OK;
}

/* Allocates av with its format context and interrupt callback. */
static struct cc_av *av_create(const char *path, struct cc_error *err)
{
    cc_av_log_quiet();
    struct cc_av *av = calloc(1, sizeof(*av));
    if (av)
        av->path = strdup(path);
    if (av && av->path)
        av->fmt = avformat_alloc_context();
    if (!av || !av->path || !av->fmt) {
        cc_error_set(err, "%s: out of memory opening a video", path);
        cc_av_close(av);
        return NULL;
    }
    av->fmt->interrupt_callback = (AVIOInterruptCB){interrupt_cb, av};
    av->stream = -1;
    av->last_pts = AV_NOPTS_VALUE;
    return av;
}

/* The container libavformat recognises in the first bytes of a file whose open failed, for a
 * better message than "invalid data" ("mov,mp4,m4a,3gp,3g2,mj2"); NULL when none. */
static const char *probe_format(const char *path)
{
    uint8_t buf[4096 + AVPROBE_PADDING_SIZE] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, 4096, f);
    fclose(f);
    AVProbeData pd = {.filename = "", .buf = buf, .buf_size = (int)n};
    int score = 0;
    const AVInputFormat *fmt = av_probe_input_format3(&pd, 1, &score);
    return fmt && score > AVPROBE_SCORE_MAX / 4 ? fmt->name : NULL;
}

/* avformat_open_input with the protocol whitelist, then the decoder. */
static enum cc_av_status open_input(struct cc_av *av, const char *name, const char *protocols,
                                    struct cc_error *err)
{
    AVDictionary *o = NULL;
    av_dict_set(&o, "protocol_whitelist", protocols, 0);
    if (av->url) {
        av_dict_set(&o, "overrun_nonfatal", "1", 0); // udp: a slow reader drops, not fails
        av_dict_set(&o, "fifo_size", "100000", 0);   // udp: ~2 s of a 100 Mbit/s stream
    }
    arm(av);
    int ret = avformat_open_input(&av->fmt, name, NULL, &o); // frees fmt on failure
    av_dict_free(&o);
    if (ret < 0) {
        const char *kind = ret == AVERROR_INVALIDDATA && !av->url && !av->custom_io
                               ? probe_format(av->path)
                               : NULL;
        if (kind)
            cc_error_set(
                err,
                "%s: a damaged or truncated %s file (libavformat: %s); copy or download it again",
                av->path, kind, av_err2str(ret));
        else if (ret == AVERROR_INVALIDDATA && !av->url)
            cc_error_set(err,
                         "%s: not an image (" CC_IMAGE_FORMATS "), Y4M or video file that "
                         "libavformat reads (%s); give an image, a directory of images or a "
                         "video",
                         av->path, av_err2str(ret));
        else
            fail(av, ret, av->url ? "cannot open the stream" : "cannot open", err);
        av->status = classify(av, ret);
        return av->status;
    }
    return open_decoder(av, err);
}

enum cc_av_status cc_av_open(const char *path, const struct cc_av_options *opt, struct cc_av **out,
                             struct cc_error *err)
{
    *out = NULL;
    struct cc_av *av = av_create(path, err);
    if (!av)
        return CC_AV_UNUSABLE;
    av->url = opt->url;
    av->timeout_us = (int64_t)opt->timeout_ms * 1000;
    av->cancel = opt->cancel;
    av->cancel_ctx = opt->cancel_ctx;
    enum cc_av_status s;
    if (av->url && !cc_av_is_url(path)) {
        cc_error_set(err, "%s: not a URL camclass opens (rtsp, rtsps, http, https, udp, rtp, tcp)",
                     path);
        s = CC_AV_UNUSABLE;
    } else if (av->url) {
        s = open_input(av, path, NET_PROTOCOLS, err);
    } else {
        // "file:" so that a name with a colon ("a:b.mp4") is not taken for a protocol.
        size_t n = strlen(path) + 6;
        char *name = malloc(n);
        if (!name) {
            cc_error_set(err, "%s: out of memory opening a video", path);
            s = CC_AV_UNUSABLE;
        } else {
            snprintf(name, n, "file:%s", path);
            s = open_input(av, name, "file", err);
            free(name);
        }
    }
    if (s != CC_AV_OK) {
        cc_av_close(av);
        return s;
    }
    av->last_frame_us = av_gettime_relative();
    *out = av;
    return CC_AV_OK;
}

enum cc_av_status cc_av_open_buffer(const uint8_t *data, size_t size, const char *name,
                                    struct cc_av **out, struct cc_error *err)
{
    *out = NULL;
    struct cc_av *av = av_create(name, err);
    if (!av)
        return CC_AV_UNUSABLE;
    av->buf = data;
    av->buf_size = size;
    uint8_t *iobuf = av_malloc(IO_BUFFER);
    if (iobuf)
        av->custom_io = avio_alloc_context(iobuf, IO_BUFFER, 0, av, buffer_read, NULL, buffer_seek);
    if (!av->custom_io) {
        av_free(iobuf);
        cc_error_set(err, "%s: out of memory opening a video", name);
        cc_av_close(av);
        return CC_AV_UNUSABLE;
    }
    av->fmt->pb = av->custom_io;
    av->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    enum cc_av_status s = open_input(av, name, "none", err);
    if (s != CC_AV_OK) {
        cc_av_close(av);
        return s;
    }
    *out = av;
    return CC_AV_OK;
}

void cc_av_close(struct cc_av *av)
{
    if (!av)
        return;
    sws_freeContext(av->sws);
    av_frame_free(&av->frame);
    av_packet_free(&av->pkt);
    avcodec_free_context(&av->dec);
    avformat_close_input(&av->fmt); // accepts NULL; leaves a custom pb alone
    if (av->custom_io) {
        av_freep(&av->custom_io->buffer);
        avio_context_free(&av->custom_io);
    }
    free(av->path);
    free(av);
}

void cc_av_set_cancel(struct cc_av *av, bool (*cancel)(void *ctx), void *ctx)
{
    av->cancel = cancel;
    av->cancel_ctx = ctx;
}

double cc_av_fps(const struct cc_av *av)
{
    const AVStream *st = av->fmt->streams[av->stream];
    AVRational r = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 ? st->avg_frame_rate
                                                                            : st->r_frame_rate;
    double fps = r.num > 0 && r.den > 0 ? av_q2d(r) : 0;
    return fps > 0 && fps <= 1e6 ? fps : 0;
}

const char *cc_av_describe(const struct cc_av *av)
{
    return av->desc;
}

bool cc_av_seekable(const struct cc_av *av)
{
    return !av->url && av->fmt->pb && (av->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL);
}

enum cc_av_status cc_av_last_status(const struct cc_av *av)
{
    return av->status;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static bool grow(struct cc_av *av, struct cc_frame *frame, size_t bytes, struct cc_error *err)
{
    if (frame->capacity >= bytes)
        return true;
    uint8_t *p = realloc(frame->data, bytes);
    if (!p)
        return cc_error_set(err, "%s: out of memory for a frame of %zu bytes", av->path, bytes);
    frame->data = p;
    frame->capacity = bytes;
    return true;
}

/* 8-bit 4:2:0 planar (or NV12) limited range → NV12 as the Y4M reader lays it out: stride
 * rounded up to even, chroma rows (h+1)/2. */
static bool to_nv12(struct cc_av *av, const AVFrame *f, struct cc_frame *frame,
                    struct cc_error *err)
{
    int w = f->width, h = f->height, cw = (w + 1) / 2, chh = (h + 1) / 2, stride = cw * 2;
    size_t bytes = (size_t)stride * (size_t)(h + chh);
    if (!grow(av, frame, bytes, err))
        return false;
    uint8_t *y = frame->data, *uv = frame->data + (size_t)stride * (size_t)h;
    for (int r = 0; r < h; r++) {
        memcpy(y + (size_t)r * stride, f->data[0] + (size_t)r * f->linesize[0], (size_t)w);
        if (stride > w)
            y[(size_t)r * stride + w] = y[(size_t)r * stride + w - 1];
    }
    for (int r = 0; r < chh; r++) {
        uint8_t *d = uv + (size_t)r * stride;
        if (f->format == AV_PIX_FMT_NV12) {
            memcpy(d, f->data[1] + (size_t)r * f->linesize[1], (size_t)stride);
            continue;
        }
        const uint8_t *u = f->data[1] + (size_t)r * f->linesize[1];
        const uint8_t *v = f->data[2] + (size_t)r * f->linesize[2];
        for (int x = 0; x < cw; x++) {
            d[2 * x] = u[x];
            d[2 * x + 1] = v[x];
        }
    }
    frame->format = CC_PIX_NV12;
    frame->stride = stride;
    frame->size = bytes;
    return true;
}

static bool to_grey(struct cc_av *av, const AVFrame *f, struct cc_frame *frame,
                    struct cc_error *err)
{
    size_t bytes = (size_t)f->width * (size_t)f->height;
    if (!grow(av, frame, bytes, err))
        return false;
    for (int r = 0; r < f->height; r++)
        memcpy(frame->data + (size_t)r * f->width, f->data[0] + (size_t)r * f->linesize[0],
               (size_t)f->width);
    frame->format = CC_PIX_GREY;
    frame->stride = f->width;
    frame->size = bytes;
    return true;
}

/* Any other format → RGB24 through libswscale, BT.601 with the source's range. */
static bool to_rgb(struct cc_av *av, const AVFrame *f, struct cc_frame *frame, struct cc_error *err)
{
    int w = f->width, h = f->height;
    enum AVPixelFormat fmt = f->format;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (!d)
        return cc_error_set(err, "%s: frame %llu: unknown pixel format %d", av->path,
                            (unsigned long long)av->index, f->format);
    // The "J" formats are full-range YUV by definition (MJPEG decodes to them).
    bool full = f->color_range == AVCOL_RANGE_JPEG || fmt == AV_PIX_FMT_YUVJ420P ||
                fmt == AV_PIX_FMT_YUVJ422P || fmt == AV_PIX_FMT_YUVJ444P ||
                fmt == AV_PIX_FMT_YUVJ440P || fmt == AV_PIX_FMT_YUVJ411P;
    av->sws = sws_getCachedContext(av->sws, w, h, fmt, w, h, AV_PIX_FMT_RGB24,
                                   SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL,
                                   NULL);
    if (!av->sws)
        return cc_error_set(err, "%s: frame %llu: libswscale cannot convert %s to rgb24", av->path,
                            (unsigned long long)av->index, d->name);
    if (!(d->flags & AV_PIX_FMT_FLAG_RGB)) {
        const int *bt601 = sws_getCoefficients(SWS_CS_ITU601);
        sws_setColorspaceDetails(av->sws, bt601, full, bt601, 1, 0, 1 << 16, 1 << 16);
    }
    size_t bytes = (size_t)w * 3 * (size_t)h;
    if (!grow(av, frame, bytes, err))
        return false;
    uint8_t *dst[4] = {frame->data, NULL, NULL, NULL};
    int dst_stride[4] = {w * 3, 0, 0, 0};
    int ret =
        sws_scale(av->sws, (const uint8_t *const *)f->data, f->linesize, 0, h, dst, dst_stride);
    if (ret != h)
        return cc_error_set(err, "%s: frame %llu: libswscale converting %s: %s", av->path,
                            (unsigned long long)av->index, d->name,
                            ret < 0 ? av_err2str(ret) : "short output");
    frame->format = CC_PIX_RGB24;
    frame->stride = w * 3;
    frame->size = bytes;
    return true;
}

/* The decoded av->frame into frame. */
static int deliver(struct cc_av *av, struct cc_frame *frame, struct cc_error *err)
{
    const AVFrame *f = av->frame;
    if (!size_ok(f->width, f->height)) {
        av->status = CC_AV_BAD_FRAME;
        cc_error_set(err, "%s: frame %llu is %dx%d pixels; camclass takes at most %dx%d and %d M",
                     av->path, (unsigned long long)av->index, f->width, f->height,
                     CC_IMAGE_MAX_SIDE, CC_IMAGE_MAX_SIDE, CC_IMAGE_MAX_PIXELS / 1000000);
        return -1;
    }
    bool limited = f->color_range != AVCOL_RANGE_JPEG;
    bool ok;
    if ((f->format == AV_PIX_FMT_YUV420P || f->format == AV_PIX_FMT_NV12) && limited)
        ok = to_nv12(av, f, frame, err);
    else if (f->format == AV_PIX_FMT_GRAY8)
        ok = to_grey(av, f, frame, err);
    else
        ok = to_rgb(av, f, frame, err);
    if (!ok) {
        av->status = CC_AV_BAD_FRAME;
        return -1;
    }
    frame->width = f->width;
    frame->height = f->height;
    av->index++;
    return 1;
}

/* At the end of a file: whether it ended well short of what its header promised, as a
 * truncated download or copy does; err says so. The promise is the video stream's duration;
 * else the file's, only when the video is its one stream (the file's covers every stream, and
 * audio may run longer); else the stream's frame count. Short means by 10 % and 2 frames. The
 * count comes last: it also holds packets an edit list never shows (an MP4 cut with -ss and
 * -c copy) and an AVI's empty "dropped frame" chunks. Streams have no promise. */
static bool truncated(struct cc_av *av, struct cc_error *err)
{
    if (av->url)
        return false;
    const AVStream *st = av->fmt->streams[av->stream];
    double fps = cc_av_fps(av), tb = av_q2d(st->time_base);
    double want = st->duration > 0 ? (double)st->duration * tb
                  : av->fmt->nb_streams == 1 && av->fmt->duration > 0
                      ? (double)av->fmt->duration / AV_TIME_BASE
                      : 0;
    if (want > 0) {
        if (fps <= 0 || av->last_pts == AV_NOPTS_VALUE)
            return false;
        double start = st->start_time != AV_NOPTS_VALUE ? (double)st->start_time * tb : 0;
        double got = (double)av->last_pts * tb - start + 1 / fps; // the last frame's end
        if (got >= want * 0.9 || want - got < 2 / fps)
            return false;
        av->status = CC_AV_UNUSABLE;
        cc_error_set(err, "%s: ended at %.2f s of the %.2f s its header announces (truncated?)",
                     av->path, got, want);
        return true;
    }
    uint64_t n = st->nb_frames > 0 ? (uint64_t)st->nb_frames : 0;
    if (!n || (double)av->index >= (double)n * 0.9 || n - av->index < 2)
        return false;
    av->status = CC_AV_UNUSABLE;
    cc_error_set(err, "%s: ended after %llu of the %llu frames its header announces (truncated?)",
                 av->path, (unsigned long long)av->index, (unsigned long long)n);
    return true;
}

/* A live stream whose packets keep coming while no frame comes out of them (the decoder
 * refuses every one, or none is of the video stream) would hold cc_av_read for ever, since
 * each packet re-arms the timeout: after NO_FRAME_TIMEOUTS x the timeout without a frame, it
 * is an outage like silence (err says so). Long enough for a camera's key frame interval. */
enum { NO_FRAME_TIMEOUTS = 3 };

static bool no_frame(struct cc_av *av, struct cc_error *err)
{
    int64_t waited = av_gettime_relative() - av->last_frame_us;
    if (!av->url || !av->timeout_us || waited < NO_FRAME_TIMEOUTS * av->timeout_us)
        return false;
    av->status = CC_AV_UNREACHABLE;
    if (av->refused)
        cc_error_set(err, "%s: no frame for %lld s: the %s decoder refused %llu packets (%s)",
                     av->path, (long long)(waited / 1000000), av->dec->codec->name,
                     (unsigned long long)av->refused, av_err2str(av->last_refusal));
    else
        cc_error_set(err, "%s: no frame for %lld s: packets come, but none decodes to a picture",
                     av->path, (long long)(waited / 1000000));
    return true;
}

/* The decoder refused a packet or frame (ret): when FFmpeg refused the picture's size for the
 * pixel limit (a stream whose frames grew past it; its header's size was checked at open), the
 * limit is named, not the decoder's "Invalid data found". Returns -1. */
static int decoder_failed(struct cc_av *av, int ret, const char *hint, struct cc_error *err)
{
    av->status = CC_AV_UNUSABLE;
    unsigned w, h;
    if (cc_av_log_take_refused_size(&w, &h))
        cc_error_set(err,
                     "%s: frame %llu grows to %ux%u pixels, more than camclass decodes (%d M "
                     "pixels, %d on a side); scale the video down first",
                     av->path, (unsigned long long)av->index, w, h, CC_IMAGE_MAX_PIXELS / 1000000,
                     CC_IMAGE_MAX_SIDE);
    else
        cc_error_set(err, "%s: frame %llu: %s decoder: %s%s", av->path,
                     (unsigned long long)av->index, av->dec->codec->name, av_err2str(ret), hint);
    return -1;
}

int cc_av_read(struct cc_av *av, struct cc_frame *frame, bool skip_bad_packets,
               struct cc_error *err)
{
    av->status = CC_AV_OK;
    for (;;) {
        int ret = avcodec_receive_frame(av->dec, av->frame);
        if (ret == 0) {
            av->last_pts = av->frame->best_effort_timestamp;
            av->last_frame_us = av_gettime_relative();
            av->refused = 0;
            int r = deliver(av, frame, err);
            av_frame_unref(av->frame);
            return r;
        }
        if (ret == AVERROR_EOF)
            return truncated(av, err) ? -1 : 0;
        if (ret != AVERROR(EAGAIN) && !skip_bad_packets)
            return decoder_failed(av, ret, "", err);
        if (ret != AVERROR(EAGAIN))
            av->refused++, av->last_refusal = ret;
        if (no_frame(av, err))
            return -1;
        if (av->draining)
            return 0;
        arm(av);
        ret = av_read_frame(av->fmt, av->pkt);
        if (ret == AVERROR_EOF && !av->cancelled && !av->timed_out) {
            // The end: let the decoder give out the frames it still holds.
            av->draining = true;
            avcodec_send_packet(av->dec, NULL);
            continue;
        }
        if (ret < 0) {
            fail(av, ret, av->index ? "reading" : "reading the first frame", err);
            return -1;
        }
        if (av->pkt->stream_index != av->stream) {
            av_packet_unref(av->pkt);
            continue;
        }
        ret = avcodec_send_packet(av->dec, av->pkt);
        av_packet_unref(av->pkt);
        if (ret < 0 && ret != AVERROR(EAGAIN) && skip_bad_packets)
            av->refused++, av->last_refusal = ret;
        if (ret < 0 && ret != AVERROR(EAGAIN) && !skip_bad_packets)
            return decoder_failed(av, ret, " (a damaged file?)", err);
    }
}

bool cc_av_rewind(struct cc_av *av, struct cc_error *err)
{
    const AVStream *st = av->fmt->streams[av->stream];
    int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    arm(av);
    int ret = av_seek_frame(av->fmt, av->stream, start, AVSEEK_FLAG_BACKWARD);
    if (ret < 0) // formats without an index (MPEG-TS, raw H.264): the first byte
        ret = av_seek_frame(av->fmt, -1, 0, AVSEEK_FLAG_BYTE);
    if (ret < 0) {
        fail(av, ret, "going back to the start for --loop", err);
        return false;
    }
    avcodec_flush_buffers(av->dec);
    av->draining = false;
    av->index = 0;
    av->last_pts = AV_NOPTS_VALUE;
    av->last_frame_us = av_gettime_relative();
    return true;
}
