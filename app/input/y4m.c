/* camclass — YUV4MPEG2 reader (see y4m.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "decode.h"
#include "y4m.h"

#define MAX_HEADER 4096 // stream and frame header lines
#define MAX_FPS 1000000 // the most a file source plays (cc_source_file_start)

enum y4m_layout { Y4M_420, Y4M_444, Y4M_MONO };

struct cc_y4m {
    FILE *f;
    char *path; // owned copy, for messages
    int w, h;
    int fps_num, fps_den; // 0/0 when absent
    enum y4m_layout layout;
    size_t frame_bytes; // planar payload of one frame
    long data_start;    // file offset of the first FRAME header
    uint64_t index;     // frames read since open/rewind
    uint8_t *planar;    // (frame_bytes) read buffer of 4:2:0 and 4:4:4 frames, which
                        // are converted into the frame; NULL for mono (read in place)
};

/* Reads one header line (without '\n', and without a '\r' before it: files written on
 * Windows end their lines "\r\n") into buf. Returns its length, -1 at EOF before any byte, -2
 * when the line is longer than the buffer or ends without '\n'. */
static int read_line(FILE *f, char *buf, int cap)
{
    int n = 0, c;
    while ((c = getc(f)) != EOF) {
        if (c == '\n') {
            n -= n > 0 && buf[n - 1] == '\r';
            buf[n] = 0;
            return n;
        }
        if (n + 1 >= cap)
            return -2;
        buf[n++] = (char)c;
    }
    return n == 0 ? -1 : -2;
}

/* Parses a whole decimal number in min..max at *s (digits only: no sign, no space) and
 * advances *s past it. False when there is none or it is out of range (also beyond long). */
static bool parse_uint(const char **s, long min, long max, int *out)
{
    if (**s < '0' || **s > '9')
        return false;
    errno = 0;
    char *end = NULL;
    long v = strtol(*s, &end, 10);
    if (errno == ERANGE || v < min || v > max)
        return false;
    *out = (int)v;
    *s = end;
    return true;
}

/* Parses "N:D" (a rate or an aspect ratio): both 0..INT_MAX, and D 0 only in "0:0" (unknown). */
static bool parse_ratio(const char *s, int *num, int *den)
{
    return parse_uint(&s, 0, INT_MAX, num) && *s++ == ':' && parse_uint(&s, 0, INT_MAX, den) &&
           *s == 0 && (*den > 0 || *num == 0);
}

