/* camclass — several cameras in one run: their settings, sources, engines, main loop and end
 * (see app.h and cameras.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "event_files.h"
#include "notify.h"

void cc_app_camera_folder(const struct cam *c, char *out, size_t size)
{
    if (c->name)
        cc_event_folder_safe_label(c->name, out, size);
    else
        cc_event_folder_camera_name(c->src.name, out, size);
}

/* Two cameras whose snapshots or clips would share a folder ("back gate" and "back_gate" are
 * both back_gate): exit 2, one line naming both. */
static int check_folders(const struct app *a, const char *config)
{
    char f[CC_CAMERAS_MAX][CC_EVENT_CAMERA_MAX + 1];
    for (int i = 0; i < a->n_cams && a->cameras.from_config; i++) {
        const struct cc_cli *ci = &a->cam[i].cli;
        cc_app_camera_folder(&a->cam[i], f[i], sizeof(f[i]));
        for (int k = 0; k < i && (ci->snapshot_dir || ci->clip_dir); k++)
            if (strcmp(f[k], f[i]) == 0 && (a->cam[k].cli.snapshot_dir || a->cam[k].cli.clip_dir)) {
                fprintf(stderr,
                        "camclass: config %s: cameras \"%s\" and \"%s\" would both keep their "
                        "snapshots and clips in the folder %s (names differing only in "
                        "characters other than A-Z a-z 0-9 _ - .); rename one\n",
                        config, a->cam[k].name, a->cam[i].name, f[i]);
                return CC_APP_EXIT_USAGE;
            }
    }
    return 0;
}

int cc_app_cameras_setup(struct app *a, const char *config)
{
    struct cc_error err = {0};
    if (!cc_cameras_read(&a->cli, config ? config : "", &a->cameras, &err)) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return CC_APP_EXIT_USAGE;
    }
    a->n_cams = a->cameras.n;
    for (int i = 0; i < a->n_cams; i++) {
        struct cam *c = &a->cam[i];
        c->app = a;
        c->name = a->cameras.from_config ? a->cameras.cam[i].name : NULL;
        cc_cameras_view(&a->cameras, i, &a->cli, &c->cli);
    }
    int rc = cc_app_events_check(a, config ? config : "");
    if (rc || (rc = check_folders(a, config ? config : "")))
        return rc;
    if (a->cameras.from_config && a->cli.selftest) {
        fprintf(stderr, "camclass: --selftest checks the model on its sample, not the config's "
                        "\"cameras\"; give --config without them\n");
        return CC_APP_EXIT_USAGE;
    }
    return 0;
}

int cc_app_cameras_open_sources(struct app *a)
{
    for (int i = 0; i < a->n_cams; i++) {
        struct cam *c = &a->cam[i];
        if (c->name)
            fprintf(stderr, "camclass: camera %s\n", c->name);
        int rc = cc_source_choice_open(&c->cli, a->stop_requested, &c->src);
        if (rc)
            return rc;
    }
    return 0;
}

int cc_app_cameras_open_engines(struct app *a)
{
    int rc = 0, of[CC_CAMERAS_MAX];
    cc_run_models_first(&a->models, a->model_path, a->model_sha, a->engine);
    for (int i = 0; i < a->n_cams; i++)
        if ((rc = cc_run_models_add(&a->models, &a->cli, &a->cam[i].cli, a->cam[i].name, &of[i])))
            return rc;
    struct cc_error err = {0};
    if (!cc_run_models_share(&a->models, &err)) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < a->n_cams; i++) {
        a->cam[i].engine = a->models.m[of[i]].engine;
        a->cam[i].turns = a->models.m[of[i]].turns;
        a->cam[i].model = of[i];
    }
    return 0;
}

void cc_app_camera_ended(struct cam *c, enum cc_pipeline_state st)
{
    c->state = st;
    if (st == CC_PIPELINE_FAILED)
        fprintf(stderr, "camclass: camera %s stopped: %s; the other cameras go on\n", c->name,
                cc_pipeline_error(c->pipeline));
    else if (st == CC_PIPELINE_ENDED)
        fprintf(stderr, "camclass: camera %s: its input ended\n", c->name);
}

