/* camclass — the status line of a headless run (app/output/status_line.c) without camclass:
 * its text (plurals, the rate and latency when known, files done of total, the ETA at the pace
 * so far, m:ss and h:mm:ss, cut to the buffer), off for a pipe and for TERM=dumb, and on a
 * pseudo-terminal: nothing before the first interval or without a result, each draw "\r",
 * the text and erase-to-end, cut to the terminal's width, finish ending it with a newline.
 * The times are given, not measured: nothing here depends on the machine's speed. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "status_line.h"
#include "testutil.h"

static const int64_t MS = 1000000;

static void format_is(const struct cc_status_info *info, size_t size, const char *want)
{
    char buf[256];
    size_t n = cc_status_line_format(buf, size, info);
    CHECKF(strcmp(buf, want) == 0 && n == strlen(want), "\"%s\" (%zu), want \"%s\"", buf, n, want);
}

static void text(void)
{
    struct cc_status_info i = {.results = 1, .latency_ms = 33.24};
    format_is(&i, 256, "1 frame  latency 33.2 ms");
    i = (struct cc_status_info){.results = 120, .results_per_s = 30.06, .latency_ms = 33.24};
    format_is(&i, 256, "120 frames  30.1 results/s  latency 33.2 ms");
    // 120 of 500 files in 3.2 s: 380 more at that pace take 10.1 s.
    i.files_total = 500, i.files_done = 120, i.elapsed_s = 3.2;
    format_is(&i, 256, "120 frames  30.1 results/s  latency 33.2 ms  files 120/500  ETA 0:10");
    i.files_done = 1, i.elapsed_s = 10; // 499 files at 10 s each: 1:23:10
    format_is(&i, 256, "120 frames  30.1 results/s  latency 33.2 ms  files 1/500  ETA 1:23:10");
    i.files_done = 600; // past the total (a file read twice): shown as done, no time left
    format_is(&i, 256, "120 frames  30.1 results/s  latency 33.2 ms  files 500/500  ETA 0:00");
    i.files_done = 0; // nothing done yet: no ETA
    format_is(&i, 256, "120 frames  30.1 results/s  latency 33.2 ms  files 0/500");
    // Cut to the buffer, the length what was kept; a buffer of one byte holds "".
    format_is(&i, 11, "120 frames");
    format_is(&i, 1, "");
}

/* A pseudo-terminal pair, raw (no "\n" -> "\r\n"), cols columns; the slave as a FILE. */
static bool open_pty(int *master, FILE **slave, int cols)
{
    *master = posix_openpt(O_RDWR | O_NOCTTY);
    if (!CHECKF(*master >= 0 && grantpt(*master) == 0 && unlockpt(*master) == 0,
                "posix_openpt: %m"))
        return false;
    int fd = open(ptsname(*master), O_RDWR | O_NOCTTY);
    struct termios t;
    if (!CHECKF(fd >= 0 && tcgetattr(fd, &t) == 0, "the pty's slave: %m"))
        return false;
    cfmakeraw(&t);
    tcsetattr(fd, TCSANOW, &t);
    struct winsize ws = {.ws_row = 24, .ws_col = (unsigned short)cols};
    ioctl(fd, TIOCSWINSZ, &ws);
    *slave = fdopen(fd, "w");
    return CHECK(*slave != NULL);
}

/* What the terminal got since the last call ("" when nothing: waits 200 ms for a first byte,
 * which only a failure makes anyone wait for). */
static const char *received(int master, int wait_ms)
{
    static char buf[1024];
    size_t n = 0;
    struct pollfd p = {.fd = master, .events = POLLIN};
    while (n + 1 < sizeof(buf) && poll(&p, 1, n ? 0 : wait_ms) > 0) {
        ssize_t k = read(master, buf + n, sizeof(buf) - 1 - n);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    buf[n] = 0;
    return buf;
}

static void on_a_terminal(void)
{
    int master;
    FILE *tty;
    if (!open_pty(&master, &tty, 80))
        return;
    unsetenv("TERM");
    struct cc_status_line s;
    struct cc_status_info i = {.results = 0, .latency_ms = 5};
    cc_status_line_init(&s, tty, 1000 * MS);
    CHECKF(s.out == tty, "on for a terminal");
    cc_status_line_finish(&s, &i);
    CHECKF(!*received(master, 200), "finish before any draw writes nothing");
    cc_status_line_update(&s, 2000 * MS, &i);
    CHECKF(!*received(master, 200), "no result yet: nothing drawn");
    i.results = 3;
    cc_status_line_update(&s, 1249 * MS, &i);
    CHECKF(!*received(master, 200), "249 ms after the start: nothing drawn");
    cc_status_line_update(&s, 1250 * MS, &i);
    const char *got = received(master, 5000);
    CHECKF(strcmp(got, "\r3 frames  latency 5.0 ms\033[K") == 0, "the first draw: \"%s\"", got);
    i.results = 4;
    cc_status_line_update(&s, 1499 * MS, &i);
    CHECKF(!*received(master, 200), "249 ms after a draw: nothing drawn");
    cc_status_line_finish(&s, &i);
    got = received(master, 5000);
    CHECKF(strcmp(got, "\r4 frames  latency 5.0 ms\033[K\n") == 0, "finish: \"%s\"", got);
    fclose(tty);
    close(master);

    // 12 columns: the text cut to 11, so that the terminal never wraps it.
    if (!open_pty(&master, &tty, 12))
        return;
    cc_status_line_init(&s, tty, 0);
    cc_status_line_update(&s, 250 * MS, &i);
    got = received(master, 5000);
    CHECKF(strcmp(got, "\r4 frames  l\033[K") == 0, "cut to 11 columns: \"%s\"", got);
    fclose(tty);
    close(master);
}

/* A pipe, and a terminal with TERM=dumb: off, nothing written ever. */
static void off(void)
{
    int fds[2];
    if (!CHECK(pipe(fds) == 0))
        return;
    FILE *w = fdopen(fds[1], "w");
    struct cc_status_line s;
    struct cc_status_info i = {.results = 5, .latency_ms = 1};
    cc_status_line_init(&s, w, 0);
    cc_status_line_update(&s, 1000 * MS, &i);
    cc_status_line_finish(&s, &i);
    fclose(w);
    char c;
    CHECKF(s.out == NULL && read(fds[0], &c, 1) == 0, "a pipe gets nothing");
    close(fds[0]);

    int master;
    FILE *tty;
    if (!open_pty(&master, &tty, 80))
        return;
    setenv("TERM", "dumb", 1);
    cc_status_line_init(&s, tty, 0);
    cc_status_line_update(&s, 1000 * MS, &i);
    cc_status_line_finish(&s, &i);
    CHECKF(s.out == NULL && !*received(master, 200), "TERM=dumb gets nothing");
    unsetenv("TERM");
    fclose(tty);
    close(master);
}

int main(void)
{
    text();
    on_a_terminal();
    off();
    return tu_exit_code();
}
