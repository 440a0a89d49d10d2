/* camclass — GET and POST /samples (see samples.h). */
#include "samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "clock.h"

/* The answer: {"label", "file", "counts"} (label NULL: counts only) with status. */
static struct cc_predict_answer counts_answer(const struct cc_samples_config *cfg, int status,
                                              const char *label, const char *file)
{
    struct cc_sample_class c[CC_SAMPLE_STORE_MAX_CLASSES];
    int n = cc_sample_store_classes(cfg->store, c, CC_SAMPLE_STORE_MAX_CLASSES);
    cJSON *o = cJSON_CreateObject(), *counts = cJSON_CreateObject();
    bool ok = o && counts;
    if (ok && label) {
        char path[CC_SAMPLE_STORE_FILE_MAX + 80];
        snprintf(path, sizeof(path), "%s/%s", label, file);
        ok = cJSON_AddStringToObject(o, "label", label) && cJSON_AddStringToObject(o, "file", path);
    }
    for (int i = 0; ok && i < n && i < CC_SAMPLE_STORE_MAX_CLASSES; i++)
        ok = cJSON_AddNumberToObject(counts, c[i].name, c[i].count) != NULL;
    if (ok && (ok = cJSON_AddItemToObject(o, "counts", counts)))
        counts = NULL; // o's now
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(counts);
    cJSON_Delete(o);
    char *line = text ? malloc(strlen(text) + 2) : NULL;
    if (line)
        sprintf(line, "%s\n", text);
    cJSON_free(text);
    return (struct cc_predict_answer){.status = line ? status : 500, .json = line};
}

struct cc_predict_answer cc_samples_list(const struct cc_samples_config *cfg)
{
    return counts_answer(cfg, 200, NULL, NULL);
}

/* A save's status as the HTTP status of its refusal. */
static struct cc_predict_answer save_refused(enum cc_sample_status st, const char *msg)
{
    return cc_predict_error(st == CC_SAMPLE_BAD_LABEL   ? 400
                            : st == CC_SAMPLE_BAD_IMAGE ? 422
                            : st == CC_SAMPLE_DISK_FULL ? 507
                                                        : 500,
                            msg);
}

/* An empty body: the newest frame the pipeline classified. */
static struct cc_predict_answer save_frame(const struct cc_samples_config *cfg, const char *label)
{
    if (!cfg->has_source)
        return cc_predict_error(409, "no camera frame to save: this camclass runs without "
                                     "--camera or --input; send the picture as the body");
    uint64_t seen = 0;
    struct cc_result r;
    struct cc_frame f = {0};
    if (!cc_pipeline_latest(cfg->pipeline, &seen, &r, &f) || !f.size) {
        free(f.data);
        struct cc_predict_answer a =
            cc_predict_error(503, "no frame has been classified yet; retry in a second");
        a.retry = true;
        return a;
    }
    char file[CC_SAMPLE_STORE_FILE_MAX];
    struct cc_error err = {0};
    enum cc_sample_status st =
        cc_sample_store_save_frame(cfg->store, label, &f, file, sizeof(file), &err);
    free(f.data);
    return st == CC_SAMPLE_SAVED ? counts_answer(cfg, 201, label, file) : save_refused(st, err.msg);
}

/* A posted image: decoded under the budget (a JPEG kept as it came, the others encoded). */
static struct cc_predict_answer save_posted(const struct cc_samples_config *cfg, const char *label,
                                            const uint8_t *data, size_t size)
{
    if (!cc_image_format(data, size))
        return cc_predict_error(415, "the body is not a " CC_IMAGE_FORMATS " image (by its first "
                                     "bytes); send one of those, or nothing for the camera's "
                                     "frame");
    struct cc_predict_answer a;
    struct cc_image img = {0};
    int64_t cost;
    if (!cc_predict_decode(cfg->budget, data, size, &img, &cost, &a)) {
        cc_image_finish(&img);
        return a;
    }
    char file[CC_SAMPLE_STORE_FILE_MAX];
    struct cc_error err = {0};
    enum cc_sample_status st;
    if (cc_is_jpeg(data, size)) {
        st = cc_sample_store_save_jpeg(cfg->store, label, data, size, file, sizeof(file), &err);
    } else {
        struct cc_frame f = cc_predict_image_frame(&img, cc_now_ns());
        st = cc_sample_store_save_frame(cfg->store, label, &f, file, sizeof(file), &err);
    }
    cc_image_finish(&img);
    cc_decode_budget_give(cfg->budget, cost);
    return st == CC_SAMPLE_SAVED ? counts_answer(cfg, 201, label, file) : save_refused(st, err.msg);
}

struct cc_predict_answer cc_samples_check_label(const char *label)
{
    if (!label || !label[0])
        return cc_predict_error(400, "give the class as ?label=NAME (POST /samples?label=open)");
    struct cc_error err = {0};
    if (!cc_sample_store_check_label(label, "the label", &err))
        return cc_predict_error(400, err.msg);
    return (struct cc_predict_answer){0};
}

struct cc_predict_answer cc_samples_post(const struct cc_samples_config *cfg, const char *label,
                                         const uint8_t *data, size_t size)
{
    struct cc_predict_answer a = cc_samples_check_label(label);
    if (a.status)
        return a;
    return size ? save_posted(cfg, label, data, size) : save_frame(cfg, label);
}
