/* camclass-train — the SHA-256 of a file (libavutil's av_sha, already linked for FFmpeg), as
 * 64 lower-case hex digits: what names a base bundle in a trained bundle's record and keys the
 * feature cache. */
#ifndef CC_FILE_HASH_H
#define CC_FILE_HASH_H

#include <stdbool.h>

#include "error.h"

/* False with err (naming the file) when it cannot be read. */
bool cc_sha256_file(const char *path, char hex[65], struct cc_error *err);

#endif
