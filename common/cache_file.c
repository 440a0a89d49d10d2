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

enum { LINES_MAX_BYTES = 65536, LINES_MAX = 64 };

char *cc_cache_lines_read(const char *path, const char *header)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = calloc(1, LINES_MAX_BYTES + 1);
    size_t n = text ? fread(text, 1, LINES_MAX_BYTES, f) : 0;
    bool whole = text && feof(f);
    fclose(f);
    if (!whole || strncmp(text, header, strlen(header)) != 0) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* Whether line (up to its end) holds key followed by a tab. */
static bool line_has_key(const char *line, const char *key, size_t klen)
{
    return strncmp(line, key, klen) == 0 && line[klen] == '\t';
}

bool cc_cache_lines_find(const char *text, const char *key, char *value, size_t size)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        if (!line_has_key(line, key, klen))
            continue;
        const char *v = line + klen + 1;
        snprintf(value, size, "%.*s", (int)strcspn(v, "\n"), v);
        return true;
    }
    return false;
}

bool cc_cache_lines_store(const char *path, const char *header, const char *old, const char *key,
                          const char *value, struct cc_error *err)
{
    size_t cap = (old ? strlen(old) : 0) + strlen(header) + strlen(key) + strlen(value) + 4;
    char *out = malloc(cap);
    if (!out)
        return cc_error_set(err, "out of memory writing %s", path);
    const char *kept[LINES_MAX];
    size_t kept_len[LINES_MAX];
    int n = 0;
    size_t klen = strlen(key);
    const char *line = old ? strchr(old, '\n') : NULL;
    while (line && *++line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len && !line_has_key(line, key, klen)) {
            if (n == LINES_MAX - 1) { // drop the oldest
                memmove(kept, kept + 1, sizeof(kept[0]) * (size_t)(n - 1));
                memmove(kept_len, kept_len + 1, sizeof(kept_len[0]) * (size_t)(n - 1));
                n--;
            }
            kept[n] = line;
            kept_len[n++] = len;
        }
        line = end;
    }
    size_t pos = (size_t)snprintf(out, cap, "%s", header);
    for (int i = 0; i < n; i++)
        pos += (size_t)snprintf(out + pos, cap - pos, "%.*s\n", (int)kept_len[i], kept[i]);
    pos += (size_t)snprintf(out + pos, cap - pos, "%s\t%s\n", key, value);
    bool ok = cc_cache_file_write(path, out, pos, err);
    free(out);
    return ok;
}
