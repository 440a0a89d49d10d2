/* camclass — the command line and the JSON config file of the `camclass` program.
 *
 * Pure: parsing fills a struct cc_cli and reports the first problem as one line in err; nothing
 * here prints, exits, or touches a device. main.c decides what to do with the result.
 *
 * Two sources, one table of options: the command line (`--top-k 3`, `--top-k=3`) and a JSON
 * object whose keys are the long flag names without the dashes (`{"top-k": 3, "headless":
 * true}`). The command line wins: a config key is applied only when the command line did not
 * set that option. `camera` and `input` count as one choice (a source given on the command
 * line replaces either key of the config).
 *
 *     struct cc_cli cli;
 *     cc_cli_init(&cli);
 *     switch (cc_cli_parse(&cli, argc, argv, &err)) { ... }        // command line
 *     if (cli.config) cc_cli_load_config(&cli, cli.config, &err);    // then the config
 *     cc_cli_finish(&cli);
 *
 * Ownership: every string in struct cc_cli is a copy owned by it; cc_cli_finish frees them.
 */
#ifndef CC_CLI_H
#define CC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "error.h"
#include "roi.h"

// Where things are installed, for --help and main.c; meson passes the paths of the prefix used
// (app/meson.build). These defaults serve builds without them (the fuzz build).
#ifndef CAMCLASS_CONFIG_FILE // <prefix>/<sysconfdir>/camclass/config.json
#define CAMCLASS_CONFIG_FILE "/usr/local/etc/camclass/config.json"
#endif
#ifndef CAMCLASS_DATADIR // <prefix>/<datadir>/camclass: models/, samples/
#define CAMCLASS_DATADIR "/usr/local/share/camclass"
#endif
#ifndef CAMCLASS_BINDIR
#define CAMCLASS_BINDIR "/usr/local/bin"
#endif
#ifndef CAMCLASS_DOCDIR // <prefix>/<datadir>/doc/camclass: README.md and docs/*.md
#define CAMCLASS_DOCDIR "/usr/local/share/doc/camclass"
#endif

enum { CC_CLI_TOP_K_DEFAULT = 5, CC_CLI_ON_EVENT_TIMEOUT_S = 30, CC_CLI_LIST_MAX = 32 };
// The option table may grow to this many entries (a multiple of 64: the given-options bitset).
enum { CC_CLI_MAX_OPTS = 128 };

/* A repeatable option's values, in order (the command line's, else the config's array). */
struct cc_cli_list {
    char **items; // count strings, each owned
    int count;    // 0 to CC_CLI_LIST_MAX
};

struct cc_cli {
    // Source: at most one of camera / input.
    char *camera; // --camera DEV|N (a V4L2 device path, or an index: see cc_cli_camera_path);
                  // as given; NULL: not given
    char *input;  // --input PATH: an image, a directory of images, or a .y4m video
    bool loop;    // --loop: start a file input again at its end

