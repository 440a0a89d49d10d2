/* camclass — the status line of a headless run on a terminal.
 *
 * One line on stderr, rewritten in place ("\r", the text, erase to the end of the line) at most
 * 4 times a second: frames classified, results/s and latency of the newest result, and for an
 * image input that does not loop, files done/total and the time left. The first draw comes
 * 250 ms after the start, so a run shorter than that shows none. finish draws it a last time
 * and ends it with a newline, so that what follows (the summary line) starts on a line of its
 * own. Off (nothing written, ever) when the stream is not a terminal or TERM is "dumb":
 * a log, a pipe or journald gets no escape codes and no carriage returns.
 *
 *     struct cc_status_line st;
 *     cc_status_line_init(&st, stderr, now_ns);
 *     each wake-up: cc_status_line_update(&st, now_ns, &info);   // draws when 250 ms passed
 *     at the end:   cc_status_line_finish(&st, &info);
 *
 * Threads: the main thread only. Messages other threads print on the same stream meanwhile
 * (rare: a bad frame, a log write error) land after the status text; the next update starts a
 * fresh status line after them.
 */
#ifndef CC_STATUS_LINE_H
#define CC_STATUS_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CC_STATUS_LINE_INTERVAL_MS = 250 }; // at most 4 updates a second

struct cc_status_info {
    uint64_t results;     // frames classified so far
    double results_per_s; // recent rate (the newest result's inference_fps); <= 0: not yet
    double latency_ms;    // the newest result's latency
    int files_total;      // image input without --loop: its files; 0: not shown
    uint64_t files_done;  // files the source has passed (the newest result's seq + 1)
    double elapsed_s;     // since the run started, for the time left
};

struct cc_status_line {
    FILE *out;       // the terminal (not owned); NULL: off
    int64_t last_ns; // when it was last drawn (at first: the start)
    bool shown;      // something is on the line: finish ends it with a newline
};

/* Turns the line on when out is a terminal (isatty) and TERM is not "dumb", else off (also for
 * out NULL). start_ns (CLOCK_MONOTONIC): the run's start; the first draw waits an interval. */
void cc_status_line_init(struct cc_status_line *s, FILE *out, int64_t start_ns);

/* Draws info when the line is on, there is a result, and CC_STATUS_LINE_INTERVAL_MS have passed
 * since the last draw (now_ns: CLOCK_MONOTONIC). */
void cc_status_line_update(struct cc_status_line *s, int64_t now_ns,
                           const struct cc_status_info *info);

/* Draws info a last time and ends the line with a newline, when the line was drawn before. */
void cc_status_line_finish(struct cc_status_line *s, const struct cc_status_info *info);

/* The text of the line, without "\r" or escapes ("120 frames  30.1 results/s  latency 33.2 ms
 * files 120/500  ETA 0:13"), cut to size - 1 bytes. Returns its length. */
size_t cc_status_line_format(char *buf, size_t size, const struct cc_status_info *info);

#endif
