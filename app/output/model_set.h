/* camclass — a model pushed to the node over MQTT (docs/FLEET.md): the retained message
 *
 *     camclass/<device-id>/model/set    {"url": "https://...", "sha256": "<64 hex>", "token":
 * "..."}
 *
 * makes camclass fetch the bundle at url (libcurl, http or https only, at most max_bytes, into a
 * temporary file in dir), check its SHA-256 and the token (compared in constant time with the
 * configured secret: --mqtt-model-token; without one the feature is off and nothing is
 * subscribed), and hot-load it through the same reload as POST /model (cfg.load). The outcome is
 * published retained on
 *
 *     camclass/<device-id>/model/status {"ok": true|false, "sha256": ..., "model": NAME,
 *                                        "error": "..."}
 *
 * and said on stderr in one line. A message whose sha256 is the bundle already running (cfg.sha:
 * the retained message comes again at every connect) loads nothing and says so. A download that
 * failed in a way that may work later (no server yet, a timeout, a 5xx) is tried again after 2 s,
 * then 4, 8, ... up to every 300 s (the status says "retry_in_s"), until it works, a newer message
 * replaces it, or stop.
 *
 * Threads: cc_model_set_offer runs on libmosquitto's thread (mqtt.h on_model_set): it only copies
 * the payload (the newest one waits; one arriving while another is handled replaces it) and
 * wakes this module's worker thread, which fetches, checks, loads and publishes once the
 * cameras run (cc_model_set_ready). stop joins the
 * worker (before the pipelines and the MQTT client go); destroy after the client is destroyed
 * (its thread may still offer until then). Library state: curl_global_init once (pthread_once).
 */
#ifndef CC_MODEL_SET_H
#define CC_MODEL_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "http.h"
#include "mqtt.h"

enum { CC_MODEL_SET_MAX_BYTES = 256 << 20 }; // a bundle larger than this is refused

struct cc_model_set_config {
    const char *token;     // the secret; copied. Required
    const char *device_id; // the --device-id as given (NULL: the host name; mqtt.h)
    const char *dir;       // where the download's temporary file goes; copied
    long max_bytes;        // 0: CC_MODEL_SET_MAX_BYTES
    // The reload (app_reload.c cc_app_http_load_model): 200 when the bundle at path runs now
    // (out filled), else an HTTP-like status with msg.
    int (*load)(void *ctx, const char *path, struct cc_http_loaded *out, char *msg, size_t size);
    // The sha256 of the bundle the top-level model runs now into sha ("" when unknown).
    void (*sha)(void *ctx, char sha[65]);
    void *ctx;
};

struct cc_model_set;

/* The token: the first line of the file at path (--mqtt-model-token), without '\r'; at most
 * size - 1 bytes. False with err naming the file and the flag (not a regular file, over 1 KB,
 * an empty first line). */
bool cc_model_set_read_token(const char *path, char *token, size_t size, struct cc_error *err);

/* Starts the worker. NULL with err on a bad device id, an empty token, or out of memory. */
struct cc_model_set *cc_model_set_create(const struct cc_model_set_config *cfg,
                                         struct cc_error *err);

/* libmosquitto's thread: a model/set message arrived on m (mqtt.h on_model_set; ctx: s). */
void cc_model_set_offer(void *s, struct cc_mqtt *m, const void *payload, size_t len);

/* The cameras run (main, once their pipelines started): a message that came before (the
 * retained one comes at the first connect, while the run is starting) is handled from now on.
 * Accepts NULL. */
void cc_model_set_ready(struct cc_model_set *s);

/* Ends the worker (a fetch under way is aborted) and joins it; offers are ignored from then. */
void cc_model_set_stop(struct cc_model_set *s);

/* Stops and frees; accepts NULL. */
void cc_model_set_destroy(struct cc_model_set *s);

#endif
