/* camclass — detection events to an MQTT broker (see mqtt.h). The only module that includes
 * mosquitto.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mosquitto.h>

#include "mqtt.h"
#include "clock.h"
#include "notice.h"

#define MQTT_KEEPALIVE_S 30
#define MQTT_EVENT_QOS 2   // exactly once (see mqtt.h); the status topic uses 1
#define MQTT_RETRY_MIN_S 1 // reconnect back-off: 1, 2, 4, ... 30 s
#define MQTT_RETRY_MAX_S 30
#define MQTT_AUTH_MAX 4096
#define MQTT_SILENT_S 5 // a broker silent this long since start or a loss is reported
#define MQTT_SYSTEM_CA_DIR "/etc/ssl/certs"
#define RETAINED_TOPIC_MAX 256 // bytes of a retained message's topic, with its zero

/* ---------------------------------------------------------------------------------------------
 * URL, device id, auth file
 */

bool cc_mqtt_parse_url(const char *url, struct cc_mqtt_address *a, struct cc_error *err)
{
    memset(a, 0, sizeof(*a));
    const char *rest;
    if (strncasecmp(url, "mqtt://", 7) == 0) {
        rest = url + 7;
        a->port = 1883;
    } else if (strncasecmp(url, "mqtts://", 8) == 0) {
        rest = url + 8;
        a->tls = true;
        a->port = 8883;
    } else {
        return cc_error_set(err,
                            "--mqtt \"%s\": the URL must start with mqtt:// or mqtts:// "
                            "(e.g. mqtt://broker.local:1883)",
                            url);
    }
    if (strchr(rest, '@'))
        return cc_error_set(err,
                            "--mqtt \"%s\": a user or password in the URL would show in "
                            "ps and logs; put them in a file given with --mqtt-auth",
                            url);
    const char *host = rest, *end;
    if (*rest == '[') { // [IPv6]
        host = rest + 1;
        end = strchr(host, ']');
        if (!end)
            return cc_error_set(err, "--mqtt \"%s\": no ']' after the IPv6 address", url);
        rest = end + 1;
    } else {
        end = host + strcspn(host, ":/?#"); // a query or fragment is no part of a host name
        rest = end;
    }
    size_t n = (size_t)(end - host);
    if (n == 0)
        return cc_error_set(err, "--mqtt \"%s\": no host name (e.g. mqtt://localhost)", url);
    if (n >= sizeof(a->host))
        return cc_error_set(err, "--mqtt \"%s\": the host name is longer than %zu bytes", url,
                            sizeof(a->host) - 1);
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)host[i]))
            return cc_error_set(err,
                                "--mqtt \"%s\": the host name has a space or control "
                                "character",
                                url);
    memcpy(a->host, host, n);
    a->host[n] = '\0';
    if (*rest == ':') {
        rest++;
        long port = 0;
        size_t digits = 0;
        while (isdigit((unsigned char)rest[digits]) && digits < 6)
            port = port * 10 + (rest[digits++] - '0');
        if (digits == 0 || port < 1 || port > 65535 || isdigit((unsigned char)rest[digits]))
            return cc_error_set(err, "--mqtt \"%s\": the port must be a number from 1 to 65535",
                                url);
        a->port = (int)port;
        rest += digits;
    }
    if (*rest == '/')
        rest++;
    if (*rest)
        return cc_error_set(err,
                            "--mqtt \"%s\": unexpected \"%s\" after the address (topics are "
                            "camclass/<device-id>/...; see --device-id)",
                            url, rest);
    return true;
}

static bool id_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

bool cc_mqtt_device_id(const char *id, char out[65], struct cc_error *err)
{
    if (id) {
        size_t n = strlen(id);
        bool ok = n >= 1 && n <= 64;
        for (size_t i = 0; ok && i < n; i++)
            ok = id_char(id[i]);
        if (!ok)
            return cc_error_set(err,
                                "--device-id \"%s\": use 1 to 64 letters, digits, '_', '-' "
                                "or '.' (it becomes a topic level: camclass/<id>/...)",
                                id);
        memcpy(out, id, n + 1);
        return true;
    }
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
        snprintf(host, sizeof(host), "camclass");
    size_t n = strnlen(host, 64);
    for (size_t i = 0; i < n; i++)
        out[i] = id_char(host[i]) ? host[i] : '_';
    out[n] = '\0';
    return true;
}

