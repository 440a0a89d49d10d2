/* camclass — turns at an engine shared by several cameras' pipelines (config "cameras": one
 * engine per distinct model), round-robin over the pipelines that hold a fresh frame.
 *
 * Each pipeline is a lane (cc_engine_turns_join, at create). Its inference thread says when it
 * has taken a frame from its slot (hold), prepares it (orientation, preprocessing), waits for its
 * turn (take), runs the engine and ends the turn (give). The engine goes round the lanes in
 * order: of the lanes that hold a frame or have a fresh one waiting in their slot (fresh), the one
 * with the fewest turns so far has the next, also while it is still taking and preparing its
 * frame (the others wait); ties go round from the lane after the last turn's. So each camera
 * with a fresh frame gets one result per round, however long its own preparation takes (a
 * turned, larger or JPEG frame), and one whose frame came late once goes first next time: the
 * result counts of cameras that keep up stay equal. A lane with no frame is skipped; one idle
 * for long comes back at most 32 turns behind (it does not take the engine for long to catch
 * up); one whose thread has ended leaves (it is never waited for).
 *
 *   int lane = cc_engine_turns_join(t, fresh, ctx);          // controlling thread, before start
 *   inference thread: cc_engine_turns_hold(t, lane); ...prepare...;
 *                     cc_engine_turns_take(t, lane); run; cc_engine_turns_give(t, lane);
 *                     (a frame dropped while prepared: cc_engine_turns_give alone)
 *
 * Threads: hold/take/give from each lane's one thread; join and destroy on the controlling thread
 * while no lane runs. Ownership: the caller owns the turns; pipelines borrow them.
 */
#ifndef CC_ENGINE_TURNS_H
#define CC_ENGINE_TURNS_H

#include <stdbool.h>

#include "error.h"

struct cc_engine_turns;

struct cc_engine_turns *cc_engine_turns_create(struct cc_error *err);
void cc_engine_turns_destroy(struct cc_engine_turns *t); // accepts NULL

/* A new lane; its index, or -1 when out of memory. fresh(ctx) (any thread, under the turns' lock:
 * it must not take the turns itself) says whether a frame waits for the lane's thread. */
int cc_engine_turns_join(struct cc_engine_turns *t, bool (*fresh)(void *ctx), void *ctx);

/* The lane's thread has ended: the round no longer waits for it. */
void cc_engine_turns_leave(struct cc_engine_turns *t, int lane);

/* The lane holds a frame: it is due a turn in its place in the round. */
void cc_engine_turns_hold(struct cc_engine_turns *t, int lane);

/* Waits for the lane's turn (after cc_engine_turns_hold). */
void cc_engine_turns_take(struct cc_engine_turns *t, int lane);

/* Ends the lane's turn, or gives up its place when it never took it; it holds nothing now. */
void cc_engine_turns_give(struct cc_engine_turns *t, int lane);

#endif
