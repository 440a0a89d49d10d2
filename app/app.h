/* camclass — the state of one run of the camclass program, shared by main.c and the modules
 * that main's work is split into (app_cameras.c: several cameras). One struct app per process,
 * owned by main; see each field for the threads that use it.
 */
#ifndef CC_APP_H
#define CC_APP_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cameras.h"
#include "cli.h"
#include "engine.h"
#include "engine_turns.h"
#include "file_hash.h"
#include "gpio_out.h"
#include "http.h"
#include "model_set.h"
#include "overlay.h"
#include "pipeline.h"
#include "recorder.h"
#include "report.h"
#include "run_models.h"
#include "sample_store.h"
#include "source_choice.h"
#include "still.h"
#include "status_line.h"

enum { CC_APP_EXIT_USAGE = 2 };

struct app;

/* One camera of the run (cameras.h): the command line's one source, or each of the config's
 * "cameras". Main owns it; its pipeline's threads use what their comments say. */
struct cam {
    struct app *app;
    const char *name;              // the config's name; NULL for the command line's one source
    struct cc_cli cli;             // its settings: a view (cc_cameras_view) of app->cli and
                                   // the camera's own keys; never cc_cli_finish'ed
    struct cc_source_choice src;   // the camera, stream or file source; owned
    struct cc_report *report;      // the detection log and MQTT; owned
    struct cc_gpio_out *gpio;      // its "gpio" (--gpio): requested before the model loads,
                                   // driven by its report, low and released in app_finish
    struct cc_pipeline *pipeline;  // owned
    struct cc_engine *engine;      // the engine of its model at the start (app->models), not
                                   // owned; a reload replaces it (the pipeline has the one in use)
    int model;                     // its model's index in app->models
    struct cc_engine_turns *turns; // shared with the cameras of the same model; NULL: alone
    atomic_int reopen;             // several cameras: main passes each SIGHUP on to every log
                                   // (and reloads the changed models: app_reload.c)
    uint64_t results;              // results seen by log_result (its inference thread's)
    uint64_t seen;                 // main: the newest result it has seen
    enum cc_pipeline_state state;  // main: RUNNING until it saw the pipeline end
};

struct app {
    struct cc_cli cli;
    // main's signal flags (lock-free atomics, set by its handlers: main.c) and the stop test a
    // connecting stream polls; set by main before anything else
    atomic_int *stop_flag, *reopen_flag, *reload_flag;
    bool (*stop_requested)(void *ctx);
    struct cc_cameras cameras; // what the config's "cameras" (or the command line) asked for
    struct cam cam[CC_CAMERAS_MAX];
    int n_cams;
    struct cc_run_models models; // one engine per model, each owned; [0]: model_path's, the
                                 // top-level one (reloads replace them: model_reload.h)
    char model_path[PATH_MAX];
    char model_sha[CC_SHA256_HEX]; // model_path's sha256 when loaded, for models[0]

    struct cc_model *model;   // loaded, until the engine takes it
    struct cc_engine *engine; // the first engine: owned until models takes it (its [0]); for
                              // the start only (a reload frees it)
    struct cc_mqtt *mqtt;     // --mqtt: the one broker connection, every camera's report
                              // borrows it; flushed after their finish (app_events.c)
    struct cc_overlay *overlay;
    bool cam_said;                   // the window's h has said on stderr that the model has no map
    struct cc_recorder *recorder;    // --output; cc_recorder_add on the inference thread
    struct cc_still *still;          // --output PICTURE.jpg instead; cc_still_keep there too
    struct cc_http *http;            // --serve; stopped before the pipeline, destroyed after it
    struct cc_model_set *model_set;  // --mqtt-model-token: stopped beside http, freed after the
                                     // reports (their MQTT client offers to it)
    struct cc_sample_store *samples; // --collect; the window's keys and POST /samples (locks
                                     // itself); destroyed after the HTTP service
    struct cc_series present_ms;
    struct cc_series record_ms;   // --profile: the inference thread's time handing a frame to
                                  // the recorder (written by that thread, read after the join)
    struct cc_status_line status; // headless on a terminal: the self-overwriting stderr line
    int64_t start_ns;             // when the pipeline started (the status line's ETA)
    // One reload at a time (main's SIGHUP, a window's reload thread, or a POST /model on a
    // connection's thread); guards what a reload writes in models (each model's engine, kept and
    // sha256: the reloaded bundle's, written before cc_pipeline_swap and read by on_model on
    // the inference threads during it, the swap's lock ordering the two).
    pthread_mutex_t reload_lock;
    // With a window, a SIGHUP's reload runs on a thread of its own (loading may take seconds,
    // and main must keep drawing): reloading is set by main, cleared by that thread; main joins
    // it before the next one and in app_stop.
    pthread_t reload_thread;
    bool reload_joinable;
    atomic_bool reloading;
};

/* ------------------------------------------------------------------------------------------
 * Several cameras (app_cameras.c)
 */

/* The cameras of the run (cameras.h), each with its view of the settings; exit 2 for a bad
 * camera entry, or for what several cameras cannot do yet, before any model loads. */
int cc_app_cameras_setup(struct app *a, const char *config);

/* Each camera's source; the first problem ends the start (exit status as
 * cc_source_choice_open's; -1: a stop while a stream was connecting). */
int cc_app_cameras_open_sources(struct app *a);

/* After main opened the first engine: one per other model a camera names; cameras on one engine
 * take turns at it (run_models.h). 0 or the exit status after one line. */