bool cc_mqtt_parse_auth(const char *text, size_t len, const char *path, char *user, char *pass,
                        struct cc_error *err)
{
    if (len > MQTT_AUTH_MAX)
        return cc_error_set(err,
                            "--mqtt-auth %s: over %d bytes; it holds two lines, the user "
                            "and the password",
                            path, MQTT_AUTH_MAX);
    if (memchr(text, '\0', len))
        return cc_error_set(err,
                            "--mqtt-auth %s: has a NUL byte; it holds two lines of text, "
                            "the user and the password",
                            path);
    const char *nl = memchr(text, '\n', len);
    size_t n1 = nl ? (size_t)(nl - text) : len;
    const char *line2 = nl ? nl + 1 : text + len;
    size_t n2 = (size_t)(text + len - line2);
    const char *nl2 = memchr(line2, '\n', n2);
    if (nl2)
        n2 = (size_t)(nl2 - line2);
    if (n1 && text[n1 - 1] == '\r') // written on Windows
        n1--;
    if (n2 && line2[n2 - 1] == '\r')
        n2--;
    if (n1 == 0)
        return cc_error_set(err, "--mqtt-auth %s: the first line (the user name) is empty", path);
    if (n1 >= 256 || n2 >= 1024)
        return cc_error_set(err, "--mqtt-auth %s: user over 255 or password over 1023 bytes", path);
    memcpy(user, text, n1);
    user[n1] = '\0';
    memcpy(pass, line2, n2);
    pass[n2] = '\0';
    return true;
}

bool cc_mqtt_read_auth(const char *path, char *user, char *pass, struct cc_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return cc_error_set(err, "--mqtt-auth %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cc_error_set(err, "--mqtt-auth %s: is %s, not a file with the user and password",
                            path, cc_file_kind(st.st_mode));
    }
    char buf[MQTT_AUTH_MAX + 1];
    ssize_t got = st.st_size <= MQTT_AUTH_MAX ? read(fd, buf, sizeof(buf)) : MQTT_AUTH_MAX + 1;
    int e = errno;
    close(fd);
    if (got < 0)
        return cc_error_set(err, "--mqtt-auth %s: %s", path, strerror(e));
    bool ok = cc_mqtt_parse_auth(buf, (size_t)got, path, user, pass, err);
    memset(buf, 0, sizeof(buf));
    return ok;
}

/* ---------------------------------------------------------------------------------------------
 * The client
 */

struct mqtt_event {
    char topic[256]; // camclass/<id>/<event> (event: [<camera>/]<name>)
    char *payload;   // (len) bytes, owned
    size_t len;
};

// A retained message: the latest value of a topic, sent again on every connect.
struct mqtt_retained {
    char topic[RETAINED_TOPIC_MAX]; // absolute
    char *payload;                  // (len) bytes, owned
    size_t len;
};

struct cc_mqtt {
    struct cc_mqtt_config cfg; // notice/notice_ctx used; the strings are not kept
    struct cc_mqtt_address addr;
    char id[65];
    char status_topic[128];
    char set_topic[128]; // camclass/<id>/model/set (cfg.on_model_set)
    struct mosquitto *mosq;
    bool loop_started;    // libmosquitto's network thread runs (reconnects by itself)
    pthread_t supervisor; // see supervisor_main
    bool supervisor_started;
    bool loop_failed;    // mosquitto_loop_start failed: nothing more to try
    pthread_cond_t wake; // wakes the supervisor when stopping

    pthread_mutex_t lock;     // guards everything below but the atomics
    struct mqtt_event *queue; // (queue_max) ring: head is the oldest, count waiting
    int queue_max, head, count;
    bool connected; // CONNACK accepted and no disconnect since
    bool ever_connected;
    bool outage;             // an outage was reported and has not ended
    int64_t disconnected_ns; // start, or the last disconnect: when the silence began
    bool stopping;           // destroy began: disconnects are expected
    bool resending;          // after a reconnect, libmosquitto resends what the lost connection
                             // left unacknowledged; the queue waits for that, to keep the order
    int64_t outage_since_ns;
    uint64_t queued, sent, dropped;
    struct mqtt_retained *retained; // (n_retained of cap_retained) cc_mqtt_retain's; grown up
    int n_retained, cap_retained;   // to CC_MQTT_RETAINED_MAX
    uint64_t status_sent;           // "online"/"offline" and retained messages handed over
    atomic_uint_fast64_t delivered; // PUBACKs of events and status messages
    atomic_bool lib_error_said;     // an error libmosquitto logged was passed on (once a
                                    // connection; a TLS failure, say, says nothing else)
};

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static void lib_init(void)
{
    mosquitto_lib_init();
}

