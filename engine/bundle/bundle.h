/* camclass — the model bundle loader (format: docs/MODEL_FORMAT.md).
 *
 * Reads a bundle (a zip holding manifest.json, stored tensor data and optionally labels.txt),
 * validates every field, builds a struct cc_model through the model.h builder and finalizes
 * it. A rejected bundle gives one line in err: "bundle PATH: <what is wrong, naming the entry,
 * node or tensor>; <the way out>". Nothing here keeps global state; loads are independent.
 */
#ifndef CC_BUNDLE_H
#define CC_BUNDLE_H

#include <stddef.h>

#include "error.h"
#include "model.h"

/* Loads the bundle at path. Returns a finalized model owned by the caller (free it with
 * cc_model_destroy), or NULL with err set. */
struct cc_model *cc_bundle_load(const char *path, struct cc_error *err);

/* Same from a bundle held in memory (size bytes at data, borrowed for the call only); name is
 * used in messages in place of the path. */
struct cc_model *cc_bundle_load_from_memory(const void *data, size_t size, const char *name,
                                            struct cc_error *err);

/* Replaces the labels of finalized model m with the lines of the text file at path (one label
 * per line, as a bundle's labels.txt; --labels FILE). The count must equal the model's
 * classes. False with err set (naming the file, and the line at fault) and m unchanged. */
bool cc_bundle_replace_labels(struct cc_model *m, const char *path, struct cc_error *err);

#endif
