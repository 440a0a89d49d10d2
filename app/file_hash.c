/* camclass — the SHA-256 of a file (see file_hash.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libavutil/mem.h>
#include <libavutil/sha.h>

#include "file_hash.h"

bool cc_sha256_file(const char *path, char hex[CC_SHA256_HEX], struct cc_error *err)
{
    hex[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "cannot open %s: %s", path, strerror(errno));
    struct AVSHA *sha = av_sha_alloc();
    if (!sha || av_sha_init(sha, 256) < 0) {
        fclose(f);
        av_free(sha);
        return cc_error_set(err, "out of memory hashing %s", path);
    }
    unsigned char buf[65536], digest[32];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        av_sha_update(sha, buf, (unsigned)n);
    bool ok = !ferror(f);
    fclose(f);
    av_sha_final(sha, digest);
    av_free(sha);
    if (!ok)
        return cc_error_set(err, "cannot read %s: %s", path, strerror(errno));
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return true;
}
