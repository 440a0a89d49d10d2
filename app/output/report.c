/* camclass — the detection log, MQTT events, Home Assistant and the on-event program of a run
 * (see report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detector.h"
#include "detlog.h"
#include "event_command.h"
#include "event_files.h"
#include "gpio_out.h"
#include "ha_discovery.h"
#include "health.h"
#include "mqtt.h"
#include "clip.h"
#include "snapshot.h"
#include "webhook.h"
#include "report.h"

enum { SINK_MQTT, SINK_WEBHOOK, N_SINKS }; // where detections-mode events go besides the log

struct cc_report {
    struct cc_detlog *log;             // --log; NULL: none
    struct cc_mqtt *mqtt;              // --mqtt: the process's broker connection (borrowed) ...
    struct cc_detlog *sinks[N_SINKS];  // detections-mode events for MQTT and the webhook;
                                       // NULL where not asked for
    struct cc_detector *events;        // --on-event, HA: the detections they act on ...
    struct cc_event_command *on_event; // ... the program run on each ...
    struct cc_gpio_out *gpio;          // ... the GPIO lines that follow them (borrowed) ...
    bool ha;                           // ... the Home Assistant state published (--mqtt)
    char device_id[65];                // the MQTT topic level
    char *camera;                      // the config's camera name (topics, notices); NULL: the
                                       // command line's one camera; owned
    char *model;                       // the model's name, for HA's device block; owned
    const struct cc_cli *cli;          // --ha-prefix, --ha-binary
    struct cc_webhook *webhook;        // --webhook: the receiver of sinks[SINK_WEBHOOK]
    struct cc_snapshot *snapshot;      // --snapshot-dir: the pictures of the events; when on,
                                       // its writer runs on_event after each (in order)
    struct cc_clip *clip;              // --clip-dir: the video around each start
    unsigned health;                   // the camera conditions on, as of the last result
    bool log_terminal;                 // the log is standard output, and that is a terminal
    atomic_int *reopen;
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
};

static void say(struct cc_report *rep, const char *line)
{
    if (rep->notice)
        rep->notice(rep->notice_ctx, line);
}

/* Any thread: a line of the webhook's, the program's, the snapshot writer's or the clip
 * writer's, which of several cameras says. */
static void camera_notice(void *ctx, const char *line)
{
    struct cc_report *rep = ctx;
    char text[1200];
    snprintf(text, sizeof(text), "camera %s: %s", rep->camera, line);
    say(rep, text);
}

/* The notice for the receivers of this camera's events: named by camera when it has a name. */
static void (*camera_notice_fn(struct cc_report *rep))(void *, const char *)
{
    return rep->camera ? camera_notice : rep->notice;
}

static void *camera_notice_ctx(struct cc_report *rep)
{
    return rep->camera ? (void *)rep : rep->notice_ctx;
}

static struct cc_mqtt_config mqtt_config(const struct cc_cli *cli)
{
    return (struct cc_mqtt_config){
        .url = cli->mqtt,
        .ca_file = cli->mqtt_ca,
        .auth_file = cli->mqtt_auth,
        .device_id = cli->device_id,
    };
}

/* The --on-event program. */
static bool create_on_event(struct cc_report *rep, const struct cc_report_config *cfg,
                            struct cc_error *err)
{
    const struct cc_cli *cli = cfg->cli;
    struct cc_event_command_config ec = {
        .program = cli->on_event,
        .timeout_s = cli->on_event_timeout > 0 ? cli->on_event_timeout : CC_CLI_ON_EVENT_TIMEOUT_S,
        .camera = cfg->camera ? cfg->camera : cfg->source, // CAMCLASS_CAMERA
        .notice = camera_notice_fn(rep),
        .notice_ctx = camera_notice_ctx(rep),
    };
    return (rep->on_event = cc_event_command_create(&ec, err)) != NULL;
}

static const char *ha_prefix(const struct cc_cli *cli)
{
    return cli->ha_prefix ? cli->ha_prefix : "homeassistant";
}

static bool ha_on(const struct cc_cli *cli)
{
    return cli->mqtt && !(cli->ha_discovery && strcmp(cli->ha_discovery, "off") == 0);
}

