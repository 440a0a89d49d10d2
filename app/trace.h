/* camclass — a Chrome trace (the JSON "traceEvents" format that Perfetto and chrome://tracing
 * open), built in memory and written at the end.
 *
 *     struct cc_trace *t = cc_trace_create();
 *     cc_trace_thread_name(t, 1, "layers");
 *     cc_trace_complete(t, "features.0", "conv2d", 1, ts_us, dur_us, run);
 *     cc_trace_write(t, "trace.json", &err);
 *     cc_trace_destroy(t);
 *
 * Ownership: the trace owns its events; names are copied. One thread at a time.
 */
#ifndef CC_TRACE_H
#define CC_TRACE_H

#include <stdbool.h>

#include "error.h"

struct cc_trace;

/* Returns an empty trace, or NULL when out of memory. */
struct cc_trace *cc_trace_create(void);

/* Names track tid in the viewer. False when out of memory. */
bool cc_trace_thread_name(struct cc_trace *t, int tid, const char *name);

/* Adds one complete event ("ph": "X") on track tid: name and category (cat), start ts_us and
 * length dur_us in microseconds, and the run number as an argument. False when out of memory. */
bool cc_trace_complete(struct cc_trace *t, const char *name, const char *cat, int tid, double ts_us,
                       double dur_us, int run);

/* Writes the trace as JSON to path. */
bool cc_trace_write(const struct cc_trace *t, const char *path, struct cc_error *err);

/* Frees the trace; accepts NULL. */
void cc_trace_destroy(struct cc_trace *t);

#endif