static void notice(struct cc_mqtt *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(struct cc_mqtt *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_vnotice(m->cfg.notice, m->cfg.notice_ctx, fmt, ap);
    va_end(ap);
}

static const char *addr_text(const struct cc_mqtt *m, char *buf, size_t size)
{
    snprintf(buf, size, strchr(m->addr.host, ':') ? "[%s]:%d" : "%s:%d", m->addr.host,
             m->addr.port);
    return buf;
}

// Messages handed to libmosquitto and not yet acknowledged. Called locked.
static uint64_t outstanding_locked(struct cc_mqtt *m)
{
    uint64_t owed = m->sent + m->status_sent, acked = atomic_load(&m->delivered);
    return owed > acked ? owed - acked : 0;
}

// Hands one retained message to libmosquitto (QoS 1). Called locked, connected.
static void send_retained_locked(struct cc_mqtt *m, const struct mqtt_retained *r)
{
    int rc = mosquitto_publish(m->mosq, NULL, r->topic, (int)r->len, r->payload, 1, true);
    if (rc == MOSQ_ERR_SUCCESS)
        m->status_sent++;
    else if (rc != MOSQ_ERR_NO_CONN && rc != MOSQ_ERR_CONN_LOST) // on_connect sends it
        notice(m, "mqtt: publishing %s failed: %s", r->topic, mosquitto_strerror(rc));
}

// Sends the queued events in order while the connection takes them. Called locked.
static void drain_locked(struct cc_mqtt *m)
{
    while (m->connected && !m->resending && m->count > 0) {
        struct mqtt_event *e = &m->queue[m->head];
        int rc = mosquitto_publish(m->mosq, NULL, e->topic, (int)e->len, e->payload, MQTT_EVENT_QOS,
                                   false);
        if (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST)
            return; // still queued; on_connect sends it
        if (rc != MOSQ_ERR_SUCCESS) {
            notice(m, "mqtt: an event for %s was not sent: %s", e->topic, mosquitto_strerror(rc));
            m->dropped++;
        } else {
            m->sent++;
        }
        free(e->payload);
        e->payload = NULL;
        m->head = (m->head + 1) % m->queue_max;
        m->count--;
    }
}

/* The callbacks run on libmosquitto's network thread, which cc_mqtt_destroy cancels when it is
 * not connected (mosquitto_loop_stop with force: it may be waiting in a connect). A callback
 * cancelled at one of its cancellation points (fprintf, a socket write) would leave m->lock,
 * and libmosquitto's callback mutex, held: so no callback can be cancelled. */
static int cancel_off(void)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return old;
}

static void cancel_restore(int old)
{
    pthread_setcancelstate(old, NULL);
}

static void on_message(struct mosquitto *mosq, void *obj, const struct mosquitto_message *msg)
{
    (void)mosq;
    struct cc_mqtt *m = obj;
    if (m->cfg.on_model_set && msg->topic && strcmp(msg->topic, m->set_topic) == 0)
        m->cfg.on_model_set(m->cfg.model_set_ctx, m, msg->payload, (size_t)msg->payloadlen);
}