    char *model;                  // --model BUNDLE; NULL: the default model (see main.c)
    char *labels;                 // --labels FILE; NULL: the bundle's labels
    enum cc_backend_kind backend; // --backend auto|vulkan|cpu|ref (default auto)
    int device;                   // --device N: Vulkan device index; -1: the best one
    int threads;                  // --threads N: CPU backend threads; 0: the engine's default
    int width, height;            // --size WxH: camera size to ask for; 0: the capture default
    double fps;               // --fps N: camera rate to ask for / file playback rate; 0: default
    int frames;               // --frames N: stop after N results; 0: no limit
    int top_k;                // --top-k K (1..CC_RESULT_MAX_TOP), default 5
    double threshold;         // --threshold P (0..1): detections mode; < 0: not given
    double unknown_threshold; // --unknown-threshold P (0..1): "unknown" below top score P;
                              // 0: never; < 0: the model's own (its bundle's, if any)
    bool headless;            // --headless: no window
    int window_w;             // --window WxH: window size; 0: 1280x720 shrunk to fit the display
    int window_h;             // (see window_w)
    bool fullscreen;          // --fullscreen: start fullscreen
    char *shot_dir;           // --screenshot-dir DIR; NULL: cc_cli_pictures_dir
    char *collect;           // --collect DIR: labelled pictures go to DIR/<class>/ (sample_store.h)
    char *classes;           // --classes A,B,...: the classes of keys 1-9; NULL: DIR's folders
    char *log;               // --log FILE|-: detection log (JSON lines); NULL: none
    char *output;            // --output FILE.mp4|.mkv: annotated video recording; NULL: none
    char *log_format;        // --log-format json|text; NULL: text when the log is a terminal
    char *log_mode;          // --log-mode every|detections; NULL: detlog's default
    char *mqtt;              // --mqtt URL: publish detection events to a broker (mqtt.h); NULL: no
    char *mqtt_ca;           // --mqtt-ca FILE: CA certificates for mqtts://; NULL: the system's
    char *mqtt_auth;         // --mqtt-auth FILE: user and password, one per line; NULL: none
    char *mqtt_model_token;  // --mqtt-model-token FILE: the model/set message's secret on its
                             // first line (model_set.h); NULL: that is off
    char *device_id;         // --device-id ID: the MQTT topic level; NULL: the host name
    char *on_event;          // --on-event PROGRAM: run on detection start/end (event_command.h)
    double on_event_timeout; // --on-event-timeout S; 0: CC_CLI_ON_EVENT_TIMEOUT_S
    char *ha_discovery;      // --ha-discovery on|off; NULL: on (with --mqtt)
    char *ha_prefix;         // --ha-prefix P; NULL: homeassistant
    char *webhook;           // --webhook URL: detection events POSTed there (webhook.h); NULL: none
    char *snapshot_dir; // --snapshot-dir DIR: a JPEG per detection start (snapshot.h); NULL: none
    double snapshot_mb; // --snapshot-max-mb N: DIR/<camera>'s cap; 0: CC_SNAPSHOT_DEFAULT_MB
    char *clip_dir;     // --clip-dir DIR: an mp4 around each detection start (clip.h); NULL: none
    double clip_before; // --clip-before S; < 0: CC_CLIP_DEFAULT_BEFORE_S
    double clip_after;  // --clip-after S; 0: CC_CLIP_DEFAULT_AFTER_S
    double clip_mb;     // --clip-max-mb N: DIR/<camera>'s cap; 0: CC_CLIP_DEFAULT_MB
    char *ha_binary;    // --ha-binary LABEL[,LABEL...]: binary sensors; NULL: none
    struct cc_cli_list gpio; // --gpio LABEL=CHIP:LINE, repeatable: a line high while LABEL is
                             // detected (gpio_out.h); count 0: none
    bool gpio_active_low;    // --gpio-active-low: detected is the low level
    char *camera_health;     // --camera-health auto|on|off; NULL: auto (cameras and streams)
    char *serve;             // --serve [ADDR:]PORT: the HTTP service (http.h); NULL: none
    char *serve_token; // --serve-token TOKEN: Bearer token the HTTP service asks for; NULL: none
    char *serve_allow; // --serve-allow-host NAME[,...]: more Host names answered without a
                       // token (http_request.h); NULL: none
    int serve_timeout; // --serve-timeout S: idle seconds before a connection is closed; 0: 10
    int serve_body_mb; // --serve-max-body MB: largest request body; 0: 16
    char *config;      // --config FILE (command line only)
    char *cameras;     // the config's "cameras" array as JSON text (config only; cameras.h
                       // checks it); NULL: none
    bool profile;      // --profile: per-stage and per-layer times at exit
    bool selftest;     // --selftest: classify the sample clip, check accuracy
    bool list_devices; // --list-devices
    bool list_cameras; // --list-cameras
    bool help;         // --help
    bool version;      // --version
    char *vk_fault;    // --vk-fault KIND:N: tests only, an injected Vulkan fault (engine.h)

