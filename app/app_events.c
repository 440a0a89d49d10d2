/* camclass — the events' receivers of a run's cameras (see app.h): the settings each camera
 * gives them checked before any model loads, the one MQTT connection of the process, and each
 * camera's GPIO lines. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "gpio_out.h"
#include "ha_discovery.h"
#include "mqtt.h"
#include "utf8.h"

/* "config FILE: camera "NAME": " for camera c's messages; "" for the command line's camera. */
static const char *who(const struct cam *c, const char *config, char *buf, size_t size)
{
    if (!c->name)
        return "";
    snprintf(buf, size, "config %s: camera \"%s\": ", config, c->name);
    return buf;
}

/* The keys camera i gives its webhook, program and Home Assistant sensors, checked as the
 * flags are (preflight checks the top-level ones). */
static bool check_own(const struct app *a, int i, const char *config, struct cc_error *err)
{
    const struct cc_cli *own = &a->cameras.cam[i].own;
    if (!own->webhook && !own->on_event && !own->ha_binary)
        return true;
    struct cc_cli only = a->cam[i].cli; // the view, without what preflight checks anyway
    only.mqtt = own->ha_binary ? only.mqtt : NULL;
    only.snapshot_dir = only.clip_dir = NULL;
    char buf[CC_CAMERA_NAME_MAX + 320];
    struct cc_error e = {0};
    if (cc_report_check(&only, &e))
        return true;
    return cc_error_set(err, "%s%s", who(&a->cam[i], config, buf, sizeof(buf)), e.msg);
}

/* MQTT with the config's cameras: each name is a topic level (cameras.c allows no '/', '+' or
 * '#'; MQTT wants UTF-8) and, with Home Assistant, an object id of its own. */
static bool check_mqtt_names(const struct app *a, const char *config, struct cc_error *err)
{
    char id[65], obj[CC_CAMERAS_MAX][CC_HA_OBJECT_MAX];
    bool ha = !(a->cli.ha_discovery && strcmp(a->cli.ha_discovery, "off") == 0);
    if (!a->cli.mqtt || !a->cameras.from_config || !cc_mqtt_device_id(a->cli.device_id, id, NULL))
        return true; // preflight says what is wrong with the device id
    for (int i = 0; i < a->n_cams; i++) {
        const char *name = a->cam[i].name;
        if (!cc_utf8_valid(name))
            return cc_error_set(err,
                                "config %s: camera \"%s\": the name is not UTF-8, which MQTT "
                                "topics must be; rename the camera",
                                config, name);
        cc_ha_object_id(id, name, obj[i], sizeof(obj[i]));
        for (int k = 0; ha && k < i; k++)
            if (strcmp(obj[k], obj[i]) == 0)
                return cc_error_set(err,
                                    "config %s: cameras \"%s\" and \"%s\" would both be Home "
                                    "Assistant's %s (names differing only in characters other "
                                    "than A-Z a-z 0-9 _ -); rename one",
                                    config, a->cam[k].name, name, obj[i]);
    }
    return true;
}

/* The chip as gpiod_chip_open_lookup finds it: "/dev/gpiochipN", "gpiochipN" and "N" alike. */
static void chip_key(const char *chip, char *out, size_t size)
{
    if (strncmp(chip, "/dev/", 5) == 0)
        chip += 5;
    bool number = *chip && strspn(chip, "0123456789") == strlen(chip);
    snprintf(out, size, "%s%s", number ? "gpiochip" : "", chip);
}

static bool same_line(const struct cc_gpio_spec *x, const struct cc_gpio_spec *y)
{
    char kx[CC_GPIO_NAME_MAX + 16], ky[CC_GPIO_NAME_MAX + 16];
    chip_key(x->chip, kx, sizeof(kx));
    chip_key(y->chip, ky, sizeof(ky));
    return strcmp(kx, ky) == 0 && strcmp(x->line, y->line) == 0;
}

/* The first spec of camera j's --gpio on a line that spec s (of camera i < j) names; -1: none. */
static int shared_line(const struct app *a, int j, const struct cc_gpio_spec *s)
{
    const struct cc_cli_list *g = &a->cam[j].cli.gpio;
    struct cc_gpio_spec t;
    for (int k = 0; k < g->count; k++)
        if (cc_gpio_out_parse(g->items[k], &t, NULL) && same_line(s, &t))
            return k;
    return -1;
}

