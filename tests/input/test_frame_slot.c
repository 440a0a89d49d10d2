/* camclass — tests of the latest-frame-wins slot (suite 'unit').
 *
 * Threads: the producer threads here never call CHECK (testutil is single-threaded); they
 * record what they saw in their own struct, and main checks it after joining.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame_slot.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

// One producer thread: puts n frames numbered 0..n-1, one every period_us, then closes.
struct producer {
    struct cc_frame_slot *slot;
    int n;
    long period_us;
    const char *close_msg;
    bool lockstep; // wait until the consumer took frame i-1 before making frame i
    // Results, read by main after join.
    int acquired, failed;
};

static void *producer_main(void *arg)
{
    struct producer *p = arg;
    for (int i = 0; i < p->n; i++) {
        struct cc_error err = {""};
        // A consumer that keeps up, whatever the machine's load: never get ahead of it.
        for (int64_t t0 = now_ns(); p->lockstep && now_ns() - t0 < 5000000000;) {
            if (cc_frame_slot_get_stats(p->slot).taken >= (uint64_t)i)
                break;
            sleep_us(50);
        }
        size_t bytes = 64 + (size_t)(i % 7) * 100; // sizes vary: the buffer must grow and keep
        struct cc_frame *f = cc_frame_slot_acquire(p->slot, bytes, &err);
        if (!f) {
            p->failed++;
            break;
        }
        p->acquired++;
        f->format = CC_PIX_GREY;
        f->width = (int)bytes;
        f->height = 1;
        f->stride = (int)bytes;
        f->size = bytes;
        memset(f->data, i & 0xff, bytes);
        f->sequence = (uint64_t)i;
        f->timestamp_ns = now_ns();
        cc_frame_slot_put(p->slot, f);
        if (p->period_us)
            sleep_us(p->period_us);
    }
    cc_frame_slot_close(p->slot, p->close_msg);
    return NULL;
}

// Consumes until closed; checks order and contents; returns the number of frames taken.
static int consume(struct cc_frame_slot *slot, long work_us, bool *ordered, bool *intact,
                   char *close_msg, size_t close_len)
{
    int taken = 0;
    int64_t last = -1;
    *ordered = *intact = true;
    for (;;) {
        struct cc_frame *f;
        struct cc_error err = {""};
        enum cc_slot_status st = cc_frame_slot_take(slot, 5000, &f, &err);
        if (st == CC_SLOT_CLOSED) {
            snprintf(close_msg, close_len, "%s", err.msg);
            break;
        }
        if (st == CC_SLOT_TIMEOUT) {
            snprintf(close_msg, close_len, "timeout");
            break;
        }
        taken++;
        if ((int64_t)f->sequence <= last)
            *ordered = false;
        last = (int64_t)f->sequence;
        if (f->size != (size_t)f->width || f->data[0] != (f->sequence & 0xff) ||
            f->data[f->size - 1] != (f->sequence & 0xff))
            *intact = false;
        if (work_us)
            sleep_us(work_us);
        cc_frame_slot_release(slot, f);
    }
    return taken;
}

/* ---------------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------------- */

// A producer much faster than the consumer: frames are dropped and counted, order holds.
static void test_slow_consumer(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    CHECKF(slot, "create: %s", err.msg);
    struct producer p = {.slot = slot, .n = 400, .period_us = 100};
    pthread_t t;
    pthread_create(&t, NULL, producer_main, &p);
    bool ordered, intact;
    char msg[512];
    int taken = consume(slot, 2000, &ordered, &intact, msg, sizeof(msg));
    pthread_join(t, NULL);
    struct cc_frame_slot_stats s = cc_frame_slot_get_stats(slot);
    printf("slow consumer: put %llu taken %llu dropped %llu\n", (unsigned long long)s.put,
           (unsigned long long)s.taken, (unsigned long long)s.dropped);
    CHECK(p.acquired == 400 && p.failed == 0);
    CHECK(ordered);
    CHECK(intact);
    CHECKF(strcmp(msg, "") == 0, "close message at end of stream: '%s'", msg);
    CHECK(s.put == 400);
    CHECK(s.taken == (uint64_t)taken);
    CHECKF(s.dropped > 0 && s.taken < 400, "dropped %llu", (unsigned long long)s.dropped);
    CHECKF(s.put == s.taken + s.dropped, "put %llu != taken + dropped", (unsigned long long)s.put);
    cc_frame_slot_destroy(slot);
}

// A consumer that keeps up with the producer: nothing is lost, every put wakes the taker.
static void test_fast_consumer(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct producer p = {.slot = slot, .n = 200, .lockstep = true};
    pthread_t t;
    pthread_create(&t, NULL, producer_main, &p);
    bool ordered, intact;
    char msg[512];
    int taken = consume(slot, 0, &ordered, &intact, msg, sizeof(msg));
    pthread_join(t, NULL);
    struct cc_frame_slot_stats s = cc_frame_slot_get_stats(slot);
    CHECKF(taken == 200, "taken %d of 200", taken);
    CHECK(s.dropped == 0);
    CHECK(ordered && intact);
    cc_frame_slot_destroy(slot);
}

