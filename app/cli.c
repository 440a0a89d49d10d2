/* camclass — command line and JSON config (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "result.h"

#define MAX_CONFIG_BYTES (1 << 20)

/* ------------------------------------------------------------------------------------------
 * The option table: one row per option, for both the command line and the config file
 */

enum opt_kind {
    OPT_FLAG,    // bool, no value (config: true/false)
    OPT_STRING,  // char *, non-empty
    OPT_INT,     // int in [lo, hi]
    OPT_NUMBER,  // double in [lo, hi]
    OPT_SIZE,    // WxH into width, height
    OPT_BACKEND, // enum cc_backend_kind
    OPT_WORD,    // char *: one of the option's words, checked here (before the model loads)
    OPT_ROI,     // struct cc_roi, and roi_set
    OPT_LIST,    // struct cc_cli_list: repeatable (config: an array of strings)
};

struct opt {
    const char *name; // long name without "--"; also the config key
    enum opt_kind kind;
    size_t offset;            // of the field in struct cc_cli (OPT_SIZE: the width)
    size_t offset_h;          // OPT_SIZE: the height
    double lo, hi;            // OPT_INT, OPT_NUMBER: the range; OPT_SIZE: the least width, height
    bool cli_only;            // not accepted in a config file
    const char *const *words; // OPT_WORD: the values it takes, NULL-terminated
    int step;                 // OPT_INT: the value is a multiple of step (0: any)
};

