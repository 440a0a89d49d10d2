/* camclass — the SHA-256 of a file (libavutil's av_sha, linked for FFmpeg already: a pure
 * function, no library state), as 64 lower-case hex digits: what names a bundle in the log's
 * model line (model_reload.c), a base bundle in a trained bundle's record and the pictures in
 * camclass-train's feature cache. */
#ifndef CC_FILE_HASH_H
#define CC_FILE_HASH_H

#include <stdbool.h>

#include "error.h"

enum { CC_SHA256_HEX = 65 }; // 64 hex digits and '\0'

/* False with err (naming the file) and hex "" when it cannot be read. */
bool cc_sha256_file(const char *path, char hex[CC_SHA256_HEX], struct cc_error *err);

#endif