void cc_app_cameras_sighup(struct app *a, bool beside)
{
    if (atomic_exchange(a->reopen_flag, 0))
        for (int i = 0; i < a->n_cams; i++)
            atomic_store(&a->cam[i].reopen, 1);
    if (beside)
        cc_app_reload_beside(a);
    else if (atomic_exchange(a->reload_flag, 0))
        cc_app_reload_model(a);
}

enum cc_pipeline_state cc_app_cameras_loop(struct app *a)
{
    uint64_t interval_us = cc_notify_watchdog_interval_us(), pinged = 0;
    int64_t last_ping = 0;
    bool ready = false;
    for (int running = a->n_cams; running > 0 && !atomic_load(a->stop_flag);) {
        cc_app_cameras_sighup(a, false);
        struct cam *w = &a->cam[0];
        for (int i = 0; i < a->n_cams && w->state != CC_PIPELINE_RUNNING; i++)
            w = &a->cam[i];
        cc_pipeline_wait(w->pipeline, w->seen, 100);
        uint64_t total = 0;
        running = 0;
        for (int i = 0; i < a->n_cams; i++) {
            struct cam *c = &a->cam[i];
            struct cc_result r;
            enum cc_pipeline_state st = cc_pipeline_wait(c->pipeline, UINT64_MAX, 0);
            cc_pipeline_latest(c->pipeline, &c->seen, &r, NULL);
            total += c->seen;
            if (c->state == CC_PIPELINE_RUNNING && st != CC_PIPELINE_RUNNING)
                cc_app_camera_ended(c, st);
            running += c->state == CC_PIPELINE_RUNNING;
        }
        if (total && !ready) {
            cc_notify_ready();
            cc_notify_status("classifying %d cameras", a->n_cams);
            ready = true;
        }
        int64_t t = cc_now_ns();
        if (interval_us && (uint64_t)(t - last_ping) / 1000 >= interval_us && total > pinged) {
            cc_notify_watchdog();
            last_ping = t;
            pinged = total;
        }
    }
    return CC_PIPELINE_RUNNING; // each camera's state is its own (cameras_status)
}

int cc_app_cameras_status(struct app *a, bool recorded)
{
    int rc = recorded ? 0 : 1;
    for (int i = 0; i < a->n_cams; i++) {
        struct cam *c = &a->cam[i];
        // The ends the loop did not see (it was left at q or a stop signal) are said here.
        enum cc_pipeline_state st = cc_pipeline_wait(c->pipeline, UINT64_MAX, 0);
        if (c->state == CC_PIPELINE_RUNNING && st != CC_PIPELINE_RUNNING)
            cc_app_camera_ended(c, st);
    }
    for (int i = 0; i < a->n_cams; i++)
        if (a->cam[i].state == CC_PIPELINE_FAILED)
            rc = cc_pipeline_usage_error(a->cam[i].pipeline) ? CC_APP_EXIT_USAGE : rc ? rc : 1;
    return rc;
}

void cc_app_camera_summary(const struct cam *c)
{
    struct cc_pipeline_totals t = cc_pipeline_get_totals(c->pipeline);
    char bad[96] = "";
    if (t.bad_frames)
        snprintf(bad, sizeof(bad), ", %llu bad skipped", (unsigned long long)t.bad_frames);
    int unread = c->src.file ? cc_source_file_skipped(c->src.file) : 0; // the producer stopped
    if (unread)
        snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), ", %d file%s skipped", unread,
                 unread == 1 ? "" : "s");
    fprintf(stderr,
            "camclass: %s%s%llu frame%s classified, %llu dropped%s, mean latency %.1f ms, "
            "%.1f results/s over %.1f s\n",
            c->name ? c->name : "", c->name ? ": " : "", (unsigned long long)t.results,
            t.results == 1 ? "" : "s", (unsigned long long)t.dropped, bad, t.mean_latency_ms, t.fps,
            t.duration_s);
}
