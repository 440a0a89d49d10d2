/* camclass — the watch over the CPU backend's load-time timings (see choice_watch.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "choice_watch.h"
#include "pool_choice.h"

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool cc_choice_watch_mode_parse(const char *value, enum cc_watch_mode *mode, struct cc_error *err)
{
    *mode = CC_WATCH_AUTO;
    if (!value || !value[0] || !strcmp(value, "auto"))
        return true;
    if (!strcmp(value, "yes") || !strcmp(value, "no")) {
        *mode = value[0] == 'y' ? CC_WATCH_CROWDED : CC_WATCH_QUIET;
        return true;
    }
    return cc_error_set(err,
                        "CAMCLASS_CPU_CROWDED=\"%s\" is not a crowdedness: use auto (the default: "
                        "measured while the layers are timed), yes or no (tests)",
                        value);
}

void cc_choice_watch_init(struct cc_choice_watch *w, enum cc_watch_mode mode, bool has_pool)
{
    *w = (struct cc_choice_watch){
        .mode = mode,
        .crowded = mode == CC_WATCH_CROWDED,
        .has_pool = has_pool,
    };
    w->pooled = has_pool && !w->crowded;
}

bool cc_choice_watch_node(struct cc_choice_watch *w)
{
    return w->pooled = w->has_pool && !w->crowded;
}

void cc_choice_watch_begin(struct cc_choice_watch *w)
{
    w->wall0_ns = clock_ns(CLOCK_MONOTONIC);
    w->cpu0_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void cc_choice_watch_end(struct cc_choice_watch *w)
{
    int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - w->cpu0_ns;
    cc_choice_watch_took(w, cpu, clock_ns(CLOCK_MONOTONIC) - w->wall0_ns);
}

void cc_choice_watch_took(struct cc_choice_watch *w, int64_t cpu_ns, int64_t wall_ns)
{
    w->runs++;
    w->solo += w->has_pool && !w->pooled;
    w->cpu_ns += cpu_ns;
    w->wall_ns += wall_ns;
    if (w->mode != CC_WATCH_AUTO || !w->pooled || wall_ns <= 0)
        return;
    if ((double)cpu_ns >= CC_POOL_CROWDED * (double)wall_ns)
        w->in_row = 0;
    else if (++w->in_row >= 2) // one is a passing disturbance, as at run time
        w->crowded = true;
}

bool cc_choice_watch_quiet(const struct cc_choice_watch *w, char *why, size_t size)
{
    double share = w->wall_ns > 0 ? (double)w->cpu_ns / (double)w->wall_ns : 1.0;
    if (w->mode == CC_WATCH_QUIET ||
        (w->mode == CC_WATCH_AUTO && !w->crowded && share >= CC_WATCH_QUIET_SHARE))
        return true;
    int at = snprintf(why, size, "%sthis thread was on a core %.0f%% of the %.0f ms timed",
                      w->mode == CC_WATCH_CROWDED ? "CAMCLASS_CPU_CROWDED=yes; " : "",
                      100.0 * share, (double)w->wall_ns / 1e6);
    if (w->has_pool && at >= 0 && (size_t)at < size)
        snprintf(why + at, size - (size_t)at, "; %d of %d timings on it alone, not the pool",
                 w->solo, w->runs);
    return false;
}