int cc_app_cameras_open_engines(struct app *a);

/* The main loop of several cameras without a window: until every camera has ended or a stop
 * signal; each camera's end is said when it comes. The watchdog is fed while results come. */
enum cc_pipeline_state cc_app_cameras_loop(struct app *a);

/* Main: camera c's pipeline has ended (state st): c->state, and one line; the others go on. */
void cc_app_camera_ended(struct cam *c, enum cc_pipeline_state st);

/* Main, each round of a loop of several cameras: SIGHUP reopens every camera's log and reloads
 * the model files that changed (app_reload.c): here, or (beside: the window's grid, which must
 * keep drawing) on a thread of its own, as cc_app_reload_beside. */
void cc_app_cameras_sighup(struct app *a, bool beside);

/* Several cameras, at the end (their pipelines stopped): says the ends the loop did not see (a
 * stop signal or q left it first); 2 when a camera's settings did not fit its
 * frames, 1 when a camera failed or the recording did (recorded false), else 0. */
int cc_app_cameras_status(struct app *a, bool recorded);

/* Camera c's folder name under --snapshot-dir and --clip-dir (event_files.h): its config name
 * with the bytes other than A-Z a-z 0-9 _ - . made '_' ("back gate" -> back_gate), else one made
 * from its input (/dev/video0 -> video0). */
void cc_app_camera_folder(const struct cam *c, char *out, size_t size);

/* Camera c's summary line on stderr ("camera NAME: " first with several). */
void cc_app_camera_summary(const struct cam *c);

/* ------------------------------------------------------------------------------------------
 * The events' receivers of the cameras (app_events.c)
 */

/* In cc_app_cameras_setup: each camera's own "webhook", "on-event" and "ha-binary" checked as
 * the flags are; with --mqtt, camera names that are not UTF-8 or would be one Home Assistant
 * object id; two cameras on one GPIO line. 0, or exit 2 after one line naming the camera(s). */
int cc_app_events_check(const struct app *a, const char *config);

/* Before the model loads: each camera's GPIO lines ("gpio", else --gpio) requested, low. 0, or
 * exit 2 after one line (a bad spec, a missing chip or line, a busy line). */
int cc_app_events_open_gpio(struct app *a);

/* After the engines opened: a camera's gpio label its model does not have, said once. */
void cc_app_events_warn_gpio(const struct app *a);

/* --mqtt: the process's connection (mqtt.h), before the cameras' reports; its notices through
 * notice (ctx: the app). 0, or exit 2 after one line. */
int cc_app_events_open_mqtt(struct app *a, void (*notice)(void *ctx, const char *line));

/* After every camera's report finished: up to CC_REPORT_MQTT_FLUSH_MS for the last events,
 * then "offline" and the connection closed. */
void cc_app_events_flush(struct app *a);

/* At the end (after the reports are destroyed): the connection if still open, every camera's
 * GPIO lines low and released. */
void cc_app_events_close(struct app *a);

/* ------------------------------------------------------------------------------------------
 * The outputs (app_outputs.c): each 0 or the exit status after one line on stderr
 */

/* --collect DIR [--classes A,B]: the sample store, before the model loads (exit 2 when DIR or
 * a class name will not do). */
int cc_app_open_collect(struct app *a);

/* The window (oc: its settings; shots: size bytes for the screenshot folder it names): without
 * a display one line says so and the run goes on headless. True when headless. */
bool cc_app_open_window(struct app *a, struct cc_overlay_config *oc, char *shots, size_t size);

/* Every camera's report (the detection log, MQTT through the run's one connection, snapshots,
 * clips, the event receivers) and the --output recording or picture (of the first camera). */
int cc_app_open_outputs(struct app *a, const struct cc_overlay_config *oc, bool headless);

/* --serve, once the pipelines exist: /predict beside the first camera's pipeline, /latest and
 * /stream per camera (exit 1 when the address cannot be bound). */
int cc_app_start_http(struct app *a, const struct cc_overlay_config *oc);

/* ------------------------------------------------------------------------------------------
 * The first model and its reloads (app_reload.c)
 */

/* Loads a->model_path (--labels applied) into a->model and its sha256 (what a SIGHUP compares
 * with): a file that is not a usable bundle is a bad argument (exit 2). */
int cc_app_load_model(struct app *a);

/* a->engine from a->model on the chosen backend (a device failure: exit 1). */
int cc_app_open_engine(struct app *a);

/* Main, after a SIGHUP: every model file the cameras run again, unless it is the bundle
 * running (same sha256); each changed one is swapped in for every camera that runs it; a bundle
 * that fails leaves the old one running (one line says why). */
void cc_app_reload_model(struct app *a);

/* Main thread, with a window: a SIGHUP's reload on a thread of its own (loading may take
 * seconds); a SIGHUP while one runs waits for it. */
void cc_app_reload_beside(struct app *a);

/* --mqtt-model-token: the model/set worker (model_set.h) whose loads are POST /model's; 2 after
 * one line for a token file that does not do or no --mqtt. */
int cc_app_model_set_open(struct app *a);

/* Joins the window's reload thread, if any. */
void cc_app_reload_join(struct app *a);

/* A connection's thread: POST /model (http.h load_model; ctx is the app): the top-level model
 * replaced for the cameras that run it (409 when none does). */
int cc_app_http_load_model(void *ctx, const char *path, struct cc_http_loaded *out, char *msg,
                           size_t msg_size);

#endif
