/* camclass — files in the user's cache directory: where they go and how they are replaced.
 * Used by the Vulkan pipeline cache (kernels.c), backend auto's and the CPU backend's
 * remembered choices (autoselect.c, xnn_backend.c), and camclass-train's feature cache. */
#ifndef CC_CACHE_FILE_H
#define CC_CACHE_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* $XDG_CACHE_HOME/camclass/<name> (XDG_CACHE_HOME when absolute), else
 * $HOME/.cache/camclass/<name>. Returns a malloc'd path, or NULL when neither is set. */
char *cc_cache_file_default(const char *name);

/* Replaces path's contents with size bytes of data: written to path.tmp.<pid> (parent
 * directories made as needed) and renamed over path, so a reader never sees half a file.
 * False with err naming the file and errno's text. */
bool cc_cache_file_write(const char *path, const void *data, size_t size, struct cc_error *err);

/* A cache file of lines "<key>\t<value>" under a first line that names its format (header,
 * ending in a newline). Keys and values hold no newline; keys no tab.
 *
 * cc_cache_lines_read: the whole file, or NULL (absent, unreadable, another header, over
 * 64 KiB). cc_cache_lines_find: copies key's value out of text; false when absent.
 * cc_cache_lines_store: writes the file (cc_cache_file_write) with old's lines, key's put last
 * (replacing an older one) and the oldest dropped beyond 64 lines. */
char *cc_cache_lines_read(const char *path, const char *header);
bool cc_cache_lines_find(const char *text, const char *key, char *value, size_t size);
bool cc_cache_lines_store(const char *path, const char *header, const char *old, const char *key,
                          const char *value, struct cc_error *err);

#endif
