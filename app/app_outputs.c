/* camclass — a run's outputs, opened before its pipelines start (see app.h): the sample store
 * (--collect), the window, each camera's detection log, MQTT and event receivers (report.h),
 * the --output recording or picture, and the HTTP service (--serve). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "dataset_settings.h"
#include "event_files.h"
#include "http.h"
#include "recorder.h"
#include "report.h"
#include "sample_store.h"
#include "snapshot.h"
#include "still.h"

// Any thread: one line from the log or the MQTT connection.
static void report_notice(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "camclass: %s\n", line);
}

/* A recording's frame times (--output, clips) of camera c: a file input's rate (--fps, the
 * video's own, else 2 images/s); 0 for a camera (its capture times). */
static double recording_rate(const struct cam *c)
{
    if (!c->src.file)
        return 0;
    double rate = c->cli.fps > 0 ? c->cli.fps : cc_source_file_native_fps(c->src.file);
    return rate > 0 ? rate : 2;
}

/* The recording (--output): the window's size when --window gives one, else 1280 × 720, made
 * even (YUV 4:2:0); frame times from a file input's rate (--fps, the video's own, else 2
 * images/s) or the camera's capture times. Exit 2 when the file cannot be used. */
static int open_recorder(struct app *a, const struct cc_overlay_config *oc)
{
    struct cc_cli *cli = &a->cli;
    struct cc_error err = {0};
    if (cc_still_is_picture(cli->output)) {
        struct cc_still_config sc = {
            .path = cli->output,
            .width = cli->window_w > 0 ? cli->window_w : 1280,
            .height = cli->window_h > 0 ? cli->window_h : 720,
            .overlay = oc,
        };
        if (!(a->still = cc_still_open(&sc, &err))) {
            fprintf(stderr, "camclass: %s\n", err.msg);
            return CC_APP_EXIT_USAGE;
        }
        return 0;
    }
    double rate = recording_rate(&a->cam[0]);
    struct cc_recorder_config rc = {
        .path = cli->output,
        .width = (cli->window_w > 0 ? cli->window_w : 1280) & ~1,
        .height = (cli->window_h > 0 ? cli->window_h : 720) & ~1,
        .overlay = oc,
        .frame_rate = rate,
    };
    if (!(a->recorder = cc_recorder_open(&rc, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return CC_APP_EXIT_USAGE;
    }
    fprintf(stderr, "camclass: recording %s\n", cc_recorder_describe(a->recorder));
    return 0;
}

/* --collect DIR [--classes A,B]: the sample store, before the model loads (exit 2 when DIR or
 * a class name will not do). */
int cc_app_open_collect(struct app *a)
{
    const struct cc_cli *cli = &a->cli;
    struct cc_error err = {0};
    if (cli->classes && !cli->collect) {
        fprintf(stderr, "camclass: --classes names what --collect DIR collects; give both\n");
        return CC_APP_EXIT_USAGE;
    }
    if (!cli->collect)
        return 0;
    if (cli->headless && !cli->serve) {
        fprintf(stderr, "camclass: --collect takes pictures from the window's keys 1-9 or "
                        "POST /samples: drop --headless, or add --serve\n");
        return CC_APP_EXIT_USAGE;
    }
    if (!(a->samples = cc_sample_store_open(cli->collect, cli->classes, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return CC_APP_EXIT_USAGE;
    }
    // The crop asked for is the crop camclass-train will use on these pictures (saved whole).
    if (cli->roi_set && !cc_dataset_write_roi(cli->collect, &cli->roi, &err)) {
        fprintf(stderr, "camclass: --collect: %s\n", err.msg);
        return CC_APP_EXIT_USAGE;
    }
    char line[160];
    cc_sample_store_keys_line(a->samples, line, sizeof(line));
    fprintf(stderr, "camclass: collecting into %s: %s%s\n", cli->collect, line,
            cli->roi_set ? "; --roi recorded in camclass-dataset.json for camclass-train" : "");
    return 0;
}

/* The window: without a display we say so once and carry on headless. True when headless. */
bool cc_app_open_window(struct app *a, struct cc_overlay_config *oc, char *shots, size_t size)
{
    const struct cc_cli *cli = &a->cli;
    if (cli->headless)
        return true;
    // Screenshots: --screenshot-dir, else where xdg-user-dir PICTURES points, else ".".
    const char *shots_why = "--screenshot-dir";
    if (cli->shot_dir)
        snprintf(shots, size, "%s", cli->shot_dir);
    else
        shots_why = cc_cli_pictures_dir(getenv("XDG_PICTURES_DIR"), getenv("XDG_CONFIG_HOME"),
                                        getenv("HOME"), shots, size);
    oc->screenshot_dir = shots;
    struct cc_error err = {0};
    if (!(a->overlay = cc_overlay_create(oc, &err))) {
        const char *why = err.msg;
        if (strncmp(why, "overlay: ", 9) == 0)
            why += 9;
        if (strncmp(why, "no display: ", 12) == 0)
            why += 12;
        fprintf(stderr, "camclass: no display (%s); running headless\n", why);
        return true;
    }
    fprintf(stderr, "camclass: screenshots (s) go to %s (%s)\n", shots, shots_why);
    return false;
}

/* Camera c's detection log (headless always; with a window only when --log is given; several
 * cameras write their lines into the same one, each line whole, named by "camera"), MQTT and
 * the events' receivers. */
static int open_report(struct app *a, struct cam *c, const struct cc_overlay_config *oc,
                       bool headless)
{
    const struct cc_cli *cli = &c->cli;
    struct cc_error err = {0};
    char camera[CC_EVENT_CAMERA_MAX + 1];
    cc_app_camera_folder(c, camera, sizeof(camera));
    struct cc_snapshot_config snap = {
        .dir = cli->snapshot_dir,
        .max_mb = cli->snapshot_mb > 0 ? cli->snapshot_mb : CC_SNAPSHOT_DEFAULT_MB,
        .camera = camera,
    };
    struct cc_clip_config clip = {
        .dir = cli->clip_dir,
        .before_s = cli->clip_before >= 0 ? cli->clip_before : CC_CLIP_DEFAULT_BEFORE_S,
        .after_s = cli->clip_after > 0 ? cli->clip_after : CC_CLIP_DEFAULT_AFTER_S,
        .max_mb = cli->clip_mb > 0 ? cli->clip_mb : CC_CLIP_DEFAULT_MB,
        .camera = camera,
    };
    struct cc_report_config report = {
        .cli = cli,
        .log_path = cli->log   ? cli->log
                    : headless ? "-"
                               : NULL,
        .source = c->src.name,
        .camera = c->name,
        .model = cc_engine_model(c->engine)->name,
        .backend = cc_engine_backend_name(c->engine),
        .reopen = a->n_cams > 1 ? &c->reopen : a->reopen_flag,
        .gpio = c->gpio,
        .mqtt = a->mqtt, // one connection for every camera
        .notice = report_notice,
        .snapshot = &snap,
        .clip = &clip,
        .frame_rate = recording_rate(c),
        .picture_width = cli->window_w > 0 ? cli->window_w : 1280, // as --output x.jpg
        .picture_height = cli->window_h > 0 ? cli->window_h : 720,
        .overlay = oc,
    };
    if (!(c->report = cc_report_create(&report, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return CC_APP_EXIT_USAGE;
    }
    if (cli->clip_dir)
        fprintf(stderr,
                "camclass: clips of the detections in %s/%s, %g s before to %g s after "
                "(at most %g MB)\n",
                cli->clip_dir, camera, clip.before_s, clip.after_s, clip.max_mb);
    if (cli->snapshot_dir)
        fprintf(stderr, "camclass: snapshots of the detections in %s/%s (at most %g MB)\n",
                cli->snapshot_dir, camera, snap.max_mb);
    return 0;
}

/* Every camera's report, and the --output recording (of the first camera). */
int cc_app_open_outputs(struct app *a, const struct cc_overlay_config *oc, bool headless)
{
    int rc = cc_app_events_open_mqtt(a, report_notice);
    for (int i = 0; i < a->n_cams && !rc; i++)
        rc = open_report(a, &a->cam[i], oc, headless);
    if (!rc)
        cc_app_events_warn_gpio(a);
    return rc ? rc : a->cli.output ? open_recorder(a, oc) : 0;
}

/* A connection's thread: GET /snapshots/<camera>/latest.jpg (http.h), the newest snapshot of
 * the camera of that name or folder name (compared exactly), if any. */
static uint8_t *snapshot_latest(void *ctx, const char *camera, size_t *size)
{
    struct app *a = ctx;
    for (int i = 0; i < a->n_cams; i++) {
        struct cc_snapshot *s = cc_report_snapshot(a->cam[i].report);
        const char *name = a->cam[i].name;
        if (s && (strcmp(camera, cc_snapshot_camera(s)) == 0 || (name && !strcmp(camera, name))))
            return cc_snapshot_latest(s, size);
    }
    return NULL;
}

/* The HTTP service (--serve): /predict beside the first camera's pipeline, /latest and /stream
 * per camera (each named as its snapshots are: the config's name, else one made from the
 * input's). */
int cc_app_start_http(struct app *a, const struct cc_overlay_config *oc)
{
    const struct cam *c = &a->cam[0];
    struct cc_error err = {0};
    struct cc_http_camera cams[CC_CAMERAS_MAX];
    char names[CC_CAMERAS_MAX][CC_EVENT_CAMERA_MAX + 1];
    bool sources = c->src.camera || c->src.file;
    for (int i = 0; i < a->n_cams && sources; i++) {
        const struct cam *ci = &a->cam[i];
        if (ci->name)
            snprintf(names[i], sizeof(names[i]), "%s", ci->name);
        else
            cc_event_folder_camera_name(ci->src.name, names[i], sizeof(names[i]));
        cams[i] = (struct cc_http_camera){names[i], ci->src.name, cc_engine_model(ci->engine)->name,
                                          ci->pipeline};
    }
    struct cc_http_config hc = {
        .cli = &a->cli,
        .pipeline = c->pipeline,
        .model = cc_engine_model(c->engine),
        .backend = cc_engine_backend_name(c->engine),
        .cameras = cams,
        .n_cameras = sources ? a->n_cams : 0,
        .overlay = oc,
        .load_model = cc_app_http_load_model,
        .load_ctx = a,
        .samples = a->samples,
        .snapshot_latest = snapshot_latest,
        .snapshot_ctx = a,
    };
    if (!(a->http = cc_http_start(&hc, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr, "camclass: serving on %s\n", cc_http_url(a->http));
    return 0;
}
