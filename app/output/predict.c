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
    struct cc_predict_answer a = {.status = status, .json = print_json(o)};
    if (!a.json)
        a.status = 500;
    return a;
}

/* The 200 answer: model, backend, image size, the ROI applied, top-k and the times. */
static struct cc_predict_answer answer(const struct cc_model *m, int width, int height,
                                       const char *roi, const struct cc_result *r,
                                       double decode_ms, double preprocess_ms, double total_ms)
{
    cJSON *o = cJSON_CreateObject(), *top = cJSON_CreateArray();
    bool ok = o && top && cJSON_AddStringToObject(o, "model", m->name) &&
              cJSON_AddStringToObject(o, "backend", r->backend ? r->backend : "") &&
              cJSON_AddNumberToObject(o, "width", width) &&
              cJSON_AddNumberToObject(o, "height", height) &&
              cJSON_AddStringToObject(o, "roi", roi);
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
    if (ok && r->unknown)
        ok = cJSON_AddTrueToObject(o, "unknown") != NULL;
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
        return (struct cc_predict_answer){.status = 500};
    }
    struct cc_predict_answer a = {.status = 200, .json = print_json(o)};
    if (!a.json)
        a.status = 500;
    return a;
}

/* What decoding the image will hold, in the budget's units: its declared pixels, three times
 * for a progressive JPEG (its coefficients besides the pixels); 0 when the header does not read
 * or declares more than the limit (the decode refuses it before allocating). */
static int64_t decode_cost(const uint8_t *data, size_t size)
{
    long long w, h;
    bool progressive;
    if (!cc_image_declared(data, size, &w, &h, &progressive) || w <= 0 || h <= 0 ||
        w > CC_IMAGE_MAX_SIDE || h > CC_IMAGE_MAX_SIDE || w * h > CC_IMAGE_MAX_PIXELS)
        return 0;
    return w * h * (progressive ? 3 : 1);
}

struct cc_frame cc_predict_image_frame(const struct cc_image *img, int64_t timestamp_ns)
{
    return (struct cc_frame){
        .format = img->channels == 1 ? CC_PIX_GREY : CC_PIX_RGB24,
        .width = img->width,
        .height = img->height,
        .stride = img->width * img->channels,
        .data = img->pixels,
        .size = (size_t)img->width * img->height * img->channels,
        .capacity = img->capacity,
        .timestamp_ns = timestamp_ns,
    };
}

bool cc_predict_decode(struct cc_decode_budget *budget, const uint8_t *data, size_t size,
                       struct cc_image *img, int64_t *cost, struct cc_predict_answer *a)
{
    *cost = decode_cost(data, size);
    switch (cc_decode_budget_take(budget, *cost, (int64_t)CC_PREDICT_SLOT_WAIT_S * 1000000000)) {
    case CC_DECODE_BUDGET_TAKEN:
        break;
    case CC_DECODE_BUDGET_NO_SLOT:
        *a = cc_predict_error(503, "every decode slot stayed busy for 10 s (as many images "
                                   "decode at once as there are CPUs); retry later");
        a->retry = true;
        return false;
    case CC_DECODE_BUDGET_NO_ROOM:
        *a = cc_predict_error(503, "the images being decoded now hold the memory set aside for "
                                   "decoding (large or progressive JPEGs); retry in a second, "
                                   "or send a smaller image");
        a->retry = true;
        return false;
    }
    struct cc_error err = {0};
    char name[32];
    snprintf(name, sizeof(name), "the %s image", cc_image_format(data, size));
    if (cc_image_decode(data, size, name, img, &err))
        return true;
    *a = cc_predict_error(422, err.msg);
    cc_decode_budget_give(budget, *cost);
    return false;
}

/* Decodes and preprocesses the image into x (3, in_h, in_w) under the decode budget, the
 * image freed before returning: true with its size in *w, *h and the decode and preprocess
 * times in ns[0], ns[1]; else false with the refusal in *a. */
static bool prepare(const struct cc_predict_config *cfg, const struct cc_model *m,
                    const struct cc_input_spec *spec, const uint8_t *data, size_t size, float *x,
                    int *w, int *h, int64_t ns[2], struct cc_predict_answer *a)
{
    int64_t t0 = cc_now_ns(), cost;
    struct cc_image img = {0};
    struct cc_error err = {0};
    if (!cc_predict_decode(cfg->budget, data, size, &img, &cost, a)) {
        cc_image_finish(&img);
        return false;
    }
    ns[0] = cc_now_ns() - t0;
    *w = img.width, *h = img.height;
    struct cc_frame f = cc_predict_image_frame(&img, t0); // preprocessed here
    const struct cc_tensor *in = &m->tensors[m->input.tensor];
    struct cc_preprocess *pp = NULL;
    bool ok = true;
    if (!(pp = cc_preprocess_create(&err))) {
        *a = cc_predict_error(500, "out of memory for preprocessing");
        ok = false;
    } else if (!(ok = cc_preprocess(pp, &f, spec, (int)in->shape[3], (int)in->shape[2], x,
                                    &err))) {
        *a = cc_predict_error(422, err.msg);
    }
    ns[1] = cc_now_ns() - t0 - ns[0];
    cc_preprocess_destroy(pp);
    cc_image_finish(&img);
    cc_decode_budget_give(cfg->budget, cost);
    return ok;
}

struct cc_predict_answer cc_predict_run(const struct cc_predict_config *cfg, const uint8_t *data,
                                        size_t size, int k, const struct cc_roi *roi)
{
    int64_t t0 = cc_now_ns();
    if (!size)
        return cc_predict_error(400, "no image: the body is empty; send a PNG, JPEG, WebP or "
                                     "BMP as the multipart field \"file\" or as the body "
                                     "itself");
    if (!cc_image_format(data, size))
        return cc_predict_error(415, "the body is not a " CC_IMAGE_FORMATS " image (by its "
                                     "first bytes); send one of those");
    const struct cc_model *m = cc_pipeline_hold_model(cfg->pipeline);
    const struct cc_tensor *in = &m->tensors[m->input.tensor];
    float *x = malloc((size_t)3 * in->shape[3] * in->shape[2] * sizeof(float));
    if (!x) {
        cc_pipeline_release_model(cfg->pipeline);
        return cc_predict_error(500, "out of memory for the input tensor");
    }
    int w = 0, h = 0;
    int64_t ns[2] = {0, 0};
    struct cc_predict_answer a;
    struct cc_input_spec spec = cc_pipeline_input_spec(cfg->pipeline, m);
    if (roi)
        spec.roi = *roi;
    char roi_text[96];
    cc_roi_format(&spec.roi, roi_text, sizeof(roi_text));
    if (prepare(cfg, m, &spec, data, size, x, &w, &h, ns, &a)) {
        struct cc_result r;
        struct cc_error err = {0};
        if (!cc_pipeline_classify(cfg->pipeline, x, k, &r, &err))
            a = cc_predict_error(503, err.msg);
        else
            a = answer(m, w, h, roi_text, &r, (double)ns[0] / 1e6, (double)ns[1] / 1e6,
                       (double)(cc_now_ns() - t0) / 1e6);
    }
    cc_pipeline_release_model(cfg->pipeline);
    free(x);
    return a;
}

bool cc_predict_roi_arg(const char *arg, struct cc_roi *roi, char *msg, size_t msg_size)
{
    struct cc_error err = {0};
    if (cc_roi_parse(arg, roi, &err))
        return true;
    snprintf(msg, msg_size, "?roi= %s", err.msg);
    return false;
}