// The last frame put before close is still delivered; the error text comes through.
static void test_close_message(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct producer p = {.slot = slot, .n = 3, .close_msg = "/dev/video0: unplugged"};
    producer_main(&p); // same thread: three puts, then close
    struct cc_frame *f;
    CHECK(cc_frame_slot_take(slot, 0, &f, &err) == CC_SLOT_FRAME);
    CHECK(f && f->sequence == 2);
    cc_frame_slot_release(slot, f);
    CHECK(cc_frame_slot_take(slot, 0, &f, &err) == CC_SLOT_CLOSED);
    CHECK(f == NULL);
    CHECKF(strcmp(err.msg, "/dev/video0: unplugged") == 0, "message '%s'", err.msg);
    CHECK(cc_frame_slot_acquire(slot, 16, &err) == NULL);
    struct cc_frame_slot_stats s = cc_frame_slot_get_stats(slot);
    CHECK(s.put == 3 && s.taken == 1 && s.dropped == 2);
    cc_frame_slot_destroy(slot);
}

// Take with a timeout and nothing coming: times out near the asked time.
static void test_timeout(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct cc_frame *f = (struct cc_frame *)1;
    int64_t t0 = now_ns();
    CHECK(cc_frame_slot_take(slot, 50, &f, &err) == CC_SLOT_TIMEOUT);
    double ms = (double)(now_ns() - t0) / 1e6;
    CHECKF(ms >= 49 && ms < 10000, "timeout took %.1f ms", ms); // not 50 s: the unit
    CHECK(f == NULL);
    CHECK(cc_frame_slot_take(slot, 0, &f, &err) == CC_SLOT_TIMEOUT);
    cc_frame_slot_destroy(slot);
}

// close from another thread wakes a taker blocked without timeout. In this and the next two
// tests the clock starts before the other thread does (it sleeps 50 ms first): a main thread
// that a loaded machine delays past those 50 ms then finds the event already there, and still
// measures at least 50 ms. The upper bounds are for a taker never woken, not speed checks.
struct closer {
    struct cc_frame_slot *slot;
};
static void *closer_main(void *arg)
{
    struct closer *c = arg;
    sleep_us(50000);
    cc_frame_slot_close(c->slot, "stop");
    return NULL;
}

static void test_close_wakes_taker(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct closer c = {slot};
    pthread_t t;
    int64_t t0 = now_ns();
    pthread_create(&t, NULL, closer_main, &c);
    struct cc_frame *f;
    enum cc_slot_status st = cc_frame_slot_take(slot, -1, &f, &err);
    double ms = (double)(now_ns() - t0) / 1e6;
    pthread_join(t, NULL);
    CHECK(st == CC_SLOT_CLOSED);
    CHECKF(strcmp(err.msg, "stop") == 0, "message '%s'", err.msg);
    CHECKF(ms >= 40 && ms < 10000, "woke after %.1f ms", ms);
    CHECK(cc_frame_slot_closed(slot));
    cc_frame_slot_destroy(slot);
}

// kick (the inference thread's HTTP requests, pipeline.h): wakes a taker blocked for 30 s at
// once with TIMEOUT; a kick with no taker makes the next take return at once, only that one;
// a waiting frame still goes out first.
static void *kicker_main(void *arg)
{
    struct closer *c = arg;
    sleep_us(50000);
    cc_frame_slot_kick(c->slot);
    return NULL;
}

static void test_kick(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct closer c = {slot};
    pthread_t t;
    int64_t t0 = now_ns();
    pthread_create(&t, NULL, kicker_main, &c);
    struct cc_frame *f;
    enum cc_slot_status st = cc_frame_slot_take(slot, 30000, &f, &err);
    double ms = (double)(now_ns() - t0) / 1e6;
    pthread_join(t, NULL);
    CHECK(st == CC_SLOT_TIMEOUT && f == NULL);
    CHECKF(ms >= 40 && ms < 10000, "kicked after %.1f ms", ms);
    cc_frame_slot_kick(slot); // no taker: the next take returns at once
    t0 = now_ns();
    CHECK(cc_frame_slot_take(slot, 30000, &f, &err) == CC_SLOT_TIMEOUT);
    CHECKF((double)(now_ns() - t0) / 1e6 < 10000, "a pending kick");
    t0 = now_ns();
    CHECK(cc_frame_slot_take(slot, 50, &f, &err) == CC_SLOT_TIMEOUT); // only one
    CHECKF((double)(now_ns() - t0) / 1e6 >= 49, "the kick was used up");
    struct cc_frame *p = cc_frame_slot_acquire(slot, 16, &err);
    cc_frame_slot_put(slot, p);
    cc_frame_slot_kick(slot);
    CHECK(cc_frame_slot_take(slot, 0, &f, &err) == CC_SLOT_FRAME && f);
    cc_frame_slot_release(slot, f);
    cc_frame_slot_destroy(slot);
}