bool cc_report_check(const struct cc_cli *cli, struct cc_error *err)
{
    struct cc_mqtt_config mc = mqtt_config(cli);
    if (cli->mqtt && !cc_mqtt_check(&mc, err))
        return false;
    if (ha_on(cli) && !cc_ha_check(ha_prefix(cli), cli->ha_binary, err))
        return false;
    if (cli->webhook && !cc_webhook_check_url(cli->webhook, err))
        return false;
    if ((cli->snapshot_dir && !cc_event_folder_check(cli->snapshot_dir, "--snapshot-dir", err)) ||
        (cli->clip_dir && !cc_event_folder_check(cli->clip_dir, "--clip-dir", err)))
        return false;
    // The program is looked for now, before a model loads; create looks again.
    struct cc_event_command_config ec = {.program = cli->on_event, .timeout_s = 1};
    struct cc_event_command *c = cli->on_event ? cc_event_command_create(&ec, err) : NULL;
    cc_event_command_destroy(c);
    return !cli->on_event || c;
}

struct cc_mqtt *cc_report_open_mqtt(const struct cc_cli *cli, void (*notice)(void *, const char *),
                                    void *notice_ctx,
                                    void (*model_set)(void *ctx, struct cc_mqtt *m,
                                                      const void *payload, size_t len),
                                    void *model_set_ctx, struct cc_error *err)
{
    struct cc_mqtt_config mc = mqtt_config(cli);
    mc.notice = notice;
    mc.notice_ctx = notice_ctx;
    mc.on_model_set = model_set;
    mc.model_set_ctx = model_set_ctx;
    return cc_mqtt_create(&mc, err);
}

static bool retain(void *ctx, const char *topic, const char *payload)
{
    return cc_mqtt_retain(ctx, topic, payload, strlen(payload));
}

/* The Home Assistant settings of this camera. */
static struct cc_ha_config ha_config(const struct cc_report *rep)
{
    return (struct cc_ha_config){
        .prefix = ha_prefix(rep->cli),
        .device_id = rep->device_id,
        .camera = rep->camera,
        .model = rep->model,
        .version = CAMCLASS_VERSION,
        .binary = rep->cli->ha_binary,
    };
}

/* camclass/<id>[/<camera>]/state: label NULL for none. */
static void ha_state(struct cc_report *rep, const char *label, double score)
{
    char topic[CC_HA_TOPIC_MAX], *text = cc_ha_state(label, score, rep->model);
    struct cc_ha_config hc = ha_config(rep);
    cc_ha_topic(&hc, "state", topic, sizeof(topic));
    if (!text || !retain(rep->mqtt, topic, text))
        say(rep, "mqtt: out of memory for the Home Assistant state; it is not published");
    free(text);
}

/* The discovery configs (again after a reload: the device block names the model) and the
 * state "none". */
static void ha_announce(struct cc_report *rep)
{
    struct cc_ha_config hc = ha_config(rep);
    if (!cc_ha_configs(&hc, retain, rep->mqtt))
        say(rep, "mqtt: the Home Assistant discovery configs were not all published (out of "
                 "memory, or too many retained topics)");
    ha_state(rep, NULL, 0);
}

/* The snapshot's writer, after an event's picture is complete (or an end): the program. */
static void after_snapshot(void *ctx, const struct cc_event_info *ev)
{
    struct cc_report *rep = ctx;
    if (rep->on_event)
        cc_event_command_run(rep->on_event, ev); // says itself why it did not run
}

/* "key": value on the line each log and sink writes for this result. */
static void note_all(struct cc_report *rep, const char *key, const char *value)
{
    for (int i = 0; i < N_SINKS; i++)
        if (rep->sinks[i])
            cc_detlog_note(rep->sinks[i], key, value);
    if (rep->log)
        cc_detlog_note(rep->log, key, value);
}

// What this result (computed from frame f, NULL when unknown) changed: the GPIO lines, the
// clip and the snapshot, the on-event program, the Home Assistant state.
static void act(struct cc_report *rep, const struct cc_result *r, const struct cc_frame *f)
{
    struct cc_detection d = cc_detector_update(rep->events, r);
    if (d.kind == CC_DETECTION_NONE)
        return;
    struct cc_error err = {0};
    if (rep->gpio && !cc_gpio_out_detection(rep->gpio, &d, &err))
        say(rep, err.msg);
    bool start = d.kind != CC_DETECTION_CLEAR;
    struct cc_event_info ev = {
        .start = start,
        .label = d.now.label,
        .score = d.now.score,
        .previous = d.kind == CC_DETECTION_CHANGE ? d.previous.label : NULL,
    };
    char path[CC_EVENT_PATH_MAX];
    if (rep->clip && start && f)
        cc_clip_event(rep->clip, r, d.now.label, path, sizeof(path));
    else if (rep->clip && !start && cc_clip_current(rep->clip)[0])
        note_all(rep, "clip", cc_clip_current(rep->clip)); // the clip of this detection
    if (rep->snapshot) { // the program runs from the writer, after the picture is saved
        if (cc_snapshot_event(rep->snapshot, &ev, r, start ? f : NULL, path, sizeof(path)) &&
            path[0])
            note_all(rep, "snapshot", path);
    } else if (rep->on_event) {
        cc_event_command_run(rep->on_event, &ev); // says itself why it did not run
    }
    if (rep->ha)
        ha_state(rep, start ? d.now.label : NULL, d.now.score);
}

