/* camclass — FFmpeg's one piece of process-wide state we set: its log level.
 *
 * libavformat, libavcodec and the encoders they wrap (libx264's banner, a decoder's warning about
 * a damaged packet) print to stderr through av_log unless told not to. camclass reports every
 * FFmpeg failure itself, once, as one line with av_err2str's text and what to do
 * (av_source.c, recorder.c), so FFmpeg's own lines are switched off: AV_LOG_QUIET.
 * Both FFmpeg modules call cc_av_log_quiet before their first FFmpeg call; it sets the level
 * once per process (pthread_once) and is safe from any thread.
 */
#ifndef CC_AV_LOG_H
#define CC_AV_LOG_H

void cc_av_log_quiet(void);

#endif
