/* camclass — compressed video through FFmpeg's libraries: files (mp4, mkv, webm, avi, … with
 * whatever codecs the installed libavcodec decodes) and network streams (rtsp://, http(s)://,
 * udp://, rtp://, tcp://). The one module that owns the FFmpeg boundary: libavformat demuxes,
 * libavcodec decodes, libswscale converts; no FFmpeg type appears in this header.
 *
 * Decoded frames are delivered in a format preprocessing reads (frame.h): 8-bit 4:2:0 limited
 * range (YUV420P, NV12) as NV12, the chroma planes interleaved in one pass; GRAY8 as GREY;
 * everything else (full-range "J" formats from MJPEG, 4:2:2, 4:4:4, 10-bit, RGB, palettes)
 * through libswscale to RGB24 (BT.601, the source's range), as the Y4M reader does for 4:4:4.
 * Frames larger than decode.h's CC_IMAGE_MAX_SIDE / CC_IMAGE_MAX_PIXELS are refused.
 *
 * What libavformat may open is limited to what the user meant: a file path opens through the
 * "file" protocol only (a playlist inside a local file cannot make it fetch URLs), a URL
 * through the network protocols only (it cannot read local files), an in-memory buffer
 * through none.
 *
 * Blocking: every libavformat call is bounded by timeout_ms (through its interrupt callback,
 * which works for every protocol, also UDP where no "timeout" option does) and ends early when
 * the caller's cancel callback returns true (a stream thread being stopped); the one wait it
 * cannot cut is a host name's lookup (getaddrinfo, not polled by FFmpeg 5.1's tcp/udp open).
 *
 * Library state: FFmpeg's log is set to AV_LOG_QUIET once, by the first open (through av_log.h,
 * its one owner): its per-packet warnings would flood stderr; every failure is reported
 * through cc_error with av_err2str's words instead. Nothing else global is touched.
 *
 * Ownership: the caller owns a cc_av and uses it from one thread at a time.
 */
#ifndef CC_AV_SOURCE_H
#define CC_AV_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"

struct cc_av;

struct cc_av_options {
    bool url;       // path is a network URL (cc_av_is_url), else a local file
    int timeout_ms; // longest wait for one open or read; 0: none (files)
    // Polled (about every 100 ms) while a call waits; true aborts the call. May be NULL.
    bool (*cancel)(void *ctx);
    void *cancel_ctx;
};

enum cc_av_status {
    CC_AV_OK,
    CC_AV_UNUSABLE,    // not a video this build can read (bad data, no video stream, no
                       // decoder, too large, unknown scheme): retrying cannot help
    CC_AV_UNREACHABLE, // a network failure (refused, timed out, reset, no route): may pass
    CC_AV_CANCELLED,   // the cancel callback ended the call
    CC_AV_BAD_FRAME,   // cc_av_read: a frame decoded that camclass cannot take (over the pixel
                       // limit, a format libswscale cannot convert, no memory for it): a
                       // stream sends the same again after a reconnect
};

/* True when s starts with a scheme this module opens (rtsp, rtsps, http, https, udp, rtp,
 * tcp, followed by "://"). */
bool cc_av_is_url(const char *s);

/* Opens path (a file, or a URL when opt->url), finds its best video stream and opens its
 * decoder. *out is NULL unless CC_AV_OK; err names path and the problem otherwise. */
enum cc_av_status cc_av_open(const char *path, const struct cc_av_options *opt, struct cc_av **out,
                             struct cc_error *err);

/* The same over an in-memory file (data must outlive the cc_av); name is for messages.
 * Seekable. Used by the fuzz target. */
enum cc_av_status cc_av_open_buffer(const uint8_t *data, size_t size, const char *name,
                                    struct cc_av **out, struct cc_error *err);

void cc_av_close(struct cc_av *av); // accepts NULL

/* Replaces the cancel callback given at open (a connection handed to a thread). */
void cc_av_set_cancel(struct cc_av *av, bool (*cancel)(void *ctx), void *ctx);

/* The stream's frame rate (average, else the container's guess), 0 when unknown. */
double cc_av_fps(const struct cc_av *av);

/* One line about the stream for notices: "h264 640x480 25 fps (mov,mp4,m4a,3gp,3g2,mj2)". */
const char *cc_av_describe(const struct cc_av *av);

/* Reads and decodes the next frame into frame (format, width, height, stride, size set;
 * frame->data grown with realloc when frame->capacity is short: the caller owns it). Returns
 * 1 for a frame, 0 at the end of the stream, -1 on an error (err names the path, the frame
 * number and av_err2str's words). With skip_bad_packets (live streams, where a lost UDP
 * packet is ordinary) a packet the decoder refuses is skipped; otherwise it is an error. */
int cc_av_read(struct cc_av *av, struct cc_frame *frame, bool skip_bad_packets,
               struct cc_error *err);

/* The kind of the last failure of cc_av_read (CC_AV_OK after a frame or the end). */
enum cc_av_status cc_av_last_status(const struct cc_av *av);

/* Whether the input can go back to its first frame (a seekable file). */
bool cc_av_seekable(const struct cc_av *av);

/* Goes back to the first frame (for --loop). */
bool cc_av_rewind(struct cc_av *av, struct cc_error *err);

#endif
