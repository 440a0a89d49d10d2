/* camclass — GET /latest's state: the newest "frame" line of the detection log and, when the
 * result carried one, its class activation map.
 *
 * Threads: the inference thread keeps (cc_latest_keep as the detlog's sink, then
 * cc_latest_keep_cam with the same result); connections read, and may wait for a line with its
 * map. Everything is under the object's own lock. Ownership: lines returned are malloc'd copies,
 * the caller's.
 */
#ifndef CC_LATEST_H
#define CC_LATEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

struct cc_latest;

/* NULL when out of memory. */
struct cc_latest *cc_latest_create(void);

/* Frees everything; accepts NULL. */
void cc_latest_destroy(struct cc_latest *l);

/* A detlog sink (detlog.h, ctx l): keeps the newest "frame" line. False when out of memory. */
bool cc_latest_keep(void *l, const char *event, const char *line, size_t len);

/* After the line of a result was kept: its map (cam->w 0: it has none). Wakes waiters. */
void cc_latest_keep_cam(struct cc_latest *l, const struct cc_result_cam *cam);

/* A copy of the newest line ('\n' ended); NULL before the first (*none true) or when out of
 * memory. */
char *cc_latest_line(struct cc_latest *l, bool *none);

/* The newest line with its map as "cam" (cam_json.h), waiting until deadline_ns (cc_now_ns's
 * clock) for a newest line that has one. NULL with *timed_out when none came, or out of
 * memory. */
char *cc_latest_line_with_cam(struct cc_latest *l, int64_t deadline_ns, bool *timed_out);

#endif
