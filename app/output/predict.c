/* camclass — one POST /predict: decode, preprocess, classify, answer (see predict.h). */
#include "predict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "decode.h"
#include "preprocess.h"
#include "clock.h"

/* The printed object and a newline, or NULL when out of memory. Frees obj. */
static char *print_json(cJSON *obj)
{
    char *text = obj ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *line = malloc(n + 2);
    if (line) {
        memcpy(line, text, n);
        memcpy(line + n, "\n", 2);
    }
    cJSON_free(text);
    return line;
}

struct cc_predict_answer cc_predict_error(int status, const char *msg)
{
    cJSON *o = cJSON_CreateObject();
    if (o && (!cJSON_AddStringToObject(o, "error", msg) ||
              !cJSON_AddNumberToObject(o, "status", status))) {
        cJSON_Delete(o);
        o = NULL;
    }
    struct cc_predict_answer a = {status, print_json(o)};
    if (!a.json)
        a.status = 500;
    return a;
}

/* The 200 answer: model, backend, image size, top-k and the times. */
static struct cc_predict_answer answer(const struct cc_predict_config *cfg,
                                       const struct cc_image *img, const struct cc_result *r,
                                       double decode_ms, double preprocess_ms, double total_ms)
{
    cJSON *o = cJSON_CreateObject(), *top = cJSON_CreateArray();
    bool ok = o && top && cJSON_AddStringToObject(o, "model", cfg->model->name) &&
              cJSON_AddStringToObject(o, "backend", r->backend ? r->backend : "") &&
              cJSON_AddNumberToObject(o, "width", img->width) &&
              cJSON_AddNumberToObject(o, "height", img->height);
    for (int i = 0; ok && i < r->n_top; i++) {
        cJSON *c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(top, c)) {
            cJSON_Delete(c);
            ok = false;
            break;
        }
        ok = cJSON_AddNumberToObject(c, "index", r->top[i].index) &&
             cJSON_AddStringToObject(c, "label", r->top[i].label) &&
             cJSON_AddNumberToObject(c, "score", r->top[i].score);
    }
    if (ok && (ok = cJSON_AddItemToObject(o, "top", top)))
        top = NULL; // o's now; a refused add leaves it ours to delete below
    ok = ok && cJSON_AddNumberToObject(o, "latency_ms", total_ms) &&
         cJSON_AddNumberToObject(o, "decode_ms", decode_ms) &&
         cJSON_AddNumberToObject(o, "preprocess_ms", preprocess_ms) &&
         cJSON_AddNumberToObject(o, "queue_ms", r->dequeue_ms) &&
         cJSON_AddNumberToObject(o, "inference_ms", r->inference_ms);
    cJSON_Delete(top);
    if (!ok) {
        cJSON_Delete(o);
        return (struct cc_predict_answer){500, NULL};
    }
    struct cc_predict_answer a = {200, print_json(o)};
    if (!a.json)
        a.status = 500;
    return a;
}

struct cc_predict_answer cc_predict_run(const struct cc_predict_config *cfg, const uint8_t *data,
                                        size_t size, int k)
{
    int64_t t0 = cc_now_ns();
    if (!size)
        return cc_predict_error(400, "no image: the body is empty; send a PNG or JPEG as the "
                                     "multipart field \"file\" or as the body itself");
    bool png = cc_is_png(data, size);
    if (!png && !cc_is_jpeg(data, size))
        return cc_predict_error(415, "the body is neither a PNG nor a JPEG image (by its first "
                                     "bytes); send one of those");
    struct cc_image img = {0};
    struct cc_error err = {0};
    const char *name = png ? "the PNG image" : "the JPEG image";
    bool ok = png ? cc_decode_png(data, size, name, &img, &err)
                  : cc_decode_jpeg(data, size, name, &img, &err);
    if (!ok) {
        cc_image_finish(&img);
        return cc_predict_error(422, err.msg);
    }
    int64_t t1 = cc_now_ns();

    // The frame a file input makes of the same image (source_file.c), preprocessed here.
    struct cc_frame f = {
        .format = img.channels == 1 ? CC_PIX_GREY : CC_PIX_RGB24,
        .width = img.width,
        .height = img.height,
        .stride = img.width * img.channels,
        .data = img.pixels,
        .size = (size_t)img.width * img.height * img.channels,
        .capacity = img.capacity,
        .timestamp_ns = t0,
    };
    const struct cc_model *m = cfg->model;
    const struct cc_tensor *in = &m->tensors[m->input.tensor];
    int in_h = (int)in->shape[2], in_w = (int)in->shape[3];
    float *x = malloc((size_t)3 * in_w * in_h * sizeof(float));
    struct cc_preprocess *pp = cc_preprocess_create(&err);
    struct cc_predict_answer a;
    if (!x || !pp) {
        a = cc_predict_error(500, "out of memory for the input tensor");
    } else if (!cc_preprocess(pp, &f, &m->input, in_w, in_h, x, &err)) {
        a = cc_predict_error(422, err.msg);
    } else {
        int64_t t2 = cc_now_ns();
        struct cc_result r;
        if (!cc_pipeline_classify(cfg->pipeline, x, k, &r, &err))
            a = cc_predict_error(503, err.msg);
        else
            a = answer(cfg, &img, &r, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
                       (double)(cc_now_ns() - t0) / 1e6);
    }
    cc_preprocess_destroy(pp);
    free(x);
    cc_image_finish(&img);
    return a;
}
