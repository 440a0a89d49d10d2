/* camclass — the annotated video's encoder settings (see av_encode.h). */
#include "av_encode.h"

#include <libavutil/opt.h>

void cc_av_clock_init(struct cc_av_clock *k, double frame_rate)
{
    *k = (struct cc_av_clock){.frame_rate = frame_rate, .last_pts = -1};
}

int64_t cc_av_clock_pts(struct cc_av_clock *k, uint64_t seq, int64_t capture_ns)
{
    if (!k->started) {
        k->started = true;
        k->first_ns = capture_ns;
        k->first_seq = seq;
    }
    int64_t pts;
    if (k->frame_rate > 0)
        pts = (int64_t)((double)(seq - k->first_seq) * 1000.0 / k->frame_rate + 0.5);
    else
        pts = (capture_ns - k->first_ns) / 1000000;
    if (pts <= k->last_pts)
        pts = k->last_pts + 1;
    if (k->frame_rate > 0)
        k->frame_ms = (int64_t)(1000.0 / k->frame_rate + 0.5);
    else
        k->frame_ms = k->last_pts >= 0 ? pts - k->last_pts : 33; // as the step before
    if (k->frame_ms < 1)
        k->frame_ms = 1;
    k->last_pts = pts;
    return pts;
}

const AVCodec *cc_av_encode_find(const char *name, struct cc_error *err)
{
    const AVCodec *c = NULL;
    if (name) {
        c = avcodec_find_encoder_by_name(name);
        if (!c)
            cc_error_set(err, "the installed libavcodec has no encoder \"%s\"", name);
        return c;
    }
    c = avcodec_find_encoder_by_name("libx264");
    if (!c)
        c = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (!c)
        cc_error_set(err, "the installed libavcodec has neither libx264 nor an MPEG-4 encoder "
                          "(install libavcodec59 from Debian)");
    return c;
}

void cc_av_encode_configure(AVCodecContext *c, const AVCodec *codec, int width, int height,
                            double frame_rate, double gop_s, bool global_header,
                            AVDictionary **opts)
{
    c->width = width;
    c->height = height;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    c->time_base = (AVRational){1, 1000}; // ms: capture times need no fixed rate
    int fps = frame_rate > 0 ? (int)(frame_rate + 0.5) : 30;
    if (fps < 1)
        fps = 1;
    c->framerate = (AVRational){fps, 1}; // a hint for rate control only
    int gop = (int)(gop_s * fps);        // a key frame every gop_s: seekable (a clip's start)
    c->gop_size = gop > 0 ? gop : 1;
    // No B-frames: a picture is written as soon as it is encoded, and its decoding time is its
    // presentation time (no negative DTS shifted away by an MP4 edit list).
    c->max_b_frames = 0;
    c->color_range = AVCOL_RANGE_MPEG;   // what swscale writes (RGB24 -> YUV420P)
    c->colorspace = AVCOL_SPC_SMPTE170M; // BT.601, as swscale's default matrix
    if (global_header)
        c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (codec->id == AV_CODEC_ID_H264) {
        // veryfast: about 4x cheaper than the default preset for a few % more bytes; crf 20
        // keeps the small panel text sharp.
        av_dict_set(opts, "preset", "veryfast", 0);
        av_dict_set(opts, "crf", "20", 0);
    } else {
        c->flags |= AV_CODEC_FLAG_QSCALE; // constant quality: qscale 3 of 1 (best) .. 31
        c->global_quality = FF_QP2LAMBDA * 3;
    }
}
