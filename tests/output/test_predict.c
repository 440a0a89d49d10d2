/* camclass — one POST /predict without a server (app/output/predict.c): the answer and its
 * HTTP status for each kind of body, on a requests-only pipeline (no source) with the self-test
 * model on the reference backend.
 *
 * - 200: a PNG and the same picture as JPEG answer the top k in order, the model's name and
 *   the ROI applied; the PNG's top-1 is what camclass --input gives for it ("100% colour
 *   bars"), and the JPEG's is the same.
 * - 400 an empty body, 415 bytes that are no image, 422 a truncated PNG, a PNG that declares
 *   more pixels than the limit (refused from its header) and a pixel ROI outside the picture;
 *   every error body is {"error": one line, "status": N}.
 * - ?roi= arguments: good ones parse, bad ones give a line that names ?roi=.
 * - 503 once the pipeline is stopped.
 *
 *   test_predict MODEL PNG JPEG */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine.h"
#include "predict.h"
#include "testutil.h"

struct fixture {
    struct cc_engine *engine;
    struct cc_pipeline *pipeline;
    struct cc_decode_budget *budget;
    struct cc_predict_config cfg;
};

static bool fixture_open(struct fixture *f, const char *model)
{
    struct cc_error err = {0};
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_REF;
    opt.poison = true;
    *f = (struct fixture){0};
    f->engine = cc_engine_create(model, &opt, &err);
    struct cc_pipeline_config pc = {.engine = f->engine, .top_k = 5, .unknown_threshold = 0};
    if (f->engine)
        f->pipeline = cc_pipeline_create(&pc, &err);
    if (f->pipeline && !cc_pipeline_start(f->pipeline, &err)) {
        cc_pipeline_destroy(f->pipeline);
        f->pipeline = NULL;
    }
    f->budget = f->pipeline ? cc_decode_budget_create(2, CC_PREDICT_DECODE_UNITS, &err) : NULL;
    f->cfg = (struct cc_predict_config){f->pipeline, f->budget};
    return CHECKF(f->budget != NULL, "fixture: %s", err.msg);
}

static void fixture_close(struct fixture *f)
{
    cc_pipeline_destroy(f->pipeline);
    cc_decode_budget_destroy(f->budget);
    cc_engine_destroy(f->engine);
}

/* The answer to body as JSON, checked for status; NULL (and a failure) when it is not JSON. */
static cJSON *ask(struct fixture *f, const void *body, size_t size, int k, const struct cc_roi *roi,
                  int status, const char *what)
{
    struct cc_predict_answer a = cc_predict_run(&f->cfg, body, size, k, roi);
    cJSON *j = a.json ? cJSON_Parse(a.json) : NULL;
    CHECKF(a.status == status && j, "%s: status %d (want %d), body %s", what, a.status, status,
           a.json ? a.json : "(none)");
    free(a.json);
    return j;
}

/* An error answer: {"error": one line, "status": status}. */
static void expect_error(struct fixture *f, const void *body, size_t size, const struct cc_roi *roi,
                         int status, const char *says, const char *what)
{
    cJSON *j = ask(f, body, size, 3, roi, status, what);
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(j, "error"));
    cJSON *st = cJSON_GetObjectItem(j, "status");
    CHECKF(msg && !strchr(msg, '\n') && strstr(msg, says) && cJSON_IsNumber(st) &&
               st->valueint == status,
           "%s: error %s naming %s", what, msg ? msg : "(none)", says);
    cJSON_Delete(j);
}

/* The top array's labels and scores: k entries, scores falling; the first label and score. */
static bool top_of(cJSON *j, int k, const char **label, double *score, const char *what)
{
    cJSON *top = cJSON_GetObjectItem(j, "top");
    bool ok = cJSON_IsArray(top) && cJSON_GetArraySize(top) == k;
    double prev = 2;
    for (int i = 0; ok && i < k; i++) {
        cJSON *e = cJSON_GetArrayItem(top, i);
        double s = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "score"));
        ok = cJSON_GetStringValue(cJSON_GetObjectItem(e, "label")) && s <= prev && s >= 0;
        prev = s;
    }
    if (!CHECKF(ok, "%s: top is %d classes, scores falling", what, k))
        return false;
    cJSON *first = cJSON_GetArrayItem(top, 0);
    *label = cJSON_GetStringValue(cJSON_GetObjectItem(first, "label"));
    *score = cJSON_GetNumberValue(cJSON_GetObjectItem(first, "score"));
    return true;
}

