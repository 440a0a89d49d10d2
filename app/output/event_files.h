/* camclass — the files saved on detection events (snapshots, snapshot.h; clips): their folder,
 * their names, writing them without ever replacing a file, and the folder's size cap.
 *
 *   struct cc_event_folder f;
 *   cc_event_folder_open(&f, dir, camera, max_bytes, ".jpg", "--snapshot-dir", &err); // DIR/camera
 *   event thread:  cc_event_folder_name(&f, wall_ns, label, path, sizeof(path));  // a free name
 *   writer thread: cc_event_folder_save(&f, bytes, n, path, sizeof(path), &err);  // then capped
 *
 * Names: DIR/<camera>/<UTC time>-<label><ext>, the time as 20261127T045454.123Z and the label
 * made one safe path component (cc_event_folder_safe_label), then "-2", "-3", ... when that name
 * is taken. A file is written to a hidden temporary name in the folder, flushed to the disk
 * (fsync) and given its name with renameat2(RENAME_NOREPLACE): a reader never sees half a file
 * and an existing file is never replaced (one taken meanwhile gets the next suffix, and path says
 * which). The cap: after each save, the files of this folder that camclass names this way (that
 * pattern and ext, nothing else) are deleted oldest name first until they fit max_bytes, the one
 * just written always kept.
 * Threads: name on one thread (the event's), save on one (the writer's); no state is shared
 * between them but the folder's path, set at open.
 */
#ifndef CC_EVENT_FILES_H
#define CC_EVENT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum {
    CC_EVENT_LABEL_MAX = 64,  // bytes of a label in a name
    CC_EVENT_CAMERA_MAX = 64, // bytes of a camera's name
    CC_EVENT_PATH_MAX = 4096, // a saved file's path
};

struct cc_event_folder {
    char dir[CC_EVENT_PATH_MAX - 128]; // DIR/<camera>
    const char *ext;                   // ".jpg", ".mp4" (static)
    const char *flag;                  // the flag that named DIR, for messages (static)
    uint64_t max_bytes;                // the cap of this folder's event files
    char last[CC_EVENT_PATH_MAX];      // the last name given (event thread): never given twice
    // Set by the caller after open (may be NULL): one line when a file gets another name than
    // the one given at its event (taken meanwhile by someone else). Thread-safe.
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
};

/* label as one safe path component: bytes other than ASCII letters, digits, '_', '-' and '.'
 * become '_', a leading '.' too, at most CC_EVENT_LABEL_MAX bytes; "" becomes "none". */
void cc_event_folder_safe_label(const char *label, char *out, size_t out_size);

/* A camera's name made from its input (/dev/video0 -> video0, front.mp4 -> front, a folder
 * -> its last component), as a safe label. */
void cc_event_folder_camera_name(const char *input, char *out, size_t out_size);

/* True when name is one safe component as above (1..CC_EVENT_CAMERA_MAX bytes). */
bool cc_event_folder_name_ok(const char *name);

/* False with one line naming flag and dir when dir is no existing folder. */
bool cc_event_folder_check(const char *dir, const char *flag, struct cc_error *err);

/* Checks that dir is a folder camclass may write in and makes dir/camera (0755) if needed.
 * False with one line naming flag and dir, and what to do. */
bool cc_event_folder_open(struct cc_event_folder *f, const char *dir, const char *camera,
                          uint64_t max_bytes, const char *ext, const char *flag,
                          struct cc_error *err);

/* The path of the event at wall_ns (CLOCK_REALTIME) with label: the first free name. */
void cc_event_folder_name(struct cc_event_folder *f, int64_t wall_ns, const char *label, char *path,
                          size_t path_size);

/* Writes n bytes as path (or, when path is taken by then, its next free suffix, written back
 * into path), then applies the cap. False with err naming the file and errno (nothing left
 * behind). */
bool cc_event_folder_save(struct cc_event_folder *f, const uint8_t *bytes, size_t n, char *path,
                          size_t path_size, struct cc_error *err);

/* A new empty temporary file in the folder, "<folder>/.partial-XXXXXX<ext>" (0644), for a writer
 * that writes the file itself: its fd (the caller closes it) with the name in tmp, or -1 with
 * err. */
int cc_event_folder_temp(struct cc_event_folder *f, char *tmp, size_t tmp_size,
                         struct cc_error *err);

/* Gives the finished temporary file tmp (in the folder) the name path, or its next free
 * suffix (written back), then applies the cap. False with err (tmp removed). */
bool cc_event_folder_publish(struct cc_event_folder *f, const char *tmp, char *path,
                             size_t path_size, struct cc_error *err);

/* Deletes the oldest event files of the folder (never keep, a file name) until they fit the cap.
 * The number deleted. */
int cc_event_folder_cap(struct cc_event_folder *f, const char *keep);

#endif
