/* camclass — runtime notices: the one-line messages a module's own thread gives while running
 * (a broker lost, a webhook back, a program's exit status), handed to a callback that prints
 * them (main prefixes "camclass: " and writes stderr). */
#ifndef CC_NOTICE_H
#define CC_NOTICE_H

#include <stdarg.h>

/* A notice callback: one line, no '\n'; called from any thread, so it must be thread-safe. */
typedef void (*cc_notice_fn)(void *ctx, const char *line);

/* Formats one line (up to 2 KB, cut beyond) and hands it to fn; nothing when fn is NULL. */
void cc_notice(cc_notice_fn fn, void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same with a va_list, for a module's own printf-like wrapper. */
void cc_vnotice(cc_notice_fn fn, void *ctx, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
