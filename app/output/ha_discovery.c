/* camclass — Home Assistant MQTT discovery messages (see ha_discovery.h). */
#include "ha_discovery.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "utf8.h"

#define LABEL_MAX 128

bool cc_ha_check(const char *prefix, const char *binary, struct cc_error *err)
{
    size_t n = prefix ? strlen(prefix) : 0;
    bool ok =
        n >= 1 && n <= 64 && prefix[0] != '/' && prefix[n - 1] != '/' && !strstr(prefix, "//");
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)prefix[i]) || strchr("_-/", prefix[i]);
    if (!ok)
        return cc_error_set(err,
                            "--ha-prefix \"%s\": give 1-64 of A-Z a-z 0-9 _ - (levels "
                            "split by /), e.g. homeassistant",
                            prefix ? prefix : "");
    int count = 0;
    for (const char *p = binary; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= LABEL_MAX)
            return cc_error_set(err,
                                "--ha-binary: a label is empty or over %d bytes; give "
                                "labels separated by commas, e.g. cat,dog",
                                LABEL_MAX - 1);
        for (size_t i = 0; i < len; i++)
            if (strchr("'\"\\{}%", p[i]) || (unsigned char)p[i] < 0x20)
                return cc_error_set(err,
                                    "--ha-binary: \"%.*s\" has a quote, backslash, brace, %% "
                                    "or control character, which Home Assistant's template "
                                    "would read as its own",
                                    (int)len, p);
        if (++count > CC_HA_MAX_BINARY)
            return cc_error_set(err, "--ha-binary: more than %d labels", CC_HA_MAX_BINARY);
        p += len + (p[len] == ',');
    }
    return true;
}

// Appends to out (holding n bytes of size) the A-Za-z0-9 of a label (len bytes), lowered,
// with every other run of bytes as one '_'; returns the new length.
static int append_slug(char *out, int n, size_t size, const char *text, size_t len)
{
    bool gap = false;
    for (size_t i = 0; i < len && n + 2 < (int)size; i++) {
        char c = text[i];
        if (isalnum((unsigned char)c)) {
            out[n++] = (char)tolower((unsigned char)c);
            gap = false;
        } else if (!gap) {
            out[n++] = '_';
            gap = true;
        }
    }
    out[n] = '\0';
    return n;
}

// Appends text as an object id may hold it: each byte other than A-Za-z0-9 _ - as '_' (a
// device id's '.', a camera name's space or UTF-8).
static int append_id(char *out, int n, size_t size, const char *text)
{
    for (; *text && n + 1 < (int)size; text++)
        out[n++] = isalnum((unsigned char)*text) || *text == '_' || *text == '-' ? *text : '_';
    out[n] = '\0';
    return n;
}

void cc_ha_object_id(const char *device_id, const char *camera, char *out, size_t size)
{
    int n = append_id(out, snprintf(out, size, "camclass_"), size, device_id);
    if (camera)
        append_id(out, append_id(out, n, size, "_"), size, camera);
}

void cc_ha_topic(const struct cc_ha_config *cfg, const char *leaf, char *out, size_t size)
{
    snprintf(out, size, "camclass/%s/%s%s%s", cfg->device_id, cfg->camera ? cfg->camera : "",
             cfg->camera ? "/" : "", leaf);
}

// The object id of a label: the sensor's, '_', the label's slug (its A-Za-z0-9 lowered) and
// the label's index (two labels may slug alike).
static void object_id(const struct cc_ha_config *cfg, const char *label, size_t len, int index,
                      char *out, size_t size)
{
    cc_ha_object_id(cfg->device_id, cfg->camera, out, size);
    int n = (int)strlen(out);
    n += snprintf(out + n, size - (size_t)n, "_");
    n = append_slug(out, n, size, label, len);
    snprintf(out + n, size - (size_t)n, "%d", index);
}

