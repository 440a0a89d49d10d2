/* The webhook's URL checks and its bounded queue (app/output/webhook.c), against a loopback
 * port nobody listens on: events beyond the bound are dropped oldest first and counted, what
 * is left is said at the end. Delivery, retries and refusals: tests/app/test_webhook.py. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "webhook.h"

static void test_urls(void)
{
    const struct {
        const char *url, *msg;
    } bad[] = {
        {"ftp://example.org/x", "http:// or https://"},
        {"http://", "http:// or https://"},
        {"http:///path", "no host"},
        {"https://user:secret@example.org/hook", "user:password@"},
        {"http://example.org/a b", "space or control"},
        {"example.org/hook", "http:// or https://"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cc_error err = {""};
        CHECKF(!cc_webhook_check_url(bad[i].url, &err) && strstr(err.msg, bad[i].msg) &&
                   strstr(err.msg, "--webhook"),
               "%s: \"%s\"", bad[i].url, err.msg);
    }
    const char *good[] = {"http://127.0.0.1:8123/api/webhook/abc", "https://[::1]/x?t=1",
                          "http://host"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        CHECKF(cc_webhook_check_url(good[i], NULL), "%s refused", good[i]);
}

static void test_bounded_queue(void)
{
    struct tu_notices n = TU_NOTICES_INIT;
    // Port 1 on loopback: connection refused at once, so the first event waits in back-off.
    struct cc_webhook_config cfg = {
        .url = "http://127.0.0.1:1/hook", .queue_max = 3, .notice = tu_notice, .notice_ctx = &n};
    struct cc_error err = {""};
    struct cc_webhook *w = cc_webhook_create(&cfg, &err);
    if (!CHECKF(w != NULL, "create: %s", err.msg))
        return;
    char json[32];
    for (int i = 0; i < 10; i++) {
        int len = snprintf(json, sizeof(json), "{\"i\":%d}", i);
        CHECK(cc_webhook_post(w, json, (size_t)len));
    }
    struct cc_webhook_totals t = cc_webhook_get_totals(w);
    // One may be in flight (taken by the thread), three wait: six or seven were dropped.
    CHECKF(t.queued == 10 && t.delivered == 0 && (t.dropped == 6 || t.dropped == 7),
           "queued %llu delivered %llu dropped %llu", (unsigned long long)t.queued,
           (unsigned long long)t.delivered, (unsigned long long)t.dropped);
    cc_webhook_destroy(w, 0);
    CHECKF(strstr(n.text, "not delivered: http://127.0.0.1:1/hook is away") != NULL, "%s", n.text);
    CHECKF(strstr(n.text, "dropped from a full queue") != NULL, "%s", n.text);
}

int main(void)
{
    test_urls();
    test_bounded_queue();
    return tu_exit_code();
}
