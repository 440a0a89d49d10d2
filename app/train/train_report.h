/* camclass-train — what training found: the held-out confusion matrix, per-class precision and
 * recall, the warnings users need (too few images, a class the head does not tell apart), as
 * text for people and as JSON (--report FILE, and the "training" record in the bundle).
 */
#ifndef CC_TRAIN_REPORT_H
#define CC_TRAIN_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "dataset.h"
#include "dataset_check.h"
#include "error.h"
#include "softmax_head.h"
#include "train_int8.h"

struct cc_train_report {
    const struct cc_dataset *data;
    int *confusion;    // (k x k) held-out images of class row predicted as column; owned
    int held, correct; // held-out images, and those predicted right
    struct cc_head_fit fit;
    const char *base_name, *base_sha256; // borrowed
    int augment, dim;
    float unknown_threshold; // written to the bundle; 0: none
    unsigned long long seed;
    const struct cc_dataset_check *check; // near-duplicates and mislabelled images; or NULL
    const struct cc_train_int8 *int8;     // --int8: the int8 bundle's measure; or NULL
};

/* Counts truth[i] -> predicted[i] over n held-out images into r's confusion matrix. False on
 * out of memory. */
bool cc_train_report_count(struct cc_train_report *r, const int *truth, const int *predicted,
                           int n);

/* The human report: counts, accuracy, per-class precision and recall, the matrix, warnings
 * (with check's), the int8 bundle's accuracy and agreement beside the f32 head's. */
void cc_train_report_print(const struct cc_train_report *r, FILE *out);

/* The same as a JSON object (owned by the caller; NULL on out of memory). */
cJSON *cc_train_report_json(const struct cc_train_report *r);

void cc_train_report_finish(struct cc_train_report *r);

#endif
