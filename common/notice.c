/* camclass — runtime notices (see notice.h). */
#include "notice.h"

#include <stdarg.h>
#include <stdio.h>

void cc_vnotice(cc_notice_fn fn, void *ctx, const char *fmt, va_list ap)
{
    if (!fn)
        return;
    char line[2048];
    vsnprintf(line, sizeof(line), fmt, ap);
    fn(ctx, line);
}

void cc_notice(cc_notice_fn fn, void *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_vnotice(fn, ctx, fmt, ap);
    va_end(ap);
}