// What every config of this device shares: availability and the device block.
static cJSON *config_begin(const struct cc_ha_config *cfg, const char *name, const char *uid)
{
    cJSON *o = cJSON_CreateObject(), *dev = o ? cJSON_AddObjectToObject(o, "device") : NULL;
    cJSON *ids = dev ? cJSON_AddArrayToObject(dev, "identifiers") : NULL;
    char text[CC_HA_TOPIC_MAX], *model = cc_utf8_clean_dup(cfg->model);
    if (!ids || !model) {
        free(model);
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "unique_id", uid);
    cc_ha_topic(cfg, "state", text, sizeof(text));
    cJSON_AddStringToObject(o, "state_topic", text);
    // the node's status (one connection, one last will for every camera)
    snprintf(text, sizeof(text), "camclass/%s/status", cfg->device_id);
    cJSON_AddStringToObject(o, "availability_topic", text);
    cJSON_AddStringToObject(o, "payload_available", "online");
    cJSON_AddStringToObject(o, "payload_not_available", "offline");
    snprintf(text, sizeof(text), "camclass_%s%s%s", cfg->device_id, cfg->camera ? "_" : "",
             cfg->camera ? cfg->camera : ""); // one device a camera
    cJSON_AddItemToArray(ids, cJSON_CreateString(text));
    snprintf(text, sizeof(text), "camclass %s%s%s", cfg->device_id, cfg->camera ? " " : "",
             cfg->camera ? cfg->camera : "");
    cJSON_AddStringToObject(dev, "name", text);
    cJSON_AddStringToObject(dev, "manufacturer", "camclass");
    cJSON_AddStringToObject(dev, "model", model);
    cJSON_AddStringToObject(dev, "sw_version", cfg->version);
    free(model);
    return o;
}

// Prints o, hands it to emit under <prefix>/<component>/<object>/config, frees o.
static bool send(const struct cc_ha_config *cfg, const char *component, const char *object,
                 cJSON *o, bool (*emit)(void *, const char *, const char *), void *ctx)
{
    char topic[256], *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    snprintf(topic, sizeof(topic), "%s/%s/%s/config", cfg->prefix, component, object);
    bool ok = text && emit(ctx, topic, text);
    free(text);
    return ok;
}

bool cc_ha_configs(const struct cc_ha_config *cfg,
                   bool (*emit)(void *ctx, const char *topic, const char *payload), void *ctx)
{
    char object[CC_HA_OBJECT_MAX], name[LABEL_MAX + 32];
    cc_ha_object_id(cfg->device_id, cfg->camera, object, sizeof(object));
    cJSON *o = config_begin(cfg, "Detected", object);
    if (o) {
        cJSON_AddStringToObject(o, "value_template", "{{ value_json.label }}");
        char topic[CC_HA_TOPIC_MAX];
        cc_ha_topic(cfg, "state", topic, sizeof(topic));
        cJSON_AddStringToObject(o, "json_attributes_topic", topic);
        cJSON_AddStringToObject(o, "icon", "mdi:cctv");
    }
    if (!send(cfg, "sensor", object, o, emit, ctx))
        return false;
    int index = 0;
    for (const char *p = cfg->binary; p && *p; index++) {
        size_t len = strcspn(p, ",");
        object_id(cfg, p, len, index, object, sizeof(object));
        snprintf(name, sizeof(name), "%.*s", (int)len, p);
        o = config_begin(cfg, name, object);
        char tmpl[sizeof(name) + 64];
        snprintf(tmpl, sizeof(tmpl), "{{ 'ON' if value_json.label == '%s' else 'OFF' }}", name);
        if (o)
            cJSON_AddStringToObject(o, "value_template", tmpl);
        if (!send(cfg, "binary_sensor", object, o, emit, ctx))
            return false;
        p += len + (p[len] == ',');
    }
    return true;
}

char *cc_ha_state(const char *label, double score, const char *model)
{
    cJSON *o = cJSON_CreateObject();
    char *l = cc_utf8_clean_dup(label ? label : "none"), *m = cc_utf8_clean_dup(model);
    char *text = NULL;
    if (o && l && m) {
        cJSON_AddStringToObject(o, "label", l);
        cJSON_AddNumberToObject(o, "score",
                                label && isfinite(score) ? round(score * 1e4) / 1e4 : 0);
        cJSON_AddStringToObject(o, "model", m);
        text = cJSON_PrintUnformatted(o);
    }
    cJSON_Delete(o);
    free(l);
    free(m);
    return text;
}
