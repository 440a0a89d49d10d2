/* camclass — the window's grid of cameras and its main loop (see window_grid.h). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "grid.h"
#include "notify.h"
#include "window_grid.h"

/* Main's copy of camera i's newest result and frame: what a tile, an enlarged camera and
 * --collect show and save. */
struct shown_cam {
    struct cc_frame frame;        // newest frame; data owned (cc_pipeline_latest grows it)
    struct cc_result r;           // newest result; its labels belong to model
    const struct cc_model *model; // the model r came from: compared only, never read
    bool have_result;
};

struct grid_loop {
    struct app *a;
    int shown;     // -1: the grid; else the camera enlarged
    bool cam_said; // h has said on stderr that a model has no map
    bool paused;
    const struct cc_model *panel_model; // the model the panel shows: compared only
    struct cc_result dropped;           // while paused: results taken and not shown
    struct shown_cam cam[CC_CAMERAS_MAX];
};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

void cc_window_collect_key(struct app *a, int key, const struct cc_frame *frame)
{
    char label[80], file[CC_SAMPLE_STORE_FILE_MAX], text[200];
    struct cc_error err = {0};
    if (!a->samples) {
        cc_overlay_notice(a->overlay, "keys 1-9 label pictures with --collect DIR");
        return;
    }
    if (!cc_sample_store_key_class(a->samples, key, label, sizeof(label))) {
        snprintf(text, sizeof(text), "key %d has no class (--classes A,B,... or DIR/<class>/)",
                 key);
        cc_overlay_notice(a->overlay, text);
        return;
    }
    if (!frame->size) {
        cc_overlay_notice(a->overlay, "no frame yet to save");
        return;
    }
    if (cc_sample_store_save_frame(a->samples, label, frame, file, sizeof(file), &err) !=
        CC_SAMPLE_SAVED) {
        fprintf(stderr, "camclass: --collect: %s\n", err.msg);
        snprintf(text, sizeof(text), "not saved: %.150s", err.msg);
    } else {
        snprintf(text, sizeof(text), "saved %.64s/%.60s", label, file);
    }
    cc_overlay_notice(a->overlay, text); // the counts line follows at the next present
}

/* h: every camera's pipeline asked for class activation maps (the enlarged camera's shows in
 * the panel's picture, the tiles' in theirs), or no more; a model without one says so once. */
static void show_cam(struct grid_loop *g)
{
    struct app *a = g->a;
    bool on = cc_overlay_cam_shown(a->overlay);
    for (int i = 0; i < a->n_cams; i++) {
        struct cc_error err = {0};
        if (cc_pipeline_want_cam(a->cam[i].pipeline, on, &err) || !on)
            continue;
        cc_overlay_notice(a->overlay, err.msg);
        if (!g->cam_said)
            fprintf(stderr, "camclass: %s\n", err.msg);
        g->cam_said = true;
    }
}

/* The enlarged camera's name on the panel's fps line, with "(stopped)" once it has. */
static void name_source(struct app *a, const struct cam *c)
{
    char label[CC_CAMERA_NAME_MAX + 16];
    snprintf(label, sizeof(label), "%s%s", c->name,
             c->state == CC_PIPELINE_RUNNING ? "" : " (stopped)");
    cc_overlay_set_source(a->overlay, label);
}

/* Enlarges camera i (-1: back to the grid): the panel takes its model, name, frame and result. */
static void show(struct grid_loop *g, int i)
{
    struct app *a = g->a;
    g->shown = i;
    cc_overlay_show_grid(a->overlay, i < 0);
    if (i < 0)
        return;
    struct cam *c = &a->cam[i];
    struct shown_cam *s = &g->cam[i];
    const struct cc_model *m = cc_pipeline_hold_model(c->pipeline);
    if (cc_overlay_set_model(a->overlay, m->name, m->output.classes)) // drops the old result
        g->panel_model = m;
    name_source(a, c);
    struct cc_error err = {0};
    // The result's labels are read only while its model is the one held (a reload frees it).
    // While paused these are the camera's paused picture and result: shown all the same.
    bool labels_ok = s->have_result && s->model == m;
    if (!cc_overlay_set_picture(a->overlay, s->frame.size ? &s->frame : NULL,
                                labels_ok ? &s->r : NULL, &err) ||
        !cc_overlay_present(a->overlay, NULL, NULL, &err))
        fprintf(stderr, "camclass: %s\n", err.msg);
    cc_pipeline_release_model(c->pipeline);
}

