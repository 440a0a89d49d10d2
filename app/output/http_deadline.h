/* camclass — a deadline for the headers of each HTTP request (--serve; used by http.c).
 *
 * libmicrohttpd 0.9.75 times a connection out only when it is idle: a client sending a byte of
 * its request line or headers now and then (slowloris) keeps its connection, one of 32, for
 * as long as the header buffer lasts. This module watches every connection that is waiting for
 * a request's headers: from when it was opened, or from when its previous request was answered.
 * One that has not got them by the deadline is shut down (shutdown(2) on its socket, which
 * libmicrohttpd's thread for it sees as the peer going, and closes), and on_expire is told.
 *
 *   d = cc_http_deadline_create(limit_ns, on_expire, ctx, &err);   // a thread, asleep
 *   conn opened:      w = cc_http_deadline_add(d, fd);              // watched from now
 *   headers in:       cc_http_deadline_begin(d, w);                 // not while it is answered
 *   request answered: cc_http_deadline_end(d, w);                   // watched again from now
 *   conn closing:     cc_http_deadline_remove(d, w);                // before its fd is closed
 *   cc_http_deadline_destroy(d);                                    // after every remove
 *
 * Threads: every call but create/destroy may come from any thread; on_expire runs on the
 * module's own thread, which sleeps until the earliest deadline (no polling loop).
 */
#ifndef CC_HTTP_DEADLINE_H
#define CC_HTTP_DEADLINE_H

#include <stdint.h>

#include "error.h"

struct cc_http_deadline;
struct cc_http_watch;

/* on_expire(ctx, n, limit_ns): n connections were just shut down for want of headers. NULL on
 * failure (out of memory, no thread), with err set. */
struct cc_http_deadline *
cc_http_deadline_create(int64_t limit_ns, void (*on_expire)(void *ctx, int n, int64_t limit_ns),
                        void *ctx, struct cc_error *err);

/* NULL when out of memory: the connection is then not watched (the idle timeout still is). */
struct cc_http_watch *cc_http_deadline_add(struct cc_http_deadline *d, int fd);
void cc_http_deadline_begin(struct cc_http_deadline *d, struct cc_http_watch *w);
void cc_http_deadline_end(struct cc_http_deadline *d, struct cc_http_watch *w);
void cc_http_deadline_remove(struct cc_http_deadline *d, struct cc_http_watch *w);

void cc_http_deadline_destroy(struct cc_http_deadline *d);

#endif