/* The detection settings of --log-mode/--threshold. False with err on a bad --log-mode. */
static bool detlog_settings(const struct cc_report_config *rc, struct cc_detlog_config *cfg,
                            struct cc_error *err)
{
    const struct cc_cli *cli = rc->cli;
    enum cc_detlog_mode mode = CC_DETLOG_EVERY_FRAME;
    if (cli->log_mode) {
        if (strcmp(cli->log_mode, "detections") == 0)
            mode = CC_DETLOG_DETECTIONS;
        else if (strcmp(cli->log_mode, "every") != 0)
            return cc_error_set(err, "--log-mode takes every or detections, not \"%s\"",
                                cli->log_mode);
    } else if (cli->threshold >= 0) {
        mode = CC_DETLOG_DETECTIONS; // a threshold only means something there
    }
    double threshold = cli->threshold >= 0 ? cli->threshold : 0.5;
    *cfg = (struct cc_detlog_config){
        .mode = mode,
        .threshold = threshold,
        .hysteresis = threshold < 0.1 ? threshold : 0.1,
        .ewma_alpha = mode == CC_DETLOG_DETECTIONS ? 0.3 : 0,
        .stats_interval_s = CC_REPORT_STATS_S,
        .source = rc->source,
        .camera = rc->camera,
        .model = rc->model,
        .backend = rc->backend,
    };
    return true;
}

static bool to_terminal(const char *log_path)
{
    return strcmp(log_path, "-") == 0 && isatty(STDOUT_FILENO);
}

/* --log-format: text or json as asked, else text for a log on a terminal (people read it). */
static bool log_as_text(const struct cc_cli *cli, const char *log_path)
{
    if (cli->log_format)
        return strcmp(cli->log_format, "text") == 0;
    return to_terminal(log_path);
}

// camclass/<id>/<event>, or camclass/<id>/<camera>/<event> for a camera of the config's.
static bool mqtt_sink(void *ctx, const char *event, const char *line, size_t len)
{
    struct cc_report *rep = ctx;
    if (!rep->camera)
        return cc_mqtt_publish(rep->mqtt, event, line, len);
    char topic[CC_HA_TOPIC_MAX];
    snprintf(topic, sizeof(topic), "%s/%s", rep->camera, event);
    return cc_mqtt_publish(rep->mqtt, topic, line, len);
}

// Every event but the minute's stats, which are for a log or a dashboard.
static bool webhook_sink(void *ctx, const char *event, const char *line, size_t len)
{
    return strcmp(event, "stats") == 0 || cc_webhook_post(ctx, line, len);
}

/* A detections-mode log whose lines go to sink (MQTT, the webhook), from the log's settings. */
static struct cc_detlog *sink_log(struct cc_detlog_config dc,
                                  bool (*sink)(void *, const char *, const char *, size_t),
                                  void *ctx, struct cc_error *err)
{
    dc.path = NULL;
    dc.text = false;
    dc.mode = CC_DETLOG_DETECTIONS;
    dc.ewma_alpha = 0.3;
    dc.sink = sink;
    dc.sink_ctx = ctx;
    return cc_detlog_create(&dc, err);
}

/* --webhook: the receiver and the detections-mode events it gets. */
static bool create_webhook(struct cc_report *rep, const struct cc_report_config *cfg,
                           struct cc_detlog_config dc, struct cc_error *err)
{
    struct cc_webhook_config wc = {
        .url = cfg->cli->webhook,
        .notice = camera_notice_fn(rep),
        .notice_ctx = camera_notice_ctx(rep),
    };
    return (rep->webhook = cc_webhook_create(&wc, err)) &&
           (rep->sinks[SINK_WEBHOOK] = sink_log(dc, webhook_sink, rep->webhook, err));
}

