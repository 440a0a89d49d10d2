/* camclass — the live-stream source (app/input/source_stream.c) against a real MPEG-TS served
 * over TCP by a thread of this test (suite 'unit'): what open answers for a refused port, a
 * silent server, a cancel and an answer that is no video; describe() and fps; frames in the
 * slot with sequence numbers that keep counting over a reconnect; the outage and reconnect
 * lines; stop while the thread waits for a connection's data or backs off.
 *
 * The stream is mpeg2video, intra only, written with libavformat into memory; frame i is one
 * flat grey (luma LUMA(i)), so a frame taken from the slot tells which frame it is. The server
 * hands each connection the whole stream when the test allows it and closes it when the test
 * allows it, so every step is reached by waiting for a line or a frame, never for a time.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "source_stream.h"
#include "testutil.h"

enum { W = 64, H = 48, FPS = 25, FRAMES = 30, POISON = 0xA5 };
#define LUMA(i) (40 + 5 * (i)) // frame i's grey; 16..235 for every i < FRAMES

/* ---- the stream ---------------------------------------------------------------------- */

/* Encodes and muxes FRAMES frames into ctx's dynamic buffer; false on any failure. */
static bool encode_frames(AVFormatContext *oc, AVCodecContext *enc, AVStream *st)
{
    AVFrame *f = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    bool ok = f && pkt;
    if (ok) {
        f->format = AV_PIX_FMT_YUV420P;
        f->width = W;
        f->height = H;
        ok = av_frame_get_buffer(f, 0) >= 0;
    }
    for (int i = 0; ok && i <= FRAMES; i++) {
        if (i < FRAMES) { // FRAMES: the flush
            ok = av_frame_make_writable(f) >= 0;
            for (int y = 0; ok && y < H; y++)
                memset(f->data[0] + y * f->linesize[0], LUMA(i), W);
            for (int y = 0; ok && y < H / 2; y++) {
                memset(f->data[1] + y * f->linesize[1], 128, W / 2);
                memset(f->data[2] + y * f->linesize[2], 128, W / 2);
            }
            f->pts = i;
        }
        ok = ok && avcodec_send_frame(enc, i < FRAMES ? f : NULL) >= 0;
        while (ok && avcodec_receive_packet(enc, pkt) >= 0) {
            av_packet_rescale_ts(pkt, enc->time_base, st->time_base);
            pkt->stream_index = st->index;
            ok = av_interleaved_write_frame(oc, pkt) >= 0;
        }
    }
    av_packet_free(&pkt);
    av_frame_free(&f);
    return ok;
}

/* The test stream as MPEG-TS bytes (av_malloc'd, av_free them), size in *size; NULL with a
 * failed check when this libavcodec cannot write it. */
static uint8_t *make_stream(size_t *size)
{
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MPEG2VIDEO);
    AVFormatContext *oc = NULL;
    avformat_alloc_output_context2(&oc, NULL, "mpegts", NULL);
    AVCodecContext *enc = codec ? avcodec_alloc_context3(codec) : NULL;
    AVStream *st = oc ? avformat_new_stream(oc, NULL) : NULL;
    uint8_t *out = NULL;
    bool ok = enc && st && avio_open_dyn_buf(&oc->pb) >= 0;
    if (ok) {
        enc->width = W;
        enc->height = H;
        enc->pix_fmt = AV_PIX_FMT_YUV420P;
        enc->time_base = (AVRational){1, FPS};
        enc->framerate = (AVRational){FPS, 1};
        enc->gop_size = 0; // intra only: every frame decodes on its own
        enc->max_b_frames = 0;
        enc->bit_rate = 2000000;
        ok = avcodec_open2(enc, codec, NULL) >= 0 &&
             avcodec_parameters_from_context(st->codecpar, enc) >= 0;
        st->time_base = enc->time_base;
        ok = ok && avformat_write_header(oc, NULL) >= 0 && encode_frames(oc, enc, st) &&
             av_write_trailer(oc) >= 0;
    }
    if (oc && oc->pb) {
        int n = avio_close_dyn_buf(oc->pb, &out);
        oc->pb = NULL;
        *size = n > 0 ? (size_t)n : 0;
    }
    avcodec_free_context(&enc);
    avformat_free_context(oc);
    if (!CHECKF(ok && out, "cannot write an mpeg2video MPEG-TS with this libavcodec")) {
        av_free(out);
        return NULL;
    }
    return out;
}