/* One key or click; false to quit. */
static bool handle(struct grid_loop *g, enum cc_overlay_event ev)
{
    struct app *a = g->a;
    struct cc_overlay *ov = a->overlay;
    enum cc_grid_input in = ev == CC_OVERLAY_LABEL  ? CC_GRID_DIGIT
                            : ev == CC_OVERLAY_TAB  ? CC_GRID_TAB
                            : ev == CC_OVERLAY_BACK ? CC_GRID_BACK
                                                    : CC_GRID_CLICK;
    int value = in == CC_GRID_DIGIT   ? cc_overlay_label_key(ov)
                : in == CC_GRID_CLICK ? cc_overlay_clicked_tile(ov)
                                      : 0;
    struct cc_grid_step st = cc_grid_step(g->shown, a->n_cams, a->samples != NULL, in, value);
    char text[64];
    switch (st.action) {
    case CC_GRID_QUIT:
        return false;
    case CC_GRID_SHOW:
        show(g, st.shown);
        break;
    case CC_GRID_COLLECT:
        cc_window_collect_key(a, value, &g->cam[g->shown].frame);
        break;
    case CC_GRID_NOTHING:
        if (in == CC_GRID_DIGIT && value > 0) {
            snprintf(text, sizeof(text), "no camera %d (1 to %d)", value, a->n_cams);
            cc_overlay_notice(ov, text);
        }
        break;
    }
    return true;
}

/* The window's events; false to quit. */
static bool poll_events(struct grid_loop *g)
{
    struct cc_overlay *ov = g->a->overlay;
    struct cc_error msg = {0};
    enum cc_overlay_event ev;
    while ((ev = cc_overlay_poll(ov, &msg)) != CC_OVERLAY_NONE) {
        if (ev == CC_OVERLAY_QUIT)
            return false;
        if (ev == CC_OVERLAY_CAM)
            show_cam(g);
        else if (ev == CC_OVERLAY_SCREENSHOT || ev == CC_OVERLAY_ERROR)
            fprintf(stderr, "camclass: %s\n", msg.msg);
        else if ((ev == CC_OVERLAY_LABEL || ev == CC_OVERLAY_TAB || ev == CC_OVERLAY_BACK ||
                  ev == CC_OVERLAY_CLICK) &&
                 !handle(g, ev))
            return false;
    }
    g->paused = cc_overlay_paused(ov);
    return true;
}

/* Why camera c stopped, for its tile. */
static const char *stop_reason(const struct cam *c)
{
    return c->state == CC_PIPELINE_FAILED  ? cc_pipeline_error(c->pipeline)
           : c->state == CC_PIPELINE_ENDED ? "its input ended"
                                           : "done";
}

/* Camera i's newest result and frame into its tile; its end said once. True when there was a
 * new result. */
static bool take_camera(struct grid_loop *g, int i)
{
    struct app *a = g->a;
    struct cam *c = &a->cam[i];
    struct shown_cam *s = &g->cam[i];
    enum cc_pipeline_state st = cc_pipeline_wait(c->pipeline, UINT64_MAX, 0);
    // While paused the frame and result kept are the ones shown: what keys 1-9 save
    // (--collect), what enlarging shows.
    struct cc_result *later = g->paused ? &g->dropped : &s->r;
    bool fresh = cc_pipeline_latest(c->pipeline, &c->seen, later, g->paused ? NULL : &s->frame);
    struct cc_error err = {0};
    if (fresh && !g->paused) {
        s->model = cc_pipeline_hold_model(c->pipeline); // r's labels are its: read under it
        s->have_result = true;
        if (!cc_overlay_tile_update(a->overlay, i, s->frame.size ? &s->frame : NULL, &s->r, &err))
            fprintf(stderr, "camclass: camera %s: %s\n", c->name, err.msg);
        cc_pipeline_release_model(c->pipeline);
    }
    if (c->state == CC_PIPELINE_RUNNING && st != CC_PIPELINE_RUNNING) {
        cc_app_camera_ended(c, st);
        cc_overlay_tile_stopped(a->overlay, i, stop_reason(c));
        if (i == g->shown)
            name_source(a, c);
    }
    return fresh;
}

