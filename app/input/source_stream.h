/* camclass — a live network stream (rtsp://, http(s)://, udp://, rtp://, tcp://; av_source.h)
 * fed into the latest-frame-wins slot as a camera is (capture.h): a thread decodes frames as
 * they arrive and puts each one, so that a slow consumer gets the newest and the frames it
 * missed are counted as drops by the slot (cc_result.dropped, the summary's "dropped").
 *
 * Outages: when the stream ends (the server closed it), fails, or sends nothing for the
 * timeout, the thread writes one line to log ("URL: stream lost (why); reconnecting") and
 * reconnects with exponential back-off (0.25 s doubling to 8 s, for as long as it takes); when
 * it is back, one more line says after how long. Retries are not reported one by one. A
 * packet the decoder refuses (a lost UDP datagram) is skipped silently, as a camera's
 * corrupt buffer is; but 3 x the timeout with packets and no frame is an outage too ("no
 * frame for 15 s: the mjpeg decoder refused N packets (why)"). Frame sequence numbers keep counting across reconnects. A frame decoded
 * that camclass cannot take (over the pixel limit, a format libswscale cannot convert) is no
 * outage: a reconnect would bring the same, so the thread closes the slot with that error
 * (the run ends with its line, exit 1).
 *
 * Stopping: stop closes the slot; every wait in libavformat polls that (its interrupt
 * callback) and the back-off sleeps in slices, so the thread ends within about 0.1 s also
 * while connecting or waiting for data, except inside a host name's lookup: FFmpeg 5.1 calls
 * getaddrinfo without polling, so a name whose DNS server does not answer holds stop for the
 * resolver's timeout (seconds; an address given as numbers never does).
 *
 * Threads and ownership: open/start/stop/destroy are called by one controlling thread; between
 * start and stop the stream thread owns the connection. The slot is not owned and must outlive
 * the thread.
 */
#ifndef CC_SOURCE_STREAM_H
#define CC_SOURCE_STREAM_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "frame_slot.h"

struct cc_source_stream;

/* Connects to url (one try, at most timeout_ms; 0: 5000) to check that it is a video stream
 * this build decodes. NULL with err naming the URL on failure; *unreachable then tells a
 * network failure (refused, timed out: the server may come later) from an unusable answer
 * (not video, no decoder, HTTP 404, unknown scheme). cancel (may be NULL), polled while it
 * waits, ends the try when it returns true (a stop signal): NULL, *unreachable true and err
 * "URL: ...: stopped". log: where the thread reports outages (NULL: nowhere). */
struct cc_source_stream *cc_source_stream_open(const char *url, int timeout_ms, FILE *log,
                                               bool (*cancel)(void *ctx), void *cancel_ctx,
                                               bool *unreachable, struct cc_error *err);

/* Stops the thread if it runs, then frees. Accepts NULL. */
void cc_source_stream_destroy(struct cc_source_stream *s);

/* The stream's frame rate as the first connection found it (0: unknown). */
double cc_source_stream_fps(const struct cc_source_stream *s);

/* One line about the stream: "h264 640x480 25 fps (mpegts)". */
const char *cc_source_stream_describe(const struct cc_source_stream *s);

/* Starts the thread (see above). */
bool cc_source_stream_start(struct cc_source_stream *s, struct cc_frame_slot *slot,
                            struct cc_error *err);

/* Closes the slot and joins the thread. Safe when it does not run. */
void cc_source_stream_stop(struct cc_source_stream *s);

#endif
