/* camclass — GET and POST /samples (--collect with --serve): the collected pictures' counts, and
 * one picture saved under a label, in camclass terms (http.c owns libmicrohttpd and calls this).
 *
 *   struct cc_predict_answer a = cc_samples_post(&cfg, label, body, size);  // any thread
 *   send a.status with a.json (application/json); free(a.json);
 *
 * POST /samples?label=NAME saves the body (a PNG or JPEG, raw or the multipart field "file", as
 * /predict takes it, decoded under the same decode budget: a JPEG is kept as it came, a PNG is
 * encoded as JPEG) or, with an empty body, the newest camera frame (the page's button). 201
 * {"label", "file": "LABEL/NAME.jpg", "counts": {CLASS: N, ...}}. Refusals, each
 * {"error": "<one line>", "status": N}: 400 no ?label= or an unsafe one (the rule named), 409
 * an empty body with no camera or input to take a frame from, 415 neither PNG nor JPEG, 422 an
 * image that does not decode, 503 no frame yet or the decode budget spent (Retry-After), 507 the
 * disk is full, 500 another write error. GET /samples: 200 {"counts": {...}} in key order.
 *
 * Threads: any number at once; cfg is read only, the store locks itself.
 */
#ifndef CC_SAMPLES_H
#define CC_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode_budget.h"
#include "pipeline.h"
#include "predict.h"
#include "sample_store.h"

struct cc_samples_config {
    struct cc_sample_store *store;   // not owned
    struct cc_pipeline *pipeline;    // the newest frame (keep_frames on); not owned
    struct cc_decode_budget *budget; // /predict's; not owned
    bool has_source;                 // a camera or input runs (else no frame to take)
};

/* ?label= of a POST /samples (NULL: none given), checked from the headers before its body is
 * read: status 0 (json NULL) when it will do, else the 400 refusal. */
struct cc_predict_answer cc_samples_check_label(const char *label);

/* POST /samples?label=label (NULL: none given) with the body (size 0: the newest frame). */
struct cc_predict_answer cc_samples_post(const struct cc_samples_config *cfg, const char *label,
                                         const uint8_t *data, size_t size);

/* GET /samples. */
struct cc_predict_answer cc_samples_list(const struct cc_samples_config *cfg);

#endif
