/* camclass — FFmpeg's log, set once (see av_log.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libavutil/log.h>

#include "av_log.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

// The last size the pixel limit refused on this thread (0 x 0: none since the last take).
static _Thread_local unsigned refused_w, refused_h;

/* Any thread, FFmpeg's every log line: none is printed (AV_LOG_QUIET's effect, as the default
 * callback would filter them); one is kept: libavutil's "Picture size WxH exceeds specified
 * max pixel count N" (av_image_check_size2), the only place that says which size a decoder
 * refused under AVCodecContext.max_pixels (the decoder itself returns AVERROR_INVALIDDATA or
 * EINVAL). */
__attribute__((format(printf, 3, 0))) static void on_log(void *avcl, int level, const char *fmt,
                                                         va_list vl)
{
    (void)avcl;
    if (level > AV_LOG_ERROR || !strstr(fmt, "exceeds specified max pixel count"))
        return;
    char line[256];
    vsnprintf(line, sizeof(line), fmt, vl);
    unsigned w, h;
    if (sscanf(line, "Picture size %ux%u", &w, &h) == 2)
        refused_w = w, refused_h = h;
}

static void set_quiet(void)
{
    av_log_set_level(AV_LOG_QUIET);
    av_log_set_callback(on_log);
}

void cc_av_log_quiet(void)
{
    pthread_once(&once, set_quiet);
}

bool cc_av_log_take_refused_size(unsigned *w, unsigned *h)
{
    bool any = refused_w || refused_h;
    *w = refused_w, *h = refused_h;
    refused_w = refused_h = 0;
    return any;
}
