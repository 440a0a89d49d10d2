/* camclass — classifies camera or file frames live: an SDL window with the top labels, or a
 * headless JSON-lines detection log (a systemd service). See camclass(1) and --help.
 *
 * Threads (pipeline.h): a source thread (camera or file) and the inference thread; this main
 * thread owns the window (SDL wants it here), signals, sd_notify and the exit. The detection
 * log is written by the inference thread (pipeline on_result), which also does the SIGHUP
 * reopen; main writes its summary line after the threads have been joined.
 *
 * Signals, handled from main's first line (a stop during the start gives exit 0 too; an inherited
 * blocked mask is undone, or systemd's SIGTERM would wait for ever): SIGINT/SIGTERM set
 * stop_flag, SIGHUP sets reopen_flag (lock-free atomics: the only
 * process-wide mutable state, because a signal handler can reach nothing else);
 * SIGPIPE is ignored (a closed stdout becomes an EPIPE write error, not a kill with status 141):
 * when the detection log's reader goes away (`camclass --headless | head -1`), log_result ends
 * the pipeline (CC_PIPELINE_CLOSED) and camclass exits 0 without a warning, as a filter does. A
 * log file that fails otherwise (a full disk) is warned about once and the run goes on.
 *
 * Exit status: 0 ok (also after SIGINT/SIGTERM and at the end of a file input), 1 a failure
 * while running or a camera that does not open (it may come later: systemd's Restart= retries),
 * engine failures, a self-test below its figure; 2 a bad command line or config, or a model,
 * input, config or log file that cannot be used (restarting cannot help:
 * RestartPreventExitStatus=2).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "assets.h"
#include "bundle.h"
#include "cam.h"
#include "cameras.h"
#include "engine_turns.h"
#include "capture.h"
#include "cli.h"
#include "engine.h"
#include "gpio_out.h"
#include "http.h"
#include "model_reload.h"
#include "notify.h"
#include "overlay.h"
#include "pipeline.h"
#include "preflight.h"
#include "run_models.h"
#include "report.h"
#include "recorder.h"
#include "dataset_settings.h"
#include "sample_store.h"
#include "selftest.h"
#include "source_choice.h"
#include "source_file.h"
#include "still.h"
#include "event_files.h"
#include "status_line.h"
#include "clock.h"
#include "window_grid.h"

#ifndef CAMCLASS_VERSION
#define CAMCLASS_VERSION "unknown"
#endif

enum { EXIT_USAGE = CC_APP_EXIT_USAGE };

// Lock-free atomics: safe to set in a signal handler (C11 7.14.1.1) and to read from any thread
// (the inference thread takes reopen_flag; volatile sig_atomic_t would be a data race there).
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal flags need lock-free atomics");
static atomic_int stop_flag, reopen_flag, reload_flag;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_flag, 1);
}

static void on_hup(int sig)
{
    (void)sig;
    atomic_store(&reopen_flag, 1); // the inference thread reopens the log (logrotate)
    atomic_store(&reload_flag, 1); // main reloads --model (model_reload.h)
}

/* main's first step, so that a stop signal during the start (the model load) ends camclass like
 * one while running; then the three are unblocked: one held since the exec reaches the handler. */
static void install_signals(void)
{
    struct sigaction sa = {0};
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    // SIGHUP (logrotate) only raises a flag: a blocking call it lands in (a FIFO's open waiting
    // for its writer, a read of a pipe) goes on. SIGINT/SIGTERM do interrupt them, to stop.
    sa.sa_handler = on_hup;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigprocmask(SIG_UNBLOCK, &sa.sa_mask, NULL); // no thread yet: the process's mask
}

