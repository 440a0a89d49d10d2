/* camclass — FFmpeg's one piece of process-wide state we set: its log (level and callback).
 *
 * libavformat, libavcodec and the encoders they wrap (libx264's banner, a decoder's warning about
 * a damaged packet) print to stderr through av_log unless told not to. camclass reports every
 * FFmpeg failure itself, once, as one line with av_err2str's text and what to do
 * (av_source.c, recorder.c), so FFmpeg's own lines are switched off: AV_LOG_QUIET, and a
 * callback of ours that prints nothing but keeps, per thread, the frame size a decoder refused
 * for its max_pixels (FFmpeg's decoders then say only "Invalid data found").
 * Both FFmpeg modules call cc_av_log_quiet before their first FFmpeg call; it sets the level
 * once per process (pthread_once) and is safe from any thread.
 */
#ifndef CC_AV_LOG_H
#define CC_AV_LOG_H

#include <stdbool.h>

void cc_av_log_quiet(void);

/* Whether FFmpeg refused a picture of *w x *h for the pixel limit (AVCodecContext.max_pixels)
 * on this thread since the last call; clears it. */
bool cc_av_log_take_refused_size(unsigned *w, unsigned *h);

#endif
