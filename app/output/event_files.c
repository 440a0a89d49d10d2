/* camclass — the files saved on detection events (see event_files.h). */
#include "event_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file_once.h"

#define STAMP_LEN 20 // "20261127T045454.123Z"
#define MAX_SUFFIX 1000

static bool safe_byte(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || (c == '.' && !first);
}

void cc_event_folder_safe_label(const char *label, char *out, size_t out_size)
{
    size_t n = 0, max = out_size - 1 < CC_EVENT_LABEL_MAX ? out_size - 1 : CC_EVENT_LABEL_MAX;
    for (const char *p = label ? label : ""; *p && n < max; p++, n++)
        out[n] = safe_byte(*p, n == 0) ? *p : '_';
    out[n] = '\0';
    if (!n)
        snprintf(out, out_size, "none");
}

void cc_event_folder_camera_name(const char *input, char *out, size_t out_size)
{
    char copy[CC_EVENT_PATH_MAX];
    snprintf(copy, sizeof(copy), "%s", input ? input : "");
    size_t len = strlen(copy);
    while (len > 1 && copy[len - 1] == '/') // a folder given as "dir/"
        copy[--len] = '\0';
    const char *base = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = '\0';
    cc_event_folder_safe_label(
        base, out, out_size < CC_EVENT_CAMERA_MAX + 1 ? out_size : CC_EVENT_CAMERA_MAX + 1);
}

bool cc_event_folder_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 1 || n > CC_EVENT_CAMERA_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!safe_byte(name[i], i == 0))
            return false;
    return true;
}

bool cc_event_folder_check(const char *dir, const char *flag, struct cc_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return cc_error_set(err, "%s %s: %s (give an existing folder)", flag, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cc_error_set(err, "%s %s: not a folder (give an existing folder)", flag, dir);
    return true;
}

bool cc_event_folder_open(struct cc_event_folder *f, const char *dir, const char *camera,
                          uint64_t max_bytes, const char *ext, const char *flag,
                          struct cc_error *err)
{
    *f = (struct cc_event_folder){.ext = ext, .flag = flag, .max_bytes = max_bytes};
    if (!cc_event_folder_check(dir, flag, err))
        return false;
    if (!cc_event_folder_name_ok(camera))
        return cc_error_set(err, "%s: the camera name \"%.80s\" is not one safe folder name", flag,
                            camera ? camera : "");
    if ((size_t)snprintf(f->dir, sizeof(f->dir), "%s/%s", dir, camera) >= sizeof(f->dir))
        return cc_error_set(err, "%s %.80s...: the path is too long", flag, dir);
    if (mkdir(f->dir, 0755) != 0 && errno != EEXIST)
        return cc_error_set(err, "%s: cannot make the folder %s: %s (check its permissions)", flag,
                            f->dir, strerror(errno));
    if (access(f->dir, W_OK | X_OK) != 0)
        return cc_error_set(err, "%s: cannot write in %s: %s (check its permissions)", flag, f->dir,
                            strerror(errno));
    return true;
}

/* dir/<stamp>-<label><ext>, or with -k before ext for k >= 2. */
static void candidate(const struct cc_event_folder *f, const char *stem, int k, char *path,
                      size_t path_size)
{
    if (k < 2)
        snprintf(path, path_size, "%s/%s%s", f->dir, stem, f->ext);
    else
        snprintf(path, path_size, "%s/%s-%d%s", f->dir, stem, k, f->ext);
}

void cc_event_folder_name(struct cc_event_folder *f, int64_t wall_ns, const char *label, char *path,
                          size_t path_size)
{
    time_t s = (time_t)(wall_ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char stamp[32], safe[CC_EVENT_LABEL_MAX + 1], stem[CC_EVENT_LABEL_MAX + 40];
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
    cc_event_folder_safe_label(label, safe, sizeof(safe));
    snprintf(stem, sizeof(stem), "%s.%03dZ-%s", stamp, (int)(wall_ns / 1000000 % 1000), safe);
    struct stat st;
    for (int k = 1; k < MAX_SUFFIX; k++) {
        candidate(f, stem, k, path, path_size);
        if (strcmp(path, f->last) != 0 && lstat(path, &st) != 0 && errno == ENOENT)
            break;
    }
    snprintf(f->last, sizeof(f->last), "%s", path);
}

int cc_event_folder_temp(struct cc_event_folder *f, char *tmp, size_t tmp_size,
                         struct cc_error *err)
{
    snprintf(tmp, tmp_size, "%s/.partial-XXXXXX%s", f->dir, f->ext);
    int fd = mkstemps(tmp, (int)strlen(f->ext));
    if (fd < 0 || fchmod(fd, 0644) != 0) {
        cc_error_set(err, "%s: cannot write in %s: %s", f->flag, f->dir, strerror(errno));
        if (fd >= 0)
            close(fd), unlink(tmp);
        return -1;
    }
    return fd;
}

bool cc_event_folder_publish(struct cc_event_folder *f, const char *tmp, char *path,
                             size_t path_size, struct cc_error *err)
{
    char stem[CC_EVENT_PATH_MAX], want[CC_EVENT_PATH_MAX];
    snprintf(want, sizeof(want), "%s", path);
    size_t dir_len = strlen(f->dir) + 1, ext_len = strlen(f->ext);
    snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(want) - dir_len - ext_len), want + dir_len);
    for (int k = 1; k < MAX_SUFFIX; k++) {
        candidate(f, stem, k, path, path_size);
        int e = cc_file_name_once(tmp, path);
        if (e == 0) {
            if (k > 1 && f->notice) {
                char line[2 * CC_EVENT_PATH_MAX + 100];
                snprintf(line, sizeof(line), "%s: %s was taken meanwhile; saved as %s instead",
                         f->flag, want, path);
                f->notice(f->notice_ctx, line);
            }
            cc_event_folder_cap(f, path);
            return true;
        }
        if (e != EEXIST) {
            unlink(tmp);
            return cc_error_set(err, "%s: cannot name %s: %s", f->flag, path, strerror(e));
        }
    }
    unlink(tmp);
    return cc_error_set(err, "%s: %d names like %s taken; is something else writing there?",
                        f->flag, MAX_SUFFIX, want);
}