static void test_answers(struct fixture *f, const char *png_path, const char *jpg_path)
{
    size_t png_size = 0, jpg_size = 0;
    uint8_t *png = tu_read_file(png_path, &png_size), *jpg = tu_read_file(jpg_path, &jpg_size);
    if (!CHECKF(png && jpg, "read %s and %s", png_path, jpg_path))
        goto done;
    const char *label = NULL, *jlabel = NULL;
    double score = 0, jscore = 0;
    cJSON *j = ask(f, png, png_size, 3, NULL, 200, "png");
    if (j && top_of(j, 3, &label, &score, "png")) {
        CHECKF(!strcmp(label, "100% colour bars"), "png: top-1 %s", label);
        const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(j, "model"));
        const char *roi = cJSON_GetStringValue(cJSON_GetObjectItem(j, "roi"));
        CHECKF(model && !strcmp(model, "selftest_mobilenet_v2_0.35"), "png: model %s", model);
        CHECKF(roi && !strcmp(roi, "none"), "png: roi %s", roi);
    }
    cJSON *jj = ask(f, jpg, jpg_size, 5, NULL, 200, "jpeg");
    if (jj && top_of(jj, 5, &jlabel, &jscore, "jpeg") && label)
        CHECKF(!strcmp(jlabel, label), "jpeg: top-1 %s, png's %s", jlabel, label);
    cJSON_Delete(jj);
    cJSON_Delete(j);
    // A pixel ROI outside the 320x240 picture; a fraction ROI is applied and named.
    struct cc_roi outside = {CC_ROI_PIXELS, 400, 0, 40, 40}, half = {0};
    struct cc_error err = {0};
    expect_error(f, png, png_size, &outside, 422, "outside", "roi outside");
    CHECK(cc_roi_parse("0,0,0.5,1", &half, &err));
    j = ask(f, png, png_size, 1, &half, 200, "roi half");
    const char *roi = cJSON_GetStringValue(cJSON_GetObjectItem(j, "roi"));
    CHECKF(roi && strcmp(roi, "none") != 0, "roi half: named %s", roi ? roi : "(none)");
    cJSON_Delete(j);
    // Cut short: the signature and the header decode, the pixels do not.
    expect_error(f, png, png_size / 3, NULL, 422, "", "truncated png");
done:
    free(png);
    free(jpg);
}

/* A PNG whose header declares 60000 x 60000 RGB pixels (3.6 G, over the limit), CRCs right,
 * with a first IDAT of 64 zero bytes. */
static void test_bomb(struct fixture *f)
{
    static const uint8_t head[] = {
        0x89, 'P',  'N',  'G',  '\r', '\n', 0x1a, '\n', 0,    0,    0,    13,  'I', 'H', 'D',
        'R',  0,    0,    0xea, 0x60, 0,    0,    0xea, 0x60, 8,    2,    0,   0,   0,   0x0f,
        0xb0, 0xe2, 0x15, 0,    0,    0,    12,   'I',  'D',  'A',  'T',  120, 156, 99,  96,
        160,  12,   0,    0,    0,    64,   0,    1,    0xb7, 0x34, 0x7c, 0xef};
    expect_error(f, head, sizeof(head), NULL, 422, "pixels", "declared 60000x60000");
}

static void test_refusals(struct fixture *f)
{
    expect_error(f, "", 0, NULL, 400, "empty", "empty body");
    const char text[] = "hello, this is not a picture";
    expect_error(f, text, sizeof(text) - 1, NULL, 415, "not a", "text body");
    struct cc_roi roi;
    char msg[256] = "";
    CHECK(cc_predict_roi_arg("0.1,0.1,0.5,0.5", &roi, msg, sizeof(msg)));
    CHECK(cc_predict_roi_arg("10,10,50,50px", &roi, msg, sizeof(msg)));
    CHECK(cc_predict_roi_arg("none", &roi, msg, sizeof(msg)));
    CHECKF(!cc_predict_roi_arg("0.5,0.5,0.8", &roi, msg, sizeof(msg)) && strstr(msg, "?roi="),
           "three numbers: %s", msg);
    CHECKF(!cc_predict_roi_arg("0.9,0,0.5,1", &roi, msg, sizeof(msg)) && strstr(msg, "?roi="),
           "past the right edge: %s", msg);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_predict MODEL PNG JPEG\n");
        return 2;
    }
    struct fixture f;
    if (fixture_open(&f, argv[1])) {
        test_refusals(&f);
        test_bomb(&f);
        test_answers(&f, argv[2], argv[3]);
        size_t size = 0;
        uint8_t *png = tu_read_file(argv[2], &size);
        cc_pipeline_stop(f.pipeline);
        if (CHECK(png != NULL))
            expect_error(&f, png, size, NULL, 503, "", "stopped pipeline");
        free(png);
    }
    fixture_close(&f);
    return tu_exit_code();
}
