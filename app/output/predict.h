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
 * Decodes are bounded (decode_budget.h): at most the budget's slots at once (waited for up to
 * CC_PREDICT_SLOT_WAIT_S), and the declared pixels of those in flight, a progressive JPEG's
 * three times, at most CC_PREDICT_DECODE_UNITS (not waited for). The image is freed once
 * preprocessed, before the tensor waits for the engine.
 *
 * Statuses: 200 the answer; 400 an empty body (or a malformed ?roi=, refused by http.c before
 * the body with cc_predict_roi_arg's line); 415 a body that is neither PNG nor JPEG;
 * 422 an image that does not decode (truncated, corrupt) or declares more pixels than the
 * limit (a decompression bomb: refused from its header, before anything is allocated);
 * 503 the pipeline is stopping or has failed, or the decode budget is spent (retry: then
 * Retry-After: 1); 500 out of memory. Every error body is
 * {"error": "<one line: the problem and the way out>", "status": N}.
 *
 * Threads: cc_predict_run may run on many threads at once; cfg is read only. The model (input
 * spec, name, labels) is the pipeline's in use, held from the tensor to the answer
 * (cc_pipeline_hold_model), so that a reload waits for the request.
 */
#ifndef CC_PREDICT_H
#define CC_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "decode_budget.h"
#include "model.h"
#include "pipeline.h"

/* All the decodes in flight may cost this much: one progressive JPEG at the pixel limit
 * (about 350 MB: 344 MB measured for 6324x6324), or three baseline JPEGs or PNGs there. */
#define CC_PREDICT_DECODE_UNITS (3LL * CC_IMAGE_MAX_PIXELS)
enum { CC_PREDICT_SLOT_WAIT_S = 10 }; // a request waits this long for a decode slot, then 503

struct cc_predict_config {
    struct cc_pipeline *pipeline;    // classifies the tensor; not owned
    struct cc_decode_budget *budget; // decodes at once and their memory; not owned
};

struct cc_predict_answer {
    bool retry; // a 503 of the decode budget: the client may retry in a second
    int status; // HTTP status
    char *json; // the body (one JSON object and a newline), malloc'd; NULL only when out of
                // memory (then status is 500)
};

/* Classifies one image (data, size bytes) with the top k (1..CC_RESULT_MAX_TOP), cropped to
 * roi (?roi=), or, when roi is NULL, to the ROI camclass's frames use (--roi, else the model's;
 * cc_pipeline_input_spec). The answer names the ROI applied ("roi": "none" or its text). A
 * pixel ROI outside the image is 422. */
struct cc_predict_answer cc_predict_run(const struct cc_predict_config *cfg, const uint8_t *data,
                                        size_t size, int k, const struct cc_roi *roi);

/* ?roi=ARG of POST /predict: X,Y,W,H, X,Y,W,Hpx or none (roi.h). False with msg (the 400's
 * line) when it is malformed. */
bool cc_predict_roi_arg(const char *arg, struct cc_roi *roi, char *msg, size_t msg_size);

/* Decodes an image (PNG or JPEG, checked by the caller) into img under the decode budget (as
 * /predict and POST /samples do): true with the budget's share taken (*cost: give it back with
 * cc_decode_budget_give once img is freed); false with the refusal in *a (503 budget, 422 a
 * bad image; nothing taken). */
bool cc_predict_decode(struct cc_decode_budget *budget, const uint8_t *data, size_t size,
                       struct cc_image *img, int64_t *cost, struct cc_predict_answer *a);

/* The frame a file input makes of a decoded image (source_file.c): its pixels, not copied. */
struct cc_frame cc_predict_image_frame(const struct cc_image *img, int64_t timestamp_ns);

/* An error answer: {"error": msg, "status": status}. */
struct cc_predict_answer cc_predict_error(int status, const char *msg);

#endif
