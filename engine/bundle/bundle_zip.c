/* camclass — the zip side of the bundle loader (see bundle_zip.h, docs/MODEL_FORMAT.md).
 *
 * Entry names are checked before anything is read; whole entries are read with a size limit;
 * tensor data is read in ranges straight into model storage, and each data entry is read once
 * more from start to end so that libzip checks its CRC-32.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "bundle_zip.h"

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                    */
/* ---------------------------------------------------------------------------------------- */

bool cc_bundle_zip_failv(const struct cc_bundle_zip *z, const char *fmt, va_list ap)
{
    char msg[sizeof(z->err->msg)];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    cc_error_set(z->err, "bundle %s: %s", z->bundle, msg);
    for (char *p = z->err ? z->err->msg : NULL; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return false;
}

__attribute__((format(printf, 2, 3))) static bool fail(const struct cc_bundle_zip *z,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_bundle_zip_failv(z, fmt, ap);
    va_end(ap);
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Open and close                                                                            */
/* ---------------------------------------------------------------------------------------- */

static unsigned le16(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | (uint32_t)le16(p + 2) << 16;
}

/* libzip refuses an archive whose central directory names an entry twice (ZIP_ER_EXISTS, "File
 * already exists") without saying which: the first name seen twice in the central directory of
 * the archive's bytes (size), cut to name_size; false when none is found (a zip64 directory,
 * or a damaged one). Only on that error path. */
static bool duplicate_entry(const uint8_t *d, size_t size, char *name, size_t name_size)
{
    size_t eocd = size >= 22 ? size - 22 : 0, stop = eocd > 65535 ? eocd - 65535 : 0;
    while (eocd > stop && le32(d + eocd) != 0x06054b50)
        eocd--;
    if (size < 22 || le32(d + eocd) != 0x06054b50)
        return false;
    size_t n = le16(d + eocd + 10), at = le32(d + eocd + 16), end = at + le32(d + eocd + 12);
    if (end > eocd || n > 1024)
        return false;
    size_t names[1024], lens[1024], k = 0; // a bundle has a handful of entries
    for (size_t p = at; k < n && p + 46 <= end && le32(d + p) == 0x02014b50; k++) {
        names[k] = p + 46, lens[k] = le16(d + p + 28);
        if (names[k] + lens[k] > end)
            return false;
        for (size_t j = 0; j < k; j++)
            if (lens[j] == lens[k] && memcmp(d + names[j], d + names[k], lens[k]) == 0) {
                snprintf(name, name_size, "%.*s", (int)lens[k], (const char *)d + names[k]);
                return true;
            }
        p = names[k] + lens[k] + le16(d + p + 30) + le16(d + p + 32);
    }
    return false;
}

/* Reports a failed zip open: not a zip, damaged, or cannot be read; an entry named twice by
 * its name, found in the archive's bytes (data, size; NULL: not at hand). Returns false. */
static bool open_failed(const char *bundle, zip_error_t *ze, const uint8_t *data, size_t size,
                        struct cc_error *err)
{
    int code = zip_error_code_zip(ze);
    char twice[128];
    if (code == ZIP_ER_EXISTS && data && duplicate_entry(data, size, twice, sizeof(twice))) {
        for (char *p = twice; *p; p++) // the name is the file's: no control characters out
            *p = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
        cc_error_set(err,
                     "bundle %s: entry \"%s\" appears twice in the zip (a zip tool added it "
                     "again); make the bundle anew with camclass-export",
                     bundle, twice);
    } else if (code == ZIP_ER_NOZIP)
        cc_error_set(err,
                     "bundle %s: not a zip archive; a bundle is a zip file made by "
                     "camclass-export (camclass-export(1))",
                     bundle);
    else if (code == ZIP_ER_OPEN || code == ZIP_ER_NOENT || code == ZIP_ER_READ)
        cc_error_set(err, "bundle %s: cannot open: %s", bundle, zip_error_strerror(ze));
    else
        cc_error_set(err, "bundle %s: damaged zip archive (%s); the file may be truncated", bundle,
                     zip_error_strerror(ze));
    zip_error_fini(ze);
    return false;
}

/* Fills z around the open archive za (owned from here on). */
static bool opened(struct cc_bundle_zip *z, zip_t *za, const char *bundle, struct cc_error *err)
{
    *z = (struct cc_bundle_zip){.za = za, .bundle = bundle, .err = err};
    zip_int64_t n = zip_get_num_entries(za, 0);
    if (!(z->crc_checked = calloc(n > 0 ? (size_t)n : 1, sizeof(bool)))) {
        fail(z, "out of memory");
        cc_bundle_zip_close(z);
        return false;
    }
    return true;
}

bool cc_bundle_zip_open(struct cc_bundle_zip *z, const char *path, struct cc_error *err)
{
    *z = (struct cc_bundle_zip){0};
    // stat before open, which could wait for a writer on a FIFO: libzip reports a directory,
    // a FIFO or a device as a "damaged zip archive (Operation not supported)".
    struct stat st;
    if (stat(path, &st) != 0)
        return cc_error_set(err, "bundle %s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return cc_error_set(err, "bundle %s is a directory; give the path of a .ccm bundle", path);
    if (!S_ISREG(st.st_mode))
        return cc_error_set(err,
                            "bundle %s is not a regular file (%s); give the path of a .ccm "
                            "bundle",
                            path, cc_file_kind(st.st_mode));
    int code = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, code);
        // The bytes, for naming an entry found twice (the file was a regular one at stat).
        int fd = code == ZIP_ER_EXISTS ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        void *map = fd >= 0 && st.st_size > 0
                        ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
                        : MAP_FAILED;
        bool r = open_failed(path, &ze, map != MAP_FAILED ? map : NULL, (size_t)st.st_size, err);
        if (map != MAP_FAILED)
            munmap(map, (size_t)st.st_size);
        if (fd >= 0)
            close(fd);
        return r;
    }
    return opened(z, za, path, err);
}

bool cc_bundle_zip_open_memory(struct cc_bundle_zip *z, const void *data, size_t size,
                               const char *name, struct cc_error *err)
{
    *z = (struct cc_bundle_zip){0};
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(data, size, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze) : NULL;
    if (!za) {
        zip_source_free(src); // the archive owns src only when the open succeeded
        return open_failed(name, &ze, (const uint8_t *)data, size, err);
    }
    zip_error_fini(&ze);
    return opened(z, za, name, err);
}

void cc_bundle_zip_close(struct cc_bundle_zip *z)
{
    if (z->za)
        zip_discard(z->za);
    free(z->crc_checked);
    *z = (struct cc_bundle_zip){0};
}

/* ---------------------------------------------------------------------------------------- */
/* Entries                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Rejects names that could point outside the bundle when extracted. */
static bool check_entry_name(const struct cc_bundle_zip *z, const char *name)
{
    if (!name || !*name)
        return fail(z, "an entry has an empty name");
    if (name[0] == '/' || name[0] == '\\')
        return fail(z, "entry \"%s\" is an absolute path; entry names must be relative", name);
    if (strchr(name, '\\'))
        return fail(z, "entry \"%s\" contains a backslash; entry names use \"/\"", name);
    if (isalpha((unsigned char)name[0]) && name[1] == ':')
        return fail(z, "entry \"%s\" starts with a drive letter; entry names must be relative",
                    name);
    for (const char *p = name; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
        if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == 0))
            return fail(z,
                        "entry \"%s\" has a \"..\" component; entry names must stay inside "
                        "the bundle",
                        name);
    return true;
}

