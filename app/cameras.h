/* camclass — the cameras of a run: the config's "cameras" array, or the command line's one
 * source (--camera / --input, or the default) as a camera of its own.
 *
 *   {"model": "m.ccm", "cameras": [
 *       {"name": "door", "input": "/dev/video0", "rotation": 180},
 *       {"name": "yard", "input": "rtsp://cam2/stream", "threshold": 0.8}]}
 *
 * Each camera is an object: "name" (one safe path component: letters, digits, '_', '-', '.',
 * spaces inside; unique), exactly one of "input" / "camera" (as the flags), and optionally the
 * keys of CC_CAMERA_KEYS, each checked as its flag is; a key a camera does not give takes the
 * top-level value (the command line's, else the config's). Problems are one line naming the
 * camera and the key: main exits 2 before any model loads.
 *
 * Ownership: a cc_cameras owns its cameras and their settings (cc_cameras_finish frees them); a
 * view (cc_cameras_view) borrows from both the camera and the top-level cli.
 */
#ifndef CC_CAMERAS_H
#define CC_CAMERAS_H

#include <stdbool.h>

#include "cli.h"
#include "error.h"

enum {
    CC_CAMERAS_MAX = 16,     // cameras in one process
    CC_CAMERA_NAME_MAX = 64, // bytes of a name
};

// The keys a camera may give besides "name", as the flags of the same names.
#define CC_CAMERA_KEYS                                                                             \
    "input, camera, loop, size, fps, rotation, hflip, vflip, roi, model, threshold, log-mode, "    \
    "webhook, on-event, on-event-timeout, ha-binary, gpio, gpio-active-low"

struct cc_camera {
    char name[CC_CAMERA_NAME_MAX + 1]; // config: as given; command line: "" (the source names it)
    struct cc_cli own;                 // the keys this camera gave (cc_cli_given), nothing else
};

struct cc_cameras {
    struct cc_camera *cam; // (n) in the config's order; the first is the "first camera"
    int n;
    bool from_config; // false: the command line's one source
};

/* Reads the config's "cameras" (cli->cameras, JSON text; config names the file in messages)
 * into out; or, when cli has none or a source was given on the command line (which replaces
 * the config's cameras), one camera with no keys of its own. False with err (one line) on an
 * unknown key, a wrong type or value, a missing or unsafe or repeated name, no source or two. */
bool cc_cameras_read(const struct cc_cli *cli, const char *config, struct cc_cameras *out,
                     struct cc_error *err);

/* The settings of camera i: *top with the camera's own keys in place of the top-level ones (its
 * source replaces top's camera/input). A shallow copy: its strings belong to top and the
 * camera; never cc_cli_finish it, and use it only while both live. */
void cc_cameras_view(const struct cc_cameras *c, int i, const struct cc_cli *top,
                     struct cc_cli *view);

/* Frees the cameras; c is empty again. Accepts an empty one. */
void cc_cameras_finish(struct cc_cameras *c);

#endif