static void on_connect(struct mosquitto *mosq, void *obj, int rc)
{
    (void)mosq;
    struct cc_mqtt *m = obj;
    char at[300];
    int cs = cancel_off();
    pthread_mutex_lock(&m->lock);
    if (rc != 0) {
        // Refused (bad credentials, not authorised, ...): libmosquitto keeps retrying.
        if (!m->outage) {
            m->outage = true;
            m->outage_since_ns = cc_now_ns();
            char why[128];
            snprintf(why, sizeof(why), "%s", mosquitto_connack_string(rc));
            why[strcspn(why, ".")] = '\0'; // "Connection Refused: not authorised."
            notice(m,
                   "mqtt: the broker at %s refused the connection (%s); retrying with "
                   "back-off (check --mqtt-auth)",
                   addr_text(m, at, sizeof(at)), why);
        }
        pthread_mutex_unlock(&m->lock);
        cancel_restore(cs);
        return;
    }
    m->connected = true;
    if (!m->ever_connected) {
        notice(m, "mqtt: connected to %s; publishing to camclass/%s/", addr_text(m, at, sizeof(at)),
               m->id);
    } else if (m->outage) {
        notice(m, "mqtt: connected again to %s after %.1f s; sending %d waiting event%s",
               addr_text(m, at, sizeof(at)), (double)(cc_now_ns() - m->outage_since_ns) / 1e9,
               m->count, m->count == 1 ? "" : "s");
    }
    m->ever_connected = true;
    m->outage = false;
    atomic_store(&m->lib_error_said, false);
    m->resending = outstanding_locked(m) > 0; // on_publish drains once they are through
    int prc = mosquitto_publish(m->mosq, NULL, m->status_topic, 6, "online", 1, true);
    if (prc == MOSQ_ERR_SUCCESS)
        m->status_sent++;
    else
        notice(m, "mqtt: publishing %s failed: %s", m->status_topic, mosquitto_strerror(prc));
    for (int i = 0; i < m->n_retained; i++) // a broker restarted without persistence lost them
        send_retained_locked(m, &m->retained[i]);
    if (m->cfg.on_model_set) // the retained model/set comes at once (model_set.h)
        mosquitto_subscribe(m->mosq, NULL, m->set_topic, 1);
    drain_locked(m);
    pthread_mutex_unlock(&m->lock);
    cancel_restore(cs);
}

static void on_disconnect(struct mosquitto *mosq, void *obj, int rc)
{
    (void)mosq;
    struct cc_mqtt *m = obj;
    char at[300];
    int cs = cancel_off();
    pthread_mutex_lock(&m->lock);
    m->connected = false;
    m->disconnected_ns = cc_now_ns();
    if (!m->stopping && !m->outage) {
        m->outage = true;
        m->outage_since_ns = cc_now_ns();
        notice(m,
               "mqtt: the connection to %s is lost (%s); reconnecting with back-off, keeping "
               "up to %d events",
               addr_text(m, at, sizeof(at)), rc == 0 ? "closed" : mosquitto_strerror(rc),
               m->queue_max);
    }
    pthread_mutex_unlock(&m->lock);
    cancel_restore(cs);
}

// libmosquitto's own error lines (a TLS handshake that fails calls no other callback). May run
// inside a libmosquitto call made under m->lock: takes no lock.
static void on_log(struct mosquitto *mosq, void *obj, int level, const char *str)
{
    (void)mosq;
    struct cc_mqtt *m = obj;
    int cs = cancel_off();
    if (level == MOSQ_LOG_ERR && !atomic_exchange(&m->lib_error_said, true))
        notice(m,
               "mqtt: libmosquitto: %s (for TLS: check --mqtt-ca and the broker's "
               "certificate and name)",
               str);
    cancel_restore(cs);
}

static void on_publish(struct mosquitto *mosq, void *obj, int mid)
{
    (void)mosq;
    (void)mid;
    struct cc_mqtt *m = obj;
    atomic_fetch_add(&m->delivered, 1);
    int cs = cancel_off();
    pthread_mutex_lock(&m->lock);
    if (m->resending && outstanding_locked(m) == 0) {
        m->resending = false;
        drain_locked(m);
    }
    pthread_mutex_unlock(&m->lock);
    cancel_restore(cs);
}

/* The supervisor: libmosquitto's network thread reconnects by itself only once a connection
 * has been started, and it says nothing about attempts that fail before a CONNACK. So a thread
 * of ours, awake once a second:
 * - makes the first attempt (so that resolving the broker's name never holds the caller), and
 *   retries the first connection with the back-off while mosquitto_connect_async fails at once
 *   (a refused loopback port, a name that does not resolve: the network thread would wait
 *   forever), and starts the network thread after the first attempt that gets under way;
 * - reports, once, a broker that has not answered for MQTT_SILENT_S (a port that drops
 *   packets, a TLS handshake that fails), so that no outage goes unsaid. */
static bool try_connect(struct cc_mqtt *m, int *rc)
{
    *rc = mosquitto_connect_async(m->mosq, m->addr.host, m->addr.port, MQTT_KEEPALIVE_S);
    if (*rc != MOSQ_ERR_SUCCESS)
        return false;
    *rc = mosquitto_loop_start(m->mosq);
    pthread_mutex_lock(&m->lock);
    m->loop_started = *rc == MOSQ_ERR_SUCCESS;
    pthread_mutex_unlock(&m->lock);
    if (*rc != MOSQ_ERR_SUCCESS)
        notice(m, "mqtt: starting the network thread failed: %s; events are not sent",
               mosquitto_strerror(*rc));
    return true;
}