bool cc_bundle_zip_check_names(const struct cc_bundle_zip *z)
{
    zip_int64_t n = zip_get_num_entries(z->za, 0);
    for (zip_int64_t i = 0; i < n; i++)
        if (!check_entry_name(z, zip_get_name(z->za, (zip_uint64_t)i, 0)))
            return false;
    return true;
}

bool cc_bundle_zip_has(const struct cc_bundle_zip *z, const char *name)
{
    return zip_name_locate(z->za, name, 0) >= 0;
}

/* Finds entry name (referenced by what) and stats it. Returns its index or -1. */
static zip_int64_t find_entry(const struct cc_bundle_zip *z, const char *name, const char *what,
                              zip_stat_t *st)
{
    if (!check_entry_name(z, name))
        return -1;
    zip_int64_t i = zip_name_locate(z->za, name, 0);
    if (i < 0) {
        fail(z, "%s entry \"%s\" is not in the bundle", what, name);
        return -1;
    }
    zip_stat_init(st);
    if (zip_stat_index(z->za, (zip_uint64_t)i, 0, st) != 0 || !(st->valid & ZIP_STAT_SIZE)) {
        fail(z, "cannot read the directory record of entry \"%s\": %s", name, zip_strerror(z->za));
        return -1;
    }
    return i;
}

