/* camclass — the model reload (see model_reload.h). */
#include "model_reload.h"

#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "cam.h"
#include "file_hash.h"

/* The engine of the bundle at path, labels replaced; NULL with err (the reload's line). */
static struct cc_engine *load(const char *path, const char *labels_path,
                              const struct cc_engine_options *opt, struct cc_error *err)
{
    struct cc_error e = {0};
    struct cc_model *m = cc_bundle_load(path, &e);
    struct cc_engine *engine = NULL;
    if (!m || (labels_path && !cc_bundle_replace_labels(m, labels_path, &e)))
        cc_model_destroy(m);
    else
        engine = cc_cam_engine_create(m, opt, &e); // takes m
    if (!engine)
        cc_error_set(err, "model reload: %s; the old model goes on", e.msg);
    return engine;
}

enum cc_model_reload_status cc_model_reload(struct cc_run_model *rm, struct cc_pipeline *const *p,
                                            int n, const char *path, const char *labels_path,
                                            const struct cc_engine_options *opt,
                                            struct cc_error *err)
{
    if (rm->kept) { // a camera was stopping at the last reload: so is the run
        cc_error_set(err, "model reload: camclass is stopping; the old model goes on");
        return CC_MODEL_RELOAD_REFUSED;
    }
    struct cc_engine *engine = load(path, labels_path, opt, err);
    if (!engine)
        return CC_MODEL_RELOAD_BAD;
    char was[CC_SHA256_HEX];
    memcpy(was, rm->sha256, sizeof(was));
    struct cc_error e = {0};
    if (!cc_sha256_file(path, rm->sha256, &e)) // "" when it cannot: the line leaves it out
        rm->sha256[0] = '\0';
    int switched = 0;
    struct cc_error refused = {0};
    for (int i = 0; i < n; i++) {
        struct cc_engine *old = NULL;
        if (cc_pipeline_swap(p[i], engine, &old, &e))
            switched++;
        else if (!refused.msg[0])
            refused = e;
    }
    if (!switched) {
        cc_engine_destroy(engine);
        memcpy(rm->sha256, was, sizeof(was));
        cc_error_set(err, "model reload: %s; the old model goes on", refused.msg);
        return CC_MODEL_RELOAD_REFUSED; // (an input that is not [1, 3, H, W] loads nowhere)
    }
    if (switched < n) // a stopping camera may be in a run of the old engine
        rm->kept = rm->engine;
    else
        cc_engine_destroy(rm->engine);
    rm->engine = engine;
    return CC_MODEL_RELOADED;
}
