/* camclass — systemd service notifications (sd_notify).
 *
 * Thin wrapper over libsystemd's sd_notify for a Type=notify unit: READY=1 once the pipeline
 * runs, WATCHDOG=1 at least every cc_notify_watchdog_interval_us(), STATUS= lines for
 * `systemctl status`, STOPPING=1 on shutdown. Outside systemd (no NOTIFY_SOCKET) every call is
 * a no-op that returns true, so callers need no "are we a service" checks.
 *
 * No state of its own: each call reads the environment and sends one datagram, so every function
 * is safe to call from any thread. The unit has NotifyAccess=main; threads of the main process
 * share its PID, so pinging the watchdog from the inference thread (to prove it still makes
 * progress) is fine.
 *
 * Return value: false only when NOTIFY_SOCKET is set and sending failed (errno set). The
 * service runs on regardless; callers may ignore it or log it once.
 */
#ifndef CC_NOTIFY_H
#define CC_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* READY=1 (and MAINPID): startup is done. Call once, after the first frame was classified
 * or at least after the camera and model opened; systemd waits for it (TimeoutStartSec). */
bool cc_notify_ready(void);

/* How often to call cc_notify_watchdog(), in microseconds: half of WATCHDOG_USEC when the
 * watchdog is on for this process (WATCHDOG_PID unset or ours), 0 when it is off. */
uint64_t cc_notify_watchdog_interval_us(void);

/* WATCHDOG=1: the service is alive. Send it from the loop that proves progress. */
bool cc_notify_watchdog(void);

/* STATUS=<text> (printf-style, one line, truncated at 255 bytes): shown by systemctl status. */
bool cc_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* STOPPING=1: shutdown has begun (SIGTERM received); send before the summary line. */
bool cc_notify_stopping(void);

#endif
