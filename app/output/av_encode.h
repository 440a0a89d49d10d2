/* camclass — the encoder settings the annotated video's writers share: --output's recording
 * (recorder.c) and the event clips' ring (clip.c). Inside the FFmpeg boundary: only those two
 * include this header, so no FFmpeg type reaches the rest of camclass.
 */
#ifndef CC_AV_ENCODE_H
#define CC_AV_ENCODE_H

#include <stdbool.h>

#include <libavcodec/avcodec.h>

#include "error.h"

/* The encoder: the one named, else libx264, else libavcodec's MPEG-4 part 2. NULL with err. */
const AVCodec *cc_av_encode_find(const char *name, struct cc_error *err);

/* c's settings for width × height pictures of YUV 4:2:0 with millisecond timestamps at about
 * frame_rate (0: 30), a key frame every gop_s seconds, no B-frames; its private options (x264's
 * preset and quality) in opts. global_header: the container wants the headers apart (MP4). */
void cc_av_encode_configure(AVCodecContext *c, const AVCodec *codec, int width, int height,
                            double frame_rate, double gop_s, bool global_header,
                            AVDictionary **opts);

/* The pictures' timestamps in ms from the first: a file's frame index at its rate, or the
 * capture times; always increasing. */
struct cc_av_clock {
    double frame_rate; // > 0: from the frame index (seq); 0: from capture times
    bool started;
    int64_t first_ns; // capture time of the first picture
    uint64_t first_seq;
    int64_t last_pts; // ms; -1 before the first
    int64_t frame_ms; // the newest picture's expected duration (packets carry it: an MP4
                      // player drops a last picture that has none)
};

void cc_av_clock_init(struct cc_av_clock *k, double frame_rate);

/* The timestamp of the picture of frame seq captured at capture_ns. */
int64_t cc_av_clock_pts(struct cc_av_clock *k, uint64_t seq, int64_t capture_ns);

#endif
