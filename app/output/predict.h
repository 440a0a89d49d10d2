/* camclass — one POST /predict: image bytes → the JSON answer and its HTTP status, in camclass
 * terms (no HTTP library here: http.c owns libmicrohttpd and calls this).
 *
 *   struct cc_predict_answer a = cc_predict_run(&cfg, body, size, k);   // any thread
 *   send a.status with a.json (application/json); free(a.json);
 *
 * The image is decoded with the file inputs' decoders and limits (decode.h: PNG or JPEG,
 * 40 M pixels, 16384 on a side) and preprocessed exactly as a file input's frame
 * (preprocess.h) on the calling thread, so a connection never holds the engine while it
 * decodes; only the input tensor is queued to the inference thread (cc_pipeline_classify).
 *
 * Statuses: 200 the answer; 400 an empty body; 415 a body that is neither PNG nor JPEG;
 * 422 an image that does not decode (truncated, corrupt) or declares more pixels than the
 * limit (a decompression bomb: refused from its header, before anything is allocated);
 * 503 the pipeline is stopping or has failed; 500 out of memory. Every error body is
 * {"error": "<one line: the problem and the way out>", "status": N}.
 *
 * Threads: cc_predict_run may run on many threads at once; cfg is read only.
 */
#ifndef CC_PREDICT_H
#define CC_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "pipeline.h"

struct cc_predict_config {
    struct cc_pipeline *pipeline; // classifies the tensor; not owned
    const struct cc_model *model; // input spec and size, name; not owned
};

struct cc_predict_answer {
    int status; // HTTP status
    char *json; // the body (one JSON object and a newline), malloc'd; NULL only when out of
                // memory (then status is 500)
};

/* Classifies one image (data, size bytes) with the top k (1..CC_RESULT_MAX_TOP). */
struct cc_predict_answer cc_predict_run(const struct cc_predict_config *cfg, const uint8_t *data,
                                        size_t size, int k);

/* An error answer: {"error": msg, "status": status}. */
struct cc_predict_answer cc_predict_error(int status, const char *msg);

#endif