static const char *const log_modes[] = {"every", "detections", NULL};
static const char *const health_modes[] = {"auto", "on", "off", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const char *const log_formats[] = {"json", "text", NULL};

#define F(field) offsetof(struct cc_cli, field)
static const struct opt opts[] = {
    {"camera", OPT_STRING, F(camera), 0, 0, 0, false},
    {"input", OPT_STRING, F(input), 0, 0, 0, false},
    {"loop", OPT_FLAG, F(loop), 0, 0, 0, false},
    {"model", OPT_STRING, F(model), 0, 0, 0, false},
    {"labels", OPT_STRING, F(labels), 0, 0, 0, false},
    {"backend", OPT_BACKEND, F(backend), 0, 0, 0, false},
    {"device", OPT_INT, F(device), 0, 0, 1000, false},
    {"threads", OPT_INT, F(threads), 0, 1, 16, false},
    {"size", OPT_SIZE, F(width), F(height), 0, 0, false},
    {"fps", OPT_NUMBER, F(fps), 0, 0.1, 1000, false},
    {"top-k", OPT_INT, F(top_k), 0, 1, CC_RESULT_MAX_TOP, false},
    {"frames", OPT_INT, F(frames), 0, 1, 2000000000, false},
    {"threshold", OPT_NUMBER, F(threshold), 0, 0, 1, false},
    {"unknown-threshold", OPT_NUMBER, F(unknown_threshold), 0, 0, 0.999, false},
    {"roi", OPT_ROI, F(roi), 0, 0, 0, false},
    {"rotation", OPT_INT, F(rotation), 0, 0, 270, false, NULL, 90},
    {"hflip", OPT_FLAG, F(hflip), 0, 0, 0, false},
    {"vflip", OPT_FLAG, F(vflip), 0, 0, 0, false},
    {"headless", OPT_FLAG, F(headless), 0, 0, 0, false},
    // The window's (and a recording's) layout needs 480x320 (app/output/overlay_draw.c).
    {"window", OPT_SIZE, F(window_w), F(window_h), 480, 320, false},
    {"fullscreen", OPT_FLAG, F(fullscreen), 0, 0, 0, false},
    {"screenshot-dir", OPT_STRING, F(shot_dir), 0, 0, 0, false},
    {"collect", OPT_STRING, F(collect), 0, 0, 0, false},
    {"classes", OPT_STRING, F(classes), 0, 0, 0, false},
    {"log", OPT_STRING, F(log), 0, 0, 0, false},
    {"output", OPT_STRING, F(output), 0, 0, 0, false},
    {"log-mode", OPT_WORD, F(log_mode), 0, 0, 0, false, log_modes},
    {"log-format", OPT_WORD, F(log_format), 0, 0, 0, false, log_formats},
    {"mqtt", OPT_STRING, F(mqtt), 0, 0, 0, false},
    {"mqtt-ca", OPT_STRING, F(mqtt_ca), 0, 0, 0, false},
    {"mqtt-auth", OPT_STRING, F(mqtt_auth), 0, 0, 0, false},
    {"mqtt-model-token", OPT_STRING, F(mqtt_model_token), 0, 0, 0, false},
    {"device-id", OPT_STRING, F(device_id), 0, 0, 0, false},
    {"on-event", OPT_STRING, F(on_event), 0, 0, 0, false},
    {"on-event-timeout", OPT_NUMBER, F(on_event_timeout), 0, 0.1, 86400, false},
    {"camera-health", OPT_WORD, F(camera_health), 0, 0, 0, false, health_modes},
    {"ha-discovery", OPT_WORD, F(ha_discovery), 0, 0, 0, false, on_off},
    {"ha-prefix", OPT_STRING, F(ha_prefix), 0, 0, 0, false},
    {"ha-binary", OPT_STRING, F(ha_binary), 0, 0, 0, false},
    {"webhook", OPT_STRING, F(webhook), 0, 0, 0, false},
    {"gpio", OPT_LIST, F(gpio), 0, 0, 0, false},
    {"gpio-active-low", OPT_FLAG, F(gpio_active_low), 0, 0, 0, false},
    {"snapshot-dir", OPT_STRING, F(snapshot_dir), 0, 0, 0, false},
    {"snapshot-max-mb", OPT_NUMBER, F(snapshot_mb), 0, 0.001, 1e6, false},
    {"clip-dir", OPT_STRING, F(clip_dir), 0, 0, 0, false},
    {"clip-before", OPT_NUMBER, F(clip_before), 0, 0, 60, false},
    {"clip-after", OPT_NUMBER, F(clip_after), 0, 0.1, 600, false},
    {"clip-max-mb", OPT_NUMBER, F(clip_mb), 0, 0.001, 1e6, false},
    {"serve", OPT_STRING, F(serve), 0, 0, 0, false},
    {"serve-token", OPT_STRING, F(serve_token), 0, 0, 0, false},
    {"serve-allow-host", OPT_STRING, F(serve_allow), 0, 0, 0, false},
    {"serve-timeout", OPT_INT, F(serve_timeout), 0, 1, 3600, false},
    {"serve-max-body", OPT_INT, F(serve_body_mb), 0, 1, 1024, false},
    {"config", OPT_STRING, F(config), 0, 0, 0, true},
    {"profile", OPT_FLAG, F(profile), 0, 0, 0, false},
    {"selftest", OPT_FLAG, F(selftest), 0, 0, 0, true},
    {"list-devices", OPT_FLAG, F(list_devices), 0, 0, 0, true},
    {"list-cameras", OPT_FLAG, F(list_cameras), 0, 0, 0, true},
    {"help", OPT_FLAG, F(help), 0, 0, 0, true},
    {"version", OPT_FLAG, F(version), 0, 0, 0, true},
    {"vk-fault", OPT_STRING, F(vk_fault), 0, 0, 0, true},
};
#undef F
enum { N_OPTS = sizeof(opts) / sizeof(opts[0]) };
_Static_assert((int)N_OPTS <= (int)CC_CLI_MAX_OPTS, "raise CC_CLI_MAX_OPTS in cli.h");

static bool was_set(const struct cc_cli *cli, const struct opt *o)
{
    size_t i = (size_t)(o - opts);
    return cli->set_on_command_line[i / 64] >> (i % 64) & 1;
}

static void mark_set(struct cc_cli *cli, const struct opt *o)
{
    size_t i = (size_t)(o - opts);
    cli->set_on_command_line[i / 64] |= (uint64_t)1 << (i % 64);
}

void cc_cli_init(struct cc_cli *cli)
{
    *cli = (struct cc_cli){
        .backend = CC_BACKEND_AUTO,
        .device = -1,
        .top_k = CC_CLI_TOP_K_DEFAULT,
        .threshold = -1,
        .unknown_threshold = -1,
        .clip_before = -1,
    };
}

static void list_clear(struct cc_cli_list *l)
{
    for (int i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    *l = (struct cc_cli_list){0};
}

void cc_cli_finish(struct cc_cli *cli)
{
    for (int i = 0; i < N_OPTS; i++)
        if (opts[i].kind == OPT_STRING || opts[i].kind == OPT_WORD) {
            char **p = (char **)((char *)cli + opts[i].offset);
            free(*p);
            *p = NULL;
        } else if (opts[i].kind == OPT_LIST) {
            list_clear((struct cc_cli_list *)((char *)cli + opts[i].offset));
        }
    free(cli->cameras); // not in the table: config only
    cli->cameras = NULL;
}

/* Appends a copy of val to l. */
static bool list_add(struct cc_cli_list *l, const char *val, const char *where,
                     struct cc_error *err)
{
    if (!*val)
        return cc_error_set(err, "%s needs a non-empty value", where);
    if (l->count >= CC_CLI_LIST_MAX)
        return cc_error_set(err, "%s is given more than %d times", where, CC_CLI_LIST_MAX);
    char **items = realloc(l->items, (size_t)(l->count + 1) * sizeof(*items));
    if (!items)
        return cc_error_set(err, "out of memory");
    l->items = items;
    if (!(l->items[l->count] = strdup(val)))
        return cc_error_set(err, "out of memory");
    l->count++;
    return true;
}

static bool one_of(const char *const *words, const char *val)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(words[i], val) == 0)
            return true;
    return false;
}

