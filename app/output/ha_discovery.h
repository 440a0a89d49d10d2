/* camclass — Home Assistant's MQTT discovery: the retained config messages that make a camclass
 * appear in Home Assistant as a device with a sensor (the detected label) and a binary sensor
 * per label the user names, and the state message they read.
 *
 *   <prefix>/sensor/camclass_<id>/config               the label sensor
 *   <prefix>/binary_sensor/camclass_<id>_<slug>/config one per --ha-binary label
 *   camclass/<id>/state    {"label": "cat" | "none", "score": 0.93, "model": "garage"}
 *   camclass/<id>/status   online / offline (mqtt.c): the entities' availability
 *
 * Field names and types follow Home Assistant's MQTT discovery documentation (sensor.mqtt,
 * binary_sensor.mqtt, the device block). Pure: builds strings, sends nothing (report.c
 * publishes them with cc_mqtt_retain).
 */
#ifndef CC_HA_DISCOVERY_H
#define CC_HA_DISCOVERY_H

#include <stdbool.h>

#include "error.h"

enum { CC_HA_MAX_BINARY = 32 };

struct cc_ha_config {
    const char *prefix;    // discovery prefix, e.g. "homeassistant"
    const char *device_id; // the MQTT topic level (cc_mqtt_device_id's)
    const char *model;     // the model's name, the device block's "model"
    const char *version;   // camclass's, the device block's "sw_version"
    const char *binary;    // comma-separated labels for binary sensors, or NULL
};

/* Checks --ha-prefix (1-64 of A-Z a-z 0-9 _ - and '/' between levels) and --ha-binary (at most
 * CC_HA_MAX_BINARY labels, none empty, none with a character a template could take for its own:
 * ' " \ { } %). False with err naming the value. */
bool cc_ha_check(const char *prefix, const char *binary, struct cc_error *err);

/* Calls emit(ctx, topic, payload) for each discovery config message; false when emit did or
 * when out of memory. device_id, prefix and binary must have passed the checks. */
bool cc_ha_configs(const struct cc_ha_config *cfg,
                   bool (*emit)(void *ctx, const char *topic, const char *payload), void *ctx);

/* The state message: label NULL for none. A malloc'd string, NULL when out of memory. */
char *cc_ha_state(const char *label, double score, const char *model);

#endif
