/* camclass — latest-frame-wins hand-over (see frame_slot.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frame_slot.h"
#include "clock.h"

/* ---------------------------------------------------------------------------------------------
 * The slot
 * ------------------------------------------------------------------------------------------- */

// Pool size: one frame being filled, one waiting, and what the consumer may hold.
#define PRODUCER_FRAMES 2

struct cc_frame_slot {
    pthread_mutex_t lock;
    pthread_cond_t changed; // signalled on put, take, release, discard and close
    // Everything below is guarded by lock.
    struct cc_frame *frames; // (n_frames) the pool, owned by the slot
    struct cc_frame **free;  // (n_frames) stack of frames nobody holds
    int n_frames, n_free;
    struct cc_frame *waiting; // the newest published frame, or NULL
    bool closed;
    bool kicked; // cc_frame_slot_kick: the next take returns CC_SLOT_TIMEOUT without waiting
    char close_msg[sizeof(((struct cc_error *)0)->msg)]; // "" for end of stream
    struct cc_frame_slot_stats stats;
};

struct cc_frame_slot *cc_frame_slot_create(int consumer_frames, struct cc_error *err)
{
    if (consumer_frames < 1)
        consumer_frames = 1;
    struct cc_frame_slot *slot = calloc(1, sizeof(*slot));
    if (!slot) {
        cc_error_set(err, "frame slot: out of memory");
        return NULL;
    }
    slot->n_frames = consumer_frames + PRODUCER_FRAMES;
    slot->frames = calloc((size_t)slot->n_frames, sizeof(*slot->frames));
    slot->free = calloc((size_t)slot->n_frames, sizeof(*slot->free));
    if (!slot->frames || !slot->free) {
        free(slot->frames);
        free(slot->free);
        free(slot);
        cc_error_set(err, "frame slot: out of memory");
        return NULL;
    }
    for (int i = 0; i < slot->n_frames; i++)
        slot->free[slot->n_free++] = &slot->frames[i];

    cc_cond_init_monotonic(&slot->changed); // timed waits: CLOCK_MONOTONIC
    pthread_mutex_init(&slot->lock, NULL);
    return slot;
}

void cc_frame_slot_destroy(struct cc_frame_slot *slot)
{
    if (!slot)
        return;
    for (int i = 0; i < slot->n_frames; i++)
        free(slot->frames[i].data);
    free(slot->frames);
    free(slot->free);
    pthread_cond_destroy(&slot->changed);
    pthread_mutex_destroy(&slot->lock);
    free(slot);
}

// Always called locked. Returns a frame to the free stack.
static void push_free(struct cc_frame_slot *slot, struct cc_frame *frame)
{
    if (slot->n_free < slot->n_frames)
        slot->free[slot->n_free++] = frame;
}

/* ---------------------------------------------------------------------------------------------
 * Producer side
 * ------------------------------------------------------------------------------------------- */

struct cc_frame *cc_frame_slot_acquire(struct cc_frame_slot *slot, size_t bytes,
                                       struct cc_error *err)
{
    pthread_mutex_lock(&slot->lock);
    struct cc_frame *frame = NULL;
    while (!slot->closed) {
        if (slot->n_free > 0) {
            frame = slot->free[--slot->n_free];
            break;
        }
        if (slot->waiting) { // pool empty: the stale waiting frame is the one to reuse
            frame = slot->waiting;
            slot->waiting = NULL;
            slot->stats.dropped++;
            break;
        }
        // The consumer holds more frames than it declared: wait for a release.
        pthread_cond_wait(&slot->changed, &slot->lock);
    }
    pthread_mutex_unlock(&slot->lock);
    if (!frame) {
        cc_error_set(err, "frame slot closed");
        return NULL;
    }

    // The frame is ours alone now; grow its buffer outside the lock.
    if (frame->capacity < bytes) {
        uint8_t *data = realloc(frame->data, bytes);
        if (!data) {
            cc_frame_slot_discard(slot, frame);
            cc_error_set(err, "frame slot: out of memory for a %zu-byte frame", bytes);
            return NULL;
        }
        frame->data = data;
        frame->capacity = bytes;
    }
    frame->size = 0;
    return frame;
}

bool cc_frame_slot_put(struct cc_frame_slot *slot, struct cc_frame *frame)
{
    pthread_mutex_lock(&slot->lock);
    bool ok = !slot->closed;
    if (ok) {
        if (slot->waiting) {
            push_free(slot, slot->waiting);
            slot->stats.dropped++;
        }
        slot->waiting = frame;
        slot->stats.put++;
    } else {
        push_free(slot, frame);
    }
    pthread_cond_broadcast(&slot->changed);
    pthread_mutex_unlock(&slot->lock);
    return ok;
}

