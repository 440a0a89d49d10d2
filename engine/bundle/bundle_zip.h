/* camclass — the zip side of the bundle loader (bundle.c): opening the archive (libzip),
 * entry-name safety checks, finding entries, ranged reads, CRC-32 checks and whole-entry reads
 * with a size limit.
 *
 * Every failure sets one line in err, "bundle PATH: <what>; <the way out>", with control
 * characters (from hostile entry names) replaced by '?'. Nothing here keeps global state.
 */
#ifndef CC_BUNDLE_ZIP_H
#define CC_BUNDLE_ZIP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct zip; // libzip's zip_t

/* One open bundle archive. Filled by cc_bundle_zip_open*, emptied by cc_bundle_zip_close; the
 * caller owns the struct itself. Used by one thread at a time. */
struct cc_bundle_zip {
    struct zip *za;       // the open archive; owned
    const char *bundle;   // path or name used in messages (borrowed)
    struct cc_error *err; // where failures are reported (borrowed; may be NULL)
    bool *crc_checked;    // (entries in the zip) data entries whose CRC-32 was checked; owned
};

/* Opens the bundle at path read-only (err and path are kept, borrowed, for later messages).
 * The path is stat'ed first: a directory, FIFO or device is refused without being opened. On
 * failure sets err ("is a directory", "is not a regular file", "not a zip archive", "cannot
 * open", "damaged zip archive" or "out of memory") and returns false with nothing to close. */
bool cc_bundle_zip_open(struct cc_bundle_zip *z, const char *path, struct cc_error *err);

/* Same for a bundle held in memory (size bytes at data, borrowed until close); name stands for
 * the path in messages (borrowed, not NULL). */
bool cc_bundle_zip_open_memory(struct cc_bundle_zip *z, const void *data, size_t size,
                               const char *name, struct cc_error *err);

/* Closes the archive and frees what z owns; accepts a zeroed struct. */
void cc_bundle_zip_close(struct cc_bundle_zip *z);

/* Sets "bundle PATH: <fmt, ap>" in z->err, control characters replaced by '?' so that the
 * message stays one line. Returns false. Other loader code reports through this too. */
bool cc_bundle_zip_failv(const struct cc_bundle_zip *z, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Rejects the bundle when any entry name could point outside it when extracted (empty,
 * absolute, drive letter, backslash, ".." component). */
bool cc_bundle_zip_check_names(const struct cc_bundle_zip *z);

/* Whether the archive holds an entry called name (no message either way). */
bool cc_bundle_zip_has(const struct cc_bundle_zip *z, const char *name);

/* Finds entry name, which the manifest references as what (e.g. "tensor \"w\": data"), holding
 * tensor data: it must be stored (uncompressed) and not encrypted, so that ranges of it can be
 * read in place. Returns its index, with its size in *size, or -1 with the error set. */
int64_t cc_bundle_zip_find_stored(const struct cc_bundle_zip *z, const char *name, const char *what,
                                  uint64_t *size);

/* Reads size bytes at offset of entry i (name, for messages) into dst. whole: that is the
 * whole entry, whose CRC-32 is then checked as well. */
bool cc_bundle_zip_read_range(const struct cc_bundle_zip *z, int64_t i, const char *name,
                              uint64_t offset, uint64_t size, bool whole, void *dst);

/* Reads entry i (name, for messages) once from start to end, so that libzip checks its CRC-32
 * (reads that seek skip the check, and damaged weights would give wrong results). Later calls
 * for the same entry return true at once. */
bool cc_bundle_zip_check_crc(struct cc_bundle_zip *z, int64_t i, const char *name);

/* Reads the whole entry name (referenced as what) of at most limit bytes, CRC-32 checked.
 * Returns a malloc'd NUL-terminated copy owned by the caller, its length in *size, or NULL
 * with the error set. */
char *cc_bundle_zip_read(const struct cc_bundle_zip *z, const char *name, const char *what,
                         uint64_t limit, size_t *size);

#endif
