/* camclass-train — DIR/camclass-dataset.json (see dataset_settings.h). */
#include "dataset_settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

enum { MAX_SETTINGS_BYTES = 65536 };

/* The "roi" of the settings text (NUL-terminated) of file. */
static bool settings_roi(const char *text, const char *file, struct cc_roi *roi,
                         struct cc_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, false);
    bool ok = root && cJSON_IsObject(root) && end && !end[strspn(end, " \t\r\n")];
    if (!ok) {
        cJSON_Delete(root);
        return cc_error_set(err,
                            "%s is not one JSON object ({\"roi\": \"X,Y,W,H\"}); fix or "
                            "remove it",
                            file);
    }
    const cJSON *jr = cJSON_GetObjectItemCaseSensitive(root, "roi");
    struct cc_error why = {0};
    if (jr && !cJSON_IsString(jr))
        ok = cc_error_set(err, "%s: \"roi\" must be a string such as \"0.5,0.25,0.5,0.5\"", file);
    else if (jr && !cc_roi_parse(jr->valuestring, roi, &why))
        ok = cc_error_set(err, "%s: \"roi\" %s", file, why.msg);
    cJSON_Delete(root);
    return ok;
}

bool cc_dataset_read_roi(const char *dir, struct cc_roi *roi, bool *found, struct cc_error *err)
{
    char file[4096];
    snprintf(file, sizeof(file), "%s/camclass-dataset.json", dir);
    *found = false;
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
    struct cc_roi r = {0};
    bool ok = strlen(text) == n
                  ? settings_roi(text, file, &r, err)
                  : cc_error_set(err, "%s holds a NUL byte; it must be JSON text", file);
    free(text);
    if (ok)
        *roi = r;
    *found = ok;
    return ok;
}