/* ---- the server ---------------------------------------------------------------------- */

/* A TCP server on 127.0.0.1 serving connections one at a time from its own thread. Connection
 * k (from 1) gets the payload once send_upto >= k and is closed once close_upto >= k; after
 * connection `last` the listening socket is closed first, so that reconnects are refused.
 * Locking: the fields below the mutex are read and written under it. */
struct server {
    int port;
    const uint8_t *payload; // (size) not owned
    size_t size;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int listen_fd; // -1 once closed
    int accepted;  // connections accepted so far
    int send_upto, close_upto, last;
    bool quit;
};

static void send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) { // the client may have given up: EPIPE ends it
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Waits (locked) until cond_value >= k or quit. */
static void wait_for(struct server *sv, const int *value, int k)
{
    while (!sv->quit && *value < k)
        pthread_cond_wait(&sv->cond, &sv->lock);
}

static void *server_main(void *arg)
{
    struct server *sv = arg;
    pthread_mutex_lock(&sv->lock);
    while (!sv->quit && sv->listen_fd >= 0) {
        int fd = sv->listen_fd;
        pthread_mutex_unlock(&sv->lock);
        int c = accept(fd, NULL, NULL);
        pthread_mutex_lock(&sv->lock);
        if (c < 0)
            break; // shut down by server_destroy
        int k = ++sv->accepted;
        pthread_cond_broadcast(&sv->cond);
        wait_for(sv, &sv->send_upto, k);
        if (!sv->quit) {
            pthread_mutex_unlock(&sv->lock);
            send_all(c, sv->payload, sv->size);
            pthread_mutex_lock(&sv->lock);
        }
        wait_for(sv, &sv->close_upto, k);
        if (k == sv->last) {
            close(sv->listen_fd);
            sv->listen_fd = -1;
        }
        close(c);
    }
    pthread_mutex_unlock(&sv->lock);
    return NULL;
}

/* A socket bound to a free port of 127.0.0.1 (*port), listening when listen_too. */
static int bound_socket(int *port, bool listen_too)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &len) == 0 &&
              (!listen_too || listen(fd, 4) == 0);
    if (!CHECKF(ok, "cannot make a socket on 127.0.0.1: %s", strerror(errno))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static bool server_start(struct server *sv, const uint8_t *payload, size_t size, int last)
{
    *sv = (struct server){.payload = payload, .size = size, .last = last, .send_upto = 1};
    pthread_mutex_init(&sv->lock, NULL);
    pthread_cond_init(&sv->cond, NULL);
    sv->listen_fd = bound_socket(&sv->port, true);
    return sv->listen_fd >= 0 && CHECK(pthread_create(&sv->thread, NULL, server_main, sv) == 0);
}

static void server_set(struct server *sv, int *field, int value)
{
    pthread_mutex_lock(&sv->lock);
    *field = value;
    pthread_cond_broadcast(&sv->cond);
    pthread_mutex_unlock(&sv->lock);
}

/* Waits until k connections were accepted. */
static void server_wait_accepted(struct server *sv, int k)
{
    pthread_mutex_lock(&sv->lock);
    while (sv->accepted < k)
        pthread_cond_wait(&sv->cond, &sv->lock);
    pthread_mutex_unlock(&sv->lock);
}

static void server_stop(struct server *sv)
{
    pthread_mutex_lock(&sv->lock);
    sv->quit = true;
    pthread_cond_broadcast(&sv->cond);
    if (sv->listen_fd >= 0)
        shutdown(sv->listen_fd, SHUT_RDWR); // wakes accept
    pthread_mutex_unlock(&sv->lock);
    pthread_join(sv->thread, NULL);
    if (sv->listen_fd >= 0)
        close(sv->listen_fd);
    pthread_cond_destroy(&sv->cond);
    pthread_mutex_destroy(&sv->lock);
}

static void url_of(char *url, size_t size, int port)
{
    snprintf(url, size, "tcp://127.0.0.1:%d", port);
}

/* ---- the log and the frames ---------------------------------------------------------- */

/* The stream's log: a pipe, line-buffered, read here line by line (blocking). */
struct log_pipe {
    FILE *w;
    int r;
};

static bool log_open(struct log_pipe *lp)
{
    int fds[2];
    if (!CHECK(pipe(fds) == 0))
        return false;
    lp->r = fds[0];
    lp->w = fdopen(fds[1], "w");
    if (!CHECK(lp->w != NULL))
        return false;
    setvbuf(lp->w, NULL, _IOLBF, 0);
    return true;
}

/* Reads the next line (without '\n') into line; false at the end of the pipe. */
static bool log_line(struct log_pipe *lp, char *line, size_t size)
{
    memset(line, POISON, size);
    size_t n = 0;
    char c;
    while (read(lp->r, &c, 1) == 1) {
        if (c == '\n') {
            line[n] = '\0';
            return true;
        }
        if (n + 1 < size)
            line[n++] = c;
    }
    line[n] = '\0';
    return false;
}

static void log_close(struct log_pipe *lp)
{
    if (lp->w)
        fclose(lp->w);
    if (lp->r >= 0)
        close(lp->r);
}

/* Checks that the next log line is "camclass: URL: " head, exactly when tail is NULL, else
 * followed by anything and then tail. */
static void expect_line(struct log_pipe *lp, const char *url, const char *head, const char *tail)
{
    char line[512], want[512];
    snprintf(want, sizeof(want), "camclass: %s: %s", url, head);
    bool got = log_line(lp, line, sizeof(line));
    size_t n = strlen(line), t = tail ? strlen(tail) : 0;
    bool ok = got && (tail ? strncmp(line, want, strlen(want)) == 0 && n >= strlen(want) + t &&
                                 strcmp(line + n - t, tail) == 0
                           : strcmp(line, want) == 0);
    CHECKF(ok, "log line \"%s\", want \"%s%s%s\"", got ? line : "(end of the log)", want,
           tail ? "..." : "", tail ? tail : "");
}

/* Checks a frame from the slot: NV12 W x H, every luma byte LUMA(index) (±2, the codec's
 * rounding) and every chroma byte grey, where index is the frame's place in the stream
 * (sequence modulo FRAMES: each connection sends the stream from its start). Then poisons
 * it, so that a pooled frame handed out again without being fully written fails this. */
static void check_frame(struct cc_frame *f)
{
    int want = LUMA((int)(f->sequence % FRAMES));
    if (!CHECKF(f->format == CC_PIX_NV12 && f->width == W && f->height == H && f->stride >= W &&
                    f->size >= (size_t)f->stride * H * 3 / 2,
                "frame %llu: %s %dx%d stride %d size %zu, want NV12 %dx%d",
                (unsigned long long)f->sequence, cc_pixfmt_name(f->format), f->width, f->height,
                f->stride, f->size, W, H))
        return;
    int bad = 0;
    for (int y = 0; y < H * 3 / 2; y++)
        for (int x = 0; x < W; x++) {
            int v = f->data[(size_t)y * f->stride + x], expect = y < H ? want : 128;
            bad += v < expect - 2 || v > expect + 2;
        }
    CHECKF(bad == 0, "frame %llu: %d bytes differ from luma %d, chroma 128",
           (unsigned long long)f->sequence, bad, want);
    memset(f->data, POISON, f->size);
}

/* Takes frames (waiting for each) until one with sequence >= until; checks each one and that
 * sequence numbers increase from *last (-1: none yet). */
static void take_until(struct cc_frame_slot *slot, long long until, long long *last)
{
    while (*last < until) {
        struct cc_frame *f = NULL;
        struct cc_error err;
        memset(&err, POISON, sizeof(err));
        enum cc_slot_status st = cc_frame_slot_take(slot, -1, &f, &err);
        if (!CHECKF(st == CC_SLOT_FRAME && f, "take: status %d (%.200s)", (int)st,
                    st == CC_SLOT_CLOSED ? err.msg : ""))
            return;
        bool increases = CHECKF((long long)f->sequence > *last, "sequence %llu after %lld",
                                (unsigned long long)f->sequence, *last);
        *last = (long long)f->sequence;
        check_frame(f);
        cc_frame_slot_release(slot, f);
        if (!increases)
            return; // it may never reach until
    }
}

/* The frame waiting in the slot now (none: a failed check) has sequence `want`. */
static void expect_waiting(struct cc_frame_slot *slot, long long want, long long *last)
{
    struct cc_frame *f = NULL;
    struct cc_error err;
    memset(&err, POISON, sizeof(err));
    enum cc_slot_status st = cc_frame_slot_take(slot, 0, &f, &err);
    if (!CHECKF(st == CC_SLOT_FRAME && f, "no frame waits in the slot (status %d)", (int)st))
        return;
    CHECKF((long long)f->sequence == want, "waiting frame has sequence %llu, want %lld",
           (unsigned long long)f->sequence, want);
    *last = (long long)f->sequence;
    check_frame(f);
    cc_frame_slot_release(slot, f);
}

/* ---- open's answers ------------------------------------------------------------------ */

/* Opens url and checks that it fails, with *unreachable == want_unreachable and an error line
 * that starts with the URL and contains needle. */
static void expect_open_fails(const char *url, int timeout_ms, bool (*cancel)(void *), bool want,
                              const char *needle)
{
    struct cc_error err;
    memset(&err, POISON, sizeof(err));
    bool unreachable = !want;
    struct cc_source_stream *s =
        cc_source_stream_open(url, timeout_ms, NULL, cancel, NULL, &unreachable, &err);
    CHECKF(s == NULL, "%s: opened", url);
    cc_source_stream_destroy(s);
    bool line = memchr(err.msg, '\0', sizeof(err.msg)) && !strchr(err.msg, '\n');
    CHECKF(line && strncmp(err.msg, url, strlen(url)) == 0 && strstr(err.msg, needle),
           "%s: error \"%.300s\", want the URL and \"%s\"", url, line ? err.msg : "(no line)",
           needle);
    CHECKF(unreachable == want, "%s: unreachable %d, want %d (%.300s)", url, unreachable, want,
           line ? err.msg : "");
}

static bool always(void *ctx)
{
    (void)ctx;
    return true;
}

static void test_open_errors(void)
{
    char url[64];
    int port, fd = bound_socket(&port, false); // bound, not listening: connections refused
    url_of(url, sizeof(url), port);
    expect_open_fails(url, 5000, NULL, true, "Connection refused");
    if (fd >= 0)
        close(fd);

    // Listening, never accepted: the handshake completes in the kernel, no byte comes.
    fd = bound_socket(&port, true);
    url_of(url, sizeof(url), port);
    expect_open_fails(url, 1000, NULL, true, "no answer for 1 s (timed out)");
    expect_open_fails(url, 500, NULL, true, "no answer for 0.5 s (timed out)");
    expect_open_fails(url, 60000, always, true, ": stopped");
    if (fd >= 0)
        close(fd);

    // An answer, but no video: bytes no demuxer takes.
    uint8_t junk[65536];
    struct tu_rng rng;
    tu_rng_seed(&rng, 25);
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)tu_rng_u32(&rng);
    struct server sv;
    if (server_start(&sv, junk, sizeof(junk), 0)) {
        server_set(&sv, &sv.close_upto, 1000);
        server_set(&sv, &sv.send_upto, 1000);
        url_of(url, sizeof(url), sv.port);
        expect_open_fails(url, 5000, NULL, false, "Invalid data");
        server_stop(&sv);
    }
}

