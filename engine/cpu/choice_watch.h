/* camclass — the watch over the CPU backend's load-time timings (internal to engine/cpu):
 * whether the machine was quiet while xnn_steps.c timed each layer's candidate kernels, so that
 * the winners may be remembered in the layer-choice cache (xnn_choices.h) for every later start,
 * and whether those timings still use the thread pool.
 *
 * The measure is pool_choice.h's: how much of a timed run's wall time the calling thread was on
 * a core (its CPU time; it computes, or spins while the pool's workers finish, so nearly all of
 * it on a quiet machine). Where other programs want the cores, it waits its turn: the timings
 * then measure the queue rather than the kernels, and a winner chosen on them is noise.
 *  - The pool: as at run time, after two pooled timed runs in a row on a core under
 *    CC_POOL_CROWDED of their wall time, the rest of the timings go on the calling thread alone
 *    (a 13 s load was seen at load 27 with the pool's workers waiting for cores), from the next
 *    node on, so that one node's candidates are all timed the same way. Not tried again: the
 *    load is short, and its choices are not saved anyway.
 *  - Saving: only when the pool was kept (a choice timed on one thread is not one for the
 *    pool) and the calling thread was on a core at least CC_WATCH_QUIET of all timed runs' wall
 *    time (one preempted run among hundreds does not matter: each candidate's least time
 *    counts). Else the engine uses the choices and they are not written, so that a later quiet
 *    start measures again (cc_choice_watch_quiet says why).
 * CAMCLASS_CPU_CROWDED (tests and benchmarks, read at every CPU-backend create) replaces the
 * measure: yes takes the machine as crowded from the start (timings on the calling thread, the
 * choices not saved), no as quiet (the pool, saved); auto (or unset) measures.
 *
 *   struct cc_choice_watch w;  cc_choice_watch_init(&w, mode, threads > 1);
 *   per node timed: pool = cc_choice_watch_node(&w) ? the backend's pool : NULL;
 *   per timed run:  cc_choice_watch_begin(&w);  ... run on pool ...  cc_choice_watch_end(&w);
 *   at the end:     if (cc_choice_watch_quiet(&w, why, sizeof(why))) save, else say why
 *
 * Threads: a watch belongs to one create, on its calling thread.
 */
#ifndef CC_CHOICE_WATCH_H
#define CC_CHOICE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum cc_watch_mode {
    CC_WATCH_AUTO,    // measured (the default)
    CC_WATCH_CROWDED, // CAMCLASS_CPU_CROWDED=yes: crowded from the start
    CC_WATCH_QUIET,   // CAMCLASS_CPU_CROWDED=no: quiet whatever the measure
};

#define CC_WATCH_QUIET_SHARE 0.9 // the least share of the timed wall time on a core to save

struct cc_choice_watch {
    enum cc_watch_mode mode;
    bool crowded;     // the pool is left for the rest of the timings
    bool pooled;      // the node in progress's timings use the pool
    bool has_pool;    // the backend has a pool (more than one thread)
    int in_row;       // crowded pooled runs in a row
    int runs, solo;   // timed runs, and of those on the calling thread alone with a pool there
    int64_t cpu_ns;   // the calling thread's CPU time in the timed runs
    int64_t wall_ns;  // their wall time
    int64_t cpu0_ns;  // the run in progress's start: CPU time
    int64_t wall0_ns; // and CLOCK_MONOTONIC
};

/* CAMCLASS_CPU_CROWDED's value (NULL or "" or "auto": CC_WATCH_AUTO, "yes", "no"). False with
 * err naming the value and the choices. */
bool cc_choice_watch_mode_parse(const char *value, enum cc_watch_mode *mode, struct cc_error *err);

/* has_pool: the backend has a thread pool (more than one thread). */
void cc_choice_watch_init(struct cc_choice_watch *w, enum cc_watch_mode mode, bool has_pool);

/* A node's timings start: true when they use the pool (there is one and the machine was not
 * found crowded), false for the calling thread alone. */
bool cc_choice_watch_node(struct cc_choice_watch *w);

/* A timed run starts / ended: its times measured and taken (cc_choice_watch_took). */
void cc_choice_watch_begin(struct cc_choice_watch *w);
void cc_choice_watch_end(struct cc_choice_watch *w);

/* The rule itself, for a timed run on the pool of the node in progress (or not), during which
 * the calling thread had cpu_ns of CPU time in wall_ns. */
void cc_choice_watch_took(struct cc_choice_watch *w, int64_t cpu_ns, int64_t wall_ns);

/* Whether the timings were taken on a quiet machine, their choices fit to be saved; else false
 * and why (size bytes: what was measured, e.g. "this thread was on a core 41% of the 830 ms
 * timed, 212 of 480 timings on one thread"). No timed run at all is quiet. */
bool cc_choice_watch_quiet(const struct cc_choice_watch *w, char *why, size_t size);

#endif