static const struct opt *find_opt(const char *name, size_t len)
{
    for (int i = 0; i < N_OPTS; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Values
 */

bool cc_cli_camera_path(const char *arg, char *path, size_t size)
{
    bool index = *arg != 0;
    for (const char *p = arg; *p && index; p++)
        index = *p >= '0' && *p <= '9';
    if (!index) {
        snprintf(path, size, "%s", arg);
        return false;
    }
    while (arg[0] == '0' && arg[1]) // "007" is /dev/video7, as the kernel names it
        arg++;
    snprintf(path, size, "/dev/video%s", arg);
    return true;
}

static bool parse_size(const char *s, int *w, int *h)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X'))
        return false;
    const char *t = end + 1;
    long b = strtol(t, &end, 10);
    if (end == t || *end || errno || a < 16 || b < 16 || a > 8192 || b > 8192)
        return false;
    *w = (int)a, *h = (int)b;
    return true;
}

/* Sets option o from a text value. where: "--name" or "config FILE: \"name\"" for messages. */
static bool set_value(struct cc_cli *cli, const struct opt *o, const char *val, const char *where,
                      struct cc_error *err)
{
    void *field = (char *)cli + o->offset;
    char *end;
    switch (o->kind) {
    case OPT_FLAG:
        *(bool *)field = true;
        return true;
    case OPT_WORD:
        if (!one_of(o->words, val)) {
            char list[128] = "";
            for (int i = 0; o->words[i]; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                         i == 0            ? ""
                         : o->words[i + 1] ? ", "
                                           : " or ",
                         o->words[i]);
            return cc_error_set(err, "%s takes %s, not \"%s\"", where, list, val);
        }
        __attribute__((fallthrough)); // kept as the string
    case OPT_STRING: {
        if (!*val)
            return cc_error_set(err, "%s needs a non-empty value", where);
        char *copy = strdup(val);
        if (!copy)
            return cc_error_set(err, "out of memory");
        free(*(char **)field);
        *(char **)field = copy;
        return true;
    }
    case OPT_INT: {
        errno = 0;
        long v = strtol(val, &end, 10);
        // camclass-capture's --device is a camera; here it is the Vulkan device: say which.
        const char *hint = strcmp(o->name, "device") == 0 && val[0] == '/'
                               ? " (the Vulkan device, see --list-devices; a camera is --camera "
                                 "PATH)"
                               : "";
        if (o->step && (end == val || *end || errno || v < o->lo || v > o->hi || v % o->step))
            return cc_error_set(err, "%s takes %.0f, %.0f, %.0f or %.0f (degrees), not \"%s\"",
                                where, o->lo, o->lo + o->step, o->lo + 2 * o->step, o->hi, val);
        if (end == val || *end || errno || v < o->lo || v > o->hi)
            return cc_error_set(err, "%s takes a whole number from %.0f to %.0f, not \"%s\"%s",
                                where, o->lo, o->hi, val, hint);
        *(int *)field = (int)v;
        return true;
    }
    case OPT_NUMBER: {
        errno = 0;
        double v = strtod(val, &end);
        if (end == val || *end || errno || !isfinite(v) || v < o->lo || v > o->hi)
            return cc_error_set(err, "%s takes a number from %g to %g, not \"%s\"", where, o->lo,
                                o->hi, val);
        *(double *)field = v;
        return true;
    }
    case OPT_SIZE:
        if (!parse_size(val, (int *)field, (int *)((char *)cli + o->offset_h)))
            return cc_error_set(err,
                                "%s takes WIDTHxHEIGHT, 16 to 8192 each (e.g. 640x480), not "
                                "\"%s\"",
                                where, val);
        if (*(int *)field < o->lo || *(int *)((char *)cli + o->offset_h) < o->hi)
            return cc_error_set(err,
                                "%s %s: the smallest size that shows the frame, the title and the "
                                "results is %.0fx%.0f; give a larger one",
                                where, val, o->lo, o->hi);
        return true;
    case OPT_ROI: {
        struct cc_error why = {0};
        if (!cc_roi_parse(val, &cli->roi, &why))
            return cc_error_set(err, "%s %s", where, why.msg);
        cli->roi_set = true;
        return true;
    }
    case OPT_LIST:
        return list_add(field, val, where, err);
    case OPT_BACKEND:
        if (!cc_backend_kind_parse(val, &cli->backend))
            return cc_error_set(err, "%s takes auto, vulkan, cpu or ref, not \"%s\"", where, val);
        return true;
    }
    return cc_error_set(err, "%s: internal error (option kind)", where);
}

/* ------------------------------------------------------------------------------------------
 * Command line
 */

/* A bare argument: the first is the input (as --input), the second the output (as --output),
 * as in `camclass photo.jpg annotated.jpg`. */
static bool positional(struct cc_cli *cli, const char *arg, int n, struct cc_error *err)
{
    static const char *const names[2] = {"input", "output"};
    if (n >= 2)
        return cc_error_set(err,
                            "unexpected argument \"%s\": give at most an input and an "
                            "output (camclass IN [OUT]); options start with -- (see --help)",
                            arg);
    const struct opt *o = find_opt(names[n], strlen(names[n]));
    if (was_set(cli, o))
        return cc_error_set(err, "\"%s\": the %s is given twice (as --%s and as an argument)", arg,
                            names[n], names[n]);
    char where[32];
    snprintf(where, sizeof(where), "the %s argument", names[n]);
    if (!set_value(cli, o, arg, where, err))
        return false;
    mark_set(cli, o);
    return true;
}

enum cc_cli_status cc_cli_parse(struct cc_cli *cli, int argc, char **argv, struct cc_error *err)
{
    int n_positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0)
            arg = "--help";
        if (arg[0] != '-' || strcmp(arg, "-") == 0) { // an input, then an output
            if (!positional(cli, arg, n_positional++, err))
                return CC_CLI_ERROR;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
            cc_error_set(err, "unexpected argument \"%s\"; options start with -- (see --help)",
                         arg);
            return CC_CLI_ERROR;
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt *o = find_opt(name, len);
        if (!o) {
            cc_error_set(err, "unknown option --%.*s (see --help)", (int)len, name);
            return CC_CLI_ERROR;
        }
        char where[64];
        snprintf(where, sizeof(where), "--%s", o->name);
        const char *val = NULL;
        if (o->kind == OPT_FLAG) {
            if (eq) {
                cc_error_set(err, "%s takes no value (got \"%s\")", where, eq + 1);
                return CC_CLI_ERROR;
            }
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            cc_error_set(err, "%s needs a value (see --help)", where);
            return CC_CLI_ERROR;
        }
        if (was_set(cli, o) && (!strcmp(o->name, "input") || !strcmp(o->name, "output"))) {
            cc_error_set(err, "%s is given twice (once as an argument?); give it once", where);
            return CC_CLI_ERROR;
        }
        if (!set_value(cli, o, val, where, err))
            return CC_CLI_ERROR;
        mark_set(cli, o);
    }
    if (cli->camera && cli->input) {
        cc_error_set(err, "--camera and --input exclude each other; give one source");
        return CC_CLI_ERROR;
    }
    struct cc_error why = {0};
    if (cli->vk_fault && !cc_engine_vk_fault_valid(cli->vk_fault, &why)) {
        cc_error_set(err, "--vk-fault: %s", why.msg);
        return CC_CLI_ERROR;
    }
    return CC_CLI_OK;
}

