/* camclass — whether a CPU backend run uses its thread pool or the calling thread alone
 * (internal to engine/cpu).
 *
 * pthreadpool's calling thread waits at the end of every parallel loop until each worker has
 * checked in, even a worker whose share it did itself; on a crowded machine (more runnable
 * threads than cores: other programs, or several cameras' engines) a worker waits its turn on
 * a core for each of a run's ~60 loops, and mobilenet_v2 at 2 threads took ten times as long
 * as on one (docs/PERFORMANCE.md "A crowded machine"). So a run measures how much of its wall
 * time the calling thread was on a core (its CPU time: it spins while waiting, so on a quiet
 * machine that is nearly all); after two runs in a row under CC_POOL_CROWDED of it, the next
 * CC_POOL_SOLO_MIN runs go on the calling thread alone, then the pool is tried again, after
 * twice as many runs each time it is still crowded (up to CC_POOL_SOLO_MAX).
 *
 *   struct cc_pool_choice c;  cc_pool_choice_init(&c, mode);      // at create
 *   per run: bool pooled = cc_pool_choice_begin(&c);  ... run ...  cc_pool_choice_end(&c);
 *
 * Threads: a choice belongs to its backend state, which one thread at a time runs.
 */
#ifndef CC_POOL_CHOICE_H
#define CC_POOL_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

enum cc_pool_mode {
    CC_POOL_AUTO,   // the calling thread alone while the machine is crowded (the default)
    CC_POOL_ALWAYS, // the pool at every run (as before; for benchmarks)
};

enum {
    CC_POOL_SOLO_MIN = 8,   // runs on the calling thread alone after a first crowded run
    CC_POOL_SOLO_MAX = 256, // the most, after crowded tries in a row (doubling)
};
#define CC_POOL_CROWDED 0.5 // a pooled run whose thread was on a core for less of it is crowded

struct cc_pool_choice {
    enum cc_pool_mode mode;
    int solo_left;      // runs left on the calling thread alone; 0: the next uses the pool
    int solo_span;      // the length of the last such stretch; 0 after an uncrowded pooled run
    int crowded;        // crowded pooled runs in a row
    bool pooled;        // the run in progress uses the pool
    int64_t wall0_ns;   // its start, CLOCK_MONOTONIC
    int64_t cpu0_ns;    // the calling thread's CPU time then
    uint64_t solo_runs; // runs so far on the calling thread alone (for tests and benchmarks)
};

/* CAMCLASS_CPU_POOL's value (NULL or "" or "auto": CC_POOL_AUTO, "always"). False with err
 * naming the value and the choices. */
bool cc_pool_mode_parse(const char *value, enum cc_pool_mode *mode, struct cc_error *err);

void cc_pool_choice_init(struct cc_pool_choice *c, enum cc_pool_mode mode);

/* A run starts: true when it is to use the pool, false for the calling thread alone. */
bool cc_pool_choice_begin(struct cc_pool_choice *c);

/* The run ended: its times measured and taken (cc_pool_choice_took). */
void cc_pool_choice_end(struct cc_pool_choice *c);

/* The decision itself, for a run that used the pool or not (pooled), during which the calling
 * thread had cpu_ns of CPU time in wall_ns. */
void cc_pool_choice_took(struct cc_pool_choice *c, bool pooled, int64_t cpu_ns, int64_t wall_ns);

#endif
