/* camclass-train --int8 — the trained model made int8 (the engine's calibrate.h) on the
 * dataset's own pictures, and measured as camclass will run it.
 *
 * Calibration: the plain view (no augmentation) of every training picture — the held-out ones
 * are kept out so that their accuracy stays a measure of unseen pictures — through camclass's
 * preprocessing (input_tensor.h, ROI included), the whole f32 graph run on the reference ops.
 * Measure: the int8 model on the CPU backend (XNNPACK, which computes its quantized convs,
 * linears, adds and pools in int8) over the held-out pictures; their top-1 against the truth
 * and against the f32 head's.
 */
#ifndef CC_TRAIN_INT8_H
#define CC_TRAIN_INT8_H

#include <stdbool.h>
#include <stdio.h>

#include "dataset.h"
#include "engine.h"
#include "error.h"
#include "model.h"

/* What --int8 found; the report prints it and writes it as "int8" (train_report.h). */
struct cc_train_int8 {
    int calibration_images;
    int held, correct, agree; // held-out pictures run, right, with the f32 head's top-1
    char device[160];         // what measured it: the CPU backend's description, which ends
                              // in ", int8" when it computes nodes in int8
};

/* The int8 model of trained f32 model m (owned by the caller), named as m, calibrated on d's
 * training pictures (their count into r). NULL with err (*bad_image: a picture could not be
 * read). */
struct cc_model *cc_train_int8_quantize(const struct cc_model *m, const struct cc_dataset *d,
                                        FILE *progress, struct cc_train_int8 *r, bool *bad_image,
                                        struct cc_error *err);

/* Runs int8 model m8 (ownership passes to the engine made here: it is handed back in *out,
 * alive until cc_engine_destroy(*engine)) on the CPU backend over d's held-out pictures.
 * f32_pred: the f32 head's top-1 of each held-out picture, in d's order. Fills r (device,
 * counts). False with err. */
bool cc_train_int8_measure(struct cc_model *m8, const struct cc_dataset *d,
                           const struct cc_engine_options *opts, const int *f32_pred,
                           struct cc_engine **engine, struct cc_train_int8 *r,
                           struct cc_error *err);

#endif
