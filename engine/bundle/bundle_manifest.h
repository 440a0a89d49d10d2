/* camclass — the bundle manifest's JSON side, used by the bundle loader (bundle.c) alone.
 *
 * Owns: the state of one load (struct cc_bundle_loader) and its error reporting, the checked
 * JSON getters through which every section of manifest.json is read, and the sections that are
 * JSON alone — the header (format, version), the input and output specs and the graph (each
 * op's attributes, fused activations, nodes). bundle.c owns what reads the archive: tensors and
 * their constant data, labels, manifest.json itself, and the public API (bundle.h).
 *
 * cJSON's types appear here because both halves walk the same parsed manifest; nothing outside
 * the loader includes this header. Every failure sets one line in the caller's error, "bundle
 * PATH: <what is wrong, naming the entry, node or tensor>; <the way out>", and returns
 * false/NULL/-1. Nothing here keeps global state.
 */
#ifndef CC_BUNDLE_MANIFEST_H
#define CC_BUNDLE_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bundle_zip.h"
#include "error.h"
#include "model.h"

// State of one load. Nothing outlives the call except the returned model.
struct cc_bundle_loader {
    struct cc_bundle_zip *zip; // the open archive, bundle name and caller's error (borrowed)
    struct cc_model *m;        // the model being built (owned until returned)
    struct cc_error merr;      // builder errors, passed on with the bundle prefix
    int64_t const_bytes;       // constant data read so far
    int version;               // the manifest's format version (1 to FORMAT_VERSION)
};

/* Sets "bundle PATH: <msg>", one line (cc_bundle_zip_failv). Returns false. */
bool cc_manifest_fail(struct cc_bundle_loader *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Passes a builder error (L->merr) on with the bundle prefix. Returns false. */
bool cc_manifest_fail_builder(struct cc_bundle_loader *L);

/* The getters: each fails with a message naming where (a tensor, node, "input"...) and key. */

/* obj[key], which must exist and have the given cJSON type; NULL with the error set. */
const cJSON *cc_manifest_member(struct cc_bundle_loader *L, const cJSON *obj, const char *key,
                                int type, const char *where);

/* obj[key] as a string, or NULL with the error set. */
const char *cc_manifest_str(struct cc_bundle_loader *L, const cJSON *obj, const char *key,
                            const char *where);

/* v as an integer in lo..hi (JSON numbers are doubles: exact up to 2^53). */
bool cc_manifest_int(struct cc_bundle_loader *L, const cJSON *v, double lo, double hi, int64_t *out,
                     const char *where, const char *key);

/* v as an array of n_min..n_max integers in lo..hi into out; *n gets the length. */
bool cc_manifest_ints(struct cc_bundle_loader *L, const cJSON *v, int n_min, int n_max, double lo,
                      double hi, int64_t *out, int *n, const char *where, const char *key);

/* d as a float; values beyond the float range become +-infinity (a plain cast would be
 * undefined behaviour). */
float cc_manifest_float(double d);

/* The sections. */

/* Checks "format" and "version" (sets L->version); returns the model's "name" or NULL. */
const char *cc_manifest_check_header(struct cc_bundle_loader *L, const cJSON *root);

/* "input" into L->m->input; the tensors must be declared already. */
bool cc_manifest_load_input(struct cc_bundle_loader *L, const cJSON *root);

/* "output" into L->m->output. */
bool cc_manifest_load_output(struct cc_bundle_loader *L, const cJSON *root);

/* "training", when present: a JSON object of at most 64 KiB as compact text, kept on L->m
 * (training_json) for display; its contents are not read. Other types are refused. */
bool cc_manifest_load_training(struct cc_bundle_loader *L, const cJSON *root);

/* "graph": every node through cc_model_add_node. */
bool cc_manifest_load_graph(struct cc_bundle_loader *L, const cJSON *root);

#endif