/* --snapshot-dir: the writer, which also runs the program of each event (in order). */
static bool create_snapshot(struct cc_report *rep, const struct cc_report_config *cfg,
                            struct cc_error *err)
{
    struct cc_snapshot_env env = {
        .width = cfg->picture_width,
        .height = cfg->picture_height,
        .overlay = cfg->overlay,
        .after = cfg->cli->on_event ? after_snapshot : NULL,
        .after_ctx = rep,
        .notice = camera_notice_fn(rep),
        .notice_ctx = camera_notice_ctx(rep),
    };
    return (rep->snapshot = cc_snapshot_create(cfg->snapshot, &env, err)) != NULL;
}

/* --clip-dir: the ring of encoded video and the clips written from it. */
static bool create_clip(struct cc_report *rep, const struct cc_report_config *cfg,
                        struct cc_error *err)
{
    struct cc_clip_env env = {
        .width = cfg->picture_width & ~1,
        .height = cfg->picture_height & ~1,
        .overlay = cfg->overlay,
        .frame_rate = cfg->frame_rate,
        .notice = camera_notice_fn(rep),
        .notice_ctx = camera_notice_ctx(rep),
    };
    return (rep->clip = cc_clip_create(cfg->clip, &env, err)) != NULL;
}

struct cc_report *cc_report_create(const struct cc_report_config *cfg, struct cc_error *err)
{
    struct cc_detlog_config dc;
    if (!detlog_settings(cfg, &dc, err))
        return NULL;
    struct cc_report *rep = calloc(1, sizeof(*rep));
    if (!rep) {
        cc_error_set(err, "out of memory");
        return NULL;
    }
    rep->reopen = cfg->reopen;
    rep->notice = cfg->notice;
    rep->notice_ctx = cfg->notice_ctx;
    if (cfg->camera && !(rep->camera = strdup(cfg->camera))) {
        cc_error_set(err, "out of memory");
        goto error;
    }
    if (cfg->log_path) {
        dc.path = cfg->log_path;
        dc.text = log_as_text(cfg->cli, cfg->log_path);
        rep->log_terminal = to_terminal(cfg->log_path);
        if (!(rep->log = cc_detlog_create(&dc, err)))
            goto error;
    }
    if ((rep->mqtt = cfg->mqtt) && !(rep->sinks[SINK_MQTT] = sink_log(dc, mqtt_sink, rep, err)))
        goto error;
    if (cfg->cli->webhook && !create_webhook(rep, cfg, dc, err))
        goto error;
    rep->cli = cfg->cli;
    rep->ha = rep->mqtt && ha_on(cfg->cli);
    rep->gpio = cfg->gpio;
    bool snapshots = cfg->snapshot && cfg->snapshot->dir, clips = cfg->clip && cfg->clip->dir;
    struct cc_detector_config det = {dc.threshold, dc.hysteresis, 0.3};
    if ((cfg->cli->on_event || rep->ha || rep->gpio || snapshots || clips) &&
        !(rep->events = cc_detector_create(&det, err)))
        goto error;
    if (cfg->cli->on_event && !create_on_event(rep, cfg, err))
        goto error;
    if (snapshots && !create_snapshot(rep, cfg, err))
        goto error;
    if (clips && !create_clip(rep, cfg, err))
        goto error;
    if (rep->ha) {
        if (!(rep->model = strdup(cfg->model ? cfg->model : "")) ||
            !cc_mqtt_device_id(cfg->cli->device_id, rep->device_id, err)) {
            cc_error_set(err, "out of memory");
            goto error;
        }
        ha_announce(rep);
    }
    return rep;

error:
    cc_report_destroy(rep);
    return NULL;
}

struct cc_snapshot *cc_report_snapshot(struct cc_report *rep)
{
    return rep ? rep->snapshot : NULL;
}

bool cc_report_logs_to_terminal(const struct cc_report *rep)
{
    return rep && rep->log && rep->log_terminal;
}

bool cc_report_active(const struct cc_report *rep)
{
    return rep && (rep->log || rep->sinks[SINK_MQTT] || rep->sinks[SINK_WEBHOOK] || rep->events);
}

/* A SIGHUP seen since the last line: the log is reopened (logrotate renamed it) first. */
static void reopen_if_asked(struct cc_report *rep)
{
    struct cc_error err = {0};
    if (rep->reopen && atomic_exchange(rep->reopen, 0) && !cc_detlog_reopen(rep->log, &err))
        say(rep, err.msg);
}

