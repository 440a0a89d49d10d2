/* camclass — reloads a model without stopping (SIGHUP, the service's ExecReload, POST /model):
 * the new bundle is loaded beside the running engine on the calling thread, every camera that
 * runs that model switches to it between two of its frames (cc_pipeline_swap), and the old
 * engine is freed here once all have.
 *
 * Why the load is not on an inference thread: loading may take seconds (backend auto times
 * both backends on the model), and the frames keep being classified by the old engine
 * meanwhile; each inference thread only swaps two pointers and resizes its buffers.
 *
 * Several cameras on one engine (run_models.h: one engine per distinct model, engine_turns.h:
 * the cameras take turns at it): their pipelines are swapped one after the other to the one new
 * engine. In between some run the old engine and some the new, each run in its camera's turn,
 * so neither engine ever has two threads (see cc_pipeline_swap). The old engine is freed only
 * when every pipeline has switched; one that refused (it is stopping: its thread may still be
 * in a run) leaves it in the model's kept, freed at the end of the run.
 *
 * Threads: any thread but an inference thread (main for SIGHUP, a window's reload thread, a
 * connection's for POST /model); callers serialize reloads (app.h's reload_lock), which also
 * guards the run_model written here. No state of its own. The sha256 is file_hash.h's.
 */
#ifndef CC_MODEL_RELOAD_H
#define CC_MODEL_RELOAD_H

#include <stdbool.h>

#include "engine.h"
#include "error.h"
#include "pipeline.h"
#include "run_models.h"

enum cc_model_reload_status {
    CC_MODEL_RELOADED,
    CC_MODEL_RELOAD_BAD,     // the bundle does not load (or its labels do not fit)
    CC_MODEL_RELOAD_REFUSED, // no camera switched: stopping, or another switch waits
};

/* Loads the bundle at path (its labels replaced by labels_path's lines when not NULL) with opt
 * and switches the n pipelines that run rm's engine to it (n >= 1); rm then holds the new
 * engine and the bundle's sha256 ("" when the file cannot be hashed; written before the swaps,
 * for the pipelines' on_model). Otherwise err (one line naming the bundle): nothing changed,
 * the old model goes on. */
enum cc_model_reload_status cc_model_reload(struct cc_run_model *rm, struct cc_pipeline *const *p,
                                            int n, const char *path, const char *labels_path,
                                            const struct cc_engine_options *opt,
                                            struct cc_error *err);

#endif
