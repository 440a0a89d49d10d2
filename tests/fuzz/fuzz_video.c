/* camclass fuzz target — the video demux/decode wrapper (app/input/av_source.c): the input is a
 * whole video file, read by libavformat through av_source's in-memory AVIOContext (seekable, as
 * a file is; no protocol may be opened from inside it): open (probe, stream info, best video
 * stream, decoder), up to 8 frames, a rewind and the first frame again. Each frame must pass
 * cc_frame_check, as preprocessing will check it. FFmpeg itself is not instrumented: what is
 * fuzzed is our use of it (the conversions to NV12/GREY/RGB24, sizes, strides, error paths). */
#include <stdint.h>
#include <stdlib.h>

#include "av_source.h"
#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_frames(struct cc_av *av, struct cc_frame *frame, int max)
{
    for (int i = 0; i < max; i++) {
        struct cc_error err = {{0}};
        int r = cc_av_read(av, frame, false, &err);
        if ((r < 0) != !!err.msg[0])
            __builtin_trap(); // an error without its line, or a line without an error
        if (r <= 0)
            return;
        if (!cc_frame_check(frame, "fuzz", &err))
            __builtin_trap(); // the wrapper delivered a frame its own layout does not fit
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cc_error err = {{0}};
    struct cc_av *av = NULL;
    enum cc_av_status s = cc_av_open_buffer(data, size, "fuzz.video", &av, &err);
    if ((s == CC_AV_OK) != (av != NULL) || (s != CC_AV_OK) != !!err.msg[0])
        __builtin_trap();
    if (!av)
        return 0;
    struct cc_frame frame = {0};
    read_frames(av, &frame, 8);
    if (cc_av_seekable(av)) {
        if (cc_av_rewind(av, &err))
            read_frames(av, &frame, 1);
        else if (!err.msg[0])
            __builtin_trap();
    }
    free(frame.data);
    cc_av_close(av);
    return 0;
}
