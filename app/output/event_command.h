/* camclass — the on-event command: a program run when a detection starts or ends, with the event
 * in its environment (as motion's on_event_start, without a shell).
 *
 *   struct cc_event_command *c = cc_event_command_create(&cfg, &err); // NULL: print err, exit 2
 *   on a detection change:  cc_event_command_run(c, &ev);  // never blocks
 *   at the end:             cc_event_command_destroy(c);   // waits for it (at most its timeout)
 *
 * The program is executed directly (posix_spawnp: a name is looked up in PATH), with no
 * arguments, standard input from /dev/null and its standard output sent to standard error, so
 * that it can never write into a JSON log on stdout. Its environment is camclass's plus
 *   CAMCLASS_EVENT     start or end
 *   CAMCLASS_LABEL     the label detected (start) or cleared (end)
 *   CAMCLASS_SCORE     its smoothed score, 0..1
 *   CAMCLASS_PREVIOUS  the label it replaced (a start that changes the detection), else unset
 *   CAMCLASS_CAMERA    the camera's name
 *   CAMCLASS_TIME      the event's wall-clock time, ISO 8601 UTC
 *   CAMCLASS_SNAPSHOT  the snapshot's path, when one was saved for the event
 * It runs in a process group of its own; after timeout_s the group gets SIGTERM, and SIGKILL
 * 2 s later. At most one runs at a time: an event that comes while it runs is not passed, and
 * says so. How each run ended (exit status, signal, timeout) is one line through notice.
 * Threads: run and destroy from one thread; a waiter thread of the module's own reaps the
 * child and calls notice from there (notice must be thread-safe).
 */
#ifndef CC_EVENT_COMMAND_H
#define CC_EVENT_COMMAND_H

#include <stdbool.h>

#include "error.h"

struct cc_event_command_config {
    const char *program;                         // path, or a name looked up in PATH; copied
    double timeout_s;                            // > 0
    const char *camera;                          // CAMCLASS_CAMERA; copied
    void (*notice)(void *ctx, const char *line); // one line, thread-safe
    void *notice_ctx;
};

struct cc_event_info {
    bool start;           // start (true) or end
    const char *label;    // detected or cleared
    double score;         // smoothed, 0..1
    const char *previous; // the label a start replaced, or NULL
    const char *snapshot; // a saved snapshot's path, or NULL
};

enum cc_event_run { CC_EVENT_RUN_STARTED, CC_EVENT_RUN_BUSY, CC_EVENT_RUN_FAILED };

struct cc_event_command;

/* Checks that program names an executable file (directly or in PATH) and starts the waiter.
 * NULL with err (one line naming the program and what to do) otherwise. */
struct cc_event_command *cc_event_command_create(const struct cc_event_command_config *cfg,
                                                 struct cc_error *err);

/* Starts the program for ev unless one is still running (BUSY, said through notice). FAILED:
 * posix_spawn failed (said through notice). */
enum cc_event_run cc_event_command_run(struct cc_event_command *c, const struct cc_event_info *ev);

/* Waits for a running program (killing it at its timeout), then frees. Accepts NULL. */
void cc_event_command_destroy(struct cc_event_command *c);

#endif
