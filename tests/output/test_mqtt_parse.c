/* camclass — the MQTT settings parsers of app/output/mqtt.c, without a broker: broker URLs
 * (schemes, default ports, IPv6, every refusal), device ids (given and from the host name), the
 * auth file's text (CRLF, empty password, limits), and the detection log's sink (lines go to
 * it, not to a file, and are counted). The client itself is tested against a real broker by
 * test_mqtt.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detlog.h"
#include "mqtt.h"
#include "testutil.h"

static void url_ok(const char *url, bool tls, const char *host, int port)
{
    struct cc_mqtt_address a;
    struct cc_error err = {0};
    bool ok = cc_mqtt_parse_url(url, &a, &err);
    CHECKF(ok && a.tls == tls && strcmp(a.host, host) == 0 && a.port == port,
           "%s: ok %d tls %d host \"%s\" port %d (%s)", url, ok, a.tls, a.host, a.port, err.msg);
}

static void url_bad(const char *url, const char *want)
{
    struct cc_mqtt_address a;
    struct cc_error err = {0};
    bool ok = cc_mqtt_parse_url(url, &a, &err);
    CHECKF(!ok && strstr(err.msg, want) && strstr(err.msg, url), "%s: ok %d, \"%s\" (want %s)",
           url, ok, err.msg, want);
}

static void urls(void)
{
    url_ok("mqtt://broker.local", false, "broker.local", 1883);
    url_ok("mqtt://broker.local:1884/", false, "broker.local", 1884);
    url_ok("MQTTS://10.0.0.2", true, "10.0.0.2", 8883);
    url_ok("mqtts://[fe80::1]:8884", true, "fe80::1", 8884);
    url_ok("mqtt://[::1]", false, "::1", 1883);
    url_ok("mqtt://h:65535", false, "h", 65535);
    url_bad("tcp://h", "must start with mqtt:// or mqtts://");
    url_bad("mqtt:/h", "must start with mqtt:// or mqtts://");
    url_bad("mqtt://", "no host name");
    url_bad("mqtt://127.0.0.1?x", "unexpected \"?x\" after the address");
    url_bad("mqtt://h:1883#frag", "unexpected \"#frag\" after the address");
    url_bad("mqtt://:1883", "no host name");
    url_bad("mqtt://[::1", "no ']'");
    url_bad("mqtt://u:p@h", "--mqtt-auth");
    url_bad("mqtt://h:0", "port must be a number from 1 to 65535");
    url_bad("mqtt://h:65536", "port must be a number from 1 to 65535");
    url_bad("mqtt://h:1883883", "port must be a number from 1 to 65535");
    url_bad("mqtt://h:", "port must be a number from 1 to 65535");
    url_bad("mqtt://h:12x", "unexpected \"x\"");
    url_bad("mqtt://h/camclass/x", "unexpected \"camclass/x\"");
    url_bad("mqtt://h o", "space or control character");
    char big[400] = "mqtt://";
    memset(big + 7, 'a', 300);
    url_bad(big, "longer than 255 bytes");
}

static void ids(void)
{
    char id[65];
    struct cc_error err = {0};
    CHECK(cc_mqtt_device_id("kitchen-cam_2.a", id, &err) && strcmp(id, "kitchen-cam_2.a") == 0);
    const char *bad[] = {"", "a/b", "a+b", "a#", "a b", "caf\xc3\xa9",
                         "01234567890123456789012345678901234567890123456789012345678901234"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        CHECKF(!cc_mqtt_device_id(bad[i], id, &err) && strstr(err.msg, "--device-id"),
               "device id \"%s\" accepted (%s)", bad[i], err.msg);
    }
    CHECK(cc_mqtt_device_id(NULL, id, &err) && id[0]); // the host name, cleaned
    for (const char *c = id; *c; c++)
        CHECKF(strchr("/+# ", *c) == NULL, "host-name id \"%s\" has '%c'", id, *c);
}

static void auth(void)
{
    char user[256], pass[1024];
    struct cc_error err = {0};
    const char *t = "cam\r\ns3cret: pass\r\n";
    CHECK(cc_mqtt_parse_auth(t, strlen(t), "f", user, pass, &err) && !strcmp(user, "cam") &&
          !strcmp(pass, "s3cret: pass"));
    t = "cam";
    CHECK(cc_mqtt_parse_auth(t, strlen(t), "f", user, pass, &err) && !strcmp(user, "cam") &&
          !pass[0]);
    t = "\npass\n";
    CHECK(!cc_mqtt_parse_auth(t, strlen(t), "f", user, pass, &err) &&
          strstr(err.msg, "--mqtt-auth f: the first line (the user name) is empty"));
    CHECK(!cc_mqtt_parse_auth("a\0b", 3, "f", user, pass, &err) && strstr(err.msg, "NUL"));
    char *big = calloc(1, 5000);
    memset(big, 'u', 300);
    CHECK(!cc_mqtt_parse_auth(big, 300, "f", user, pass, &err) && strstr(err.msg, "over 255"));
    memset(big, 'u', 4999);
    CHECK(!cc_mqtt_parse_auth(big, 4999, "f", user, pass, &err) &&
          strstr(err.msg, "over 4096 bytes"));
    free(big);
    CHECK(!cc_mqtt_read_auth("/", user, pass, &err) && strstr(err.msg, "is a directory"));
    CHECK(!cc_mqtt_read_auth("/nonexistent/auth", user, pass, &err) &&
          strstr(err.msg, "No such file"));
}

// The detection log's sink: what MQTT receives.
struct sink_seen {
    int lines;
    char events[8][16];
    bool refuse;
};

static bool sink(void *ctx, const char *event, const char *line, size_t len)
{
    struct sink_seen *s = ctx;
    if (s->lines < 8)
        snprintf(s->events[s->lines], sizeof(s->events[0]), "%s", event);
    s->lines++;
    CHECKF(len == strlen(line) && line[0] == '{' && line[len - 1] == '}' && !strchr(line, '\n'),
           "sink line: %s", line);
    return !s->refuse;
}

static void detlog_sink(void)
{
    struct sink_seen seen = {0};
    struct cc_detlog_config cfg = {.path = "/nonexistent/dir/never-opened.log",
                                   .mode = CC_DETLOG_DETECTIONS, .threshold = 0.5,
                                   .hysteresis = 0.1, .sink = sink, .sink_ctx = &seen};
    struct cc_error err = {0};
    struct cc_detlog *log = cc_detlog_create(&cfg, &err);
    CHECKF(log != NULL, "detlog with a sink: %s", err.msg);
    if (!log)
        return;
    struct cc_result r = {.n_top = 1, .top = {{.index = 3, .label = "cat", .score = 0.9f}}};
    for (int i = 0; i < 3; i++) {
        r.seq = (uint64_t)i;
        r.result_ns = i * 100000000LL;
        CHECK(cc_detlog_write(log, &r, &err));
    }
    r.top[0].score = 0.1f;
    r.seq = 3;
    r.result_ns = 300000000LL;
    seen.refuse = true; // a sink that cannot take the line: counted as lost
    CHECK(cc_detlog_write(log, &r, &err));
    seen.refuse = false;
    CHECK(cc_detlog_reopen(log, &err)); // no file: nothing to reopen
    CHECK(cc_detlog_finish(log, &err));
    CHECKF(seen.lines == 3 && !strcmp(seen.events[0], "detection") &&
               !strcmp(seen.events[1], "clear") && !strcmp(seen.events[2], "summary"),
           "sink got %d lines: %s %s %s", seen.lines, seen.events[0], seen.events[1],
           seen.events[2]);
    cc_detlog_destroy(log);
}

int main(void)
{
    urls();
    ids();
    auth();
    detlog_sink();
    return tu_exit_code();
}