/* A stream's first connect polls this (cc_source_file_open_url): a stop signal ends it. */
static bool stop_requested(void *ctx)
{
    (void)ctx;
    return atomic_load(&stop_flag) != 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------------------------
 * The run
 */

/* Inference thread: one result to the detection log and MQTT (report.h). False ends the run
 * quietly: nobody reads the log any more. */
static bool log_result(void *ctx, const struct cc_result *r, const struct cc_frame *f)
{
    struct cam *c = ctx;
    bool more = !cc_report_active(c->report) || cc_report_result(c->report, r, f);
    // --frames N: the Nth result is the last one (c->results: this thread's alone).
    return more && !(c->cli.frames && ++c->results >= (uint64_t)c->cli.frames);
}

/* A camera's inference thread, after a reload's swap: its "model" line (log and MQTT); the
 * model's sha256 is written under reload_lock before the swap (app.h). */
static void log_model(void *ctx, const struct cc_model *m)
{
    const struct cam *c = ctx;
    struct app *a = c->app;
    cc_report_model(c->report, m->name, a->models.m[c->model].sha256,
                    (const char *const *)m->labels, m->n_labels);
    if (a->http)
        cc_http_model(a->http, (int)(c - a->cam), m);
}

/* Inference thread: the frame with its result to --serve (/latest, /metrics, /stream; never
 * waits) and to the recorder's thread (--output; waits only while the recorder is 3 frames
 * behind). A write error is reported once (the recorder then takes no more frames) and the run
 * goes on; exit 1 at the end. */
static void frame_out(void *ctx, const struct cc_result *r, const struct cc_frame *f)
{
    struct cam *c = ctx;
    struct app *a = c->app;
    if (a->http) // --serve: /latest, /metrics, /stream (set before the pipeline starts)
        cc_http_result(a->http, (int)(c - a->cam), r, f);
    if (c != &a->cam[0]) // --output follows the first camera
        return;
    if (a->still && !cc_still_keep(a->still, r, f))
        fprintf(stderr, "camclass: --output: out of memory keeping the picture\n");
    if (!a->recorder)
        return;
    struct cc_error err = {0};
    int64_t t = a->cli.profile ? cc_now_ns() : 0;
    if (!cc_recorder_add(a->recorder, r, f, &err) && err.msg[0])
        fprintf(stderr, "camclass: %s\n", err.msg);
    if (a->cli.profile)
        cc_series_add(&a->record_ms, (double)(cc_now_ns() - t) / 1e6);
}

/* h: asks the first camera's pipeline for class activation maps, or stops asking; a model
 * without one says so once, on stderr and on the window. */
static void show_cam(struct app *a)
{
    struct cc_error err = {0};
    bool on = cc_overlay_cam_shown(a->overlay);
    if (cc_pipeline_want_cam(a->cam[0].pipeline, on, &err) || !on)
        return;
    cc_overlay_notice(a->overlay, err.msg);
    if (!a->cam_said)
        fprintf(stderr, "camclass: %s\n", err.msg);
    a->cam_said = true;
}

static void print_profile(struct app *a)
{
    struct cc_pipeline_profile pr = cc_pipeline_get_profile(a->cam[0].pipeline);
    const struct {
        const char *name;
        const struct cc_series *s;
    } rows[] = {
        {"capture->dequeue", pr.dequeue}, {"preprocess", pr.preprocess},
        {"inference", pr.inference},      {"present", &a->present_ms},
        {"record", &a->record_ms},        {"latency", pr.latency},
    };
    fprintf(stderr, "camclass: profile (ms)      n      mean       p50       p90       max\n");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct cc_series *s = rows[i].s;
        if (!s->n)
            continue;
        fprintf(stderr, "  %-18s %8zu %9.2f %9.2f %9.2f %9.2f\n", rows[i].name, s->n,
                cc_series_mean(s), cc_series_percentile(s, 50), cc_series_percentile(s, 90),
                cc_series_percentile(s, 100));
    }
    // The engine's per-layer times of the last run (the inference thread has been joined).
    struct cc_layer_timing t[10];
    struct cc_engine *engine = cc_pipeline_engine(a->cam[0].pipeline); // after reloads, the last
    int n = cc_engine_slowest_layers(engine, t, 10);
    const struct cc_model *m = cc_engine_model(engine);
    if (n > 0)
        fprintf(stderr, "camclass: slowest layers of the last frame\n");
    for (int j = 0; j < n; j++)
        fprintf(stderr, "  %8.3f ms  %-16s %s\n", t[j].ms, cc_op_name(m->nodes[t[j].node].op),
                t[j].label ? t[j].label : m->nodes[t[j].node].name);
}

