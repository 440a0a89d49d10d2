/* camclass — the source a run reads, chosen from --camera / --input or the defaults: a V4L2
 * camera, a network stream (read like a camera), or a file source (an image, a directory of
 * images, a video file); with --serve alone, none (HTTP requests are the input).
 *
 * Defaults: /dev/video0 when it opens, else the bundled sample clip (samples/selftest, found as
 * the assets are: assets.h), looped. Each choice is one stderr line ("camclass: camera ...").
 * Ownership: the caller owns what is opened (cc_capture_destroy, cc_source_file_destroy).
 */
#ifndef CC_SOURCE_CHOICE_H
#define CC_SOURCE_CHOICE_H

#include <limits.h>
#include <stdbool.h>

#include "capture.h"
#include "cli.h"
#include "source_file.h"

struct cc_source_choice {
    struct cc_capture *camera;   // opened, not started; or NULL
    struct cc_source_file *file; // opened, not started; or NULL (neither: requests only)
    char name[PATH_MAX];         // the device, URL or path; "none" for requests only
    bool loop;                   // a file input starts again at its end
};

/* Opens the source. Returns 0, -1 when stop(NULL) said stop while a stream was connecting (a
 * stop: exit 0), 1 for a camera or stream that cannot be reached now (it may come later: the
 * service retries), 2 for a usage error (an unreadable input, --loop on a stream); the reason
 * is one line on stderr. */
int cc_source_choice_open(const struct cc_cli *cli, bool (*stop)(void *ctx),
                          struct cc_source_choice *out);

/* The bundled sample input (a folder of frames: samples/selftest) into path; false with err
 * naming where it was looked for. */
bool cc_source_choice_sample(char *path, size_t size, struct cc_error *err);

/* The overlay's fps line names the source: "camera", or a file input's file or directory
 * name (a directory with a trailing '/'). */
void cc_source_choice_label(const struct cc_source_choice *s, char *label, size_t size);

/* A live source: a camera or a network stream (their pictures should change and stay sharp). */
bool cc_source_choice_live(const struct cc_source_choice *s, const struct cc_cli *cli);

#endif
