/* camclass — the run's first model and its reloads without a stop (see app.h): the bundle
 * loaded at the start, and switched to again on SIGHUP (headless on main, with a window on a
 * thread of its own) or POST /model (a connection's thread), model_reload.h doing the swap. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "bundle.h"
#include "cam.h"
#include "model_reload.h"

/* Loads the bundle: a file that is not a usable bundle is a bad argument (exit 2). */
int cc_app_load_model(struct app *a)
{
    struct cc_error err = {0};
    if (!(a->model = cc_bundle_load(a->model_path, &err)) ||
        (a->cli.labels && !cc_bundle_replace_labels(a->model, a->cli.labels, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return CC_APP_EXIT_USAGE;
    }
    // What a SIGHUP compares with (no other thread runs yet); "" when it cannot be hashed.
    if (!cc_sha256_file(a->model_path, a->reload_sha, &err))
        a->reload_sha[0] = '\0';
    return 0;
}

/* Prepares the engine on the chosen backend (a device failure: exit 1). */
int cc_app_open_engine(struct app *a)
{
    struct cc_error err = {0};
    struct cc_engine_options opt = cc_run_models_options(&a->cli);
    a->engine = cc_cam_engine_create(a->model, &opt, &err); // the map for `h` (cam.h)
    a->model = NULL; // owned by the engine, also on failure
    if (!a->engine) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* Any thread but the inference thread: switches to the bundle at path (model_reload.h), says
 * so on stderr and fills *out (may be NULL). Refused with a window. */
static enum cc_model_reload_status reload_from(struct app *a, const char *path,
                                               struct cc_http_loaded *out, struct cc_error *err)
{
    if (a->n_cams > 1) {
        cc_error_set(err, "a model reload is not possible with several cameras yet; restart "
                          "camclass to load another model");
        return CC_MODEL_RELOAD_REFUSED;
    }
    struct cc_engine_options opt = cc_run_models_options(&a->cli);
    pthread_mutex_lock(&a->reload_lock);
    enum cc_model_reload_status st =
        cc_model_reload(a->cam[0].pipeline, path, a->cli.labels, &opt, a->reload_sha, err);
    if (st == CC_MODEL_RELOADED && out) {
        // The pipeline's model can only change under reload_lock: reading it here is safe.
        const struct cc_model *m = cc_pipeline_hold_model(a->cam[0].pipeline);
        snprintf(out->name, sizeof(out->name), "%s", m->name);
        snprintf(out->sha256, sizeof(out->sha256), "%s", a->reload_sha);
        out->classes = m->output.classes;
        cc_pipeline_release_model(a->cam[0].pipeline);
    }
    pthread_mutex_unlock(&a->reload_lock);
    if (st == CC_MODEL_RELOADED)
        fprintf(stderr, "camclass: model reloaded from %s\n", path);
    return st;
}

/* Main, after a SIGHUP: reloads --model's bundle (re-read from disk) beside the running one.
 * A bundle that fails leaves the old one running: one line says why. Not with a window:
 * loading on main would freeze it for seconds (a loader thread is still to be written). */
/* SIGHUP: --model again, unless its file is the bundle running (same sha256): logrotate's
 * SIGHUP, or the service's ExecReload with nothing new, then costs no load and no swap. */
void cc_app_reload_model(struct app *a)
{
    struct cc_error err = {0};
    char sha[CC_SHA256_HEX] = "";
    pthread_mutex_lock(&a->reload_lock);
    bool same = cc_sha256_file(a->model_path, sha, &err) && a->reload_sha[0] &&
                strcmp(sha, a->reload_sha) == 0;
    pthread_mutex_unlock(&a->reload_lock);
    if (same) {
        fprintf(stderr, "camclass: model %s unchanged (sha256 %.12s...); not reloaded\n",
                a->model_path, sha);
        return;
    }
    if (reload_from(a, a->model_path, NULL, &err) != CC_MODEL_RELOADED)
        fprintf(stderr, "camclass: %s\n", err.msg);
}

/* A connection's thread: POST /model (http.h load_model). */
int cc_app_http_load_model(void *ctx, const char *path, struct cc_http_loaded *out, char *msg,
                           size_t msg_size)
{
    struct app *a = ctx;
    struct cc_error err = {0};
    enum cc_model_reload_status st = reload_from(a, path, out, &err);
    snprintf(msg, msg_size, "%s", err.msg);
    return st == CC_MODEL_RELOADED ? 200 : st == CC_MODEL_RELOAD_BAD ? 422 : 503;
}

static void *reload_main(void *arg)
{
    struct app *a = arg;
    cc_app_reload_model(a);
    atomic_store(&a->reloading, false);
    return NULL;
}

void cc_app_reload_join(struct app *a)
{
    if (a->reload_joinable)
        pthread_join(a->reload_thread, NULL);
    a->reload_joinable = false;
}

/* Main thread, with a window: a SIGHUP's reload off the drawing thread; a SIGHUP while one runs
 * waits for it to end (the flag stays set). */
void cc_app_reload_beside(struct app *a)
{
    if (atomic_load(&a->reloading) || !atomic_exchange(a->reload_flag, 0))
        return;
    cc_app_reload_join(a);
    atomic_store(&a->reloading, true);
    if (pthread_create(&a->reload_thread, NULL, reload_main, a) == 0) {
        a->reload_joinable = true;
        return;
    }
    atomic_store(&a->reloading, false);
    cc_app_reload_model(a); // no thread: here, the window waits
}
