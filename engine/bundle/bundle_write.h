/* camclass — the bundle writer: a finalized model -> a bundle on disk (docs/MODEL_FORMAT.md).
 *
 * The C counterpart of the exporter's writer (python/camclass_export/export.py), for tools
 * that make models in C (camclass-train's new classifier heads): the same entries
 * (manifest.json, labels.txt, weights.bin stored, each tensor at a multiple of 64 bytes), the
 * lowest format version the model needs, and a file that cc_bundle_load() and
 * camclass_export/ccm_bundle.py read back as the same model. Nothing here keeps global state; writes are independent.
 */
#ifndef CC_BUNDLE_WRITE_H
#define CC_BUNDLE_WRITE_H

#include <stdbool.h>

#include "error.h"
#include "model.h"

struct cc_bundle_write_options {
    const char *training_json; // text of a JSON object written as the manifest's top-level
                               // "training" key (what the bundle was trained on), or NULL
    bool overwrite;            // replace an existing file at path; false: refuse it (err)
};

/* Writes finalized model m (with its labels) as a bundle at path: written to a temporary file
 * beside path and renamed over it, so no half-written bundle is ever seen; a full disk or any
 * error leaves nothing behind. False with err set (one line naming the file and what to do).
 * When opts->training_json is NULL, m->training_json (a loaded bundle's) is written, if any.
 * m and opts are borrowed for the call; opts may be NULL (no training, no overwrite). */
bool cc_bundle_write(const struct cc_model *m, const char *path,
                     const struct cc_bundle_write_options *opts, struct cc_error *err);

#endif
