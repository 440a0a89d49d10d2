/* camclass — systemd service notifications: see notify.h. */
#include "notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

// sd_notify: > 0 sent, 0 no NOTIFY_SOCKET (not a service: fine), < 0 -errno.
static bool send_state(const char *state)
{
    int r = sd_notify(0, state);
    if (r < 0) {
        errno = -r;
        return false;
    }
    return true;
}

bool cc_notify_ready(void)
{
    return send_state("READY=1");
}

uint64_t cc_notify_watchdog_interval_us(void)
{
    uint64_t usec = 0;
    // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID is unset or names this process.
    if (sd_watchdog_enabled(0, &usec) <= 0)
        return 0;
    // Half the timeout, as sd_watchdog_enabled(3) advises: one late ping must not kill us.
    return usec / 2 > 0 ? usec / 2 : 1;
}

bool cc_notify_watchdog(void)
{
    return send_state("WATCHDOG=1");
}

bool cc_notify_status(const char *fmt, ...)
{
    char line[7 + 256] = "STATUS=";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + 7, sizeof(line) - 7, fmt, ap);
    va_end(ap);
    // One line: systemd takes the text up to the newline as the status.
    for (char *p = line; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return send_state(line);
}

bool cc_notify_stopping(void)
{
    return send_state("STOPPING=1");
}