/* ------------------------------------------------------------------------------------------
 * Config file
 */

static bool given(const struct cc_cli *cli, const char *name)
{
    const struct opt *o = find_opt(name, strlen(name));
    return o && was_set(cli, o);
}

/* A repeatable option's key: an array of strings, applied (replacing) unless skip. */
static bool config_list(struct cc_cli *cli, const struct opt *o, const cJSON *item, bool skip,
                        const char *where, struct cc_error *err)
{
    const cJSON *v;
    bool strings = cJSON_IsArray(item);
    cJSON_ArrayForEach(v, item)
    {
        strings = strings && cJSON_IsString(v);
    }
    if (!strings)
        return cc_error_set(err, "%s takes an array of strings ([\"cat=gpiochip0:17\"])", where);
    if (skip)
        return true;
    struct cc_cli_list *l = (struct cc_cli_list *)((char *)cli + o->offset);
    list_clear(l);
    cJSON_ArrayForEach(v, item)
    {
        if (!list_add(l, v->valuestring, where, err))
            return false;
    }
    return true;
}

/* Applies one JSON value to option o (type-checked; skip: checked only, not applied). */
static bool apply_json(struct cc_cli *cli, const struct opt *o, const cJSON *item, bool skip,
                       const char *where, struct cc_error *err)
{
    char num[64];
    const char *val;
    if (o->kind == OPT_LIST)
        return config_list(cli, o, item, skip, where, err);
    if (o->kind == OPT_FLAG) {
        if (!cJSON_IsBool(item))
            return cc_error_set(err, "%s takes true or false", where);
        if (!skip)
            *(bool *)((char *)cli + o->offset) = cJSON_IsTrue(item);
        return true;
    } else if (o->kind == OPT_INT || o->kind == OPT_NUMBER) {
        if (!cJSON_IsNumber(item))
            return cc_error_set(err, "%s takes a number", where);
        snprintf(num, sizeof(num), "%.17g", item->valuedouble);
        val = num;
    } else {
        if (!cJSON_IsString(item))
            return cc_error_set(err, "%s takes a string", where);
        val = item->valuestring;
    }
    // skip: type-checked above; the value itself is checked only when applied
    return skip || set_value(cli, o, val, where, err);
}

