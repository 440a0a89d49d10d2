/* camclass — the labelled pictures people collect (--collect DIR, POST /samples,
 * camclass-capture --label): JPEG files in an ImageFolder DIR/<class>/, the layout
 * camclass-train reads (dataset.h), with the images counted per class.
 *
 *   struct cc_sample_store *s = cc_sample_store_open("garage", "open,closed", &err); // exit 2
 *   status = cc_sample_store_save_frame(s, "open", frame, file, sizeof(file), &err);
 *   cc_sample_store_destroy(s);
 *
 * A picture is written to a hidden temporary file in its class folder (".partial-XXXXXX",
 * which camclass-train skips), flushed to the disk (fsync), then given its name with
 * renameat2(RENAME_NOREPLACE) (link() where the file system lacks it): YYYYmmdd-HHMMSS-N.jpg,
 * UTC, N this store's sequence number, the next free one when a name is taken. An existing
 * file is never replaced, and a write that fails (a full disk: ENOSPC; a size limit: EFBIG)
 * leaves no file behind, only the error line.
 *
 * Classes are DIR's sub-folders (sorted) when no list is given, else the list in its order;
 * a label not yet known gets its folder on its first picture (up to CC_SAMPLE_STORE_MAX_CLASSES
 * classes). Keys 1..9 of the window are the first nine classes, in that order.
 *
 * Threads: every function but open and destroy may be called from any thread at once (the
 * window's, the HTTP connections'); the store's mutex guards its classes and counts, and is
 * not held while a picture is encoded or written.
 * Ownership: the caller owns the store; names and counts are copied out.
 */
#ifndef CC_SAMPLE_STORE_H
#define CC_SAMPLE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"

enum {
    CC_SAMPLE_STORE_MAX_CLASSES = 100, // classes at most (new labels beyond: refused)
    CC_SAMPLE_STORE_QUALITY = 92,      // JPEG quality of encoded frames
    CC_SAMPLE_STORE_FILE_MAX = 64,     // bytes of a saved file's name, with its terminator
};

/* What a save came to. */
enum cc_sample_status {
    CC_SAMPLE_SAVED,
    CC_SAMPLE_BAD_LABEL,    // not a safe class name (dataset.h's rules), or too many classes
    CC_SAMPLE_BAD_IMAGE,    // the frame does not convert (malformed, undecodable MJPEG)
    CC_SAMPLE_DISK_FULL,    // the disk is full (ENOSPC, EDQUOT) or a size limit (EFBIG)
    CC_SAMPLE_WRITE_FAILED, // another write error: read-only, permissions, memory
};

/* One class as the store counts it. */
struct cc_sample_class {
    char name[72]; // the folder's name (at most CC_DATASET_CLASS_MAX bytes)
    int count;     // .jpg/.jpeg/.png images in it (those there at open, and those saved)
};

struct cc_sample_store;

/* Opens dir (made when missing, its parent must exist) with classes, a comma list of class
 * names (NULL: dir's sub-folders). NULL with err (one line naming the problem and the way
 * out): dir is not a folder or cannot be made, a listed or existing class name is unsafe
 * (naming the rule), a name is listed twice, more than CC_SAMPLE_STORE_MAX_CLASSES. */
struct cc_sample_store *cc_sample_store_open(const char *dir, const char *classes,
                                             struct cc_error *err);

/* Frees; accepts NULL. */
void cc_sample_store_destroy(struct cc_sample_store *s);

/* The folder given at open. */
const char *cc_sample_store_dir(const struct cc_sample_store *s);

/* Copies up to max classes in their order (keys 1..9 are the first nine) into out; returns
 * how many there are in all. */
int cc_sample_store_classes(struct cc_sample_store *s, struct cc_sample_class *out, int max);

/* The class of window key 1..9 into name (size ≥ 72): false when that key has none. */
bool cc_sample_store_key_class(struct cc_sample_store *s, int key, char *name, size_t size);

/* Whether label can be a class (dataset.h's rules): false with err "WHAT \"LABEL\" <the rule
 * it breaks>; ..." otherwise. Saves check it too; callers may check before they work. */
bool cc_sample_store_check_label(const char *label, const char *what, struct cc_error *err);

/* The window's line: each key with its class and count, "1 open: 12   2 closed: 8", or, with
 * no class, how to get some. */
void cc_sample_store_keys_line(struct cc_sample_store *s, char *line, size_t size);

/* Saves frame (any cc_pixfmt; an MJPEG frame's own JPEG is kept as it is once it decodes, other
 * formats are converted to RGB and encoded) under label. file receives the saved name
 * (DIR/label/NAME: NAME only). The status, with err for anything but CC_SAMPLE_SAVED. */
enum cc_sample_status cc_sample_store_save_frame(struct cc_sample_store *s, const char *label,
                                                 const struct cc_frame *frame, char *file,
                                                 size_t file_size, struct cc_error *err);

/* Saves jpeg (size bytes of a JPEG the caller has decoded, or made) under label, as it is. */
enum cc_sample_status cc_sample_store_save_jpeg(struct cc_sample_store *s, const char *label,
                                                const uint8_t *jpeg, size_t size, char *file,
                                                size_t file_size, struct cc_error *err);

#endif
