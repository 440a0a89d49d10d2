/* camclass — a live network stream into the frame slot, with reconnects (see source_stream.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "av_source.h"
#include "source_stream.h"
#include "clock.h"

enum {
    DEFAULT_TIMEOUT_MS = 5000,
    BACKOFF_MIN_MS = 250, // first retry after an outage
    BACKOFF_MAX_MS = 8000,
    SLEEP_SLICE_MS = 50, // back-off sleeps are cut into these, to notice a stop
};

struct cc_source_stream {
    char *url; // owned
    int timeout_ms;
    FILE *log;        // not owned; may be NULL
    struct cc_av *av; // the connection; owned by the thread while it runs
    double fps;       // as the first connection found it
    char desc[160];

    pthread_t thread;
    bool running;
    struct cc_frame_slot *slot; // not owned
    struct cc_frame staging;    // the frame being decoded; data owned here
    uint64_t sequence;          // frames put, across reconnects
};

/* av_source's cancel callback: the slot closed means stop. */
static bool slot_closed(void *ctx)
{
    return cc_frame_slot_closed(ctx);
}

static struct cc_av_options options(struct cc_source_stream *s)
{
    return (struct cc_av_options){
        .url = true,
        .timeout_ms = s->timeout_ms,
        .cancel = s->slot ? slot_closed : NULL,
        .cancel_ctx = s->slot,
    };
}

struct cc_source_stream *cc_source_stream_open(const char *url, int timeout_ms, FILE *log,
                                               bool (*cancel)(void *ctx), void *cancel_ctx,
                                               bool *unreachable, struct cc_error *err)
{
    *unreachable = false;
    struct cc_source_stream *s = calloc(1, sizeof(*s));
    if (s)
        s->url = strdup(url);
    if (!s || !s->url) {
        cc_error_set(err, "%s: out of memory opening a stream", url);
        cc_source_stream_destroy(s);
        return NULL;
    }
    s->timeout_ms = timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS;
    s->log = log;
    struct cc_av_options o = options(s);
    o.cancel = cancel;
    o.cancel_ctx = cancel_ctx;
    enum cc_av_status st = cc_av_open(url, &o, &s->av, err);
    if (st != CC_AV_OK) {
        *unreachable = st == CC_AV_UNREACHABLE || st == CC_AV_CANCELLED;
        cc_source_stream_destroy(s);
        return NULL;
    }
    s->fps = cc_av_fps(s->av);
    snprintf(s->desc, sizeof(s->desc), "%s", cc_av_describe(s->av));
    return s;
}

void cc_source_stream_destroy(struct cc_source_stream *s)
{
    if (!s)
        return;
    cc_source_stream_stop(s);
    cc_av_close(s->av);
    free(s->staging.data);
    free(s->url);
    free(s);
}

double cc_source_stream_fps(const struct cc_source_stream *s)
{
    return s->fps;
}

const char *cc_source_stream_describe(const struct cc_source_stream *s)
{
    return s->desc;
}

/* ---------------------------------------------------------------------------------------- */
/* The thread                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Sleeps ms in slices; false when the slot was closed meanwhile. */
static bool backoff_sleep(struct cc_frame_slot *slot, int ms)
{
    for (int left = ms; left > 0; left -= SLEEP_SLICE_MS) {
        if (cc_frame_slot_closed(slot))
            return false;
        int slice = left < SLEEP_SLICE_MS ? left : SLEEP_SLICE_MS;
        struct timespec ts = {0, (long)slice * 1000000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    return !cc_frame_slot_closed(slot);
}

/* After an outage: reconnects until it works (true) or the slot is closed (false). */
static bool reconnect(struct cc_source_stream *s, const char *why)
{
    int64_t lost = cc_now_ns();
    if (s->log)
        fprintf(s->log, "camclass: %s: stream lost (%s); reconnecting\n", s->url, why);
    int wait = BACKOFF_MIN_MS, tries = 0;
    for (;;) {
        if (!backoff_sleep(s->slot, wait))
            return false;
        tries++;
        struct cc_error err = {{0}};
        struct cc_av_options o = options(s);
        enum cc_av_status st = cc_av_open(s->url, &o, &s->av, &err);
        if (st == CC_AV_OK)
            break;
        if (st == CC_AV_CANCELLED)
            return false;
        wait = wait * 2 < BACKOFF_MAX_MS ? wait * 2 : BACKOFF_MAX_MS;
    }
    if (s->log)
        fprintf(s->log, "camclass: %s: reconnected after %.1f s (%d attempt%s)\n", s->url,
                (double)(cc_now_ns() - lost) / 1e9, tries, tries == 1 ? "" : "s");
    return true;
}

static void *stream_main(void *arg)
{
    struct cc_source_stream *s = arg;
    struct cc_frame *st = &s->staging;
    for (;;) {
        struct cc_error err = {{0}};
        int r = cc_av_read(s->av, st, true, &err);
        if (cc_frame_slot_closed(s->slot))
            break;
        if (r < 0 && cc_av_last_status(s->av) == CC_AV_BAD_FRAME) {
            // A frame camclass cannot take (over the pixel limit, not convertible, no memory
            // for it): the same would come after a reconnect. The run ends with the line, as
            // with a camera that fails; a service restarted then gets it at open (exit 2).
            cc_frame_slot_close(s->slot, err.msg);
            break;
        }
        if (r != 1) {
            // Ended, failed or silent for the timeout: drop the connection and make a new one.
            cc_av_close(s->av);
            s->av = NULL;
            const char *why = r == 0 ? "the server ended it" : err.msg;
            size_t n = strlen(s->url);
            if (strncmp(why, s->url, n) == 0 && why[n] == ':') // "URL: " is said once
                why += n + 2;
            if (!reconnect(s, why))
                break;
            continue;
        }
        st->sequence = s->sequence++;
        if (!cc_frame_slot_put_copy(s->slot, st))
            break;
    }
    return NULL;
}

bool cc_source_stream_start(struct cc_source_stream *s, struct cc_frame_slot *slot,
                            struct cc_error *err)
{
    if (s->running)
        return cc_error_set(err, "%s: the stream is already running", s->url);
    if (!s->av)
        return cc_error_set(err, "%s: the stream was stopped; open it again", s->url);
    s->slot = slot;
    cc_av_set_cancel(s->av, slot_closed, slot); // the connection made at open goes on
    // As the file source: the stop and reopen signals go to the main thread only.
    int rc = cc_frame_slot_start_producer(&s->thread, stream_main, s);
    if (rc != 0) {
        cc_av_set_cancel(s->av, NULL, NULL); // stop will not run: the slot may go before us
        s->slot = NULL;
        return cc_error_set(err, "%s: cannot start the stream thread: %s", s->url, strerror(rc));
    }
    s->running = true;
    return true;
}

void cc_source_stream_stop(struct cc_source_stream *s)
{
    if (!s || !s->running)
        return;
    cc_frame_slot_close(s->slot, NULL);
    pthread_join(s->thread, NULL);
    s->running = false;
    // The slot is the pipeline's, which may be destroyed before this source: closing the
    // stream later polls the cancel callback (RTSP's TEARDOWN does), which must not reach it.
    // Closing is then bounded by the stream's timeout alone.
    if (s->av)
        cc_av_set_cancel(s->av, NULL, NULL);
    s->slot = NULL;
}
