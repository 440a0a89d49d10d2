/* camclass — reader for uncompressed YUV4MPEG2 (.y4m) video.
 *
 * Supported colour spaces: C420jpeg (the default when C is absent), C420, C420mpeg2,
 * C420paldv — all 8-bit planar 4:2:0, delivered as NV12 (chroma siting is ignored: chroma is
 * replicated, as for camera NV12) —, C444 (delivered as RGB24 through the BT.601 conversion of
 * convert.h) and Cmono (delivered as GREY). Other colour spaces (4:2:2, alpha, >8 bits) are
 * refused with a message saying how to convert the file.
 *
 * The numeric header fields are range-checked, each refused with a line naming it: W and H
 * 1..CC_IMAGE_MAX_SIDE with W×H at most CC_IMAGE_MAX_PIXELS (decode.h), F (rate) and A (pixel
 * aspect) N:D in whole numbers 0..2^31-1, D 0 only in "0:0" (unknown), F at most 10^6 frames/s.
 *
 * Ownership: the reader owns its FILE and buffers; cc_y4m_close frees them (accepts NULL).
 */
#ifndef CC_Y4M_H
#define CC_Y4M_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "frame.h"

struct cc_y4m;

/* Parses the stream header from f, whose first head_len bytes (part of the header line, e.g.
 * "YUV4MPEG2" read to recognise the format) the caller has already read into head; f may be a
 * pipe. Takes ownership of f (closed by cc_y4m_close, or here on failure). path names the
 * stream in messages. NULL with err (naming the file) on failure. */
struct cc_y4m *cc_y4m_open(FILE *f, const char *path, const char *head, size_t head_len,
                           struct cc_error *err);
void cc_y4m_close(struct cc_y4m *y);

/* Frame size and rate from the header (fps 0 when the header has no F tag). */
int cc_y4m_width(const struct cc_y4m *y);
int cc_y4m_height(const struct cc_y4m *y);
double cc_y4m_fps(const struct cc_y4m *y);

/* Reads the next frame into frame: format, size, stride and bytes set; frame->data grown with
 * realloc when frame->capacity is short (the caller owns frame->data). Returns 1 for a frame,
 * 0 at the end of the stream, -1 on error (truncated or corrupt frame; err names the file and
 * the frame number). */
int cc_y4m_read(struct cc_y4m *y, struct cc_frame *frame, struct cc_error *err);

/* Whether the stream can go back to its first frame (a regular file; not a pipe). */
bool cc_y4m_seekable(const struct cc_y4m *y);

/* Goes back to the first frame (for looping); an error on a pipe. */
bool cc_y4m_rewind(struct cc_y4m *y, struct cc_error *err);

#endif
