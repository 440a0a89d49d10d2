/* camclass — the model reload (see model_reload.h). */
#include "model_reload.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "cam.h"
#include "file_hash.h"

enum cc_model_reload_status cc_model_reload(struct cc_pipeline *p, const char *path,
                                            const char *labels_path,
                                            const struct cc_engine_options *opt,
                                            char sha256[CC_SHA256_HEX], struct cc_error *err)
{
    struct cc_error e = {0};
    struct cc_model *m = cc_bundle_load(path, &e);
    if (!m || (labels_path && !cc_bundle_replace_labels(m, labels_path, &e))) {
        cc_model_destroy(m);
        cc_error_set(err, "model reload: %s; the old model goes on", e.msg);
        return CC_MODEL_RELOAD_BAD;
    }
    struct cc_engine *engine = cc_cam_engine_create(m, opt, &e); // takes m
    if (!engine) {
        cc_error_set(err, "model reload: %s; the old model goes on", e.msg);
        return CC_MODEL_RELOAD_BAD;
    }
    struct cc_error hash_err = {0};
    cc_sha256_file(path, sha256, &hash_err); // "" when it cannot: the line leaves it out
    struct cc_engine *old = NULL;
    if (!cc_pipeline_swap(p, engine, &old, &e)) {
        cc_engine_destroy(engine);
        cc_error_set(err, "model reload: %s; the old model goes on", e.msg);
        return CC_MODEL_RELOAD_REFUSED; // (an input that is not [1, 3, H, W] loads nowhere)
    }
    cc_engine_destroy(old);
    return CC_MODEL_RELOADED;
}