/* The main loop with a window: present the newest result until q/Esc or a signal. */
/* The model the window shows: after a reload (SIGHUP, POST /model) the pipeline runs another. */
struct shown_model {
    const struct cc_model *model; // compared only, never read: it may be freed
    int classes;
};

/* Main thread: the window's header and rows follow the pipeline's model. */
static void follow_model(struct app *a, struct shown_model *shown)
{
    const struct cc_model *m = cc_pipeline_hold_model(a->cam[0].pipeline);
    if (m != shown->model || m->output.classes != shown->classes) {
        if (cc_overlay_set_model(a->overlay, m->name, m->output.classes))
            *shown = (struct shown_model){m, m->output.classes};
    }
    cc_pipeline_release_model(a->cam[0].pipeline);
}

static enum cc_pipeline_state loop_window(struct app *a, uint64_t *seen)
{
    struct cc_frame frame = {0};
    struct cc_result r;
    enum cc_pipeline_state state = CC_PIPELINE_RUNNING;
    int64_t last_present = 0, last_ping = 0;
    uint64_t interval_us = cc_notify_watchdog_interval_us();
    bool ready = false;
    struct shown_model shown = {cc_engine_model(a->engine),
                                cc_engine_model(a->engine)->output.classes};
    while (!atomic_load(&stop_flag)) {
        cc_app_reload_beside(a);
        state = cc_pipeline_wait(a->cam[0].pipeline, *seen, 15);
        struct cc_error msg = {0};
        enum cc_overlay_event ev;
        bool quit = false;
        while ((ev = cc_overlay_poll(a->overlay, &msg)) != CC_OVERLAY_NONE) {
            if (ev == CC_OVERLAY_QUIT)
                quit = true;
            else if (ev == CC_OVERLAY_LABEL)
                cc_window_collect_key(a, cc_overlay_label_key(a->overlay), &frame);
            else if (ev == CC_OVERLAY_CAM)
                show_cam(a);
            else if (ev == CC_OVERLAY_SCREENSHOT || ev == CC_OVERLAY_ERROR)
                fprintf(stderr, "camclass: %s\n", msg.msg);
        }
        if (quit)
            break;
        int64_t t = cc_now_ns();
        // While paused frame keeps the picture shown: what keys 1-9 save (--collect).
        bool fresh = cc_pipeline_latest(a->cam[0].pipeline, seen, &r,
                                        cc_overlay_paused(a->overlay) ? NULL : &frame);
        if (fresh)
            follow_model(a, &shown);
        if (fresh || t - last_present > 100000000) { // redraw for resizes at least at 10 Hz
            struct cc_error err = {0};
            if (a->samples) { // the counts, also of pictures POST /samples saved
                char line[160];
                cc_sample_store_keys_line(a->samples, line, sizeof(line));
                cc_overlay_set_collect(a->overlay, line);
            }
            if (!cc_overlay_present(a->overlay, fresh && frame.size ? &frame : NULL,
                                    fresh ? &r : NULL, &err))
                fprintf(stderr, "camclass: %s\n", err.msg);
            int64_t t2 = cc_now_ns();
            if (fresh && a->cli.profile)
                cc_series_add(&a->present_ms, (double)(t2 - t) / 1e6);
            last_present = t2;
        }
        if (fresh && !ready) { // after the first present: test_headless.py's window part waits
            cc_notify_ready();
            ready = true;
        }
        if (interval_us && (uint64_t)(t - last_ping) / 1000 >= interval_us) {
            cc_notify_watchdog();
            last_ping = t;
        }
        if (state == CC_PIPELINE_FAILED || state == CC_PIPELINE_CLOSED)
            break;
        if (state == CC_PIPELINE_ENDED)
            sleep_ms(15); // the last picture stays until the user quits
    }
    free(frame.data);
    return state == CC_PIPELINE_FAILED ? state : CC_PIPELINE_RUNNING;
}

