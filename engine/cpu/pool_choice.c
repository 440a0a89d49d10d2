/* camclass — a run on the thread pool or on the calling thread alone (see pool_choice.h). */
#include <string.h>
#include <time.h>

#include "env_word.h"
#include "pool_choice.h"

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool cc_pool_mode_parse(const char *value, enum cc_pool_mode *mode, struct cc_error *err)
{
    static const char *const words[] = {"auto", "always"}; // enum cc_pool_mode's order
    static const struct cc_env_word spec = {
        "CAMCLASS_CPU_POOL", "a pool mode",
        "auto (the default: one thread while the machine is crowded) or always", words, 2};
    int i;
    bool ok = cc_env_word_parse(&spec, value, &i, err);
    *mode = (enum cc_pool_mode)i;
    return ok;
}

void cc_pool_choice_init(struct cc_pool_choice *c, enum cc_pool_mode mode)
{
    *c = (struct cc_pool_choice){.mode = mode};
}

bool cc_pool_choice_begin(struct cc_pool_choice *c)
{
    c->pooled = c->mode == CC_POOL_ALWAYS || c->solo_left == 0;
    if (!c->pooled) {
        c->solo_left--;
        c->solo_runs++;
    }
    c->wall0_ns = clock_ns(CLOCK_MONOTONIC);
    c->cpu0_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return c->pooled;
}

void cc_pool_choice_end(struct cc_pool_choice *c)
{
    int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c->cpu0_ns;
    cc_pool_choice_took(c, c->pooled, cpu, clock_ns(CLOCK_MONOTONIC) - c->wall0_ns);
}

void cc_pool_choice_took(struct cc_pool_choice *c, bool pooled, int64_t cpu_ns, int64_t wall_ns)
{
    if (c->mode != CC_POOL_AUTO || !pooled || wall_ns <= 0)
        return;
    if ((double)cpu_ns >= CC_POOL_CROWDED * (double)wall_ns) {
        c->solo_span = c->crowded = 0;
        return;
    }
    // From the pool's quiet use, two crowded runs in a row (one is a passing disturbance);
    // a try after a stretch alone that is crowded again goes back at once.
    if (++c->crowded < 2 && c->solo_span == 0)
        return;
    int span = c->solo_span ? 2 * c->solo_span : CC_POOL_SOLO_MIN;
    c->solo_span = span < CC_POOL_SOLO_MAX ? span : CC_POOL_SOLO_MAX;
    c->solo_left = c->solo_span;
}