/* Draws the window: the grid, or the enlarged camera with its newest result when fresh. */
static void present(struct grid_loop *g, bool fresh)
{
    struct app *a = g->a;
    struct cc_error err = {0};
    if (a->samples) { // the counts, also of pictures POST /samples saved
        char line[160];
        cc_sample_store_keys_line(a->samples, line, sizeof(line));
        cc_overlay_set_collect(a->overlay, line);
    }
    if (g->shown < 0 || !fresh) {
        if (!cc_overlay_present(a->overlay, NULL, NULL, &err))
            fprintf(stderr, "camclass: %s\n", err.msg);
        return;
    }
    struct cam *c = &a->cam[g->shown];
    struct shown_cam *s = &g->cam[g->shown];
    const struct cc_model *m = cc_pipeline_hold_model(c->pipeline);
    if (m != g->panel_model && cc_overlay_set_model(a->overlay, m->name, m->output.classes))
        g->panel_model = m; // a reload: the header and rows follow it
    bool ok = cc_overlay_present(a->overlay, s->frame.size ? &s->frame : NULL,
                                 s->model == m ? &s->r : NULL, &err);
    cc_pipeline_release_model(c->pipeline);
    if (!ok)
        fprintf(stderr, "camclass: camera %s: %s\n", c->name, err.msg);
}

/* Waits up to 15 ms for a result of the enlarged camera while it runs, else of the first
 * running one; 15 ms when none runs. */
static void wait_a_little(const struct grid_loop *g)
{
    struct app *a = g->a;
    int w = g->shown >= 0 && a->cam[g->shown].state == CC_PIPELINE_RUNNING ? g->shown : -1;
    for (int i = 0; i < a->n_cams && w < 0; i++)
        if (a->cam[i].state == CC_PIPELINE_RUNNING)
            w = i;
    if (w >= 0)
        cc_pipeline_wait(a->cam[w].pipeline, a->cam[w].seen, 15);
    else
        sleep_ms(15); // the last pictures stay until the user quits
}

/* Opens the grid; without it (out of memory) the first camera is shown enlarged. */
static void open_grid(struct grid_loop *g)
{
    struct app *a = g->a;
    const char *names[CC_CAMERAS_MAX];
    struct cc_error err = {0};
    for (int i = 0; i < a->n_cams; i++)
        names[i] = a->cam[i].name;
    g->shown = -1;
    if (!cc_overlay_open_grid(a->overlay, a->n_cams, names, &err)) {
        fprintf(stderr, "camclass: %s; the window shows one camera at a time (keys 1-%d)\n",
                err.msg, a->n_cams < 9 ? a->n_cams : 9);
        show(g, 0);
    }
}

enum cc_pipeline_state cc_window_grid_loop(struct app *a)
{
    struct grid_loop *g = calloc(1, sizeof(*g)); // large: a result and a frame per camera
    if (!g) {
        fprintf(stderr, "camclass: out of memory for the window's grid\n");
        return CC_PIPELINE_RUNNING; // as q: the summaries and the cameras' ends follow
    }
    g->a = a;
    int64_t last_present = 0, last_ping = 0;
    uint64_t interval_us = cc_notify_watchdog_interval_us();
    bool ready = false;
    open_grid(g);
    while (!atomic_load(a->stop_flag)) {
        cc_app_cameras_sighup(a, true); // the reload on a thread: the grid keeps drawing
        wait_a_little(g);
        if (!poll_events(g))
            break;
        bool any = false, shown_fresh = false;
        int running = 0, ended = 0;
        for (int i = 0; i < a->n_cams; i++) {
            bool fresh = take_camera(g, i);
            any |= fresh;
            shown_fresh |= fresh && i == g->shown;
            running += a->cam[i].state == CC_PIPELINE_RUNNING;
            ended += a->cam[i].state == CC_PIPELINE_ENDED;
        }
        int64_t t = cc_now_ns();
        if (any || t - last_present > 100000000) { // redraw for resizes at least at 10 Hz
            present(g, shown_fresh);
            last_present = cc_now_ns();
        }
        if (any && !ready) { // after the first present, as with one camera
            cc_notify_ready();
            cc_notify_status("classifying %d cameras", a->n_cams);
            ready = true;
        }
        if (interval_us && (uint64_t)(t - last_ping) / 1000 >= interval_us) {
            cc_notify_watchdog();
            last_ping = t;
        }
        if (!running && !ended)
            break; // every camera failed or was closed: nothing more will come
    }
    for (int i = 0; i < a->n_cams; i++)
        free(g->cam[i].frame.data);
    free(g);
    return CC_PIPELINE_RUNNING;
}