// wait_taken: a producer that must not drop frames blocks until the consumer took the waiting
// frame (woken by take, not by polling), returns at once when nothing waits, and returns false
// once the slot is closed.
struct taker {
    struct cc_frame_slot *slot;
    enum cc_slot_status status;
    struct cc_frame *frame;
};
static void *taker_main(void *arg)
{
    struct taker *t = arg;
    struct cc_error err = {""};
    sleep_us(50000);
    t->status = cc_frame_slot_take(t->slot, 2000, &t->frame, &err);
    return NULL;
}

static void test_wait_taken(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    CHECK(cc_frame_slot_wait_taken(slot)); // nothing waits: returns at once
    struct cc_frame *f = cc_frame_slot_acquire(slot, 16, &err);
    CHECK(f != NULL && cc_frame_slot_put(slot, f));
    struct taker tk = {slot, CC_SLOT_TIMEOUT, NULL};
    pthread_t t;
    int64_t t0 = now_ns();
    pthread_create(&t, NULL, taker_main, &tk);
    bool open = cc_frame_slot_wait_taken(slot);
    double ms = (double)(now_ns() - t0) / 1e6;
    pthread_join(t, NULL);
    CHECK(open);
    CHECK(tk.status == CC_SLOT_FRAME && tk.frame == f);
    CHECKF(ms >= 40 && ms < 10000, "wait_taken returned after %.1f ms", ms);
    struct cc_frame_slot_stats st = cc_frame_slot_get_stats(slot);
    CHECK(st.put == 1 && st.taken == 1 && st.dropped == 0);
    cc_frame_slot_release(slot, tk.frame);

    // A frame nobody takes: close releases the waiting producer with false.
    f = cc_frame_slot_acquire(slot, 16, &err);
    CHECK(f != NULL && cc_frame_slot_put(slot, f));
    struct closer c = {slot};
    pthread_create(&t, NULL, closer_main, &c);
    CHECK(!cc_frame_slot_wait_taken(slot));
    pthread_join(t, NULL);
    cc_frame_slot_destroy(slot);
}

// The pool is fixed: after warm-up, buffers are reused (no allocation per frame), and a
// consumer holding its declared frames never starves the producer.
static void test_recycling(void)
{
    struct cc_error err = {""};
    struct cc_frame_slot *slot = cc_frame_slot_create(2, &err);
    uint8_t *seen[16];
    int n_seen = 0;
    struct cc_frame *held[2];
    for (int i = 0; i < 2; i++) { // the consumer keeps two frames
        struct cc_frame *f = cc_frame_slot_acquire(slot, 1000, &err);
        CHECK(f != NULL);
        f->sequence = (uint64_t)i;
        cc_frame_slot_put(slot, f);
        CHECK(cc_frame_slot_take(slot, 0, &held[i], &err) == CC_SLOT_FRAME);
    }
    for (int i = 0; i < 100; i++) { // then the producer runs alone: never blocks, reuses
        struct cc_frame *f = cc_frame_slot_acquire(slot, 1000, &err);
        CHECK(f != NULL && f->capacity >= 1000);
        bool known = false;
        for (int k = 0; k < n_seen; k++)
            known |= seen[k] == f->data;
        if (!known && n_seen < 16)
            seen[n_seen++] = f->data;
        f->sequence = (uint64_t)(i + 2);
        cc_frame_slot_put(slot, f);
    }
    CHECKF(n_seen <= 2, "%d distinct buffers for the producer", n_seen);
    struct cc_frame *f;
    CHECK(cc_frame_slot_take(slot, 0, &f, &err) == CC_SLOT_FRAME && f->sequence == 101);
    cc_frame_slot_release(slot, f);
    cc_frame_slot_release(slot, held[0]);
    cc_frame_slot_release(slot, held[1]);
    cc_frame_slot_release(slot, NULL);
    struct cc_frame_slot_stats s = cc_frame_slot_get_stats(slot);
    CHECK(s.put == 102 && s.taken == 3 && s.dropped == 99);
    cc_frame_slot_destroy(slot);
    cc_frame_slot_destroy(NULL);
}

int main(void)
{
    test_slow_consumer();
    test_fast_consumer();
    test_close_message();
    test_timeout();
    test_close_wakes_taker();
    test_kick();
    test_wait_taken();
    test_recycling();
    return tu_exit_code();
}
