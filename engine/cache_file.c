/* camclass — files in the user's cache directory (see cache_file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_file.h"

char *cc_cache_file_default(const char *name)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char path[1200];
    if (xdg && xdg[0] == '/')
        snprintf(path, sizeof(path), "%s/camclass/%s", xdg, name);
    else if (home && home[0])
        snprintf(path, sizeof(path), "%s/.cache/camclass/%s", home, name);
    else
        return NULL;
    return strdup(path);
}

/* mkdir -p of the directory part of path. */
static void make_parent_dirs(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    free(p);
}

bool cc_cache_file_write(const char *path, const void *data, size_t size, struct cc_error *err)
{
    make_parent_dirs(path);
    char tmp[1300];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0)
        ok = false;
    int e = errno;
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            e = errno;
        unlink(tmp);
        return cc_error_set(err,
                            "cannot write cache file %s: %s (check the directory's "
                            "permissions or set XDG_CACHE_HOME)",
                            path, strerror(e));
    }
    return true;
}
