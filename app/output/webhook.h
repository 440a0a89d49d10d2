/* camclass — detection events POSTed to a URL (libcurl): a webhook for Node-RED, Home
 * Assistant's webhook trigger, ntfy, a script behind a small web server.
 *
 *   struct cc_webhook *w = cc_webhook_create(&cfg, &err);  // NULL: print err, exit 2
 *   per event (any thread):  cc_webhook_post(w, json, len); // never blocks
 *   at the end:              cc_webhook_destroy(w, 3000);   // sends what waits, up to 3 s
 *
 * Each event is one POST of its JSON object (Content-Type: application/json) from a thread of
 * this module, in order. A 2xx answer is delivered. A connection failure, a timeout, 408, 429
 * or 5xx is retried with back-off (1 s doubling to 60 s) while later events wait behind it; the
 * outage is said once through notice when it begins and once when it ends. Any other answer
 * (a 4xx: the URL or the receiver is wrong) drops that event with one line and goes on. While
 * events wait, at most queue_max are kept: the oldest goes first, counted and said at the end.
 * Redirects are not followed; only http:// and https:// are spoken.
 * Library state: curl_global_init once per process here (pthread_once); no other module uses
 * libcurl. notice is called from the module's thread and must be thread-safe.
 */
#ifndef CC_WEBHOOK_H
#define CC_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum { CC_WEBHOOK_QUEUE_DEFAULT = 256 };

struct cc_webhook_config {
    const char *url;    // http(s)://...; copied
    int queue_max;      // events kept while the receiver is away; 0: CC_WEBHOOK_QUEUE_DEFAULT
    double timeout_s;   // per request, connect included; 0: 10
    double retry_max_s; // the longest wait between tries; 0: 60
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
};

/* Checks the URL: http:// or https://, a host, no user:password@ (ps would show it), < 2 KB.
 * False with err naming --webhook and the problem. */
bool cc_webhook_check_url(const char *url, struct cc_error *err);

struct cc_webhook;

struct cc_webhook *cc_webhook_create(const struct cc_webhook_config *cfg, struct cc_error *err);

/* Queues one event (json: len bytes, copied). False only when out of memory. */
bool cc_webhook_post(struct cc_webhook *w, const char *json, size_t len);

struct cc_webhook_totals {
    uint64_t queued, delivered, dropped, refused; // refused: answered with a 4xx, not retried
};
struct cc_webhook_totals cc_webhook_get_totals(struct cc_webhook *w);

/* Gives what waits up to flush_ms to be delivered, says how many were not (and how many were
 * dropped from a full queue), stops the thread and frees. Accepts NULL. */
void cc_webhook_destroy(struct cc_webhook *w, int flush_ms);

#endif
