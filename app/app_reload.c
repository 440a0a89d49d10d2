/* camclass — the run's first model and its reloads without a stop (see app.h): the bundle
 * loaded at the start; on SIGHUP (headless on main, with a window on a thread of its own) every
 * model file the cameras run read again and the changed ones switched to, on POST /model (a
 * connection's thread) the top-level model replaced; model_reload.h doing the swaps. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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
    if (!cc_sha256_file(a->model_path, a->model_sha, &err))
        a->model_sha[0] = '\0';
    return 0;
}

/* Prepares the engine on the chosen backend (a device failure: exit 1). */
int cc_app_open_engine(struct app *a)
{
    struct cc_error err = {0};
    struct cc_engine_options opt = cc_run_models_options(&a->cli);
    a->engine = cc_cam_engine_create(a->model, &opt, &err); // the map for `h` (cam.h)
    a->model = NULL;                                        // owned by the engine, also on failure
    if (!a->engine) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The pipelines of the cameras that run model i into p; their names (", "-separated, "" with
 * the command line's one camera) into names. Returns how many. */
static int cameras_of(struct app *a, int i, struct cc_pipeline **p, char *names, size_t size)
{
    int n = 0;
    names[0] = '\0';
    for (int k = 0; k < a->n_cams; k++) {
        if (a->cam[k].model != i)
            continue;
        p[n++] = a->cam[k].pipeline;
        size_t len = strlen(names);
        if (a->cam[k].name)
            snprintf(names + len, size - len, "%s%s", len ? ", " : "", a->cam[k].name);
    }
    return n;
}

/* Any thread but an inference thread: switches every camera that runs model i (run_models.h)
 * to the bundle at path (model_reload.h), says so on stderr and fills *out (may be NULL). A
 * model no camera runs: CC_MODEL_RELOAD_REFUSED, *none set. */
static enum cc_model_reload_status reload_from(struct app *a, int i, const char *path,
                                               struct cc_http_loaded *out, bool *none,
                                               struct cc_error *err)
{
    struct cc_pipeline *p[CC_CAMERAS_MAX];
    char names[CC_CAMERAS_MAX * (NAME_MAX + 2) + 1];
    int n = cameras_of(a, i, p, names, sizeof(names));
    if ((*none = n == 0)) {
        cc_error_set(err, "no camera runs the top-level model (each names its own \"model\"); "
                          "replace a camera's model file and send SIGHUP");
        return CC_MODEL_RELOAD_REFUSED;
    }
    struct cc_engine_options opt = cc_run_models_options(&a->cli);
    pthread_mutex_lock(&a->reload_lock);
    struct cc_run_model *rm = &a->models.m[i];
    enum cc_model_reload_status st = cc_model_reload(rm, p, n, path, a->cli.labels, &opt, err);
    if (st == CC_MODEL_RELOADED && out) {
        // The pipelines' model can only change under reload_lock: reading it here is safe.
        const struct cc_model *m = cc_pipeline_hold_model(p[0]);
        snprintf(out->name, sizeof(out->name), "%s", m->name);
        snprintf(out->sha256, sizeof(out->sha256), "%s", rm->sha256);
        out->classes = m->output.classes;
        cc_pipeline_release_model(p[0]);
    }
    pthread_mutex_unlock(&a->reload_lock);
    if (st == CC_MODEL_RELOADED)
        fprintf(stderr, "camclass: model reloaded from %s%s%s%s\n", path,
                names[0] ? " (cameras " : "", names, names[0] ? ")" : "");
    return st;
}

/* SIGHUP, model i: its file again, unless it is the bundle running (same sha256): logrotate's
 * SIGHUP, or the service's ExecReload with nothing new, then costs no load and no swap. */
static void reload_file(struct app *a, int i)
{
    struct cc_error err = {0};
    char sha[CC_SHA256_HEX] = "";
    const char *path = a->models.m[i].path; // set at the start, never changed
    pthread_mutex_lock(&a->reload_lock);
    const char *running = a->models.m[i].sha256;
    bool same = cc_sha256_file(path, sha, &err) && running[0] && strcmp(sha, running) == 0;
    pthread_mutex_unlock(&a->reload_lock);
    if (same) {
        fprintf(stderr, "camclass: model %s unchanged (sha256 %.12s...); not reloaded\n", path,
                sha);
        return;
    }
    bool none = false;
    if (reload_from(a, i, path, NULL, &none, &err) != CC_MODEL_RELOADED)
        fprintf(stderr, "camclass: %s\n", err.msg);
}

/* Main after a SIGHUP (a window's reload thread with one): every model file a camera runs
 * (run_models.h) read again; one whose bundle changed is loaded and swapped in for every camera
 * that runs it. A bundle that fails leaves its old one running: one line says why. */
void cc_app_reload_model(struct app *a)
{
    for (int i = 0; i < a->models.n; i++) // n and users are fixed once the cameras run
        if (a->models.m[i].users > 0)
            reload_file(a, i);
}

/* A connection's thread: POST /model (http.h load_model), for the cameras that run the
 * top-level model (those that name no "model" of their own). */
int cc_app_http_load_model(void *ctx, const char *path, struct cc_http_loaded *out, char *msg,
                           size_t msg_size)
{
    struct app *a = ctx;
    struct cc_error err = {0};
    bool none = false;
    enum cc_model_reload_status st = reload_from(a, 0, path, out, &none, &err);
    snprintf(msg, msg_size, "%s", err.msg);
    return st == CC_MODEL_RELOADED ? 200 : none ? 409 : st == CC_MODEL_RELOAD_BAD ? 422 : 503;
}

/* model_set.h's sha: the top-level model's bundle running now. */
static void top_sha(void *ctx, char sha[CC_SHA256_HEX])
{
    struct app *a = ctx;
    pthread_mutex_lock(&a->reload_lock);
    snprintf(sha, CC_SHA256_HEX, "%s", a->models.n ? a->models.m[0].sha256 : "");
    pthread_mutex_unlock(&a->reload_lock);
}

int cc_app_model_set_open(struct app *a)
{
    if (!a->cli.mqtt_model_token)
        return 0;
    struct cc_error err = {0};
    char token[512];
    if (!a->cli.mqtt)
        cc_error_set(&err, "--mqtt-model-token takes effect with --mqtt only; give --mqtt URL");
    else if (cc_model_set_read_token(a->cli.mqtt_model_token, token, sizeof(token), &err)) {
        const char *dir = getenv("TMPDIR");
        struct cc_model_set_config mc = {
            .token = token,
            .device_id = a->cli.device_id,
            .dir = dir && dir[0] ? dir : "/tmp",
            .load = cc_app_http_load_model,
            .sha = top_sha,
            .ctx = a,
        };
        a->model_set = cc_model_set_create(&mc, &err);
        memset(token, 0, sizeof(token));
    }
    if (a->model_set)
        return 0;
    fprintf(stderr, "camclass: %s\n", err.msg);
    return CC_APP_EXIT_USAGE;
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
