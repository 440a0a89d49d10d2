/* camclass — the status line of a headless run on a terminal (see status_line.h). */
#include "status_line.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

void cc_status_line_init(struct cc_status_line *s, FILE *out, int64_t start_ns)
{
    const char *term = getenv("TERM");
    bool on = out && isatty(fileno(out)) && !(term && strcmp(term, "dumb") == 0);
    *s = (struct cc_status_line){.out = on ? out : NULL, .last_ns = start_ns};
}

/* Seconds as m:ss, or h:mm:ss from an hour on. */
static void format_duration(char *buf, size_t size, double s)
{
    long t = s > 0 && s < 1e7 ? lround(s) : 0;
    if (t >= 3600)
        snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

size_t cc_status_line_format(char *buf, size_t size, const struct cc_status_info *info)
{
    if (!size)
        return 0;
    int n = snprintf(buf, size, "%llu frame%s", (unsigned long long)info->results,
                     info->results == 1 ? "" : "s");
    if (n >= 0 && (size_t)n < size && info->results_per_s > 0)
        n += snprintf(buf + n, size - (size_t)n, "  %.1f results/s", info->results_per_s);
    if (n >= 0 && (size_t)n < size && isfinite(info->latency_ms))
        n += snprintf(buf + n, size - (size_t)n, "  latency %.1f ms", info->latency_ms);
    if (n >= 0 && (size_t)n < size && info->files_total > 0) {
        uint64_t total = (uint64_t)info->files_total;
        uint64_t done = info->files_done < total ? info->files_done : total;
        n += snprintf(buf + n, size - (size_t)n, "  files %llu/%llu", (unsigned long long)done,
                      (unsigned long long)total);
        // The time left at the average pace so far (files, not results: --fps may drop some).
        if ((size_t)n < size && done > 0 && info->elapsed_s > 0) {
            char eta[32];
            format_duration(eta, sizeof(eta),
                            (double)(total - done) * info->elapsed_s / (double)done);
            n += snprintf(buf + n, size - (size_t)n, "  ETA %s", eta);
        }
    }
    if (n < 0)
        n = 0, buf[0] = 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}

/* "\r", the text cut to the terminal's width (a wrapped line could not be rewritten), and
 * erase to the end of the line (a shorter text leaves nothing of the longer one before it). */
static void draw(struct cc_status_line *s, const struct cc_status_info *info)
{
    char text[256];
    size_t len = cc_status_line_format(text, sizeof(text), info);
    struct winsize ws;
    if (ioctl(fileno(s->out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && len >= ws.ws_col)
        len = (size_t)ws.ws_col - 1;
    fprintf(s->out, "\r%.*s\033[K", (int)len, text);
    fflush(s->out);
    s->shown = true;
}

void cc_status_line_update(struct cc_status_line *s, int64_t now_ns,
                           const struct cc_status_info *info)
{
    if (!s->out || !info->results ||
        now_ns - s->last_ns < (int64_t)CC_STATUS_LINE_INTERVAL_MS * 1000000)
        return;
    draw(s, info);
    s->last_ns = now_ns;
}

void cc_status_line_finish(struct cc_status_line *s, const struct cc_status_info *info)
{
    if (!s->out || !s->shown)
        return;
    draw(s, info);
    fputc('\n', s->out);
    fflush(s->out);
    s->shown = false;
}