/* The status line's figures: results so far (the mailbox's generation), the newest result r,
 * and for an image input that does not loop, files done/total. */
static struct cc_status_info status_info(const struct app *a, uint64_t seen,
                                         const struct cc_result *r, int64_t t)
{
    return (struct cc_status_info){
        .results = seen,
        .results_per_s = r->inference_fps,
        .latency_ms = r->latency_ms,
        .files_total = a->cam[0].src.file && !a->cam[0].src.loop
                           ? cc_source_file_count(a->cam[0].src.file)
                           : 0,
        .files_done = seen ? r->seq + 1 : 0,
        .elapsed_s = (double)(t - a->start_ns) / 1e9,
    };
}

/* The main loop without a window: wait for results, signals, the end of a file input; the
 * status line on a terminal. r: the newest result seen, for the last status line. */
static enum cc_pipeline_state loop_headless(struct app *a, uint64_t *seen, struct cc_result *r)
{
    uint64_t interval_us = cc_notify_watchdog_interval_us(), pinged = 0;
    int64_t last_ping = 0;
    bool ready = false;
    enum cc_pipeline_state state = CC_PIPELINE_RUNNING;
    while (!atomic_load(&stop_flag)) {
        if (atomic_exchange(&reload_flag, 0))
            cc_app_reload_model(a);
        state = cc_pipeline_wait(a->cam[0].pipeline, *seen, 100);
        if (cc_pipeline_latest(a->cam[0].pipeline, seen, r, NULL) && !ready) {
            cc_notify_ready();
            cc_notify_status("classifying %s", a->cam[0].src.name);
            ready = true;
        }
        int64_t t = cc_now_ns();
        struct cc_status_info si = status_info(a, *seen, r, t);
        cc_status_line_update(&a->status, t, &si);
        // The watchdog is fed only while results keep coming: a stuck camera or engine gets
        // the service restarted.
        bool requests_only = !a->cam[0].src.camera && !a->cam[0].src.file; // no results to wait for
        if (interval_us && (uint64_t)(t - last_ping) / 1000 >= interval_us &&
            (*seen > pinged || requests_only)) {
            cc_notify_watchdog();
            last_ping = t;
            pinged = *seen;
        }
        if (state != CC_PIPELINE_RUNNING)
            break;
    }
    return state;
}

/* --camera-health: auto checks cameras and network streams, whose pictures should change and
 * stay sharp; a file is what it is. */
static bool camera_health(const struct cam *c)
{
    const char *h = c->cli.camera_health;
    if (h && strcmp(h, "auto") != 0)
        return strcmp(h, "on") == 0;
    return cc_source_choice_live(&c->src, &c->cli);
}

/* One line: the ROI frames are cropped to, and where it comes from. */
static void log_roi(const struct cc_cli *cli, const struct cc_model *m)
{
    const struct cc_roi *roi = cli->roi_set ? &cli->roi : &m->input.roi;
    if (!cli->roi_set && roi->kind == CC_ROI_NONE)
        return; // nothing asked, nothing to say
    char text[96];
    cc_roi_format(roi, text, sizeof(text));
    fprintf(stderr, "camclass: region of interest %s (%s)\n", text,
            cli->roi_set ? "--roi" : "the model's; --roi none for the whole frame");
}

/* File inputs: --fps, else every frame as fast as inference goes when logging a file given on
 * the command line, else (a window, or the looped default sample) the video's own rate or 2
 * images a second. */
static double file_rate(const struct cam *c, bool headless)
{
    const struct cc_cli *cli = &c->cli;
    if (!c->src.file)
        return 0;
    if (cli->fps > 0)
        return cli->fps;
    if (headless && cli->input)
        return 0;
    double fps = cc_source_file_native_fps(c->src.file);
    return fps > 0 ? fps : 2;
}