static bool parse_header(struct cc_y4m *y, char *line, struct cc_error *err)
{
    if (strncmp(line, "YUV4MPEG2", 9) != 0 || (line[9] != ' ' && line[9] != 0))
        return cc_error_set(err,
                            "%s: not a YUV4MPEG2 file (header does not start with "
                            "\"YUV4MPEG2 \")",
                            y->path);
    const char *cspace = "420jpeg";
    char *save = NULL;
    for (char *tok = strtok_r(line + 9, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        const char *p = tok + 1;
        int an, ad;
        switch (tok[0]) {
        case 'W':
        case 'H':
            if (!parse_uint(&p, 1, CC_IMAGE_MAX_SIDE, tok[0] == 'W' ? &y->w : &y->h) || *p)
                return cc_error_set(err,
                                    "%s: y4m header field \"%.40s\" is not a frame %s from 1 to "
                                    "%d; the file is damaged or too large (scale it down)",
                                    y->path, tok, tok[0] == 'W' ? "width" : "height",
                                    CC_IMAGE_MAX_SIDE);
            break;
        case 'F':
            if (!parse_ratio(p, &y->fps_num, &y->fps_den) ||
                (y->fps_den > 0 && (double)y->fps_num / y->fps_den > MAX_FPS))
                return cc_error_set(err,
                                    "%s: y4m header field \"%.40s\" is not a frame rate "
                                    "N:D (whole numbers, at most %d frames/s; F0:0 for unknown); "
                                    "the file is damaged",
                                    y->path, tok, MAX_FPS);
            break;
        case 'A': // the pixel aspect ratio: checked, not used
            if (!parse_ratio(p, &an, &ad))
                return cc_error_set(err,
                                    "%s: y4m header field \"%.40s\" is not a pixel aspect "
                                    "ratio N:D (whole numbers; A0:0 for unknown); the file is "
                                    "damaged",
                                    y->path, tok);
            break;
        case 'C':
            cspace = tok + 1;
            break;
        case 'I':
            if (tok[1] != 'p' && tok[1] != '?' && tok[1] != 0)
                return cc_error_set(err,
                                    "%s: interlaced y4m (I%s) is not supported; "
                                    "deinterlace it first",
                                    y->path, tok + 1);
            break;
        default: // X (comments/extensions) and future tags are ignored
            break;
        }
    }
    if (y->w == 0 || y->h == 0)
        return cc_error_set(err, "%s: y4m header without a frame size (W and H fields)", y->path);
    if (!cc_image_check_size(y->w, y->h, y->path, err))
        return false;
    size_t n = (size_t)y->w * y->h;
    if (!strcmp(cspace, "420jpeg") || !strcmp(cspace, "420") || !strcmp(cspace, "420mpeg2") ||
        !strcmp(cspace, "420paldv")) {
        y->layout = Y4M_420;
        y->frame_bytes = n + 2 * (size_t)((y->w + 1) / 2) * ((y->h + 1) / 2);
    } else if (!strcmp(cspace, "444")) {
        y->layout = Y4M_444;
        y->frame_bytes = 3 * n;
    } else if (!strcmp(cspace, "mono")) {
        y->layout = Y4M_MONO;
        y->frame_bytes = n;
    } else {
        return cc_error_set(err,
                            "%s: y4m colour space C%s is not supported (use 420jpeg, 420, "
                            "420mpeg2, 420paldv, 444 or mono; e.g. ffmpeg -pix_fmt yuv420p)",
                            y->path, cspace);
    }
    return true;
}

struct cc_y4m *cc_y4m_open(FILE *f, const char *path, const char *head, size_t head_len,
                           struct cc_error *err)
{
    struct cc_y4m *y = calloc(1, sizeof(*y));
    char *line = malloc(MAX_HEADER);
    if (!y || !line || !(y->path = strdup(path))) {
        cc_error_set(err, "%s: out of memory", path);
        if (y)
            y->f = f;
        else
            fclose(f);
        goto error;
    }
    y->f = f;
    // head holds no '\n' (the caller read less than the shortest header line, 16 bytes)
    if (head_len >= MAX_HEADER / 2 || memchr(head, '\n', head_len)) {
        cc_error_set(err, "%s: internal error: %zu bytes of the y4m header read ahead", path,
                     head_len);
        goto error;
    }
    memcpy(line, head, head_len);
    if (read_line(y->f, line + head_len, MAX_HEADER - (int)head_len) < 0) {
        cc_error_set(err, "%s: empty file or y4m header without end of line", path);
        goto error;
    }
    if (!parse_header(y, line, err))
        goto error;
    y->data_start = ftell(y->f); // -1 on a pipe: no rewind
    if (y->layout != Y4M_MONO && !(y->planar = malloc(y->frame_bytes))) {
        cc_error_set(err, "%s: out of memory for %dx%d frames", path, y->w, y->h);
        goto error;
    }
    free(line);
    return y;
error:
    free(line);
    cc_y4m_close(y);
    return NULL;
}

void cc_y4m_close(struct cc_y4m *y)
{
    if (!y)
        return;
    if (y->f)
        fclose(y->f);
    free(y->planar);
    free(y->path);
    free(y);
}

int cc_y4m_width(const struct cc_y4m *y)
{
    return y->w;
}

int cc_y4m_height(const struct cc_y4m *y)
{
    return y->h;
}

bool cc_y4m_seekable(const struct cc_y4m *y)
{
    return y->data_start >= 0;
}

double cc_y4m_fps(const struct cc_y4m *y)
{
    return y->fps_den > 0 ? (double)y->fps_num / y->fps_den : 0.0;
}

static bool frame_reserve(struct cc_frame *frame, size_t bytes, const char *path,
                          struct cc_error *err)
{
    if (frame->capacity < bytes) {
        uint8_t *p = realloc(frame->data, bytes);
        if (!p)
            return cc_error_set(err, "%s: out of memory for a frame of %zu bytes", path, bytes);
        frame->data = p;
        frame->capacity = bytes;
    }
    return true;
}

int cc_y4m_read(struct cc_y4m *y, struct cc_frame *frame, struct cc_error *err)
{
    char line[MAX_HEADER];
    int n = read_line(y->f, line, sizeof(line));
    if (n == -1 && !ferror(y->f))
        return 0;
    if (n < 0 || strncmp(line, "FRAME", 5) != 0 || (line[5] != ' ' && line[5] != 0)) {
        cc_error_set(err, "%s: corrupt y4m: frame %llu does not start with a FRAME header", y->path,
                     (unsigned long long)y->index);
        return -1;
    }
    size_t out_bytes = y->layout == Y4M_420   ? cc_nv12_size(y->w, y->h)
                       : y->layout == Y4M_444 ? (size_t)y->w * y->h * 3
                                              : (size_t)y->w * y->h;
    if (!frame_reserve(frame, out_bytes, y->path, err))
        return -1;
    uint8_t *dst = y->layout == Y4M_MONO ? frame->data : y->planar;
    size_t got = fread(dst, 1, y->frame_bytes, y->f);
    if (got != y->frame_bytes) {
        cc_error_set(err, "%s: truncated y4m: frame %llu has %zu of %zu bytes", y->path,
                     (unsigned long long)y->index, got, y->frame_bytes);
        return -1;
    }
    frame->width = y->w;
    frame->height = y->h;
    frame->size = out_bytes;
    switch (y->layout) {
    case Y4M_420:
        frame->format = CC_PIX_NV12;
        frame->stride = (y->w + 1) / 2 * 2;
        cc_i420_to_nv12(dst, y->w, y->h, frame->data);
        break;
    case Y4M_444:
        frame->format = CC_PIX_RGB24;
        frame->stride = 3 * y->w;
        cc_yuv444_to_rgb24(dst, y->w, y->h, frame->data);
        break;
    case Y4M_MONO:
        frame->format = CC_PIX_GREY;
        frame->stride = y->w;
        break;
    }
    y->index++;
    return 1;
}

bool cc_y4m_rewind(struct cc_y4m *y, struct cc_error *err)
{
    if (y->data_start < 0)
        return cc_error_set(err,
                            "%s: a pipe cannot be played again; drop --loop or save the "
                            "stream to a file",
                            y->path);
    if (fseek(y->f, y->data_start, SEEK_SET) != 0)
        return cc_error_set(err, "%s: cannot seek back to the first frame: %s", y->path,
                            strerror(errno));
    y->index = 0;
    return true;
}
