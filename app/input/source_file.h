/* camclass — file sources: images (PNG, JPEG, WebP, BMP, GIF, TIFF), directories of them, Y4M video,
 * compressed video files; and live network streams.
 *
 * A source is opened on a path:
 *   - an image file (recognised by content, not by name; decode.h): one frame, GREY or RGB24;
 *   - a directory: its *.png, *.jpg, *.jpeg, *.webp, *.bmp files (any case), in byte order of
 *     the names, one frame each; subdirectories and other files are ignored; a file that does
 *     not decode is skipped with one warning line on stderr and counted
 *     (cc_source_file_skipped); none decoding is an error;
 *   - a .y4m file (recognised by content): its frames, as NV12 (4:2:0), RGB24 (4:4:4) or GREY
 *     (mono); see y4m.h. Y4M may also come through a pipe or FIFO (`--input /dev/stdin`): the
 *     path is opened once and the bytes read to recognise it are handed to the Y4M reader.
 *     Images are read from regular files only.
 *   - any other regular file is handed to libavformat (av_source.h): a video file (mp4, mkv,
 *     webm, avi, ...; its best video stream, whatever codec the installed libavcodec decodes),
 *     played like a Y4M; a file without a video stream or that is no video is refused at open.
 *   - a URL (cc_source_is_url: rtsp://, http(s)://, udp://, rtp://, tcp://), opened with
 *     cc_source_file_open_url: a live stream with its own thread, which feeds the slot like a
 *     camera (latest frame wins, drops counted, reconnects; source_stream.h). It is read only
 *     through start/stop: read is an error, and start's fps does not apply.
 * With loop set, the source starts again at the first frame after the last, forever (not for a
 * pipe, which cannot go back: refused at open).
 *
 * Frames are read either by pulling (cc_source_file_read) or by a producer thread that hands
 * them to the inference side through the latest-frame-wins slot (frame_slot.h) at a chosen
 * rate (cc_source_file_start). A corrupt or truncated file ends the stream with one error line
 * naming the file.
 *
 * Ownership and threads: the caller owns the source. While the producer thread runs (between
 * start and stop/destroy) the thread owns the source's state: the caller must not call read.
 */
#ifndef CC_SOURCE_FILE_H
#define CC_SOURCE_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "frame.h"
#include "frame_slot.h"

struct cc_source_file;

/* Opens path (see above) and reads its first frame, which the first read returns. Fails, with
 * err naming the path, when it does not exist, is not a PNG/JPEG/Y4M file, has an unusable
 * Y4M header, is a directory without images, is a pipe with an image or with loop set, or its
 * first frame cannot be read (truncated, corrupt, too large): an unusable input. Later frames
 * are read when asked for, so a corrupt later file or frame is reported by read (or the
 * thread). Opening a FIFO waits for a writer. */
struct cc_source_file *cc_source_file_open(const char *path, bool loop, struct cc_error *err);

/* Stops the producer thread if it runs (see stop), then frees everything. Accepts NULL. */
void cc_source_file_destroy(struct cc_source_file *src);

/* True when path is a URL of a network stream (see above). */
bool cc_source_is_url(const char *path);

/* Connects to a network stream (at most 5 s) and checks it is a video this build decodes.
 * NULL with err naming the URL on failure; *unreachable then tells a network failure (the
 * server may come later: a camera that does not open) from an unusable one (not video, no
 * decoder, HTTP 404). cancel(cancel_ctx), when not NULL, is polled while connecting: true
 * stops the try (a stop signal; cc_source_stream_open). log: where the stream thread reports
 * outages (see source_stream.h). */
struct cc_source_file *cc_source_file_open_url(const char *url, FILE *log,
                                               bool (*cancel)(void *ctx), void *cancel_ctx,
                                               bool *unreachable, struct cc_error *err);

/* A video file's or a stream's codec, size, rate and container for a notice line
 * ("h264 640x480 25 fps (mpegts)"); NULL for images and Y4M. */
const char *cc_source_file_describe(const struct cc_source_file *src);

/* The video's frame rate (Y4M header, the container's for other files and streams), or 0
 * (images, or unknown). */
double cc_source_file_native_fps(const struct cc_source_file *src);

/* The name of the image file frame `sequence` (cc_frame.sequence) came from: for a directory,
 * the file's name in it ("0001.png"); for a single image, its name without the folders. NULL
 * for a video. The names are fixed at open, so any thread may ask while the producer runs;
 * the string lives as long as the source. */
const char *cc_source_file_frame_name(const struct cc_source_file *src, uint64_t sequence);

/* Image files in one pass of the input (1 for a single image); 0 for a video. */
int cc_source_file_count(const struct cc_source_file *src);

/* A directory's files skipped because they did not decode (each once, in the first pass).
 * Read it after the producer thread has stopped (cc_source_file_stop). */
int cc_source_file_skipped(const struct cc_source_file *src);

/* Reads the next frame into frame (format, size, stride, size, sequence, timestamp_ns set;
 * frame->data grown with realloc when frame->capacity is short — the caller owns and frees
 * frame->data). Returns 1 for a frame, 0 at the end (never with loop), -1 on error. */
int cc_source_file_read(struct cc_source_file *src, struct cc_frame *frame, struct cc_error *err);

/* Starts the producer thread: it reads frames and puts them into slot, fps frames a second
 * (fps > 0), or, with fps == 0, each as soon as the consumer has taken the previous one (no
 * frame is dropped). At the end of the stream it closes the slot (take then reports
 * CC_SLOT_CLOSED with an empty message); on an error it closes the slot with the error line.
 * It stops when the slot is closed by anyone. The slot must outlive the thread. */
bool cc_source_file_start(struct cc_source_file *src, struct cc_frame_slot *slot, double fps,
                          struct cc_error *err);

/* Closes the slot (ending the thread's loop; a no-op when already closed) and joins the
 * thread. Safe to call when no thread runs. */
void cc_source_file_stop(struct cc_source_file *src);

#endif
