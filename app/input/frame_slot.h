/* camclass — latest-frame-wins hand-over of frames from one producer to one consumer.
 *
 * The producer (a capture or file-source thread) fills frames; the consumer (the inference
 * thread) always gets the newest one. Never more than one frame waits: putting a frame while
 * one waits drops the waiting one, and the drop is counted. Frames come from a small pool owned
 * by the slot, so steady-state streaming allocates nothing per frame.
 *
 * Typical use:
 *   producer:  while ((f = cc_frame_slot_acquire(slot, bytes, &err))) {
 *                  fill f; cc_frame_slot_put(slot, f);
 *              }
 *              cc_frame_slot_close(slot, NULL);               // end of stream (or an error text)
 *   consumer:  while (cc_frame_slot_take(slot, 1000, &f, &err) != CC_SLOT_CLOSED) {
 *                  if (f) { use f; cc_frame_slot_release(slot, f); }
 *              }
 *
 * Locking: every function takes the slot's mutex itself; any thread may call any function, but
 * the design assumes one producer and one consumer. Ownership of a frame moves with the pointer:
 * acquire gives it to the producer, put gives it back to the slot, take gives it to the consumer,
 * release gives it back to the slot. A frame pointer must not be used after it was handed back.
 */
#ifndef CC_FRAME_SLOT_H
#define CC_FRAME_SLOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "frame.h"

struct cc_frame_slot;

/* Creates a slot whose pool lets the consumer hold up to consumer_frames frames at once
 * (1 for the usual take/use/release loop). Returns NULL and fills err when out of memory. */
struct cc_frame_slot *cc_frame_slot_create(int consumer_frames, struct cc_error *err);

/* Frees the slot and every frame in its pool. Accepts NULL. Call only when neither thread uses
 * the slot any more (after joining the producer); frames still held by a caller are freed too. */
void cc_frame_slot_destroy(struct cc_frame_slot *slot);

/* ---- producer side ---- */

/* Gives the producer an empty frame whose data holds at least `bytes` bytes (grown with realloc
 * only when a larger size is asked than before). The producer owns it until put. Never blocks
 * for long: when the pool is empty the waiting frame is recycled (counted as a drop); it only
 * waits when the consumer holds more frames than it declared at create. Returns NULL when the
 * slot is closed (the consumer asked to stop: err gets "slot closed") or out of memory. */
struct cc_frame *cc_frame_slot_acquire(struct cc_frame_slot *slot, size_t bytes,
                                       struct cc_error *err);

/* Publishes a filled frame as the newest; a frame still waiting is dropped (back to the pool,
 * counted). Wakes a blocked taker. Ownership passes to the slot. Returns false (the frame is
 * recycled) when the slot is already closed. */
bool cc_frame_slot_put(struct cc_frame_slot *slot, struct cc_frame *frame);

/* Hands an acquired frame back unused (e.g. a read failed). Ownership passes to the slot. */
void cc_frame_slot_discard(struct cc_frame_slot *slot, struct cc_frame *frame);

/* ---- either side ---- */

/* Closes the slot: end of stream (error_msg NULL) or a fatal error (error_msg is one line, copied).
 * A frame already waiting is still delivered by take; after it, take returns CC_SLOT_CLOSED.
 * acquire and put fail from now on, so a producer loop ends. Wakes every waiter. The first close
 * wins; later calls change nothing. */
void cc_frame_slot_close(struct cc_frame_slot *slot, const char *error_msg);

/* True once cc_frame_slot_close was called. */
bool cc_frame_slot_closed(struct cc_frame_slot *slot);

/* A copy of src (pixels, format, geometry, sequence) as the newest frame, time-stamped now
 * (CLOCK_MONOTONIC): acquire + copy + put, for producers that decode into a frame of their own.
 * False when the slot is closed, or out of memory (then the slot is closed with that error). */
bool cc_frame_slot_put_copy(struct cc_frame_slot *slot, const struct cc_frame *src);

/* Starts a producer thread (a file source's or a stream's) with SIGINT, SIGTERM and SIGHUP
 * blocked in it (it inherits the mask set around pthread_create): the stop and reopen signals
 * go to the main thread and never interrupt the producer's reads. Returns pthread_create's
 * status (0: started). */
int cc_frame_slot_start_producer(pthread_t *thread, void *(*main_fn)(void *), void *arg);

/* ---- consumer side ---- */

enum cc_slot_status {
    CC_SLOT_FRAME,   // *out is the newest frame, now owned by the consumer
    CC_SLOT_TIMEOUT, // nothing arrived within timeout_ms; *out is NULL
    CC_SLOT_CLOSED,  // closed and drained; *out is NULL; err holds the close message ("" at EOF)
};

/* Takes the newest frame, waiting up to timeout_ms (< 0: forever, 0: just look). The consumer
 * owns the frame until cc_frame_slot_release. */
enum cc_slot_status cc_frame_slot_take(struct cc_frame_slot *slot, int timeout_ms,
                                       struct cc_frame **out, struct cc_error *err);

/* Wakes a consumer waiting in take: that take (or the next one, when none waits) returns
 * CC_SLOT_TIMEOUT at once unless a frame waits. For a consumer that has other work than frames
 * (the inference thread's HTTP requests, pipeline.h). */
void cc_frame_slot_kick(struct cc_frame_slot *slot);

/* Gives a taken frame back to the pool. Accepts NULL. */
void cc_frame_slot_release(struct cc_frame_slot *slot, struct cc_frame *frame);

/* Producer side, for sources that must not drop frames (files at fps 0): blocks until no
 * frame waits in the slot (the consumer took it, or it was dropped). Returns false when the
 * slot is closed. */
bool cc_frame_slot_wait_taken(struct cc_frame_slot *slot);

/* Counters since create, read under the lock (a consistent snapshot). */
struct cc_frame_slot_stats {
    uint64_t put;     // frames published by the producer
    uint64_t taken;   // frames delivered to the consumer
    uint64_t dropped; // frames replaced by a newer one before the consumer took them
};
struct cc_frame_slot_stats cc_frame_slot_get_stats(struct cc_frame_slot *slot);

#endif