bool cc_event_folder_save(struct cc_event_folder *f, const uint8_t *bytes, size_t n, char *path,
                          size_t path_size, struct cc_error *err)
{
    char tmp[CC_EVENT_PATH_MAX];
    int fd = cc_event_folder_temp(f, tmp, sizeof(tmp), err);
    if (fd < 0)
        return false;
    bool ok = cc_file_write_synced(fd, bytes, n);
    int e = errno;
    if (close(fd) != 0 && ok)
        ok = false, e = errno;
    if (!ok) {
        unlink(tmp);
        return cc_error_set(err, "%s: writing %s failed: %s (free some space)", f->flag, path,
                            strerror(e));
    }
    return cc_event_folder_publish(f, tmp, path, path_size, err);
}

/* ------------------------------------------------------------------------------------------
 * The cap
 */

/* True for the names cc_event_folder_name gives: <8 digits>T<6 digits>.<3 digits>Z-<safe
 * bytes><ext>. */
static bool own_name(const char *name, const char *ext)
{
    static const char shape[] = "ddddddddTdddddd.dddZ-";
    size_t n = strlen(name), e = strlen(ext);
    if (n <= sizeof(shape) - 1 + e || strcmp(name + n - e, ext) != 0)
        return false;
    for (size_t i = 0; i < sizeof(shape) - 1; i++)
        if (shape[i] == 'd' ? name[i] < '0' || name[i] > '9' : name[i] != shape[i])
            return false;
    for (size_t i = sizeof(shape) - 1; i < n - e; i++)
        if (!safe_byte(name[i], false))
            return false;
    return true;
}

struct entry {
    char name[256];
    uint64_t size;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* The folder's own event files (regular files only): malloc'd array, count in *n, bytes in
 * *total. NULL when it cannot be read or out of memory. */
static struct entry *own_files(const struct cc_event_folder *f, size_t *n, uint64_t *total)
{
    DIR *d = opendir(f->dir);
    if (!d)
        return NULL;
    struct entry *v = NULL;
    size_t cap = 0;
    *n = 0, *total = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat st;
        if (!own_name(de->d_name, f->ext) || strlen(de->d_name) >= sizeof(v->name) ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (*n == cap) {
            struct entry *g = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));
            if (!g)
                break;
            v = g;
        }
        snprintf(v[*n].name, sizeof(v->name), "%s", de->d_name);
        v[(*n)++].size = (uint64_t)st.st_size;
        *total += (uint64_t)st.st_size;
    }
    closedir(d);
    return v;
}

int cc_event_folder_cap(struct cc_event_folder *f, const char *keep)
{
    size_t n;
    uint64_t total;
    struct entry *v = own_files(f, &n, &total);
    if (!v)
        return 0;
    qsort(v, n, sizeof(*v), by_name); // the names start with their UTC time: oldest first
    const char *keep_name = keep && strrchr(keep, '/') ? strrchr(keep, '/') + 1 : keep;
    int deleted = 0;
    for (size_t i = 0; i < n && total > f->max_bytes; i++) {
        if (keep_name && strcmp(v[i].name, keep_name) == 0)
            continue;
        char path[CC_EVENT_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", f->dir, v[i].name);
        if (unlink(path) == 0)
            total -= v[i].size, deleted++;
    }
    free(v);
    return deleted;
}