/* Two cameras never drive one line: each would set it for its own detections. The kernel
 * refuses a second request of a line too, but names no camera; a chip or line named two ways
 * (a chip label, a line name) is left to it. */
static bool check_gpio_lines(const struct app *a, const char *config, struct cc_error *err)
{
    for (int i = 0; i < a->n_cams; i++) {
        const struct cc_cli_list *g = &a->cam[i].cli.gpio;
        struct cc_gpio_spec s;
        for (int k = 0; k < g->count; k++) {
            if (!cc_gpio_out_parse(g->items[k], &s, NULL))
                continue; // cc_gpio_out_create says what is wrong
            for (int j = i + 1; j < a->n_cams; j++) {
                int other = shared_line(a, j, &s);
                if (other >= 0)
                    return cc_error_set(
                        err,
                        "config %s: cameras \"%s\" and \"%s\" both drive GPIO line %s:%s (%s, "
                        "%s); give each camera its own lines with its own \"gpio\"",
                        config, a->cam[i].name, a->cam[j].name, s.chip, s.line, g->items[k],
                        a->cam[j].cli.gpio.items[other]);
            }
        }
    }
    return true;
}

int cc_app_events_check(const struct app *a, const char *config)
{
    struct cc_error err = {0};
    bool ok = check_mqtt_names(a, config, &err) && check_gpio_lines(a, config, &err);
    for (int i = 0; ok && i < a->n_cams && a->cameras.from_config; i++)
        ok = check_own(a, i, config, &err);
    if (ok)
        return 0;
    fprintf(stderr, "camclass: %s\n", err.msg);
    return CC_APP_EXIT_USAGE;
}

int cc_app_events_open_gpio(struct app *a)
{
    for (int i = 0; i < a->n_cams; i++) {
        struct cam *c = &a->cam[i];
        struct cc_error err = {0};
        struct cc_gpio_out_config gc = {
            .specs = (const char *const *)c->cli.gpio.items,
            .n_specs = c->cli.gpio.count,
            .active_low = c->cli.gpio_active_low,
            .consumer = "camclass",
        };
        if (gc.n_specs && !(c->gpio = cc_gpio_out_create(&gc, &err))) {
            fprintf(stderr, "camclass: %s%s%s%s\n", c->name ? "camera " : "",
                    c->name ? c->name : "", c->name ? ": " : "", err.msg);
            return CC_APP_EXIT_USAGE;
        }
    }
    return 0;
}

void cc_app_events_warn_gpio(const struct app *a)
{
    for (int i = 0; i < a->n_cams; i++) {
        const struct cam *c = &a->cam[i];
        const struct cc_model *m = cc_engine_model(c->engine);
        struct cc_gpio_spec spec;
        const char *label =
            cc_gpio_out_unknown_label((const char *const *)c->cli.gpio.items, c->cli.gpio.count,
                                      (const char *const *)m->labels, m->n_labels, &spec);
        if (label)
            fprintf(stderr,
                    "camclass: %s%s--gpio: \"%s\" is not one of the %d labels of model %s; its "
                    "line stays low (labels are case-sensitive)\n",
                    c->name ? c->name : "", c->name ? ": " : "", label, m->n_labels, m->name);
    }
}

int cc_app_events_open_mqtt(struct app *a, void (*notice)(void *ctx, const char *line))
{
    struct cc_error err = {0};
    void (*model_set)(void *, struct cc_mqtt *, const void *, size_t) =
        a->model_set ? cc_model_set_offer : NULL; // --mqtt-model-token
    if (a->cli.mqtt &&
        !(a->mqtt = cc_report_open_mqtt(&a->cli, notice, a, model_set, a->model_set, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return CC_APP_EXIT_USAGE;
    }
    return 0;
}

void cc_app_events_flush(struct app *a)
{
    cc_mqtt_destroy(a->mqtt, CC_REPORT_MQTT_FLUSH_MS);
    a->mqtt = NULL;
}

void cc_app_events_close(struct app *a)
{
    cc_mqtt_destroy(a->mqtt, 0);
    a->mqtt = NULL;
    for (int i = 0; i < a->n_cams; i++) { // low, then released
        cc_gpio_out_destroy(a->cam[i].gpio);
        a->cam[i].gpio = NULL;
    }
}
