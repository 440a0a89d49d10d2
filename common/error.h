/* camclass — error reporting.
 *
 * A failing function fills a caller-owned struct cc_error once, at the place the problem is
 * found, with one line that names the problem and, where there is one, the way out. Callers
 * pass the message up unchanged; only main() prints it and exits. err may be NULL.
 */
#ifndef CC_ERROR_H
#define CC_ERROR_H

#include <stdbool.h>

struct cc_error {
    char msg[512]; // one line, no trailing newline; "" when no error was set
};

/* Sets err->msg (printf-style) unless err is NULL. Always returns false, so that
 * `return cc_error_set(err, ...);` ends a bool function. */
bool cc_error_set(struct cc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What a file of st_mode `mode` is, with its article, for messages about a path that should
 * name a regular file: "a directory", "a FIFO", "a character device", "a block device",
 * "a socket", "a special file" ("a regular file" for one). */
const char *cc_file_kind(unsigned mode);

#endif