/* A "camera" line to the log and MQTT for each health condition that started or ended. */
static void report_health(struct cc_report *rep, const struct cc_result *r)
{
    unsigned changed = r->health.checked ? r->health.active ^ rep->health : 0;
    for (int k = 0; changed && k < CC_HEALTH_COUNT; k++) {
        if (!(changed & (1u << k)))
            continue;
        bool start = r->health.active & (1u << k);
        struct cc_error err = {0};
        for (int i = 0; i < N_SINKS; i++) // a sink reports its own failures
            if (rep->sinks[i])
                cc_detlog_camera(rep->sinks[i], r, cc_health_kind_name(k), start, &err);
        if (rep->log && !cc_detlog_camera(rep->log, r, cc_health_kind_name(k), start, &err) &&
            !cc_detlog_reader_gone(rep->log))
            say(rep, err.msg);
    }
    if (r->health.checked)
        rep->health = r->health.active;
}

bool cc_report_result(struct cc_report *rep, const struct cc_result *r, const struct cc_frame *f)
{
    struct cc_error err = {0};
    if (rep->clip && f) // every picture, encoded into the ring
        cc_clip_frame(rep->clip, r, f);
    if (rep->events) // first: its files are named on the lines below
        act(rep, r, f);
    for (int i = 0; i < N_SINKS; i++) // a sink reports its own failures
        if (rep->sinks[i])
            cc_detlog_write(rep->sinks[i], r, &err);
    report_health(rep, r);
    if (!rep->log)
        return true;
    reopen_if_asked(rep);
    if (cc_detlog_write(rep->log, r, &err))
        return true;
    if (cc_detlog_reader_gone(rep->log))
        return false;
    say(rep, err.msg);
    return true;
}

void cc_report_model(struct cc_report *rep, const char *name, const char *sha256,
                     const char *const *labels, int n_labels)
{
    struct cc_error err = {0};
    if (rep->events)
        cc_detector_forget(rep->events); // the new model's class indices mean other things
    if (rep->gpio && !cc_gpio_out_set(rep->gpio, NULL, &err)) // ... so nothing is detected
        say(rep, err.msg);
    char *copy = rep->ha ? strdup(name ? name : "") : NULL;
    if (copy) {
        free(rep->model);
        rep->model = copy;
        ha_announce(rep);
    }
    for (int i = 0; i < N_SINKS; i++) // camclass/<id>/model, the webhook
        if (rep->sinks[i])
            cc_detlog_model(rep->sinks[i], name, sha256, labels, n_labels, &err);
    if (!rep->log)
        return;
    reopen_if_asked(rep); // the SIGHUP that asked for the reload asked for a reopen too
    if (!cc_detlog_model(rep->log, name, sha256, labels, n_labels, &err) &&
        !cc_detlog_reader_gone(rep->log))
        say(rep, err.msg);
}

void cc_report_finish(struct cc_report *rep)
{
    if (!rep)
        return;
    struct cc_error err = {0};
    if (rep->log)
        reopen_if_asked(rep); // the summary goes to the new file, not the rotated one
    if (rep->log && !cc_detlog_finish(rep->log, &err))
        say(rep, err.msg);
    for (int i = 0; i < N_SINKS; i++) // the summary, published
        if (rep->sinks[i])
            cc_detlog_finish(rep->sinks[i], &err);
    cc_webhook_destroy(rep->webhook, CC_REPORT_MQTT_FLUSH_MS);
    rep->webhook = NULL;
    cc_snapshot_finish(rep->snapshot);       // the last pictures written, their programs started
    cc_clip_finish(rep->clip);               // a clip in progress ends here
    cc_event_command_destroy(rep->on_event); // waits for a program still running
    rep->on_event = NULL;
}

void cc_report_destroy(struct cc_report *rep)
{
    if (!rep)
        return;
    cc_detlog_destroy(rep->log);
    for (int i = 0; i < N_SINKS; i++)
        cc_detlog_destroy(rep->sinks[i]);
    cc_webhook_destroy(rep->webhook, 0);
    cc_snapshot_destroy(rep->snapshot); // before the program it runs
    cc_clip_destroy(rep->clip);
    cc_event_command_destroy(rep->on_event);
    cc_detector_destroy(rep->events);
    free(rep->model);
    free(rep->camera);
    free(rep);
}
