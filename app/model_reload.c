/* camclass — the model reload (see model_reload.h). */
#include "model_reload.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libavutil/mem.h>
#include <libavutil/sha.h>

#include "bundle.h"

bool cc_model_sha256_file(const char *path, char hex[CC_SHA256_HEX], struct cc_error *err)
{
    hex[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "cannot read %s: %s", path, strerror(errno));
    struct AVSHA *sha = av_sha_alloc();
    if (!sha || av_sha_init(sha, 256) < 0) {
        av_free(sha);
        fclose(f);
        return cc_error_set(err, "out of memory hashing %s", path);
    }
    uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        av_sha_update(sha, buf, n);
    bool ok = !ferror(f);
    fclose(f);
    uint8_t digest[32];
    av_sha_final(sha, digest);
    av_free(sha);
    if (!ok)
        return cc_error_set(err, "reading %s failed", path);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return true;
}

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
    struct cc_engine *engine = cc_engine_create_from_model(m, opt, &e); // takes m
    if (!engine) {
        cc_error_set(err, "model reload: %s; the old model goes on", e.msg);
        return CC_MODEL_RELOAD_BAD;
    }
    struct cc_error hash_err = {0};
    cc_model_sha256_file(path, sha256, &hash_err); // "" when it cannot: the line leaves it out
    struct cc_engine *old = NULL;
    if (!cc_pipeline_swap(p, engine, &old, &e)) {
        cc_engine_destroy(engine);
        cc_error_set(err, "model reload: %s; the old model goes on", e.msg);
        return CC_MODEL_RELOAD_REFUSED; // (an input that is not [1, 3, H, W] loads nowhere)
    }
    cc_engine_destroy(old);
    return CC_MODEL_RELOADED;
}