static void *supervisor_main(void *arg)
{
    struct cc_mqtt *m = arg;
    int delay_s = MQTT_RETRY_MIN_S, rc;
    int64_t next_try = cc_now_ns(); // the first attempt at once
    bool tried = false;
    char at[300];
    pthread_mutex_lock(&m->lock);
    while (!m->stopping) {
        int64_t t = cc_now_ns();
        if (!m->loop_started && !m->loop_failed && t >= next_try) {
            pthread_mutex_unlock(&m->lock);
            bool started = try_connect(m, &rc);
            int e = errno;
            pthread_mutex_lock(&m->lock);
            m->loop_failed = started && !m->loop_started;
            if (!started && !tried) { // said once; on_connect says when it is over
                m->outage = true;
                m->outage_since_ns = m->disconnected_ns;
                notice(m,
                       "mqtt: cannot reach the broker at %s yet (%s); retrying in the "
                       "background, keeping up to %d events",
                       addr_text(m, at, sizeof(at)),
                       rc == MOSQ_ERR_ERRNO ? strerror(e) : mosquitto_strerror(rc), m->queue_max);
            }
            if (tried)
                delay_s = delay_s * 2 > MQTT_RETRY_MAX_S ? MQTT_RETRY_MAX_S : delay_s * 2;
            tried = true;
            next_try = t + (int64_t)delay_s * 1000000000;
        }
        if (!m->connected && !m->outage &&
            t - m->disconnected_ns >= (int64_t)MQTT_SILENT_S * 1000000000) {
            m->outage = true;
            m->outage_since_ns = m->disconnected_ns;
            notice(m,
                   "mqtt: no answer from the broker at %s for %d s; still trying with "
                   "back-off, keeping up to %d events",
                   addr_text(m, at, sizeof(at)), MQTT_SILENT_S, m->queue_max);
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        while (!m->stopping && pthread_cond_timedwait(&m->wake, &m->lock, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

// Starts the supervisor, which makes the first attempt too: mosquitto_connect_async resolves
// the broker's name with a blocking getaddrinfo, which must not hold camclass's start. False
// (rc set) only when the thread cannot start.
static bool start(struct cc_mqtt *m, int *rc)
{
    m->disconnected_ns = cc_now_ns();
    if (pthread_create(&m->supervisor, NULL, supervisor_main, m) != 0) {
        *rc = MOSQ_ERR_ERRNO;
        return false;
    }
    m->supervisor_started = true;
    return true;
}

// Everything in cfg that can be checked without a broker; user/pass filled from the auth file.
static bool check_config(const struct cc_mqtt_config *cfg, struct cc_mqtt_address *addr,
                         char id[65], char user[256], char pass[1024], struct cc_error *err)
{
    if (!cfg->url)
        return cc_error_set(err, "mqtt: no broker URL");
    if (!cc_mqtt_parse_url(cfg->url, addr, err) || !cc_mqtt_device_id(cfg->device_id, id, err))
        return false;
    if (cfg->queue_max < 0)
        return cc_error_set(err, "mqtt: queue size %d is negative", cfg->queue_max);
    if (cfg->ca_file && !addr->tls)
        return cc_error_set(err,
                            "--mqtt-ca %s: only mqtts:// URLs use a CA file; --mqtt is "
                            "\"%s\"",
                            cfg->ca_file, cfg->url);
    if (cfg->ca_file && access(cfg->ca_file, R_OK) != 0)
        return cc_error_set(err, "--mqtt-ca %s: %s", cfg->ca_file, strerror(errno));
    return !cfg->auth_file || cc_mqtt_read_auth(cfg->auth_file, user, pass, err);
}

bool cc_mqtt_check(const struct cc_mqtt_config *cfg, struct cc_error *err)
{
    struct cc_mqtt_address addr;
    char id[65], user[256], pass[1024];
    bool ok = check_config(cfg, &addr, id, user, pass, err);
    memset(pass, 0, sizeof(pass));
    return ok;
}

struct cc_mqtt *cc_mqtt_create(const struct cc_mqtt_config *cfg, struct cc_error *err)
{
    struct cc_mqtt_address addr;
    char id[65], user[256], pass[1024];
    if (!check_config(cfg, &addr, id, user, pass, err)) {
        memset(pass, 0, sizeof(pass));
        return NULL;
    }

    struct cc_mqtt *m = calloc(1, sizeof(*m));
    if (!m) {
        cc_error_set(err, "mqtt: out of memory");
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    cc_cond_init_monotonic(&m->wake);
    m->cfg = *cfg;
    m->cfg.url = m->cfg.ca_file = m->cfg.auth_file = m->cfg.device_id = NULL;
    m->addr = addr;
    memcpy(m->id, id, sizeof(id));
    snprintf(m->status_topic, sizeof(m->status_topic), "camclass/%s/status", m->id);
    snprintf(m->set_topic, sizeof(m->set_topic), "camclass/%s/model/set", m->id);
    m->queue_max = cfg->queue_max ? cfg->queue_max : CC_MQTT_QUEUE_DEFAULT;
    m->queue = calloc((size_t)m->queue_max, sizeof(*m->queue));
    char client_id[80];
    snprintf(client_id, sizeof(client_id), "camclass-%s", m->id);
    pthread_once(&lib_once, lib_init);
    // clean session off: the broker keeps this client's session (and the ids of the QoS 2
    // messages it has seen) over a reconnect, so that a message sent again is not a repeat.
    if (!m->queue || !(m->mosq = mosquitto_new(client_id, false, m))) {
        cc_error_set(err, "mqtt: out of memory");
        goto error;
    }
    int rc;
    const char *what;
    if ((rc = mosquitto_int_option(m->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)) !=
        MOSQ_ERR_SUCCESS) {
        what = "setting MQTT 3.1.1";
        goto lib_error;
    }
    if ((rc = mosquitto_will_set(m->mosq, m->status_topic, 7, "offline", 1, true)) !=
        MOSQ_ERR_SUCCESS) {
        what = "setting the last will";
        goto lib_error;
    }
    if (cfg->auth_file &&
        (rc = mosquitto_username_pw_set(m->mosq, user, pass)) != MOSQ_ERR_SUCCESS) {
        what = "setting the user and password";
        goto lib_error;
    }
    memset(pass, 0, sizeof(pass));
    if (addr.tls &&
        (rc = mosquitto_tls_set(m->mosq, cfg->ca_file, cfg->ca_file ? NULL : MQTT_SYSTEM_CA_DIR,
                                NULL, NULL, NULL)) != MOSQ_ERR_SUCCESS) {
        what = "setting up TLS";
        goto lib_error;
    }
    mosquitto_reconnect_delay_set(m->mosq, MQTT_RETRY_MIN_S, MQTT_RETRY_MAX_S, true);
    mosquitto_connect_callback_set(m->mosq, on_connect);
    mosquitto_disconnect_callback_set(m->mosq, on_disconnect);
    mosquitto_publish_callback_set(m->mosq, on_publish);
    mosquitto_log_callback_set(m->mosq, on_log);
    mosquitto_message_callback_set(m->mosq, on_message);

    if (!start(m, &rc)) {
        what = "starting the connection's thread";
        goto lib_error;
    }
    return m;

lib_error:
    cc_error_set(err, "mqtt: %s failed: %s", what,
                 rc == MOSQ_ERR_ERRNO ? strerror(errno) : mosquitto_strerror(rc));
error:
    memset(pass, 0, sizeof(pass));
    cc_mqtt_destroy(m, 0);
    return NULL;
}

bool cc_mqtt_publish(struct cc_mqtt *m, const char *event, const char *json, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return false;
    memcpy(copy, json, len);
    pthread_mutex_lock(&m->lock);
    if (m->count == m->queue_max) { // away too long: the oldest goes
        free(m->queue[m->head].payload);
        m->queue[m->head].payload = NULL;
        m->head = (m->head + 1) % m->queue_max;
        m->count--;
        m->dropped++;
    }
    struct mqtt_event *e = &m->queue[(m->head + m->count) % m->queue_max];
    snprintf(e->topic, sizeof(e->topic), "camclass/%s/%s", m->id, event);
    e->payload = copy;
    e->len = len;
    m->count++;
    m->queued++;
    drain_locked(m);
    pthread_mutex_unlock(&m->lock);
    return true;
}

// Room for one more retained topic, up to CC_MQTT_RETAINED_MAX. Called locked.
static bool grow_retained_locked(struct cc_mqtt *m)
{
    if (m->cap_retained == CC_MQTT_RETAINED_MAX)
        return false;
    int cap = m->cap_retained ? m->cap_retained * 2 : 16;
    cap = cap > CC_MQTT_RETAINED_MAX ? CC_MQTT_RETAINED_MAX : cap;
    struct mqtt_retained *r = realloc(m->retained, (size_t)cap * sizeof(*r));
    if (!r)
        return false;
    m->retained = r;
    m->cap_retained = cap;
    return true;
}

bool cc_mqtt_retain(struct cc_mqtt *m, const char *topic, const char *payload, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy || strlen(topic) >= RETAINED_TOPIC_MAX) {
        free(copy);
        return false;
    }
    memcpy(copy, payload, len);
    pthread_mutex_lock(&m->lock);
    int i = 0;
    while (i < m->n_retained && strcmp(m->retained[i].topic, topic) != 0)
        i++;
    if (i == m->cap_retained && !grow_retained_locked(m)) {
        pthread_mutex_unlock(&m->lock);
        free(copy);
        return false;
    }
    struct mqtt_retained *r = &m->retained[i];
    if (i == m->n_retained) {
        snprintf(r->topic, sizeof(r->topic), "%s", topic);
        r->payload = NULL; // realloc's memory
        m->n_retained++;
    }
    free(r->payload);
    r->payload = copy;
    r->len = len;
    if (m->connected)
        send_retained_locked(m, r);
    pthread_mutex_unlock(&m->lock);
    return true;
}

struct cc_mqtt_totals cc_mqtt_get_totals(struct cc_mqtt *m)
{
    pthread_mutex_lock(&m->lock);
    uint64_t d = atomic_load(&m->delivered);
    struct cc_mqtt_totals t = {
        .queued = m->queued,
        .sent = m->sent,
        .delivered = d > m->status_sent ? d - m->status_sent : 0,
        .dropped = m->dropped,
        .connected = m->connected,
    };
    pthread_mutex_unlock(&m->lock);
    return t;
}

// Waits until every queued event and status message has been sent and acknowledged, or until
// deadline_ns.
static bool wait_delivered(struct cc_mqtt *m, int64_t deadline_ns)
{
    for (;;) {
        pthread_mutex_lock(&m->lock);
        bool done = m->count == 0 && outstanding_locked(m) == 0;
        pthread_mutex_unlock(&m->lock);
        if (done)
            return true;
        if (cc_now_ns() >= deadline_ns)
            return false;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
}

void cc_mqtt_destroy(struct cc_mqtt *m, int timeout_ms)
{
    if (!m)
        return;
    int64_t deadline = cc_now_ns() + (int64_t)timeout_ms * 1000000;
    pthread_mutex_lock(&m->lock);
    bool started = m->supervisor_started;
    pthread_mutex_unlock(&m->lock);
    if (started)
        wait_delivered(m, deadline);
    pthread_mutex_lock(&m->lock);
    bool connected = m->connected;
    uint64_t undelivered = (uint64_t)m->count + outstanding_locked(m);
    m->stopping = true;
    pthread_cond_broadcast(&m->wake);
    // "offline" by hand: a clean disconnect does not send the last will.
    if (connected && mosquitto_publish(m->mosq, NULL, m->status_topic, 7, "offline", 1, true) ==
                         MOSQ_ERR_SUCCESS)
        m->status_sent++;
    pthread_mutex_unlock(&m->lock);
    if (m->supervisor_started)
        pthread_join(m->supervisor, NULL); // after which loop_started no longer changes
    if (undelivered && started)
        notice(m, "mqtt: %llu event%s not delivered: the broker is away",
               (unsigned long long)undelivered, undelivered == 1 ? " was" : "s were");
    if (m->loop_started) {
        if (connected)
            wait_delivered(m, cc_now_ns() + 1000000000);
        mosquitto_disconnect(m->mosq);
        mosquitto_loop_stop(m->mosq, !connected);
    }
    mosquitto_destroy(m->mosq);
    for (int i = 0; m->queue && i < m->queue_max; i++)
        free(m->queue[i].payload);
    for (int i = 0; i < m->n_retained; i++)
        free(m->retained[i].payload);
    free(m->retained);
    free(m->queue);
    pthread_cond_destroy(&m->wake);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
