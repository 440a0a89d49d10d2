/* camclass — reloads the model without stopping (SIGHUP, the service's ExecReload): the new
 * bundle is loaded beside the running engine on the calling thread, the inference thread
 * switches to it between two frames (cc_pipeline_swap), and the old engine is freed here.
 *
 * Why the load is not on the inference thread: loading may take seconds (backend auto times
 * both backends on the model), and the frames keep being classified by the old engine
 * meanwhile; the inference thread only swaps two pointers and resizes its buffers.
 *
 * Threads: any thread but the inference thread (main for SIGHUP, a connection's for POST
 * /model); callers serialize reloads (main.c's reload_lock). No state of its own.
 * The sha256 is file_hash.h's.
 */
#ifndef CC_MODEL_RELOAD_H
#define CC_MODEL_RELOAD_H

#include <stdbool.h>

#include "engine.h"
#include "error.h"
#include "file_hash.h"
#include "pipeline.h"

enum cc_model_reload_status {
    CC_MODEL_RELOADED,
    CC_MODEL_RELOAD_BAD,     // the bundle does not load (or its labels do not fit)
    CC_MODEL_RELOAD_REFUSED, // the pipeline is stopping, or another switch waits
};

/* Loads the bundle at path (its labels replaced by labels_path's lines when not NULL) with opt,
 * writes its sha256 into sha256 (read by the pipeline's on_model during the swap; "" when the
 * file cannot be hashed) and switches p to it; frees the old engine. Otherwise err (one line
 * naming the bundle): nothing changed, the old model goes on. Callers serialize calls that
 * share sha256. */
enum cc_model_reload_status cc_model_reload(struct cc_pipeline *p, const char *path,
                                            const char *labels_path,
                                            const struct cc_engine_options *opt,
                                            char sha256[CC_SHA256_HEX], struct cc_error *err);

#endif
