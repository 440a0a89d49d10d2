/* camclass-train — DIR/camclass-dataset.json (see dataset_settings.h). */
#include "dataset_settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

enum { MAX_SETTINGS_BYTES = 65536 };

/* The settings file's JSON object (*root, owned by the caller; NULL when the file does not
 * exist). False with err when it cannot be read or is not one JSON object of at most 64 KB. */
static bool read_settings(const char *file, cJSON **root, struct cc_error *err)
{
    *root = NULL;
    struct stat st;
    if (stat(file, &st) != 0)
        return errno == ENOENT ? true
                               : cc_error_set(err, "cannot read %s: %s", file, strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_size > MAX_SETTINGS_BYTES)
        return cc_error_set(err,
                            "%s is %s of %lld bytes; it must be a JSON file of at most %d "
                            "bytes",
                            file, cc_file_kind(st.st_mode), (long long)st.st_size,
                            MAX_SETTINGS_BYTES);
    FILE *f = fopen(file, "rb");
    char *text = f ? malloc(MAX_SETTINGS_BYTES + 1) : NULL;
    size_t n = text ? fread(text, 1, MAX_SETTINGS_BYTES, f) : 0;
    bool read_ok = f && text && !ferror(f);
    int e = errno;
    if (f)
        fclose(f);
    if (!read_ok) {
        free(text);
        return cc_error_set(err, "cannot read %s: %s", file, strerror(e));
    }
    text[n] = 0;
    const char *end = NULL;
    *root = strlen(text) == n ? cJSON_ParseWithOpts(text, &end, false) : NULL;
    bool whole = *root && cJSON_IsObject(*root) && end && !end[strspn(end, " \t\r\n")];
    free(text); // end pointed into it
    if (whole)
        return true;
    cJSON_Delete(*root);
    *root = NULL;
    return cc_error_set(err, "%s is not one JSON object ({\"roi\": \"X,Y,W,H\"}); fix or remove it",
                        file);
}

static void settings_path(const char *dir, char *file, size_t size)
{
    snprintf(file, size, "%s/camclass-dataset.json", dir);
}

bool cc_dataset_read_roi(const char *dir, struct cc_roi *roi, bool *found, struct cc_error *err)
{
    char file[4096];
    settings_path(dir, file, sizeof(file));
    cJSON *root;
    *found = false;
    if (!read_settings(file, &root, err))
        return false;
    const cJSON *jr = cJSON_GetObjectItemCaseSensitive(root, "roi");
    struct cc_error why = {0};
    struct cc_roi r = {0};
    bool ok = true;
    if (jr && !cJSON_IsString(jr))
        ok = cc_error_set(err, "%s: \"roi\" must be a string such as \"0.5,0.25,0.5,0.5\"", file);
    else if (jr && !cc_roi_parse(jr->valuestring, &r, &why))
        ok = cc_error_set(err, "%s: \"roi\" %s", file, why.msg);
    cJSON_Delete(root);
    if (ok && jr)
        *roi = r, *found = true;
    return ok;
}

bool cc_dataset_write_roi(const char *dir, const struct cc_roi *roi, struct cc_error *err)
{
    char file[4096], tmp[4200], text[96];
    settings_path(dir, file, sizeof(file));
    cJSON *root;
    if (!read_settings(file, &root, err))
        return false;
    if (!root && !(root = cJSON_CreateObject()))
        return cc_error_set(err, "out of memory for %s", file);
    cc_roi_format(roi, text, sizeof(text));
    cJSON_DeleteItemFromObjectCaseSensitive(root, "roi");
    cJSON_AddStringToObject(root, "roi", text);
    char *json = cJSON_Print(root);
    cJSON_Delete(root);
    snprintf(tmp, sizeof(tmp), "%s/.camclass-dataset.json-XXXXXX", dir);
    int fd = json ? mkstemp(tmp) : -1;
    size_t len = json ? strlen(json) : 0;
    bool ok = fd >= 0 && write(fd, json, len) == (ssize_t)len && write(fd, "\n", 1) == 1 &&
              fsync(fd) == 0;
    int e = json ? errno : ENOMEM;
    if (fd >= 0 && close(fd) != 0 && ok)
        ok = false, e = errno;
    ok = ok && rename(tmp, file) == 0;
    if (!ok) {
        e = e ? e : errno;
        if (fd >= 0)
            unlink(tmp);
    }
    free(json);
    return ok || cc_error_set(err, "cannot write %s: %s", file, strerror(e));
}
