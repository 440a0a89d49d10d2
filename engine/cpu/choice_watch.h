/* camclass — the watch over the CPU backend's load-time timings (internal to engine/cpu):
 * whether the machine was quiet while xnn_steps.c timed each layer's candidate kernels, so that
 * the winners may be remembered in the layer-choice cache (xnn_choices.h) for every later start,
 * and whether those timings still use the thread pool.
 *
 * The measure: how long this process's threads waited for a core during the timed runs (the
 * kernel's run-queue delay, /proc/self/task/<tid>/schedstat's second field), against the thread
 * time they wanted (wall time x the run's threads). Where other programs want the cores, our
 * threads queue: the timings measure the queue rather than the kernels, and a winner chosen on
 * them is noise. Quiet, the wait is ~0 but for each wake-up's latency: the pool's workers sleep
 * and wake around a run, and waking a thread onto an idle core takes tens of us (more in a
 * virtual machine, where the idle core must be woken first), a large part of a 0.05 ms run;
 * CC_WATCH_WAKE_NS per time a thread went on a core is not counted. Another program's time
 * slice, what a crowded machine's threads wait for, is milliseconds. Not the calling thread's
 * CPU time (pool_choice.h's run
 * time measure): a candidate whose threads take turns (a lock, a worker's first page faults)
 * leaves the calling thread asleep for half of a run on a quiet machine, and measured as
 * crowded there. Where the kernel keeps no schedstat, the wait is the calling thread's wall time
 * off a core (wall - its CPU time), one thread.
 *  - The pool: after two windows in a row in which the threads waited over
 *    CC_WATCH_CROWDED_WAIT of their time (a window: pooled timed runs of CC_WATCH_WINDOW_NS in
 *    all; single runs, ~0.05-2 ms, are too short to judge where another program's time slice
 *    is several ms), the rest of the timings go on the calling thread alone (a 13 s load was
 *    seen at load 27 with the pool's workers waiting for cores), from the next node on, so that
 *    one node's candidates are all timed the same way. Not tried again: the load is short, and
 *    its choices are not saved anyway.
 *  - Saving: only when the pool was kept (a choice timed on one thread is not one for the pool)
 *    and the threads waited at most CC_WATCH_QUIET_WAIT of their time over all timed runs (a
 *    few preemptions do not matter: each candidate's least time of 2 or 3 runs counts, 0.3^3 ~
 *    3 % of them all queued). Else the engine uses the choices and they are not written, so
 *    that a later quiet start measures again (cc_choice_watch_quiet says why). Measured at 2
 *    threads on 2 cores (docs/PERFORMANCE.md): 0-25 % nearly alone, 39-47 % beside one busy
 *    process, 88-95 % where others' builds had the cores.
 *  - A candidate's warm-up run (its time discarded: first touches of memory) is not judged.
 * CAMCLASS_CPU_CROWDED (tests and benchmarks, read at every CPU-backend create) replaces the
 * measure: yes takes the machine as crowded from the start (timings on the calling thread, the
 * choices not saved), no as quiet (the pool, saved); auto (or unset) measures.
 *
 *   struct cc_choice_watch w;  cc_choice_watch_init(&w, mode, threads);
 *   per node timed: pool = cc_choice_watch_node(&w) ? the backend's pool : NULL;
 *   per timed run:  cc_choice_watch_begin(&w);  ... run on pool ...  cc_choice_watch_end(&w);
 *                   (a warm-up run: NULL for &w)
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

#define CC_WATCH_CROWDED_WAIT 0.5   // a window whose threads waited more of their time: crowded
#define CC_WATCH_QUIET_WAIT 0.3     // the most the threads may have waited for a save
#define CC_WATCH_WINDOW_NS 20000000 // pooled timed runs judged together (ns of wall time)
#define CC_WATCH_WAKE_NS 100000     // a wake-up's latency not counted as waiting (ns)

struct cc_choice_watch {
    enum cc_watch_mode mode;
    bool crowded;    // the pool is left for the rest of the timings
    bool pooled;     // the node in progress's timings use the pool
    int threads;     // the backend's (its pool's, 1 without one)
    int in_row;      // crowded windows in a row
    int runs, solo;  // timed runs, and of those on the calling thread alone with a pool there
    int64_t wall_ns; // the timed runs' wall time
    int64_t want_ns; // the thread time they wanted (wall x threads)
    int64_t wait_ns; // and of it waited for a core
    int64_t win_want_ns, win_wait_ns; // the same for the window in progress
    int64_t wall0_ns;                 // the run in progress's start: CLOCK_MONOTONIC
    int64_t cpu0_ns;                  // the calling thread's CPU time
    int64_t wait0_ns;                 // the process's threads' waits (INT64_MIN: none)
};

/* CAMCLASS_CPU_CROWDED's value (NULL or "" or "auto": CC_WATCH_AUTO, "yes", "no"). False with
 * err naming the value and the choices. */
bool cc_choice_watch_mode_parse(const char *value, enum cc_watch_mode *mode, struct cc_error *err);

/* threads: the backend's (1: no pool). */
void cc_choice_watch_init(struct cc_choice_watch *w, enum cc_watch_mode mode, int threads);

/* A node's timings start: true when they use the pool (there is one and the machine was not
 * found crowded), false for the calling thread alone. */
bool cc_choice_watch_node(struct cc_choice_watch *w);

/* A timed run starts / ended: its times measured and taken (cc_choice_watch_took). NULL (a
 * candidate's warm-up run): nothing. */
void cc_choice_watch_begin(struct cc_choice_watch *w);
void cc_choice_watch_end(struct cc_choice_watch *w);

/* The rule itself, for a timed run of wall_ns on threads threads (the node in progress's: the
 * pool's or 1), during which they waited wait_ns in all for a core. */
void cc_choice_watch_took(struct cc_choice_watch *w, int64_t wall_ns, int64_t wait_ns, int threads);

/* Whether the timings were taken on a quiet machine, their choices fit to be saved; else false
 * and why (size bytes: what was measured, e.g. "its threads waited for a core 41% of their
 * time in the 830 ms timed; 212 of 480 timings on one thread, not the pool"). No timed run at all
 * is quiet. */
bool cc_choice_watch_quiet(const struct cc_choice_watch *w, char *why, size_t size);

#endif
