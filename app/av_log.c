/* camclass — FFmpeg's log level, set once (see av_log.h). */
#include <pthread.h>

#include <libavutil/log.h>

#include "av_log.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void set_quiet(void)
{
    av_log_set_level(AV_LOG_QUIET);
}

void cc_av_log_quiet(void)
{
    pthread_once(&once, set_quiet);
}