/* ---- the running stream -------------------------------------------------------------- */

/* Opens url (the server sends connection 1) with log and checks what it says about it. The
 * timeout is an hour: a stop that waited for it would hold the test until meson ends it. */
static struct cc_source_stream *open_stream(const char *url, struct log_pipe *lp)
{
    struct cc_error err;
    memset(&err, POISON, sizeof(err));
    bool unreachable = true;
    struct cc_source_stream *s =
        cc_source_stream_open(url, 3600 * 1000, lp->w, NULL, NULL, &unreachable, &err);
    if (!CHECKF(s != NULL, "%s: %.300s", url, err.msg))
        return NULL;
    CHECK(!unreachable);
    char want[64];
    snprintf(want, sizeof(want), "mpeg2video %dx%d %d fps (mpegts)", W, H, FPS);
    CHECKF(strcmp(cc_source_stream_describe(s), want) == 0, "describe \"%s\", want \"%s\"",
           cc_source_stream_describe(s), want);
    CHECKF(cc_source_stream_fps(s) == FPS, "fps %g, want %d", cc_source_stream_fps(s), FPS);
    return s;
}

/* What a running-stream test holds: the server, the log, the slot, the stream. */
struct fixture {
    struct server sv;
    struct log_pipe lp;
    struct cc_frame_slot *slot;
    struct cc_source_stream *s;
    char url[64];
    bool serving;
};