bool cc_cli_set_json(struct cc_cli *cli, const char *key, const struct cJSON *item,
                     const char *where, struct cc_error *err)
{
    const struct opt *o = find_opt(key, strlen(key));
    if (!o || o->cli_only)
        return cc_error_set(err, "%s: not an option", where);
    if (!apply_json(cli, o, item, false, where, err))
        return false;
    mark_set(cli, o);
    return true;
}

bool cc_cli_given(const struct cc_cli *cli, const char *key)
{
    return given(cli, key);
}

/* "cameras": kept as JSON text for cameras.h, which checks each camera. */
static bool config_cameras(struct cc_cli *cli, const cJSON *item, const char *name,
                           struct cc_error *err)
{
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) < 1)
        return cc_error_set(err,
                            "config %s: \"cameras\" takes an array of camera objects "
                            "([{\"name\": \"door\", \"input\": \"/dev/video0\"}, ...])",
                            name);
    char *text = cJSON_PrintUnformatted(item);
    if (!text)
        return cc_error_set(err, "out of memory reading config %s", name);
    free(cli->cameras);
    cli->cameras = text;
    return true;
}

bool cc_cli_apply_config_text(struct cc_cli *cli, const char *text, const char *name,
                              struct cc_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, false);
    const char *rest = end ? end + strspn(end, " \t\r\n") : NULL;
    if (!root || (rest && *rest)) { // the whole file is one value: nothing may follow it
        const char *at = root ? rest : cJSON_GetErrorPtr();
        int line = 1;
        for (const char *p = text; at && p < at; p++)
            line += *p == '\n';
        cJSON_Delete(root);
        return cc_error_set(err,
                            root ? "config %s: text after the JSON object (line %d); a "
                                   "config is one object: {\"top-k\": 3, ...}"
                                 : "config %s: not valid JSON (near line %d)",
                            name, line);
    }
    bool ok = true;
    if (!cJSON_IsObject(root)) {
        ok =
            cc_error_set(err, "config %s: must be a JSON object of options ({\"top-k\": 3})", name);
        goto done;
    }
    // A source on the command line replaces the config's, whichever key it uses.
    bool source_given = given(cli, "camera") || given(cli, "input");
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        const char *key = item->string;
        if (strcmp(key, "cameras") == 0) {
            if (!(ok = config_cameras(cli, item, name, err)))
                goto done;
            continue;
        }
        const struct opt *o = find_opt(key, strlen(key));
        char where[320];
        snprintf(where, sizeof(where), "config %s: \"%s\"", name, key);
        if (!o || o->cli_only) {
            ok = cc_error_set(err,
                              "config %s: unknown key \"%s\" (keys are the long option "
                              "names of --help, without --; not config or one-shot actions)",
                              name, key);
            goto done;
        }
        bool skip =
            was_set(cli, o) || (source_given && (o->offset == offsetof(struct cc_cli, camera) ||
                                                 o->offset == offsetof(struct cc_cli, input)));
        if (!apply_json(cli, o, item, skip, where, err)) {
            ok = false;
            goto done;
        }
    }
    if (cli->camera && cli->input)
        ok = cc_error_set(err, "config %s: \"camera\" and \"input\" exclude each other", name);
    else if (cli->cameras && !source_given && (cli->camera || cli->input))
        ok = cc_error_set(err,
                          "config %s: \"cameras\" gives each camera its \"input\" or "
                          "\"camera\"; drop the top-level one",
                          name);
