/* camclass — records the annotated video (--output FILE.mp4|.mkv): each classified frame drawn
 * as the window shows it (overlay_offscreen.h: frame, top-k bars, fps, model and backend), at a
 * fixed size and without a display, encoded and written to a file.
 *
 * The one module here that encodes with FFmpeg (libavformat muxes, libavcodec encodes,
 * libswscale converts RGB to YUV 4:2:0); no FFmpeg type leaves it. The container is the file's
 * extension: .mp4 (MP4) or .mkv (Matroska); any other is refused. The encoder is H.264 through
 * libx264 when the installed libavcodec has it, else libavcodec's own MPEG-4 part 2.
 * Timestamps (milliseconds, a variable frame rate is allowed): a file input's frame index at
 * its rate, or a camera's capture times, from the first frame recorded.
 *
 * Global state: FFmpeg's log level, set once to quiet by cc_recorder_open through av_log.h
 * (the one owner of it): libx264 would otherwise print its banner lines on stderr; errors reach
 * the user once, through cc_error, named with av_err2str.
 *
 * Threads: the recorder has its own thread, which draws, encodes and writes, so that a frame's
 * recording overlaps the next frame's inference. add hands it a copy of the frame and result
 * through a queue of 3; when the queue is full add waits (every frame given is recorded, none
 * is skipped). Open, finish and destroy on the main thread (the offscreen drawer opens its
 * fonts in open, see overlay_offscreen.h); add from one thread at a time (the inference thread,
 * between start and stop of the pipeline); failed and frames from any thread.
 * Ownership: the caller owns the recorder; add copies what it needs from the frame and result.
 */
#ifndef CC_RECORDER_H
#define CC_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"

struct cc_recorder;

struct cc_recorder_config {
    const char *path;                        // the file: .mp4 or .mkv (case ignored)
    int width, height;                       // picture size, even, 2 .. 8192
    const struct cc_overlay_config *overlay; // what the picture shows (window fields ignored)
    double frame_rate;   // > 0: frame i of a file input is at i / frame_rate s; 0: capture times
    const char *encoder; // libavcodec encoder name; NULL: libx264 when present, else mpeg4
};

/* The container for path's extension ("mp4", "matroska"), or NULL when it is neither .mp4 nor
 * .mkv. */
const char *cc_recorder_container(const char *path);

/* Opens the encoder and the file and writes the container's header. NULL with one line in err
 * naming the file: an extension other than .mp4/.mkv, a file that cannot be created (its
 * directory missing or not writable), no usable encoder, the font (overlay_draw.h). */
struct cc_recorder *cc_recorder_open(const struct cc_recorder_config *cfg, struct cc_error *err);

/* One line for the start of a run: "clip.mp4 (MP4, H.264 by libx264, 1280x720)". */
const char *cc_recorder_describe(const struct cc_recorder *rec);

/* Queues frame f with result r to be drawn and encoded as the next picture (waits while the
 * queue is full). False with one line in err when the recording has failed since the last call
 * (found by the recorder's thread: a write error, "No space left on device", or a picture SDL
 * could not draw; the line names the file and the failing call); from then on it takes no
 * more frames (each later add returns false at once, err untouched) and finish only closes the
 * file. */
bool cc_recorder_add(struct cc_recorder *rec, const struct cc_result *r, const struct cc_frame *f,
                     struct cc_error *err);

/* True after a write error (the recording is incomplete). */
bool cc_recorder_failed(struct cc_recorder *rec);

/* Pictures encoded so far. */
uint64_t cc_recorder_frames(struct cc_recorder *rec);

/* Waits for the queued frames, flushes the encoder, writes the trailer (an MP4 needs it to
 * play) and closes the file. False with err naming the file when that fails, or when the
 * recording failed earlier: err then holds the line add had no chance to hand out, else is
 * untouched (said then); the file is only closed. Idempotent. */
bool cc_recorder_finish(struct cc_recorder *rec, struct cc_error *err);

/* Closes without the trailer if finish was not called, and frees; accepts NULL. */
void cc_recorder_destroy(struct cc_recorder *rec);

#endif