/* Starts a server of the stream (see struct server for last), opens it and starts the
 * stream's thread; false, with a failed check, when something did not (fixture_finish then
 * frees what was made). */
static bool fixture_start(struct fixture *fx, const uint8_t *ts, size_t size, int last)
{
    *fx = (struct fixture){.lp = {NULL, -1}};
    struct cc_error err;
    memset(&err, POISON, sizeof(err));
    fx->slot = cc_frame_slot_create(1, &err);
    if (!CHECK(fx->slot) || !log_open(&fx->lp) || !server_start(&fx->sv, ts, size, last))
        return false;
    fx->serving = true;
    url_of(fx->url, sizeof(fx->url), fx->sv.port);
    fx->s = open_stream(fx->url, &fx->lp);
    return fx->s && CHECKF(cc_source_stream_start(fx->s, fx->slot, &err), "start: %.300s", err.msg);
}

/* Frees it all, and checks that the log holds no line more. */
static void fixture_finish(struct fixture *fx)
{
    cc_source_stream_destroy(fx->s);
    if (fx->serving)
        server_stop(&fx->sv);
    if (fx->lp.w) {
        fclose(fx->lp.w);
        fx->lp.w = NULL;
        char line[512];
        CHECKF(!log_line(&fx->lp, line, sizeof(line)), "more in the log: \"%s\"", line);
    }
    log_close(&fx->lp);
    cc_frame_slot_destroy(fx->slot);
}

