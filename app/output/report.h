/* camclass — where each result goes besides the window: the detection log (--log, detlog.h),
 * the detection events for an MQTT broker (--mqtt, mqtt.h), the program run on each
 * detection start and end (--on-event, event_command.h), the snapshot of each start
 * (--snapshot-dir, snapshot.h) and the clip around it (--clip-dir, clip.h), set up from the
 * command line; and the GPIO lines that follow the detections (--gpio, gpio_out.h), which
 * main opens.
 *
 *   struct cc_mqtt *m = cc_report_open_mqtt(&cli, ...);     // --mqtt: one for the process
 *   struct cc_report *rep = cc_report_create(&cfg, &err);   // a camera's; NULL: print err, exit 2
 *   inference thread, per result:  if (!cc_report_result(rep, r)) end the run (log reader gone)
 *   after the pipeline stopped:    cc_report_finish(rep);   // summary lines (published)
 *   then, every camera's finished: cc_mqtt_destroy(m, CC_REPORT_MQTT_FLUSH_MS); // flushed
 *   cc_report_destroy(rep);
 *
 * The log follows --log-mode/--threshold; MQTT always gets detections mode with --threshold
 * (hysteresis 0.1, EWMA 0.3), whatever the log's mode, and so does --on-event. Runtime problems (a
 * log write failing, a reopen failing, the broker coming and going) are one line each through
 * cfg.notice. Threads: cc_report_result runs on the inference thread only (one writer per detection
 * log); create, finish and destroy on the controlling thread while no result is being reported.
 * Ownership: the report copies what it keeps from cfg; reopen is read and cleared, not owned.
 */
#ifndef CC_REPORT_H
#define CC_REPORT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "cli.h"
#include "clip.h"
#include "error.h"
#include "frame.h"
#include "overlay_draw.h"
#include "result.h"
#include "snapshot.h"

enum {
    CC_REPORT_STATS_S = 60,         // a "stats" line (and MQTT event) every this many seconds
    CC_REPORT_MQTT_FLUSH_MS = 3000, // at the end, how long the last events may take to arrive
};

struct cc_mqtt; // mqtt.h

struct cc_report_config {
    const struct cc_cli *cli; // --log-mode, --threshold, --mqtt, --mqtt-ca, --mqtt-auth,
                              // --device-id
    const char *log_path;     // the detection log: a file, "-" (stdout), or NULL for none
    const char *source, *model, *backend; // written on every line
    const char *camera;   // the config's camera name: every log line's "camera", its MQTT topics
                          // camclass/<id>/<camera>/..., Home Assistant's device, CAMCLASS_CAMERA,
                          // the webhook's, program's, snapshots' and clips' notices; NULL for
                          // the command line's one camera (lines and topics as before)
    struct cc_mqtt *mqtt; // --mqtt: the process's connection (cc_report_open_mqtt), shared by
                          // the cameras; borrowed, it outlives the report; NULL: none
    atomic_int *reopen;   // set by SIGHUP: the log is reopened before the next line
    struct cc_gpio_out *gpio; // --gpio: the lines the detections drive (gpio_out.h); borrowed,
                              // it outlives the report; NULL: none
    const struct cc_snapshot_config *snapshot; // --snapshot-dir (NULL or dir NULL: none)
    const struct cc_clip_config *clip;         // --clip-dir (NULL or dir NULL: none)
    int picture_width, picture_height;         // the snapshots' and clips' size (as --output)
    const struct cc_overlay_config *overlay;   // what they show
    double frame_rate; // clips: > 0, a file's frame i is at i / frame_rate s; 0: capture times
    void (*notice)(void *ctx, const char *line); // one line, thread-safe (any thread)
    void *notice_ctx;
};

struct cc_report;
struct cc_gpio_out;
struct cc_mqtt;

/* --mqtt: the process's broker connection (mqtt.h) from cli's settings, its connection notices
 * through notice, the retained model/set message to model_set (mqtt.h on_model_set; NULL: not
 * subscribed). NULL with err on a bad setting (a usage error). */
struct cc_mqtt *cc_report_open_mqtt(const struct cc_cli *cli, void (*notice)(void *, const char *),
                                    void *notice_ctx,
                                    void (*model_set)(void *ctx, struct cc_mqtt *m,
                                                      const void *payload, size_t len),
                                    void *model_set_ctx, struct cc_error *err);

/* Checks the --mqtt settings (URL, device id, auth and CA files), the --on-event program and
 * the --snapshot-dir/--clip-dir folders before anything else is opened, so that a bad one is
 * refused before a model loads. False with err. */
bool cc_report_check(const struct cc_cli *cli, struct cc_error *err);

/* Opens the log and starts the MQTT connection (which never blocks). NULL with err (one line)
 * on a bad --log-mode, a log that cannot be opened or a bad MQTT setting: a usage error. */
struct cc_report *cc_report_create(const struct cc_report_config *cfg, struct cc_error *err);

/* True when the log is standard output and that is a terminal: a status line on stderr would
 * mix into it. */
bool cc_report_logs_to_terminal(const struct cc_report *rep);

/* True when results go anywhere (a log or MQTT): the pipeline's on_result is needed. */
bool cc_report_active(const struct cc_report *rep);

/* One result, computed from frame f (NULL: none; no snapshot then), to the log and MQTT, and
 * its event to the snapshots and the program. False once nobody reads the log (EPIPE): the
 * caller ends the run quietly. Write errors are reported once through notice and the run goes
 * on. */
bool cc_report_result(struct cc_report *rep, const struct cc_result *r, const struct cc_frame *f);

/* The snapshots (--snapshot-dir) for GET /snapshots, or NULL when off. */
struct cc_snapshot *cc_report_snapshot(struct cc_report *rep);

/* Inference thread, after a model reload: the "model" line (detlog.h) to the log and to MQTT
 * (camclass/<id>/model); later lines name the new model. Failures go through notice. */
void cc_report_model(struct cc_report *rep, const char *name, const char *sha256,
                     const char *const *labels, int n_labels);

/* The summary lines (the log's, and MQTT's "summary" event, queued on the shared connection,
 * which its owner flushes after every camera's finish), the webhook's last events (up to
 * CC_REPORT_MQTT_FLUSH_MS), the last snapshots, clip and program. */
void cc_report_finish(struct cc_report *rep);

/* Frees everything (finishing nothing); accepts NULL. */
void cc_report_destroy(struct cc_report *rep);

#endif
