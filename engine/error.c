/* camclass — error reporting (see error.h). */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

bool cc_error_set(struct cc_error *err, const char *fmt, ...)
{
    if (!err)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return false;
}