int64_t cc_bundle_zip_find_stored(const struct cc_bundle_zip *z, const char *name, const char *what,
                                  uint64_t *size)
{
    zip_stat_t st;
    zip_int64_t i = find_entry(z, name, what, &st);
    if (i < 0)
        return -1;
    if (!(st.valid & ZIP_STAT_COMP_METHOD) || st.comp_method != ZIP_CM_STORE) {
        fail(z,
             "%s entry \"%s\" is compressed (zip method %d); tensor data must be "
             "stored uncompressed (zip -0)",
             what, name, (int)st.comp_method);
        return -1;
    }
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
        fail(z, "%s entry \"%s\" is encrypted; tensor data must be plain", what, name);
        return -1;
    }
    *size = st.size;
    return i;
}

/* ---------------------------------------------------------------------------------------- */
/* Reads                                                                                     */
/* ---------------------------------------------------------------------------------------- */

bool cc_bundle_zip_read_range(const struct cc_bundle_zip *z, int64_t i, const char *name,
                              uint64_t offset, uint64_t size, bool whole, void *dst)
{
    zip_file_t *f = zip_fopen_index(z->za, (zip_uint64_t)i, 0);
    if (!f)
        return fail(z, "cannot open entry \"%s\": %s", name, zip_strerror(z->za));
    bool ok = offset == 0 || zip_fseek(f, (zip_int64_t)offset, SEEK_SET) == 0;
    zip_int64_t got = ok ? zip_fread(f, dst, size) : -1;
    if (got < 0 || (zip_uint64_t)got != size) {
        fail(z,
             "cannot read %llu bytes at offset %llu of entry \"%s\": %s; the bundle is "
             "truncated or damaged",
             (unsigned long long)size, (unsigned long long)offset, name,
             got < 0 ? zip_file_strerror(f) : "short read");
        zip_fclose(f);
        return false;
    }
    // The whole entry: one more read must find its end, where libzip checks the CRC-32.
    char more;
    zip_int64_t extra = whole ? zip_fread(f, &more, 1) : 0;
    if (extra > 0)
        fail(z,
             "entry \"%s\" inflates to more than the %llu bytes its directory record declares; "
             "the bundle is damaged: export or copy it again",
             name, (unsigned long long)size);
    else if (extra < 0)
        fail(z, "entry \"%s\" is damaged (%s); export or copy the bundle again", name,
             zip_file_strerror(f));
    zip_fclose(f);
    return extra == 0;
}

bool cc_bundle_zip_check_crc(struct cc_bundle_zip *z, int64_t i, const char *name)
{
    if (z->crc_checked[i])
        return true;
    z->crc_checked[i] = true;
    zip_file_t *f = zip_fopen_index(z->za, (zip_uint64_t)i, 0);
    if (!f)
        return fail(z, "cannot open entry \"%s\": %s", name, zip_strerror(z->za));
    char buf[16384];
    zip_int64_t got;
    while ((got = zip_fread(f, buf, sizeof(buf))) > 0)
        continue;
    if (got < 0)
        fail(z, "entry \"%s\" is damaged (%s); copy or export the bundle again", name,
             zip_file_strerror(f));
    zip_fclose(f);
    return got == 0;
}

char *cc_bundle_zip_read(const struct cc_bundle_zip *z, const char *name, const char *what,
                         uint64_t limit, size_t *size)
{
    zip_stat_t st;
    zip_int64_t i = find_entry(z, name, what, &st);
    if (i < 0)
        return NULL;
    if (st.size > limit) {
        fail(z, "%s entry \"%s\" is %llu bytes, above the limit of %llu", what, name,
             (unsigned long long)st.size, (unsigned long long)limit);
        return NULL;
    }
    char *buf = malloc(st.size + 1);
    if (!buf) {
        fail(z, "out of memory reading entry \"%s\"", name);
        return NULL;
    }
    if (!cc_bundle_zip_read_range(z, i, name, 0, st.size, true, buf)) {
        free(buf);
        return NULL;
    }
    buf[st.size] = 0;
    *size = st.size;
    return buf;
}