done:
    cJSON_Delete(root);
    return ok;
}

bool cc_cli_load_config(struct cc_cli *cli, const char *path, struct cc_error *err)
{
    // stat before open: opening a FIFO would wait for a writer, before any signal handler
    // exists; a directory or a device is no config either.
    struct stat st;
    if (stat(path, &st) != 0)
        return cc_error_set(err, "cannot read config %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cc_error_set(err,
                            "config %s is %s, not a regular file; give the path of a JSON "
                            "file",
                            path, cc_file_kind(st.st_mode));
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "cannot read config %s: %s", path, strerror(errno));
    char *text = malloc(MAX_CONFIG_BYTES + 1);
    size_t n = text ? fread(text, 1, MAX_CONFIG_BYTES + 1, f) : 0;
    bool read_error = ferror(f);
    int e = errno;
    fclose(f);
    if (!text)
        return cc_error_set(err, "out of memory reading config %s", path);
    bool ok;
    if (read_error)
        ok = cc_error_set(err, "cannot read config %s: %s", path, strerror(e));
    else if (n > MAX_CONFIG_BYTES)
        ok = cc_error_set(err, "config %s: larger than %d bytes", path, MAX_CONFIG_BYTES);
    else {
        text[n] = 0;
        ok = cc_cli_apply_config_text(cli, text, path, err);
    }
    free(text);
    return ok;
}