/* Camera c's pipeline, not started. --output, POST /samples and --serve's /latest and /stream
 * follow the first camera; the window shows every camera (window_grid.h). */
static int create_pipeline(struct app *a, struct cam *c, bool headless)
{
    const struct cc_cli *cli = &c->cli;
    struct cc_error err = {0};
    bool first = c == &a->cam[0];
    struct cc_pipeline_config pc = {
        .engine = c->engine,
        .turns = c->turns,
        .camera = c->src.camera,
        .file = c->src.file,
        .file_fps = file_rate(c, headless),
        .top_k = cli->top_k,
        .unknown_threshold = cli->unknown_threshold,
        .camera_health = camera_health(c),
        .orient = {.rotation = cli->rotation, .hflip = cli->hflip, .vflip = cli->vflip},
        .roi = cli->roi_set ? &cli->roi : NULL,
        .keep_frames = a->overlay != NULL || (first && a->samples != NULL), // shown; saved
        .profile = cli->profile,
        .on_result = cc_report_active(c->report) || cli->frames ? log_result : NULL,
        .on_frame = (first && (a->recorder || a->still)) || cli->serve ? frame_out : NULL,
        .on_model = log_model, // the log, MQTT and --serve's /latest, /metrics
        .ctx = c,
    };
    if (!(c->pipeline = cc_pipeline_create(&pc, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The pipelines and the HTTP service beside them, started. */
static int start_pipeline(struct app *a, const struct cc_overlay_config *oc, bool headless)
{
    struct cc_error err = {0};
    int rc = 0;
    for (int i = 0; i < a->n_cams && !rc; i++)
        rc = create_pipeline(a, &a->cam[i], headless);
    if (rc || (a->cli.serve && (rc = cc_app_start_http(a, oc))))
        return rc;
    for (int i = 0; i < a->n_cams; i++)
        if (!cc_pipeline_start(a->cam[i].pipeline, &err)) {
            fprintf(stderr, "camclass: %s%s%s%s\n", a->cam[i].name ? "camera " : "",
                    a->cam[i].name ? a->cam[i].name : "", a->cam[i].name ? ": " : "", err.msg);
            return 1;
        }
    if (a->http && !a->cam[0].src.camera && !a->cam[0].src.file)
        cc_notify_ready();
    return 0;
}

/* Stops in order: the HTTP service first (requests in flight are answered while the pipeline
 * still runs), then the pipeline (the frame in flight and its log line), then a window's
 * reload thread. Idempotent. */
static void app_stop(struct app *a)
{
    cc_http_stop(a->http);
    cc_model_set_stop(a->model_set);                     // its loads are POST /model's
    for (int i = 0; i < a->n_cams && a->n_cams > 1; i++) // all at once: no camera runs longer
        if (a->cam[i].pipeline)
            cc_pipeline_ask_stop(a->cam[i].pipeline);
    for (int i = 0; i < a->n_cams; i++)
        if (a->cam[i].pipeline)
            cc_pipeline_stop(a->cam[i].pipeline);
    cc_app_reload_join(a); // a stopped pipeline refuses its swap: it ends soon after its load
}

/* The summary line on stderr: the same figures as the log's summary line (pipeline.h). */
/* After the pipeline stopped (end, q, SIGINT/SIGTERM, the log's reader gone): the encoder's last
 * pictures and the container's trailer. False when the recording failed. */
static bool finish_recording(struct app *a)
{
    struct cc_error err = {0};
    if (a->still) {
        if (!cc_still_finish(a->still, &err)) {
            fprintf(stderr, "camclass: %s\n", err.msg);
            return false;
        }
        fprintf(stderr, "camclass: wrote the annotated picture %s\n", a->cli.output);
    }
    if (!a->recorder)
        return true;
    if (!cc_recorder_finish(a->recorder, &err)) {
        if (err.msg[0]) // else said when the write failed
            fprintf(stderr, "camclass: %s\n", err.msg);
        return false;
    }
    uint64_t n = cc_recorder_frames(a->recorder);
    fprintf(stderr, "camclass: recorded %llu frame%s to %s\n", (unsigned long long)n,
            n == 1 ? "" : "s", a->cli.output);
    return true;
}

/* Everything after the loop: the stop, the status line's end, the summaries, the recording;
 * the exit status. */
static int finish_run(struct app *a, enum cc_pipeline_state state, uint64_t seen,
                      struct cc_result *last)
{
    cc_notify_stopping();
    app_stop(a);
    cc_pipeline_latest(a->cam[0].pipeline, &seen, last, NULL);
    struct cc_status_info si = status_info(a, seen, last, cc_now_ns());
    cc_status_line_finish(&a->status, &si); // before anything else goes to stderr
    for (int i = 0; i < a->n_cams; i++) {
        cc_report_finish(a->cam[i].report);
        cc_app_camera_summary(&a->cam[i]);
    }
    cc_app_events_flush(a); // the cameras' last events
    if (a->cli.profile)
        print_profile(a);
    bool recorded = finish_recording(a);
    if (a->n_cams > 1) // each camera's end was said when it came
        return cc_app_cameras_status(a, recorded);
    if (state == CC_PIPELINE_FAILED) {
        fprintf(stderr, "camclass: %s\n", cc_pipeline_error(a->cam[0].pipeline));
        return cc_pipeline_usage_error(a->cam[0].pipeline) ? EXIT_USAGE : 1;
    }
    return recorded ? 0 : 1;
}

static int run(struct app *a)
{
    struct cc_cli *cli = &a->cli;
    int rc;
    if ((rc = cc_app_open_collect(a)) || (rc = cc_app_cameras_open_sources(a)) ||
        (rc = cc_app_open_engine(a)) || (rc = cc_app_cameras_open_engines(a)))
        return rc < 0 ? 0 : rc;

    // What the overlay shows, in the window and in a recording.
    char label[NAME_MAX + 2], shots[PATH_MAX];
    cc_source_choice_label(&a->cam[0].src, label, sizeof(label));
    struct cc_overlay_config oc = {
        .model_name = cc_engine_model(a->engine)->name,
        .backend_name = cc_engine_backend_name(a->engine),
        .device_name = cc_engine_device_name(a->engine),
        .top_k = cli->top_k,
        .classes = cc_engine_model(a->engine)->output.classes,
        .source_label = label,
        .width = cli->window_w,
        .height = cli->window_h,
        .fullscreen = cli->fullscreen,
    };
    bool headless = cc_app_open_window(a, &oc, shots, sizeof(shots));
    if ((rc = cc_app_open_outputs(a, &oc, headless)))
        return rc;
    fprintf(stderr, "camclass: %s on %s (%s)\n", cc_engine_model(a->engine)->name,
            cc_engine_backend_name(a->engine), cc_engine_device_name(a->engine));
    log_roi(cli, cc_engine_model(a->engine));
    if ((rc = start_pipeline(a, &oc, headless)))
        return rc;
    cc_model_set_ready(a->model_set); // a retained model/set waited for the cameras

    uint64_t seen = 0;
    struct cc_result last = {0};
    a->start_ns = cc_now_ns();
    // No status line in a window, nor beside a log that is the same terminal.
    bool no_status = a->overlay || a->n_cams > 1 || cc_report_logs_to_terminal(a->cam[0].report);
    cc_status_line_init(&a->status, no_status ? NULL : stderr, a->start_ns);
    // A SIGHUP during the start (the model load, a FIFO waiting for its writer) only reopens
    // the log: the model just loaded is the one to run.
    atomic_store(&reload_flag, 0);
    enum cc_pipeline_state state = a->overlay && a->n_cams > 1 ? cc_window_grid_loop(a)
                                   : a->overlay                ? loop_window(a, &seen)
                                   : a->n_cams > 1             ? cc_app_cameras_loop(a)
                                                               : loop_headless(a, &seen, &last);
    return finish_run(a, state, seen, &last);
}

static void app_finish(struct app *a)
{
    app_stop(a); // after an early return of run too
    for (int i = 0; i < a->n_cams; i++)
        cc_pipeline_destroy(a->cam[i].pipeline);
    cc_http_destroy(a->http); // after it: the inference thread hands it results
    cc_sample_store_destroy(a->samples);
    cc_overlay_destroy(a->overlay);
    cc_recorder_destroy(a->recorder);
    cc_still_destroy(a->still);
    for (int i = 0; i < a->n_cams; i++) {
        cc_report_destroy(a->cam[i].report);
        cc_capture_destroy(a->cam[i].src.camera);
        cc_source_file_destroy(a->cam[i].src.file);
    }
    cc_app_events_close(a);             // after the reports: MQTT, GPIO lines low and released
    cc_model_set_destroy(a->model_set); // after the MQTT client, which offers to it
    if (!a->models.n)
        cc_engine_destroy(a->engine); // an early return: models has not taken it
    cc_run_models_finish(&a->models); // every engine, the ones reloads put in place included
    cc_model_destroy(a->model);
    cc_cameras_finish(&a->cameras);
    cc_series_free(&a->present_ms);
    cc_series_free(&a->record_ms);
    cc_cli_finish(&a->cli);
}

/* ------------------------------------------------------------------------------------------
 * main
 */

int main(int argc, char **argv)
{
    static struct app a; // large (paths); one per process
    struct cc_error err = {0};
    install_signals();
    a.stop_flag = &stop_flag, a.reopen_flag = &reopen_flag, a.reload_flag = &reload_flag;
    a.stop_requested = stop_requested;
    pthread_mutex_init(&a.reload_lock, NULL);
    cc_cli_init(&a.cli);
    int rc = 0;
    if (cc_cli_parse(&a.cli, argc, argv, &err) != CC_CLI_OK) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if (a.cli.help) {
        cc_cli_usage(stdout);
        goto out;
    }
    if (a.cli.version) {
        printf("camclass %s\n", CAMCLASS_VERSION);
        goto out;
    }
    // The config: --config, else the system one when running installed (and present).
    const char *config = a.cli.config;
    if (!config && cc_asset_running_installed() && access(CAMCLASS_CONFIG_FILE, F_OK) == 0)
        config = CAMCLASS_CONFIG_FILE;
    if (config && !cc_cli_load_config(&a.cli, config, &err)) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if ((rc = cc_app_cameras_setup(&a, config)))
        goto out;
    if (a.cli.list_devices || a.cli.list_cameras) {
        if (a.cli.list_devices && cc_engine_list_devices(stdout, &err) < 0) {
            fprintf(stderr, "camclass: %s\n", err.msg);
            rc = 1;
        }
        if (a.cli.list_cameras && !cc_capture_list(stdout, &err)) {
            fprintf(stderr, "camclass: %s\n", err.msg);
            rc = 1;
        }
        goto out;
    }
    if (!cc_preflight(&a.cli, &err)) { // settings errors before the model loads
        fprintf(stderr, "camclass: %s\n", err.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if (!cc_run_models_choose(&a.cli, a.model_path, sizeof(a.model_path), &err)) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if (a.cli.selftest) {
        char sample[PATH_MAX];
        const char *dir = a.cli.input;
        if (!dir && !cc_source_choice_sample(sample, sizeof(sample), &err)) {
            fprintf(stderr, "camclass: %s\n", err.msg);
            rc = EXIT_USAGE; // the sample cannot be read (docs/CLI.md, "--selftest")
            goto out;
        }
        struct cc_engine_options opt = cc_run_models_options(&a.cli);
        rc = cc_selftest_run(a.model_path, a.cli.labels, dir ? dir : sample, &opt, a.cli.threshold,
                             stdout);
        goto out;
    }
    if (!(rc = cc_app_events_open_gpio(&a)) && !(rc = cc_app_model_set_open(&a)) &&
        !(rc = cc_app_load_model(&a)))
        rc = run(&a);
out:
    app_finish(&a);
    return rc;
}
