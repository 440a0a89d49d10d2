/* camclass fuzz target — the Y4M reader (app/input/y4m.c): the input is a whole .y4m stream,
 * opened through fmemopen as the file source opens a file (seekable, so rewind is covered):
 * header, up to 4 frames, a rewind and the first frame again. Each frame must pass
 * cc_frame_check, as preprocessing will check it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frame.h"
#include "y4m.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int read_frames(struct cc_y4m *y, struct cc_frame *frame, int max)
{
    for (int i = 0; i < max; i++) {
        struct cc_error err = {{0}};
        int r = cc_y4m_read(y, frame, &err);
        if ((r < 0) != !!err.msg[0])
            __builtin_trap();
        if (r <= 0)
            return r;
        if (!cc_frame_check(frame, "fuzz", &err))
            __builtin_trap(); // the reader delivered a frame its own layout does not fit
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; // fmemopen refuses an empty buffer
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        abort();
    struct cc_error err = {{0}};
    struct cc_y4m *y = cc_y4m_open(f, "fuzz.y4m", "", 0, &err);
    if (!y != !!err.msg[0])
        __builtin_trap();
    if (!y)
        return 0;
    struct cc_frame frame = {0};
    read_frames(y, &frame, 4);
    if (cc_y4m_seekable(y) && cc_y4m_rewind(y, &err))
        read_frames(y, &frame, 1);
    free(frame.data);
    cc_y4m_close(y);
    return 0;
}
