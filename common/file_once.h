/* camclass — writing a file that replaces nothing: the bytes into a temporary file, flushed to
 * the disk, then given a name that must not exist yet. A file a user did not ask camclass to
 * replace is never touched; a crash leaves at most the temporary file, never half a picture
 * under the final name. Used by the sample store (--collect) and the event files (snapshots,
 * clips).
 */
#ifndef CC_FILE_ONCE_H
#define CC_FILE_ONCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes all n bytes to fd and flushes them to the disk (fsync): false with errno set. */
bool cc_file_write_synced(int fd, const uint8_t *p, size_t n);

/* Gives tmp the name final unless final exists (renameat2 RENAME_NOREPLACE; where the file
 * system lacks it, link then unlink, which also fails on an existing name): 0, or EEXIST, or
 * another errno. */
int cc_file_name_once(const char *tmp, const char *final);

#endif
