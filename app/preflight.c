/* camclass — settings checked before the model loads (see preflight.h). */
#include "preflight.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpio_out.h"
#include "http.h"
#include "report.h"
#include "source_file.h"

// The folder a file path is in ("." for a bare name) into dir.
static void folder_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

// A folder that exists and where this process may create files.
static bool writable_folder(const char *flag, const char *dir, const char *what,
                            struct cc_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return cc_error_set(err, "%s: %s %s: %s; make it first", flag, what, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cc_error_set(err, "%s: %s %s: %s (it is %s)", flag, what, dir, strerror(ENOTDIR),
                            cc_file_kind(st.st_mode));
    if (access(dir, W_OK | X_OK) != 0)
        return cc_error_set(err, "%s: cannot write into %s %s: %s", flag, what, dir,
                            strerror(errno));
    return true;
}

// A file camclass will write: an existing regular file it may write, anything else that
// exists left to its opener (a FIFO, /dev/stdout), or a new file in a writable folder.
static bool writable_file(const char *flag, const char *path, struct cc_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return cc_error_set(err, "%s %s: that is a folder; give a file name", flag, path);
        if (S_ISREG(st.st_mode) && access(path, W_OK) != 0)
            return cc_error_set(err, "%s %s: %s", flag, path, strerror(errno));
        return true;
    }
    char dir[PATH_MAX], named[PATH_MAX + 32];
    folder_of(path, dir, sizeof(dir));
    snprintf(named, sizeof(named), "%s %s", flag, path);
    return writable_folder(named, dir, "the folder", err);
}

// A file input that can be read (streams and standard input are tried when opened).
static bool readable_input(const char *input, struct cc_error *err)
{
    if (!input || strcmp(input, "-") == 0 || cc_source_is_url(input) || access(input, R_OK) == 0)
        return true;
    return cc_error_set(err, "cannot read input %s: %s", input, strerror(errno));
}

// Every --gpio spec well formed (the lines themselves are requested by main, next).
static bool gpio_specs(const struct cc_cli *cli, struct cc_error *err)
{
    struct cc_gpio_spec spec;
    for (int i = 0; i < cli->gpio.count; i++)
        if (!cc_gpio_out_parse(cli->gpio.items[i], &spec, err))
            return false;
    if (cli->gpio_active_low && cli->gpio.count == 0)
        return cc_error_set(err, "--gpio-active-low is about --gpio lines; give --gpio "
                                 "LABEL=CHIP:LINE too, or leave it out");
    return true;
}

bool cc_preflight(const struct cc_cli *cli, struct cc_error *err)
{
    // --selftest reads --input as its sample folder and names it so itself.
    return (cli->selftest || readable_input(cli->input, err)) && cc_report_check(cli, err) &&
           gpio_specs(cli, err) &&
           cc_http_check(cli->serve, cli->serve_token, cli->serve_allow, err) &&
           cc_http_allowed(cli->serve, err) &&
           (!cli->log || strcmp(cli->log, "-") == 0 || writable_file("--log", cli->log, err)) &&
           (!cli->output || writable_file("--output", cli->output, err)) &&
           (!cli->shot_dir || cli->headless ||
            writable_folder("--screenshot-dir", cli->shot_dir, "the folder", err));
}
