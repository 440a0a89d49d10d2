/* camclass — the settings checked before the model loads and the backends are measured (which
 * can take seconds): a mistake in a flag is one line and exit 2 at once, not after the wait.
 *
 * Checks: a file input can be read, the MQTT, Home Assistant, webhook and on-event settings (report.h), the --gpio specs' form (gpio_out.h), the HTTP
 * service's address, token and Host names, whether this process may open its socket and whether
 * its port is free (http.h), and that the files camclass will write can be written: --log FILE
 * (an existing regular file writable, or a new one's folder), --output FILE's folder, and
 * --screenshot-dir (a writable folder). Nothing is created or opened for writing here.
 */
#ifndef CC_PREFLIGHT_H
#define CC_PREFLIGHT_H

#include <stdbool.h>

#include "cli.h"
#include "error.h"

/* False with err (one line naming the flag and the way out) on the first setting that will not
 * do. */
bool cc_preflight(const struct cc_cli *cli, struct cc_error *err);

#endif
