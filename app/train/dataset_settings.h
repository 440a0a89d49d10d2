/* camclass-train — a dataset folder's own settings, DIR/camclass-dataset.json. Apart from
 * dataset.c (the folder's classes and images) so that what only lists and writes pictures
 * (the sample store, the static camclass-capture of the VM tests) does not need cJSON. */
#ifndef CC_DATASET_SETTINGS_H
#define CC_DATASET_SETTINGS_H

#include <stdbool.h>

#include "error.h"
#include "roi.h"

/* The dataset's own settings, DIR/camclass-dataset.json (written by camclass --collect): a JSON
 * object whose "roi" (a string, as --roi takes it: roi.h) is the default ROI of training on
 * DIR. Other keys are left to their writers. *found is false when the file does not exist.
 * False with err (naming the file and the fix) when it cannot be read, is not a JSON object of
 * at most 64 KB, or its "roi" is not a string that parses. */
bool cc_dataset_read_roi(const char *dir, struct cc_roi *roi, bool *found, struct cc_error *err);

/* Sets "roi" in DIR/camclass-dataset.json to roi (as --roi writes it), keeping the file's other
 * keys; written to a temporary file in DIR, synced, then renamed over the old one. False with
 * err (naming the file) when it cannot be read back or written. */
bool cc_dataset_write_roi(const char *dir, const struct cc_roi *roi, struct cc_error *err);

#endif