    // --roi X,Y,W,H (fractions), X,Y,W,Hpx or none: the part of each frame that is classified
    // (roi.h), when roi_set; roi_set false: the bundle's own ROI.
    struct cc_roi roi;
    bool roi_set;

    // --rotation 0|90|180|270 (clockwise), --hflip, --vflip: each frame turned as the camera is
    // mounted, before anything else (orient.h); the ROI is in the turned frame's coordinates.
    int rotation;
    bool hflip, vflip;

    // private: bit i = option i of the table was given
    uint64_t set_on_command_line[CC_CLI_MAX_OPTS / 64];
};

enum cc_cli_status {
    CC_CLI_OK,    // parsed; run
    CC_CLI_ERROR, // err holds one line; main exits with status 2
};

/* Fills cli with the defaults (no strings). */
void cc_cli_init(struct cc_cli *cli);

/* Frees the strings; cli can be initialised again. */
void cc_cli_finish(struct cc_cli *cli);

/* Parses argv[1..argc-1] into cli. Long options only: `--name value` or `--name=value`.
 * Errors: unknown option, missing or bad value (naming the accepted range or words),
 * positional arguments, both --camera and --input. */
enum cc_cli_status cc_cli_parse(struct cc_cli *cli, int argc, char **argv, struct cc_error *err);

/* Applies a JSON config text (an object; keys = long option names) to the options the command
 * line did not set. name is used in messages ("config FILE: ..."). Unknown keys, wrong JSON
 * types and bad values are errors; "config" and the one-shot actions (help, version, list-*,
 * selftest) are not accepted as keys. */
bool cc_cli_apply_config_text(struct cc_cli *cli, const char *text, const char *name,
                              struct cc_error *err);

/* Sets the option named key (a config key; not "cameras") from a JSON value as a config file
 * does, the value's type and range checked, and marks it given (cc_cli_given). where starts the
 * messages. cameras.c reads each camera's keys with it. */
struct cJSON;
bool cc_cli_set_json(struct cc_cli *cli, const char *key, const struct cJSON *item,
                     const char *where, struct cc_error *err);

/* True when the option named key was set by cc_cli_parse or cc_cli_set_json. */
bool cc_cli_given(const struct cc_cli *cli, const char *key);

/* Reads path and applies it as above. A file that cannot be read is an error naming errno; a
 * path that is not a regular file (a directory, a FIFO: checked before opening, so a FIFO
 * never blocks) is an error saying what it is. */
bool cc_cli_load_config(struct cc_cli *cli, const char *path, struct cc_error *err);

/* The device path of a --camera value: an index (all digits, "0", "12") is /dev/videoN (leading
 * zeros dropped); anything else is a path, copied as it is. Writes at most size bytes into
 * path (always terminated); returns true when arg was an index. */
bool cc_cli_camera_path(const char *arg, char *path, size_t size);

/* The default directory of window screenshots, as xdg-user-dir PICTURES finds it: xdg_pictures
 * ($XDG_PICTURES_DIR) when set; else XDG_PICTURES_DIR in config_home/user-dirs.dirs
 * (config_home: $XDG_CONFIG_HOME, or NULL for home/.config; "$HOME" in the value is expanded);
 * else home/Pictures; each only when it is a directory (a user-dirs.dirs entry of $HOME
 * itself means "disabled" and is skipped). Else "." (the working directory). Writes the
 * path into out and returns which rule chose it ("XDG_PICTURES_DIR", "user-dirs.dirs",
 * "~/Pictures", "the working directory"), for the line camclass prints. Arguments may be NULL
 * (the variable is not set). */
const char *cc_cli_pictures_dir(const char *xdg_pictures, const char *config_home, const char *home,
                                char *out, size_t size);

/* The --help text. */
void cc_cli_usage(FILE *out);

#endif