/* Two connections' frames, the outage and reconnect lines between them, then an outage with
 * the server gone: stop ends the thread while it backs off; start again says it was stopped. */
static void test_reconnect(const uint8_t *ts, size_t size)
{
    struct fixture fx;
    if (fixture_start(&fx, ts, size, 2)) {
        struct server *sv = &fx.sv;
        const char *lost = "stream lost (the server ended it); reconnecting";
        long long last = -1;
        take_until(fx.slot, FRAMES / 2, &last); // connection 1 sent it all and stays open
        server_set(sv, &sv->close_upto, 1);
        expect_line(&fx.lp, fx.url, lost, NULL);
        expect_waiting(fx.slot, FRAMES - 1, &last); // every frame, the last at the stream's end
        server_set(sv, &sv->send_upto, 2);
        expect_line(&fx.lp, fx.url, "reconnected after ", " s (1 attempt)");
        take_until(fx.slot, FRAMES + FRAMES / 2, &last);
        server_set(sv, &sv->close_upto, 2); // and stops listening: reconnects are refused
        expect_line(&fx.lp, fx.url, lost, NULL);
        expect_waiting(fx.slot, 2 * FRAMES - 1, &last);
        cc_source_stream_stop(fx.s); // returns while the thread backs off
        CHECK(cc_frame_slot_closed(fx.slot));
        struct cc_error err;
        memset(&err, POISON, sizeof(err));
        CHECK(!cc_source_stream_start(fx.s, fx.slot, &err));
        CHECKF(strstr(err.msg, "stopped; open it again"), "start after stop: %.300s", err.msg);
    }
    fixture_finish(&fx);
}

/* An outage, then a server that accepts the reconnect and sends nothing: stop ends the thread
 * while it waits in the connection's open (the timeout is far off), with no more log lines. */
static void test_stop_while_connecting(const uint8_t *ts, size_t size)
{
    struct fixture fx;
    if (fixture_start(&fx, ts, size, 0)) {
        long long last = -1;
        take_until(fx.slot, 0, &last);
        server_set(&fx.sv, &fx.sv.close_upto, 1);
        expect_line(&fx.lp, fx.url, "stream lost (the server ended it); reconnecting", NULL);
        server_wait_accepted(&fx.sv, 2); // the reconnect waits for connection 2's first bytes
        cc_source_stream_stop(fx.s);     // returns: the slot's close cancels the open
        CHECK(cc_frame_slot_closed(fx.slot));
    }
    fixture_finish(&fx);
}

int main(void)
{
    test_open_errors();
    size_t size = 0;
    uint8_t *ts = make_stream(&size);
    if (ts) {
        test_reconnect(ts, size);
        test_stop_while_connecting(ts, size);
    }
    av_free(ts);
    return tu_exit_code();
}
