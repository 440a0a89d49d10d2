/* camclass — the watch over the CPU backend's load-time timings (see choice_watch.h). */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "choice_watch.h"
#include "env_word.h"

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* How long this process's threads have waited for a core so far (ns), beyond a wake-up's
 * latency: the run-queue delay (/proc/self/task/<tid>/schedstat's second field) less
 * CC_WATCH_WAKE_NS per time on a core (its third), summed: INT64_MIN where the kernel does not
 * say (the sum itself may be below 0). */
static int64_t waited_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return INT64_MIN;
    int64_t sum = 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[64];
        unsigned long long on_cpu, waited, slices;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%.24s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%llu %llu %llu", &on_cpu, &waited, &slices) == 3) {
            sum += (int64_t)waited - (int64_t)slices * CC_WATCH_WAKE_NS;
            found++;
        }
        if (f)
            fclose(f);
    }
    closedir(d);
    return found ? sum : INT64_MIN;
}

bool cc_choice_watch_mode_parse(const char *value, enum cc_watch_mode *mode, struct cc_error *err)
{
    static const char *const words[] = {"auto", "yes", "no"}; // enum cc_watch_mode's order
    static const struct cc_env_word spec = {
        "CAMCLASS_CPU_CROWDED", "a crowdedness",
        "auto (the default: measured while the layers are timed), yes or no (tests)", words, 3};
    int i;
    bool ok = cc_env_word_parse(&spec, value, &i, err);
    *mode = (enum cc_watch_mode)i;
    return ok;
}

void cc_choice_watch_init(struct cc_choice_watch *w, enum cc_watch_mode mode, int threads)
{
    *w = (struct cc_choice_watch){
        .mode = mode,
        .crowded = mode == CC_WATCH_CROWDED,
        .threads = threads > 1 ? threads : 1,
    };
    cc_choice_watch_node(w);
}

bool cc_choice_watch_node(struct cc_choice_watch *w)
{
    return w->pooled = w->threads > 1 && !w->crowded;
}

void cc_choice_watch_begin(struct cc_choice_watch *w)
{
    if (!w)
        return;
    w->wait0_ns = waited_ns();
    w->wall0_ns = clock_ns(CLOCK_MONOTONIC);
    w->cpu0_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void cc_choice_watch_end(struct cc_choice_watch *w)
{
    if (!w)
        return;
    int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - w->cpu0_ns;
    int64_t wall = clock_ns(CLOCK_MONOTONIC) - w->wall0_ns, wait = waited_ns();
    if (w->wait0_ns != INT64_MIN && wait != INT64_MIN) // (below 0: quicker wake-ups than allowed)
        cc_choice_watch_took(w, wall, wait > w->wait0_ns ? wait - w->wait0_ns : 0,
                             w->pooled ? w->threads : 1);
    else // no schedstat: the calling thread's time off a core
        cc_choice_watch_took(w, wall, wall > cpu ? wall - cpu : 0, 1);
}

void cc_choice_watch_took(struct cc_choice_watch *w, int64_t wall_ns, int64_t wait_ns, int threads)
{
    w->runs++;
    w->solo += w->threads > 1 && !w->pooled;
    w->wall_ns += wall_ns;
    w->want_ns += wall_ns * threads;
    w->wait_ns += wait_ns;
    if (w->mode != CC_WATCH_AUTO || !w->pooled)
        return;
    w->win_want_ns += wall_ns * threads;
    w->win_wait_ns += wait_ns;
    if (w->win_want_ns < (int64_t)CC_WATCH_WINDOW_NS * threads)
        return;
    bool crowded = (double)w->win_wait_ns > CC_WATCH_CROWDED_WAIT * (double)w->win_want_ns;
    w->win_want_ns = w->win_wait_ns = 0;
    // Two in a row, as at run time (pool_choice.h): one is a passing disturbance.
    w->in_row = crowded ? w->in_row + 1 : 0;
    w->crowded |= w->in_row >= 2;
}

bool cc_choice_watch_quiet(const struct cc_choice_watch *w, char *why, size_t size)
{
    double waited = w->want_ns > 0 ? (double)w->wait_ns / (double)w->want_ns : 0.0;
    if (w->mode == CC_WATCH_QUIET ||
        (w->mode == CC_WATCH_AUTO && !w->crowded && waited <= CC_WATCH_QUIET_WAIT))
        return true;
    int at = snprintf(why, size,
                      "%sits threads waited for a core %.0f%% of their time in the "
                      "%.0f ms timed",
                      w->mode == CC_WATCH_CROWDED ? "CAMCLASS_CPU_CROWDED=yes; " : "",
                      100.0 * waited, (double)w->wall_ns / 1e6);
    if (w->threads > 1 && at >= 0 && (size_t)at < size)
        snprintf(why + at, size - (size_t)at, "; %d of %d timings on one thread, not the pool",
                 w->solo, w->runs);
    return false;
}
