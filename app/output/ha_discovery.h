/* camclass — Home Assistant's MQTT discovery: the retained config messages that make a camclass
 * appear in Home Assistant as a device with a sensor (the detected label) and a binary sensor
 * per label the user names, and the state message they read.
 *
 *   <prefix>/sensor/camclass_<id>/config               the label sensor
 *   <prefix>/binary_sensor/camclass_<id>_<slug>/config one per --ha-binary label
 *   camclass/<id>/state    {"label": "cat" | "none", "score": 0.93, "model": "garage"}
 *   camclass/<id>/status   online / offline (mqtt.c): the entities' availability
 *
 * With the config's "cameras" each camera is a device of its own: <id> above becomes
 * <id>_<camera> in object ids and identifiers (the name's bytes other than A-Za-z0-9 _ - as
 * '_'), camclass/<id>/<camera>/state its state; the availability stays the node's status.
 *
 * Field names and types follow Home Assistant's MQTT discovery documentation (sensor.mqtt,
 * binary_sensor.mqtt, the device block). Pure: builds strings, sends nothing (report.c
 * publishes them with cc_mqtt_retain).
 */
#ifndef CC_HA_DISCOVERY_H
#define CC_HA_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

enum {
    CC_HA_MAX_BINARY = 32,
    CC_HA_OBJECT_MAX = 150, // bytes of an object id, with its terminating zero
    CC_HA_TOPIC_MAX = 160,  // bytes of a camclass/<id>/<camera>/<leaf> topic, with its zero
};

struct cc_ha_config {
    const char *prefix;    // discovery prefix, e.g. "homeassistant"
    const char *device_id; // the MQTT topic level (cc_mqtt_device_id's)
    const char *camera;    // the config's camera name (a topic level of its own); NULL: the
                           // command line's one camera (the topics without it)
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

/* The object id of camera's sensor (camera NULL: the one camera's): camclass_<id>[_<camera>],
 * bytes other than A-Za-z0-9 _ - made '_'. Two cameras whose ids are equal would share their
 * entities: cameras.c's names may differ only in those bytes, app_events.c refuses that. */
void cc_ha_object_id(const char *device_id, const char *camera, char *out, size_t size);

/* camclass/<id>[/<camera>]/<leaf>: the camera's topic for leaf ("state"). */
void cc_ha_topic(const struct cc_ha_config *cfg, const char *leaf, char *out, size_t size);

/* The state message: label NULL for none. A malloc'd string, NULL when out of memory. */
char *cc_ha_state(const char *label, double score, const char *model);

#endif
