/* camclass — detection events to an MQTT broker (Eclipse Mosquitto's client library).
 *
 * A fleet of cameras reports to one broker: each camclass publishes its detection-mode events
 * (the detection log's "detection", "clear", "stats" and "summary" objects, docs/LOG_FORMAT.md)
 * as JSON to
 *
 *     camclass/<device-id>/detection | clear | stats | summary     QoS 2, not retained
 *     camclass/<device-id>/state     the current detection          QoS 1, retained (report.c)
 *     camclass/<device-id>/status    "online" / "offline"          QoS 1, retained; the broker
 *                                                                  sends "offline" (the last
 *                                                                  will) if camclass vanishes
 *
 * With the config's "cameras" one connection serves them all: each camera's events and state
 * go to camclass/<device-id>/<camera>/..., the status topic stays the node's.
 *
 * The connection is kept by libmosquitto's own network thread (mosquitto_loop_start):
 * connecting never blocks the caller (even the first attempt, whose name lookup is a blocking
 * getaddrinfo, runs on a thread of this module; destroy waits for a lookup under way), a broker
 * that is away at start or goes away later is retried with exponential back-off (1 s doubling to 30
 * s), and each outage is reported once through cfg.notice when it begins and once when it ends.
 * While the broker is away, events wait in a queue of at most queue_max (the oldest is dropped
 * first, and counted); they are sent in order when the connection is back. Events already handed to
 * libmosquitto when a connection breaks are sent again by it after the reconnect, before the queue;
 * QoS 2 with a persistent session (clean session off, client id camclass-<device-id>, so device ids
 * must be unique) lets the broker drop what it had already received: each event arrives once.
 * Across a broker restart that holds when the broker keeps its sessions (mosquitto: `persistence
 * true`).
 *
 * Library state: mosquitto_lib_init() is called once per process here (pthread_once) and never
 * undone; no other module uses libmosquitto.
 * Threads: cc_mqtt_publish is called by one thread at a time (the detection log's writer);
 * notice is called on libmosquitto's thread (or the caller's, from create/destroy) and must be
 * thread-safe. Ownership: the client copies everything in cfg; publish copies the line.
 */
#ifndef CC_MQTT_H
#define CC_MQTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

// CC_MQTT_RETAINED_MAX: Home Assistant's configs and state of 16 cameras with 32 binary sensors
// each, and then some
enum { CC_MQTT_QUEUE_DEFAULT = 1000, CC_MQTT_RETAINED_MAX = 16 * (2 + 32) + 32 };

struct cc_mqtt;

struct cc_mqtt_config {
    const char *url;       // mqtt://HOST[:PORT] (default port 1883) or mqtts://HOST[:PORT] (8883);
                           // HOST may be [IPv6]
    const char *ca_file;   // mqtts: PEM file of the CA(s) to trust; NULL = the system's
                           // (/etc/ssl/certs)
    const char *auth_file; // username on the first line, password on the second; NULL = none
    const char *device_id; // topic level; NULL = the host name (see cc_mqtt_device_id)
    int queue_max;         // events kept while the broker is away; 0 = CC_MQTT_QUEUE_DEFAULT
    // One line (no "camclass: " prefix, no '\n') about the connection: lost, back, refused.
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
    // The retained camclass/<device-id>/model/set message (model_set.h), subscribed to (QoS 1) on
    // every connect when set: called with its payload on libmosquitto's thread (must not block;
    // payload valid during the call). NULL: not subscribed.
    void (*on_model_set)(void *ctx, struct cc_mqtt *m, const void *payload, size_t len);
    void *model_set_ctx;
};

/* The broker address in a URL: tls for mqtts, host without brackets, port. False with err
 * naming the URL and what is wrong (scheme, empty host, port, a user:password@ part — passwords
 * belong in the auth file, not on a command line that ps shows —, a path). */
struct cc_mqtt_address {
    bool tls;
    char host[256];
    int port;
};
bool cc_mqtt_parse_url(const char *url, struct cc_mqtt_address *a, struct cc_error *err);

/* A topic level for this device: id when given (1 to 64 of A-Z a-z 0-9 _ - ., else false with
 * err), else the host name with any other character replaced by '_'. out holds 65 bytes. */
bool cc_mqtt_device_id(const char *id, char out[65], struct cc_error *err);

/* Reads the auth file: user on line 1, password on line 2 (without its '\n'; may be empty).
 * False with err naming the file when it cannot be read, is not a regular file, is over 4 KB,
 * or has no user line. user holds 256 bytes, pass 1024. */
bool cc_mqtt_read_auth(const char *path, char *user, char *pass, struct cc_error *err);
/* The same on the file's text (len bytes); path only names it in err. */
bool cc_mqtt_parse_auth(const char *text, size_t len, const char *path, char *user, char *pass,
                        struct cc_error *err);

/* Checks cfg as create does, without connecting (for a clear error before a model loads). */
bool cc_mqtt_check(const struct cc_mqtt_config *cfg, struct cc_error *err);

struct cc_mqtt;

/* Checks cfg, then starts connecting in the background and returns. NULL with err on a bad
 * URL, device id, auth or CA file, or when libmosquitto refuses the settings. A broker that
 * cannot be reached is not an error (see above): notice says so. */
struct cc_mqtt *cc_mqtt_create(const struct cc_mqtt_config *cfg, struct cc_error *err);

/* Queues one event (event: "detection", "clear", "stats", "summary", or "<camera>/detection"
 * and so on for a camera of several; json: the object, len bytes) for
 * camclass/<device-id>/<event> and returns at once. False only when out of memory. The queue
 * (queue_max) is the connection's: several cameras share it. */
bool cc_mqtt_publish(struct cc_mqtt *m, const char *event, const char *json, size_t len);

/* Sets the retained value of topic (absolute, < 256 bytes; e.g. a Home Assistant discovery
 * config or camclass/<id>/state): published now when connected, and again on every connect
 * (QoS 1, retained), a later call for the same topic replacing it. At most
 * CC_MQTT_RETAINED_MAX topics. False when out of memory, the topic is too long or the table full.
 * Any thread. */
bool cc_mqtt_retain(struct cc_mqtt *m, const char *topic, const char *payload, size_t len);

struct cc_mqtt_totals {
    uint64_t queued;    // events given to publish
    uint64_t sent;      // handed to libmosquitto (sent or being sent)
    uint64_t delivered; // acknowledged by the broker (PUBACK)
    uint64_t dropped;   // pushed out of a full queue while the broker was away
    bool connected;
};
struct cc_mqtt_totals cc_mqtt_get_totals(struct cc_mqtt *m);

/* Waits up to timeout_ms for the queue to empty and every sent event to be acknowledged,
 * publishes "offline" to the status topic, disconnects and frees. Events still waiting are
 * reported through notice (how many were not delivered). Accepts NULL. */
void cc_mqtt_destroy(struct cc_mqtt *m, int timeout_ms);

#endif