void cc_frame_slot_discard(struct cc_frame_slot *slot, struct cc_frame *frame)
{
    if (!frame)
        return;
    pthread_mutex_lock(&slot->lock);
    push_free(slot, frame);
    pthread_cond_broadcast(&slot->changed);
    pthread_mutex_unlock(&slot->lock);
}

/* ---------------------------------------------------------------------------------------------
 * Either side
 * ------------------------------------------------------------------------------------------- */

void cc_frame_slot_close(struct cc_frame_slot *slot, const char *error_msg)
{
    pthread_mutex_lock(&slot->lock);
    if (!slot->closed) {
        slot->closed = true;
        snprintf(slot->close_msg, sizeof(slot->close_msg), "%s", error_msg ? error_msg : "");
    }
    pthread_cond_broadcast(&slot->changed);
    pthread_mutex_unlock(&slot->lock);
}

bool cc_frame_slot_closed(struct cc_frame_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    bool closed = slot->closed;
    pthread_mutex_unlock(&slot->lock);
    return closed;
}

/* ---------------------------------------------------------------------------------------------
 * Consumer side
 * ------------------------------------------------------------------------------------------- */

enum cc_slot_status cc_frame_slot_take(struct cc_frame_slot *slot, int timeout_ms,
                                       struct cc_frame **out, struct cc_error *err)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    if (timeout_ms > 0) {
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }

    enum cc_slot_status status;
    *out = NULL;
    pthread_mutex_lock(&slot->lock);
    for (;;) {
        if (slot->waiting) { // a waiting frame goes out even after close: it is the last one
            *out = slot->waiting;
            slot->waiting = NULL;
            slot->stats.taken++;
            status = CC_SLOT_FRAME;
            pthread_cond_broadcast(&slot->changed); // a producer may wait in wait_taken
            break;
        }
        if (slot->closed) {
            cc_error_set(err, "%s", slot->close_msg);
            status = CC_SLOT_CLOSED;
            break;
        }
        if (timeout_ms == 0 || slot->kicked) {
            slot->kicked = false;
            status = CC_SLOT_TIMEOUT;
            break;
        }
        if (timeout_ms < 0) {
            pthread_cond_wait(&slot->changed, &slot->lock);
        } else if (pthread_cond_timedwait(&slot->changed, &slot->lock, &deadline) == ETIMEDOUT) {
            // One last look: a frame may have arrived together with the timeout.
            if (!slot->waiting && !slot->closed) {
                status = CC_SLOT_TIMEOUT;
                break;
            }
        }
    }
    pthread_mutex_unlock(&slot->lock);
    return status;
}

void cc_frame_slot_kick(struct cc_frame_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    slot->kicked = true;
    pthread_cond_broadcast(&slot->changed);
    pthread_mutex_unlock(&slot->lock);
}

void cc_frame_slot_release(struct cc_frame_slot *slot, struct cc_frame *frame)
{
    cc_frame_slot_discard(slot, frame);
}

bool cc_frame_slot_wait_taken(struct cc_frame_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    while (!slot->closed && slot->waiting)
        pthread_cond_wait(&slot->changed, &slot->lock);
    bool open = !slot->closed;
    pthread_mutex_unlock(&slot->lock);
    return open;
}

struct cc_frame_slot_stats cc_frame_slot_get_stats(struct cc_frame_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    struct cc_frame_slot_stats stats = slot->stats;
    pthread_mutex_unlock(&slot->lock);
    return stats;
}

int cc_frame_slot_start_producer(pthread_t *thread, void *(*main_fn)(void *), void *arg)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(thread, NULL, main_fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

bool cc_frame_slot_put_copy(struct cc_frame_slot *slot, const struct cc_frame *src)
{
    struct cc_error err = {{0}};
    struct cc_frame *f = cc_frame_slot_acquire(slot, src->size, &err);
    if (!f) {
        cc_frame_slot_close(slot, err.msg); // no-op when closed; else out of memory
        return false;
    }
    memcpy(f->data, src->data, src->size);
    f->format = src->format;
    f->width = src->width;
    f->height = src->height;
    f->stride = src->stride;
    f->size = src->size;
    f->sequence = src->sequence;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    f->timestamp_ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
    return cc_frame_slot_put(slot, f);
}
